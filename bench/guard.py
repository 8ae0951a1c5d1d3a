"""Benchmark: the message guard's speed (issue 17's target: at least 50 drafts a second once
loaded) and its memory.

Reads the labelled drafts (default ``tests/data/guard_drafts.jsonl``: what a person types for
the recipient, the purpose and the sender, and the text), loads the guard once, then guards and
rewrites every draft, re-checking each rewrite:

- one at a time (``Guard.check``), as ``pcheck guard`` does;
- in a batch (``Guard.check_many``: spaCy parses the drafts together);
- the batch again, the options now seen (a clerk's recipients recur: the role graph's
  reading of a party is kept).

    python bench/guard.py [--file tests/data/guard_drafts.jsonl] [--repeat 2] [--json out.json]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=str(REPO / "tests" / "data" / "guard_drafts.jsonl"))
    parser.add_argument("--repeat", type=int, default=2, help="times each measure is taken")
    parser.add_argument("--json", metavar="FILE", help="also write the figures there")
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
