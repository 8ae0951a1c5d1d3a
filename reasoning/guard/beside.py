"""What the purpose does not need, whatever its words' types: the need model's judgement of a
message's sentences and identifiers (:mod:`.need`), applied to the guard's span decisions; and
the condition model's reading of whether the condition a purpose needs is stated."""

from __future__ import annotations

import re
from collections.abc import Sequence

from privacy_checklist.reasoning.guard.need import NeedModel, NeedModels
from privacy_checklist.reasoning.guard.phi import PhiSpan
from privacy_checklist.reasoning.guard.phi_data import identifier_types
from privacy_checklist.reasoning.guard.purpose import PurposeReading, SpanDecision

MINIMUM_NECESSARY = "164.502(b)(1)"
#: the condition model's chance at which the condition counts as stated where the word lists
#: find it neither stated nor denied. Chosen leaving the condition writers out
#: (bench/guard_conditions/measure.py): at 0.5 the stated messages read as stated 0.84 and the
#: others 0.14 (the word lists alone: 0.75 and 0.13); at 0.6: 0.78 and 0.13; at 0.4: 0.95 and
#: 0.22. 0.6 is the lowest at which it grants the condition no more often than the lists where
#: it is left out or denied. Fitted on the drafts instead (a draft that lets anything go
#: states it), it read the recipient, not the condition.
STATED = 0.6


def condition_read(
    models: NeedModels | None, purpose: PurposeReading, said: str
) -> tuple[bool, str, str] | None:
    """The condition the purpose needs, read as stated by the condition model where the word
    lists found it neither stated nor denied: the norm it rests on (the condition whose norm
    is the purpose's, else its first) and the condition's kind. None when it is not read as
    stated, there is no model, the purpose presumes its condition, or the recipient is
    unverified."""
    spec = purpose.spec
    kinds = spec.get("permission") or []
    if models is None or not kinds or spec.get("presume") or purpose.unverified:
        return None
    chance = models.stated(purpose.words, said)
    if chance is None or chance < STATED:
        return None
    norms = spec.get("norms_by_permission", {})
    kind = next((k for k in kinds if norms.get(k) == spec.get("norm")), kinds[0])
    return True, f"{norms.get(kind, spec['norm'])} (read in the words, p={chance:.2f})", kind


def judge(
    model: NeedModel,
    text: str,
    sentences: Sequence[tuple[int, int]],
    decisions: list[SpanDecision],
    purpose: PurposeReading,
    to: str,
) -> list[SpanDecision]:
    """The sentences the model reads as carrying only what the purpose does not need go
    whatever their words' types: each span in one is unneeded, and one with no span is taken
    out whole (a span of the sentence, its type ``BESIDE``). The message's likeliest-needed
    sentence stays whatever the model reads: a message all beside its purpose says the purpose
    was misread, not the text. Then each identifier left (:func:`identifiers`)."""
    chances = model.beside([text[a:b] for a, b in sentences], to, purpose.words)
    out = list(decisions)
    label = purpose.spec.get("label", "the purpose")
    surest = min(range(len(chances)), key=lambda n: chances[n])
    for n, ((start, end), chance) in enumerate(zip(sentences, chances, strict=True)):
        if (
            chance < model.threshold
            or n == surest
            or not re.search(r"[A-Za-z]{2,}", text[start:end])
        ):
            continue
        why = (
            f"beside the purpose ({label}): the sentence carries what it does not need "
            f"(the need model, p={chance:.2f})"
        )
        inside = [k for k, d in enumerate(out) if start <= d.span.start < end]
        for k in inside:
            if out[k].needed is not False:
                out[k] = SpanDecision(out[k].span, False, why, MINIMUM_NECESSARY)
        if not inside:
            bare = text[start:end].strip()
            at = text.index(bare, start)
            span = PhiSpan(at, at + len(bare), bare, "health", "BESIDE", source="need")
            out.append(SpanDecision(span, False, why, MINIMUM_NECESSARY))
    out = identifiers(model, text, sentences, out, purpose, to)
    return sorted(out, key=lambda d: d.span.start)


def identifiers(
    model: NeedModel,
    text: str,
    sentences: Sequence[tuple[int, int]],
    decisions: list[SpanDecision],
    purpose: PurposeReading,
    to: str,
) -> list[SpanDecision]:
    """An identifier the purpose's types allow still goes when the model's identifier head
    reads that this purpose does not need it here (a social security number in a report that
    needs the name, a relative's phone in a claim)."""
    kept = [
        n
        for n, d in enumerate(decisions)
        if d.needed and d.span.kind == "identifier" and d.span.source != "need"
    ]
    found = []
    for n in kept:
        at = decisions[n].span.start
        start, end = next(((a, b) for a, b in sentences if a <= at < b), (0, len(text)))
        found.append((decisions[n].span.type, text[start:end]))
    chances = model.identifiers(found, to, purpose.words)
    out = list(decisions)
    label = purpose.spec.get("label", "the purpose")
    for n, chance in zip(kept, chances, strict=True):
        if chance >= model.identifier_threshold:
            kind = identifier_types()[out[n].span.type]["label"]
            why = f"{label} does not need this {kind} here (the need model, p={chance:.2f})"
            out[n] = SpanDecision(out[n].span, False, why, MINIMUM_NECESSARY)
    return out
