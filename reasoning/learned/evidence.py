"""The case's evidence the checklist's learned layer weighs (:mod:`.blend`): the checklist's
outcome as numbers, and the sentences the checklist's flows were read from (whose sentence
embedding the layer weighs)."""

from __future__ import annotations

from collections.abc import Sequence

from privacy_checklist.reasoning.checklist.decide import Checklist, combine
from privacy_checklist.reasoning.reading.types import PARTS
from privacy_checklist.reasoning.text import sentence_spans

LABELS = ("permit", "prohibit", "not_applicable")
APPLICABILITY = ("sender_covered", "acting_in_role", "information_is_phi")


def checklist_feature_names() -> list[str]:
    return (
        [f"checklist:label:{label}" for label in LABELS]
        + [f"checklist:flows:{label}" for label in LABELS]
        + [
            "checklist:no_flow",
            "checklist:flows",
            "checklist:share_prohibit",
            "checklist:prohibition_triggered",
            "checklist:candidate_met",
            "checklist:candidate_unmet",
            "checklist:decided",
        ]
        + [f"checklist:stated_false:{key}" for key in APPLICABILITY]
    )


def checklist_features(checklists: Sequence[Checklist]) -> list[float]:
    """The checklist's outcome on a case as numbers (see :func:`checklist_feature_names`)."""
    case = combine(checklists)
    count = {label: sum(c.label == label for c in checklists) for label in LABELS}
    flows = len(checklists)
    values = [1.0 if case is not None and case.label == label else 0.0 for label in LABELS]
    values += [float(min(count[label], 5)) / 5.0 for label in LABELS]
    values += [
        1.0 if case is None else 0.0,
        float(min(flows, 8)) / 8.0,
        count["prohibit"] / flows if flows else 0.0,
        1.0 if any(c.prohibitions for c in checklists) else 0.0,
        1.0 if any(n.status == "met" for c in checklists for n in c.candidates) else 0.0,
        1.0 if any(n.status == "unmet" for c in checklists for n in c.candidates) else 0.0,
        1.0 if case is not None and case.decided else 0.0,
    ]
    values += [
        1.0 if any(c.flow.fact(key).value is False for c in checklists) else 0.0
        for key in APPLICABILITY
    ]
    return values


def flow_text(text: str, checklists: Sequence[Checklist]) -> str:
    """The sentences of ``text`` that the checklist's flows were read from (a part or a fact of
    some flow starts in them), in their order; the whole text when no flow was read from a
    sentence. The case's sentence embedding is of these alone: embedded whole, a sentence that
    tells no flow (a greeting, the weather, an emoji) moved the verdict of one narrative in
    nine (``bench/corpus/invariance.py``); the cues and retrieved norms, read from the whole
    text, hardly move."""
    starts = [
        part.start
        for c in checklists
        for part in (getattr(c.flow, name) for name in PARTS)
        if part is not None and part.start >= 0
    ]
    starts += [fact.start for c in checklists for fact in c.flow.facts.values() if fact.start >= 0]
    spans = sentence_spans(text)
    kept = [(a, b) for a, b in spans if any(a <= start < b for start in starts)]
    if not kept:
        return text
    return " ".join(text[a:b] for a, b in kept)
