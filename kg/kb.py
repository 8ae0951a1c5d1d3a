"""The knowledge base: a directory holding the regulation tree, its cross-references and
definitions, the role and attribute graphs and the machine-annotated norms.

The fourteen files :meth:`KnowledgeBase.save` writes (all together, atomically: a failed or
killed build leaves the previous directory as it was; see :mod:`privacy_checklist.kg.atomic`):

- ``tree.json``: nodes in document order and the anomalies the build repaired;
- ``references.json``: cross-references and the citations that could not be resolved;
- ``definitions.json``: defined terms with their node, scope and text;
- ``provenance.json``: the source pages (URL, "up to date as of" date, sha256) and the builder;
- ``roles.json``, ``attributes.json``: the role and attribute graphs (nodes, edges, the
  phrase index, and their seeds' and ontologies' provenance), read by
  :func:`~privacy_checklist.kg.concepts.load_graph`;
- ``nouns.txt.gz``: WordNet's nouns, so that resolving a phrase needs no WordNet at run time;
- ``norms.json``: the rules annotator's CI reading of every annotatable paragraph, with the
  curated readings of ``ontologies/norm_conditions.json`` (and their conditions) laid over
  theirs (``pcheck annotate`` rewrites it alone; the editors' edits live in
  :mod:`~privacy_checklist.kg.store`);
- ``tree.graphml`` (the tree with its references), ``roles.graphml``, ``attributes.graphml``:
  for graph tools;
- ``tree.ttl``, ``roles.ttl``, ``attributes.ttl``: the same in RDF, in the vocabulary of
  ``ontologies/privacy-checklist.ttl`` (DPV and OPPO IRIs kept).

:func:`load` reads the first four JSON files; the graphs, the nouns and the norms are read on first
use. GraphML and Turtle are for other tools and are never read back. A folder built without
``--ontologies`` holds the tree files (the four JSON, ``tree.graphml``, ``tree.ttl``) alone.
The retrieval layer keeps its index beside them, in ``index/``.
"""

from __future__ import annotations

import gzip
import json
import shutil
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.ingest.ecfr import Link, PartPage
from privacy_checklist.kg import atomic, graphml, turtle
from privacy_checklist.kg.attributes import attribute_resolver, build_attribute_graph
from privacy_checklist.kg.citations import CrossRef, Unresolved, extract, refs_by
from privacy_checklist.kg.concepts import ConceptGraph, Resolver, load_graph
from privacy_checklist.kg.conditions import Catalogue, load_catalogue
from privacy_checklist.kg.definitions import Definition, Definitions, extract_definitions
from privacy_checklist.kg.embeddings import embedding_fallback
from privacy_checklist.kg.norms import (
    CURATED_VERSION,
    RULES_VERSION,
    Norm,
    RulesAnnotator,
    annotatable,
    apply_reading,
)
from privacy_checklist.kg.roles import build_role_graph, role_resolver, wordnet_nouns
from privacy_checklist.kg.tree import Anomaly, Node, RegulationTree, build_tree

if TYPE_CHECKING:
    import networkx
    import rdflib

FORMAT_VERSION = 1
CURATED_PART = "Part 164"  # the curated readings are of Subpart E: a tree without it has none
BUILDER = "privacy-checklist ingest (format 1)"
JSON_FILES = ("tree.json", "references.json", "definitions.json", "provenance.json")
GRAPH_FILES = ("roles.json", "attributes.json", "nouns.txt.gz")
NORMS_FILE = "norms.json"
# everything a knowledge base folder holds (``index`` is the retrieval cache built from it)
OWN_FILES = frozenset(
    {
        *JSON_FILES,
        *GRAPH_FILES,
        NORMS_FILE,
        *(
            f"{stem}.{ext}"
            for stem in ("tree", "roles", "attributes")
            for ext in ("graphml", "ttl")
        ),
        "index",
    }
)
VOCAB = "https://w3id.org/privacy-checklist/vocab#"
NODE_BASE = "https://w3id.org/privacy-checklist/hipaa/"
TREE_GRAPH = "HIPAA regulation tree"  # the name tree.graphml gives its graph


class KnowledgeBaseError(Exception):
    """A knowledge base directory is missing, incomplete or damaged; the message says how."""


