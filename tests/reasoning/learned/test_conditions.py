"""The learned condition reader (issue 27 §3): the shipped model reads a condition stated true,
stated false or not stated from sentences it was not fitted on, says which sentence, and is
taken beside the rule reader's facts without replacing what the roles decide."""

from __future__ import annotations

import json
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


# the acceptance check's probes (written for it, not in the corpus): each states one condition
# one way, or none
PROBES = conditions.probes()
STATED = [p for p in PROBES if p.value is not None]


@pytest.mark.parametrize("probe", STATED, ids=lambda p: f"{p.kind}-{p.value}")
def test_reads_a_stated_condition_and_its_sentence(
    reader: ConditionReader, probe: conditions.Probe
) -> None:
    read = reader.read(probe.text)[probe.kind]
    assert read.value is probe.value
    # the sentence that says it is the evidence
    assert read.evidence in probe.text and read.evidence == probe.text[read.start : read.end]


def test_the_negated_fact_reads_the_other_way(reader: ConditionReader) -> None:
    given, denied = (p for p in STATED if p.kind == "authorization")
    assert given.value is True and denied.value is False
    assert reader.read(given.text)["authorization"].value is True
    assert reader.read(denied.text)["authorization"].value is False


def test_a_condition_not_mentioned_is_not_stated(reader: ConditionReader) -> None:
    unstated = [p for p in PROBES if p.value is None]
    assert unstated
    for probe in unstated:
        assert reader.read(probe.text)[probe.kind].value is None


def test_the_shipped_reader_passes_its_acceptance_check(reader: ConditionReader) -> None:
    assert conditions.probe_failures(reader) == []


def test_the_acceptance_check_catches_a_reader_that_reads_true_as_false(tmp_path) -> None:
    """A layer with authorization's true and false swapped reads a signed authorization as a
    missing one: the check names it (the trainer refuses to write such a reader)."""
    head = tmp_path / conditions.HEAD_NAME
    with np.load(data_path(conditions.HEAD_NAME), allow_pickle=False) as saved:
        weights, bias, meta = saved["weights"].copy(), saved["bias"].copy(), saved["meta"]
    kinds = json.loads(str(meta))["kinds"]
    at = kinds.index("authorization") * 3
    weights[:, [at + 1, at + 2]] = weights[:, [at + 2, at + 1]]
    bias[[at + 1, at + 2]] = bias[[at + 2, at + 1]]
    np.savez(head, weights=weights, bias=bias, meta=meta)
    swapped = ConditionReader(data_path(conditions.GRAPH_NAME), head)
    failures = conditions.probe_failures(swapped)
    assert len(failures) == 2
    assert all(f.startswith("authorization read ") for f in failures)
    assert "read false" in failures[0] and "not true" in failures[0]


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
    conditions.forget()
    try:
        code = main(["check", "Dr. Lee emailed the patient's records to a reporter."])
    finally:
        conditions.forget()
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert err.splitlines() == [
        "pcheck check: no_such_reader.npz: the learned condition reader is missing; train it "
        "with pcheck reasoner train --method conditions"
    ]


def test_training_batches_take_every_sentence_once_and_group_like_lengths() -> None:
    import random

    from privacy_checklist.reasoning.learned.condition_fit import BUCKET, batches

    rng = random.Random(3)
    lengths = [rng.choice([8, 12, 20, 60, 120]) + rng.randrange(4) for _ in range(3 * 32 * BUCKET)]
    plan = batches(lengths, 32, random.Random(5))
    assert sorted(i for b in plan for i in b) == list(range(len(lengths)))
    assert all(len(b) == 32 for b in plan)
    # a batch pads to its longest sentence: like lengths together pad far less than at random
    padded = sum(len(b) * max(lengths[i] for i in b) for b in plan)
    shuffled = list(range(len(lengths)))
    random.Random(5).shuffle(shuffled)
    at_random = sum(
        32 * max(lengths[i] for i in shuffled[a : a + 32]) for a in range(0, len(shuffled), 32)
    )
    assert padded < 0.6 * at_random
    # and the batches come in no length order, nor twice the same
    firsts = [lengths[b[0]] for b in plan]
    assert firsts != sorted(firsts)
    assert plan != batches(lengths, 32, random.Random(6))


def test_pair_weights_balance_a_kind_and_drop_a_restatement() -> None:
    from privacy_checklist.reasoning.learned.condition_fit import Rows, pair_weights

    # kind 0 stated false in three narratives and true in one; kind 1 never stated
    labels = np.array(
        [[2, 0], [0, 0], [2, 0], [2, 0], [1, 0], [0, 0]],
        dtype=np.int64,
    )
    narratives = ["a", "a", "b", "c", "d", "e"]
    rows = Rows([f"s{i}" for i in range(6)], labels, ["w"] * 6, narratives)
    w = pair_weights(rows, stated_weight=4.0)
    assert w[4, 0] == pytest.approx(4.0 * np.sqrt(4 / 2))  # the rare true weighs more
    assert w[0, 0] == pytest.approx(4.0 * np.sqrt(4 / 6))  # the common false less
    # "a" states kind 0 in its first sentence: its second is not taken as not stating it
    assert w[1, 0] == 0.0
    assert w[1, 1] == 1.0 and w[5, 0] == 1.0  # not stated anywhere in its narrative
