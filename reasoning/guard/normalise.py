"""Text as the guard reads it: what people write to slip past a matcher, undone before matching,
with every character traced back to where it stood (issue 28).

:func:`normalise` gives the text the readers see and, for each of its characters, the range
of the original it came from, so a span found in it is a span of the original
(:meth:`Normalised.original`) and the rewrite changes what the person wrote:

- characters that show nothing (zero-width spaces and joiners, the byte-order mark, soft
  hyphens) are dropped: "Ma\u200brta" is "Marta";
- ``&nbsp;``, ``&amp;`` and the like become their characters (a message in HTML is read as
  its text, each block ending a line, before it comes here: ``message.check_message``);
- digits or capitals spelled out one by one ("2 1 9-0 9-9 9 9 9", "S S N") are closed up;
- digits said in words, one by one ("two one nine, zero nine, nine nine nine nine" is
  "219-09-9999": a comma or hyphen between them is a hyphen), and a year said in words
  ("nineteen fifty-two" is "1952"), so a number read aloud meets the same recognizers;
- " at " and " dot " in an address ("mary dot jones at gmail dot com", "(at)", "[dot]") become
  "@" and ".".
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

#: the HTML elements that end a line when a message's markup is read as its text
BLOCKS = ("br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote")
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_BLOCK = re.compile(r"(?i)<\s*(?:br|/?p|/div|/li|/tr|/h[1-6]|/ul|/ol|/table|/blockquote)\b[^>]*>")
_TAG = re.compile(r"<\s*/?\s*[A-Za-z][^<>]{0,200}>")
_ENTITY = re.compile(r"&(?:#\d{1,6}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
#: three or more single digits or capitals, one space or a hyphen between each ("K 3.6"
#: and "B12 1 mg" are not spelled out)
_SPELLED = re.compile(r"(?<![\w.])(?:[0-9A-Z](?: ?- ?| )){2,}[0-9A-Z](?!\w|\.\w)")
_DIGITS = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = {"twenty": 2, "thirty": 3, "forty": 4, "fifty": 5, "sixty": 6, "seventy": 7,
         "eighty": 8, "ninety": 9}  # fmt: skip
_ONE = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_UNIT = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEEN = "(?:" + "|".join(_TEENS) + ")"
_TEN = "(?:" + "|".join(_TENS) + ")"
#: a number under a hundred said as one: "thirteen", "forty-eight", "seventy two"
_PAIR = rf"(?:{_TEEN}|{_TEN}(?:-|\s+){_UNIT}|{_TEN}(?!(?:-|\s+){_UNIT}\b))"
_SAID = rf"(?:{_PAIR}|(?:double|triple)\s+{_ONE}|{_ONE})"
_GAP = r"(?:\s*[,-]\s*|\s+)"
_NOT_TIME = r"(?!\s*(?:am|pm|a\.m\.|p\.m\.|o'clock)(?!\w))"
#: digits said in words: two numbers or more ("two one nine", "thirteen forty-eight", "oh oh
#: seven"), one said "double" or "triple", or a message that is only a number ("seventy-two");
#: "oh" opens a run only before two more ("Oh, nine of ten" is not a number)
_SAID_DIGITS = re.compile(
    rf"(?i)\b(?:(?:double|triple)\s+{_ONE}(?:{_GAP}{_SAID})*"
    rf"|(?:oh\s+(?={_SAID}\s+{_SAID}\b)|(?!oh\b)){_SAID}(?:{_GAP}{_SAID})+)\b{_NOT_TIME}"
    rf"|^\W*{_SAID}(?=\W*$)"
)
_TWO = rf"(?:{_TEEN}|{_TEN}(?:[\s-]+{_UNIT})?|oh[\s-]+{_UNIT}|hundred)"
#: a year said in words: "nineteen fifty-two", "nineteen oh five", "two thousand and nine"
_SAID_YEAR = re.compile(
    rf"(?i)\b(?:(?:nineteen|eighteen|twenty)[\s-]+{_TWO}"
    rf"|two\s+thousand(?:\s+and)?(?:[\s-]+(?:{_TEEN}|{_TEN}(?:[\s-]+{_UNIT})?|{_UNIT}))?)\b"
)
_AT = r"\s*(?:\(at\)|\[at\]|\bat\b)\s*"
_DOT = r"\s*(?:\(dot\)|\[dot\]|\bdot\b)\s*"
_TOP = r"(?:com|org|net|edu|gov|io|us|co|uk|ca|info|biz|me)"
#: an address spelled out: at least one "at" or "dot" in words, ending in a top-level domain
_MAILBOX = re.compile(
    rf"(?i)\b[\w+-]+(?:(?:{_DOT}|\.)[\w+-]+)*{_AT}[\w-]+(?:(?:{_DOT}|\.)[\w-]+)*"
    rf"(?:{_DOT}|\.){_TOP}\b"
)


@dataclass(frozen=True)
class Normalised:
    """The text the readers see, and where each of its characters came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The range of the original text that ``text[start:end]`` came from."""
        if end <= start:
            at = self.starts[start] if start < len(self.starts) else (self.ends or (0,))[-1]
            return at, at
        return self.starts[start], self.ends[end - 1]


def _sub(
    found: Normalised, pattern: re.Pattern[str], new: Callable[[re.Match[str]], str]
) -> Normalised:
    """Each match replaced by ``new(match)``, its characters traced to the match's range."""
    text: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for match in pattern.finditer(found.text):
        a, b = match.span()
        text.append(found.text[at:a])
        starts.extend(found.starts[at:a])
        ends.extend(found.ends[at:a])
        replacement = new(match)
        if replacement and b > a:
            text.append(replacement)
            starts.extend([found.starts[a]] * len(replacement))
            ends.extend([found.ends[b - 1]] * len(replacement))
        at = b
    text.append(found.text[at:])
    starts.extend(found.starts[at:])
    ends.extend(found.ends[at:])
    return Normalised("".join(text), tuple(starts), tuple(ends))


