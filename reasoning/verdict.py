"""The verdict: what every method returns, the CLI prints, the browser shows and an evaluation
logs, and the one set of labels.

A :class:`Verdict` says permitted / prohibited / not applicable (:class:`Label`), the norms it
rests on, the reasoning trace, the flows read from the case and the norms retrieval found; the
offline reasoner adds its probabilities, the roles, HIPAA information types and cues it read,
an LLM method what the model was asked and answered (``calls``), the model's name and, when
there is no verdict, why (``failure``). Two outcomes are no verdict: ``parse_failure`` (the
answer held no readable label: the method's own failure, counted as wrong) and
``request_failure`` (an LLM request failed: it says nothing about the method, and an
evaluation asks again).

:meth:`Verdict.to_json` is the form every verdict is printed (``--json``) and logged in (one
line per case of ``pcheck eval``); :meth:`Verdict.from_json` reads it back, from this version's
logs or an older one's. Every method is a :class:`Reasoner`.

The mapping from the ways a case file writes a gold label to these labels is
:data:`privacy_checklist.ingest.cases.LABEL_SYNONYMS` (``ingest/`` reads case files and is left
of this layer); :meth:`Label.of_case` reads with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from privacy_checklist.ingest.cases import LABEL_SYNONYMS, case_label
from privacy_checklist.reasoning.checklist.report import CaseReport
from privacy_checklist.reasoning.llm.prompting import PROMPT_VERSION, Call
from privacy_checklist.reasoning.reading.types import Flow


class Label(StrEnum):
    """A verdict's label: one of the three decisions, or why there is none."""

    PERMIT = "permit"
    PROHIBIT = "prohibit"
    NOT_APPLICABLE = "not_applicable"
    PARSE_FAILURE = "parse_failure"
    REQUEST_FAILURE = "request_failure"

    @property
    def decided(self) -> bool:
        """Whether this is a decision (permit, prohibit, not applicable)."""
        return self in LABELS

    @classmethod
    def read(cls, value: object) -> Label | None:
        """The label a value names exactly (``"permit"``), else None."""
        return cls(value) if isinstance(value, str) and value in _VALUES else None

    @classmethod
    def of_case(cls, written: object) -> Label | None:
        """The decision a case file's gold label names (``Forbid``, ``not applicable`` ...),
        read with the one mapping (:func:`privacy_checklist.ingest.cases.case_label`)."""
        found = case_label(written)
        return cls(found) if found is not None else None

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> Label:
        """The label of a logged verdict: its decision, else a request failure when its request
        failed (older logs: ``retry`` set), else a parse failure."""
        label = cls.read(record.get("verdict"))
        if label is not None and label.decided:
            return label
        if label is cls.REQUEST_FAILURE or record.get("retry"):
            return cls.REQUEST_FAILURE
        return cls.PARSE_FAILURE


_VALUES = frozenset(label.value for label in Label)
#: The three decisions, in the order of every table and model.
LABELS: tuple[Label, ...] = (Label.PERMIT, Label.PROHIBIT, Label.NOT_APPLICABLE)
PARSE_FAILURE = Label.PARSE_FAILURE
REQUEST_FAILURE = Label.REQUEST_FAILURE

if set(LABEL_SYNONYMS) != {label.value for label in LABELS}:  # one set of labels
    raise RuntimeError("ingest/cases.py LABEL_SYNONYMS must map onto the verdict labels")


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    """A list field of a record (a lone value as a list of one; nothing as none)."""
    if isinstance(value, list):
        return value
    return [] if value in (None, "", {}) else [value]


@dataclass(frozen=True, slots=True, kw_only=True)
class CitedNorm:
    """A norm a verdict rests on: its paragraph id, text and norm type."""

    id: str
    text: str = ""
    norm_type: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "norm_type": self.norm_type}

    @classmethod
    def from_json(cls, data: object) -> CitedNorm | None:
        """A logged norm (an id alone in older logs); None for anything else."""
        if isinstance(data, str) and data:
            return cls(id=data)
        if isinstance(data, Mapping) and data.get("id"):
            return cls(
                id=str(data["id"]),
                text=_text(data.get("text")),
                norm_type=_text(data.get("norm_type")),
            )
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievedNorm:
    """A norm a method's retrieval found: its id, score, the retriever (``method``) and, when
    the retriever says, why (``via``: CI-ES's matches, a hybrid's sources)."""

    id: str
    score: float
    method: str = ""
    via: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": self.score,
            "method": self.method,
            **({"via": self.via} if self.via else {}),
        }

    @classmethod
    def from_json(cls, data: object) -> RetrievedNorm | None:
        """A logged record: ``method`` and ``via`` are each read when present (an older log's
        LLM methods wrote ``via`` alone, its offline reasoner ``method`` alone)."""
        if not isinstance(data, Mapping) or not (data.get("id") or data.get("node")):
            return None
        try:
            score = float(data.get("score") or 0.0)
        except (TypeError, ValueError):
            score = 0.0
        return cls(
            id=str(data.get("id") or data.get("node")),
            score=score,
            method=_text(data.get("method")),
            via=_text(data.get("via")),
        )


