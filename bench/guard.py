"""Benchmark: the message guard's speed (issue 17's target: at least 50 drafts a second once
loaded; issue 28's: 20 clinical notes of about 800 characters a second) and its memory.

Reads the labelled drafts (default ``tests/data/guard_drafts.jsonl``: what a person types for
the recipient, the purpose and the sender, and the text), loads the guard once, then guards and
rewrites every draft, re-checking each rewrite:

- one at a time (``Guard.check``), as ``pcheck guard`` does;
- in a batch (``Guard.check_many``: spaCy parses the drafts together);
- the batch again, the options now seen (a clerk's recipients recur: the role graph's
  reading of a party is kept);
- with ``--notes``, the clinical-text writers' notes (``bench/data/guard_text/n*.jsonl``) one
  at a time, each pasted to an AI chatbot to summarise.

    python bench/guard.py [--file tests/data/guard_drafts.jsonl] [--notes] [--repeat 2]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET = 50.0  # drafts a second once loaded
NOTES_TARGET = 20.0  # notes of about 800 characters a second once loaded
NOTES = REPO / "bench" / "data" / "guard_text"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=str(REPO / "tests" / "data" / "guard_drafts.jsonl"))
    parser.add_argument("--repeat", type=int, default=2, help="times each measure is taken")
    parser.add_argument("--json", metavar="FILE", help="also write the figures there")
    parser.add_argument("--notes", action="store_true", help="also the writers' clinical notes")
    args = parser.parse_args()

    started = time.perf_counter()
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard

    guard = Guard(kbmod.load())
    guard.check("Hi Ana, your MRI from 4/2 is normal.", to="the patient")  # loads the parser
    loading = time.perf_counter() - started
    rows = [json.loads(line) for line in Path(args.file).read_text("utf-8").splitlines() if line]
    messages = [
        {
            "text": r["text"],
            "to": r.get("to"),
            "purpose": r.get("purpose_words"),
            "sender": r.get("from"),
        }
        for r in rows
    ]
    figures: dict[str, Any] = {"drafts": len(messages), "load_seconds": round(loading, 2)}

    def rate(run: Any) -> float:
        best = 0.0
        for _ in range(args.repeat):
            start = time.perf_counter()
            run()
            best = max(best, len(messages) / (time.perf_counter() - start))
        return round(best, 1)

    figures["one_at_a_time"] = rate(
        lambda: [
            guard.check(m["text"], to=m["to"], purpose=m["purpose"], sender=m["sender"])
            for m in messages
        ]
    )
    figures["batch"] = rate(lambda: guard.check_many(messages))
    guard.check_many(messages)
    start = time.perf_counter()
    guard.check_many(messages)
    figures["batch_options_seen"] = round(len(messages) / (time.perf_counter() - start), 1)
    if args.notes:
        notes = [
            json.loads(line)["text"]
            for path in sorted(NOTES.glob("n*.jsonl"))
            for line in path.read_text("utf-8").splitlines()
            if line.strip()
        ]
        figures["notes"] = len(notes)
        figures["note_chars"] = round(sum(map(len, notes)) / len(notes))
        start = time.perf_counter()
        for note in notes:
            guard.check(note, to="an AI chatbot", purpose="summarise this note")
        figures["notes_per_second"] = round(len(notes) / (time.perf_counter() - start), 1)
        figures["notes_target"] = NOTES_TARGET
        mark = "ok" if figures["notes_per_second"] >= NOTES_TARGET else "BELOW TARGET"
        print(
            f"{'notes':<20} {figures['notes_per_second']:>7} notes/s  ({mark}, target "
            f"{NOTES_TARGET:.0f}; {figures['notes']} notes of {figures['note_chars']} characters)"
        )
    figures["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    figures["target"] = TARGET
    for name in ("one_at_a_time", "batch", "batch_options_seen"):
        mark = "ok" if figures[name] >= TARGET else "BELOW TARGET"
        print(f"{name:<20} {figures[name]:>7} drafts/s  ({mark}, target {TARGET:.0f})")
    print(f"loading {figures['load_seconds']} s, peak memory {figures['peak_mb']} MB")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
