"""The guard's data file (``ontologies/phi.json``) and the word-level helpers its reader
(:mod:`.phi`) uses: the identifier types, the health lexicon of the attribute graph, the
context words that type a number, noun phrases and dates."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.ontologies import path as ontology_path

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase

#: the attribute graph's concept every health word must reach
HEALTH_NODE = "hipaa:health information"


def phi_path() -> Path:
    return ontology_path("phi.json")


@functools.cache
def phi_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(phi_path().read_text(encoding="utf-8"))
    return data


def identifier_types() -> dict[str, dict[str, str]]:
    """Each identifier type: its item of 164.514(b)(2)(i), its label, its generalisation."""
    types: dict[str, dict[str, str]] = phi_data()["identifiers"]
    return types


def _phrases(doc: Any) -> list[tuple[int, int]] | None:
    """The noun phrases of a parsed text, each without its determiner and possessive (None
    without a parse)."""
    if doc is None:
        return None
    phrases = []
    for chunk in doc.noun_chunks:
        words = [
            t
            for t in chunk
            if t.dep_ not in ("det", "poss", "case", "predet") and t.lower_ not in ("'s", "’s")
        ]
        if words:
            phrases.append((words[0].idx, words[-1].idx + len(words[-1].text)))
    return phrases


_LEXICONS: dict[int, tuple[Any, dict[str, str]]] = {}


def _lexicon_for(graph: Any) -> dict[str, str]:
    data = phi_data()["health"]
    skip = frozenset(data["not_health"])
    health = {n for n in graph.nodes if graph.reaches(n, HEALTH_NODE)}
    lexicon: dict[str, str] = {}
    for key, entries in graph.index.items():
        if key in skip or len(key) < 3:
            continue
        for node, _weight in entries:
            if node in health:
                lexicon[key] = graph.nodes[node].name
                break
    for term in data["extra_terms"]:
        if term not in skip:
            lexicon.setdefault(term, term)
    return lexicon


def health_lexicon(kb: KnowledgeBase) -> dict[str, str]:
    """Every phrase of the attribute graph that reaches health information (with the data
    file's extras and exclusions), to the concept it names."""
    held = _LEXICONS.get(id(kb.attributes))
    if held is None or held[0] is not kb.attributes:
        held = (kb.attributes, _lexicon_for(kb.attributes))
        _LEXICONS[id(kb.attributes)] = held
    return held[1]


def _clause_before(text: str, width: int) -> str:
    """The last ``width`` characters before a point, from the start of their clause, lower."""
    before = text[max(0, len(text) - width) :].lower()
    return re.split(r"[.;\n]\s*", before)[-1]


def _word_at(text: str, word: str) -> int:
    """Where ``word`` last occurs in ``text`` as a word (-1: nowhere)."""
    found = -1
    for hit in _word_pattern(word).finditer(text):
        found = hit.start()
    return found


@functools.lru_cache(maxsize=1024)
def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])")


def _nearest_context(text: str) -> tuple[str, int]:
    """The identifier type named by the context word nearest the end of ``text``."""
    codes = phi_data()["codes"]
    before = _clause_before(text, int(codes["context_chars"]))
    kind, where = "", (-1, 0)
    for context in codes["contexts"]:
        for word in context["words"]:
            word = word.strip()
            at = _word_at(before, word)
            if at >= 0 and (at + len(word), len(word)) > where:
                kind, where = context["type"], (at + len(word), len(word))
    return kind, where[0]


def _date_like(words: str) -> bool:
    """A slash date must be a month and a day ("20/20" vision and "152/98" pressure are not)."""
    found = re.search(r"(\d{1,2})/(\d{1,4})(?:/(\d{2,4}))?", words)
    if not found:
        return True
    month, day = int(found.group(1)), int(found.group(2))
    if found.group(3) is None and len(found.group(2)) == 4:
        return 1 <= month <= 12  # 06/2025
    return 1 <= month <= 12 and 1 <= day <= 31


def own_parties(text: str, spans: list[Any], context: Any) -> list[Any]:
    """The spans less the parties' own (``context``: the guard's flow, its sender, recipient,
    purpose and permission): a name, place or facility the sender's or recipient's description
    holds ("front desk at Bayside Physical Therapy"), and, unless the message must be
    de-identified whole, the sender's own number or mailbox and what its signature says of
    it (the lines after the last sign-off: "Thank you,\nRenata Ilves\nLarkspur Billing |
    (617) 555-0190")."""
    parties = f"{context.sender} {context.to}"
    deidentify = context.purpose.spec.get("deidentify") and context.permitted is not True
    signed = len(text) if deidentify else signature_start(text)
    kept = []
    for span in spans:
        named = span.type in ("NAME", "FACILITY", "ADDRESS") and len(span.text.strip()) >= 3
        if named and re.search(rf"(?<!\w){re.escape(span.text.strip())}(?!\w)", parties, re.I):
            continue
        if span.kind == "identifier" and span.start >= signed and span.type in SENDERS:
            continue
        if getattr(span, "own", False) and not deidentify:
            continue  # the sender's own number or mailbox
        kept.append(span)
    return kept


#: what a signature tells of its sender
SENDERS = frozenset({"NAME", "FACILITY", "ADDRESS", "PHONE", "FAX", "EMAIL", "URL"})


def signature_start(text: str) -> int:
    """Where a message's signature begins: after its last sign-off line ("Thanks,", "Warmly,")
    among its last lines, or at a last line alone that starts with a dash ("- Billing,
    Larkspur"; not the last item of a list); the text's end when it has none."""
    lines = text.rstrip().split("\n")
    sign_offs = re.compile(phi_data()["own_contact"]["sign_off"], re.I)
    at = len(text)
    offset = len(text.rstrip()) - sum(len(line) + 1 for line in lines[-6:]) + 1
    for number, line in enumerate(lines[-6:], start=len(lines) - len(lines[-6:])):
        dashed = (
            number == len(lines) - 1
            and number > 0
            and not lines[number - 1].strip()
            and line.lstrip().startswith(("- ", "— ", "-- "))
            and not re.search(r"\d", line)
        )
        if sign_offs.fullmatch(line.strip()):
            at = offset + len(line) + 1
        elif dashed and at == len(text):
            at = offset
        offset += len(line) + 1
    return max(0, min(at, len(text)))


def aggregated_age(text: str, span: Any) -> bool:
    """An age in the one category the law lets ages over 89 be shown as: "90 or older"
    (164.514(b)(2)(i)(C)); it identifies no one (a rewrite writes it)."""
    later = text[span.end :]
    return span.type == "AGE_OVER_89" and bool(re.match(r"[\s-]*(?:or|and)[\s-]*older|\+", later))


def _words(names: Iterable[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


NAME_WORD = r"[A-Z][a-zà-ÿ'’]+(?:-[A-Z][a-zà-ÿ'’]+)?"
FULL_NAME = (
    rf"{NAME_WORD}(?:\s+[A-Z]\.)?(?:\s+(?:{NAME_WORD}|[A-Z]\.(?=\s|,|$)))?"
    rf"(?:\s+{NAME_WORD}(?=\s*[,.;:)(]|\s+(?:is|was|has|had|and|who)\b))?"  # "Ida Mae Tackett"
)
