"""The offline reasoner and the evaluation harness."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.reasoning.evaluation.harness import metrics, read_log, run
from privacy_checklist.reasoning.learned.offline import OfflineReasoner
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.reasoning.verdict import LABELS
from privacy_checklist.retrieval.index import RetrievalIndex
from tests.conftest import DATA

CASE = (
    "Dr. Lee, an orthopedic surgeon at Mercy Hospital, emailed the patient's medical records "
    "to a reporter at the local newspaper without the patient's authorization."
)


@pytest.fixture(scope="module")
def reasoner(shipped: KnowledgeBase, tmp_path_factory) -> OfflineReasoner:
    return OfflineReasoner(
        shipped, RetrievalIndex(shipped, tmp_path_factory.mktemp("idx"), embeddings=False)
    )


def test_verdict_shape(reasoner: OfflineReasoner, shipped: KnowledgeBase) -> None:
    verdict = reasoner.check(CASE)
    assert abs(sum(verdict.probabilities.values()) - 1) < 1e-6
    assert {"health care provider", "covered entity"} <= set(verdict.roles)
    assert "protected health information" in verdict.hipaa_types
    assert any(c["cue"] == "without_consent" for c in verdict.cues)
    assert len(verdict.reasoning) == 4 and verdict.reasoning[0].startswith("Applicability")
    for norm in verdict.norms:
        assert norm.id in shipped.tree
    # the norms retrieval found are kept with the verdict (and so in eval's per-case log)
    retrieved = verdict.to_json()["retrieved"]
    assert {r["method"] for r in retrieved} == {"bm25-rewrite", "ci-es"}
    assert all(r["id"] in shipped.tree for r in retrieved)
    # the 384 embedding weights are reported as one readable share, never as "embedding:17"
    assert "embedding:" not in verdict.reasoning[3]


def test_train_on_synthetic_cases(shipped: KnowledgeBase, shared: Path, tmp_path: Path) -> None:
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.reasoning.learned.offline import train

    cases = read_cases(shared / "cases" / "train_generate_cases_hipaa_applicability.csv")
    by_label = {label: [c for c in cases if c.label == label] for label in ("Permit", "Forbid")}
    by_label["Not Applicable"] = [c for c in cases if c.label == "Not Applicable"]
    chosen = [c for group in by_label.values() for c in group[:8]]
    index = RetrievalIndex(shipped, tmp_path / "idx", embeddings=False)
    out = tmp_path / "model" / "offline.json"
    seen = []
    model = train(
        shipped,
        index,
        chosen[:18],
        chosen[18:],
        out,
        grid=(1.0,),
        folds=2,
        progress=lambda: seen.append(1),
    )
    assert len(seen) == 24 and out.exists() and not out.with_name("offline.json.tmp").exists()
    assert model["trained_on"] == "18 synthetic train + 6 synthetic val cases"
    trained = OfflineReasoner(shipped, index, out)
    # fitted on these very cases, it must reproduce most of their labels
    right = sum(
        trained.check(c.text).label
        == {"Permit": "permit", "Forbid": "prohibit"}.get(c.label, "not_applicable")
        for c in chosen
    )
    assert right >= 18


def test_no_health_context_is_not_applicable(reasoner: OfflineReasoner) -> None:
    verdict = reasoner.check("My neighbour told the landlord that I like football and pizza.")
    assert verdict.label == "not_applicable" and verdict.norms == []


def test_model_provenance() -> None:
    model = json.loads(data_path("offline_model.json").read_text())
    # fitted on the synthetic cases only, chosen by cross-validation on them (never real cases)
    assert "synthetic train" in model["trained_on"] and "synthetic val" in model["trained_on"]
    assert "cross-validation on those synthetic cases" in model["selected_on"]
    assert "real" not in json.dumps({k: model[k] for k in ("trained_on", "selected_on")})
    assert sorted(model["labels"]) == sorted(LABELS)


def test_model_must_match_features(shipped: KnowledgeBase, tmp_path: Path) -> None:
    bad = tmp_path / "model.json"
    model = json.loads(data_path("offline_model.json").read_text())
    bad.write_text(json.dumps({**model, "features": model["features"][:-1]}))
    with pytest.raises(ValueError, match="retrain"):
        OfflineReasoner(shipped, RetrievalIndex(shipped, tmp_path / "idx", embeddings=False), bad)


@dataclass
class FakeCase:
    case_id: str
    text: str
    label: str


def test_run_resumes_and_ignores_a_torn_line(tmp_path: Path) -> None:
    cases = [FakeCase(str(i), f"case {i}", "Permit") for i in range(6)]
    asked: list[str] = []

    def decide(text: str) -> dict:
        asked.append(text)
        return {"verdict": "permit"}

    run(cases[:3], "m", decide, tmp_path)
    with (tmp_path / "m.jsonl").open("a") as handle:
        handle.write('{"case_id": "3", "verd')  # interrupted mid-write
    records = run(cases, "m", decide, tmp_path)
    assert asked == [f"case {i}" for i in (0, 1, 2, 3, 4, 5)]  # 0-2 once, then 3-5
    assert [r["case_id"] for r in records] == [str(i) for i in range(6)]
    assert len(read_log(tmp_path / "m.jsonl")) == 6


def test_run_in_parallel_keeps_every_finished_case(tmp_path: Path) -> None:
    import threading
    import time

    cases = [FakeCase(str(i), f"case {i}", "Forbid") for i in range(8)]
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def decide(text: str) -> dict:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        if text == "case 5":
            raise RuntimeError("endpoint vanished")
        return {"verdict": "prohibit"}

    with pytest.raises(RuntimeError, match="vanished"):
        run(cases, "p", decide, tmp_path, workers=3)
    assert state["peak"] == 3  # three cases at once, never more
    logged = read_log(tmp_path / "p.jsonl")
    assert set(logged) == {str(i) for i in range(8)} - {"5"}  # the others were all kept
    records = run(cases, "p", lambda text: {"verdict": "permit"}, tmp_path, workers=3)
    assert [r["verdict"] for r in records] == ["prohibit"] * 5 + ["permit"] + ["prohibit"] * 2


def test_metrics() -> None:
    records = [
        {"gold": "permit", "verdict": "permit"},
        {"gold": "permit", "verdict": "prohibit"},
        {"gold": "prohibit", "verdict": "prohibit"},
        {"gold": "not_applicable", "verdict": "not_applicable"},
        {"gold": "not_applicable", "verdict": None},  # a parse failure counts as wrong
    ]
    result = metrics(records)
    assert result["n"] == 5 and result["accuracy"] == 0.6 and result["parse_failures"] == 1
    assert result["per_class"]["prohibit"] == {
        "precision": 0.5,
        "recall": 1.0,
        "f1": 0.6667,
        "support": 1,
    }
    assert result["confusion"]["permit"]["prohibit"] == 1


def test_macro_f1_skips_labels_that_never_occur() -> None:
    records = [{"gold": "permit", "verdict": "permit"}] * 3 + [{"gold": "permit", "verdict": "x"}]
    result = metrics(records)
    # prohibit and not applicable appear neither in the gold nor in the answers
    assert result["macro_f1"] == result["per_class"]["permit"]["f1"] == 0.8571


def test_cli_check_and_eval(shared: Path, tmp_path: Path, capsys) -> None:
    assert (
        main(["check", CASE, "--method", "offline", "--json", "--index", str(tmp_path / "idx")])
        == 0
    )
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["verdict"] in LABELS and verdict["method"] == "offline"
    assert main(["check", "   ", "--index", str(tmp_path / "idx")]) == 1
    assert "empty" in capsys.readouterr().err
    out = tmp_path / "run"
    cases = shared / "cases" / "val_generate_cases_hipaa_applicability.csv"
    assert (
        main(
            [
                "eval",
                "--method",
                "offline",
                "--cases",
                str(cases),
                "--out",
                str(out),
                "--limit",
                "6",
                "--json",
                "--index",
                str(tmp_path / "idx"),
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 6 and set(result["per_class"]) == set(LABELS)
    assert (out / "offline.jsonl").exists() and (
        out / "offline.confusion.png"
    ).stat().st_size > 1000
    assert (out / "table.md").read_text().startswith("| method |")


def test_flows_with_spans(reasoner: OfflineReasoner) -> None:
    text = (
        "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a police "
        "detective without her consent."
    )
    flows = reasoner.check(text).flows
    assert len(flows) == 1
    parts = flows[0].parts()
    assert parts["sender"].resolved == "health care provider"
    assert parts["recipient"].resolved == "law enforcement official"
    assert parts["subject"].resolved == "individual"
    assert parts["information"].resolved == "protected health information"
    assert parts["consent"].resolved.startswith("none")
    for part in parts.values():
        assert text[part.start : part.end] == part.text


def test_flows_read_names_abbreviations_and_direction(reasoner: OfflineReasoner) -> None:
    from privacy_checklist.reasoning.reading.flows import sentences

    text = (
        "Jane Roe, a patient at Acme Inc. Clinic, saw her physician, Dr. Smith, in May. "
        "Officer Brown, a police officer, later obtained Jane's lab results from Dr. Smith. "
        "Dr. Smith sent the chart to Mr. Gray, a funeral director."
    )
    assert [s for s, _ in sentences(text)][1].strip().startswith("Officer Brown")  # not at "Dr."
    assert len(sentences(text)) == 3
    extractor = reasoner.flows()
    names = extractor.names(text)
    assert names["Jane"] == "individual" and names["Gray"] == "funeral director"
    obtained, sent = extractor.extract(text)
    # "obtained ... from": the grammatical subject receives, the one after "from" sends
    assert obtained.recipient.text in ("Officer Brown", "police officer")  # its appositive
    assert obtained.recipient.resolved == "law enforcement official"
    assert obtained.sender.text == "Dr Smith" or obtained.sender.text == "Dr. Smith"
    assert obtained.sender.resolved == "health care provider"
    assert sent.recipient.resolved == "funeral director"
    assert sent.subject.text == "Jane Roe" and sent.subject.start == 0  # the case's patient
    for flow in (obtained, sent):
        for part in (flow.sender, flow.recipient, flow.subject):
            assert text[part.start : part.end] == part.text


def test_flow_subject_and_outside_recipient(reasoner: OfflineReasoner) -> None:
    from privacy_checklist.reasoning.reading.flows import OUTSIDE

    text = (
        "Dr. Lee, an orthopedic surgeon at Mercy Hospital, emailed the chart to a reporter at the "
        "local newspaper."
    )
    (flow,) = reasoner.flows().extract(text)
    assert flow.sender.text == "Dr. Lee"  # the sentence's subject, not "Mercy Hospital"
    assert flow.recipient.text == "reporter" and flow.recipient.resolved == OUTSIDE
    assert text[flow.recipient.start : flow.recipient.end] == "reporter"


def test_offline_fast(shipped: KnowledgeBase, tmp_path: Path) -> None:
    fast = OfflineReasoner(
        shipped, RetrievalIndex(shipped, tmp_path / "idx", embeddings=False), fast=True
    )
    verdict = fast.check(CASE)
    assert verdict.method == "offline-fast" and verdict.label.value == max(
        verdict.probabilities, key=verdict.probabilities.__getitem__
    )
    assert not any(name.startswith("embedding:") for name in fast.features.names)
    model = json.loads(data_path("offline_fast_model.json").read_text())
    assert "cross-validation on those synthetic cases" in model["selected_on"]


@pytest.mark.xfail(
    strict=True,
    reason="the offline models read a surgeon emailing records to a newspaper without "
    "authorization as permitted (issue 27: readers that carry over); strict: a fix fails this "
    "mark, so it is taken off",
)
@pytest.mark.parametrize("fast", [False, True])
def test_the_offline_reasoners_on_a_clear_prohibition(
    shipped: KnowledgeBase, tmp_path: Path, fast: bool
) -> None:
    method = OfflineReasoner(
        shipped, RetrievalIndex(shipped, tmp_path / "idx", embeddings=False), fast=fast
    )
    assert method.check(CASE).label == "prohibit"


def test_the_checklist_on_a_clear_prohibition(shipped: KnowledgeBase) -> None:
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    verdict = ChecklistReasoner(shipped).check(CASE)
    assert verdict.label == "prohibit" and verdict.method == "checklist"


def test_the_checklist_holds_its_regression_set(
    shared: Path, shipped, tmp_path: Path, capsys
) -> None:
    """The checklist on the 270 short narratives it was developed against (in-sample: a floor
    against regressions, not a result), as the guard has its development drafts: its rules
    alone, and the default method, whose learned layer (fitted on many writers, this set one of
    them) weighs them with the text."""
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    cases = DATA / "checklist_regression.csv"
    # the rule reader alone on the set it was written against; with the learned condition
    # reader (fitted on other writers' prose) the checklist loses a little here and gains on
    # writers it has not seen (the Results page: 0.531 -> 0.584 out of fold), so its floor is
    # a little lower
    rules = ChecklistReasoner(shipped, blend=False, conditions=False)
    read = [(rules.check(c.text).label.value, c.expected) for c in read_cases(cases)]
    assert sum(a == b for a, b in read) / len(read) >= 0.92
    alone = ChecklistReasoner(shipped, blend=False)
    read = [(alone.check(c.text).label.value, c.expected) for c in read_cases(cases)]
    assert sum(a == b for a, b in read) / len(read) >= 0.9
    argv = ["eval", "--cases", str(cases), "--method", "checklist", "--out", str(tmp_path)]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 270
    assert result["accuracy"] >= 0.85 and result["macro_f1"] >= 0.84
    assert result["per_class"]["prohibit"]["f1"] >= 0.85
