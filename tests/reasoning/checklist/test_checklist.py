"""The checklist's decision rule on flows built by hand, against the real curated catalogue.

Each row is a flow as the facts reader would hand it over (the parties' regulatory roles with
their ancestors from the shipped role graph, the information types, the facts stated) and what
the law says of it.
"""

from __future__ import annotations

import pytest

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.conditions import Catalogue, CatalogueError, load_catalogue
from privacy_checklist.reasoning.checklist.decide import (
    DEFAULT_PROHIBITION,
    UnknownRule,
    combine,
    decide,
)
from privacy_checklist.reasoning.checklist.report import FlowReport
from privacy_checklist.reasoning.reading.types import Fact, Flow

PHI = frozenset({"protected health information"})


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load(None)


@pytest.fixture(scope="module")
def catalogue(kb: kbmod.KnowledgeBase) -> Catalogue:
    return load_catalogue(kb.tree)


def flow(kb, sender=(), recipient=(), facts=None, information=PHI) -> Flow:
    def roles(names):
        out = set()
        for name in names:
            out.add(name)
            out |= {a.split(":", 1)[-1] for a in kb.roles.ancestors(f"role:{name}")}
        return frozenset(out)

    return Flow(
        sender_roles=roles(sender),
        recipient_roles=roles(recipient),
        information_types=information,
        facts={key: Fact(key, value) for key, value in (facts or {}).items()},
    )


CASES = [
    # (id, sender, recipient, facts, information, label, a node it must rest on)
    (
        "court order to police",
        ["health care provider"],
        ["law enforcement official"],
        {"court_order": True},
        PHI,
        "permit",
        "164.512(f)(1)(ii)(A)",
    ),
    (
        "to police without consent",
        ["health care provider"],
        ["law enforcement official"],
        {"authorization": False},
        PHI,
        "prohibit",
        DEFAULT_PROHIBITION,
    ),
    (
        "to a reporter, nothing stated",
        ["health care provider"],
        [],
        {},
        PHI,
        "prohibit",
        DEFAULT_PROHIBITION,
    ),
    (
        "to the patient",
        ["health care provider"],
        ["individual"],
        {"to_the_individual": True},
        PHI,
        "permit",
        "164.502(a)(1)(i)",
    ),
    (
        "family involved in care",
        ["health care provider"],
        ["family member"],
        {"involved_in_care": True},
        PHI,
        "permit",
        "164.510(b)(2)(i)",
    ),
    (
        "family involved, patient objected",
        ["health care provider"],
        ["family member"],
        {"involved_in_care": True, "agreement_or_no_objection": False},
        PHI,
        "prohibit",
        DEFAULT_PROHIBITION,
    ),
    (
        "sale of records",
        ["health care provider"],
        [],
        {"sale_of_phi": True},
        PHI,
        "prohibit",
        "164.502(a)(5)(ii)(A)",
    ),
    (
        "treatment referral",
        ["health care provider"],
        ["health care provider"],
        {"for_treatment": True},
        PHI,
        "permit",
        "164.506(c)(2)",
    ),
    (
        "genetic underwriting",
        ["health plan"],
        [],
        {"genetic_info_underwriting": True},
        PHI | {"genetic information"},
        "prohibit",
        "164.502(a)(5)(i)",
    ),
    ("a friend, not covered", [], [], {"sender_covered": False}, PHI, "not_applicable", None),
    (
        "not PHI",
        ["health care provider"],
        [],
        {"information_is_phi": False},
        PHI,
        "not_applicable",
        None,
    ),
    (
        "research with a waiver",
        ["health care provider"],
        ["researcher"],
        {"research_irb_waiver": True},
        PHI,
        "permit",
        "164.512(i)(1)(i)",
    ),
    (
        "subpoena with assurances",
        ["health care provider"],
        ["court"],
        {"subpoena_with_assurances": True},
        PHI,
        "permit",
        "164.512(e)(1)(ii)",
    ),
    (
        # 164.502(b): more than the purpose needed, read as "minimum necessary" stated false
        "whole chart for a payment",
        ["health care provider"],
        ["health plan"],
        {"for_payment": True, "minimum_necessary": False},
        PHI,
        "prohibit",
        "164.502(b)",
    ),
    (
        # ... unless an exception of 164.502(b)(2) holds: treatment
        "whole chart for treatment",
        ["health care provider"],
        ["health care provider"],
        {"for_treatment": True, "minimum_necessary": False},
        PHI,
        "permit",
        "164.506(c)(2)",
    ),
    (
        # a workforce member's look at the entity's records with no work reason: covered,
        # and no permission covers it
        "snooping",
        ["health care provider"],
        [],
        {"acting_in_role": False},
        PHI,
        "prohibit",
        DEFAULT_PROHIBITION,
    ),
    (
        "workers' compensation claim",
        ["health care provider"],
        ["employer"],
        {"workers_compensation": True},
        PHI,
        "permit",
        "164.512(l)",
    ),
    (
        # 164.512(l) asks for a workers' compensation program, not just any law
        "a law, but no workers' compensation",
        ["health care provider"],
        ["employer"],
        {"workers_compensation": False},
        PHI,
        "prohibit",
        DEFAULT_PROHIBITION,
    ),
    (
        "crime on the premises",
        ["health care provider"],
        ["law enforcement official"],
        {"criminal_conduct": True, "crime_on_premises": True},
        PHI,
        "permit",
        "164.512(f)(5)",
    ),
    (
        "escaped from custody",
        ["health care provider"],
        ["law enforcement official"],
        {"escaped_custody": True, "identify_suspect": True},
        PHI,
        "permit",
        "164.512(j)(1)(ii)(B)",
    ),
]


