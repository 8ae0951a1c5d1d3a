"""Measuring the guard on labelled drafts: leak rate, needed kept, unneeded removed, verdicts.

A labelled draft (``tests/data/guard_drafts.jsonl``) carries its recipient (``to``), what the
person typed for its purpose (``purpose_words``), its sender (``from``), its verdict and every
span of protected health information, each marked identifier or health and needed or not.
The guard is given only what a person would type (never the ``purpose`` label). Each labelled
span is then looked up in the output, by how much of it a change covered:

- removed: at least 80% of its characters were removed or generalised;
- kept: none of it was changed.

Leak rate: unneeded identifiers not removed, over all unneeded identifiers. Needed kept:
needed spans kept, over all needed spans. Unneeded removed: unneeded spans (both kinds)
removed. Verdict agreement: the guard's verdict on the draft against its label. The same is
measured for Presidio's analyzer and anonymizer with their defaults (the type-based baseline:
every entity it finds replaced by ``<TYPE>``), whose verdict is "prohibit" when it changed
anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.guard.message import json_lines

if TYPE_CHECKING:
    from privacy_checklist.reasoning.guard.message import Guard

#: a labelled span is removed when this share of its characters was changed
REMOVED = 0.8


def load_drafts(lines: Iterable[str], name: str = "drafts") -> list[dict[str, Any]]:
    """Labelled drafts, one JSON object a line; a ValueError names the line at fault."""
    out = json_lines(lines, name, ("text",))
    for number, row in enumerate(out, start=1):
        where = f"{name}: draft {number}"
        spans = row.get("spans")
        if not isinstance(spans, list):
            raise ValueError(f'{where}: needs "spans": a list of labelled spans ([] for none)')
        if row.get("verdict") not in ("permit", "prohibit"):
            raise ValueError(f'{where}: needs "verdict": "permit" or "prohibit"')
        for index, span in enumerate(spans):
            _check_span(f"{where}: span {index + 1}", row["text"], span)
    return out


def _check_span(where: str, text: str, span: Any) -> None:
    """A labelled span as the measure reads it; a ValueError says what it lacks."""
    if not isinstance(span, dict):
        raise ValueError(f"{where}: not an object")
    start, end = span.get("start"), span.get("end")
    if not (
        isinstance(start, int)
        and isinstance(end, int)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
    ):
        raise ValueError(f'{where}: needs whole numbers "start" and "end"')
    if not 0 <= start < end <= len(text):
        raise ValueError(f"{where}: offsets {start}..{end} are not inside the draft")
    if not isinstance(span.get("text"), str) or text[start:end] != span["text"]:
        raise ValueError(f'{where}: "text" {span.get("text")!r} is not the draft at its offsets')
    if span.get("kind") not in ("identifier", "health"):
        raise ValueError(f'{where}: needs "kind": "identifier" or "health"')
    if not isinstance(span.get("needed"), bool):
        raise ValueError(f'{where}: needs "needed": true or false')


@dataclass
class Output:
    """What a system made of one draft: the changed character ranges and its verdict."""

    changed: list[tuple[int, int]]
    verdict: str
    rewrite: str


def coverage(span: dict[str, Any], changed: Sequence[tuple[int, int]]) -> float:
    chars = [
        i
        for i in range(span["start"], span["end"])
        if not span["text"][i - span["start"]].isspace()
    ]
    if not chars:
        return 0.0
    hit = sum(1 for i in chars if any(a <= i < b for a, b in changed))
    return hit / len(chars)


def guard_output(guard: Guard, draft: dict[str, Any]) -> Output:
    """The guard on one draft, given only what a person would type."""
    guarded = guard.check(
        draft["text"],
        to=draft.get("to"),
        purpose=draft.get("purpose_words"),
        sender=draft.get("from"),
    )
    rewrite = guarded.rewrite if guarded.rewrite is not None else draft["text"]
    if guarded.rewrite is not None and guarded.rewrite != draft["text"]:
        decline = not any(d.span.text in rewrite for d in guarded.decisions) and all(
            d.needed is False for d in guarded.decisions
        )
        # the whole message replaced (a decline): everything in it is gone
        changed = [(0, len(draft["text"]))] if decline else _changed_ranges(draft["text"], guarded)
    else:
        changed = []
    return Output(changed, guarded.verdict, rewrite)


def _changed_ranges(text: str, guarded: Any) -> list[tuple[int, int]]:
    """The ranges of the draft the rewrite took out or changed: every unneeded span, and every
    sentence the rewrite dropped (the sentence of a span whose action is ``drop-sentence``)."""
    from privacy_checklist.reasoning.text import sentence_spans

    ranges = [(d.span.start, d.span.end) for d in guarded.unneeded]
    dropped = [d.span.start for d in guarded.decisions if d.action == "drop-sentence"]
    for start, end in sentence_spans(text, lines=True):
        if any(start <= at < end for at in dropped):
            ranges.append((start, end))
    return ranges


def presidio_output(analyzer: Any, anonymizer: Any, draft: dict[str, Any]) -> Output:
    """Presidio's analyzer and anonymizer with their defaults: every entity replaced."""
    results = analyzer.analyze(text=draft["text"], language="en")
    anonymized = anonymizer.anonymize(text=draft["text"], analyzer_results=results)
    changed = [(r.start, r.end) for r in results]
    return Output(changed, "prohibit" if results else "permit", anonymized.text)


