"""Regulation ids: the one value type (kg/ids.py), the one finder of ids in free text
(kg/citations.ids_in), and search and "did you mean" (kg/search.py), table-driven, over every
node id of the shipped tree, and differential tests against the readers they replaced."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.citations import ids_in
from privacy_checklist.kg.ids import RegId, section_id
from privacy_checklist.kg.search import SUGGESTIONS, TreeSearch, did_you_mean, unknown_id
from privacy_checklist.reasoning.llm.methods import check_ids, find_ids
from privacy_checklist.retrieval.base import documents
from privacy_checklist.retrieval.evaluate import _found, gold_ids


@pytest.fixture(scope="module")
def tree():
    return kbmod.load(None).tree


def para(section: str, *labels: str) -> RegId:
    return RegId.in_section(section, labels)


# --------------------------------------------------------------------------- parse and render


def test_every_node_id_round_trips(tree) -> None:
    for node in tree:
        parsed = RegId.parse(node.id)
        assert str(parsed) == node.id
        assert parsed.kind == node.kind, node.id
        assert RegId.parse(str(parsed)) == parsed
        if parsed.section is not None:
            for spelling in (f"45 CFR {node.id}", f"§ {node.id}", f"Section {node.id}"):
                assert RegId.parse(spelling) == parsed, spelling
            assert RegId.parse(parsed.cite()) == parsed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("164.502(a)(1)(i)", para("164.502", "a", "1", "i")),
        ("45 CFR 164.512(f)(1)", para("164.512", "f", "1")),
        ("45 C.F.R. §§ 164.508(a)(2)(i)", para("164.508", "a", "2", "i")),
        ("§164.512(f)", para("164.512", "f")),
        ("§ 164.512(f)", para("164.512", "f")),
        ("Section 164.502(a)", para("164.502", "a")),
        ("164.512 (f)(1)", para("164.512", "f", "1")),
        ("164.512( f )( 1 )", para("164.512", "f", "1")),
        ("  164.502\n", para("164.502")),
        (
            "164.103(Health maintenance organization (HMO))(1)",
            para("164.103", "Health maintenance organization (HMO)", "1"),
        ),
        ("160.103(Business  associate)", para("160.103", "Business associate")),
        ("Part 164", RegId("164")),
        ("part 164", RegId("164")),
        ("45 CFR Part 160", RegId("160")),
        ("Part 164 Subpart E", RegId("164", subpart="E")),
        ("Part 164, Subpart E", RegId("164", subpart="E")),
        ("Subpart E of Part 164", RegId("164", subpart="E")),
        ("Part 162 Subpart B-C", RegId("162", subpart="B-C")),
        ("Appendix A to Subpart C of Part 164", RegId("164", subpart="C", appendix="A")),
        ("HIPAA", RegId()),
    ],
)
def test_spellings(text: str, expected: RegId) -> None:
    assert RegId.parse(text) == expected
    assert RegId.try_parse(text) == expected


@pytest.mark.parametrize(
    ("found", "rendered", "cited"),
    [
        (para("164.502", "a", "1"), "164.502(a)(1)", "45 CFR 164.502(a)(1)"),
        (para("164.502"), "164.502", "45 CFR 164.502"),
        (RegId("164"), "Part 164", "45 CFR Part 164"),
        (RegId("164", subpart="E"), "Part 164 Subpart E", "45 CFR Part 164, Subpart E"),
        (RegId(), "HIPAA", "45 CFR Parts 160, 162 and 164"),
    ],
)
def test_render(found: RegId, rendered: str, cited: str) -> None:
    assert (str(found), found.cite()) == (rendered, cited)


@pytest.mark.parametrize(
    "text",
    ["", "  ", "164", "164.502(a", "164.502(a))", "164.502(a)x", "164.502 the rule", "Part",
     "x" * 5000, "Subpart E", "164.502()", "42 U.S.C. 1320d"],
)  # fmt: skip
def test_not_ids(text: str) -> None:
    assert RegId.try_parse(text) is None
    with pytest.raises(ValueError, match=r"164\.502"):  # the message shows what ids look like
        RegId.parse(text)


@pytest.mark.parametrize(
    "fields",
    [
        {"section": "164.502"},  # no part
        {"part": "160", "section": "164.502"},  # the section of another part
        {"part": "164", "labels": ("a",)},  # labels without a section
        {"part": "164", "section": "164.502", "subpart": "E"},
        {"part": "164", "appendix": "A"},  # an appendix without its subpart
        {"part": "164", "section": "164.502", "labels": ("a", " ")},
        {"part": "164", "section": "164.502(a)"},
    ],
)
def test_invalid_values_are_refused(fields: dict) -> None:
    with pytest.raises(ValueError, match="not a regulation id"):
        RegId(**fields)


# --------------------------------------------------------------------------- reading an id


@pytest.mark.parametrize(
    ("text", "part", "section", "labels", "label"),
    [
        ("164.502(a)(1)(i)", "164", "164.502", ("a", "1", "i"), "i"),
        ("164.502", "164", "164.502", (), None),
        ("Part 164 Subpart E", "164", None, (), None),
        ("HIPAA", None, None, (), None),
    ],
)
def test_parts_of_an_id(text, part, section, labels, label) -> None:
    found = RegId.parse(text)
    assert (found.part, found.section, found.labels, found.label) == (part, section, labels, label)
    assert section_id(text) == section


@pytest.mark.parametrize(
    ("child", "parent"),
    [
        ("164.502(a)(1)(i)", "164.502(a)(1)"),
        ("164.502(a)", "164.502"),
        ("164.502", "Part 164"),
        ("Part 164 Subpart E", "Part 164"),
        ("Appendix A to Subpart C of Part 164", "Part 164 Subpart C"),
        ("Part 164", "HIPAA"),
        ("160.103(Business associate)(1)(i)", "160.103(Business associate)(1)"),
    ],
)
def test_parent(child: str, parent: str) -> None:
    assert str(RegId.parse(child).parent) == parent
    assert RegId.parse(parent) in RegId.parse(child).ancestors


def test_root_has_no_parent() -> None:
    assert RegId().parent is None and RegId().ancestors == ()


def test_parents_agree_with_the_tree(tree) -> None:
    """An id's parent is its tree parent, except where the tree repaired a skipped level
    (recorded as an anomaly) and for sections, which the tree hangs under subparts."""
    repaired = {a.node for a in tree.anomalies if a.kind == "skipped-level"}
    for node in tree:
        parent = RegId.parse(node.id).parent
        if node.kind == "paragraph" and node.id not in repaired:
            assert str(parent) == node.parent, node.id
        elif node.kind in ("section", "subpart", "part"):
            assert parent is not None and tree.is_ancestor(str(parent), node.id), node.id


@pytest.mark.parametrize(
    ("inner", "outer", "expected"),
    [
        ("164.512(f)(1)(ii)", "164.512(f)", True),
        ("164.512(f)", "164.512(f)", True),  # itself
        ("164.512(f)", "164.512(f)(1)", False),  # broader is not under narrower
        ("164.512(f)(1)", "164.512", True),
        ("164.512(f)(1)", "Part 164", True),
        ("164.512(f)(1)", "HIPAA", True),
        ("164.512(f)(1)", "Part 160", False),
        ("164.512(f)(10)", "164.512(f)(1)", False),  # not a string prefix
        ("164.5120", "164.512", False),
        ("164.502(a)", "164.512", False),
        ("Appendix A to Subpart C of Part 164", "Part 164 Subpart C", True),
        ("Part 164 Subpart C", "Appendix A to Subpart C of Part 164", False),
        ("164.502", "Part 164 Subpart E", False),  # a section id does not name its subpart
        ("160.103(Business associate)(1)", "160.103(Business associate)", True),
        ("160.103(Business associate)", "160.103(Business)", False),
    ],
)
def test_is_under(inner: str, outer: str, expected: bool) -> None:
    assert RegId.parse(inner).is_under(RegId.parse(outer)) is expected


def test_is_under_agrees_with_the_tree(tree) -> None:
    for node in tree:
        here = RegId.parse(node.id)
        for above in tree.path(node.id):
            if above.kind != "subpart" or node.kind in ("subpart", "appendix"):
                assert here.is_under(RegId.parse(above.id)), (node.id, above.id)


@pytest.mark.parametrize(
    ("wanted", "nearest", "exact"),
    [
        ("164.502(a)(1)(i)", "164.502(a)(1)(i)", True),
        ("164.502(a)(1)(ix)", "164.502(a)(1)", False),
        ("164.502(a)(9)(z)", "164.502(a)", False),
        ("164.502(z)", "164.502", False),
        ("164.999(a)", "Part 164", False),
        ("999.1(a)", "HIPAA", False),
        ("Part 164 Subpart Z", "Part 164", False),
        ("160.103(Business associate)(1)(i)", "160.103(Business associate)(1)(i)", True),
        ("160.103(Business associate)(9)", "160.103(Business associate)", False),
    ],
)
def test_nearest_existing(tree, wanted: str, nearest: str, exact: bool) -> None:
    found = RegId.parse(wanted).nearest(tree)
    assert str(found) == nearest and (found == RegId.parse(wanted)) is exact
    assert RegId.parse(wanted).nearest(set()) is None


@pytest.mark.parametrize(
    ("section", "labels", "expected"),
    [
        ("164.502", ["a", "1", "i"], ("164.502(a)(1)(i)", True)),
        ("164.502", ["a", "1", "xx"], ("164.502(a)(1)", False)),
        ("164.502", [], ("164.502", True)),
        ("199.1", ["a"], (None, False)),
        ("Appendix A to Subpart C of Part 164", ["a"], ("Appendix A to Subpart C of Part 164", False)),
    ],
)  # fmt: skip
def test_tree_resolves_through_the_type(tree, section, labels, expected) -> None:
    assert tree.resolve_labels(section, labels) == expected
    if RegId.parse(section).section is not None:
        assert tree.resolve(RegId.in_section(section, labels)) == expected


def test_section_of_is_the_ids_section(tree) -> None:
    for node in tree:
        held = tree.section_of(node.id)
        expected = node.id if node.kind == "appendix" else RegId.parse(node.id).section
        assert (held.id if held else None) == expected


# --------------------------------------------------------------------------- ids in free text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Relevant: 45 CFR §164.512(f)(1), Section 164.502(a) and 164.506 (c)(1).",
         ["164.512(f)(1)", "164.502(a)", "164.506(c)(1)"]),
        ("164.512( f )( 1 )", ["164.512(f)(1)"]),
        ("see 160.103(Health maintenance organization (HMO))(1).",
         ["160.103(Health maintenance organization (HMO))(1)"]),
        ("164.512 (the public interest exceptions)", ["164.512(the public interest exceptions)"]),
        ("Part 164, 42 U.S.C. 1320d and 170.315(a)", []),
        ("164.50211 or 1164.502 or 2.164.502", []),
        ("164.5021 and 164.502.", ["164.5021", "164.502"]),
        ('{"regulations": ["164.502(a)", "164.999(b)"]}', ["164.502(a)", "164.999(b)"]),
    ],
)  # fmt: skip
def test_ids_in(text: str, expected: list[str]) -> None:
    found = ids_in(text)
    assert [str(f.id) for f in found] == expected
    assert all(text[f.start : f.end] == f.text for f in found)
    assert find_ids(text) == expected  # agent-id reads ids with the same finder


def test_ids_in_finds_every_id_of_the_tree(tree) -> None:
    for node in tree:
        if node.kind in ("section", "paragraph"):
            assert [str(f.id) for f in ids_in(f"As § {node.id} says, ...")] == [node.id]


# The readers that kg/citations.ids_in replaced, kept here to show it reads real data as they did.
OLD_AGENT_ID = re.compile(
    r"(?<![\d.])(16[024])\s*\.\s*(\d{3,4})(?!\d)"
    r"((?:\s?\(\s*[A-Za-z0-9][A-Za-z0-9 ,'’-]{0,60}?\s*\))*)"
)
OLD_AGENT_LABEL = re.compile(r"\(\s*([A-Za-z0-9][A-Za-z0-9 ,'’-]{0,60}?)\s*\)")
OLD_GOLD_ID = re.compile(r"\b1[6][024]\.\d{3,4}(?:\([^()\s]{1,40}\))*")


def old_find_ids(text: str) -> list[str]:
    out = []
    for m in OLD_AGENT_ID.finditer(text):
        labels = [" ".join(label.split()) for label in OLD_AGENT_LABEL.findall(m.group(3) or "")]
        out.append(f"{m.group(1)}.{m.group(2)}" + "".join(f"({label})" for label in labels))
    return out


def real_texts(tree, shared: Path) -> list[str]:
    """The law's own texts (full of citations) and every cell of the case files."""
    texts = [n.text for n in tree if n.text]
    for path in sorted((shared / "cases").glob("*.csv")):
        with path.open(encoding="utf-8-sig", newline="") as handle:
            texts += [v for row in csv.DictReader(handle) for v in row.values() if v]
    return texts


