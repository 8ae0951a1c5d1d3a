"""Finding the committed conclusion of a model's answer wherever the model puts it, learned from
answers written by many hands (issue 29).

The rules (:mod:`.answers`) read a verdict's words well — a predicate, its negation, a hedge,
a condition — but look for it only where a conclusion marker or the answer's end puts it. Real
models conclude anywhere: in "Step 3: Assessment", in a first sentence followed by restated
facts, before a caveat about something else. Two small models, fitted by :mod:`.conclusion_fit`
on the answers corpus (``bench/data/answer_corpus``, one writer a family of models and prompts),
read instead:

1. **which sentence commits** — each sentence scored from where it stands, what the rules find
   in it (a verdict, hedged, conditional, two labels), whether it speaks of the case ("this
   disclosure", "here") rather than the law in general, the words around it (a heading, a
   retraction or a hedge after it) and its static sentence vector
   (:mod:`privacy_checklist.kg.static`);
2. **whether the answer commits at all** — from the best sentence's score and its rivals', the
   rules' reading and its reason (hedged, conditional, contradicting, repeating, declining),
   refusals, hedges, a cut-off end and repetition.

The label is always the one the rules read in the chosen sentence, never the model's: a
sentence in which the rules find no verdict, or two, gives none. A JSON field, a tag, a final
``Answer:`` line or a bare label read by the rules stands as read, and so does their finding
that such parts disagree or that the answer takes its conclusion back (:data:`VETOES`).
Where the models are not sure enough (:attr:`ConclusionModel.sentence_floor`,
:attr:`ConclusionModel.answer_floor`; :attr:`ConclusionModel.agreed_floor` when the rules' own
reading of the prose gives the chosen sentence's label, two readers agreeing), the answer is
unreadable, with the rules' reason or the model's. Without the shipped model file the rules
alone read (:func:`~.answers.read_rules`).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.llm import answers as rules
from privacy_checklist.reasoning.llm.answers import Read
from privacy_checklist.reasoning.llm.continuation import own_answer
from privacy_checklist.reasoning.llm.labels import HEDGES
from privacy_checklist.reasoning.text import data_path

MODEL = "answer_reader.json"
#: the readings the rules make from the answer's form, which stand as read
STRUCTURED = frozenset({"json", "tag", "line", "label", "restated"})
#: the rules' reasons for no label that stand: the answer's form settles it (JSON fields, tags
#: or answer lines that disagree), or the answer takes its conclusion back
VETOES = ("disagree", "is not a label", "takes its conclusion back")
_HEADING = re.compile(
    r"\b(?:step \d+|conclusion|determination|verdict|final|answer|summary|bottom line)\b", re.I
)
#: words that put a sentence about the case asked, not about the law in general
_THE_CASE = re.compile(
    r"\b(?:this|the present|the instant|our)\s+(?:case|flow|disclosure|situation|scenario|use|"
    r"release|sharing|call|email|conduct)\b|\bhere\b",
    re.I,
)
_AMONG = re.compile(r"\b(?:but not|not to the|while the|whereas)\b", re.I)


def ended(text: str) -> bool:
    """Whether a text ends as written text ends, not cut off mid-word or mid-clause: its last
    character is not a letter, a digit or a joining mark (an emoji or a closing mark ends)."""
    last = text.rstrip()[-1:]
    return bool(last) and not (last.isalnum() or last in ",;:-–—(/&'")


#: the rules' reasons for no label that the answer model reads (a substring each)
REASONS = ("hedged", "conditional", "contradicts", "repeats", "declines", "takes its conclusion")


def sentence_features(sentences: list[str], i: int, question: str) -> tuple[list[float], set[str]]:
    """One sentence's features, and the labels its statements give (hedged or not)."""
    s = sentences[i]
    found = rules._statements(rules._OUTRIGHT.sub("", s), question)
    plain = [st for st in found if not st.hedged and not st.conditional]
    n = len(sentences)
    after = " ".join(sentences[i + 1 :])
    flags = (
        i == n - 1,
        i == 0,
        i >= n - 2,
        rules._CONCLUDES.search(s),
        HEDGES.search(s),
        rules._REFUSAL.search(s),
        rules._CONDITION.search(s),
        found,
        plain,
        len({st.label for st in plain}) > 1,
        any(st.hedged for st in found),
        any(st.conditional for st in found),
        rules._RETRACTS.search(after),
        HEDGES.search(after),
        rules._OUTRIGHT.search(s),
        _HEADING.search(s),
        _THE_CASE.search(s),
        ended(s),
        sentences.count(s) > 1,
    )
    features = [i / max(1, n - 1), min(len(s.split()), 60) / 60, *map(float, map(bool, flags))]
    return features, {st.label for st in found if not st.conditional}


