"""Read ontology files (Turtle: OWL classes or SKOS concepts) into plain records.

Keeps named classes and individuals with their IRI, label, definition and their named
parents: ``rdfs:subClassOf`` and ``skos:broader`` for classes, ``rdf:type`` for individuals.
Restrictions and other blank nodes are skipped. No state, no knowledge of our graphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rdflib is imported where a file is read: a check reads none (~0.1 s)
    from rdflib import Graph, URIRef


class OntologyError(Exception):
    """An ontology file is missing or not Turtle."""


@dataclass(frozen=True, slots=True)
class Term:
    """A class (or an individual) of an ontology."""

    iri: str
    local: str
    label: str
    parents: tuple[str, ...]
    individual: bool
    definition: str
    source: str


def local_name(iri: str) -> str:
    return re.split(r"[#/]", iri.rstrip("/#"))[-1]


def label_from_local(local: str) -> str:
    """``DateofBirth`` -> "date of birth"; ``Genetic_Disease`` -> "genetic disease"."""
    text = local.replace("_", " ").replace("-", " ")
    text = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", text)
    text = re.sub(r"(?i)\bdateof\b", "date of", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _english(graph: Graph, subject: URIRef, *predicates: URIRef) -> str:
    from rdflib import Literal

    for predicate in predicates:
        values = [o for o in graph.objects(subject, predicate) if isinstance(o, Literal)]
        english = [v for v in values if v.language in (None, "en")]
        if english:
            return " ".join(str(english[0]).split())
    return ""


def read_terms(path: Path) -> list[Term]:
    """Named classes, SKOS concepts and individuals of a Turtle file, in IRI order."""
    from rdflib import RDF, RDFS, BNode, Graph, URIRef
    from rdflib.namespace import OWL, SKOS
    from rdflib.term import Node

    if not path.is_file():
        raise OntologyError(f"{path}: no such ontology file")
    graph = Graph()
    try:
        graph.parse(path, format="turtle")
    except Exception as exc:  # rdflib raises several kinds for bad Turtle
        raise OntologyError(f"{path}: not readable as Turtle ({exc})") from exc
    classes = {s for s in graph.subjects(RDF.type, OWL.Class) if isinstance(s, URIRef)}
    classes |= {s for s in graph.subjects(RDF.type, RDFS.Class) if isinstance(s, URIRef)}
    classes |= {s for s in graph.subjects(RDF.type, SKOS.Concept) if isinstance(s, URIRef)}
    classes |= {s for s in graph.subjects(RDFS.subClassOf, None) if isinstance(s, URIRef)}
    individuals = {
        s for s in graph.subjects(RDF.type, OWL.NamedIndividual) if isinstance(s, URIRef)
    } - classes
    terms: list[Term] = []
    for subject in sorted(classes | individuals, key=str):
        individual = subject in individuals
        parents: list[Node]
        if individual:
            parents = [
                o
                for o in graph.objects(subject, RDF.type)
                if isinstance(o, URIRef) and o != OWL.NamedIndividual
            ]
        else:
            parents = [o for o in graph.objects(subject, RDFS.subClassOf)]
            parents += [o for o in graph.objects(subject, SKOS.broader)]
        named = tuple(
            sorted({str(p) for p in parents if not isinstance(p, BNode)} - {str(OWL.Thing)})
        )
        label = _english(graph, subject, RDFS.label, SKOS.prefLabel) or label_from_local(
            local_name(str(subject))
        )
        terms.append(
            Term(
                str(subject),
                local_name(str(subject)),
                label.lower().strip(),
                named,
                individual,
                _english(
                    graph,
                    subject,
                    SKOS.definition,
                    RDFS.comment,
                    URIRef("http://purl.org/dc/terms/description"),
                ),
                path.name,
            )
        )
    return terms
