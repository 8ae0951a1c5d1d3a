"""The guard on conversations that give an identifier in pieces (issue 28, item 4), each writer
apart.

    python bench/guard_pieces/measure.py [--data bench/data/guard_pieces] [--writers p01,p02]
        [--json OUT.json]

Each writer labelled, in each conversation, the turn whose piece completes an identifier told
to one recipient over several turns (``completes``: its type and the whole number), and wrote
conversations where numbers over several turns make no identifier, where the pieces go to
different recipients, or where the whole number is given in one turn. Figures, for each writer:

- ``completed_found``: of the labelled completing turns, the share the guard says complete a
  number (``"completed"``) with the labelled digits;
- ``completed_stopped``: of those turns, the share stopped;
- ``not_judged``: labelled completing turns whose speaker the guard did not read as the covered
  entity's (it judges only that side's turns): counted as missed;
- ``early_completions``: turns before a labelled completing turn that the guard says complete
  a number already (a stop one piece early: the pieces so far make a number of the type);
- ``false_completions``: the other turns the guard says complete a number where none was
  labelled, and ``false_rate`` their share of the staff turns without a label;
- ``turns_per_second``.

Nothing here is learned: the figures are read, never fitted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json, writer_sets

DATA = Path(__file__).resolve().parents[1] / "data" / "guard_pieces"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A writer's conversations; a line that is not a conversation is a one-line error."""
    out = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise SystemExit(f"{path}:{number}: not JSON ({exc})") from exc
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("turns"), list)
            or not item["turns"]
        ):
            raise SystemExit(f"{path}:{number}: not a conversation (no list of turns)")
        out.append(item)
    return out


def digits(number: Any) -> str:
    return re.sub(r"\D", "", str(number or ""))


def measure_writer(guard: Any, conversations: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = found = stopped = false = early = unlabelled = unjudged = turns = 0
    misses: list[str] = []
    started = time.perf_counter()
    for conversation in conversations:
        results = guard.conversation(conversation["turns"])
        last = max(
            (n for n, t in enumerate(conversation["turns"], 1) if t.get("completes")), default=0
        )
        for turn, result in zip(conversation["turns"], results, strict=True):
            turns += 1
            label = turn.get("completes")
            if not result.get("judged"):
                if label:  # the speaker was not read as the covered entity's: not judged
                    labelled += 1
                    unjudged += 1
                    misses.append(f"{conversation['id']} turn {result['turn']} (not judged)")
                continue
            said = [digits(c["number"]) for c in result.get("completed", [])]
            if label:
                labelled += 1
                hit = digits(label.get("number")) in said
                found += hit
                stopped += hit and bool(result["stop"])
                if not hit:
                    misses.append(f"{conversation['id']} turn {result['turn']}")
            else:
                unlabelled += 1
                if said and result["turn"] < last:
                    early += 1  # a stop before the labelled piece: pieces of the same number
                    misses.append(f"{conversation['id']} turn {result['turn']} (early)")
                elif said:
                    false += 1
                    misses.append(f"{conversation['id']} turn {result['turn']} (false)")
    seconds = time.perf_counter() - started
    return {
        "conversations": len(conversations),
        "completing_turns": labelled,
        "completed_found": round(found / labelled, 4) if labelled else None,
        "not_judged": unjudged,
        "completed_stopped": round(stopped / labelled, 4) if labelled else None,
        "early_completions": early,
        "false_completions": false,
        "false_rate": round(false / unlabelled, 4) if unlabelled else None,
        "turns_per_second": round(turns / seconds, 1) if seconds else None,
        "misses": misses,
    }


def pooled(writers: list[dict[str, Any]]) -> dict[str, Any]:
    """The writers' figures pooled (counts summed, shares over the pooled turns)."""
    labelled = sum(w["completing_turns"] for w in writers)

    def share(key: str) -> float | None:
        hits = sum(round((w[key] or 0) * w["completing_turns"]) for w in writers)
        return round(hits / labelled, 4) if labelled else None

    return {
        "conversations": sum(w["conversations"] for w in writers),
        "completing_turns": labelled,
        "completed_found": share("completed_found"),
        "not_judged": sum(w["not_judged"] for w in writers),
        "completed_stopped": share("completed_stopped"),
        "early_completions": sum(w["early_completions"] for w in writers),
        "false_completions": sum(w["false_completions"] for w in writers),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the writers' JSONL files")
    parser.add_argument("--writers", help="comma-separated writers (default: every file)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard

    files = writer_sets(parser, args.data, args.writers)
    guard = Guard(kbmod.load(None))
    out: dict[str, Any] = {"writers": {}}
    for path in tqdm(files, desc="writers", unit="writer"):
        out["writers"][path.stem] = measure_writer(guard, read_jsonl(path))
    out["all"] = pooled(list(out["writers"].values()))
    for name, figures in [*out["writers"].items(), ("all", out["all"])]:
        shown = {k: v for k, v in figures.items() if k != "misses"}
        print(name, shown)
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
