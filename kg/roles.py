"""The role graph: everyday words for people and organisations, up to the roles HIPAA names.

Built by code, reproducibly, from three sources:

1. the regulatory roles, seeded in ``ontologies/roles.json`` and each checked against the
   paragraph that names it, plus every term the definitions define as a person, entity,
   organisation, agency or plan ("the rest the text yields");
2. the inclusions the definitions state (a covered entity is a health plan, a clearinghouse or
   a provider; a health plan includes a group health plan, an HMO, Medicare ...), seeded with
   the paragraph that states each, and read from the definitions' own item lists;
3. WordNet 3.0: each role aligned to the synsets it covers, with their hyponyms (surgeon,
   pharmacist, sheriff, spouse ...) and their hypernyms up to ``person.n.01`` or the
   organisation and group roots.

:func:`role_resolver` builds the :class:`RoleResolver` whose ``resolve`` returns the regulatory
roles a phrase can hold, ranked, each with its path (surgeon → doctor → medical practitioner →
health professional → health care provider → covered entity).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from privacy_checklist.kg import lexicon
from privacy_checklist.kg.concepts import (
    EXCLUDED,
    Concept,
    ConceptGraph,
    Fallback,
    Match,
    Resolver,
    add_synset_tree,
)
from privacy_checklist.kg.definitions import Definitions
from privacy_checklist.kg.tree import RegulationTree
from privacy_checklist.ontologies import path as ontology_path

if TYPE_CHECKING:
    from privacy_checklist.ingest.wordnet import NounWordNet

#: Definitions that define a party: "X means a person ...", "X means an agency ...".
PARTY_CUES = re.compile(
    r"^\s*(?:means|is)\s+(?:a|an|any|the)?\s*(?:[\w-]+\s+){0,5}?"
    r"(?:person|persons|entity|organization|agency|authority|individual|plan|program|"
    r"institution|official|officer|employee|body|board|provider|company|arrangement|"
    r"issuer|sponsor|clearinghouse|facility|member|organizations|entities)\b",
    re.I,
)
#: Words that turn a definition's item list into a list of exclusions.
EXCLUDING = re.compile(
    r"\b(?:does not include|do not include|excludes?|excluding|other than)\b", re.I
)
#: Generic heads that say little alone ("Cigna's claims department").
GENERIC_HEADS = frozenset(
    "department office team unit division group service services agency branch "
    "center centre system network organization company firm corporation inc llc co "
    "program plan institution facility practice".split()
)


class RoleGraphError(Exception):
    """The seeds disagree with the regulation text, or WordNet is missing."""


def seeds_path() -> Path:
    return ontology_path("roles.json")


def role_id(name: str) -> str:
    return f"role:{name}"


def _wordnet() -> NounWordNet:
    """WordNet's nouns, from the corpus installed for NLTK (read once per process)."""
    from privacy_checklist.ingest.wordnet import WordNetMissing, nouns

    try:
        return nouns()
    except WordNetMissing as exc:
        raise RoleGraphError(
            "WordNet is not installed for NLTK; run: python -m privacy_checklist.ingest.wordnet "
            "--install (make setup does it in a checkout)"
        ) from exc


def _mentions(tree: RegulationTree, node_id: str, phrases: list[str]) -> bool:
    if node_id not in tree:
        return False
    node = tree[node_id]
    text = " ".join([node.title or "", node.label or "", node.text, tree.subtree_text(node_id)])
    text = lexicon.normalize(text)
    for phrase in phrases:
        words = lexicon.normalize(phrase)
        stem = words[:-1] if words.endswith("s") else words
        if stem and re.search(rf"\b{re.escape(stem)}", text):
            return True
    return False


