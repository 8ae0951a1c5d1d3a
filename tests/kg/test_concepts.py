"""ConceptGraph's navigation index, kept up to date edge by edge while a graph is built."""

from __future__ import annotations

from privacy_checklist.kg.concepts import Concept, ConceptGraph


def test_index_follows_links_and_matches_a_fresh_one() -> None:
    graph = ConceptGraph("roles")
    for name in "abcdefg":
        graph.add(Concept(name, name, "regulatory"))
    assert graph.parents("a") == []  # the index exists before the first edge
    for child, parent in [("a", "b"), ("b", "c"), ("a", "d"), ("e", "c"), ("f", "a")]:
        graph.link(child, parent)
        assert [e.parent for e in graph.parents(child)][-1] == parent
    graph.link("a", "b")  # the same edge again: nothing new
    graph.link("c", "f")  # would close a cycle c -> f -> a -> b -> c: refused
    graph.add(Concept("h", "h", "wordnet"))  # a new node keeps the index
    graph.link("h", "g")
    assert len(graph.edges) == 6
    fresh = ConceptGraph.from_json(graph.to_json())
    for node in graph.nodes:
        assert graph.parents(node) == fresh.parents(node), node
        assert graph.children(node) == fresh.children(node), node
    assert graph.ancestors("f") == {"a", "b", "c", "d"}
    assert graph.path_up("f", lambda n: n == "c") == ["f", "a", "b", "c"]