def _closed(match: re.Match[str]) -> str:
    """Characters spelled out closed up: digits keep their hyphens (a number's groups),
    capitals lose them ("M-R-N" is "MRN")."""
    spelled = match.group().replace(" ", "")
    return spelled.replace("-", "") if not re.search(r"\d", spelled) else spelled


def _digits(match: re.Match[str]) -> str:
    out = []
    for part in re.finditer(
        rf"(?i)(?P<pair>{_PAIR})|(?P<times>double|triple)\s+(?P<of>\w+)|(?P<one>{_ONE})"
        r"|(?P<gap>\s*[,-]\s*)",
        match.group(),
    ):
        if part.group("pair"):
            words = re.split(r"[\s-]+", part.group("pair").lower())
            out.append(f"{_two(words):02d}")
        elif part.group("times"):
            times = 2 if part.group("times").lower() == "double" else 3
            out.append(_DIGITS[part.group("of").lower()] * times)
        elif part.group("one"):
            out.append(_DIGITS[part.group("one").lower()])
        elif part.group("gap") and out:
            out.append("-")
    return "".join(out)


def _two(words: list[str]) -> int:
    """The number of one to two words under a hundred ("fifty two", "oh five", "twelve")."""
    if not words:
        return 0
    if words[0] == "oh":
        return int(_DIGITS[words[1]])
    if words[0] in _TEENS:
        return 10 + _TEENS.index(words[0])
    if words[0] in _TENS:
        return _TENS[words[0]] * 10 + (int(_DIGITS[words[1]]) if len(words) > 1 else 0)
    return int(_DIGITS[words[0]])


def _year(match: re.Match[str]) -> str:
    words = [w for w in re.split(r"[\s-]+", match.group().lower()) if w and w != "and"]
    if words[:2] == ["two", "thousand"]:
        return str(2000 + _two(words[2:]))
    century = {"eighteen": 18, "nineteen": 19, "twenty": 20}[words[0]]
    return str(century * 100 + (0 if words[1] == "hundred" else _two(words[1:])))


def _mailbox(match: re.Match[str]) -> str:
    words = re.sub(_DOT, ".", match.group(), flags=re.I)
    return re.sub(_AT, "@", words, flags=re.I)


def normalise(text: str) -> Normalised:
    """The text with what hides an identifier undone (the module docstring)."""
    found = Normalised(text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))
    if _INVISIBLE.search(text):
        found = _sub(found, _INVISIBLE, lambda m: "")
    if "&" in text:
        found = _sub(found, _ENTITY, lambda m: html.unescape(m.group()).replace("\xa0", " "))
    found = _sub(found, _SPELLED, _closed)
    if _SAID_YEAR.search(found.text):
        found = _sub(found, _SAID_YEAR, _year)
    if _SAID_DIGITS.search(found.text):
        found = _sub(found, _SAID_DIGITS, _digits)
    if re.search(r"(?i)\bat\b|\(at\)|\[at\]", found.text):
        found = _sub(found, _MAILBOX, _mailbox)
    return found


def read_through(text: str, read: Callable[[str], list[Any]]) -> list[Any]:
    """``read`` (text -> spans with ``start`` and ``end``) applied to the normalised text, its
    spans moved back onto ``text`` (each then covers what the person wrote)."""
    found = normalise(text)
    if found.text == text:
        return read(text)
    spans = []
    for span in read(found.text):
        start, end = found.original(span.start, span.end)
        spans.append(replace(span, start=start, end=end, text=text[start:end]))
    return spans


def html_text(text: str) -> str:
    """An HTML message read as its text (an email's body pasted with its markup)."""
    import lxml.html

    root = lxml.html.fromstring(text)
    for node in root.iter("script", "style"):
        node.drop_tree()
    for node in root.iter(*BLOCKS):  # a block ends a line: its last word and the next apart
        node.tail = "\n" + (node.tail or "")
    lines = (" ".join(line.split()) for line in str(root.text_content()).splitlines())
    return "\n".join(line for line in lines if line)
