"""The learned identifier tagger: which words of a text are a person's identifier, and of what
type, read word by word by a conditional random field (CRFsuite, ``python-crfsuite``).

Each word is read by its own form (lower-cased, its shape: ``Xxxx``, ``XXXX``, ``dd/dd``), its
first and last letters, what the word lists say of it (:mod:`.lexicon`: a common first name or
surname somewhere, a place, an English word) and the same of the two words either side, and
where it sits (a line's start, after a colon). Fitted on the writers' labelled notes, questions
(``bench/data/guard_text``) by ``python -m privacy_checklist.reasoning.guard.tagger_fit``
(:mod:`.tagger_fit`), measured leaving whole writers out (``bench/guard_text/tagger_lwo.py``
and, in the guard, ``bench/guard_text/measure.py``). The shipped model is
``reasoning/data/identifier_tagger.crfsuite``.

Why learned: the words that mark an identifier in clinical text are a matter of usage ("WIFE
MARTA CALLED", "DR. OKAFOR", "TOL CLEARS" is not one), which hand-written capital-run rules read
wrongly in both directions on writers they were not written against.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privacy_checklist.reasoning.guard.lexicon import lexicon, states
from privacy_checklist.reasoning.text import data_path

MODEL = "identifier_tagger.crfsuite"
#: the writers' types, as the tagger reads them (the guard's own type names)
TYPES = {
    "NAME": "NAME",
    "DATE": "DATE",
    "AGE_OVER_89": "AGE",
    "PHONE": "PHONE",
    "FAX": "FAX",
    "EMAIL": "EMAIL",
    "URL": "URL",
    "IP": "IP",
    "ID": "ID",
    "SSN": "ID",
    "MRN": "ID",
    "HEALTH_PLAN_NUMBER": "ID",
    "ACCOUNT": "ID",
    "LICENSE": "ID",
    "VEHICLE": "ID",
    "DEVICE": "ID",
    "OTHER_ID": "ID",
    "ADDRESS": "ADDRESS",
    "LOCATION": "LOCATION",
    "HOSPITAL": "HOSPITAL",
}
_FLAG = re.compile(r"([FLPW])(\d?)")
_TOKEN = re.compile(r"[^\W_]+(?:[.'’@/:-][^\W_]+)*|\S")


#: the tagger's types as the guard's identifier types (``ontologies/phi.json``); ``ID`` is
#: typed by the words before it (``PhiReader``), an age only when it is over 89 (the law's line)
GUARD_TYPES = {
    "NAME": "NAME",
    "DATE": "DATE",
    "AGE": "AGE_OVER_89",
    "PHONE": "PHONE",
    "FAX": "FAX",
    "EMAIL": "EMAIL",
    "URL": "URL",
    "IP": "IP",
    "ID": "OTHER_ID",
    "ADDRESS": "ADDRESS",
    "LOCATION": "ADDRESS",
    "HOSPITAL": "FACILITY",
}
#: the number words under a hundred (the fitting writes ages in them, :func:`number` reads them)
ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen \
fifteen sixteen seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS = {
    **{w: n for n, w in enumerate(ONES)},
    **{w: 10 * n for n, w in enumerate(TENS) if n > 1},
}


def number(words: str) -> int | None:
    """The first number a span states, in figures ("93", "91F") or in words ("ninety-three",
    "a hundred and two"); None when it states none."""
    digits = re.search(r"\d+", words)
    if digits:
        return int(digits.group())
    total, seen = 0, False
    for word in re.findall(r"[a-z]+", words.lower()):
        if word in ("a", "and"):
            continue
        if word == "hundred":
            total, seen = max(total, 1) * 100, True
        elif word in _NUMBER_WORDS:
            total, seen = total + _NUMBER_WORDS[word], True
        elif seen:
            break
    return total if seen else None


@dataclass(frozen=True)
class Tagged:
    start: int
    end: int
    type: str
    text: str

    @property
    def guard_type(self) -> str | None:
        """The guard's identifier type, or None (an age of 89 or under is no identifier)."""
        if self.type == "AGE":
            value = number(self.text)
            if value is not None and value <= 89:
                return None
        if self.type in ("ADDRESS", "LOCATION") and self.text.strip(" .,").lower() in states():
            return None
        return GUARD_TYPES.get(self.type)


