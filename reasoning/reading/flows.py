"""Reading the flows of a case (offline): who sent what about whom to whom, why, with consent.

Each sentence with a disclosure verb ("disclosed", "sent", "shared", "told" ...) is a flow. Its
sender is the nearest party mentioned before the verb, its recipient the first party after
"to" (or after the verb for "told", "informed"), its subject the patient or the owner of the
information ("Jane's records"), its information the first information type the attribute
graph finds in the sentence, its purpose and consent the first cues of the sentence (lexicons
kept as data with the norms' cues). Every part carries the character span it came from.
Parties are read with the role graph's resolver; information with the attribute graph's. The
verbs, titles, abbreviations and consent patterns are data: ``reasoning/data/flow_cues.json``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from privacy_checklist.kg import lexicon
from privacy_checklist.kg.attributes import information_type
from privacy_checklist.kg.concepts import Resolver
from privacy_checklist.kg.lexicon import FUNCTION_WORDS
from privacy_checklist.kg.norms import Cues
from privacy_checklist.reasoning.reading.types import Flow, Part, Reading
from privacy_checklist.reasoning.text import data_path, sentence_spans

#: What the flows of :class:`FlowExtractor` say read them.
READER = "flow patterns"
#: A cue lexicon: (name, pattern) pairs, the first found naming what a part resolves to.
CueList = Iterable[tuple[str, re.Pattern[str]]]


def cues_path() -> Path:
    return data_path("flow_cues.json")


_CUES = json.loads(cues_path().read_text(encoding="utf-8"))


def _any_of(patterns: list[str]) -> str:
    return "(?:" + "|".join(patterns) + ")"


DISCLOSURE = re.compile(rf"\b{_any_of(_CUES['disclosure_verbs'])}\b", re.I)
INFORM_VERBS = re.compile(rf"^{_any_of(_CUES['inform_verbs'])}$", re.I)


def _name_shape(gram: list[str]) -> bool:
    """False for word runs that mix a name with the words around it: "Dr Adams needs",
    "care physician Dr" (a name is capitalized words, possibly ending in a possessive:
    "Dr Johnson's office", or joined by "of": "Department of Health")."""
    for word, after in itertools.pairwise(gram):
        if after.lower() in INNER_WORDS or word.lower() in INNER_WORDS:
            continue
        if word[0].isupper() and after[0].islower() and not word.endswith(("'s", "’s")):
            return False
        if word[0].islower() and after[0].isupper():
            return False
    return True


def _phrase_after(text: str, at: int, offset: int) -> Part | None:
    """The noun phrase starting at ``at`` in ``text`` (up to a preposition or clause word), as
    a part resolved to no HIPAA role."""
    words = list(WORD.finditer(text, at))
    kept: list[re.Match[str]] = []
    for word in words[:6]:
        lower = word.group(0).lower()
        if kept and (lower in lexicon.CLAUSE_WORDS or lower in EDGE_WORDS or lower == "and"):
            break
        if text[kept[-1].end() : word.start()].strip() if kept else text[at : word.start()].strip():
            break  # punctuation ends the phrase
        kept.append(word)
    while kept and kept[0].group(0).lower() in lexicon.STOP_WORDS:
        kept.pop(0)
    if not kept:
        return None
    start, end = kept[0].start(), kept[-1].end()
    return Part(text=text[start:end], start=start + offset, end=end + offset, resolved=OUTSIDE)


def sentences(narrative: str) -> list[tuple[str, int]]:
    """The narrative's sentences (:func:`~privacy_checklist.reasoning.text.sentence_spans`),
    each with the offset where it starts."""
    return [(narrative[a:b], a) for a, b in sentence_spans(narrative)]


#: Verbs whose grammatical subject receives: "the police obtained the records from Dr. Lee".
RECEIVE_VERBS = re.compile(rf"^{_any_of(_CUES['receive_verbs'])}$", re.I)
#: What a party no HIPAA role fits resolves to ("a reporter", "the landlord").
OUTSIDE = "no HIPAA role"
#: Words that may stand inside a party's or an information's name ("Department of Health").
INNER_WORDS = frozenset({"of", "for", "and", "&"})
#: "Sarah, a nurse at ..." / "her doctor, Dr. Johnson": a name and the role it is given.
TITLE = _any_of(_CUES["titles"])
NAME = rf"(?:{TITLE}\.? )?[A-Z][a-z]+(?: [A-Z][a-z]+)?"
ROLE = r"(?P<role>[a-z][a-z-]*(?: [a-z][a-z-]*){0,3}?)"
APPOSITIVE = (
    # "Jane Roe, a patient at ...", "Officer Brown, a police officer, ..."
    re.compile(
        rf"\b(?P<name>{NAME}), (?:a|an|the|her|his|their|its) {ROLE}"
        r"(?=[,.;]| (?:at|in|for|of|with|who|from|on|and)\b)"
    ),
    # "her physician, Dr. Smith", "the detective Officer Brown"
    re.compile(
        rf"\b(?:a|an|the|her|his|their|its) {ROLE}(?:, | (?={TITLE}\b))(?P<name>{NAME})\b"
        r"(?!,? (?:a|an|the)\b)"
    ),
)
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
EDGE_WORDS = frozenset({"without", "with", "because", "after", "before", "about", "despite"})
#: How a narrative states consent (the norms' cues are the regulation's own wording).
CONSENT: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I)) for name, pattern in _CUES["consent"]
)


def _first_cue(cues: CueList, text: str, offset: int) -> Part | None:
    """The first ``(name, pattern)`` of a lexicon found in ``text``, as a part with its span."""
    for name, pattern in cues:
        match = pattern.search(text)
        if match:
            return Part(
                text=match.group(0),
                start=match.start() + offset,
                end=match.end() + offset,
                resolved=name,
            )
    return None


class FlowExtractor:
    """The offline extractor (see the module docstring)."""

    def __init__(
        self,
        role_resolver: Resolver,
        attribute_resolver: Resolver,
        cues: Cues | None = None,
        *,
        max_words: int = 4,
    ) -> None:
        self.roles = role_resolver
        self.attributes = attribute_resolver
        self.cues = cues or Cues.load()
        self.max_words = max_words

    def _mentions(
        self,
        text: str,
        offset: int,
        resolver: Resolver,
        *,
        reached_only: bool,
        skip: list[Part] | None = None,
        names: dict[str, str] | None = None,
    ) -> list[Part]:
        """Non-overlapping phrases (longest first) that the resolver resolves, outside ``skip``."""
        words = [(m.group(0), m.start() + offset, m.end() + offset) for m in WORD.finditer(text)]
        taken: set[int] = {
            i
            for i, (_, start, end) in enumerate(words)
            for part in (skip or [])
            if start < part.end and part.start < end
        }
        found: list[Part] = []
        for size in range(self.max_words, 0, -1):
            for i in range(len(words) - size + 1):
                if any(j in taken for j in range(i, i + size)):
                    continue
                gram = [w for w, _, _ in words[i : i + size]]
                edges = {gram[0].lower(), gram[-1].lower()}
                if edges & (
                    lexicon.STOP_WORDS | lexicon.CLAUSE_WORDS | FUNCTION_WORDS | EDGE_WORDS
                ):
                    continue
                inner = {w.lower() for w in gram[1:-1]} - INNER_WORDS
                if inner & (lexicon.STOP_WORDS | lexicon.CLAUSE_WORDS | FUNCTION_WORDS):
                    continue  # "Officer Johnson a law", "specialist could improve Jane's"
                if not _name_shape(gram):
                    continue
                last = gram[-1]
                if (
                    size > 1
                    and not last[0].isupper()
                    and not resolver.knows(last.lower().rstrip("'’s"))
                ):
                    continue  # the phrase must end at a noun: not "care physician received"
                phrase = " ".join(gram)
                start, end = words[i][1], words[i + size - 1][2]
                written = text[start - offset : end - offset]  # as the narrative writes it
                known = (names.get(written) or names.get(phrase)) if names else None
                if known:
                    found.append(Part(text=written, start=start, end=end, resolved=known))
                    taken.update(range(i, i + size))
                    continue
                matches = resolver.resolve(phrase, 1)
                if not matches or (reached_only and not matches[0].reached):
                    continue
                if matches[0].via == "cue":
                    continue  # a health word nearby is no information mention
                found.append(Part(text=written, start=start, end=end, resolved=matches[0].target))
                taken.update(range(i, i + size))
        return sorted(found, key=lambda p: p.start)

    def names(self, narrative: str) -> dict[str, str]:
        """The people and bodies the narrative introduces with a role ("Sarah, a nurse at ..."),
        by name and by each word of the name, resolved on the role graph."""
        found: dict[str, str] = {}
        for pattern in APPOSITIVE:
            for match in pattern.finditer(narrative):
                role = self.roles.resolve(match.group("role"), 1)
                if not role:
                    continue
                name = re.sub(rf"^{TITLE}\.? ", "", match["name"])
                for key in (match["name"], name, *name.split()):
                    found.setdefault(key, role[0].target)
        return found

    def extract(self, narrative: str) -> list[Flow]:
        flows: list[Flow] = []
        names = self.names(narrative)
        patient = None
        for name, role in names.items():
            found = (
                re.search(rf"\b{re.escape(name)}\b", narrative) if role == "individual" else None
            )
            if found and (patient is None or found.start() < patient.start):
                patient = Part(text=name, start=found.start(), end=found.end(), resolved=role)
        for text, offset in sentences(narrative):
            verb = DISCLOSURE.search(text)
            if not verb:
                continue
            parties = self._mentions(text, offset, self.roles, reached_only=False, names=names)
            infos = self._mentions(text, offset, self.attributes, reached_only=True, skip=parties)
            v_start = verb.start() + offset
            before = [p for p in parties if p.end <= v_start]
            after = [p for p in parties if p.start >= verb.end() + offset]
            to = re.search(r"\bto\b", text[verb.end() :])
            recipient_pool = after
            if to and not INFORM_VERBS.match(verb.group(0)):
                cut = verb.end() + offset + to.end()
                recipient_pool = [p for p in after if p.start >= cut] or after
            # the sentence's subject ("Dr. Lee, a surgeon at Mercy Hospital, emailed ..."), else
            # the party nearest the verb
            lead = [p for p in before if not text[: p.start - offset].strip(" \"'“(").split()[2:]]
            sender = lead[0] if lead else (before[-1] if before else None)
            recipient = next(
                (p for p in recipient_pool if p is not sender and p.resolved != "individual"),
                recipient_pool[0] if recipient_pool else None,
            )
            if to and not INFORM_VERBS.match(verb.group(0)):
                # "to a reporter at the local newspaper": a recipient HIPAA has no role for
                named = _phrase_after(text, verb.end() + to.end(), offset)
                found_after_to = (
                    recipient is not None
                    and recipient.resolved != "individual"
                    and recipient.start >= verb.end() + offset + to.end()
                )
                if named and not found_after_to:
                    recipient = named
            source = re.search(r"\bfrom\b", text[verb.end() :])
            if RECEIVE_VERBS.match(verb.group(0)):
                # "the detective obtained the chart from Dr. Lee": the subject receives
                cut = verb.end() + offset + (source.end() if source else len(text))
                senders = [p for p in after if p.start >= cut]
                recipient, sender = sender, (senders[0] if senders else None)
            subject = next((p for p in parties if p.resolved == "individual"), None)
            if subject is None:
                subject = patient  # the narrative's patient, where it is first named
            flows.append(
                Flow(
                    sender=sender,
                    recipient=recipient,
                    subject=subject,
                    information=infos[0] if infos else None,
                    purpose=_first_cue(self.cues.purposes, text, offset),
                    consent=_first_cue((*CONSENT, *self.cues.consent_forms), text, offset),
                    verb=Part(
                        text=verb.group(0),
                        start=v_start,
                        end=verb.end() + offset,
                        resolved="disclosure",
                    ),
                )
            )
        return flows

    def read(self, text: str) -> Reading:
        """The flows of a narrative (a :class:`~privacy_checklist.reasoning.reading.types.
        Reader`: the tuple of each, no facts)."""
        return Reading(self.extract(text), reader=READER)

    def main_flow(self, narrative: str) -> Flow | None:
        """The flow with the most parts read (ties: the first)."""
        flows = self.extract(narrative)
        if not flows:
            return None
        return max(
            flows,
            key=lambda f: sum(
                1
                for k in ("sender", "recipient", "subject", "information")
                if getattr(f, k) is not None
            ),
        )


class ReadsFlows(Protocol):
    """A flow extractor, offline (:class:`FlowExtractor`) or by an LLM
    (:class:`~privacy_checklist.reasoning.reading.llm_flows.LLMFlowExtractor`)."""

    roles: Resolver
    attributes: Resolver

    def main_flow(self, narrative: str) -> Flow | None: ...


class CaseWithTuple(Protocol):
    """What :func:`agreement` reads of a case (:class:`privacy_checklist.ingest.cases.Case`)."""

    @property
    def text(self) -> str: ...

    @property
    def characteristics(self) -> str: ...


def agreement(extractor: ReadsFlows, cases: Sequence[CaseWithTuple]) -> dict[str, Any]:
    """Share of cases whose main flow's parties and information match the gold CI tuple,
    compared on resolved graph nodes."""
    import ast

    fields = {
        "Sender Role": "sender",
        "Recipient Role": "recipient",
        "About Role": "subject",
        "Type": "information",
    }
    counts = {k: [0, 0] for k in fields}
    for case in cases:
        try:
            gold = ast.literal_eval(case.characteristics)
        except (ValueError, SyntaxError, AttributeError):
            continue
        if not isinstance(gold, dict):
            continue
        flow = extractor.main_flow(case.text)
        for key, part_name in fields.items():
            value = str(gold.get(key) or "").strip()
            if not value or value.lower() in ("none", "n/a", "unknown", "not specified"):
                continue
            if key == "Type":
                matches = extractor.attributes.resolve(value, 1)
                expected = information_type(matches[0] if matches else None)
            else:
                matches = extractor.roles.resolve(value, 1)
                expected = matches[0].target if matches else "none"
            if expected == "none":
                continue  # the gold phrase itself reaches no node: nothing to compare on
            part = getattr(flow, part_name) if flow else None
            counts[key][0] += 1
            counts[key][1] += int(part is not None and part.resolved == expected)
    return {
        key: {"n": n, "agree": a, "share": round(a / n, 4) if n else None}
        for key, (n, a) in counts.items()
    }
