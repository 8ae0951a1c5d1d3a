"""Paragraph markers of the CFR: their kinds and their order.

The CFR nests paragraphs six levels deep: ``(a)`` lower-case letters, ``(1)`` arabic numbers,
``(i)`` lower-case roman numerals, ``(A)`` upper-case letters, then italic ``(1)`` and italic
``(i)``. The eCFR pages give every paragraph its id (``164.502(a)(1)(i)``), so the tree is
built from those ids (:func:`privacy_checklist.kg.tree.build_tree`), not from markers by
regulations-parser's marker → depth → stack stages: those need the page's italics, which
neither the ids nor the parsed page keep. This module answers three questions instead:

- :func:`label_kind_ok`: whether an id's labels are of the kinds their depths call for (a, 1,
  i, A, 1, i); the tree records a path that is not as a ``marker-kind`` anomaly;
- :func:`kinds_of`: the kinds a label can be, and none for a defined term's label
  (``160.103(Business associate)``), which is how citations, definitions and norms tell the two
  apart;
- :func:`continue_path`: the full path of an abbreviated citation ("paragraphs (b)(2) and
  (3)"). The classic trap is a marker such as ``(i)``, ``(v)`` or ``(x)``, which is a letter
  after ``(h)`` / ``(u)`` / ``(w)`` and a roman numeral elsewhere; it is settled by the marker
  before it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

LOWER = "lower"  # (a)
ARABIC = "arabic"  # (1)
ROMAN = "roman"  # (i)
UPPER = "upper"  # (A)
ITALIC_ARABIC = "italic_arabic"  # (1) in italics
ITALIC_ROMAN = "italic_roman"  # (i) in italics

#: The kind of marker at each depth, depth 1 first.
LEVELS: tuple[str, ...] = (LOWER, ARABIC, ROMAN, UPPER, ITALIC_ARABIC, ITALIC_ROMAN)

_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_ROMAN_RE = re.compile(r"^(?:x{0,3})(?:ix|iv|v?i{0,3})$")


def roman_to_int(text: str) -> int | None:
    """The value of a lower-case roman numeral up to 39, or None when ``text`` is not one."""
    if not text or not _ROMAN_RE.match(text):
        return None
    total = 0
    for here, after in zip(text, [*text[1:], ""], strict=True):
        value = _ROMAN_VALUES[here]
        total += -value if after and _ROMAN_VALUES[after] > value else value
    return total


def _letter_index(text: str) -> int | None:
    """a=1 ... z=26, then aa=27 ... (the CFR doubles letters past z)."""
    if not text or len(set(text)) != 1 or not text.isalpha():
        return None
    return (ord(text[0].lower()) - ord("a") + 1) + 26 * (len(text) - 1)


def kinds_of(marker: str, italic: bool = False) -> tuple[str, ...]:
    """Every kind a marker text can be, the most likely first.

    Args:
        marker: the marker's text without parentheses, e.g. ``"i"``, ``"2"``, ``"A"``.
        italic: whether the page sets it in italics (levels 5 and 6).

    Returns:
        The possible kinds; empty when the text is no paragraph marker at all.
    """
    if marker.isdigit():
        return (ITALIC_ARABIC,) if italic else (ARABIC,)
    kinds: list[str] = []
    if marker.islower():
        if roman_to_int(marker) is not None:
            kinds.append(ITALIC_ROMAN if italic else ROMAN)
        if not italic and _letter_index(marker) is not None:
            kinds.append(LOWER)
    elif marker.isupper() and _letter_index(marker) is not None:
        kinds.append(UPPER)
    return tuple(kinds)


def ordinal(marker: str, kind: str) -> int | None:
    """The position of ``marker`` within its kind's sequence (1 for a, 1, i, A)."""
    if kind in (ARABIC, ITALIC_ARABIC):
        return int(marker) if marker.isdigit() else None
    if kind in (ROMAN, ITALIC_ROMAN):
        return roman_to_int(marker)
    if kind in (LOWER, UPPER):
        return _letter_index(marker)
    raise ValueError(f"unknown marker kind {kind!r}; expected one of {LEVELS}")


def continue_path(previous: Sequence[str], chain: Sequence[str]) -> list[str]:
    """Complete an abbreviated citation from the one before it.

    In "paragraphs (b)(2) and (3)" or "(e)(2) through (e)(4)" the second citation may give only
    its last levels. The chain is placed at the deepest level of ``previous`` whose marker is of
    a kind the chain's first marker can be, preferring a level where the chain's marker comes
    later in the sequence (so ``(i)`` after ``(h)`` is a letter, after ``(1)(i)`` a numeral).
    Kinds are read from the markers themselves, so paths under a defined term
    (``["1", "i"]`` of "paragraph (1)(i)–(xvi) of this definition") work as well.

    Args:
        previous: the full label path of the citation before, e.g. ``["b", "2"]``.
        chain: the markers given, e.g. ``["3"]``.

    Returns:
        The full label path, e.g. ``["b", "3"]``; the chain itself when no level fits.
    """
    if not chain:
        return list(previous)
    first = chain[0]
    first_kinds = set(kinds_of(first))
    fallback: int | None = None
    for depth in range(len(previous), 0, -1):
        shared = [k for k in kinds_of(previous[depth - 1]) if k in first_kinds]
        for kind in shared:
            before, here = ordinal(previous[depth - 1], kind), ordinal(first, kind)
            if before is not None and here is not None and here > before:
                return [*previous[: depth - 1], *chain]
        if shared and fallback is None:
            fallback = depth
    if fallback is None:
        return list(chain)
    return [*previous[: fallback - 1], *chain]


def label_kind_ok(labels: Sequence[str]) -> bool:
    """True when each label of a path is a marker of the kind its depth calls for.

    A path under a defined term (``["Business associate", "1", "i"]``) starts its markers at
    whichever level its first marker fits (arabic numbers, usually).
    """
    terms = [i for i, label in enumerate(labels) if not kinds_of(label)]
    if terms:
        rest = list(labels[terms[-1] + 1 :])
        if not rest:
            return True
        starts = [d for d, kind in enumerate(LEVELS) if kind in _any_kind(rest[0])]
        return any(_fits(rest, start) for start in starts)
    return _fits(list(labels), 0)


def _any_kind(label: str) -> tuple[str, ...]:
    """Kinds a label of an id can be: ids do not say whether a marker was set in italics."""
    return kinds_of(label) + kinds_of(label, italic=True)


def _fits(labels: list[str], start: int) -> bool:
    if start + len(labels) > len(LEVELS):
        return False
    return all(LEVELS[start + i] in _any_kind(label) for i, label in enumerate(labels))
