"""The definitions dictionary: terms, scopes, the definition in force at a node, term uses."""

from __future__ import annotations

import pytest

from privacy_checklist.kg.definitions import term_forms, variants
from privacy_checklist.kg.kb import KnowledgeBase


def test_160_103_holds_at_least_54(built: KnowledgeBase) -> None:
    by_section = built.definitions.by_section()
    assert by_section["160.103"] >= 54
    nodes = {d.node for d in built.definitions if d.node.startswith("160.103(")}
    assert len(nodes) == 46  # term paragraphs in this version of the page


@pytest.mark.parametrize(
    "term", ["Treatment", "Payment", "Health care operations", "Psychotherapy notes", "Marketing"]
)
def test_164_501_subpart_e_scope(built: KnowledgeBase, term: str) -> None:
    definition = built.define(term, "164.506(c)(1)")
    assert definition.node == f"164.501({term})"
    assert definition.scope == "Part 164 Subpart E"
    assert definition.text.startswith(term)


@pytest.mark.parametrize(
    ("section", "scope"),
    [
        ("160.103", "HIPAA"),  # "apply to this subchapter"
        ("162.103", "Part 162"),  # "For purposes of this part"
        ("164.103", "Part 164"),  # "As used in this part"
        ("164.304", "Part 164 Subpart C"),  # "As used in this subpart"
        ("164.402", "Part 164 Subpart D"),
        ("160.202", "Part 160 Subpart B"),
        ("164.504", "164.504"),  # 164.504(a): "As used in this section"
    ],
)
def test_scope_by_section(built: KnowledgeBase, section: str, scope: str) -> None:
    scopes = {d.scope for d in built.definitions if d.node.startswith(f"{section}(")}
    assert scopes == {scope}


def test_define_in_force_at_a_node(built: KnowledgeBase) -> None:
    # "Covered entity" is defined once for the whole subchapter
    assert built.define("covered entities", "164.502(a)").node == "160.103(Covered entity)"
    # "Treatment" applies only in Subpart E
    with pytest.raises(KeyError, match="Part 164 Subpart E"):
        built.define("treatment", "160.101")
    with pytest.raises(KeyError, match="did you mean"):
        built.define("protected helth information", None)
    # the definition of Summary health information applies only within 164.504
    assert built.define("summary health information", "164.504(f)").scope == "164.504"
    with pytest.raises(KeyError):
        built.define("summary health information", "164.502(a)")


def test_definition_text_follows_the_page_layout(built: KnowledgeBase) -> None:
    # 160.103(ANSI)(1) is, by the page's layout, the first paragraph of "Business associate"
    text = built.define("business associate").text
    assert (
        "(1) Except as provided in paragraph (4) of this definition, business associate means"
        in text
    )
    assert "(4) does not include:" in text or "(4) Business associate does not include" in text
    assert built.define("ANSI").text == "ANSI stands for the American National Standards Institute."


@pytest.mark.parametrize(
    ("label", "text", "forms"),
    [
        ("Violation or violate", "Violation or violate means ...", ["Violation", "violate"]),
        (
            "Health maintenance organization (HMO)",
            "Health maintenance organization (HMO) means ...",
            ["Health maintenance organization", "HMO"],
        ),
        (
            "Standard setting organization",
            "Standard setting organization (SSO) means an ...",
            ["Standard setting organization", "SSO"],
        ),
        (
            "ANSI",
            "ANSI stands for the American National Standards Institute.",
            ["ANSI", "American National Standards Institute"],
        ),
        ("Business associate", "Business associate:", ["Business associate"]),
        ("Treatment", "Treatment means the provision ...", ["Treatment"]),
    ],
)
def test_term_forms(label: str, text: str, forms: list[str]) -> None:
    assert term_forms(label, text) == forms


@pytest.mark.parametrize(
    ("term", "forms"),
    [
        ("Covered entity", ["Covered entity", "Covered entities"]),
        ("Business associate", ["Business associate", "Business associates"]),
        ("HMO", ["HMO", "HMOs"]),
        ("Psychotherapy notes", ["Psychotherapy notes"]),
        (
            "Health maintenance organization (HMO)",
            ["Health maintenance organization", "Health maintenance organizations", "HMO", "HMOs"],
        ),
        ("Access", ["Access", "Accesses"]),
    ],
)
def test_variants(term: str, forms: list[str]) -> None:
    assert variants(term) == forms


def test_term_uses_with_spans(built: KnowledgeBase) -> None:
    node = built.tree["164.502(a)"]
    uses = built.definitions.uses(node.text, node.id, built.tree)
    found = {u.term: node.text[u.start : u.end] for u in uses}
    assert found["Covered entity"] == "covered entity"
    assert found["Protected health information"] == "protected health information"
    # the longest term wins: no separate "health information" inside "protected health information"
    assert "Health information" not in found
    # a definition does not list itself
    own = built.tree["160.103(Individual)"]
    assert all(
        u.definition.node != own.id for u in built.definitions.uses(own.text, own.id, built.tree)
    )