@pytest.mark.parametrize(
    ("sender", "recipient", "facts", "information", "label", "node"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_decision(kb, catalogue, sender, recipient, facts, information, label, node) -> None:
    checklist = decide(catalogue, flow(kb, sender, recipient, facts, information))
    assert checklist.label == label, checklist.explanation
    if node is not None:
        assert node in checklist.rests_on, (checklist.rests_on, checklist.explanation)
    else:
        assert checklist.rests_on == ()


def test_a_prohibited_flow_names_the_fact_that_would_permit_it(kb, catalogue) -> None:
    checklist = decide(catalogue, flow(kb, ["health care provider"], ["law enforcement official"]))
    assert checklist.label == "prohibit" and not checklist.decided
    turns = {t.node: t for t in checklist.turns}
    assert turns, checklist.explanation
    assert all(t.then == "permit" and DEFAULT_PROHIBITION in t.text for t in turns.values())
    # a court order would make it a permitted disclosure to law enforcement
    with_order = decide(
        catalogue,
        flow(kb, ["health care provider"], ["law enforcement official"], {"court_order": True}),
    )
    assert with_order.label == "permit" and with_order.decided


def test_a_permission_is_never_met_on_presumptions_alone(kb, catalogue) -> None:
    # workers' compensation (164.512(l)) asks only that a law authorize it, which is presumed;
    # nothing in this flow is about workers' compensation, so it must not permit it
    checklist = decide(catalogue, flow(kb, ["health care provider"], ["law enforcement official"]))
    assert "164.512(l)" not in checklist.rests_on[:1]
    assert all(c.status != "met" for c in checklist.candidates)


def test_a_presumed_condition_is_named(kb, catalogue) -> None:
    checklist = decide(
        catalogue, flow(kb, ["health care provider"], ["family member"], {"involved_in_care": True})
    )
    assert checklist.label == "permit"
    assert any(
        t.kind == "agreement_or_no_objection" and t.then == "prohibit" for t in checklist.turns
    )


def test_exception_stated_true_lifts_a_prohibition(kb, catalogue) -> None:
    marketing = {"marketing": True}
    assert decide(catalogue, flow(kb, ["health care provider"], [], marketing)).label == "prohibit"
    lifted = decide(
        catalogue,
        flow(
            kb,
            ["health care provider"],
            ["individual"],
            {**marketing, "marketing_exception": True, "to_the_individual": True},
        ),
    )
    assert not lifted.prohibitions, lifted.explanation


@pytest.mark.parametrize("rule", list(UnknownRule))
def test_rules_for_unknown_facts(kb, catalogue, rule) -> None:
    # a family member involved in care, nothing said of an objection
    checklist = decide(
        catalogue,
        flow(kb, ["health care provider"], ["family member"], {"involved_in_care": True}),
        rule,
    )
    expected = {"stated": "permit", "lenient": "permit", "strict": "prohibit"}[rule.value]
    assert checklist.label == expected and checklist.rule is rule


def test_the_case_is_decided_by_its_most_serious_flow(kb, catalogue) -> None:
    permitted = decide(
        catalogue, flow(kb, ["health care provider"], ["individual"], {"to_the_individual": True})
    )
    prohibited = decide(catalogue, flow(kb, ["health care provider"], [], {"sale_of_phi": True}))
    outside = decide(catalogue, flow(kb, [], [], {"sender_covered": False}))
    assert combine([outside, permitted, prohibited]) is prohibited
    assert combine([outside, permitted]) is permitted
    assert combine([outside]) is outside
    assert combine([]) is None


def test_the_json_form_holds_the_checklist(kb, catalogue) -> None:
    checklist = decide(
        catalogue,
        flow(kb, ["health care provider"], ["law enforcement official"], {"court_order": True}),
    )
    data = FlowReport.of(checklist, catalogue).to_json()
    assert data["verdict"] == "permit" and data["rule"] == "stated"
    first = data["candidates"][0]
    assert first["status"] == "met"
    condition = first["conditions"][0]
    assert {"kind", "quote", "span", "status", "question", "fact"} <= set(condition)
    start, end = condition["span"]
    assert kb.tree[condition["node"]].text[start:end] == condition["quote"]


def test_a_quote_not_in_the_law_fails_the_load(kb, tmp_path) -> None:
    import json

    from privacy_checklist.kg.conditions import ontology_path

    data = json.loads(ontology_path("norm_conditions.json").read_text(encoding="utf-8"))
    data["norms"][1]["conditions"][0]["quote"] = "words the law never says"
    bad = tmp_path / "norm_conditions.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CatalogueError, match="words the law never says"):
        load_catalogue(kb.tree, bad)


def test_a_validated_edit_of_a_norms_conditions_reaches_the_checklist(tmp_path) -> None:
    """The checklist decides by the norms everything reads (the editors' store winning)."""
    import json
    import subprocess
    import sys

    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of

    store = tmp_path / "norms.sqlite"
    node = "164.512(e)(1)(i)"

    def pcheck(*args: str) -> None:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "privacy_checklist.app.cli",
                "norms",
                "--store",
                str(store),
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    assert node in catalogue_of(kbmod.load(None)).readings
    pcheck(
        "edit", node, "--editor", "ana", "--version", "0", "--set", "conditions=" + json.dumps([])
    )
    pcheck("validate", node, "--editor", "ana", "--version", "1")
    edited = catalogue_of(kbmod.load(None, store=store))
    assert node not in edited.readings  # no conditions left: no longer a checklist reading
    assert "164.512(e)(1)(ii)" in edited.readings


def test_a_derived_kind_reads_its_base_fact(kb, catalogue) -> None:
    """ "More than the minimum necessary" is the minimum necessary stated false; a derived
    kind is never presumed (documented agreement is not inferred like no objection)."""
    from privacy_checklist.reasoning.checklist.decide import derive_facts

    base = flow(kb, ["health care provider"], ["health plan"], {"minimum_necessary": False})
    derived = derive_facts(base, catalogue.kinds)
    assert derived.fact("beyond_minimum_necessary").value is True
    assert "minimum_necessary" in derived.fact("beyond_minimum_necessary").source
    unread = derive_facts(flow(kb, ["health care provider"], ["school"], {}), catalogue.kinds)
    assert unread.fact("documented_agreement").value is None
    school = decide(
        catalogue,
        flow(
            kb,
            ["health care provider"],
            ["school"],
            {"public_health_authority": True, "required_by_law": True},
        ),
    )
    vi = next(c for c in school.candidates if c.reading.node == "164.512(b)(1)(vi)")
    agreement = next(c for c in vi.conditions if c.condition.kind == "documented_agreement")
    assert agreement.status == "unknown" and not agreement.presumed


def test_required_by_law_yields_to_the_paragraph_that_governs_the_flow(kb, catalogue) -> None:
    """164.512(a)(2): a disclosure a law requires still has to meet the specific paragraph
    that governs it; when that paragraph fits and is stated unmet, (a)(1) is set aside."""
    facts = {"required_by_law": True, "workplace_surveillance": True, "notice_to_individual": False}
    checklist = decide(catalogue, flow(kb, ["health care provider"], ["employer"], facts))
    assert checklist.label == "prohibit", checklist.explanation
    general = next(c for c in checklist.candidates if c.reading.node == "164.512(a)(1)")
    assert general.status == "unmet" and "164.512(b)(1)(v)" in general.set_aside
    # the same law, with the notice given: the specific paragraph permits it
    facts["notice_to_individual"] = True
    checklist = decide(catalogue, flow(kb, ["health care provider"], ["employer"], facts))
    assert checklist.label == "permit" and "164.512(b)(1)(v)" in checklist.rests_on
    # a law that requires a report to an agency no specific paragraph governs: (a)(1) permits
    plain = decide(
        catalogue,
        flow(kb, ["health care provider"], ["government agency"], {"required_by_law": True}),
    )
    assert plain.label == "permit" and "164.512(a)(1)" in plain.rests_on, plain.explanation


def test_a_kind_derived_from_an_unknown_kind_fails_the_load(tmp_path) -> None:
    import json

    from privacy_checklist.kg.conditions import load_kinds, ontology_path

    data = json.loads(ontology_path("condition_kinds.json").read_text(encoding="utf-8"))
    data["kinds"]["beyond_minimum_necessary"]["derived_from"] = "no_such_kind"
    bad = tmp_path / "kinds.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CatalogueError, match="no_such_kind"):
        load_kinds(bad)