def measure(
    drafts: Sequence[dict[str, Any]],
    system: Callable[[dict[str, Any]], Output],
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The figures of one system over labelled drafts (see the module docstring)."""
    counts = {
        "unneeded_identifiers": 0,
        "leaked": 0,
        "needed": 0,
        "needed_kept": 0,
        "unneeded": 0,
        "unneeded_removed": 0,
        "verdicts": 0,
        "verdict_agree": 0,
    }
    by_purpose: dict[str, dict[str, int]] = {}
    leaks: list[dict[str, Any]] = []
    lost: list[dict[str, Any]] = []
    started = time.perf_counter()
    for draft in drafts:
        out = system(draft)
        slot = by_purpose.setdefault(
            draft.get("purpose", "?"), {"drafts": 0, "verdict_agree": 0, "leaked": 0, "lost": 0}
        )
        slot["drafts"] += 1
        for span in draft["spans"]:
            covered = coverage(span, out.changed)
            if span["needed"]:
                counts["needed"] += 1
                if covered == 0:
                    counts["needed_kept"] += 1
                else:
                    slot["lost"] += 1
                    lost.append({"id": draft.get("id"), "span": span["text"]})
            else:
                counts["unneeded"] += 1
                removed = covered >= REMOVED
                counts["unneeded_removed"] += removed
                if span["kind"] == "identifier":
                    counts["unneeded_identifiers"] += 1
                    if not removed:
                        counts["leaked"] += 1
                        slot["leaked"] += 1
                        leaks.append(
                            {"id": draft.get("id"), "span": span["text"], "type": span.get("type")}
                        )
        if "verdict" in draft:
            counts["verdicts"] += 1
            agree = out.verdict == draft["verdict"]
            counts["verdict_agree"] += agree
            slot["verdict_agree"] += agree
        if progress:
            progress(1)
    seconds = time.perf_counter() - started

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "drafts": len(drafts),
        "leak_rate": share(counts["leaked"], counts["unneeded_identifiers"]),
        "needed_kept": share(counts["needed_kept"], counts["needed"]),
        "unneeded_removed": share(counts["unneeded_removed"], counts["unneeded"]),
        "verdict_agreement": share(counts["verdict_agree"], counts["verdicts"]),
        "counts": counts,
        "by_purpose": by_purpose,
        "drafts_per_second": round(len(drafts) / seconds, 1) if seconds else None,
        "leaks": leaks,
        "lost": lost,
    }


def measure_conversations(guard: Guard, conversations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Turn-level figures: stops on the labelled stopping turn, stops elsewhere, and
    conversations where the stopping turn was missed."""
    right = wrong = missed = labelled = turns = 0
    for conversation in conversations:
        results = guard.conversation(conversation["turns"])
        for turn, result in zip(conversation["turns"], results, strict=True):
            turns += 1
            labelled += bool(turn.get("stop"))
            if result["stop"] and turn.get("stop"):
                right += 1
            elif result["stop"]:
                wrong += 1
            elif turn.get("stop"):
                missed += 1
    return {
        "conversations": len(conversations),
        "turns": turns,
        "stopping_turns": labelled,
        "stopped_right": right,
        "stopped_wrongly": wrong,
        "missed": missed,
        "stop_recall": round(right / labelled, 4) if labelled else None,
        "stop_precision": round(right / (right + wrong), 4) if right + wrong else None,
    }