def test_agent_id_reads_real_text_as_before(tree, shared: Path) -> None:
    texts = real_texts(tree, shared)
    assert sum(bool(old_find_ids(t)) for t in texts) > 1000
    for text in texts:
        assert find_ids(text) == old_find_ids(text), text[:200]
    sample = [t for t in texts if old_find_ids(t)][:300]
    for text in sample:  # checked against the tree the same way
        assert check_ids(tree, [text]).valid == check_ids(tree, old_find_ids(text)).valid


def test_gold_regulations_read_as_before(tree, shared: Path) -> None:
    cells = []
    for path in sorted((shared / "cases").glob("*.csv")):
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for row in csv.DictReader(handle):
                cells += [row.get(c) or "" for c in ("refer_id", "generate_regulation_ids")]
        cases = read_cases(path)
        for case in cases:
            assert all(str(RegId.parse(g)) == g and g in tree for g in gold_ids(case))
    for cell in cells:
        if cell and not cell.lstrip().startswith("["):
            assert [str(f.id) for f in ids_in(cell)] == OLD_GOLD_ID.findall(cell)


def old_found(retrieved: str, gold: str, level: str) -> bool:
    if level == "section":
        return retrieved.split("(")[0] == gold.split("(")[0]
    return retrieved == gold or retrieved.startswith(gold + "(")


