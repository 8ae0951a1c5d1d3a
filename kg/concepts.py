"""A concept graph with subsumption edges, an alias index and a resolver of everyday phrases.

The role graph and the attribute graph are both :class:`ConceptGraph`\\ s: nodes with a name,
a kind (``regulatory``, ``wordnet``, ``dpv`` ...), their IRIs and where they came from; edges
from the narrower concept to the broader one ("is subsumed by"). :class:`Resolver` reads a
phrase, looks its head-first n-grams up in the alias index, and climbs the edges to the target
concepts (regulatory roles, HIPAA information types), returning each match with the path that
justifies it.
"""

from __future__ import annotations

import json
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.kg import graphml, lexicon, turtle

if TYPE_CHECKING:
    import networkx
    import rdflib

NODE_BASE = "https://w3id.org/privacy-checklist/"
EXCLUDED = "excluded"
VOCAB = "https://w3id.org/privacy-checklist/vocab#"


@dataclass(frozen=True, slots=True)
class Concept:
    """A node of a concept graph."""

    id: str
    name: str
    kind: str
    _: KW_ONLY
    iris: tuple[str, ...] = ()
    source: str = ""
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "iris": list(self.iris),
            "source": self.source,
            "aliases": list(self.aliases),
        }


@dataclass(frozen=True, slots=True)
class Edge:
    """``child`` is subsumed by ``parent`` (or, for ``relation="part_of"``, is part of it)."""

    child: str
    parent: str
    _: KW_ONLY
    relation: str = "is_a"
    source: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "child": self.child,
            "parent": self.parent,
            "relation": self.relation,
            "source": self.source,
        }


