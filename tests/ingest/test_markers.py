"""Marker kinds, label paths and citation continuation: table-driven."""

from __future__ import annotations

import pytest

from privacy_checklist.ingest.markers import (
    ARABIC,
    ITALIC_ARABIC,
    ITALIC_ROMAN,
    LOWER,
    ROMAN,
    UPPER,
    continue_path,
    kinds_of,
    label_kind_ok,
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