def build_role_graph(
    tree: RegulationTree, definitions: Definitions, seeds: Path | None = None
) -> ConceptGraph:
    """Build the role graph (see the module's docstring).

    Raises:
        RoleGraphError: a seeded role or inclusion is not named where its seed says, a seeded
            synset does not exist, or WordNet is missing.
    """
    data = json.loads((seeds or seeds_path()).read_text(encoding="utf-8"))
    wn = _wordnet()
    graph = ConceptGraph("roles")
    problems: list[str] = []
    not_roles = set(data.get("not_roles", {}).get("terms", []))
    graph.add(Concept(EXCLUDED, "no HIPAA role", "excluded", source="ontologies/roles.json"))
    for phrase in data.get("excluded", {}).get("phrases", []):
        graph.alias(phrase, EXCLUDED)

    # 1. regulatory roles: seeded ones, checked against the text
    for role in data["roles"]:
        name = role["name"]
        if not _mentions(tree, role["at"], [name, *role.get("aliases", [])]):
            problems.append(f"role {name!r} is not named in {role['at']}")
        graph.add(
            Concept(
                role_id(name),
                name,
                role.get("kind", "regulatory"),
                source=role["at"],
                aliases=tuple(role.get("aliases", [])),
            )
        )
        for alias in [name, *role.get("aliases", [])]:
            graph.alias(alias, role_id(name))
    # ... and the parties the definitions define
    for definition in definitions:
        term = definition.term.lower()
        text = tree[definition.node].text
        rest = text[len(definition.term) :] if text.lower().startswith(term) else ""
        if term.isupper() or len(term) < 4 or not PARTY_CUES.match(rest) or term in not_roles:
            continue
        if role_id(term) not in graph.nodes:
            graph.add(Concept(role_id(term), term, "regulatory", source=definition.node))
            graph.alias(term, role_id(term))

    # 2. inclusions: seeded (checked), then the definitions' own item lists
    for inclusion in data.get("inclusions", []):
        child, parent = role_id(inclusion["child"]), role_id(inclusion["parent"])
        if child not in graph.nodes or parent not in graph.nodes:
            problems.append(f"inclusion {inclusion} names an unknown role")
            continue
        names = [inclusion["child"], *graph.nodes[child].aliases]
        if not _mentions(tree, inclusion["at"], names):
            problems.append(
                f"inclusion {inclusion['child']} -> {inclusion['parent']} is not "
                f"stated in {inclusion['at']}"
            )
        graph.link(child, parent, inclusion.get("relation", "is_a"), inclusion["at"])
    _items_from_definitions(tree, definitions, graph)

    # 3. WordNet
    for role in data["roles"]:
        for anchor in role.get("wordnet", []):
            spec = anchor if isinstance(anchor, dict) else {"synset": anchor}
            try:
                synset = wn.synset(spec["synset"])
            except Exception:
                problems.append(f"role {role['name']!r}: no WordNet synset {spec['synset']}")
                continue
            add_synset_tree(
                graph,
                wn,
                synset,
                role_id(role["name"]),
                spec.get("hyponyms", True),
                source="WordNet alignment (ontologies/roles.json)",
            )
    for phrase, name in data.get("names", {}).items():
        if role_id(name) not in graph.nodes:
            problems.append(f"name {phrase!r} points at unknown role {name!r}")
        else:
            graph.alias(phrase, role_id(name))
    if problems:
        raise RoleGraphError("; ".join(problems))
    graph.provenance = {
        "seeds": "ontologies/roles.json",
        "wordnet": "WordNet 3.0 (Princeton), through NLTK",
        "regulation": "45 CFR Parts 160, 162, 164 (the knowledge base's tree and definitions)",
    }
    return graph


def _items_from_definitions(
    tree: RegulationTree, definitions: Definitions, graph: ConceptGraph
) -> None:
    """ "Covered entity means: (1) A health plan. (2) ..." gives health plan → covered entity."""
    for definition in definitions:
        parent = role_id(definition.term.lower())
        if parent not in graph.nodes:
            continue
        for node in tree.descendants(definition.node):
            between = [n for n in tree.path(node.id) if tree.is_ancestor(definition.node, n.id)]
            if any(EXCLUDING.search(n.text) for n in between[:-1]):
                continue  # "Business associate does not include: (i) A health care provider ..."
            m = re.match(
                r"^(?:An?|The|Any)\s+([A-Za-z' -]+?)(?:[.;,]|\s+(?:who|that|which|as)\b|$)",
                node.text,
            )
            if not m:
                continue
            child = role_id(lexicon.normalize(m.group(1)))
            hits = graph.index.get(lexicon.normalize(m.group(1)), [])
            if child not in graph.nodes and hits:
                child = hits[0][0]
            if child in graph.nodes and child != parent:
                graph.link(child, parent, "is_a", node.id)


def wordnet_nouns() -> frozenset[str]:
    """Every WordNet noun, lower case, multiword ones with underscores."""
    return frozenset(lemma.lower() for lemma in _wordnet().all_lemma_names("n"))


class RoleResolver(Resolver):
    """A :class:`Resolver` that also reads delegation: a business associate named together
    with another business associate ("the billing company's coding vendor", "a cloud vendor
    hired by the business associate") is a subcontractor (160.103, Subcontractor)."""

    def resolve(self, phrase: object, k: int = 3) -> list[Match]:
        matches = super().resolve(phrase, k)
        ba, sub = role_id("business associate"), role_id("subcontractor")
        if not matches or matches[0].target != "business associate" or sub not in self.graph.nodes:
            return matches
        assert isinstance(phrase, str)
        words = lexicon.normalize(phrase[: lexicon.MAX_CHARS]).split()
        hits: list[str] = []
        taken: set[int] = set()
        for size in range(min(len(words), 5), 0, -1):
            for start in range(len(words) - size + 1):
                span = set(range(start, start + size))
                if span & taken:
                    continue
                text = " ".join(words[start : start + size])
                nodes = {n for key in lexicon.keys(text) for n, _ in self.graph.index.get(key, [])}
                if any(self.graph.reaches(n, ba) for n in nodes):
                    hits.append(text)
                    taken |= span
        if len(hits) < 2:
            return matches
        path = (" ".join(phrase.split())[:200], hits[0], "subcontractor", "business associate")
        delegated = Match("subcontractor", matches[0].score, path, hits[0], "delegation")
        return [delegated, *[m for m in matches if m.target != "subcontractor"]][:k]


def role_resolver(
    graph: ConceptGraph, known_words: frozenset[str] = frozenset(), fallback: Fallback | None = None
) -> Resolver:
    return RoleResolver(
        graph,
        lambda n: graph.nodes[n].kind == "regulatory",
        known_words=known_words,
        fallback=fallback,
        generic_heads=GENERIC_HEADS,
    )
