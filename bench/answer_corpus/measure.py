"""The answer reader on the answers corpus (issue 29), each writer apart, as ``pcheck answers``
reads and compares: committed verdicts read right (agreement), answers with no committed
verdict called unreadable, and wrong labels over all answers.

    python bench/answer_corpus/measure.py [--reader lwo|rules|shipped] [--json OUT.json]

``lwo`` (the development measure): each writer read by the learned reader
(:mod:`privacy_checklist.reasoning.llm.conclusion`) fitted on every other writer, so each
figure is what a family of models and prompts the reader has not seen gets. ``rules``: the
rules alone (the first reading of every writer was made with them, before anything was fitted).
``shipped``: the shipped model, fitted on every writer (in-sample). ``--also`` reads answer sets
outside the corpus (``tests/data/answers_*.jsonl``, whose writers the rules were developed on)
with the model fitted on the corpus's writers, never on them; reported apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from privacy_checklist.app.cli.answers import compare
from privacy_checklist.reasoning.llm import conclusion, conclusion_fit
from privacy_checklist.reasoning.llm.answers import read_rules

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json, writer_sets

CORPUS = Path(__file__).resolve().parents[1] / "data" / "answer_corpus"
KEYS = ("judged", "agreement", "unreadable_when_none", "wrong_share")


def rows_of(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{**json.loads(line), "writer": path.stem} for line in lines if line.strip()]


def read(rows: list[dict[str, Any]], reader: str, model: Any) -> list[dict[str, Any]]:
    for row in rows:
        if reader == "rules":
            row["read"] = read_rules(row["text"], row["question"]).label
        else:
            row["read"] = conclusion.read_learned(row["text"], row["question"], model=model).label
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--reader", choices=("lwo", "rules", "shipped"), default="lwo")
    parser.add_argument(
        "--also", nargs="*", type=Path, default=[], help="other answer sets, as writers"
    )
    parser.add_argument("--writers", help="only these writers (comma-separated) are measured")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = writer_sets(parser, args.corpus)
    measured = {path.stem for path in writer_sets(parser, args.corpus, args.writers)}
    sets = {path.stem: rows_of(path) for path in [*files, *args.also]}
    also = {path.stem for path in args.also}
    prepared: dict[str, list[dict[str, Any]]] = {}
    if args.reader == "lwo":  # each answer's sentences read once, for every fold
        for writer, rows in tqdm(sets.items(), desc="sentences", file=sys.stderr, disable=None):
            prepared[writer] = [p for p in map(conclusion_fit.prepared, rows) if p is not None]
    elif args.reader == "shipped" and conclusion.shipped() is None:
        parser.error("no shipped model: python -m privacy_checklist.reasoning.llm.conclusion_fit")
    result: dict[str, Any] = {"reader": args.reader, "writers": {}, "also": {}}
    everything: list[dict[str, Any]] = []
    for writer, rows in sets.items():
        if writer not in measured | also:
            continue
        model = None
        if args.reader == "lwo":
            model = conclusion_fit.fit_prepared(
                [p for w, items in prepared.items() if w not in (writer, *also) for p in items]
            )
        read(rows, args.reader, model)
        figures = compare(rows)
        if figures is None:
            parser.error(f"{writer}: no answer carries a label to compare with")
        result["also" if writer in also else "writers"][writer] = figures
        if writer not in also:
            everything += rows
        print(f"{writer}: " + "  ".join(f"{k} {figures[k]}" for k in KEYS), flush=True)
    result["all"] = compare(everything)
    assert result["all"] is not None
    print("all: " + "  ".join(f"{k} {result['all'][k]}" for k in KEYS))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
