"""What ``checklist-llm`` asked the model about a case's facts and what it made of each answer:
the :class:`Question` (which flow, which fact, why) and the :class:`Answer` (the model's word,
its evidence, the fact accepted or the problem that kept it out), as the checklist report
carries them (:class:`~privacy_checklist.reasoning.checklist.report.CaseReport`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from privacy_checklist.reasoning.reading.types import Fact


def text_of(value: object) -> str:
    """A written string field (anything else: "")."""
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Question:
    """One fact asked of the model: which flow, which key, why, and the question's words."""

    flow: int
    key: str
    question: str
    why: str

    @property
    def step(self) -> str:
        return f"fact {self.flow + 1} {self.key}"


@dataclass(frozen=True)
class Answer:
    """What the model said and what was made of it (``fact`` is None when not accepted)."""

    question: Question
    answer: str | None
    evidence: str
    fact: Fact | None
    problem: str | None

    @property
    def accepted(self) -> bool:
        return self.fact is not None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "flow": self.question.flow + 1,
            "key": self.question.key,
            "question": self.question.question,
            "why": self.question.why,
            "step": self.question.step,
            "answer": self.answer,
            "evidence": self.evidence,
            "accepted": self.fact is not None,
        }
        if self.fact is not None:
            data["fact"] = self.fact.to_json()
        if self.problem:
            data["problem"] = self.problem
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Answer:
        flow = data.get("flow")
        answer = data.get("answer")
        return cls(
            Question(
                (flow - 1) if isinstance(flow, int) and flow > 0 else 0,
                text_of(data.get("key")),
                text_of(data.get("question")),
                text_of(data.get("why")),
            ),
            answer if isinstance(answer, str) else None,
            text_of(data.get("evidence")),
            Fact.from_json(data.get("fact")),
            text_of(data.get("problem")) or None,
        )
