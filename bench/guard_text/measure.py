"""The guard on clinical text pasted or typed into an outside chatbot (issue 28), each writer
apart: notes (``n`` writers) and questions (``q`` writers) of ``bench/data/guard_text``.

    python bench/guard_text/measure.py [--corpus bench/data/guard_text] [--writers n01,q02]
        [--json OUT.json]

The guard is given the text and the recipient a person would name ("an AI chatbot"; a note
also "summarise this note"), never the labels. A labelled identifier is found when something
the guard flags overlaps it, left when under 80% of it was taken out or changed. Of what the
rewrite takes out (each change), the share that touches a labelled identifier is its
precision. For questions, the identifiers left by group (names; dates and numbers; places), and
the questions with no identifier left untouched. Targets (issue 28): notes found at least 0.97,
left at most 2%, precision at least 0.85; questions names, dates and numbers left at most 1%,
places at most 5%, untouched at least 95%.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write_json, writer_sets

CORPUS = Path(__file__).resolve().parents[1] / "data" / "guard_text"
GROUPS = {
    "NAME": "names",
    "ADDRESS": "places",
    "LOCATION": "places",
    "HOSPITAL": "places",
}
TO = "an AI chatbot"
PURPOSE = {"note": "summarise this note", "question": None}


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def judge(guard: Any, item: dict[str, Any]) -> dict[str, Any]:
    """What the guard did to one item, against its labels."""
    from privacy_checklist.reasoning.guard.evaluate import REMOVED, coverage, guard_output

    draft = {"text": item["text"], "to": TO, "purpose_words": PURPOSE[item["kind"]]}
    guarded = guard.check(item["text"], to=TO, purpose=PURPOSE[item["kind"]])
    out = guard_output(guard, draft)
    flagged = [(d.span.start, d.span.end) for d in guarded.decisions]
    gold = [(s["start"], s["end"]) for s in item["spans"]]
    spans = [
        {
            "type": s["type"],
            "found": any(_overlap(g, f) for f in flagged),
            "left": coverage(s, out.changed) < REMOVED,
        }
        for s, g in zip(item["spans"], gold, strict=True)
    ]
    changes = [(a, b) for a, b in out.changed if b > a]
    return {
        "spans": spans,
        "changes": len(changes),
        "true_changes": sum(any(_overlap(c, g) for g in gold) for c in changes),
        "untouched": out.rewrite == item["text"],
        "false_removals": [
            item["text"][a:b] for a, b in changes if not any(_overlap((a, b), g) for g in gold)
        ],
    }


def figures(items: list[dict[str, Any]], judged: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The writer's figures (None where nothing was there to count)."""

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    spans = [s for i in items for s in judged[i["id"]]["spans"]]
    out: dict[str, Any] = {
        "items": len(items),
        "identifiers": len(spans),
        "found": share(sum(s["found"] for s in spans), len(spans)),
        "left": share(sum(s["left"] for s in spans), len(spans)),
        "precision": share(
            sum(judged[i["id"]]["true_changes"] for i in items),
            sum(judged[i["id"]]["changes"] for i in items),
        ),
    }
    for group in ("names", "numbers", "places"):
        mine = [s for s in spans if GROUPS.get(s["type"], "numbers") == group]
        out[f"left_{group}"] = share(sum(s["left"] for s in mine), len(mine))
    clean = [i for i in items if not i["spans"]]
    out["clean_untouched"] = share(sum(judged[i["id"]]["untouched"] for i in clean), len(clean))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--writers", help="only these writers (comma-separated)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--examples", type=int, default=0, help="print so many false removals")
    parser.add_argument(
        "--tagger",
        choices=("lwo", "shipped"),
        default="lwo",
        help="the identifier tagger: fitted without the writer measured (lwo, the development "
        "measure) or the shipped one (fitted on every writer: in-sample)",
    )
    args = parser.parse_args()
    files = writer_sets(parser, args.corpus, args.writers)
    from folds import fold, read

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard

    guard = Guard(kbmod.load(None))
    guard.check("warm-up: Pt seen today.", to=TO)
    assert guard.phi is not None
    sets = read(args.corpus) if args.tagger == "lwo" else {}
    result: dict[str, Any] = {"tagger": args.tagger, "writers": {}}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    judged: dict[str, dict[str, Any]] = {}
    for path in files:
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        if args.tagger == "lwo":
            guard.phi.tagger = fold(sets, path.stem)
        start = time.perf_counter()
        for item in tqdm(items, desc=path.stem, file=sys.stderr, disable=None):
            judged[item["id"]] = judge(guard, item)
        row = figures(items, judged)
        row["per_second"] = round(len(items) / (time.perf_counter() - start), 2)
        result["writers"][path.stem] = row
        by_kind.setdefault(items[0]["kind"], []).extend(items)
        print(f"{path.stem}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        for words in [w for i in items for w in judged[i["id"]]["false_removals"]][: args.examples]:
            print(f"    removed, not an identifier: {words!r}")
    for kind, items in by_kind.items():
        result[kind] = figures(items, judged)
        print(f"all {kind}s: " + "  ".join(f"{k} {v}" for k, v in result[kind].items()))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
