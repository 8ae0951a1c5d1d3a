"""Turtle for the knowledge base's graphs, written directly from plain triples.

The knowledge base writes three Turtle files (the tree, the role graph, the attribute graph):
about 46,000 triples. rdflib's serializer takes seconds for them; :func:`turtle` writes the
same document, byte for byte, in a fraction of that: rdflib's layout (prefixes sorted, then
the subjects least referred to first, ``a`` and ``rdfs:label`` leading each subject's
predicates, objects sorted, literals quoted as rdflib quotes them), for graphs of IRIs and
literals (text, integers, booleans; no blank nodes) whose predicates lie in :data:`PREFIXES`:
the graphs we write. (For another predicate rdflib invents a prefix ``ns1``, and it shortens
IRIs whose local names are not ASCII; here those are written whole: equally valid Turtle.)

Triples are plain tuples: subject and predicate IRIs as text, the object an :class:`IRI` or a
literal value (``str``, ``int`` or ``bool``). :func:`to_rdflib` makes an rdflib graph of the
same triples, for SPARQL and for the tests that check a written file parses back to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import rdflib

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD = "http://www.w3.org/2001/XMLSchema#"

#: The prefixes our graphs use, written when a file uses them.
PREFIXES = {
    "dct": "http://purl.org/dc/terms/",
    "owl": "http://www.w3.org/2002/07/owl#",
    "pc": "https://w3id.org/privacy-checklist/vocab#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "xsd": XSD,
}
#: Local names written as ``prefix:local`` (ASCII names as rdflib writes them); any other IRI
#: is written whole, in ``<>``.
_LOCAL = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?")
#: Characters Turtle does not allow in an IRI (rdflib refuses them too).
_NOT_IN_IRI = re.compile(r'[<>" {}|\\^`]')

Triple = tuple[str, str, Any]


class IRI(str):
    """An object that is an IRI, not a text literal."""

    __slots__ = ()


def _datatype(value: object) -> str:
    if isinstance(value, IRI):
        return ""
    if isinstance(value, bool):
        return XSD + "boolean"
    if isinstance(value, int):
        return XSD + "integer"
    if isinstance(value, str):
        return XSD + "string"
    raise TypeError(f"a literal is text, an integer or a boolean, not {type(value).__name__}")


def _key(value: object) -> tuple[int, str, Any]:
    """The order rdflib sorts objects in: IRIs before literals, IRIs by text, literals by
    datatype then value. Also what tells ``IRI("x")`` from ``"x"`` and ``True`` from ``1``."""
    datatype = _datatype(value)
    return (0 if not datatype else 1, datatype, value)


def _quote(text: str) -> str:
    """A text literal as rdflib writes it (``Literal._quote_encode``)."""
    if "\n" in text:
        encoded = text.replace("\\", "\\\\")
        if '"""' in text:
            encoded = encoded.replace('"""', '\\"\\"\\"')
        if encoded[-1] == '"' and encoded[-2] != "\\":
            encoded = encoded[:-1] + "\\" + '"'
        return '"""' + encoded.replace("\r", "\\r") + '"""'
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r") + '"'


def turtle(triples: Iterable[Triple], prefixes: Mapping[str, str] = PREFIXES) -> str:
    """The Turtle document of ``triples`` (duplicates count once, as in an RDF graph).

    Raises:
        ValueError: an IRI holds a character Turtle does not allow (a space, ``<`` ...).
        TypeError: an object is neither an :class:`IRI` nor text, an integer or a boolean.
    """
    namespaces = sorted(prefixes.items(), key=lambda item: -len(item[1]))
    names: dict[str, str] = {}
    used: set[str] = set()

    def name(iri: str) -> str:
        found = names.get(iri)
        if found is None:
            if _NOT_IN_IRI.search(iri):
                raise ValueError(f"{iri!r} is not an IRI Turtle can write; quote it first")
            found = f"<{iri}>"
            for prefix, namespace in namespaces:
                if iri.startswith(namespace) and _LOCAL.fullmatch(iri, len(namespace)):
                    found = f"{prefix}:{iri[len(namespace) :]}"
                    break
            names[iri] = found
        if found[0] != "<":
            used.add(found.split(":", 1)[0])  # rdflib writes the prefixes it named a term with
        return found

    subjects: dict[str, dict[str, dict[tuple[int, str, Any], Any]]] = {}
    references: dict[str, int] = {}
    for s, p, o in triples:
        objects = subjects.setdefault(s, {}).setdefault(p, {})
        key = _key(o)
        if key in objects:
            continue
        objects[key] = o
        if key[0] == 0:
            references[o] = references.get(o, 0) + 1
        elif key[1] != XSD + "string":
            name(key[1])  # a typed literal is written plain, but rdflib names its datatype

    out: list[str] = []
    order = sorted(subjects, key=lambda s: (references.get(s, 0), s))
    for s in order:
        properties = subjects[s]
        first = [p for p in (RDF_TYPE, RDFS_LABEL) if p in properties]
        lines: list[str] = []
        for p in first + sorted(p for p in properties if p not in first):
            verb = "a" if p == RDF_TYPE else name(p)
            values = [
                name(o) if key[0] == 0 else _literal(o)
                for key, o in sorted(properties[p].items(), key=lambda item: item[0])
            ]
            lines.append(f"{verb} " + ",\n        ".join(values))
        out.append(f"\n{name(s)} " + " ;\n    ".join(lines) + " .\n")
    head = "".join(f"@prefix {prefix}: <{prefixes[prefix]}> .\n" for prefix in sorted(used))
    return head + "".join(out) + "\n"


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _quote(value)
    raise TypeError(f"a literal is text, an integer or a boolean, not {type(value).__name__}")


def write(
    path: str | PathLike[str], triples: Iterable[Triple], prefixes: Mapping[str, str] = PREFIXES
) -> None:
    """Write :func:`turtle` of ``triples`` to ``path`` in UTF-8 (as rdflib does: a character
    UTF-8 cannot hold, a lone surrogate, becomes ``?``)."""
    with open(path, "wb") as handle:
        handle.write(turtle(triples, prefixes).encode("utf-8", "replace"))


def to_rdflib(triples: Iterable[Triple], bind: Mapping[str, str] | None = None) -> rdflib.Graph:
    """An rdflib ``Graph`` of ``triples``, with ``bind``'s prefixes bound (default: all of
    :data:`PREFIXES`)."""
    from rdflib import Graph, Literal, URIRef

    graph = Graph()
    for prefix, namespace in (PREFIXES if bind is None else bind).items():
        graph.bind(prefix, namespace)
    add = graph.add
    for s, p, o in triples:
        add((URIRef(s), URIRef(p), URIRef(o) if isinstance(o, IRI) else Literal(o)))
    return graph