@dataclass
class ConceptGraph:
    """Concepts and subsumption edges, with the alias index the resolver uses."""

    name: str
    nodes: dict[str, Concept] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    #: normalized alias -> [(node id, weight)]; weight < 1 for rarer WordNet senses
    index: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._parents: dict[str, list[Edge]] | None = None
        self._children: dict[str, list[Edge]] | None = None

    # building ------------------------------------------------------------------------------
    def add(self, concept: Concept) -> Concept:
        existing = self.nodes.get(concept.id)
        if existing is not None:
            merged = Concept(
                existing.id,
                existing.name,
                existing.kind,
                iris=tuple(dict.fromkeys(existing.iris + concept.iris)),
                source=existing.source
                if concept.source in existing.source
                else f"{existing.source}; {concept.source}".strip("; "),
                aliases=tuple(dict.fromkeys(existing.aliases + concept.aliases)),
            )
            self.nodes[concept.id] = merged
            return merged
        self.nodes[concept.id] = concept
        return concept

    def link(self, child: str, parent: str, relation: str = "is_a", source: str = "") -> None:
        if child == parent:
            return
        for node in (child, parent):
            if node not in self.nodes:
                raise KeyError(f"{self.name}: edge names unknown node {node!r}")
        if any(e.parent == parent for e in self.parents(child)):
            return
        if self.reaches(parent, child):
            return  # keep the graph acyclic: the reverse inclusion is already there
        edge = Edge(child, parent, relation=relation, source=source)
        self.edges.append(edge)
        # keep the navigation index up to date (rebuilding it per edge made a build quadratic)
        assert self._parents is not None and self._children is not None  # built by parents()
        self._parents.setdefault(child, []).append(edge)
        self._children.setdefault(parent, []).append(edge)

    def alias(self, text: str, node_id: str, weight: float = 1.0) -> None:
        key = lexicon.normalize(text)
        if not key:
            return
        entries = self.index.setdefault(key, [])
        for i, (existing, w) in enumerate(entries):
            if existing == node_id:
                entries[i] = (existing, max(w, weight))
                return
        entries.append((node_id, weight))

    # navigation ----------------------------------------------------------------------------
    def parents(self, node_id: str) -> list[Edge]:
        """The edges up from ``node_id``, in the order they were added.

        The index is built from :attr:`edges` on first use and kept up to date by :meth:`link`
        (edges are added through it, never to :attr:`edges` directly).
        """
        if self._parents is None:
            self._parents, self._children = {}, {}
            for edge in self.edges:
                self._parents.setdefault(edge.child, []).append(edge)
                self._children.setdefault(edge.parent, []).append(edge)
        return self._parents.get(node_id, [])

    def children(self, node_id: str) -> list[Edge]:
        self.parents(node_id)
        assert self._children is not None
        return self._children.get(node_id, [])

    def reaches(self, start: str, goal: str) -> bool:
        """True when ``goal`` is ``start`` or one of its ancestors."""
        return self.path_up(start, lambda n: n == goal) is not None

    def path_up(self, start: str, is_goal: Callable[[str], bool]) -> list[str] | None:
        """The shortest path of ids from ``start`` up to the nearest goal node, both included."""
        if start not in self.nodes:
            return None
        seen: dict[str, str | None] = {start: None}  # node -> the node it was reached from
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if is_goal(node):
                path = [node]
                below = seen[node]
                while below is not None:
                    path.append(below)
                    below = seen[below]
                return path[::-1]
            for edge in self.parents(node):
                if edge.parent not in seen:
                    seen[edge.parent] = node
                    queue.append(edge.parent)
        return None

    def ancestors(self, node_id: str) -> set[str]:
        out: set[str] = set()
        stack = [node_id]
        while stack:
            for edge in self.parents(stack.pop()):
                if edge.parent not in out:
                    out.add(edge.parent)
                    stack.append(edge.parent)
        return out

    def neighbourhood(self, node_id: str) -> dict[str, list[str]]:
        return {
            "parents": [e.parent for e in self.parents(node_id)],
            "children": [e.child for e in self.children(node_id)],
        }

    def stats(self) -> dict[str, int]:
        return {"nodes": len(self.nodes), "edges": len(self.edges)}

    # saving --------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": 1,
            "name": self.name,
            "provenance": self.provenance,
            "nodes": [n.to_json() for n in self.nodes.values()],
            "edges": [e.to_json() for e in self.edges],
            "index": {k: [[n, round(w, 4)] for n, w in v] for k, v in sorted(self.index.items())},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConceptGraph:
        graph = cls(data["name"], provenance=data.get("provenance", {}))
        for row in data["nodes"]:
            graph.nodes[row["id"]] = Concept(
                row["id"],
                row["name"],
                row["kind"],
                iris=tuple(row["iris"]),
                source=row["source"],
                aliases=tuple(row["aliases"]),
            )
        graph.edges = [Edge(**e) for e in data["edges"]]
        graph.index = {k: [(n, float(w)) for n, w in v] for k, v in data["index"].items()}
        return graph

    def save(self, directory: Path, stem: str, *, graph_files: bool = True) -> None:
        """``STEM.json`` (what :func:`load_graph` reads), and GraphML and Turtle copies."""
        (directory / f"{stem}.json").write_text(
            json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n",
            encoding="utf-8",
        )
        if not graph_files:
            return
        nodes, edges = self.rows()
        graphml.write(directory / f"{stem}.graphml", self.name, nodes, edges)
        turtle.write(directory / f"{stem}.ttl", self.triples())

    def rows(self) -> tuple[list[graphml.Node], list[graphml.EdgeRow]]:
        """Nodes ``(id, values)`` and edges ``(child, parent, values)`` as ``STEM.graphml``
        and :meth:`to_networkx` hold them."""
        nodes: list[graphml.Node] = [
            (n.id, {"name": n.name, "kind": n.kind, "iris": " ".join(n.iris), "source": n.source})
            for n in self.nodes.values()
        ]
        edges: list[graphml.EdgeRow] = [
            (e.child, e.parent, {"relation": e.relation, "source": e.source}) for e in self.edges
        ]
        return nodes, edges

    def to_networkx(self) -> networkx.DiGraph:
        import networkx as nx

        graph = nx.DiGraph(name=self.name)
        nodes, edges = self.rows()
        graph.add_nodes_from(nodes)
        graph.add_edges_from(edges)
        return graph

    def iri(self, node_id: str) -> str:
        node = self.nodes[node_id]
        if node.iris:
            return node.iris[0]
        return f"{NODE_BASE}{self.name}/{urllib.parse.quote(node_id, safe='')}"

    def triples(self) -> Iterator[turtle.Triple]:
        """The graph as RDF triples (what ``STEM.ttl`` holds): each concept a ``pc:Role`` or
        ``pc:Attribute`` with its label, kind, other IRIs and aliases; each edge
        ``skos:broader`` (``pc:partOf`` for a part)."""
        pc, skos = turtle.PREFIXES["pc"], turtle.PREFIXES["skos"]
        klass = turtle.IRI(pc + ("Role" if self.name == "roles" else "Attribute"))
        for n in self.nodes.values():
            me = self.iri(n.id)
            yield me, turtle.RDF_TYPE, klass
            yield me, turtle.RDFS_LABEL, n.name
            yield me, pc + "conceptKind", n.kind
            for other in n.iris[1:]:
                yield me, turtle.PREFIXES["owl"] + "sameAs", turtle.IRI(other)
            for alias in n.aliases:
                yield me, skos + "altLabel", alias
        for e in self.edges:
            prop = pc + "partOf" if e.relation == "part_of" else skos + "broader"
            yield self.iri(e.child), prop, turtle.IRI(self.iri(e.parent))

    def to_rdf(self) -> rdflib.Graph:
        return turtle.to_rdflib(
            self.triples(), {"pc": turtle.PREFIXES["pc"], "skos": turtle.PREFIXES["skos"]}
        )


