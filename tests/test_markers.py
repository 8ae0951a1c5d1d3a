"""Marker kinds, depth derivation and citation continuation: table-driven."""

from __future__ import annotations

import pytest

from privacy_checklist.ingest.markers import (
    ARABIC,
    ITALIC_ARABIC,
    ITALIC_ROMAN,
    LOWER,
    ROMAN,
    UPPER,
    Marker,
    continue_path,
    derive_depths,
    find_markers,
    int_to_roman,
    kinds_of,
    label_kind_ok,
    marker_at,
    roman_to_int,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("i", 1),
        ("ii", 2),
        ("iv", 4),
        ("v", 5),
        ("ix", 9),
        ("x", 10),
        ("xiv", 14),
        ("xvi", 16),
        ("xix", 19),
        ("xxxix", 39),
        ("a", None),
        ("iiii", None),
        ("vx", None),
        ("", None),
    ],
)
def test_roman_to_int(text: str, value: int | None) -> None:
    assert roman_to_int(text) == value


@pytest.mark.parametrize("value", range(1, 40))
def test_roman_round_trip(value: int) -> None:
    assert roman_to_int(int_to_roman(value)) == value


@pytest.mark.parametrize(
    ("marker", "italic", "kinds"),
    [
        ("a", False, (LOWER,)),
        ("h", False, (LOWER,)),
        ("i", False, (ROMAN, LOWER)),  # the classic ambiguity
        ("v", False, (ROMAN, LOWER)),
        ("x", False, (ROMAN, LOWER)),
        ("ii", False, (ROMAN, LOWER)),  # roman 2, or the 35th letter (the CFR doubles past z)
        ("aa", False, (LOWER,)),
        ("1", False, (ARABIC,)),
        ("1", True, (ITALIC_ARABIC,)),
        ("i", True, (ITALIC_ROMAN,)),
        ("A", False, (UPPER,)),
        ("Business associate", False, ()),
        ("", False, ()),
    ],
)
def test_kinds_of(marker: str, italic: bool, kinds: tuple[str, ...]) -> None:
    assert kinds_of(marker, italic) == kinds


@pytest.mark.parametrize(
    ("kind", "position", "marker"),
    [
        (LOWER, 1, "a"),
        (LOWER, 9, "i"),
        (LOWER, 27, "aa"),
        (ARABIC, 12, "12"),
        (ROMAN, 4, "iv"),
        (UPPER, 3, "C"),
        (ITALIC_ROMAN, 2, "ii"),
    ],
)
def test_marker_at(kind: str, position: int, marker: str) -> None:
    assert marker_at(kind, position) == marker


def _m(text: str, italic: bool = False) -> Marker:
    return Marker(text, italic)


A_TO_H = list("abcdefgh")
A_TO_U = list("abcdefghijklmnopqrstu")


@pytest.mark.parametrize(
    ("markers", "depths"),
    [
        # (a)(1)(i)(A)(1)(i): six levels, the last two in italics
        ([_m("a"), _m("1"), _m("i"), _m("A"), _m("1", True), _m("i", True)], [1, 2, 3, 4, 5, 6]),
        # back up from deep nesting to a sibling at level 2
        (["a", "1", "i", "ii", "2"], [1, 2, 3, 3, 2]),
        # (i) right after (h) is the ninth letter
        (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], [1] * 10),
        # (i) under (h)(1) is a roman numeral, and (ii) confirms it
        ([*A_TO_H, "1", "i", "ii"], [1] * 8 + [2, 3, 3]),
        # (i) after (h)(1) followed by (j): the letter, decided by the next marker
        ([*A_TO_H, "1", "i", "j"], [1] * 8 + [2, 1, 1]),
        # (i) after (h)(2) followed by (1): the letter again, (1) its first child
        ([*A_TO_H, "1", "2", "i", "1"], [1] * 8 + [2, 2, 1, 2]),
        # (v) after (u) is a letter; after (iv) a numeral
        ([*A_TO_U, "v"], [1] * 22),
        (["a", "1", "i", "ii", "iii", "iv", "v"], [1, 2, 3, 3, 3, 3, 3]),
        # upper-case letters at level 4
        (["a", "1", "i", "A", "B", "ii"], [1, 2, 3, 4, 4, 3]),
    ],
)
def test_derive_depths(markers: list, depths: list[int]) -> None:
    assert derive_depths(markers) == depths


@pytest.mark.parametrize(
    "markers",
    [
        ["a", "c"],  # (b) skipped
        ["a", "2"],  # (1) skipped
        ["b"],  # a list must start at (a)
        ["a", "1", "A"],  # a skipped level: no (i) between (1) and (A)
    ],
)
def test_derive_depths_rejects_skips(markers: list[str]) -> None:
    with pytest.raises(ValueError, match="cannot follow"):
        derive_depths(markers)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("(a)(1)(i) To the individual;", ["a", "1", "i"]),
        ("(b) text (c)", ["b"]),
        ("No marker", []),
        ("(Business associate)", []),
    ],
)
def test_find_markers(text: str, found: list[str]) -> None:
    assert [m.text for m in find_markers(text)] == found


@pytest.mark.parametrize(
    ("previous", "chain", "full"),
    [
        (["b", "2"], ["3"], ["b", "3"]),  # paragraphs (b)(2) and (3)
        (["e", "2"], ["e", "4"], ["e", "4"]),  # (e)(2) through (e)(4)
        (["a"], ["f"], ["f"]),  # (a) through (f)
        (["h"], ["i"], ["i"]),  # (h) and (i): the letter
        (["c", "2", "i"], ["iii"], ["c", "2", "iii"]),  # (c)(2)(i) through (iii)
        (["f", "1", "ii", "A"], ["C"], ["f", "1", "ii", "C"]),  # (A)-(C)
        (["1", "i"], ["xvi"], ["1", "xvi"]),  # under a definition: (1)(i)–(xvi)
        (["c", "2", "ii"], ["3", "ii"], ["c", "3", "ii"]),  # (c)(2)(ii) and (3)(ii)
        (["a"], [], ["a"]),
    ],
)
def test_continue_path(previous: list[str], chain: list[str], full: list[str]) -> None:
    assert continue_path(previous, chain) == full


@pytest.mark.parametrize(
    ("labels", "ok"),
    [
        (["a", "1", "i", "A", "1", "i"], True),
        (["a", "5", "i", "A", "1"], True),  # italic (1) at level 5
        (["c", "1", "A"], False),  # 164.404(c)(1)(A): the roman level is skipped
        (["Business associate", "1", "i"], True),  # a defined term, then its own list
        (["a", "Summary health information", "1"], True),  # a term inside a paragraph
        (["1"], False),
        (["a", "1", "i", "A", "1", "i", "A"], False),  # deeper than six levels
    ],
)
def test_label_kind_ok(labels: list[str], ok: bool) -> None:
    assert label_kind_ok(labels) is ok
