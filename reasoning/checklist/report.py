"""The checklist as a verdict carries it: typed, written and read back in one shape.

:func:`~privacy_checklist.reasoning.checklist.decide.decide` makes a
:class:`~privacy_checklist.reasoning.checklist.decide.Checklist` for each flow, on the
catalogue's readings. A verdict carries what a person reads of it — a :class:`CaseReport`: the
case's verdict, the flow that decides it and every flow's :class:`FlowReport` (its parts, facts,
applicability, prohibitions and candidates with their conditions, what would change it), the
learned layer's weighing (:class:`Weighed`) and what an LLM was asked
(:mod:`~privacy_checklist.reasoning.checklist.asked`). The CLI and the browser read its
attributes; :meth:`CaseReport.to_json` is the form it is printed and logged in, and
:meth:`CaseReport.from_json` reads it back (this version's logs and the older ones, which wrote
the same shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from privacy_checklist.kg.conditions import Catalogue, Condition
from privacy_checklist.reasoning.checklist.asked import Answer, text_of
from privacy_checklist.reasoning.checklist.decide import (
    Applicability,
    CheckLabel,
    Checklist,
    ConditionCheck,
    NormCheck,
    Status,
    Turn,
)
from privacy_checklist.reasoning.reading.types import Fact, Flow

_STATUSES: tuple[Status, ...] = ("met", "unmet", "unknown")
_LABELS: tuple[CheckLabel, ...] = ("permit", "prohibit", "not_applicable")


def _items(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _status(value: object) -> Status:
    return next((s for s in _STATUSES if s == value), "unknown")


def _label(value: object) -> CheckLabel:
    return next((label for label in _LABELS if label == value), "not_applicable")


@dataclass(frozen=True)
class ConditionReport:
    """One condition of a candidate: the law's words, met / unmet / unknown, the fact behind
    it, whether it was presumed, and the question the catalogue asks about it."""

    condition: Condition
    status: Status
    fact: Fact
    presumed: bool = False
    question: str = ""

    @classmethod
    def of(cls, check: ConditionCheck, catalogue: Catalogue) -> ConditionReport:
        return cls(
            check.condition,
            check.status,
            check.fact,
            check.presumed,
            catalogue.question(check.condition.kind),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.condition.to_json(),
            "status": self.status,
            "fact": self.fact.to_json(),
            "presumed": self.presumed,
            "question": self.question,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConditionReport | None:
        if not isinstance(data.get("kind"), str):
            return None
        try:
            condition = Condition.from_json(data)
        except (TypeError, ValueError):
            return None
        return cls(
            condition,
            _status(data.get("status")),
            Fact.from_json(data.get("fact")) or Fact(condition.kind, None),
            data.get("presumed") is True,
            text_of(data.get("question")),
        )


@dataclass(frozen=True)
class NormReport:
    """A prohibition or candidate permission judged against a flow."""

    node: str
    norm_type: str
    summary: str
    status: Status
    conditions: tuple[ConditionReport, ...] = ()
    fits: str = ""
    set_aside: str = ""

    @classmethod
    def of(cls, check: NormCheck, catalogue: Catalogue) -> NormReport:
        return cls(
            check.reading.node,
            check.reading.norm_type,
            check.reading.summary,
            check.status,
            tuple(ConditionReport.of(c, catalogue) for c in check.conditions),
            check.fits,
            check.set_aside,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "norm_type": self.norm_type,
            "summary": self.summary,
            "status": self.status,
            "fits": self.fits,
            "conditions": [c.to_json() for c in self.conditions],
            **({"set_aside": self.set_aside} if self.set_aside else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NormReport:
        conditions = map(ConditionReport.from_json, _items(data.get("conditions")))
        return cls(
            text_of(data.get("node")),
            text_of(data.get("norm_type")),
            text_of(data.get("summary")),
            _status(data.get("status")),
            tuple(c for c in conditions if c is not None),
            text_of(data.get("fits")),
            text_of(data.get("set_aside")),
        )


def _applicability(data: object) -> Applicability:
    written = data if isinstance(data, Mapping) else {}
    facts = (Fact.from_json(f) for f in _items(written.get("facts")))
    return Applicability(
        written.get("applies", True) is not False,
        text_of(written.get("reason")),
        tuple(f for f in facts if f is not None),
    )


def _turn(data: Mapping[str, Any]) -> Turn:
    return Turn(
        text_of(data.get("kind")),
        text_of(data.get("node")),
        text_of(data.get("question")),
        _label(data.get("then")),
        text_of(data.get("text")),
    )


@dataclass(frozen=True)
class FlowReport:
    """One flow's checklist: the flow as read (parts, roles, information types, facts), its
    applicability, the prohibitions that named it, the candidate permissions, its verdict and
    what would change it."""

    flow: Flow
    applicability: Applicability
    prohibitions: tuple[NormReport, ...]
    candidates: tuple[NormReport, ...]
    label: CheckLabel
    rests_on: tuple[str, ...]
    explanation: str
    turns: tuple[Turn, ...] = ()
    rule: str = "stated"
    decided: bool = True

    @classmethod
    def of(cls, checklist: Checklist, catalogue: Catalogue) -> FlowReport:
        return cls(
            checklist.flow,
            checklist.applicability,
            tuple(NormReport.of(p, catalogue) for p in checklist.prohibitions),
            tuple(NormReport.of(c, catalogue) for c in checklist.candidates),
            checklist.label,
            checklist.rests_on,
            checklist.explanation,
            checklist.turns,
            checklist.rule.value,
            checklist.decided,
        )

    def to_json(self) -> dict[str, Any]:
        flow = self.flow
        return {
            "flow": flow.summary,
            "spans": flow.spans_json(),
            "sender_roles": sorted(flow.sender_roles),
            "recipient_roles": sorted(flow.recipient_roles),
            "information": sorted(flow.information_types),
            "facts": [f.to_json() for f in flow.facts.values()],
            "applicability": self.applicability.to_json(),
            "prohibitions": [p.to_json() for p in self.prohibitions],
            "candidates": [c.to_json() for c in self.candidates],
            "verdict": self.label,
            "rests_on": list(self.rests_on),
            "explanation": self.explanation,
            "would_change": [t.to_json() for t in self.turns],
            "rule": self.rule,
            "decided": self.decided,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FlowReport:
        def strings(key: str) -> list[str]:
            value = data.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        flow = Flow.from_json(
            data.get("spans"),
            data.get("facts"),
            sender_roles=strings("sender_roles"),
            recipient_roles=strings("recipient_roles"),
            information_types=strings("information"),
        )
        return cls(
            replace(flow, summary=text_of(data.get("flow"))),
            _applicability(data.get("applicability")),
            tuple(map(NormReport.from_json, _items(data.get("prohibitions")))),
            tuple(map(NormReport.from_json, _items(data.get("candidates")))),
            _label(data.get("verdict")),
            tuple(strings("rests_on")),
            text_of(data.get("explanation")),
            tuple(map(_turn, _items(data.get("would_change")))),
            text_of(data.get("rule")) or "stated",
            data.get("decided", True) is not False,
        )


@dataclass(frozen=True)
class Weighed:
    """The learned layer's reading of a long case: its label and probabilities, the
    checklist's own label, the model that weighed them and whether it used the sentence
    embedding."""

    label: str
    probabilities: dict[str, float]
    checklist_label: str
    model: str
    embed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "probabilities": self.probabilities,
            "checklist_label": self.checklist_label,
            "long": True,
            "model": self.model,
            "embedding": self.embed,
        }

    @classmethod
    def from_json(cls, data: object) -> Weighed | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("label"), str):
            return None
        written = data.get("probabilities")
        probabilities = (
            {str(k): float(v) for k, v in written.items() if isinstance(v, int | float)}
            if isinstance(written, Mapping)
            else {}
        )
        return cls(
            data["label"],
            probabilities,
            text_of(data.get("checklist_label")),
            text_of(data.get("model")),
            data.get("embedding") is True,
        )


@dataclass(frozen=True)
class CaseReport:
    """The case's checklist: its verdict, why, what it rests on, the flow that decides it
    (None when no flow was read) and every flow's checklist, the rule for unknown facts and
    the parser; the learned layer's weighing, with an LLM what it was asked
    and the checklist's verdict before it (``before_llm``)."""

    label: str
    explanation: str
    rule: str
    parser: str
    flows: tuple[FlowReport, ...] = ()
    deciding: FlowReport | None = None
    rests_on: tuple[str, ...] = ()
    decided: bool = False
    blend: Weighed | None = None
    asked: tuple[Answer, ...] | None = None
    before_llm: str | None = None

    @property
    def turns(self) -> tuple[Turn, ...]:
        """What would change the verdict: the deciding flow's turns."""
        return self.deciding.turns if self.deciding is not None else ()

    def to_json(self) -> dict[str, Any]:
        data = self.deciding.to_json() if self.deciding is not None else {}
        data |= {
            "verdict": self.label,
            "rests_on": list(self.rests_on),
            "explanation": self.explanation,
            "decided": self.decided,
            "rule": self.rule,
            "parser": self.parser,
            "flows": [f.to_json() for f in self.flows],
        }
        if self.deciding is None:
            data.pop("rests_on")
        if self.blend is not None:
            data["blend"] = self.blend.to_json()
        if self.asked is not None:
            data["asked"] = [a.to_json() for a in self.asked]
            data["before_llm"] = self.before_llm
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseReport:
        """A written checklist (what cannot be read is left out)."""
        rests = data.get("rests_on")
        before = data.get("before_llm")
        return cls(
            label=text_of(data.get("verdict")),
            explanation=text_of(data.get("explanation")),
            rule=text_of(data.get("rule")) or "stated",
            parser=text_of(data.get("parser")),
            flows=tuple(map(FlowReport.from_json, _items(data.get("flows")))),
            deciding=FlowReport.from_json(data) if "flow" in data else None,
            rests_on=tuple(r for r in rests if isinstance(r, str))
            if isinstance(rests, list)
            else (),
            decided=data.get("decided", False) is True,
            blend=Weighed.from_json(data.get("blend")),
            asked=tuple(map(Answer.from_json, _items(data.get("asked"))))
            if "asked" in data
            else None,
            before_llm=before if isinstance(before, str) else None,
        )