@dataclass(kw_only=True)
class Verdict:
    """permitted / prohibited / not applicable (or no verdict and why), what it rests on, and
    why (see the module docstring)."""

    label: Label
    method: str
    probabilities: dict[str, float] = field(default_factory=dict)
    norms: list[CitedNorm] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    #: the regulatory roles read, each with the words of the case it was read from
    roles: dict[str, str] = field(default_factory=dict)
    #: the HIPAA information types read, each with its words
    hipaa_types: dict[str, str] = field(default_factory=dict)
    cues: list[dict[str, Any]] = field(default_factory=list)
    raw: str = ""
    #: the flows read from the case (a reader's, with their parts and spans)
    flows: list[Flow] = field(default_factory=list)
    #: None when the method retrieves nothing of its own (not even an empty list)
    retrieved: list[RetrievedNorm] | None = None
    # what an LLM method adds
    llm: str | None = None
    calls: list[Call] = field(default_factory=list)
    failure: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: the checklist methods' checklist: the deciding flow's applicability, prohibitions,
    #: candidates with their conditions met / unmet / unknown, what would change the verdict,
    #: and every flow's own checklist
    checklist: CaseReport | None = None

    @property
    def decided(self) -> bool:
        return self.label.decided

    @property
    def request_failed(self) -> bool:
        """No verdict because an LLM request failed (an evaluation asks again)."""
        return self.label is Label.REQUEST_FAILURE

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "verdict": self.label.value,
            "probabilities": self.probabilities,
            "norms": [norm.to_json() for norm in self.norms],
            "reasoning": self.reasoning,
            "roles": self.roles,
            "information_types": self.hipaa_types,
            "cues": self.cues,
            "method": self.method,
            "raw": self.raw,
            "flows": [flow.to_json() for flow in self.flows],
        }
        if self.retrieved is not None and (self.retrieved or self.llm is not None):
            data["retrieved"] = [hit.to_json() for hit in self.retrieved]
        if self.checklist is not None:
            data["checklist"] = self.checklist.to_json()
        if self.llm is not None:
            data |= {
                "llm": self.llm,
                "prompt_version": PROMPT_VERSION,
                "failure": self.failure,
                "retry": self.request_failed,
                "prompts": [c.prompt_json() for c in self.calls],
                "answers": [c.answer_json() for c in self.calls],
                **self.details,
            }
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Verdict:
        """A verdict as :meth:`to_json` wrote it (a ``--json`` output, a line of an evaluation
        log, this version's or an older one's). Never raises for odd fields: what cannot be
        read is left out."""
        known = set(cls.__dataclass_fields__) | {
            "verdict",
            "information_types",
            "prompt_version",
            "retry",
            "prompts",
            "answers",
            # what an evaluation log adds around a verdict
            "case_id",
            "gold",
            "inputs",
        }
        prompts = [p for p in _list(data.get("prompts")) if isinstance(p, Mapping)]
        by_step = {p.get("step"): p for p in prompts}
        calls = []
        for number, answer in enumerate(_list(data.get("answers"))):
            if not isinstance(answer, Mapping):
                continue
            prompt = prompts[number] if number < len(prompts) else by_step.get(answer.get("step"))
            messages = _list(prompt.get("messages")) if prompt is not None else []
            text = answer.get("text")
            calls.append(
                Call(
                    step=_text(answer.get("step")),
                    messages=[m for m in messages if isinstance(m, dict)],
                    text=None if text is None else str(text),
                    error=None if answer.get("error") is None else str(answer["error"]),
                    cached=bool(answer.get("cached")),
                    schema=_text(answer.get("schema")),
                )
            )
        probabilities = {}
        for key, value in _dict(data.get("probabilities")).items():
            if isinstance(value, int | float):
                probabilities[str(key)] = float(value)
        retrieved = (
            None
            if "retrieved" not in data
            else [
                hit
                for hit in map(RetrievedNorm.from_json, _list(data.get("retrieved")))
                if hit is not None
            ]
        )
        llm = data.get("llm")
        failure = data.get("failure")
        return cls(
            label=Label.of_record(data),
            method=_text(data.get("method")),
            probabilities=probabilities,
            norms=[n for n in map(CitedNorm.from_json, _list(data.get("norms"))) if n],
            reasoning=[_text(step) for step in _list(data.get("reasoning"))],
            roles={str(k): _text(v) for k, v in _dict(data.get("roles")).items()},
            hipaa_types={str(k): _text(v) for k, v in _dict(data.get("information_types")).items()},
            cues=[c for c in _list(data.get("cues")) if isinstance(c, dict)],
            raw=_text(data.get("raw")),
            flows=[Flow.from_json(f) for f in _list(data.get("flows")) if isinstance(f, Mapping)],
            retrieved=retrieved,
            llm=None if llm is None else str(llm),
            calls=calls,
            failure=None if not failure else str(failure),
            details={k: v for k, v in data.items() if k not in known},
            checklist=CaseReport.from_json(data["checklist"])
            if isinstance(data.get("checklist"), Mapping)
            else None,
        )


class Reasoner(Protocol):
    """A method: it has a name and decides a case (every method of
    :func:`privacy_checklist.reasoning.methods.build_method`)."""

    @property
    def name(self) -> str: ...

    def check(self, text: str) -> Verdict:
        """The verdict on a narrative.

        Raises:
            QueryError: the text is empty or not text.
        """
        ...

    def settings(self) -> dict[str, Any]:
        """What decides its verdicts besides the case (parameters, models, endpoint, prompts,
        the knowledge base), as values or digests: an evaluation reuses a logged verdict only
        when they are the same (:func:`~privacy_checklist.reasoning.evaluation.digests.
        decision_settings`)."""
        ...
