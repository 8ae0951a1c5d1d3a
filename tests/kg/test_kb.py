"""Saving, loading, shipping and exporting the knowledge base."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import networkx as nx
import pytest
from rdflib import Graph

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.kb import KnowledgeBase, KnowledgeBaseError
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "tree_outline.json"


def outline(kb: KnowledgeBase) -> list[dict]:
    """A reviewable digest of the tree: structure, headings, the start of each text."""
    return [
        {
            "id": n.id,
            "parent": n.parent,
            "kind": n.kind,
            "title": n.title,
            "text": n.text[:70],
            "chars": len(n.text),
            "refs_out": sorted({r.target or "(external)" for r in kb.refs_out.get(n.id, [])}),
        }
        for n in kb.tree
    ]


def test_golden_outline(built: KnowledgeBase) -> None:
    """Diff the built tree against the reviewed golden file (UPDATE_GOLDEN=1 rewrites it)."""
    current = json.dumps(outline(built), ensure_ascii=False, indent=1) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(current, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    if current != expected:
        diff = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(True), current.splitlines(True), "golden", "built", n=2
                )
            )[:80]
        )
        pytest.fail(
            f"the built tree differs from {GOLDEN.name} (UPDATE_GOLDEN=1 after review):\n{diff}"
        )


def test_shipped_copy_equals_a_fresh_build(built: KnowledgeBase, tmp_path: Path) -> None:
    fresh = built.save(tmp_path / "kb")
    shipped = kbmod.builtin_path()
    for name in kbmod.JSON_FILES:
        assert (fresh / name).read_text(encoding="utf-8") == (shipped / name).read_text(
            encoding="utf-8"
        ), f"{name} of the shipped knowledge base is stale: run make kb"
    fresh_graph, shipped_graph = Graph(), Graph()
    fresh_graph.parse(fresh / "tree.ttl")
    shipped_graph.parse(shipped / "tree.ttl")
    assert set(fresh_graph) == set(shipped_graph)
    assert nx.utils.graphs_equal(
        nx.read_graphml(fresh / "tree.graphml"), nx.read_graphml(shipped / "tree.graphml")
    )


def test_shipped_provenance(shipped: KnowledgeBase) -> None:
    sources = shipped.provenance["sources"]
    assert [s["part"] for s in sources] == ["160", "162", "164"]
    assert all(s["up_to_date"] == "2023-11-20" for s in sources)
    assert all(s["url"].startswith("https://www.ecfr.gov/current/title-45/") for s in sources)
    assert (
        sources[0]["sha256"] == "930dd252adb45f2c72c12c3b2fe139a05d60c3f6731ac34c8fadb3d180b2c91f"
    )
    assert "/" not in sources[0]["source"]  # no machine paths in what ships


def test_round_trip(built: KnowledgeBase, tmp_path: Path) -> None:
    loaded = kbmod.load(built.save(tmp_path / "kb"))
    assert list(loaded.tree.nodes) == list(built.tree.nodes)
    assert all(loaded.tree[n.id] == n for n in built.tree)
    assert loaded.refs == built.refs
    assert loaded.definitions.items == built.definitions.items
    assert loaded.tree.anomalies == built.tree.anomalies
    assert loaded.stats() == built.stats()


def test_shipped_loads_without_shared(shipped: KnowledgeBase) -> None:
    assert shipped.tree["164.502(a)(1)(i)"].text == "To the individual;"
    assert shipped.path == kbmod.builtin_path()


def test_no_dangling_reference(shipped: KnowledgeBase) -> None:
    for ref in shipped.refs:
        assert ref.source in shipped.tree
        assert ref.external == (ref.target is None)
        assert ref.external or ref.target in shipped.tree
        assert shipped.tree[ref.source].text[ref.start : ref.end] == ref.text


def test_failed_save_leaves_previous_copy(
    built: KnowledgeBase, tmp_path: Path, monkeypatch
) -> None:
    out = built.save(tmp_path / "kb")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(self, directory, graph_files):  # writes one file, then fails
        (directory / "tree.json").write_text("{}")
        raise OSError("disk full")

    monkeypatch.setattr(KnowledgeBase, "_write", broken)
    with pytest.raises(OSError, match="disk full"):
        built.save(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb"]  # no temporary left behind


def test_load_errors(built: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="no such knowledge base"):
        kbmod.load(tmp_path / "nowhere")
    out = built.save(tmp_path / "kb", graph_files=False)
    (out / "definitions.json").unlink()
    with pytest.raises(KnowledgeBaseError, match=r"definitions\.json is missing"):
        kbmod.load(out)
    out = built.save(tmp_path / "kb2", graph_files=False)
    (out / "tree.json").write_text('{"format": 1, "nodes": [', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="damaged"):
        kbmod.load(out)
    out = built.save(tmp_path / "kb3", graph_files=False)
    (out / "tree.json").write_text('{"format": 99, "nodes": []}', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="format 99"):
        kbmod.load(out)


def test_export_json_schema(shipped: KnowledgeBase) -> None:
    data = shipped.export_json()
    assert set(data) == {"nodes", "refs", "definitions"}
    assert set(data["nodes"][0]) == {"id", "parent", "kind", "title", "text"}
    assert set(data["refs"][0]) == {"source", "target", "start", "end", "text", "external"}
    assert set(data["definitions"][0]) == {"term", "node", "scope", "text"}
    assert len(data["nodes"]) == 2274


def test_turtle_sparql(shipped: KnowledgeBase) -> None:
    graph = Graph()
    graph.parse(kbmod.builtin_path() / "tree.ttl")
    rows = list(
        graph.query(
            """
            PREFIX pc: <https://w3id.org/privacy-checklist/vocab#>
            PREFIX dct: <http://purl.org/dc/terms/>
            SELECT ?id WHERE {
              ?p pc:partOf+ ?s . ?s dct:identifier "164.502" . ?p dct:identifier ?id .
              ?p pc:cites ?t . ?t dct:identifier "164.506" .
            }"""
        )
    )
    assert "164.502(a)(1)(ii)" in {str(r.id) for r in rows}
    vocab = Graph()
    vocab.parse(Path(kbmod.__file__).resolve().parents[1] / "ontologies" / "privacy-checklist.ttl")
    assert len(vocab) > 50


def test_graphml(shipped: KnowledgeBase) -> None:
    graph = nx.read_graphml(kbmod.builtin_path() / "tree.graphml")
    assert graph.number_of_nodes() == 2274
    kinds = [d["type"] for _, _, d in graph.edges(data=True)]
    assert kinds.count("child") == 2273
    assert kinds.count("cites") == sum(1 for r in shipped.refs if not r.external)
