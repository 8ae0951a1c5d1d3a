"""The answer reader on the answers corpus (issue 29), each writer apart, as ``pcheck answers``
reads and compares: committed verdicts read right (agreement), answers with no committed
verdict called unreadable, and wrong labels over all answers.

    python bench/answer_corpus/measure.py [--corpus bench/data/answer_corpus] [--json OUT.json]

The reader learns nothing from the corpus, so each writer's figure is what a writer (a family
of models and prompts) it has not seen gets.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.answers import compare
from privacy_checklist.reasoning.llm.answers import read_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json, writer_sets

CORPUS = Path(__file__).resolve().parents[1] / "data" / "answer_corpus"
KEYS = ("judged", "agreement", "unreadable_when_none", "wrong_share")


def read(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        row["read"] = read_answer(row["text"], row["question"]).label
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = writer_sets(parser, args.corpus)
    result: dict[str, Any] = {"writers": {}}
    everything: list[dict[str, Any]] = []
    for path in files:
        rows = read(path)
        everything += rows
        figures = compare(rows)
        assert figures is not None  # every corpus line carries its label
        result["writers"][path.stem] = figures
        print(f"{path.stem}: " + "  ".join(f"{k} {figures[k]}" for k in KEYS))
    result["all"] = compare(everything)
    assert result["all"] is not None
    print("all: " + "  ".join(f"{k} {result['all'][k]}" for k in KEYS))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
