"""Turtle and GraphML written directly (kg.turtle, kg.graphml): valid, read back to the same
graph, and byte for byte what rdflib's and networkx's writers write."""

from __future__ import annotations

import io
from pathlib import Path

import networkx as nx
import pytest
from rdflib import Graph

from privacy_checklist.kg import graphml, turtle
from privacy_checklist.kg.kb import KnowledgeBase

PC = turtle.PREFIXES["pc"]
NASTY = 'a "quoted" \\ back\\slash, tab\t, é ü 中, <angle> & amp'


def nasty_triples() -> list[turtle.Triple]:
    """Literals rdflib quotes in every way it knows, IRIs in and out of the prefixes."""
    s = "https://w3id.org/privacy-checklist/hipaa/160.103(Covered%20entity)(1)"
    return [
        (s, turtle.RDF_TYPE, turtle.IRI(PC + "Paragraph")),
        (s, turtle.RDFS_LABEL, NASTY),
        (s, PC + "text", 'two\nlines ending in a quote"'),
        (s, PC + "text", 'three """ quotes\r\nand a CR'),
        (s, PC + "text", 'ends with an escaped quote \\"\nhere'),
        (s, PC + "text", "carriage\rreturn"),
        (s, PC + "start", 7),
        (s, PC + "start", 12),
        (s, PC + "external", False),
        (s, PC + "partOf", turtle.IRI("https://w3id.org/privacy-checklist/hipaa/160.103")),
        (s, PC + "partOf", turtle.IRI("http://wordnet-rdf.princeton.edu/wn30/10679174-n")),
        (s, PC + "partOf", turtle.IRI(PC + "Thing.with.dots")),
        (s, turtle.PREFIXES["skos"] + "altLabel", "b"),
        (s, turtle.PREFIXES["skos"] + "altLabel", "a"),
        (s, turtle.PREFIXES["skos"] + "altLabel", "a"),  # a duplicate counts once
        (
            "https://w3id.org/privacy-checklist/hipaa/160.103",
            turtle.RDF_TYPE,
            turtle.IRI(PC + "Section"),
        ),
        (
            "http://example.org/x",
            PC + "cites",
            turtle.IRI("https://w3id.org/privacy-checklist/hipaa/160.103"),
        ),
        ("http://example.org/x", PC + "text", "x"),
        ("http://example.org/x", PC + "value", turtle.IRI("http://example.org/x")),
    ]


def rdflib_bytes(graph: Graph) -> bytes:
    out = io.BytesIO()
    graph.serialize(destination=out, format="turtle")
    return out.getvalue()


def test_turtle_is_what_rdflib_writes() -> None:
    triples = nasty_triples()
    graph = turtle.to_rdflib(triples, {"pc": PC, "skos": turtle.PREFIXES["skos"]})
    assert turtle.turtle(triples).encode("utf-8") == rdflib_bytes(graph)


def test_turtle_reads_back_to_the_same_graph() -> None:
    triples = nasty_triples()
    parsed = Graph().parse(data=turtle.turtle(triples), format="turtle")
    assert set(parsed) == set(turtle.to_rdflib(triples))
    assert len(parsed) == len(triples) - 1  # the duplicate


def test_turtle_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="not an IRI"):
        turtle.turtle([("http://example.org/a b", PC + "p", "x")])
    with pytest.raises(TypeError, match="not float"):
        turtle.turtle([("http://example.org/a", PC + "p", 1.5)])


def test_shipped_graphs_turtle_reads_back(shipped: KnowledgeBase, tmp_path: Path) -> None:
    """The role and attribute graphs as our writer writes them parse back, with rdflib, into
    the graphs ``to_rdf`` builds (no blank nodes: equal triple sets are isomorphic graphs);
    the role graph's file is byte for byte rdflib's own serialization."""
    for graph in (shipped.roles, shipped.attributes):
        path = tmp_path / f"{graph.name}.ttl"
        turtle.write(path, graph.triples())
        assert set(Graph().parse(path, format="turtle")) == set(graph.to_rdf()), graph.name
    assert (tmp_path / "roles.ttl").read_bytes() == rdflib_bytes(shipped.roles.to_rdf())


def test_tree_turtle_reads_back(built: KnowledgeBase, tmp_path: Path) -> None:
    """tree.ttl as written by a save parses back into ``to_rdf``'s graph."""
    path = tmp_path / "tree.ttl"
    turtle.write(path, built.triples())
    assert set(Graph().parse(path, format="turtle")) == set(built.to_rdf())


def nasty_multigraph() -> nx.MultiDiGraph:
    name = "a&<>\"'\n\r\tb é"
    graph = nx.MultiDiGraph(name=name)
    graph.add_node(name, t=name, i=3, f=0.5, b=False, e="")
    graph.add_node("m")
    graph.add_node(name, t="updated")
    graph.add_edge("m", name)
    graph.add_edge("m", name, w=1, exact=True)
    graph.add_edge("new", "m", w=2)  # nodes an edge names are added bare
    return graph


def networkx_bytes(graph: nx.Graph, tmp_path: Path) -> bytes:
    path = tmp_path / "nx.graphml"
    nx.write_graphml(graph, path)
    return path.read_bytes()


def test_graphml_is_what_networkx_writes(tmp_path: Path) -> None:
    graph = nasty_multigraph()
    ours = graphml.graphml(
        graph.graph["name"],
        list(graph.nodes(data=True)),
        list(graph.edges(data=True)),
        multigraph=True,
    )
    assert ours.encode("utf-8") == networkx_bytes(graph, tmp_path)
    simple = nx.DiGraph(name="g")
    rows = [("a", "b", {"r": "x"}), ("a", "c", {}), ("a", "b", {"s": "y"})]  # repeated: merged
    simple.add_edges_from(rows)
    assert graphml.graphml("g", [], rows).encode("utf-8") == networkx_bytes(simple, tmp_path)


def test_graphml_refuses_what_xml_cannot_hold() -> None:
    with pytest.raises(ValueError, match="XML cannot hold"):
        graphml.graphml("g", [("a", {"t": "bell\x07"})], [])
    with pytest.raises(TypeError, match="no NoneType"):
        graphml.graphml("g", [("a", {"t": None})], [])


def test_graphml_of_the_graphs_is_networkx_s(shipped: KnowledgeBase, tmp_path: Path) -> None:
    """The shipped role graph and tree as our writer writes them: networkx's bytes, and read
    back by networkx into the same graphs."""
    nodes, edges = shipped.roles.rows()
    ours = graphml.graphml("roles", nodes, edges)
    assert ours.encode("utf-8") == networkx_bytes(shipped.roles.to_networkx(), tmp_path)
    path = tmp_path / "tree.graphml"
    graphml.write(path, "HIPAA regulation tree", *shipped.rows(), multigraph=True)
    assert path.read_bytes() == networkx_bytes(shipped.to_networkx(), tmp_path)
    read, made = nx.read_graphml(path), shipped.to_networkx()
    assert dict(read.nodes(data=True)) == dict(made.nodes(data=True))
    assert list(read.edges(keys=True, data=True)) == list(made.edges(keys=True, data=True))
