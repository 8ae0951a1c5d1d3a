"""Cross-references: resolution of textual citations, and every hyperlink of the real pages."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import lxml.html
import pytest

from privacy_checklist.kg.citations import citations_in
from privacy_checklist.kg.kb import KnowledgeBase

CASES = [
    # (citing node, text, expected internal targets, expected external texts)
    ("164.502(b)", "paragraph (a)(1)(i) of this section", ["164.502(a)(1)(i)"], []),
    ("164.502(b)", "§ 164.508(c)", ["164.508(c)"], []),
    ("164.502(b)", "45 CFR 164.512(f)(1)", ["164.512(f)(1)"], []),
    (
        "164.514(a)",
        "paragraphs (d)(2) through (d)(5) of this section",
        ["164.514(d)(2)", "164.514(d)(5)", "164.514(d)(3)", "164.514(d)(4)"],
        [],
    ),
    (
        "164.514(a)",
        "paragraph (b)(2)(i)(A) through (C)",
        ["164.514(b)(2)(i)(A)", "164.514(b)(2)(i)(C)", "164.514(b)(2)(i)(B)"],
        [],
    ),
    (
        "164.512(f)",
        "§ 164.512(f)(1)(ii)(A)-(C)",
        ["164.512(f)(1)(ii)(A)", "164.512(f)(1)(ii)(C)", "164.512(f)(1)(ii)(B)"],
        [],
    ),
    ("164.502(a)", "§§ 164.502 and 164.504", ["164.502", "164.504"], []),
    (
        "164.502(a)",
        "§§ 164.502(b), 164.514(d), and 164.530(c)",
        ["164.502(b)", "164.514(d)", "164.530(c)"],
        [],
    ),
    (
        "164.512(a)",
        "paragraphs (c), (e), or (f) of this section",
        ["164.512(c)", "164.512(e)", "164.512(f)"],
        [],
    ),
    ("164.530(a)", "paragraphs (h) and (i) of this section", ["164.530(h)", "164.530(i)"], []),
    (
        "164.502(a)",
        "§ 164.524(c)(2)(ii) and (3)(ii)",
        ["164.524(c)(2)(ii)", "164.524(c)(3)(ii)"],
        [],
    ),
    ("164.502(a)", "paragraph (b) of § 164.510", ["164.510(b)"], []),
    ("164.502(a)", "subpart E of this part", ["Part 164 Subpart E"], []),
    ("164.502(a)", "subpart C of part 160 of this subchapter", ["Part 160 Subpart C"], []),
    ("164.532(e)(3)", "part 160, subpart C of this subchapter", ["Part 160 Subpart C"], []),
    ("160.300", "parts 160 and 164 of this subchapter", ["Part 160", "Part 164"], []),
    (
        "164.506(c)(4)",
        "paragraph (1) or (2) of the definition of health care operations",
        ["164.501(Health care operations)(1)", "164.501(Health care operations)(2)"],
        [],
    ),
    (
        "160.103(Business associate)(4)",
        "paragraph (1)(i) of this definition",
        ["160.103(Business associate)(1)(i)"],
        [],
    ),
    # the id names the wrong term; the page's layout puts it in "Business associate"
    (
        "160.103(ANSI)(1)",
        "paragraph (4) of this definition",
        ["160.103(Business associate)(4)"],
        [],
    ),
    ("164.502(a)", "42 CFR 3.20 and 5 U.S.C. 552", [], ["42 CFR 3.20", "5 U.S.C. 552"]),
    ("164.502(a)", "section 1861(s) of the Act", [], ["section 1861(s) of the Act"]),
    ("164.502(a)", "no citation here at all, only (a) letter in parentheses", [], []),
]


@pytest.mark.parametrize(("source", "text", "targets", "external"), CASES)
def test_textual_citations(
    built: KnowledgeBase, source: str, text: str, targets: list[str], external: list[str]
) -> None:
    refs, unresolved = citations_in(built.tree, source, text)
    assert unresolved == []
    assert sorted(r.target for r in refs if not r.external) == sorted(targets)
    assert sorted(r.text for r in refs if r.external) == sorted(external)
    for ref in refs:
        assert text[ref.start : ref.end] == ref.text
        assert ref.external or ref.exact


def test_range_members_are_marked(built: KnowledgeBase) -> None:
    refs, _ = citations_in(
        built.tree, "164.514(a)", "paragraphs (d)(2) through (d)(5) of this section"
    )
    via = {r.target: r.via for r in refs}
    assert via == {
        "164.514(d)(2)": "text",
        "164.514(d)(5)": "text",
        "164.514(d)(3)": "range",
        "164.514(d)(4)": "range",
    }


def test_unresolvable_is_logged_with_place(built: KnowledgeBase) -> None:
    refs, unresolved = citations_in(
        built.tree, "164.502(b)", "see paragraph (z)(9) of this section."
    )
    assert refs == []
    assert len(unresolved) == 1
    assert unresolved[0].source == "164.502(b)"
    assert (unresolved[0].start, unresolved[0].end) == (4, 20)
    assert "(z)(9)" in unresolved[0].reason


def test_missing_paragraph_goes_to_nearest_ancestor(built: KnowledgeBase) -> None:
    # 164.404(d)(1) has its (ii) as text with no id of its own
    refs, unresolved = citations_in(built.tree, "164.404(d)(2)", "paragraph (d)(1)(ii)")
    assert unresolved == []
    assert [(r.target, r.exact) for r in refs] == [("164.404(d)(1)", False)]


def test_relative_citation_resolves_against_citing_section(built: KnowledgeBase) -> None:
    for section in ("164.502", "164.506", "164.512"):
        refs, _ = citations_in(built.tree, f"{section}(b)", "paragraph (a) of this section")
        assert [r.target for r in refs] == [f"{section}(a)"]


def test_counts(built: KnowledgeBase) -> None:
    internal = [r for r in built.refs if not r.external]
    assert len(internal) >= 761  # the paper's count
    assert all(r.target in built.tree for r in internal)
    assert all(r.source in built.tree for r in built.refs)
    assert len(built.unresolved) <= 5


def test_every_hyperlink_is_a_reference(built: KnowledgeBase, page_paths: list[Path]) -> None:
    """Each <a class="cfr"> to Parts 160/162/164 is a reference from its node to the right node."""
    refs = {(r.source, r.target, r.text) for r in built.refs if r.via == "link"}
    checked = 0
    for path in page_paths:
        doc = lxml.html.document_fromstring(path.read_text(encoding="utf-8"))
        for anchor in doc.xpath("//a[contains(@class, 'cfr') and contains(@class, 'external')]"):
            href = anchor.get("href", "")
            if "/title-45/" not in href:
                continue
            holder = next(
                (
                    el
                    for el in anchor.iterancestors()
                    if (el.get("id") or "").startswith("p-")
                    or "section" in (el.get("class") or "").split()
                    or "appendix" in (el.get("class") or "").split()
                ),
                None,
            )
            source = urllib.parse.unquote(holder.get("id"))
            source = source[2:] if source.startswith("p-") else source
            if "appendix" in (holder.get("class") or ""):
                source = source.replace("-", " ")
            fragment = urllib.parse.unquote(urllib.parse.urlparse(href).fragment)
            if fragment.startswith("p-"):
                target = fragment[2:]
            else:
                found = re.search(r"section-([\d.]+)|part-(\d+)/subpart-([A-Z])|part-(\d+)$", href)
                target = (
                    found.group(1)
                    or (found.group(3) and f"Part {found.group(2)} Subpart {found.group(3)}")
                    or f"Part {found.group(4)}"
                )
            if not re.match(r"(16[024]\.|Part 16[024])", target):
                continue
            text = " ".join(anchor.text_content().split())
            if target in built.tree:
                assert (source, target, text) in refs, (source, target, text)
            else:
                # the eCFR's own href names no node: the citation text or an ancestor is used
                assert any(s == source and t == text for s, _, t in refs), (source, href, text)
            checked += 1
    assert checked > 800
