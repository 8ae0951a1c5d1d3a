"""The guard on the drafts corpus (issue 28), each writer apart: leak rate (unneeded identifiers
left), needed kept, unneeded removed (identifiers and health alike), verdict agreement, and
drafts a second; the same by the purposes the law names, and for the sensitive kinds of health
information the purpose does not need.

    python bench/guard_corpus/measure.py [--corpus bench/data/guard_corpus] [--writers d01,d02]
        [--json OUT.json]

The guard is given only what a person would type (the text, ``to``, ``purpose_words`` and
``from``; never the ``purpose`` label). Its purpose and need models are learned from this corpus,
so each writer is read by models fitted on the other writers (``--models lwo``, the default;
folds cached by ``folds.py``); ``--models shipped`` reads with the shipped models (fitted on
every writer: in-sample, not a result) and ``--models none`` with the data file's words alone
(the guard before the models). The condition model is fitted on the condition writers'
messages (``bench/data/guard_conditions``), none of them a drafts writer. The identifier
tagger was fitted on the clinical-text writers of ``bench/data/guard_text``, none of them a
drafts writer. ``purpose_read`` is the share of
drafts whose purpose the guard read as the writer labelled it.
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
#: the condition writers' messages (bench/data/guard_conditions): the condition model's data
CONDITIONS = CORPUS.parent / "guard_conditions"
SENSITIVE = {"MENTAL_HEALTH", "SUBSTANCE_USE", "HIV_STI", "REPRODUCTIVE", "GENETIC", "SOCIAL"}
KEYS = ("leak_rate", "needed_kept", "unneeded_removed", "verdict_agreement", "drafts_per_second")
EXTRA = ("sensitive_removed", "purpose_read")


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


def purpose_read(drafts: list[dict[str, Any]], guard: Any) -> float:
    """The share of drafts whose purpose the guard reads as the writer labelled it."""
    hit = 0
    for draft in drafts:
        reading = guard.read_purpose(draft.get("purpose_words"), draft.get("to"), draft["text"])
        hit += reading.law == draft["purpose"]
    return round(hit / len(drafts), 4) if drafts else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--writers", help="only these writers (comma-separated)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--models",
        choices=("lwo", "shipped", "none"),
        default="lwo",
        help="purpose and need models: fitted leaving the writer out (default), shipped, none",
    )
    args = parser.parse_args()
    files = writer_sets(parser, args.corpus, args.writers)
    from folds import Folds

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard
    from privacy_checklist.reasoning.guard.need_fit import read_conditions, read_sets

    base = Guard(kbmod.load(None), need=None if args.models == "none" else "shipped")
    base.check("warm-up: Pt seen today.", to="a chatbot")
    told = read_conditions(CONDITIONS) if CONDITIONS.exists() else {}
    conditions = [{**i, "writer": w} for w, items in sorted(told.items()) for i in items]
    folds = Folds(read_sets(args.corpus), conditions) if args.models == "lwo" else None
    result: dict[str, Any] = {"writers": {}}
    everything: list[dict[str, Any]] = []
    outputs: dict[str, Any] = {}
    for path in files:
        drafts = load_drafts(path.read_text(encoding="utf-8").splitlines(), str(path))
        guard = base
        if folds is not None:
            guard = Guard(base.kb, reasoner=base.reasoner, phi=base.phi, need=folds(path.stem))
        with tqdm(total=len(drafts), desc=path.stem, file=sys.stderr, disable=None) as bar:

            def run(draft: dict[str, Any], guard: Any = guard) -> Any:
                outputs[draft["id"]] = guard_output(guard, draft)
                return outputs[draft["id"]]

            figures = measure(drafts, run, bar.update)
        figures["sensitive_removed"] = sensitive_removed(drafts, outputs)
        # without the models no purpose the law names is read: not a figure
        figures["purpose_read"] = purpose_read(drafts, guard) if args.models != "none" else None
        result["writers"][path.stem] = {k: figures[k] for k in (*KEYS, *EXTRA)}
        result["writers"][path.stem]["drafts"] = figures["drafts"]
        everything += drafts
        print(
            f"{path.stem}: " + "  ".join(f"{k} {figures[k]}" for k in (*KEYS, *EXTRA)),
            flush=True,
        )
    cached = measure(everything, lambda d: outputs[d["id"]])
    result["all"] = {k: cached[k] for k in KEYS if k != "drafts_per_second"}
    result["all"]["drafts"] = cached["drafts"]
    result["all"]["sensitive_removed"] = sensitive_removed(everything, outputs)
    weights = [result["writers"][p.stem]["drafts"] for p in files]
    read = [
        (result["writers"][p.stem]["purpose_read"], w) for p, w in zip(files, weights, strict=True)
    ]
    result["all"]["purpose_read"] = (
        round(sum(r * w for r, w in read) / sum(weights), 4) if args.models != "none" else None
    )
    result["models"] = args.models
    result["by_purpose"] = cached["by_purpose"]
    print("all: " + "  ".join(f"{k} {v}" for k, v in result["all"].items()))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
