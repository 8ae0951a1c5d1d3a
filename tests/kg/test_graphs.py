"""The role graph and the attribute graph: building, resolving, saving, querying."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdflib import Graph

from privacy_checklist.app.cli import main
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.attributes import build_attribute_graph, information_type
from privacy_checklist.kg.concepts import PhraseError
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.kg.labels import LabelFileError, evaluate, read_labels
from privacy_checklist.kg.roles import build_role_graph
from tests.conftest import DATA


@pytest.fixture(scope="module")
def roles(shipped: KnowledgeBase):
    return shipped.role_resolver(embeddings=False)


@pytest.fixture(scope="module")
def attributes(shipped: KnowledgeBase):
    return shipped.attribute_resolver(embeddings=False)


def test_shipped_graphs_equal_a_fresh_build(shipped: KnowledgeBase, shared: Path) -> None:
    fresh_roles = build_role_graph(shipped.tree, shipped.definitions)
    assert fresh_roles.to_json() == shipped.roles.to_json(), "stale roles.json: run make kb"
    fresh_attributes = build_attribute_graph(shipped.tree, shared / "ontologies")
    assert fresh_attributes.to_json() == shipped.attributes.to_json(), "stale attributes.json"


def test_sizes_at_least_the_papers(shipped: KnowledgeBase) -> None:
    stats = shipped.stats()
    assert stats["roles"]["nodes"] >= 211 and stats["roles"]["edges"] >= 485
    assert stats["attributes"]["nodes"] >= 296 and stats["attributes"]["edges"] >= 318


def test_regulatory_roles_and_inclusions(shipped: KnowledgeBase) -> None:
    graph = shipped.roles
    regulatory = {n.name: n for n in graph.nodes.values() if n.kind == "regulatory"}
    for name in (
        "covered entity",
        "health plan",
        "health care provider",
        "health care clearinghouse",
        "business associate",
        "subcontractor",
        "workforce",
        "individual",
        "personal representative",
        "family member",
        "public health authority",
        "health oversight agency",
        "law enforcement official",
        "correctional institution",
        "coroner",
        "medical examiner",
        "funeral director",
        "organ procurement organization",
        "employer",
        "plan sponsor",
        "researcher",
        "institutional review board",
        "privacy board",
    ):
        assert name in regulatory, name
        assert regulatory[name].source in shipped.tree  # the paragraph that names it
    edges = {(e.child, e.parent): e.source for e in graph.edges}
    assert edges[("role:health plan", "role:covered entity")] == "160.103(Covered entity)(1)"
    assert (
        edges[("role:health care provider", "role:covered entity")] == "160.103(Covered entity)(3)"
    )
    assert (
        edges[("role:health maintenance organization", "role:health plan")]
        == "160.103(Health plan)(1)(iii)"
    )
    assert ("role:medicaid", "role:health plan") in edges
    assert ("role:subcontractor", "role:business associate") in edges
    # the exclusions of 160.103(Business associate)(4) are no inclusions
    assert ("role:health care provider", "role:business associate") not in edges
    # roles the text yields beyond the seeds
    assert "hybrid entity" in regulatory and "health care component" in regulatory


@pytest.mark.parametrize(
    ("phrase", "role", "path"),
    [
        (
            "surgeon",
            "health care provider",
            [
                "surgeon",
                "doctor",
                "medical practitioner",
                "health professional",
                "health care provider",
                "covered entity",
            ],
        ),
        ("the treating orthopedic surgeon", "health care provider", None),
        (
            "Blue Cross of Illinois",
            "health insurance issuer",
            [
                "Blue Cross of Illinois",
                "blue cross",
                "health insurance issuer",
                "health plan",
                "covered entity",
            ],
        ),
        ("City of Plainfield police department", "law enforcement official", None),
        ("her husband's", "family member", None),
        ("nurses", "health care provider", None),
        ("the county sheriff", "law enforcement official", None),
        ("a pharmacist at Walgreens", "health care provider", None),
        ("the patient's legal guardian", "personal representative", None),
        ("an HMO", "health maintenance organization", None),
        ("Medicaid", "medicaid", None),
        ("state prison", "correctional institution", None),
        ("the billing company's coding vendor", "subcontractor", None),
    ],
)
def test_resolve_role(roles, phrase: str, role: str, path: list[str] | None) -> None:
    matches = roles.resolve(phrase)
    assert matches, phrase
    top = matches[0]
    if role == "medicaid":  # a program the regulation lists: reported as the role it is in
        assert top.target == "health plan" and "medicaid" in top.path
        return
    assert top.target == role
    assert top.path[0] == phrase
    assert top.path[-1] in ("covered entity", "business associate", top.target, "individual")
    if path is not None:
        assert list(top.path) == path
    assert 0 < top.score <= 1


@pytest.mark.parametrize(
    "phrase",
    [
        "a journalist",
        "the landlord",
        "her neighbor",
        "a real estate agent",
        "a life insurance company",
        "",
        "   ",
        "!!!",
        "x" * 10_000,
        "le voisin de palier",
        "δημοσιογράφος",
        "12345",
    ],
)
def test_no_role(roles, phrase: str) -> None:
    assert roles.resolve(phrase) == []


def test_non_text_is_an_error(roles, attributes) -> None:
    with pytest.raises(PhraseError, match="expected text"):
        roles.resolve(None)
    with pytest.raises(PhraseError):
        attributes.resolve(b"bytes")


@pytest.mark.parametrize(
    ("phrase", "kind"),
    [
        ("surgery operative report", "protected health information"),
        ("her HIV test results", "protected health information"),
        ("mammogram images", "protected health information"),
        ("psychotherapy notes", "psychotherapy notes"),
        ("the therapist's separate session notes", "psychotherapy notes"),
        ("BRCA1 genetic test results", "genetic information"),
        ("her mother's history of breast cancer", "genetic information"),
        ("a de-identified dataset", "de-identified information"),
        ("a limited data set", "limited data set"),
        ("favorite movie", "none"),
        ("salary history", "none"),
        ("his credit score", "none"),
    ],
)
def test_resolve_attribute(attributes, phrase: str, kind: str) -> None:
    matches = attributes.resolve(phrase)
    assert information_type(matches[0] if matches else None) == kind
    if kind == "protected health information":
        assert matches[0].path[-1] == "protected health information"


def test_operative_report_path(attributes) -> None:
    top = attributes.resolve("surgery operative report")[0]
    assert list(top.path) == [
        "surgery operative report",
        "surgery",
        "health record",
        "medical health",
        "health information",
        "individually identifiable health information",
        "protected health information",
    ]


def test_dpv_versions_merged_with_both_iris(shipped: KnowledgeBase) -> None:
    record = shipped.attributes.nodes["dpv:HealthRecord"]
    assert "https://w3id.org/dpv/dpv-owl/dpv-pd#HealthRecord" in record.iris
    assert "https://w3id.org/dpv/pd#HealthRecord" in record.iris
    assert shipped.attributes.nodes["oppo:Medication"].kind == "oppo"


def test_sparql_every_attribute_under_phi() -> None:
    graph = Graph()
    graph.parse(kbmod.builtin_path() / "attributes.ttl")
    rows = graph.query(
        """
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        SELECT DISTINCT ?label WHERE {
          ?phi rdfs:label "protected health information" .
          ?a skos:broader+ ?phi . ?a rdfs:label ?label .
        }"""
    )
    labels = {str(r.label) for r in rows}
    assert {
        "health record",
        "medical health",
        "genetic information",
        "psychotherapy notes",
        "health personal data",
    } <= labels
    assert "favourite music" not in labels and "salary" not in labels
    assert len(labels) > 100


@pytest.mark.parametrize(
    ("graph", "name", "floor"),
    [
        ("roles", "role_phrases.tsv", 0.90),
        ("roles", "heldout_role_phrases.tsv", 0.88),
        ("attributes", "attribute_phrases.tsv", 0.85),
        ("attributes", "heldout_attribute_phrases.tsv", 0.85),
    ],
)
def test_labeled_lists(roles, attributes, graph: str, name: str, floor: float) -> None:
    rows = read_labels(DATA / name)
    assert len(rows) >= 100
    assert sum(1 for r in rows if r.expected == ("none",)) >= 20
    resolver = roles if graph == "roles" else attributes
    label_of = (lambda m: m.target if m else "none") if graph == "roles" else information_type
    result = evaluate(resolver, rows, label_of)
    assert result["accuracy"] >= floor, result["misses"][:10]


def test_label_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("# comment\nsurgeon health care provider\n")
    with pytest.raises(LabelFileError, match=r"bad\.tsv:2"):
        read_labels(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(LabelFileError, match="UTF-8"):
        read_labels(bad)


def test_embedding_fallback(shipped: KnowledgeBase) -> None:
    """An unknown head word: the lexicon finds nothing, embedding similarity does."""
    assert shipped.role_resolver(embeddings=False).resolve("the policedept") == []
    with_model = shipped.role_resolver(embeddings=True).resolve("the policedept")
    assert with_model and with_model[0].via == "embedding"
    assert with_model[0].target == "law enforcement official"
    assert shipped.role_resolver(embeddings=True).resolve("xqzv plorb") == []


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_lines(capsys, tmp_path: Path) -> None:
    phrases = tmp_path / "phrases.txt"
    phrases.write_text("the treating surgeon\n\na journalist\n")
    code, out, _ = run(
        capsys, "roles", "resolve", "--file", str(phrases), "--json", "--no-embeddings"
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["phrase"] for line in lines] == [
        "the treating surgeon",
        "a journalist",
    ]
    assert lines[0]["matches"][0]["role"] == "health care provider"
    assert lines[0]["matches"][0]["path"][-2:] == ["health care provider", "covered entity"]
    assert lines[1]["matches"] == []
    code, out, _ = run(
        capsys, "attributes", "resolve", "--json", "--no-embeddings", "surgical operative report"
    )
    match = json.loads(out)["matches"][0]
    assert match["information_type"] == "protected health information" and "attribute" in match


def test_cli_bad_input(capsys, tmp_path: Path) -> None:
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\x00\x01\xff")
    code, _, err = run(capsys, "roles", "resolve", "--file", str(binary))
    assert code == 1 and err.count("\n") == 1 and "not UTF-8" in err
    code, _, err = run(capsys, "attributes", "resolve")
    assert code == 1 and "no phrase given" in err
    code, out, _ = run(capsys, "roles", "resolve", "--no-embeddings", "   ")
    assert code == 0 and "no match" in out


def test_cli_evaluate(capsys) -> None:
    code, out, _ = run(
        capsys,
        "roles",
        "evaluate",
        "--labels",
        str(DATA / "role_phrases.tsv"),
        "--json",
        "--no-embeddings",
    )
    result = json.loads(out)
    assert code == 0 and result["n"] >= 130 and result["accuracy"] >= 0.9


def test_stats_json_has_graphs(capsys) -> None:
    _, out, _ = run(capsys, "stats", "--json")
    stats = json.loads(out)
    assert set(stats["roles"]) == {"nodes", "edges"} and set(stats["attributes"]) == {
        "nodes",
        "edges",
    }
