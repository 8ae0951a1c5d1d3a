"""What a reader makes of a case: its flows, each a Contextual Integrity tuple whose parts carry
their spans, with the roles and information types they reach and the facts the law's conditions
ask about — the one type every reader returns and every reasoner, the CLI, the browser and the
logs read.

A :class:`Reader` reads a narrative into a :class:`Reading`: the rule reader
(:class:`~privacy_checklist.reasoning.reading.facts.FactReader`, flows with their facts), the
offline flow extractor (:class:`~privacy_checklist.reasoning.reading.flows.FlowExtractor`, the
tuple alone) and the LLM's
(:class:`~privacy_checklist.reasoning.reading.llm_flows.LLMFlowExtractor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: The parts of a flow, in the order they are shown and written.
PARTS = ("sender", "recipient", "subject", "information", "purpose", "consent", "verb")


def _int(value: object, default: int = -1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """A part of a flow: the words, their span in the narrative (-1 when the words are not the
    narrative's), and what they resolve to (a role, an information type, a cue's name)."""

    text: str
    start: int
    end: int
    resolved: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "start": self.start, "end": self.end}
        if self.resolved:
            data["resolved"] = self.resolved
        return data

    @classmethod
    def from_json(cls, data: object) -> Part | None:
        """A written part; None for anything that is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
            return None
        resolved = data.get("resolved")
        return cls(
            text=data["text"],
            start=_int(data.get("start")),
            end=_int(data.get("end")),
            resolved=resolved if isinstance(resolved, str) else "",
        )


@dataclass(frozen=True, slots=True)
class Fact:
    """What the case says about one question: stated true, stated false, or unknown (None).

    Attributes:
        key: a condition kind, or an applicability question (``sender_covered``, ...).
        value: True, False, or None when the case does not say.
        start: where the words that say it start in the narrative (-1 when none).
        end: where they end.
        evidence: those words (or how the value was reached).
        source: what read it: ``parse``, ``cue``, ``role``, ``llm`` ...
    """

    key: str
    value: bool | None
    start: int = -1
    end: int = -1
    evidence: str = ""
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"key": self.key, "value": self.value, "source": self.source}
        if self.start >= 0:
            data["span"] = [self.start, self.end]
        if self.evidence:
            data["evidence"] = self.evidence
        return data

    @classmethod
    def from_json(cls, data: object) -> Fact | None:
        """A written fact; None for anything that is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("key"), str):
            return None
        value = data.get("value")
        span = data.get("span")
        start, end = (
            (_int(span[0]), _int(span[1]))
            if isinstance(span, list) and len(span) == 2
            else (-1, -1)
        )
        evidence, source = data.get("evidence"), data.get("source")
        return cls(
            data["key"],
            value if isinstance(value, bool) else None,
            start,
            end,
            evidence if isinstance(evidence, str) else "",
            source if isinstance(source, str) else "",
        )


@dataclass(frozen=True, kw_only=True)
class Flow:
    """One flow of a case.

    Attributes:
        sender, recipient, subject, information, purpose, consent, verb: the parts read, with
            their spans (None: not read).
        sender_roles: the regulatory roles the sender reaches in the role graph (with their
            ancestors: a surgeon reaches health care provider and covered entity); empty when
            not read.
        recipient_roles: the same for the recipient; ``{"individual"}`` when the recipient is
            the person the information is about.
        information_types: the HIPAA information types the information reaches (empty: unread).
        facts: what the case says, by key (the rule reader's; empty for a tuple alone).
        summary: the flow in words.
        question: the flow a question asks about ("Can we send it to her?").
        whole_case: no clause was read: the case taken as one flow.
        borrowed: its information was named near the flow, not by the flow's own words.
        turns_on: the flow the case turns on, as the learned case-flow reader reads it from the
            whole narrative (:mod:`~privacy_checklist.reasoning.learned.case_flow`): it decides
            the case.
    """

    sender: Part | None = None
    recipient: Part | None = None
    subject: Part | None = None
    information: Part | None = None
    purpose: Part | None = None
    consent: Part | None = None
    verb: Part | None = None
    sender_roles: frozenset[str] = frozenset()
    recipient_roles: frozenset[str] = frozenset()
    information_types: frozenset[str] = frozenset()
    facts: Mapping[str, Fact] = field(default_factory=dict)
    summary: str = ""
    question: bool = False
    whole_case: bool = False
    borrowed: bool = False
    turns_on: bool = False

    def fact(self, key: str) -> Fact:
        return self.facts.get(key) or Fact(key, None)

    def part(self, name: str) -> Part | None:
        """The part called ``name`` (one of :data:`PARTS`)."""
        found = getattr(self, name) if name in PARTS else None
        return found if isinstance(found, Part) else None

    def parts(self) -> dict[str, Part]:
        """The parts read, by name, in :data:`PARTS` order."""
        return {name: part for name in PARTS if (part := self.part(name)) is not None}

    def spans_json(self) -> dict[str, Any]:
        """The parts read with their spans (the verb says whether a question asks about the
        flow or the case was read as one flow; the information whether it was borrowed;
        ``turns_on`` whether it is the flow the case turns on)."""
        data: dict[str, Any] = {name: part.to_json() for name, part in self.parts().items()}
        if "verb" in data:
            if self.question:
                data["verb"]["question"] = True
            if self.whole_case:
                data["verb"]["case"] = True
        if "information" in data and self.borrowed:
            data["information"]["borrowed"] = True
        if self.turns_on:
            data["turns_on"] = True
        return data

    def to_json(self) -> dict[str, Any]:
        """The parts with their spans, and the flow in words (the form a verdict's flows are
        written in)."""
        data = self.spans_json()
        if self.summary:
            data["summary"] = self.summary
        return data

    @classmethod
    def from_json(cls, data: object, facts: object = None, **roles: Any) -> Flow:
        """A flow as :meth:`to_json` or :meth:`spans_json` wrote it (parts that cannot be read
        are left out); ``facts`` a written list of facts, ``roles`` the role and type sets."""
        written = data if isinstance(data, Mapping) else {}
        parts = {name: Part.from_json(written.get(name)) for name in PARTS}
        verb = written.get("verb")
        information = written.get("information")
        read = [f for f in map(Fact.from_json, facts if isinstance(facts, list) else []) if f]
        summary = written.get("summary")
        return cls(
            **parts,
            sender_roles=frozenset(roles.get("sender_roles") or ()),
            recipient_roles=frozenset(roles.get("recipient_roles") or ()),
            information_types=frozenset(roles.get("information_types") or ()),
            facts={f.key: f for f in read},
            summary=summary if isinstance(summary, str) else "",
            question=isinstance(verb, Mapping) and verb.get("question") is True,
            whole_case=isinstance(verb, Mapping) and verb.get("case") is True,
            borrowed=isinstance(information, Mapping) and information.get("borrowed") is True,
            turns_on=written.get("turns_on") is True,
        )


@dataclass(frozen=True)
class Reading:
    """What a reader made of a narrative: its flows, and what read them (``reader``: the rule
    reader's parser, an extractor's name, an LLM's model)."""

    flows: list[Flow]
    reader: str = ""


class Reader(Protocol):
    """Reads a narrative into its flows."""

    def read(self, text: str) -> Reading: ...
