"""Paragraph markers of the CFR: their kinds, their order, and the depth a marker sits at.

The CFR nests paragraphs six levels deep: ``(a)`` lower-case letters, ``(1)`` arabic numbers,
``(i)`` lower-case roman numerals, ``(A)`` upper-case letters, then italic ``(1)`` and italic
``(i)``. Three stages, each testable alone (after eregs' regulations-parser): find the markers,
derive each marker's depth, then build a hierarchy with a stack. The classic trap is a marker
such as ``(i)``, ``(v)`` or ``(x)``, which is a letter after ``(h)`` / ``(u)`` / ``(w)`` and a
roman numeral elsewhere; :func:`derive_depths` settles it from the markers around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


def int_to_roman(value: int) -> str:
    """Lower-case roman numeral for 1..39."""
    if not 1 <= value <= 39:
        raise ValueError(f"roman numerals are supported from 1 to 39, not {value}")
    tens, ones = divmod(value, 10)
    units = ["", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix"]
    return "x" * tens + units[ones]


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


def marker_at(kind: str, position: int) -> str:
    """The marker text at ``position`` (1-based) of a kind: ``marker_at(ROMAN, 3) == "iii"``."""
    if kind in (ARABIC, ITALIC_ARABIC):
        return str(position)
    if kind in (ROMAN, ITALIC_ROMAN):
        return int_to_roman(position)
    letters, index = divmod(position - 1, 26)
    letter = chr(ord("a") + index) * (letters + 1)
    return letter.upper() if kind == UPPER else letter


def is_successor(previous: str, marker: str, kind: str) -> bool:
    """True when ``marker`` comes right after ``previous`` in the sequence of ``kind``."""
    a, b = ordinal(previous, kind), ordinal(marker, kind)
    return a is not None and b is not None and b == a + 1


@dataclass(frozen=True, slots=True)
class Marker:
    """One paragraph marker, as found in text, with its place."""

    text: str
    italic: bool = False
    start: int = -1
    end: int = -1


_MARKER_RE = re.compile(r"\((?P<m>[a-z]{1,4}|[A-Z]{1,2}|\d{1,3})\)")


def find_markers(text: str) -> list[Marker]:
    """The run of markers at the start of ``text``: ``"(a)(1)(i) To the"`` gives a, 1, i."""
    out: list[Marker] = []
    pos = 0
    while True:
        m = _MARKER_RE.match(text, pos)
        if not m or not kinds_of(m.group("m")):
            return out
        out.append(Marker(m.group("m"), False, m.start(), m.end()))
        pos = m.end()


def derive_depths(markers: Sequence[Marker | str]) -> list[int]:
    """The depth (1..6) of each marker in a sequence of consecutive paragraphs.

    Each marker either goes one level deeper (it must then be the first of the next level's
    kind: a, 1, i, A), or continues the sequence at a level already open (it must then follow
    the marker last seen at that level). Where both readings fit, as ``(i)`` after ``(h)(1)``,
    the next marker decides: ``(ii)`` makes it roman, ``(j)`` or ``(1)`` a letter; without
    one, continuing the deepest open level wins, then going deeper, then the shallower levels.

    Args:
        markers: marker texts or :class:`Marker` objects, in document order.

    Returns:
        One depth per marker, 1-based.

    Raises:
        ValueError: a marker fits no level (a skipped or unknown marker); the message names it.
    """
    items = [m if isinstance(m, Marker) else Marker(m) for m in markers]
    open_levels: list[str] = []  # marker text last seen at each open level
    depths: list[int] = []
    for index, marker in enumerate(items):
        options = _options(open_levels, marker)
        if not options:
            path = "".join(f"({m})" for m in open_levels)
            raise ValueError(
                f"marker ({marker.text}) cannot follow {path or 'the start'}: it is neither the "
                f"next marker of an open level nor the first marker of a new one"
            )
        depth = options[0]
        if len(options) > 1 and index + 1 < len(items):
            nxt = items[index + 1]
            fitting = [d for d in options if _options([*open_levels[: d - 1], marker.text], nxt)]
            depth = fitting[0] if fitting else depth
        del open_levels[depth - 1 :]
        open_levels.append(marker.text)
        depths.append(depth)
    return depths


def _options(open_levels: list[str], marker: Marker) -> list[int]:
    """Depths ``marker`` can take after the open levels, best first."""
    kinds = kinds_of(marker.text, marker.italic)
    deepest = len(open_levels)
    continuing = [
        depth
        for depth in range(deepest, 0, -1)
        if LEVELS[depth - 1] in kinds
        and is_successor(open_levels[depth - 1], marker.text, LEVELS[depth - 1])
    ]
    options: list[int] = []
    if continuing and continuing[0] == deepest:
        options.append(deepest)
    if (
        deepest < len(LEVELS)
        and LEVELS[deepest] in kinds
        and ordinal(marker.text, LEVELS[deepest]) == 1
    ):
        options.append(deepest + 1)
    options.extend(d for d in continuing if d not in options)
    return options


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