def answer_features(
    text: str,
    sentences: list[str],
    labels: list[set[str]],
    scores: npt.NDArray[np.floating[Any]],
    rule: Read,
) -> list[float]:
    """The answer's features: its best candidate sentence and rivals, the rules' reading."""
    candidates = sorted(
        (k for k in range(len(sentences)) if len(labels[k]) == 1), key=lambda k: -scores[k]
    )
    best = candidates[0] if candidates else None
    label = next(iter(labels[best])) if best is not None else None
    rival = max((scores[k] for k in candidates if labels[k] != labels[candidates[0]]), default=0.0)
    strong = {next(iter(labels[k])) for k in candidates if scores[k] >= 0.3}
    counts = Counter(sentences)
    first = sentences[best] if best is not None else ""
    return [
        float(scores[best]) if best is not None else 0.0,
        float(best is not None),
        len(set().union(*labels)) / 3 if labels else 0.0,
        float(bool(rules._REFUSAL.search(text))),
        len(HEDGES.findall(text)) / 5,
        float(not ended(text)),
        max(counts.values()) / 5 if counts else 0.0,
        len(sentences) / 40,
        float(bool(rules._RETRACTS.search(text))),
        float(rival),
        len(strong) / 3,
        float(rule.label is not None and rule.label == label),
        float(rule.label is not None and rule.label != label),
        *(float(reason in rule.reason) for reason in REASONS),
        float(bool(HEDGES.search(first))),
        float(bool(_AMONG.search(first))),
    ]


def _logistic(x: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.floating[Any]]:
    out: npt.NDArray[np.floating[Any]] = 1.0 / (1.0 + np.exp(-x))
    return out


@dataclass(frozen=True)
class ConclusionModel:
    """The two fitted logistic models and their floors (a JSON file, :meth:`load`)."""

    sentence_coef: npt.NDArray[np.float64]
    sentence_bias: float
    answer_coef: npt.NDArray[np.float64]
    answer_bias: float
    sentence_floor: float = 0.5
    answer_floor: float = 0.85
    agreed_floor: float = 0.5

    @classmethod
    def load(cls, path: Path) -> ConclusionModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            np.asarray(data["sentence"]["coef"]),
            float(data["sentence"]["bias"]),
            np.asarray(data["answer"]["coef"]),
            float(data["answer"]["bias"]),
            float(data["sentence_floor"]),
            float(data["answer_floor"]),
            float(data["agreed_floor"]),
        )

    def scores(self, sentences: list[str], question: str) -> tuple[Any, list[set[str]]]:
        """Each sentence's chance of being the committed one, and its labels."""
        from privacy_checklist.kg.static import static_encoder

        rows, labels = zip(
            *(sentence_features(sentences, i, question) for i in range(len(sentences))), strict=True
        )
        x = np.hstack([np.asarray(rows), static_encoder().encode(list(sentences))])
        return _logistic(x @ self.sentence_coef + self.sentence_bias), list(labels)

    def read(self, text: str, question: str, rule: Read) -> Read:
        """The committed verdict of a prose answer, or None and why."""
        sentences = rules.stated(text)
        if not sentences:
            return rule
        scores, labels = self.scores(sentences, question)
        x = np.asarray(answer_features(text, sentences, labels, scores, rule))
        committed = float(_logistic(x @ self.answer_coef + self.answer_bias))
        candidates = [k for k in range(len(sentences)) if len(labels[k]) == 1]
        if not candidates:
            return (
                rule
                if rule.label is None
                else Read(None, "no sentence states one verdict", "prose")
            )
        best = max(candidates, key=lambda k: scores[k])
        sentence, label = sentences[best], next(iter(labels[best]))
        floor = self.agreed_floor if rule.label == label else self.answer_floor
        if committed < floor or scores[best] < self.sentence_floor:
            why = rule.reason if rule.label is None else f"read {rule.label!r}, but not committed"
            return Read(
                None,
                f"{why} (committed {committed:.2f}, the likeliest sentence "
                f"{float(scores[best]):.2f}: {rules._short(sentence)})",
                "prose",
                sentence,
            )
        return Read(label, "", "prose", sentence)


@functools.cache
def shipped() -> ConclusionModel | None:
    """The shipped model, or None when its file is missing."""
    path = data_path(MODEL)
    return ConclusionModel.load(path) if path.exists() else None


def read_learned(
    text: str | None, question: str = "verdict", model: ConclusionModel | None = None
) -> Read:
    """The label of an answer: the rules' reading of its form, else the learned reader of its
    prose (``model``, else the shipped one; without either, the rules' prose reading)."""
    rule = rules.read_rules(text, question)
    model = model or shipped()
    if model is None or text is None or not text.strip():
        return rule
    text = own_answer(text)
    if rule.label is not None and rule.how in STRUCTURED:
        return rule
    if rule.label is None and any(veto in rule.reason for veto in VETOES):
        return rule
    return model.read(text, question, rule)
