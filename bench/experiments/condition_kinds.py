"""An experiment (issue 27): two questions about how the checklist takes the learned condition
reader's facts, every narrative read by a reader fitted without its writer (the out-of-fold
probabilities of ``condition-reader``):

1. **Where a flow's facts are read.** Today a kind's fact is read from the likeliest sentence of
   the whole narrative and given to every flow. ``--windows`` reads each flow's facts from the
   sentences within ``d`` sentences of the flow's own (its verb's, else its parts'), for each
   ``d``; ``all`` is today's way.
2. **Which rule cue families still earn their place.** For each condition kind, the rule
   reader's facts of that kind (read by cues, source ``parse`` or ``derived``; never the roles')
   are dropped and the learned reader alone reads the kind. A kind's rules are dropped when that
   raises accuracy on the other writers: the choice is made leave-writer-out (for each writer,
   chosen on the rest, measured on it), and the kinds chosen on all writers are listed.

    python bench/experiments/condition_kinds.py --cache .cache/condition-reader \
        --tag e2-w4.0-balanced

Figures: accuracy, macro-F1 and prohibit F1 (all, short, long), twins told apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "corpus"))

from measure import fold_arguments, fold_readings, is_short, verdict_figures  # noqa: E402

RULE_SOURCES = frozenset({"parse", "derived", "cue"})


def flow_sentence(flow: Any, spans: Sequence[tuple[int, int]]) -> int | None:
    """The sentence a flow is read from: its verb's, else its first placed part's."""
    for name in ("verb", "information", "recipient", "sender"):
        part = getattr(flow, name)
        if part is not None and part.start >= 0:
            for index, (start, end) in enumerate(spans):
                if start <= part.start < end:
                    return index
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fold_arguments(parser)
    parser.add_argument("--windows", default="0,1,2,3,all")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from tqdm import tqdm

    from privacy_checklist.ingest.corpus import twin_pairs
    from privacy_checklist.reasoning.learned.conditions import merge, reads_of
    from privacy_checklist.reasoning.text import sentence_spans

    read = fold_readings(args)
    narratives, kinds = read["narratives"], read["kinds"]
    probs, by_narrative, readings = read["probs"], read["by_narrative"], read["readings"]
    verdict = read["verdict"]

    def local(n: Any, window: int | None, dropped: frozenset[str]) -> list[Any]:
        spans = sentence_spans(n.text) or [(0, len(n.text))]
        p = probs[by_narrative[n.id]]
        flows = [
            replace(
                f,
                facts={
                    k: v
                    for k, v in f.facts.items()
                    if not (k in dropped and v.source in RULE_SOURCES)
                },
            )
            for f in readings[n.id]
        ]
        if window is None:
            return merge(flows, reads_of(n.text, spans, p, kinds))
        out = []
        for flow in flows:
            at = flow_sentence(flow, spans)
            if at is None:
                out += merge([flow], reads_of(n.text, spans, p, kinds))
                continue
            keep = [i for i in range(len(spans)) if abs(i - at) <= window]
            near = [spans[i] for i in keep]
            out += merge([flow], reads_of(n.text, near, p[keep], kinds))
        return out

    ids = {n.id: n for n in narratives}
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    writers = sorted({n.writer for n in narratives})

    def figures(said: dict[str, str], mine: Sequence[Any]) -> dict[str, Any]:
        short = [n for n in mine if is_short(n.text)]
        long_ = [n for n in mine if not is_short(n.text)]
        keep = {n.id for n in mine}
        return {
            "all": verdict_figures([n.verdict for n in mine], [said[n.id] for n in mine]),
            "short": verdict_figures([n.verdict for n in short], [said[n.id] for n in short]),
            "long": verdict_figures([n.verdict for n in long_], [said[n.id] for n in long_]),
            "twins": sum(
                all(said[i] == ids[i].verdict for i in pair) for pair in pairs if pair[0] in keep
            ),
        }

    def show(name: str, r: dict[str, Any]) -> None:
        print(
            f"{name:28s} all {r['all']['accuracy']:.3f}/{r['all']['macro_f1']:.3f}/"
            f"{r['all']['prohibit_f1']:.3f} short {r['short']['accuracy']:.3f} long "
            f"{r['long']['accuracy']:.3f} twins {r['twins']}/{len(pairs)}",
            flush=True,
        )

    def run(window: int | None, dropped: frozenset[str]) -> dict[str, str]:
        return {n.id: verdict(local(n, window, dropped)) for n in narratives}

    result: dict[str, Any] = {"windows": {}, "kinds": {}}
    for name in args.windows.split(","):
        window = None if name == "all" else int(name)
        said = run(window, frozenset())
        result["windows"][name] = figures(said, narratives)
        show(f"window {name}", result["windows"][name])
    # 2. each kind's rules dropped (the whole narrative read, today's way)
    base = run(None, frozenset())
    present = sorted(
        {
            k
            for flows in readings.values()
            for f in flows
            for k, v in f.facts.items()
            if v.source in RULE_SOURCES and k in kinds
        }
    )
    per_kind: dict[str, dict[str, str]] = {}
    for kind in tqdm(present, desc="kinds"):
        per_kind[kind] = run(None, frozenset({kind}))

    def right(said: dict[str, str], mine: Sequence[Any]) -> int:
        return sum(said[n.id] == n.verdict for n in mine)

    def chosen(mine: Sequence[Any]) -> frozenset[str]:
        return frozenset(k for k, said in per_kind.items() if right(said, mine) > right(base, mine))

    lwo: dict[str, str] = {}
    for writer in writers:
        rest = [n for n in narratives if n.writer != writer]
        drop = chosen(rest)
        mine = [n for n in narratives if n.writer == writer]
        if drop:
            for n in mine:
                lwo[n.id] = verdict(local(n, None, drop))
        else:
            lwo.update({n.id: base[n.id] for n in mine})
    final = chosen(narratives)
    every = run(None, frozenset(present))
    neutral = frozenset(
        k for k, said in per_kind.items() if right(said, narratives) >= right(base, narratives)
    )
    no_loss = run(None, neutral)
    result["kinds"] = {
        "base": figures(base, narratives),
        "each": {k: right(s, narratives) - right(base, narratives) for k, s in per_kind.items()},
        "leave-writer-out": figures(lwo, narratives),
        "chosen on all": sorted(final),
        "every kind's rules dropped": figures(every, narratives),
        "rules dropped where they do not help": figures(no_loss, narratives),
    }
    show("rules as they are", result["kinds"]["base"])
    show("kinds dropped, chosen LWO", result["kinds"]["leave-writer-out"])
    show("every kind's rules dropped", result["kinds"]["every kind's rules dropped"])
    show("dropped where not helping", result["kinds"]["rules dropped where they do not help"])
    print("each kind (right answers gained when its rules are dropped):")
    for kind, gain in sorted(result["kinds"]["each"].items(), key=lambda kv: -kv[1]):
        print(f"  {kind:36s} {gain:+d}")
    print("chosen on all writers:", ", ".join(sorted(final)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