def builtin_path() -> Path:
    """The knowledge base that ships inside the package."""
    return Path(str(resources.files("privacy_checklist.kg") / "builtin"))


@dataclass(frozen=True, slots=True)
class _StoreView:
    """The store's effective view as last read, and what it was read against."""

    machine: dict[str, Norm]  # the machine annotation it overlays
    stamp: tuple[Any, ...]  # the store's file as it was (``kg.store.stamp``)
    norms: dict[str, Norm]
    validated: int


@dataclass
class KnowledgeBase:
    """The Privacy Checklist: regulation tree, cross-references, definitions, provenance, and
    four parts beside them: the role and attribute graphs, WordNet's nouns and the machine
    annotation of the norms.

    Each part is held in one place (``_roles``, ``_attributes``, ``_nouns``,
    ``_machine_norms``): set when the knowledge base is built in memory (:func:`build`,
    :meth:`write_norms`), otherwise read from :attr:`path` on first use and kept. :meth:`save`
    writes the parts it holds and copies the others' files from :attr:`path`.
    """

    tree: RegulationTree
    refs: list[CrossRef]
    definitions: Definitions
    provenance: dict[str, Any]
    unresolved: list[Unresolved] = field(default_factory=list)
    path: Path | None = None
    #: The editors' store whose effective view :attr:`norms` serves (None: the machine
    #: annotation alone). Given explicitly (``load(..., store=PATH)``); never opened otherwise.
    store: Path | None = None
    _roles: ConceptGraph | None = field(default=None, init=False, repr=False, compare=False)
    _attributes: ConceptGraph | None = field(default=None, init=False, repr=False, compare=False)
    _nouns: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    _machine_norms: dict[str, Norm] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _view: _StoreView | None = field(default=None, init=False, repr=False, compare=False)

    # ---------------------------------------------------------------- norms
    @property
    def machine_norms(self) -> dict[str, Norm]:
        """The machine (rules) annotation of every annotated paragraph, by node id: the
        baseline the editors' store records its versions against (version 0)."""
        if self._machine_norms is None:
            data = _read_json(self._graph_file(NORMS_FILE).parent, NORMS_FILE)
            self._machine_norms = {row["node"]: Norm.from_json(row) for row in data["norms"]}
        return self._machine_norms

    @property
    def norms(self) -> dict[str, Norm]:
        """The norms as everything reads them (retrieval, reasoners, the browser).

        With a :attr:`store`, its effective view: a validated annotation wins, then the
        store's edited or LLM one, then the machine annotation (a rejected one drops back to
        it). The store is read again only when its file changed (``kg.store.stamp``), and
        the same dict comes back while the view is unchanged, so a retrieval index
        re-indexes only when a norm did change. A store that does not exist
        is not created: the machine annotation stands.

        Raises:
            KnowledgeBaseError: the store is damaged or not a norm store (the message names it).
        """
        machine = self.machine_norms
        if self.store is None:
            return machine
        from privacy_checklist.kg.store import StoreError, read_effective, stamp

        key = stamp(self.store)
        last = self._view
        if last is not None and last.machine is machine and last.stamp == key:
            return last.norms
        try:
            norms, validated = read_effective(self.store, machine)
        except StoreError as exc:
            raise KnowledgeBaseError(str(exc)) from exc
        if last is not None and last.machine is machine and last.norms == norms:
            norms = last.norms  # the same view: the same object, nothing to re-index
        self._view = _StoreView(machine, key, norms, validated)
        return norms

    def norm_counts(self) -> dict[str, int]:
        """Norms by type as everything reads them (:attr:`norms`), and how many an editor
        validated in the :attr:`store` (0 without one). Reads no store but :attr:`store`."""
        norms = self.norms
        validated = self._view.validated if self.store is not None and self._view else 0
        counts = Counter(n.norm_type for n in norms.values())
        return {
            "permit": counts["permit"],
            "prohibit": counts["prohibit"],
            "definition": counts["definition"],
            "validated": validated,
        }

    @property
    def has_norms(self) -> bool:
        return self._machine_norms is not None or (
            self.path is not None and (self.path / NORMS_FILE).exists()
        )

    @cached_property
    def catalogue(self) -> Catalogue | None:
        """The curated readings of ``ontologies/norm_conditions.json``, checked against this
        tree (:func:`~privacy_checklist.kg.conditions.load_catalogue`); None for a tree without
        Part 164, which they are readings of.

        Raises:
            CatalogueError: a curated quote, node or kind does not fit this tree (all listed).
        """
        if CURATED_PART not in self.tree:
            return None
        return load_catalogue(self.tree)

    def annotate_rules(
        self,
        only: str | None = None,
        progress: Callable[[int], None] | None = None,
        *,
        curated: bool = True,
    ) -> dict[str, Norm]:
        """Annotate paragraphs with the rules annotator (all of Parts 160 and 164, or ``only``),
        then lay the curated readings over theirs (:func:`~privacy_checklist.kg.norms.
        apply_reading`): those paragraphs carry the curated roles, information type, purpose
        and conditions, with provenance ``curated``. ``curated=False``: the rules' reading
        alone (to measure the rules annotator).

        Raises:
            CatalogueError: the curated readings do not fit the text; nothing is annotated.
        """
        catalogue = self.catalogue if curated else None
        readings = catalogue.readings if catalogue is not None else {}
        annotator = RulesAnnotator(
            self.tree,
            self.refs_out,
            self.role_resolver(embeddings=False),
            self.attribute_resolver(embeddings=False),
        )
        out: dict[str, Norm] = {}
        for node_id in annotatable(self.tree, only):
            norm = annotator.annotate(node_id)
            reading = readings.get(node_id)
            out[node_id] = apply_reading(norm, reading) if reading is not None else norm
            if progress is not None:
                progress(1)
        return out

    def write_norms(self, norms: dict[str, Norm], directory: Path | None = None) -> Path:
        """Write ``norms.json`` atomically into the knowledge base directory; ``norms``
        become the machine annotation this knowledge base holds."""
        directory = Path(directory or self.path or ".")
        target = directory / NORMS_FILE
        data = {
            "format": FORMAT_VERSION,
            "annotator": RULES_VERSION,
            "curated": CURATED_VERSION,
            "norms": [n.to_json() for n in sorted(norms.values(), key=lambda n: n.node)],
        }
        text = json.dumps(data, ensure_ascii=False, indent=0) + "\n"
        atomic.replace_file(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        self._machine_norms = norms
        return target

    # ---------------------------------------------------------------- role and attribute graphs
    def _graph_file(self, name: str) -> Path:
        if self.path is None or not (self.path / name).exists():
            raise KnowledgeBaseError(
                f"this knowledge base has no {name}; rebuild it with pcheck ingest --ontologies DIR"
            )
        return self.path / name

    @property
    def has_graphs(self) -> bool:
        if self._roles is not None:
            return True
        return self.path is not None and all((self.path / f).exists() for f in GRAPH_FILES)

    @property
    def roles(self) -> ConceptGraph:
        """The role graph (read on first use)."""
        if self._roles is None:
            self._roles = load_graph(self._graph_file("roles.json"))
        return self._roles

    @property
    def attributes(self) -> ConceptGraph:
        """The attribute graph (read on first use)."""
        if self._attributes is None:
            self._attributes = load_graph(self._graph_file("attributes.json"))
        return self._attributes

    @property
    def nouns(self) -> frozenset[str]:
        """WordNet's nouns: a phrase whose head is one of them but reaches no role is no role."""
        if self._nouns is None:
            with gzip.open(self._graph_file("nouns.txt.gz"), "rt", encoding="utf-8") as handle:
                self._nouns = frozenset(handle.read().split())
        return self._nouns

    def role_resolver(self, *, embeddings: bool = False) -> Resolver:
        """Resolves phrases to regulatory roles
        (:func:`~privacy_checklist.kg.roles.role_resolver`); ``embeddings`` adds the sentence
        embedding fallback (the ``embeddings`` extra)."""
        fallback = embedding_fallback(self.roles, "regulatory") if embeddings else None
        return role_resolver(self.roles, self.nouns, fallback)

    def attribute_resolver(self, *, embeddings: bool = False) -> Resolver:
        """Resolves phrases to attributes and HIPAA information types
        (:func:`~privacy_checklist.kg.attributes.attribute_resolver`); ``embeddings`` adds the
        sentence embedding fallback (the ``embeddings`` extra)."""
        fallback = embedding_fallback(self.attributes, "hipaa") if embeddings else None
        return attribute_resolver(self.attributes, self.nouns, fallback)

    # ---------------------------------------------------------------- lookups
    @cached_property
    def refs_out(self) -> dict[str, list[CrossRef]]:
        return refs_by(self.refs, "source")

    @cached_property
    def refs_in(self) -> dict[str, list[CrossRef]]:
        return refs_by(self.refs, "target")

    def node(self, node_id: str) -> Node:
        """A node by id; the error names the ids :func:`kg.search.did_you_mean` suggests."""
        found = self.tree.get(node_id)
        if found is not None:
            return found
        from privacy_checklist.kg.search import unknown_id

        raise KeyError(unknown_id(self.tree, node_id))

    def define(self, term: str, at: str | None = None) -> Definition:
        """The definition of ``term`` in force at node ``at`` (see :meth:`Definitions.define`)."""
        return self.definitions.define(term, at, self.tree)

    def full_specification(self, node_id: str) -> str:
        return self.tree.full_specification(node_id)

    # ---------------------------------------------------------------- figures
    def stats(self) -> dict[str, Any]:
        """Counts that describe the knowledge base (what ``pcheck stats`` prints)."""
        nodes = list(self.tree)
        leaves = len(self.tree.leaves())
        internal_refs = [r for r in self.refs if not r.external]
        return {
            "nodes": len(nodes),
            "nodes_by_kind": dict(Counter(n.kind for n in nodes)),
            "leaves": leaves,
            "internal_nodes": len(nodes) - leaves,
            "subsumption_edges": sum(1 for n in nodes if n.parent is not None),
            "references": {
                "internal": len(internal_refs),
                "external": len(self.refs) - len(internal_refs),
                "by_via": dict(Counter(r.via for r in internal_refs)),
                "to_ancestor": sum(1 for r in internal_refs if not r.exact),
                "unresolved": len(self.unresolved),
            },
            "definitions": {
                "total": len(self.definitions),
                "by_section": self.definitions.by_section(),
            },
            "anomalies": dict(Counter(a.kind for a in self.tree.anomalies)),
            **(
                {"roles": self.roles.stats(), "attributes": self.attributes.stats()}
                if self.has_graphs
                else {}
            ),
            **({"norms": self.norm_counts()} if self.has_norms else {}),
            "sources": [
                {k: s.get(k) for k in ("part", "url", "up_to_date", "sha256")}
                for s in self.provenance.get("sources", [])
            ],
        }

    # ---------------------------------------------------------------- exports
    def export_json(self) -> dict[str, Any]:
        """The tree as ``{"nodes", "refs", "definitions"}`` (the documented export format)."""
        return {
            "nodes": [
                {"id": n.id, "parent": n.parent, "kind": n.kind, "title": n.title, "text": n.text}
                for n in self.tree
            ],
            "refs": [
                {
                    "source": r.source,
                    "target": r.target,
                    "start": r.start,
                    "end": r.end,
                    "text": r.text,
                    "external": r.external,
                }
                for r in self.refs
            ],
            "definitions": [d.to_json() for d in self.definitions],
        }

    def rows(self) -> tuple[list[graphml.Node], list[graphml.EdgeRow]]:
        """Nodes ``(id, values)`` and edges ``(source, target, values)``: the tree (``child``
        edges, parent to child) and references (``cites`` edges), as ``tree.graphml`` and
        :meth:`to_networkx` hold them."""
        nodes: list[graphml.Node] = [
            (
                n.id,
                {
                    "kind": n.kind,
                    "title": n.title or "",
                    "text": n.text,
                    "label": n.label or "",
                    "depth": n.depth,
                },
            )
            for n in self.tree
        ]
        edges: list[graphml.EdgeRow] = [
            (n.parent, n.id, {"type": "child"}) for n in self.tree if n.parent is not None
        ]
        edges += [
            (
                r.source,
                r.target,
                {
                    "type": "cites",
                    "start": r.start,
                    "end": r.end,
                    "text": r.text,
                    "via": r.via,
                    "exact": r.exact,
                },
            )
            for r in self.refs
            if not r.external and r.target is not None
        ]
        return nodes, edges

    def to_networkx(self) -> networkx.MultiDiGraph:
        """The tree and references as a networkx multigraph (:meth:`rows`)."""
        import networkx as nx

        graph = nx.MultiDiGraph(name=TREE_GRAPH)
        nodes, edges = self.rows()
        graph.add_nodes_from(nodes)
        graph.add_edges_from(edges)
        return graph

    def triples(self) -> Iterator[turtle.Triple]:
        """The tree, references and definitions as RDF triples in our vocabulary (what
        ``tree.ttl`` holds)."""
        pc, dct, IRI = turtle.PREFIXES["pc"], turtle.PREFIXES["dct"], turtle.IRI

        def iri(node_id: str) -> turtle.IRI:
            return IRI(NODE_BASE + urllib.parse.quote(node_id, safe="().,"))

        kinds = {
            "root": IRI(pc + "Regulation"),
            "part": IRI(pc + "Part"),
            "subpart": IRI(pc + "Subpart"),
            "section": IRI(pc + "Section"),
            "appendix": IRI(pc + "Appendix"),
            "paragraph": IRI(pc + "Paragraph"),
        }
        a = turtle.RDF_TYPE
        for n in self.tree:
            me = iri(n.id)
            yield me, a, kinds[n.kind]
            yield me, dct + "identifier", n.id
            if n.title:
                yield me, dct + "title", n.title
            if n.text:
                yield me, pc + "text", n.text
            if n.parent is not None:
                yield me, pc + "partOf", iri(n.parent)
        for index, r in enumerate(self.refs):
            me = IRI(f"{NODE_BASE}ref/{index}")
            yield me, a, IRI(pc + "CrossReference")
            yield me, pc + "source", iri(r.source)
            if r.target is not None:
                yield me, pc + "target", iri(r.target)
                yield iri(r.source), pc + "cites", iri(r.target)
            yield me, pc + "start", int(r.start)
            yield me, pc + "end", int(r.end)
            yield me, pc + "citationText", r.text
            yield me, pc + "external", bool(r.external)
        for index, d in enumerate(self.definitions):
            me = IRI(f"{NODE_BASE}definition/{index}")
            yield me, a, IRI(pc + "Definition")
            yield me, turtle.RDFS_LABEL, d.term
            yield me, pc + "term", d.term
            yield me, pc + "definedAt", iri(d.node)
            yield me, pc + "scope", iri(d.scope)
            yield me, pc + "definitionText", d.text

    def to_rdf(self) -> rdflib.Graph:
        """The tree, references and definitions as an rdflib graph (:meth:`triples`)."""
        return turtle.to_rdflib(
            self.triples(), {"pc": turtle.PREFIXES["pc"], "dct": turtle.PREFIXES["dct"]}
        )

    # ---------------------------------------------------------------- saving
    def save(self, out: Path | str, *, graph_files: bool = True, force: bool = False) -> Path:
        """Write the knowledge base to ``out``: into a temporary folder, then switched into
        place in one atomic step (see :mod:`privacy_checklist.kg.atomic`), so whatever the
        process dies of, ``out`` holds the previous knowledge base or the new one, complete.

        Args:
            out: the folder to write.
            graph_files: also write the GraphML and Turtle copies.
            force: replace ``out`` even when it holds files that are not a knowledge base.

        Returns:
            The directory written.

        Raises:
            OutputRefused: ``out`` is a file, or a folder that is neither empty nor a knowledge
                base (it is left as it was), and ``force`` is false.
            OSError: ``out`` cannot be written; whatever stood there is left as it was.
        """
        out = atomic.replace_dir(
            out, lambda tmp: self._write(tmp, graph_files), not_a_knowledge_base, force=force
        )
        self.path = out
        return out

    def _write(self, directory: Path, graph_files: bool) -> None:
        def dump(name: str, data: Any) -> None:
            text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False)
            (directory / name).write_text(text + "\n", encoding="utf-8")

        dump(
            "tree.json",
            {
                "format": FORMAT_VERSION,
                "nodes": [
                    {
                        "id": n.id,
                        "parent": n.parent,
                        "kind": n.kind,
                        "title": n.title,
                        "label": n.label,
                        "text": n.text,
                        "notes": list(n.notes),
                    }
                    for n in self.tree
                ],
                "anomalies": [
                    {"node": a.node, "kind": a.kind, "detail": a.detail}
                    for a in self.tree.anomalies
                ],
            },
        )
        dump(
            "references.json",
            {
                "format": FORMAT_VERSION,
                "refs": [r.to_json() for r in self.refs],
                "unresolved": [
                    {
                        "source": u.source,
                        "start": u.start,
                        "end": u.end,
                        "text": u.text,
                        "reason": u.reason,
                    }
                    for u in self.unresolved
                ],
            },
        )
        dump(
            "definitions.json",
            {"format": FORMAT_VERSION, "definitions": [d.to_json() for d in self.definitions]},
        )
        dump("provenance.json", self.provenance)
        self._write_parts(directory, graph_files)
        if graph_files:
            nodes, edges = self.rows()
            graphml.write(directory / "tree.graphml", TREE_GRAPH, nodes, edges, multigraph=True)
            turtle.write(directory / "tree.ttl", self.triples())

    def _write_parts(self, directory: Path, graph_files: bool) -> None:
        """The parts this knowledge base holds, written; the others' files (when it has them)
        copied from :attr:`path`."""
        source = self.path if self.path is not None and self.path != directory else None

        def copy(*names: str) -> None:
            for name in names:
                if source is not None and (source / name).exists():
                    shutil.copy2(source / name, directory / name)

        for stem, graph in (("roles", self._roles), ("attributes", self._attributes)):
            if graph is not None:
                graph.save(directory, stem, graph_files=graph_files)
            else:
                copy(f"{stem}.json", f"{stem}.graphml", f"{stem}.ttl")
        if self._nouns is not None:
            nouns = "\n".join(sorted(self._nouns)) + "\n"
            (directory / "nouns.txt.gz").write_bytes(gzip.compress(nouns.encode("utf-8"), mtime=0))
        else:
            copy("nouns.txt.gz")
        if self._machine_norms is not None:
            self.write_norms(self._machine_norms, directory)
        else:
            copy(NORMS_FILE)


