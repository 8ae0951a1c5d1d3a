"""The learned condition reader (issue 27 §3): the shipped model reads a condition stated true,
stated false or not stated from sentences it was not fitted on, says which sentence, and is
taken beside the rule reader's facts without replacing what the roles decide."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from privacy_checklist.reasoning.learned import conditions
from privacy_checklist.reasoning.learned.conditions import (
    ConditionModelError,
    ConditionReader,
    merge,
    reads_of,
    shipped,
)
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.text import data_path


@pytest.fixture(scope="module")
def reader() -> ConditionReader:
    return shipped()


# written for this test (not in the corpus): each states one condition one way
STATED = [
    (
        "The hospital mailed her lab results to her employer. She had signed a written "
        "authorization allowing exactly that release.",
        "authorization",
        True,
    ),
    (
        "The hospital mailed her lab results to her employer. Nobody ever asked her to sign "
        "an authorization, and she never gave one.",
        "authorization",
        False,
    ),
    (
        "A detective phoned the clinic asking about a patient. The clinic gave him the "
        "records after he showed a court order signed by a judge.",
        "court_order",
        True,
    ),
    (
        "Records showing the patient's HIV status were mailed to a drug company so it could "
        "advertise its new medicine to him, and the clinic was paid for the list.",
        "sale_of_phi",
        True,
    ),
]


@pytest.mark.parametrize(("text", "kind", "value"), STATED)
def test_reads_a_stated_condition_and_its_sentence(
    reader: ConditionReader, text: str, kind: str, value: bool
) -> None:
    read = reader.read(text)[kind]
    assert read.value is value
    # the sentence that says it is the evidence
    assert read.evidence in text and read.evidence == text[read.start : read.end]


def test_the_negated_fact_reads_the_other_way(reader: ConditionReader) -> None:
    said = reader.read(STATED[0][0])["authorization"]
    denied = reader.read(STATED[1][0])["authorization"]
    assert said.value is True and denied.value is False


def test_a_condition_not_mentioned_is_not_stated(reader: ConditionReader) -> None:
    read = reader.read("The nurse faxed the discharge summary to the patient's new doctor.")
    assert read["court_order"].value is None
    assert read["psychotherapy_notes"].value is None


def test_reads_of_takes_the_likeliest_sentence_and_the_threshold() -> None:
    text = "One. Two. Three."
    spans = [(0, 4), (5, 9), (10, 16)]
    probs = np.zeros((3, 2, 3), dtype=np.float32)
    probs[:, :, 0] = 1.0
    probs[1, 0] = [0.2, 0.1, 0.7]  # kind a: stated false in "Two."
    probs[2, 1] = [0.6, 0.3, 0.1]  # kind b: not likely enough
    reads = reads_of(text, spans, probs, ["a", "b"], threshold=0.5)
    assert reads["a"].value is False and reads["a"].evidence == "Two."
    assert reads["b"].value is None
    assert reads_of(text, spans, probs, ["a", "b"], threshold=0.3)["b"].value is True


def test_merge_fills_unknowns_keeps_roles_and_overrides_only_when_sure() -> None:
    flow = Flow(
        facts={
            "authorization": Fact("authorization", False, source="parse"),
            "for_treatment": Fact("for_treatment", True, source="role"),
        }
    )
    probs = np.zeros((1, 3, 3), dtype=np.float32)
    probs[0, 0] = [0.0, 1.0, 0.0]  # authorization: true, sure
    probs[0, 1] = [0.0, 0.0, 1.0]  # for_treatment: false, sure (the role decides it)
    probs[0, 2] = [0.2, 0.8, 0.0]  # court_order: true (unknown to the rules)
    reads = reads_of("One.", [(0, 4)], probs, ["authorization", "for_treatment", "court_order"])
    (merged,) = merge([flow], reads, override=0.9)
    assert merged.facts["authorization"].value is True
    assert merged.facts["authorization"].source == "learned"
    assert merged.facts["for_treatment"].value is True  # kept
    assert merged.facts["court_order"].value is True
    (kept,) = merge([flow], reads, override=2.0)  # never sure enough
    assert kept.facts["authorization"].value is False


def test_a_model_for_another_graph_is_refused(tmp_path) -> None:
    head = tmp_path / conditions.HEAD_NAME
    with np.load(data_path(conditions.HEAD_NAME), allow_pickle=False) as saved:
        meta = str(saved["meta"]).replace('"graph": "', '"graph": "0')
        np.savez(head, weights=saved["weights"], bias=saved["bias"], meta=np.array(meta))
    with pytest.raises(ConditionModelError, match="another graph"):
        ConditionReader(data_path(conditions.GRAPH_NAME), head)


def test_a_missing_model_is_one_line(tmp_path) -> None:
    with pytest.raises(ConditionModelError, match="pcheck reasoner train --method conditions"):
        ConditionReader(tmp_path / "none.onnx", tmp_path / "none.npz")


def test_flows_without_facts_are_given_them_unchanged_otherwise() -> None:
    flow = Flow()
    reads = reads_of("One.", [(0, 4)], np.array([[[1.0, 0.0, 0.0]]], dtype=np.float32), ["a"])
    assert merge([flow], reads) == [flow]
    assert replace(flow) == flow


@pytest.fixture(scope="module")
def reasoners():
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    kb = kbmod.load(None)
    return (
        # the rule reader's flows, with the learned condition reader and without it
        ChecklistReasoner(kb, blend=False, case_flow=False),
        ChecklistReasoner(kb, blend=False, conditions=False),
    )


def test_the_checklist_decides_on_learned_facts_and_says_so(reasoners) -> None:
    # a "de-identified" dataset that still holds birth dates: the rules take it as
    # de-identified (not covered); the learned reader reads the condition false, and the
    # report says who read it
    on, off = reasoners
    text = (
        "A hospital posted a 'de-identified' research dataset online that still showed each "
        "patient's full date of birth, five-digit ZIP code and admission date; no expert had "
        "reviewed it."
    )
    assert off.check(text).label.value == "not_applicable"
    verdict = on.check(text)
    assert verdict.label.value == "prohibit"
    flow = verdict.checklist.deciding.flow
    learned = {k: f for k, f in flow.facts.items() if f.source == "learned"}
    assert learned["de_identified"].value is False
    assert "learned reader" in learned["de_identified"].evidence
    assert on.settings()["checklist"] != off.settings()["checklist"]


def test_the_learned_reader_helps_on_a_set_it_was_not_fitted_on(reasoners) -> None:
    # dev_c (the project's own narratives, which the rules were written against; not in the
    # corpus the reader learned from): more verdicts put right than wrong
    from privacy_checklist.ingest.cases import read_cases
    from tests.conftest import REPO

    on, off = reasoners
    better = worse = 0
    for case in read_cases(REPO / "tests" / "data" / "checklist_dev_c.csv"):
        a, b = on.check(case.text).label.value, off.check(case.text).label.value
        better += a != b and a == case.expected
        worse += a != b and b == case.expected
    assert better >= 5 and better > worse


def test_pcheck_check_without_the_model_is_one_line(monkeypatch, capsys) -> None:
    from privacy_checklist.app.cli import main

    monkeypatch.setattr(conditions, "HEAD_NAME", "no_such_reader.npz")
    shipped.cache_clear()
    try:
        code = main(["check", "Dr. Lee emailed the patient's records to a reporter."])
    finally:
        shipped.cache_clear()
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert err.splitlines() == [
        "pcheck check: no_such_reader.npz: the learned condition reader is missing; train it "
        "with pcheck reasoner train --method conditions"
    ]
