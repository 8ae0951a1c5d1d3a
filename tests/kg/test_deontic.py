"""A paragraph's deontic structure (kg/deontic.py): its statements read clause by clause, the
lead that opens its list, the switches the grammar leaves to convention and how they are
chosen (``annotate-eval --loso``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from privacy_checklist.kg.deontic import Switches, content_lead, read
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.kg.norms import PAPER_TYPES, RulesAnnotator, read_paper_file
from privacy_checklist.kg.switches import (
    choose_switches,
    gold_types,
    section_of,
    switches_leave_one_section_out,
)
from tests.conftest import REPO

NONE = Switches(**dict.fromkeys(Switches.names(), False))
ALL = Switches(**dict.fromkeys(Switches.names(), True))

# sentences written here in the regulation's manner, each read under no switch
READINGS = [
    (
        "A covered entity may not use or disclose protected health information for marketing.",
        "prohibit",
    ),
    (
        "A covered entity may disclose protected health information to a public health authority.",
        "permit",
    ),
    ("A hospital is permitted to share the record with the patient's insurer.", "permit"),
    ("A clinic is not permitted to release the chart to an employer.", "prohibit"),
    ("No health plan may sell the information it holds.", "prohibit"),
    ("Not disclose the information to the employer;", "prohibit"),
    (
        "The covered entity must obtain an authorization for any use or disclosure of the notes.",
        "permit",
    ),
    ("A covered entity must provide a notice written in plain language.", "definition"),
    (
        "The contract may permit the associate to use the information for its administration.",
        "definition",
    ),
    ("The authorization sought is for the plan's enrollment determinations.", "definition"),
    (
        "Designated record set means a group of records maintained by a covered entity.",
        "definition",
    ),
    (
        "Sale of protected health information does not include a disclosure of protected health information:",
        "permit",
    ),
    ("The date, which may not be earlier than the date the notice is printed.", None),
    ("This section may not be construed to require the disclosure of interview reports.", None),
    ("To track the devices of a manufacturer;", None),
    ("A covered entity may:", "permit"),
]


@pytest.mark.parametrize(("text", "kind"), READINGS)
def test_statements_read(text: str, kind: str | None) -> None:
    assert read(text).own_type(NONE) == kind


def test_a_modal_in_a_documents_content_or_a_relative_clause_is_not_the_paragraphs() -> None:
    content = (
        "The notice must contain a statement that the covered entity may not sell the records."
    )
    assert [s.kind for s in read(content).statements] == ["require"]
    relative = (
        "An individual has a right to notice of the disclosures that may be made by the plan."
    )
    assert read(relative).own_type(NONE) is None


@pytest.mark.parametrize(
    ("switch", "text", "off", "on"),
    [
        (
            "conduct",
            "A covered entity may not require individuals to waive their rights.",
            None,
            "prohibit",
        ),
        (
            "only",
            "A plan may use the data set only if it obtains an assurance.",
            "permit",
            "prohibit",
        ),
        (
            "may_any",
            "A covered entity may deny an individual access to the record.",
            None,
            "permit",
        ),
        (
            "strongest",
            "A covered entity may disclose the record; it may not sell it.",
            "permit",
            "prohibit",
        ),
        (
            "lead_includes",
            "A person responsible for a regulated product. Such purposes include:",
            "definition",
            None,
        ),
    ],
)
def test_each_switch_turns_one_reading(
    switch: str, text: str, off: str | None, on: str | None
) -> None:
    reading = read(text)
    assert reading.own_type(NONE) == off
    assert reading.own_type(replace(NONE, **{switch: True})) == on


def test_what_a_list_lead_makes_of_its_items() -> None:
    assert content_lead("The notice must contain the following statements:")
    assert content_lead("The contract must provide that the associate will:")
    assert not content_lead("A covered entity may disclose protected health information to:")
    assert not content_lead("A covered entity may not condition treatment, except:")


def test_the_annotator_reads_the_regulation_by_its_structure(shipped: KnowledgeBase) -> None:
    annotator = RulesAnnotator(shipped.tree)
    first = RulesAnnotator(shipped.tree, structure=False)
    # an item of "Such purposes include:" under "may use or disclose ... to:" is a permission
    # (the earliest cue read the list's "include" as a definition)
    item = "164.512(b)(1)(iii)(B)"
    assert annotator.norm_type(item) == "permit" and first.norm_type(item) == "definition"
    # "A use or disclosure ... may not be made if the information is learned: (i) In the
    # course of treatment ..." — a prohibition, and its items with it
    assert annotator.norm_type("164.512(j)(2)") == "prohibit"
    assert annotator.norm_type("164.512(j)(2)(i)") == "prohibit"
    # what an accounting must include for each disclosure is its content, not a flow
    assert annotator.norm_type("164.528(b)(2)(i)") == "definition"
    # the switches decide what the grammar leaves open
    assert RulesAnnotator(shipped.tree, switches=ALL).norm_type("164.530(h)") == "prohibit"
    assert RulesAnnotator(shipped.tree, switches=NONE).norm_type("164.530(h)") == "definition"


def _dev_types(shipped: KnowledgeBase, shared: Path) -> dict[str, str]:
    gold = read_paper_file(shared / "checklist" / "privacy_checklist_norms_dev.json")
    return {k: v for k, v in gold_types(gold, PAPER_TYPES).items() if k in shipped.tree.nodes}


def test_the_shipped_switches_are_those_chosen_on_the_dev_sections(
    shipped: KnowledgeBase, shared: Path
) -> None:
    assert Switches.load() == choose_switches(shipped.tree, _dev_types(shipped, shared))
    data = json.loads(REPO.joinpath("ontologies", "norm_structure.json").read_text())
    assert set(data["switches"]) == set(Switches.names())


def test_switches_are_chosen_without_the_section_they_type(
    shipped: KnowledgeBase, shared: Path
) -> None:
    types = _dev_types(shipped, shared)
    result = switches_leave_one_section_out(shipped.tree, types)
    assert set(result["switches"]) == {section_of(k) for k in types}
    assert result["pooled"]["n"] == len(types) == 272
    for section, chosen in result["switches"].items():
        others = {k: v for k, v in types.items() if section_of(k) != section}
        assert Switches(**chosen) == choose_switches(shipped.tree, others)
    # measured 2026-11-25: 0.838 / 0.771, prohibit recall 9 of 13
    assert result["pooled"]["accuracy"] >= 0.8 and result["pooled"]["macro_f1"] >= 0.72


def test_unknown_switches_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown switch"):
        Switches.from_json({"conduct": True, "loudness": True})
