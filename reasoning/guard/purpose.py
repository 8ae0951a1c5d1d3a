"""What a message is for, as the guard reads it: the data file of purposes
(``reasoning/data/guard_purposes.json``), its word helpers, :class:`PurposeReading`, and what
the purpose makes of each span (:class:`SpanDecision`)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from privacy_checklist.reasoning.guard.phi import PhiSpan
from privacy_checklist.reasoning.text import data_path


@functools.cache
def purposes_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_path("guard_purposes.json").read_text("utf-8"))
    return data


def has_words(words: Iterable[str], text: str) -> list[str]:
    """The words found in ``text`` as whole words, a word inside a longer one found counted
    once ("the patient" and "patient" at the same place)."""
    found: list[tuple[int, int, str]] = []
    for hit in _alternation(tuple(sorted(set(words), key=lambda w: (-len(w), w)))).finditer(
        text.lower()
    ):
        start, end = hit.span(1)
        if not any(a <= start and end <= b for a, b, _ in found):
            found.append((start, end, hit.group(1)))
    seen: set[str] = set()
    out = []
    for _a, _b, word in sorted(found):
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


@functools.lru_cache(maxsize=64)
def word_list(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of the words as a whole word, longest first."""
    ordered = sorted(words, key=len, reverse=True)
    body = "|".join(re.escape(w.lower()) for w in ordered) or "(?!)"
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])")


@functools.lru_cache(maxsize=256)
def _alternation(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a word list, longest first, each as a whole word (overlaps allowed)."""
    body = "|".join(re.escape(w.lower()) for w in words) or "(?!)"
    return re.compile(rf"(?=(?<![\w-])({body})(?![\w-]))")


def recipient_parts(to: str) -> tuple[str, str]:
    """A recipient's head and the rest: "Ms. Park, workers' comp attorney for the patient" is
    ("Ms. Park, workers' comp attorney", "for the patient"); words in brackets are the rest;
    "the patient's employer" is the employer."""
    possessive = (
        r"(?i)\b(?:the\s+|a\s+|his\s+|her\s+)?(?:patient|member|employee|client|individual)"
        r"['’]s\b"
    )
    # "the patient's cell (text)", "the student's own email": the patient, by a channel
    to = re.sub(
        r"(?i)\b(?:the\s+)?(?:patient|member|student|client|resident)['’]s\s+"
        r"(?:own\s+|personal\s+|private\s+)?(?:cell|cell phone|mobile|phone|email|e-mail|"
        r"voicemail|portal|inbox|mailbox|text|mychart|home address|address)\b",
        "the patient",
        to,
    )
    brackets = re.findall(r"\(([^)]*)\)", to)
    # a short bracket says who the head is ("Keisha (the patient)"); a long one says more
    short = [b for b in brackets if len(b.split()) <= 3]
    inside = re.sub(possessive, " ", " ".join(b for b in brackets if b not in short))
    bare = re.sub(possessive, " ", re.sub(r"\([^)]*\)", " ", to) + " " + " ".join(short))
    cut = re.search(
        r"(?i)\b(?:for|of|representing|represents|on behalf of|at|who|where|that|with|via|"
        r"about|regarding)\b",
        bare,
    )
    head = bare[: cut.start()] if cut else bare
    rest = (bare[cut.start() :] if cut else "") + " " + inside
    return " ".join(head.split()), " ".join(rest.split())


@dataclass(frozen=True)
class PurposeReading:
    """What the message is for: a purpose of the data file, or None (not read) with why."""

    key: str | None
    how: str
    words: str = ""
    unverified: str = ""
    #: the purpose the law names (a key of ``law`` in the data file), when the purpose model
    #: read one: its paragraph and what it sets anew override the guard purpose it builds on
    law: str = ""

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = purposes_data()["purposes"].get(self.key or "", {})
        if self.law and spec:
            named = purposes_data()["law"][self.law]
            spec = {**spec, **{k: v for k, v in named.items() if k not in ("base", "paragraph")}}
            spec = {k: v for k, v in spec.items() if v is not None}
        if self.unverified and spec:
            # who the recipient is is not verified: not exempt, no permission, nothing may go
            spec = {k: v for k, v in spec.items() if k not in ("exempt", "presume", "deidentify")}
            spec["permission"] = spec.get("permission") or ["verified_identity"]
            spec["norm"] = self.unverified
            spec["needs"] = (
                "nothing may go until the recipient's identity and authority are verified"
            )
        return spec

    def to_json(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "key": self.key,
            "law": self.law or None,
            "label": spec.get("label"),
            "norm": spec.get("norm"),
            "how": self.how,
            "words": self.words,
        }


@dataclass(frozen=True)
class SpanDecision:
    """One span and what the purpose makes of it."""

    span: PhiSpan
    needed: bool | None
    why: str
    norm: str
    #: keep (needed or unknown), take-out (unneeded, no rewrite made), and what the rewrite
    #: did with an unneeded span: generalise (to ``replacement``), remove, drop-sentence, or
    #: decline (the whole message replaced by a decline)
    action: str = ""
    replacement: str = ""

    def __post_init__(self) -> None:
        if not self.action:
            object.__setattr__(self, "action", "take-out" if self.needed is False else "keep")

    def to_json(self) -> dict[str, Any]:
        return {
            **self.span.to_json(),
            "needed": self.needed,
            "why": self.why,
            "norm": self.norm,
            "action": self.action,
            **({"replacement": self.replacement} if self.action == "generalise" else {}),
        }


def health_rule(spec: dict[str, Any], authorized: bool, to: str) -> str:
    """What health information the purpose lets go: under an authorization what it covers
    ("none" for the public becomes what the authorization names); to a shared phone or inbox
    not even instructions (others read it)."""
    rule = str(spec.get("health", "relevant"))
    if authorized and "health_authorized" in spec:
        rule = str(spec["health_authorized"])
    if rule == "instructions" and has_words(spec.get("shared_channel", []), to):
        rule = "none"
    return rule