def tokens(text: str) -> list[tuple[int, int, str]]:
    """The words of a text with their offsets (a date, a phone, an email stays one word)."""
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z]", "X", word)
    shape = re.sub(r"[a-z]", "x", shape)
    shape = re.sub(r"\d", "d", shape)
    return re.sub(r"(.)\1{2,}", r"\1\1", shape)


@functools.lru_cache(maxsize=65536)
def _word(word: str) -> tuple[tuple[str, Any], ...]:
    """A word's own features (kept for the words seen lately: most words recur)."""
    low = word.lower()
    flags = {"lexF": "0", "lexL": "0", "lexP": "0", "lexW": "0"}
    for flag, rank in _FLAG.findall(lexicon().get(low.strip(".'’"), "")):
        flags[f"lex{flag}"] = rank or "1"
    return (
        ("low", low),
        ("shape", _shape(word)),
        ("title", int(word[:1].isupper() and word[1:].islower())),
        ("upper", int(word.isupper())),
        *flags.items(),
    )


#: the features of a word its neighbours see
_SEEN = frozenset({"low", "lexF", "lexL", "lexP", "lexW", "title", "upper"})


def features(text: str, words: Sequence[tuple[int, int, str]]) -> list[dict[str, Any]]:
    """The features of each word (its own, its neighbours', where it sits). CRFsuite takes
    strings (one-hot) and numbers (weights): a yes or no is 1 or 0."""
    own = [_word(w) for _, _, w in words]
    near = [[(k, v) for k, v in o if k in _SEEN] for o in own]
    rows = []
    for i, (start, _end, word) in enumerate(words):
        row: dict[str, Any] = {"bias": 1, **dict(own[i])}
        row["pre3"], row["suf3"] = word[:3].lower(), word[-3:].lower()
        row["len"] = min(len(word), 8)
        row["digits"] = sum(c.isdigit() for c in word)
        row["line_start"] = int(start == 0 or "\n" in text[max(0, start - 3) : start] or i == 0)
        for offset in (-2, -1, 1, 2):
            j = i + offset
            if 0 <= j < len(words):
                for key, value in near[j]:
                    row[f"{offset}:{key}"] = value
            else:
                row[f"{offset}:edge"] = 1
        rows.append(row)
    return rows


def labels(words: Sequence[tuple[int, int, str]], spans: Iterable[dict[str, Any]]) -> list[str]:
    """BIO labels of the words from labelled character spans (a word inside a span)."""
    out = ["O"] * len(words)
    for span in spans:
        kind = TYPES.get(span["type"])
        if kind is None:
            continue
        inside = [i for i, (a, b, _) in enumerate(words) if a < span["end"] and span["start"] < b]
        for n, i in enumerate(inside):
            out[i] = f"{'B' if n == 0 else 'I'}-{kind}"
    return out


class Tagger:
    """A fitted tagger: :meth:`tag` gives the identifiers of a text."""

    def __init__(self, path: Path | None = None) -> None:
        import pycrfsuite

        self.path = path or data_path(MODEL)
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(self.path))

    def tag(self, text: str) -> list[Tagged]:
        words = tokens(text)
        if not words:
            return []
        found: list[Tagged] = []
        current: list[Any] | None = None
        for (start, end, _), label in zip(
            words, self._tagger.tag(features(text, words)), strict=True
        ):
            kind = label[2:] if label != "O" else ""
            if label.startswith("I-") and current is not None and current[2] == kind:
                current[1] = end
                continue
            if current is not None:
                found.append(
                    Tagged(current[0], current[1], current[2], text[current[0] : current[1]])
                )
                current = None
            if kind:
                current = [start, end, kind]
        if current is not None:
            found.append(_tagged(text, current))
        return found


def _tagged(text: str, current: list[Any]) -> Tagged:
    start, end, kind = current
    return Tagged(start, end, kind, text[start:end])


@functools.cache
def shipped() -> Tagger | None:
    """The shipped tagger, or None when its file or CRFsuite is missing."""
    if not data_path(MODEL).exists():
        return None
    try:
        return Tagger()
    except ImportError:
        return None
