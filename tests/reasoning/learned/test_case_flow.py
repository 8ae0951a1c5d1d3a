"""The learned case-flow reader (issue 27 §3, §4): the shipped model reads who sends the
information a narrative turns on, to whom, and what, from the sentence vectors and the rule
reader's roles; the checklist, asked to, decides that flow with the learned conditions, says
so, and keeps the rule reader's flows in its report; a model for another encoder or a missing
one is refused with one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from privacy_checklist.reasoning.learned import case_flow as cfl
from privacy_checklist.reasoning.learned.conditions import shipped as condition_reader
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.text import data_path


@pytest.fixture(scope="module")
def reader() -> cfl.CaseFlowReader:
    return cfl.shipped(condition_reader().encoder.digest)


@pytest.fixture(scope="module")
def rules() -> ChecklistReasoner:
    from privacy_checklist.kg import kb as kbmod

    return ChecklistReasoner(kbmod.load(None), conditions=False)


def read(reader: cfl.CaseFlowReader, text: str, rules: ChecklistReasoner) -> cfl.CaseFlow:
    assert rules.reader is not None
    return reader.read(condition_reader().vectors(text)[1], rules.reader.read(text).flows)


PHI_TYPE = "protected health information"
# written for this test (not in the corpus)
PLAN_TO_INSURER = (
    "Our health plan's claims unit sent the member's diagnosis codes and the dates of her "
    "surgery to a reinsurance company so the plan could be paid back for the claim."
)
HOSPITAL_TO_POLICE = (
    "A detective came to the emergency department asking about a man treated for a gunshot "
    "wound. The charge nurse gave the detective his name, the time he arrived and a "
    "description of the wound."
)


def test_reads_the_parts_of_the_flow_a_case_turns_on(
    reader: cfl.CaseFlowReader, rules: ChecklistReasoner
) -> None:
    police = read(reader, HOSPITAL_TO_POLICE, rules)
    assert police.recipient[0] == "law enforcement official"
    assert police.information[0] == "protected health information"
    plan = read(reader, PLAN_TO_INSURER, rules)
    assert plan.sender[0] in {"health plan", "covered entity"}
    assert 0.0 < plan.sender[1] <= 1.0


def test_the_case_flow_states_coverage_and_type_from_what_it_read() -> None:
    def ancestors(role: str) -> frozenset[str]:
        return frozenset({role, "covered entity"}) if role == "health care provider" else {role}

    covered = cfl.CaseFlow(
        ("health care provider", 0.9), ("no HIPAA role", 0.8), ("protected health information", 1)
    )
    flow = cfl.case_flow(covered, {}, ancestors)
    assert flow.turns_on and flow.fact("sender_covered").value is True
    assert flow.information_types == {"protected health information"}
    assert flow.recipient_roles == frozenset()
    school = cfl.CaseFlow(("school", 0.7), ("parent", 0.6), ("education records", 0.9))
    flow = cfl.case_flow(school, {}, ancestors)
    assert flow.fact("sender_covered").value is False
    assert flow.fact("information_is_phi").value is False
    # written and read back, the flow still says it is the one the case turns on
    assert Flow.from_json(flow.to_json()).turns_on


def test_the_roles_read_state_what_the_rule_readers_roles_state() -> None:
    from privacy_checklist.reasoning.reading.facts import default_cues

    rules = default_cues().role_facts

    def ancestors(role: str) -> frozenset[str]:
        return frozenset({role, "covered entity"}) if role == "health care provider" else {role}

    lab = cfl.CaseFlow(
        ("health care provider", 0.9), ("public health authority", 0.9), (PHI_TYPE, 1.0)
    )
    flow = cfl.case_flow(lab, {}, ancestors, rules)
    assert flow.fact("public_health_authority").value is True
    assert flow.fact("public_health_authority").source == "role"
    # a fact the narrative states is never overruled by a role
    stated = {"public_health_authority": Fact("public_health_authority", False, source="learned")}
    assert (
        cfl.case_flow(lab, stated, ancestors, rules).fact("public_health_authority").value is False
    )
    patient = cfl.CaseFlow(("health care provider", 0.9), ("individual", 0.9), (PHI_TYPE, 1.0))
    assert cfl.case_flow(patient, {}, ancestors, rules).fact("to_the_individual").value is True


def test_the_checklist_decides_by_the_case_flow_when_asked() -> None:
    from privacy_checklist.kg import kb as kbmod

    reasoner = ChecklistReasoner(kbmod.load(None), case_flow=True)
    checklists = reasoner.checklists(HOSPITAL_TO_POLICE)
    assert checklists[0].flow.turns_on
    assert len(checklists) > 1  # the rule reader's flows are still checked
    verdict = reasoner.verdict(checklists, HOSPITAL_TO_POLICE)
    assert verdict.checklist is not None and verdict.checklist.deciding is not None
    assert verdict.checklist.deciding.flow.turns_on
    assert any("case-flow reader" in line for line in verdict.reasoning)
    # off (the default), and under the learned layer, no case flow is read
    for off in (
        ChecklistReasoner(kbmod.load(None)),
        ChecklistReasoner(kbmod.load(None), blend=True),
    ):
        assert not any(c.flow.turns_on for c in off.checklists(HOSPITAL_TO_POLICE))
        assert reasoner.settings()["checklist"] != off.settings()["checklist"]


# written for this test (not in the corpus): a court matter with no health information in it
WIRETAP = (
    "In March the county narcotics unit obtained a warrant to intercept calls on two phones "
    "used by the defendant. Agents recorded forty calls about deliveries of cocaine and later "
    "searched his garage, where they found scales and cash. The defendant moves to suppress "
    "the recordings, arguing that the affidavit overstated what the informant had seen."
)


def test_the_case_flow_decides_only_where_the_rule_reader_reads_a_covered_flow() -> None:
    from privacy_checklist.kg import kb as kbmod

    reasoner = ChecklistReasoner(kbmod.load(None), case_flow=True)
    rules = ChecklistReasoner(kbmod.load(None))
    assert rules.check(WIRETAP).label.value == "not_applicable"
    # the case flow reads no flow of its own into a case the rule reader finds uncovered
    checklists = reasoner.checklists(WIRETAP)
    assert not any(c.flow.turns_on for c in checklists)
    assert reasoner.check(WIRETAP).label.value == "not_applicable"
    # where it reads a covered flow, the case flow decides
    assert reasoner.checklists(HOSPITAL_TO_POLICE)[0].flow.turns_on


def test_the_case_flow_takes_the_rule_readers_facts_beneath_the_learned() -> None:
    said = Fact("authorization", True, 0, 5, "signed", "parse")
    role = Fact("public_health_authority", True, -1, -1, "role", "role")
    other = Fact("authorization", False, 0, 5, "refused", "parse")
    flows = [
        Flow(facts={"authorization": said, "public_health_authority": role}),
        Flow(facts={"authorization": other, "court_order": Fact("court_order", None)}),
    ]
    facts = cfl.rule_facts(flows)
    # the first flow's where two disagree; none derived from roles; none unstated
    assert facts == {"authorization": said}


def test_a_model_for_another_encoder_or_none_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(cfl.CaseFlowModelError, match="another encoder graph"):
        cfl.CaseFlowReader(graph="not-this-graph")
    with pytest.raises(cfl.CaseFlowModelError, match="pcheck reasoner train --method case-flow"):
        cfl.CaseFlowReader(tmp_path / "missing.npz")


def test_the_regressions_weigh_the_roles_the_rule_reader_read(
    reader: cfl.CaseFlowReader, rules: ChecklistReasoner
) -> None:
    # the features: the pooled sentence vectors, then each role of the vocabulary read for a
    # sender and for a recipient of any rule-read flow
    assert "law enforcement official" in reader.roles
    assert rules.reader is not None
    flows = rules.reader.read(HOSPITAL_TO_POLICE).flows
    vectors = condition_reader().vectors(HOSPITAL_TO_POLICE)[1]
    x = cfl.features(vectors, flows, reader.roles)
    assert x.shape == (2 * vectors.shape[1] + 2 * len(reader.roles),)
    assert x.shape[0] == reader.heads["recipient"][0].shape[1]
    at = 2 * vectors.shape[1] + len(reader.roles) + reader.roles.index("law enforcement official")
    assert x[at] == 1.0
    # without the rule reader's flows the reading may differ, never fails
    assert reader.read(vectors).recipient[0]


def test_the_model_records_what_it_was_fitted_on() -> None:
    with np.load(data_path(cfl.MODEL_NAME), allow_pickle=False) as saved:
        import json

        meta = json.loads(str(saved["meta"]))
    assert meta["graph"] == condition_reader().encoder.digest
    assert len(meta["writers"]) >= 20
    assert all(name.endswith(".jsonl") for name in meta["sources"])
