"""The identifier tagger leaving whole writers out (issue 28): for each writer of the
clinical-text corpus, the tagger fitted on every other writer (and, with ``--drafts``, on the
drafts writers' identifier spans too) reads that writer's items; span recall (a labelled
identifier a predicted span overlaps), span precision (a predicted span that overlaps a
labelled one) and left (a labelled identifier under 80% covered by predicted spans).

    python bench/guard_text/tagger_lwo.py [--drafts] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write_json

DATA = Path(__file__).resolve().parents[1] / "data"


def load(folder: Path, identifiers_only: bool = False) -> dict[str, list[dict[str, Any]]]:
    sets = {}
    for path in sorted(folder.glob("*.jsonl")):
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        if identifiers_only:
            items = [
                {**i, "spans": [s for s in i["spans"] if s.get("kind") == "identifier"]}
                for i in items
            ]
        sets[path.stem] = items
    return sets


def score(items: list[dict[str, Any]], tagger: Any) -> dict[str, Any]:
    found = total = true_pred = pred = left = 0
    for item in items:
        spans = tagger.tag(item["text"])
        got = [(t.start, t.end) for t in spans]
        pred += len(got)
        for s in item["spans"]:
            total += 1
            found += any(a < s["end"] and s["start"] < b for a, b in got)
            chars = [i for i in range(s["start"], s["end"]) if not item["text"][i].isspace()]
            hit = sum(any(a <= i < b for a, b in got) for i in chars)
            left += not chars or hit / len(chars) < 0.8
        true_pred += sum(
            any(a < s["end"] and s["start"] < b for s in item["spans"]) for a, b in got
        )
    share = lambda a, b: round(a / b, 4) if b else None  # noqa: E731
    return {
        "items": len(items),
        "identifiers": total,
        "recall": share(found, total),
        "left": share(left, total),
        "precision": share(true_pred, pred),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drafts", action="store_true", help="fit on the drafts corpus too")
    parser.add_argument("--copies", type=int, default=2, help="varied copies of each item")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from folds import fold

    text = load(DATA / "guard_text")
    extra = load(DATA / "guard_corpus", identifiers_only=True) if args.drafts else {}
    result: dict[str, Any] = {"writers": {}}
    for writer in tqdm(list(text), desc="writers", file=sys.stderr, disable=None):
        row = score(text[writer], fold({**text, **extra}, writer, args.copies))
        result["writers"][writer] = row
        print(f"{writer}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    for kind in ("n", "q"):
        rows = [r for w, r in result["writers"].items() if w.startswith(kind)]
        if rows:
            mean = {
                k: round(sum(r[k] for r in rows if r[k] is not None) / len(rows), 4)
                for k in ("recall", "left", "precision")
            }
            result[f"mean_{kind}"] = mean
            print(f"mean {kind}: {mean}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