def not_a_knowledge_base(directory: Path) -> str | None:
    """Why the non-empty folder ``directory`` may not be replaced by a knowledge base, or
    ``None`` when it is one this package wrote (its ``provenance.json`` names our builder)
    holding only the files a knowledge base holds, so replacing it loses nothing of the user's.
    """
    entries = sorted(p.name for p in Path(directory).iterdir())
    foreign = [
        name
        for name in entries
        if name not in OWN_FILES and not name.startswith(f".{NORMS_FILE}.tmp-")
    ]
    shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
    try:
        provenance = json.loads((Path(directory) / "provenance.json").read_text("utf-8"))
        ours = str(provenance.get("builder", "")).startswith("privacy-checklist ingest")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        ours = False
    if not ours:
        return f"it is not a knowledge base (it holds {shown or ', '.join(entries[:3])})"
    if foreign:
        return f"it is a knowledge base but also holds other files ({shown})"
    return None


def _read_json(directory: Path, name: str) -> Any:
    path = directory / name
    if not path.exists():
        raise KnowledgeBaseError(
            f"{directory} is not a complete knowledge base: {name} is missing "
            "(build one with: pcheck ingest --out DIR)"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KnowledgeBaseError(
            f"{path} is damaged ({exc}); rebuild it with pcheck ingest"
        ) from exc


def load(directory: Path | str | None = None, store: Path | str | None = None) -> KnowledgeBase:
    """Load a knowledge base directory (default: the one shipped with the package).

    Args:
        directory: the knowledge base folder.
        store: the editors' store whose effective view :attr:`KnowledgeBase.norms` serves
            (read only, when it exists); None: the machine annotation alone.

    Raises:
        KnowledgeBaseError: the directory is missing, incomplete, damaged, or of another format.
    """
    directory = Path(directory) if directory is not None else builtin_path()
    if not directory.is_dir():
        raise KnowledgeBaseError(f"{directory}: no such knowledge base directory")
    tree_data = _read_json(directory, "tree.json")
    if tree_data.get("format") != FORMAT_VERSION:
        raise KnowledgeBaseError(
            f"{directory}: format {tree_data.get('format')!r}, this version reads "
            f"{FORMAT_VERSION}; rebuild it with pcheck ingest"
        )
    rows = tree_data["nodes"]
    children: dict[str, list[str]] = {row["id"]: [] for row in rows}
    for row in rows:
        if row["parent"] is not None:
            children[row["parent"]].append(row["id"])
    nodes: dict[str, Node] = {}
    for order, row in enumerate(rows):
        parent = row["parent"]
        depth = 0 if parent is None else nodes[parent].depth + 1
        nodes[row["id"]] = Node(
            id=row["id"],
            kind=row["kind"],
            parent=parent,
            title=row["title"],
            text=row["text"],
            label=row["label"],
            depth=depth,
            order=order,
            children=tuple(children[row["id"]]),
            notes=tuple(row.get("notes", ())),
        )
    anomalies = [Anomaly(a["node"], a["kind"], a["detail"]) for a in tree_data.get("anomalies", [])]
    ref_data = _read_json(directory, "references.json")
    refs = [CrossRef(**r) for r in ref_data["refs"]]
    unresolved = [Unresolved(**u) for u in ref_data.get("unresolved", [])]
    definitions = Definitions(
        Definition(**d) for d in _read_json(directory, "definitions.json")["definitions"]
    )
    provenance = _read_json(directory, "provenance.json")
    missing = [
        r for r in refs if (r.target is not None and r.target not in nodes) or r.source not in nodes
    ]
    if missing:
        raise KnowledgeBaseError(
            f"{directory}: {len(missing)} reference(s) point at missing nodes, "
            f"first {missing[0].source} -> {missing[0].target}; rebuild it"
        )
    return KnowledgeBase(
        tree=RegulationTree(nodes, anomalies),
        refs=refs,
        definitions=definitions,
        provenance=provenance,
        unresolved=unresolved,
        path=directory,
        store=Path(store) if store is not None else None,
    )


def build(
    pages: Sequence[PartPage],
    progress: Callable[[str], None] | None = None,
    ontologies: Path | None = None,
) -> KnowledgeBase:
    """Build a knowledge base in memory from parsed part pages.

    Args:
        pages: the eCFR part pages.
        progress: called with the name of each step.
        ontologies: the folder of DPV and OPPO files; with it the role and attribute graphs are
            built too (WordNet for NLTK must be installed).
    """
    say = progress or (lambda _msg: None)
    pages = sorted(pages, key=lambda p: p.part)
    parts = [p.part for p in pages]
    if len(set(parts)) != len(parts):
        raise ValueError(f"the same part was given twice ({parts}); pass each part once")
    say("tree")
    tree = build_tree(pages)
    links: dict[str, list[Link]] = {n.id: n.links for page in pages for n in page.nodes if n.links}
    say("cross-references")
    refs, unresolved = extract(tree, links)
    say("definitions")
    definitions = extract_definitions(tree)
    provenance = {
        "builder": BUILDER,
        "sources": [
            {
                "part": p.part,
                "title": p.title,
                "url": p.url,
                "source": _portable(p.source),
                "up_to_date": p.up_to_date,
                "sha256": p.sha256,
            }
            for p in pages
        ],
        "licence": "US federal regulation text (45 CFR), public domain",
    }
    kb = KnowledgeBase(
        tree=tree,
        refs=refs,
        definitions=definitions,
        provenance=provenance,
        unresolved=unresolved,
    )
    if ontologies is not None:
        say("role graph")
        kb._roles = build_role_graph(tree, definitions)
        say("attribute graph")
        kb._attributes = build_attribute_graph(tree, ontologies)
        kb._nouns = wordnet_nouns()
        say("norms")
        kb._machine_norms = kb.annotate_rules()
    return kb


def _portable(source: str) -> str:
    """A source as recorded: URLs as they are, files by name only (no machine paths)."""
    return source if "://" in source else Path(source).name


def iter_sources(values: Iterable[str]) -> list[str]:
    """Expand directories given as sources into their ``*.html`` files, sorted."""
    out: list[str] = []
    for value in values:
        path = Path(value)
        if "://" not in value and path.is_dir():
            found = sorted(str(p) for p in path.glob("*.html"))
            if not found:
                raise KnowledgeBaseError(f"{value}: a directory with no .html pages in it")
            out.extend(found)
        else:
            out.append(value)
    return out
