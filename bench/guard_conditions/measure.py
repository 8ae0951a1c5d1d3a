"""The guard's reading of the condition a purpose needs (an order, an authorization, a waiver,
an agreement), each condition writer apart (issue 28).

    python bench/guard_conditions/measure.py [--data bench/data/guard_conditions]
        [--writers c01,c02] [--json OUT.json]

Each writer wrote triples of one message that state the condition, leave it out and deny it
(``condition``), for purposes the law names. The purpose is given as labelled (this measures
the condition's reading, not the purpose's). Two readers, for each writer:

- ``words``: the data file's words for the conditions (the guard without models);
- ``model``: the guard with the condition model fitted on the other condition writers (the
  word lists first; the model where they find the condition neither stated nor denied).

Figures: ``right`` (stated read as stated, absent and denied as not), ``stated_read``,
``absent_granted`` and ``denied_granted`` (the shares of each read as stated), and ``twins``
(triples whose stated message is read as stated and both others not).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json

DATA = Path(__file__).resolve().parents[1] / "data" / "guard_conditions"


def reads(guard: Any, items: list[dict[str, Any]]) -> list[bool]:
    """Whether the guard reads each message's condition as stated."""
    from privacy_checklist.reasoning.guard.purpose import PurposeReading, purposes_data

    law = purposes_data()["law"]
    out = []
    for item in items:
        reading = PurposeReading(
            law[item["purpose"]]["base"],
            "as labelled",
            item.get("purpose_words", ""),
            law=item["purpose"],
        )
        to = str(item.get("to") or "")
        _, flow = guard.flow(str(item.get("from") or "") or "our clinic", to, reading, True)
        permitted, _, _ = guard.permission(reading, flow, f"{to} ;  ; {item['text']}")
        out.append(permitted is True)
    return out


def figures(items: list[dict[str, Any]], read: list[bool]) -> dict[str, Any]:
    kinds: dict[str, list[bool]] = defaultdict(list)
    groups: dict[str, dict[str, bool]] = defaultdict(dict)
    right = 0
    for item, stated in zip(items, read, strict=True):
        kinds[item["condition"]].append(stated)
        groups[item.get("group", item["id"])][item["condition"]] = stated
        right += stated == (item["condition"] == "stated")

    def share(kind: str) -> float | None:
        got = kinds.get(kind, [])
        return round(sum(got) / len(got), 4) if got else None

    whole = [g for g in groups.values() if {"stated", "absent", "denied"} <= set(g)]
    told = sum(g["stated"] and not g["absent"] and not g["denied"] for g in whole)
    return {
        "messages": len(items),
        "right": round(right / len(items), 4) if items else None,
        "stated_read": share("stated"),
        "absent_granted": share("absent"),
        "denied_granted": share("denied"),
        "twins": f"{told}/{len(whole)}",
        "twins_told_apart": round(told / len(whole), 4) if whole else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--writers", help="comma-separated writers (default: every file)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.guard.message import Guard
    from privacy_checklist.reasoning.guard.need import NeedModels, shipped
    from privacy_checklist.reasoning.guard.need_fit import condition_model, read_conditions

    try:
        sets = read_conditions(args.data)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    chosen = set(args.writers.split(",")) if args.writers else set(sets)
    words = Guard(kbmod.load(None), need=None)
    out: dict[str, Any] = {"writers": {}}
    pooled: dict[str, tuple[list[dict[str, Any]], list[bool]]] = {
        "words": ([], []),
        "model": ([], []),
    }
    for writer in tqdm(sorted(chosen & set(sets)), desc="writers", unit="writer"):
        items = sets[writer]
        others = [i for w, found in sets.items() if w != writer for i in found]
        base = shipped()
        models = NeedModels(
            base.purpose, base.need, base.floor, base.about, condition_model(others)
        )
        fitted = Guard(words.kb, reasoner=words.reasoner, phi=words.phi, need=models)
        out["writers"][writer] = {}
        for name, guard in (("words", words), ("model", fitted)):
            read = reads(guard, items)
            out["writers"][writer][name] = figures(items, read)
            pooled[name][0].extend(items)
            pooled[name][1].extend(read)
            print(writer, name, out["writers"][writer][name], flush=True)
    out["all"] = {name: figures(*pooled[name]) for name in pooled}
    print("all", out["all"])
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
