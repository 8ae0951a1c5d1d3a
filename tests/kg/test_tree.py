"""The regulation tree built from the real eCFR pages."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest

from privacy_checklist.ingest.ecfr import split_labels
from privacy_checklist.kg.kb import KnowledgeBase


def test_counts(built: KnowledgeBase) -> None:
    stats = built.stats()
    assert stats["nodes_by_kind"] == {
        "root": 1,
        "part": 3,
        "subpart": 27,
        "section": 144,
        "paragraph": 2098,
        "appendix": 1,
    }
    assert stats["internal_nodes"] + stats["leaves"] == stats["nodes"] == 2274
    assert stats["subsumption_edges"] == stats["nodes"] - 1


def test_every_paragraph_and_section_under_its_section(
    built: KnowledgeBase, page_paths: list[Path]
) -> None:
    tree = built.tree
    for path in page_paths:
        html = path.read_text(encoding="utf-8")
        for section in re.findall(r'<div class="section" id="([^"]+)"', html):
            assert tree[section].kind == "section"
            assert tree[section].parent.startswith("Part ")
        for raw in re.findall(r'id="p-([^"]*)"', html):
            node_id = urllib.parse.unquote(raw)
            section, _ = split_labels(node_id)
            assert tree[node_id].kind == "paragraph"
            assert tree.section_of(node_id).id == section


@pytest.mark.parametrize(
    ("node_id", "parent"),
    [
        ("164.502(a)(1)(i)", "164.502(a)(1)"),
        ("164.502", "Part 164 Subpart E"),
        ("Part 164 Subpart E", "Part 164"),
        ("Part 160", "HIPAA"),
        ("Appendix A to Subpart C of Part 164", "Part 164 Subpart C"),
        # skipped level: there is no (1), so it hangs under the definition
        ("160.103(Business associate)(1)(i)", "160.103(Business associate)"),
        # 164.404(d)(2) has its (i) and (ii) as unnumbered text; (A) hangs under (d)(2)
        ("164.404(d)(2)(A)", "164.404(d)(2)"),
        ("164.512(i)(1)", "164.512(i)"),  # (i) after (h) is the letter
        ("164.512(i)(1)(i)", "164.512(i)(1)"),
    ],
)
def test_parents(built: KnowledgeBase, node_id: str, parent: str) -> None:
    assert built.tree[node_id].parent == parent


def test_own_text_and_heading(built: KnowledgeBase) -> None:
    tree = built.tree
    assert tree["164.502(a)(1)(i)"].text == "To the individual;"
    assert tree["164.502(a)"].title == "Standard."
    assert tree["164.502(a)(1)"].title == "Covered entities: Permitted uses and disclosures."
    assert tree["164.502(a)(1)"].text.startswith("A covered entity is permitted to use or disclose")
    assert "To the individual" not in tree["164.502(a)(1)"].text  # its own text only
    assert (
        tree["164.502"].title
        == "Uses and disclosures of protected health information: General rules."
    )


def test_text_with_no_paragraph_id_is_kept(built: KnowledgeBase) -> None:
    tree = built.tree
    assert (
        "(ii) If the covered entity knows the individual is deceased" in tree["164.404(d)(1)"].text
    )
    assert "THIS NOTICE DESCRIBES HOW MEDICAL INFORMATION" in tree["164.520(b)(1)(i)"].text
    assert "(1) Document why it would not be reasonable" in tree["164.306(d)(3)(ii)(B)"].text
    assert (
        tree["160.103"].text
        == "Except as otherwise provided, the following definitions apply to this subchapter:"
    )
    assert tree["164.502"].notes[0].startswith("[65 FR 82802")
    assert "164.308(a)(1)" in tree["Appendix A to Subpart C of Part 164"].text


def test_anomalies_recorded(built: KnowledgeBase) -> None:
    found = {(a.node, a.kind) for a in built.tree.anomalies}
    assert ("160.103(Business associate)(1)(i)", "skipped-level") in found
    assert ("160.103(ANSI)(1)", "layout-mismatch") in found
    assert ("164.404(d)(2)(A)", "marker-kind") in found


def test_full_specification(built: KnowledgeBase) -> None:
    spec = built.full_specification("164.502(a)(1)(i)").split("\n")
    assert spec[0] == "Part 164 — Security and Privacy"
    assert "Subpart E — Privacy of Individually Identifiable Health Information" in spec[1]
    assert "§ 164.502 Uses and disclosures" in spec[2]
    assert "A covered entity or business associate may not use or disclose" in spec[3]
    assert (
        "A covered entity is permitted to use or disclose protected health information" in spec[4]
    )
    assert spec[-1].strip() == "(i) To the individual;"


def test_navigation(built: KnowledgeBase) -> None:
    tree = built.tree
    assert tree.is_ancestor("164.502", "164.502(a)(1)(i)")
    assert not tree.is_ancestor("164.502(b)", "164.502(a)(1)(i)")
    assert [n.id for n in tree.children("164.502(a)")][:2] == ["164.502(a)(1)", "164.502(a)(2)"]
    assert tree.resolve_labels("164.502", ["a", "1", "i"]) == ("164.502(a)(1)(i)", True)
    assert tree.resolve_labels("164.502", ["a", "1", "xx"]) == ("164.502(a)(1)", False)
    assert tree.resolve_labels("199.1", ["a"]) == (None, False)
    with pytest.raises(KeyError, match="no node"):
        tree["164.999"]
