"""The seams of the reasoning and retrieval layers: the one verdict type and its labels (read
back from this version's logs and older ones), case files in ``ingest/``, the registry of
retrievers, the offline reasoner's replaceable retrieval steps, and the layers' import order."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from privacy_checklist.ingest.cases import CSV_LABELS, LABEL_SYNONYMS, case_label
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.reasoning.llm.prompting import Call
from privacy_checklist.reasoning.verdict import (
    LABELS,
    CitedNorm,
    Label,
    RetrievedNorm,
    Verdict,
)
from privacy_checklist.retrieval.base import NO_FILTERS, Filters, Hit
from privacy_checklist.retrieval.index import HYBRID_LEGS, METHODS, RETRIEVERS, RetrievalIndex
from tests.conftest import REPO

LAYERS = ("ingest", "kg", "retrieval", "reasoning", "app")
CASE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a police "
    "detective without her consent."
)
#: The keys of an offline verdict's JSON, as every earlier version wrote them.
OFFLINE_KEYS = {
    "verdict",
    "probabilities",
    "norms",
    "reasoning",
    "roles",
    "information_types",
    "cues",
    "method",
    "raw",
    "flows",
    "retrieved",
}
#: What an LLM method's verdict adds.
LLM_KEYS = {"llm", "prompt_version", "failure", "retry", "prompts", "answers"}


# --------------------------------------------------------------------------- labels


def test_one_set_of_labels() -> None:
    assert [str(label) for label in LABELS] == list(LABEL_SYNONYMS) == list(CSV_LABELS)
    assert {label.decided for label in Label} == {True, False}
    assert not Label.PARSE_FAILURE.decided and not Label.REQUEST_FAILURE.decided


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("Forbid", Label.PROHIBIT),
        ("not_applicable", Label.NOT_APPLICABLE),
        ("PERMITTED", Label.PERMIT),
        ("Maybe", None),
        (None, None),
    ],
)
def test_a_case_files_label(written: object, label: Label | None) -> None:
    assert Label.of_case(written) == label
    assert case_label(written) == (None if label is None else label.value)


@pytest.mark.parametrize(
    ("record", "label"),
    [
        ({"verdict": "permit"}, Label.PERMIT),
        ({"verdict": "request_failure", "retry": True}, Label.REQUEST_FAILURE),
        ({"verdict": "parse_failure", "retry": True}, Label.REQUEST_FAILURE),  # an older log
        ({"verdict": "parse_failure"}, Label.PARSE_FAILURE),
        ({"verdict": None}, Label.PARSE_FAILURE),
        ({"verdict": "perhaps"}, Label.PARSE_FAILURE),
    ],
)
def test_the_label_of_a_logged_verdict(record: dict, label: Label) -> None:
    assert Label.of_record(record) is label


# --------------------------------------------------------------------------- the verdict


def offline_verdict() -> Verdict:
    return Verdict(
        label=Label.PROHIBIT,
        method="offline",
        probabilities={"permit": 0.1, "prohibit": 0.8, "not_applicable": 0.1},
        norms=[
            CitedNorm(id="164.502(a)", text="A covered entity may not ...", norm_type="prohibit")
        ],
        reasoning=["Applicability: ..."],
        roles={"covered entity": "surgeon"},
        hipaa_types={"protected health information": "medical records"},
        cues=[{"cue": "without_consent", "text": "without her consent", "start": 90, "end": 109}],
        retrieved=[
            RetrievedNorm(id="164.512(f)", score=1.5, method="bm25-rewrite"),
            RetrievedNorm(id="164.502(a)", score=3.0, method="ci-es", via="sender: covered entity"),
        ],
    )


def llm_verdict() -> Verdict:
    return Verdict(
        label=Label.REQUEST_FAILURE,
        method="bm25-content",
        reasoning=["LLM request failed: timeout at http://127.0.0.1:1/v1"],
        raw="(no answer: timeout)",
        retrieved=[],
        llm="llm:scripted",
        calls=[
            Call(
                step="explain",
                messages=[{"role": "user", "content": "Explain"}],
                text=None,
                error="timeout",
            )
        ],
        failure="explain: LLM request failed: timeout at http://127.0.0.1:1/v1",
        details={"overall": None},
    )


def test_the_json_keeps_its_shape() -> None:
    data = offline_verdict().to_json()
    assert set(data) == OFFLINE_KEYS
    assert data["verdict"] == "prohibit" and type(data["verdict"]) is str
    assert data["information_types"] == {"protected health information": "medical records"}
    assert data["norms"] == [
        {"id": "164.502(a)", "text": "A covered entity may not ...", "norm_type": "prohibit"}
    ]
    assert [set(r) for r in data["retrieved"]] == [
        {"id", "score", "method"},
        {"id", "score", "method", "via"},
    ]
    llm = llm_verdict().to_json()
    assert set(llm) == OFFLINE_KEYS | LLM_KEYS | {"overall"}
    assert llm["retry"] is True and llm["retrieved"] == []
    assert llm["answers"] == [
        {"step": "explain", "text": None, "error": "timeout", "cached": False}
    ]
    # no retrieval of its own: no key, as before
    assert "retrieved" not in Verdict(label=Label.PERMIT, method="dp", llm="x").to_json()


@pytest.mark.parametrize("make", [offline_verdict, llm_verdict])
def test_the_json_reads_back(make) -> None:
    verdict = make()
    data = json.loads(json.dumps(verdict.to_json()))
    again = Verdict.from_json(data)
    assert again == verdict
    assert again.to_json() == verdict.to_json()
    logged = {"case_id": "7", "method": verdict.method, "gold": "permit", **data, "inputs": {}}
    assert Verdict.from_json(logged) == verdict  # a log line: the log's own fields left aside


def test_older_logs_read() -> None:
    # the LLM methods' retrieved records said "via" alone, the offline reasoner's "method" alone
    old = {
        "verdict": "permit",
        "method": "ci-es-content",
        "norms": ["164.506(c)", {"id": "164.508(a)"}, 7, {}],
        "retrieved": [
            {"id": "164.506(c)", "score": 2.0, "via": "sender: covered entity"},
            {"id": "164.508(a)", "score": 1.0, "method": "ci-es"},
            "garbage",
        ],
        "probabilities": {"permit": "high"},
        "answers": [{"step": "cot_manual", "text": "permitted"}],
        "reasoning": "one step",
    }
    verdict = Verdict.from_json(old)
    assert [n.id for n in verdict.norms] == ["164.506(c)", "164.508(a)"]
    assert verdict.retrieved == [
        RetrievedNorm(id="164.506(c)", score=2.0, via="sender: covered entity"),
        RetrievedNorm(id="164.508(a)", score=1.0, method="ci-es"),
    ]
    assert verdict.probabilities == {} and verdict.reasoning == ["one step"]
    assert [(c.step, c.text, c.messages) for c in verdict.calls] == [
        ("cot_manual", "permitted", [])
    ]


# --------------------------------------------------------------------------- retrieval seams


def test_the_registry_names_every_method() -> None:
    assert (
        tuple(RETRIEVERS)
        == METHODS
        == (
            "bm25",
            "bm25-text",
            "bm25-rewrite",
            "embedding",
            "ci-es",
            "hybrid",
        )
    )
    assert HYBRID_LEGS == ("bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es")


class Fixed:
    """A retriever that always finds the same paragraph."""

    name = "fixed"

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        return [Hit(node="164.512(f)(1)", score=1.0, method=self.name)][:k]


def test_a_retriever_of_ones_own(shipped: KnowledgeBase, tmp_path: Path) -> None:
    from privacy_checklist.retrieval.hybrid import Fusion
    from privacy_checklist.retrieval.index import hybrid

    retrievers = {
        **RETRIEVERS,
        "fixed": lambda index: Fixed(),
        # equal weights (the shipped fusion weighs bm25 double and knows no "fixed" leg)
        "mix": hybrid(("bm25", "fixed"), fusion=Fusion()),
    }
    index = RetrievalIndex(shipped, tmp_path, embeddings=False, retrievers=retrievers)
    assert [h.node for h in index.search(CASE, "fixed", 3)] == ["164.512(f)(1)"]
    mixed = index.search(CASE, "mix", 5)
    assert any("fixed#1" in h.via for h in mixed)
    with pytest.raises(ValueError, match=r"choose one of .*fixed"):
        index.method("magic")


def test_the_offline_steps_are_replaceable(shipped: KnowledgeBase, tmp_path: Path) -> None:
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner

    asked: list[str] = []

    def norm_search(index, text: str) -> list[Hit]:
        asked.append("norms")
        return [Hit(node="164.512(f)(1)", score=2.0, method="mine")]

    def ci_search(index, text: str) -> list[Hit]:
        asked.append("ci")
        return []

    index = RetrievalIndex(shipped, tmp_path, embeddings=False)
    reasoner = OfflineReasoner(
        shipped, index, fast=True, norm_search=norm_search, ci_search=ci_search
    )
    verdict = reasoner.check(CASE)
    assert asked == ["norms", "ci"]
    assert verdict.retrieved == [RetrievedNorm(id="164.512(f)(1)", score=2.0, method="mine")]


# --------------------------------------------------------------------------- layers


def imported_layers(path: Path) -> set[str]:
    """The layers a module imports (``privacy_checklist.<layer>``), lazily or not."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        for name in names:
            parts = name.split(".")
            if parts[0] == "privacy_checklist" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_layers_to_its_left(layer: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(layer) + 1]) | {"ontologies"}
    for path in sorted((REPO / layer).rglob("*.py")):
        upward = imported_layers(path) - allowed
        assert not upward, f"{path.relative_to(REPO)} imports {sorted(upward)}"