def load_graph(path: Path) -> ConceptGraph:
    return ConceptGraph.from_json(json.loads(path.read_text(encoding="utf-8")))


# --------------------------------------------------------------------------- WordNet

ROOT_SYNSETS = (
    "person.n.01",
    "organization.n.01",
    "group.n.01",
    "social_group.n.01",
    "institution.n.01",
    "agency.n.01",
)
MIN_SENSE_WEIGHT = 0.2


def add_synset_tree(
    graph: ConceptGraph,
    wn: Any,
    anchor: Any,
    parent: str,
    hyponyms: bool = True,
    hypernyms: bool = True,
    source: str = "WordNet alignment",
) -> None:
    """The anchor synset under ``parent``, its hyponyms under it, its hypernyms above it.

    Every lemma becomes an alias, weighted by how common that sense of the word is (the
    first sense 1.0, each later one 0.8 times less; rare single-word senses are left out).
    """

    def node_for(synset: Any) -> str:
        node_id = f"wn:{synset.name()}"
        if node_id not in graph.nodes:
            graph.add(
                Concept(
                    node_id,
                    synset.lemma_names()[0].replace("_", " ").lower(),
                    "wordnet",
                    iris=(f"http://wordnet-rdf.princeton.edu/wn30/{synset.offset():08d}-n",),
                    source=f"WordNet 3.0 {synset.name()}",
                    aliases=tuple(lemma.replace("_", " ") for lemma in synset.lemma_names()),
                )
            )
            for lemma in synset.lemma_names():
                senses = wn.synsets(lemma, "n")
                rank = next((i for i, s in enumerate(senses) if s == synset), 0)
                weight = 0.8**rank
                if weight >= MIN_SENSE_WEIGHT or "_" in lemma:
                    graph.alias(lemma.replace("_", " "), node_id, weight)
        return node_id

    anchor_id = node_for(anchor)
    graph.link(anchor_id, parent, "is_a", source)
    # hypernyms up to the roots, for the justification of paths
    path = (
        min(anchor.hypernym_paths(), key=lambda p: (len(p), [s.name() for s in p]))
        if hypernyms
        else []
    )
    upper = [s for s in path[:-1]]
    cut = max((i for i, s in enumerate(upper) if s.name() in ROOT_SYNSETS), default=None)
    if cut is not None:
        chain = [*upper[cut:], anchor]
        for lower, higher in zip(chain[1:], chain[:-1], strict=True):
            graph.link(node_for(lower), node_for(higher), "is_a", "WordNet hypernym")
    # hyponyms below
    stack = [anchor] if hyponyms else []
    while stack:
        synset = stack.pop()
        # sorted: NLTK gives hyponyms in no fixed order, and builds must be reproducible
        for hyponym in sorted(
            synset.hyponyms() + synset.instance_hyponyms(), key=lambda s: s.name()
        ):
            new = f"wn:{hyponym.name()}" not in graph.nodes
            graph.link(node_for(hyponym), node_for(synset), "is_a", "WordNet hyponym")
            if new:
                stack.append(hyponym)


# --------------------------------------------------------------------------- resolving


@dataclass(frozen=True, slots=True)
class Match:
    """A resolved phrase: the target concept, a score in (0, 1], and the justifying path."""

    target: str
    score: float
    path: tuple[str, ...]
    matched: str
    via: str
    _: KW_ONLY
    reached: bool = True  # False: a concept that reaches no target (a non-health attribute)


class PhraseError(ValueError):
    """A phrase that is not text."""


#: The resolvers' last resort: a phrase to (node id, score) pairs, best first.
Fallback = Callable[[str], list[tuple[str, float]]]