def test_retrieval_scores_match_as_before(shared: Path) -> None:
    kb = kbmod.load(None)
    docs = [d.node for d in documents(kb)]
    golds = sorted(
        {
            g
            for path in (shared / "cases").glob("*.csv")
            for c in read_cases(path)
            for g in gold_ids(c)
        }
    )
    assert len(golds) > 300
    for gold in golds:
        near = [d for d in docs if d.split("(")[0] == gold.split("(")[0]] + docs[::97]
        for retrieved in near:
            for level in ("section", "paragraph"):
                assert _found(retrieved, gold, level) == old_found(retrieved, gold, level)


# --------------------------------------------------------------------------- search, did you mean


@pytest.mark.parametrize(
    ("typo", "first", "also"),
    [
        ("164.502(a)(1)(ix)", "164.502(a)(1)(i)", "164.502(a)(1)"),  # alike, then the ancestor
        ("164.502(z)", "164.502(a)", "164.502"),
        ("164.502(a)(9)(z)", None, "164.502(a)"),
        ("164.502(a", "164.502(a)", "164.502"),  # not a whole id: the id in it
        ("164.502(A)", "164.502(a)", None),  # another case
        ("160.103(business associate)", "160.103(Business associate)", "160.103"),
        ("§ 164.502(a)", "164.502(a)", None),  # another spelling of an existing id: that alone
        ("45 CFR part 164", "Part 164", None),
        ("999.999", None, None),
        ("<script>alert(1)</script>", None, None),
        ("x" * 50_000, None, None),
    ],
)
def test_did_you_mean(tree, typo: str, first: str | None, also: str | None) -> None:
    close = did_you_mean(tree, typo)
    assert len(close) <= SUGGESTIONS and len(set(close)) == len(close)
    assert all(c in tree and c != "HIPAA" for c in close)
    if first is not None:
        assert close[0] == first
    if also is not None:
        assert also in close
    if first is None and also is None and typo[:3] != "164":
        assert close == []
    message = unknown_id(tree, typo)
    assert message.count("\n") == 0
    assert ("did you mean " + ", ".join(close) + "?" in message) is bool(close)


def test_cli_and_browser_suggest_the_same(tree) -> None:
    """``pcheck show`` (kb.node) and the Regulation page (unknown_suggestions) both ask
    kg.search.did_you_mean."""
    kb = kbmod.load(None)
    for typo in ("164.502(z)", "164.502(a)(9)(z)", "164.502(A)", "164.502(a"):
        with pytest.raises(KeyError) as caught:
            kb.node(typo)
        assert caught.value.args[0] == unknown_id(tree, typo)


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("164.502(a)", "164.502(a)"),
        ("§ 164.502", "164.502"),
        ("Section 164.502(a)", "164.502(a)"),
        ("45 CFR 164.512(f)(1)", "164.512(f)(1)"),
        ("part 164 subpart e", "Part 164 Subpart E"),
        ("psychotherapy notes", None),
    ],
)
def test_search(tree, query: str, first: str | None) -> None:
    found = TreeSearch(tree).search(query, 5)
    assert found and len(found) <= 5
    if first is not None:
        assert found[0].id == first
    assert TreeSearch(tree).search("   ") == [] and TreeSearch(tree).search("x" * 50_000) == []
