"""The attribute graph: private attributes with subsumption, up to HIPAA's information types.

Built from the ontologies in ``../shared/data/ontologies`` (DPV's personal-data extension in
its 1.0 OWL and 2.2 SKOS forms, merged by local name and keeping both IRIs; OPPO's personal
data classes and individuals and its GDPR extension), HIPAA's own information types from
``ontologies/attributes.json`` (each checked against the paragraph that defines it) linked to
the DPV and OPPO classes they cover, and WordNet synsets whose hyponyms name health
information (diseases, procedures, tests, drugs, genes).

:func:`attribute_resolver` builds the resolver whose ``resolve`` reads a phrase ("surgery
operative report") and returns attribute nodes with their paths (→ health record → medical
health → health information → ... → protected health information); a non-health phrase
("favorite movie") reaches no HIPAA type.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from privacy_checklist.ingest.ontology import Term, read_terms
from privacy_checklist.kg import lexicon
from privacy_checklist.kg.concepts import (
    Concept,
    ConceptGraph,
    Fallback,
    Match,
    Resolver,
    add_synset_tree,
)
from privacy_checklist.kg.roles import RoleGraphError, _mentions, _wordnet
from privacy_checklist.kg.tree import RegulationTree
from privacy_checklist.ontologies import path as ontology_path

#: OPPO classes under which personal data lies (the rest of OPPO is practices and roles).
OPPO_DATA_ROOTS = (
    "IndividualData",
    "PersonalData",
    "AggregatedData",
    "SpecialCategoryPersonalData",
)


class AttributeGraphError(RoleGraphError):
    """The seeds disagree with the regulation or the ontologies, or a file is missing."""


def seeds_path() -> Path:
    return ontology_path("attributes.json")


def hipaa_id(name: str) -> str:
    return f"hipaa:{name}"


def term_id(term_iri: str) -> str:
    """``dpv:HealthRecord`` for both DPV versions, ``oppo:...``, ``gdpr:...``."""
    local = term_iri.rstrip("/#").replace("#", "/").rsplit("/", 1)[-1]
    if "w3id.org/dpv" in term_iri:
        return f"dpv:{local}"
    if "umaine.edu/gdpr" in term_iri:
        return f"gdpr:{local}"
    if "umaine.edu/oppo" in term_iri:
        return f"oppo:{local}"
    return f"ext:{local}"


def _keep_oppo(terms: list[Term]) -> list[Term]:
    by_iri = {t.iri: t for t in terms}
    keep: dict[str, bool] = {}

    def kept(iri: str, seen: frozenset[str] = frozenset()) -> bool:
        if iri in keep:
            return keep[iri]
        term = by_iri.get(iri)
        result = term is not None and (
            term.local in OPPO_DATA_ROOTS
            or any(kept(p, seen | {iri}) for p in term.parents if p not in seen)
        )
        keep[iri] = result
        return result

    return [t for t in terms if kept(t.iri)]


def build_attribute_graph(
    tree: RegulationTree, ontology_dir: Path, seeds: Path | None = None
) -> ConceptGraph:
    """Build the attribute graph (see the module's docstring).

    Raises:
        AttributeGraphError: an ontology file is missing, a HIPAA type is not defined where
            its seed says, a link names an unknown class, or WordNet is missing.
    """
    data = json.loads((seeds or seeds_path()).read_text(encoding="utf-8"))
    graph = ConceptGraph("attributes")
    problems: list[str] = []

    # 1. ontology classes and individuals
    terms: list[Term] = []
    for spec in data["ontologies"]:
        path = ontology_dir / spec["file"]
        if not path.is_file():
            raise AttributeGraphError(
                f"{path}: missing; pass --ontologies DIR (../shared/data/ontologies)"
            )
        found = read_terms(path)
        terms += _keep_oppo(found) if spec["prefix"] == "oppo" else found
    graph.add(
        Concept(
            "dpv:PersonalData",
            "personal data",
            "dpv",
            iris=("https://w3id.org/dpv#PersonalData",),
            source="DPV",
        )
    )
    for term in terms:
        node_id = term_id(term.iri)
        kind = node_id.split(":")[0]
        graph.add(Concept(node_id, term.label, kind, iris=(term.iri,), source=term.source))
        graph.alias(term.label, node_id)
        if kind == "dpv":
            graph.alias(lexicon.normalize(term.label).replace(" ", ""), node_id, 0.9)
    for term in terms:
        for parent in term.parents:
            parent_id = term_id(parent)
            if parent_id not in graph.nodes:
                parent_id = "dpv:PersonalData" if "dpv" in parent else ""
            if parent_id:
                graph.link(
                    term_id(term.iri),
                    parent_id,
                    "instance_of" if term.individual else "is_a",
                    term.source,
                )

    # 2. HIPAA's information types, checked against the text
    for item in data["hipaa_types"]:
        node_id = hipaa_id(item["name"])
        if not _mentions(tree, item["at"], [item["name"], *item.get("aliases", [])[:3]]):
            problems.append(f"information type {item['name']!r} is not named in {item['at']}")
        graph.add(
            Concept(
                node_id,
                item["name"],
                "hipaa",
                source=item["at"],
                aliases=tuple(item.get("aliases", [])),
            )
        )
        for alias in [item["name"], *item.get("aliases", [])]:
            graph.alias(alias, node_id)
    for item in data["hipaa_types"]:
        for parent in item.get("parents", []):
            graph.link(
                hipaa_id(item["name"]), hipaa_id(parent), item.get("relation", "is_a"), item["at"]
            )
        for link in item.get("links", []):
            if link not in graph.nodes:
                problems.append(f"{item['name']!r} links unknown class {link}")
            else:
                graph.link(link, hipaa_id(item["name"]), "is_a", "ontologies/attributes.json")
    for child, parent in data.get("links", {}).items():
        target = parent if ":" in parent else hipaa_id(parent)
        if child not in graph.nodes or target not in graph.nodes:
            problems.append(f"link {child} -> {parent} names an unknown node")
        else:
            graph.link(child, target, "is_a", "ontologies/attributes.json")

    # 3. WordNet words for health information
    wn = _wordnet()
    for synset_name, parent in data.get("wordnet", []):
        target = parent if ":" in parent else hipaa_id(parent)
        try:
            synset = wn.synset(synset_name)
        except Exception:
            problems.append(f"no WordNet synset {synset_name}")
            continue
        if target not in graph.nodes:
            problems.append(f"WordNet {synset_name} -> unknown node {parent}")
            continue
        add_synset_tree(
            graph,
            wn,
            synset,
            target,
            hyponyms=True,
            hypernyms=False,
            source="WordNet alignment (ontologies/attributes.json)",
        )
    if problems:
        raise AttributeGraphError("; ".join(problems))
    graph.provenance = {
        "seeds": "ontologies/attributes.json",
        "ontologies": [
            {
                "file": s["file"],
                "sha256": hashlib.sha256((ontology_dir / s["file"]).read_bytes()).hexdigest(),
            }
            for s in data["ontologies"]
        ],
        "licences": {
            "DPV": "W3C Software and Document Licence",
            "OPPO": "CC BY 4.0 (Gupta & Hahmann 2023)",
            "WordNet": "WordNet 3.0 licence (Princeton)",
        },
        "generic_heads": data.get("generic_heads", []),
        "cues": data.get("cues", {}),
        "document_node": data.get("document_node", ""),
    }
    return graph


#: The information types an attribute phrase is reported as (most specific first).
REPORTED_TYPES = (
    "psychotherapy notes",
    "genetic information",
    "summary health information",
    "limited data set",
    "de-identified information",
    "protected health information",
)


@functools.lru_cache(maxsize=4096)
def _normalized(word: str) -> str:
    """A cue word's normalized form (cue lists are read for every phrase: normalize once)."""
    return lexicon.normalize(word)


class AttributeResolver(Resolver):
    """A :class:`Resolver` for information phrases.

    Beyond the head-first lookup, it reads "X report" and "X records" as health records when X
    is health information, reports non-health attributes without a HIPAA type, and applies
    the phrase-level cues of ``ontologies/attributes.json``: words anywhere in the phrase that
    make it de-identified, a limited data set, summary health information, psychotherapy
    notes, genetic information (a family member's disease), or health information at all.
    """

    def resolve(self, phrase: object, k: int = 3) -> list[Match]:
        matches = super().resolve(phrase, k)
        assert isinstance(phrase, str)
        matches = self._as_health_record(phrase, matches)
        cue = self._cue(phrase, matches[0] if matches else None)
        if cue is None:
            return matches
        kind, word = cue
        best = matches[0] if matches else None
        if best is not None and best.reached and best.target == kind:
            return matches
        node = hipaa_id(kind)
        up = [node, *self._top(node)[1:]]
        path = tuple(
            dict.fromkeys(
                [" ".join(phrase.split())[:200], word, *[self.graph.nodes[n].name for n in up]]
            )
        )
        cued = Match(kind, 0.7, path, word, "cue", reached=True)
        rest = [m for m in matches if m.target != kind]
        return [cued, *rest][:k]

    def _cue(self, phrase: str, best: Match | None) -> tuple[str, str] | None:
        cues = self.graph.provenance.get("cues", {})
        if not cues:
            return None
        text = f" {lexicon.normalize(phrase[: lexicon.MAX_CHARS])} "

        def hits(words: list[str]) -> list[str]:
            return [w for w in words if f" {_normalized(w)} " in text]

        for kind in ("summary health information", "limited data set", "de-identified information"):
            found = hits(cues.get(kind, []))
            if found:
                return kind, found[0]
        health = [] if hits(cues.get("negations", [])) else hits(cues.get("health", []))
        reached = best is not None and best.reached
        notes = cues.get("psychotherapy notes", {})
        words = lexicon.content_words(phrase)
        if words and hits(notes.get("heads", [])) and hits(notes.get("words", [])):
            return "psychotherapy notes", hits(notes["words"])[0]
        genetic = cues.get("genetic information", {})
        if hits(genetic.get("words", [])):
            return "genetic information", hits(genetic["words"])[0]
        if (
            hits(genetic.get("family", []))
            and (reached or health)
            and not (best is not None and best.target == "genetic information")
        ):
            return "genetic information", hits(genetic["family"])[0]
        if not reached and health:
            return "protected health information", health[0]
        return None

    def _as_health_record(self, phrase: str, matches: list[Match]) -> list[Match]:
        document = self.graph.provenance.get("document_node", "")
        words = lexicon.content_words(phrase)
        if not matches or not words or document not in self.graph.nodes:
            return matches
        best = matches[0]
        if (
            self._generic(words[-1])
            and best.reached
            and best.matched != self.graph.nodes[document].name
            and len(best.path) > 1
            and words[-1] not in best.path[1]
        ):
            up = self.graph.path_up(document, self.is_target) or [document]
            names = [self.graph.nodes[n].name for n in up + self._top(up[-1])[1:]]
            path = tuple(dict.fromkeys([best.path[0], *best.path[1:2], *names]))
            matches[0] = Match(
                best.target,
                best.score,
                path,
                self.graph.nodes[document].name,
                best.via,
                reached=best.reached,
            )
        return matches


def information_type(match: Match | None) -> str:
    """The HIPAA information type a match reaches, or "none"."""
    if match is None or not match.reached:
        return "none"
    return match.target


def attribute_resolver(
    graph: ConceptGraph, known_words: frozenset[str] = frozenset(), fallback: Fallback | None = None
) -> AttributeResolver:
    reported = {hipaa_id(name) for name in REPORTED_TYPES}
    return AttributeResolver(
        graph,
        lambda n: n in reported,
        known_words=known_words,
        fallback=fallback,
        generic_heads=frozenset(graph.provenance.get("generic_heads", [])),
        untargeted=True,
    )
