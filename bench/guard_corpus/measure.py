"""The guard on the drafts corpus (issue 28), each writer apart: leak rate (unneeded identifiers
left), needed kept, unneeded removed (identifiers and health alike), verdict agreement, and
drafts a second; the same by the purposes the law names, and for the sensitive kinds of health
information the purpose does not need.

    python bench/guard_corpus/measure.py [--corpus bench/data/guard_corpus] [--writers d01,d02]
        [--json OUT.json]

The guard is given only what a person would type (the text, ``to``, ``purpose_words`` and
``from``; never the ``purpose`` label). Nothing of the guard is fitted on this corpus (its
identifier tagger was fitted on the clinical-text writers of ``bench/data/guard_text``, none of
them a drafts writer), so each writer's figure is what a writer it has not seen gets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from privacy_checklist.reasoning.guard.evaluate import guard_output, load_drafts, measure

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json, writer_sets

CORPUS = Path(__file__).resolve().parents[1] / "data" / "guard_corpus"
SENSITIVE = {"MENTAL_HEALTH", "SUBSTANCE_USE", "HIV_STI", "REPRODUCTIVE", "GENETIC", "SOCIAL"}
KEYS = ("leak_rate", "needed_kept", "unneeded_removed", "verdict_agreement", "drafts_per_second")


def sensitive_removed(drafts: list[dict[str, Any]], outputs: dict[str, Any]) -> float | None:
    """Of the unneeded spans of a sensitive kind, the share removed."""
    from privacy_checklist.reasoning.guard.evaluate import REMOVED, coverage

    hit = total = 0
    for draft in drafts:
        for span in draft["spans"]:
            if not span["needed"] and span.get("type") in SENSITIVE:
                total += 1
                hit += coverage(span, outputs[draft["id"]].changed) >= REMOVED
    return round(hit / total, 4) if total else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--writers", help="only these writers (comma-separated)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = writer_sets(parser, args.corpus, args.writers)
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard

    guard = Guard(kbmod.load(None))
    guard.check("warm-up: Pt seen today.", to="a chatbot")
    result: dict[str, Any] = {"writers": {}}
    everything: list[dict[str, Any]] = []
    outputs: dict[str, Any] = {}
    for path in files:
        drafts = load_drafts(path.read_text(encoding="utf-8").splitlines(), str(path))
        with tqdm(total=len(drafts), desc=path.stem, file=sys.stderr, disable=None) as bar:

            def run(draft: dict[str, Any]) -> Any:
                outputs[draft["id"]] = guard_output(guard, draft)
                return outputs[draft["id"]]

            figures = measure(drafts, run, bar.update)
        figures["sensitive_removed"] = sensitive_removed(drafts, outputs)
        result["writers"][path.stem] = {k: figures[k] for k in (*KEYS, "sensitive_removed")}
        result["writers"][path.stem]["drafts"] = figures["drafts"]
        everything += drafts
        print(
            f"{path.stem}: " + "  ".join(f"{k} {figures[k]}" for k in (*KEYS, "sensitive_removed")),
            flush=True,
        )
    cached = measure(everything, lambda d: outputs[d["id"]])
    result["all"] = {k: cached[k] for k in KEYS if k != "drafts_per_second"}
    result["all"]["drafts"] = cached["drafts"]
    result["all"]["sensitive_removed"] = sensitive_removed(everything, outputs)
    result["by_purpose"] = cached["by_purpose"]
    print("all: " + "  ".join(f"{k} {v}" for k, v in result["all"].items()))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