@dataclass
class Resolver:
    """Resolve everyday phrases to target concepts of a graph, with paths.

    Args:
        graph: the concept graph.
        is_target: which nodes are answers (regulatory roles, HIPAA information types).
        top: whether a target node ends the path (the path runs on to the broadest target).
        known_words: head words that are real English nouns; a phrase whose head is one of
            them but reaches no target gets no match (a journalist is no health care
            provider, even when the phrase mentions a hospital).
        fallback: called with the phrase when nothing matched; returns (node id, score).
    """

    graph: ConceptGraph
    is_target: Callable[[str], bool]
    known_words: frozenset[str] = frozenset()
    fallback: Fallback | None = None
    generic_heads: frozenset[str] = frozenset()
    untargeted: bool = False

    def resolve(self, phrase: object, k: int = 3) -> list[Match]:
        """The best ``k`` targets for ``phrase``, best first; empty when nothing fits.

        Raises:
            PhraseError: ``phrase`` is not a string.
        """
        if not isinstance(phrase, str):
            raise PhraseError(f"expected text, got {type(phrase).__name__}")
        words = lexicon.content_words(phrase)
        if not words:
            return []
        head = words[-1]
        generic_head = self._generic(head)
        at_head: dict[str, Match] = {}
        elsewhere: dict[str, Match] = {}
        decided = False  # the longest n-gram at a head that names something decides
        for cand in lexicon.candidates(phrase):
            if not cand.at_head and at_head:
                break
            hits = [h for key in lexicon.keys(cand.text) for h in self.graph.index.get(key, [])]
            if cand.at_head and not decided and " " in cand.text:
                if any(node == EXCLUDED for node, _ in hits):
                    return []  # a phrase that names a party HIPAA does not cover
                if not hits and self.knows(cand.text.replace(" ", "_")):
                    return []  # a compound noun of its own ("real estate agent")
            if hits and cand.at_head:
                decided = True
            generic = cand.at_head and " " not in cand.text and self._generic(cand.text)
            into = at_head if cand.at_head and not generic else elsewhere
            factor = (0.55 + 0.45 * min(cand.coverage, 1.0)) * (1.0 if cand.at_head else 0.7)
            for node_id, weight in hits:
                if node_id != EXCLUDED:
                    self._add(into, node_id, weight * factor, cand.text, "lexicon", phrase)
        if at_head:
            found = at_head
        elif self.knows(head) and not generic_head:
            found = {}  # the head is a real noun that reaches no target
        else:
            found = elsewhere
            if not found and self.fallback is not None:
                for node_id, score in self.fallback(" ".join(words)):
                    self._add(found, node_id, score, " ".join(words), "embedding", phrase)
        return sorted(found.values(), key=lambda m: (not m.reached, -m.score, m.path))[:k]

    def _generic(self, word: str) -> bool:
        return any(form in self.generic_heads for form in lexicon.singulars(word))

    def knows(self, word: str) -> bool:
        """Whether ``word`` (or its singular) is one of ``known_words``: a real English noun."""
        return any(form in self.known_words for form in lexicon.singulars(word))

    def _add(
        self,
        found: dict[str, Match],
        node_id: str,
        score: float,
        text: str,
        via: str,
        phrase: str = "",
    ) -> None:
        up = self.graph.path_up(node_id, self.is_target)
        reached = up is not None
        if up is None:
            if not self.untargeted or self.graph.nodes[node_id].kind == "excluded":
                return
            up = [node_id]
            score *= 0.5
        target = up[-1]
        top = self._top(target)
        score = score * (0.98 ** (len(up) - 1))
        names = [self.graph.nodes[n].name for n in up + top[1:]]
        shown = " ".join(phrase.split())[:200] or text
        path = tuple(dict.fromkeys([shown, text, *names]))
        best = found.get(target)
        if best is None or score > best.score:
            found[target] = Match(
                self.graph.nodes[target].name,
                round(min(score, 1.0), 4),
                path,
                self.graph.nodes[node_id].name,
                via,
                reached=reached,
            )

    def _top(self, target: str) -> list[str]:
        chain = [target]
        while True:
            ups = [e.parent for e in self.graph.parents(chain[-1])]
            if not ups or ups[0] in chain:
                return chain
            chain.append(ups[0])


def first(values: Sequence[str]) -> str | None:
    return values[0] if values else None
