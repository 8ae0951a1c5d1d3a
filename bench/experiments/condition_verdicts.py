"""An experiment (issue 27): the checklist alone deciding on the rule reader's facts and on the
learned condition reader's beside them, every writer's narratives read by a reader fitted
without that writer (the out-of-fold probabilities of ``condition_reader.py``).

    python bench/experiments/condition_verdicts.py --cache DIR --tag TAG --folds 3

For each way of taking the learned facts (``merge``: fill where the rule reader left a
condition unknown, replace a different fact when at least ``override`` sure; ``replace``: the
learned reader decides every condition it reads), the verdicts' accuracy, macro-F1 and
prohibit F1 (all, short, long), the twins told apart, and how many writers read better. The
rule reader's flows are read once and kept in the cache (``readings.pkl``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "corpus"))

from measure import fold_arguments, fold_readings, verdict_figures  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fold_arguments(parser)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from tqdm import tqdm

    from privacy_checklist.ingest.corpus import twin_pairs
    from privacy_checklist.reasoning.learned.conditions import Read, merge, reads_of
    from privacy_checklist.reasoning.text import sentence_spans

    read = fold_readings(args)
    narratives, kinds = read["narratives"], read["kinds"]
    probs, by_narrative, readings = read["probs"], read["by_narrative"], read["readings"]
    verdict = read["verdict"]

    def replaced(flows: list[Any], reads: dict[str, Read]) -> list[Any]:
        out = []
        for flow in flows:
            facts = dict(flow.facts)
            for kind, read in reads.items():
                old = facts.get(kind)
                if old is not None and old.source == "role":
                    continue
                if read.value is None:
                    facts.pop(kind, None) if old is not None and old.source != "role" else None
                else:
                    facts[kind] = read.fact()
            out.append(replace(flow, facts=facts))
        return out

    ways: dict[str, dict[str, str]] = defaultdict(dict)
    for n in tqdm(narratives, desc="decide"):
        flows = readings[n.id]
        spans = sentence_spans(n.text) or [(0, len(n.text))]
        p = probs[by_narrative[n.id]]
        ways["rules"][n.id] = verdict(flows)
        for threshold in (0.3, 0.5, 0.7):
            reads = reads_of(n.text, spans, p, kinds, threshold)
            for override in (0.0, 0.5, 0.9, 2.0):
                name = f"merge t{threshold} o{override}"
                ways[name][n.id] = verdict(merge(flows, reads, override))
            ways[f"replace t{threshold}"][n.id] = verdict(replaced(flows, reads))
    ids = {n.id: n for n in narratives}
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    short = [n for n in narratives if len(sentence_spans(n.text)) <= 6]
    long_ = [n for n in narratives if len(sentence_spans(n.text)) > 6]
    result: dict[str, Any] = {}
    writers = sorted({n.writer for n in narratives})
    rule_per = {
        w: verdict_figures(
            [n.verdict for n in narratives if n.writer == w],
            [ways["rules"][n.id] for n in narratives if n.writer == w],
        )["accuracy"]
        for w in writers
    }
    for name, said in ways.items():
        per = {
            w: verdict_figures(
                [n.verdict for n in narratives if n.writer == w],
                [said[n.id] for n in narratives if n.writer == w],
            )["accuracy"]
            for w in writers
        }
        result[name] = {
            "all": verdict_figures(
                [n.verdict for n in narratives], [said[n.id] for n in narratives]
            ),
            "short": verdict_figures([n.verdict for n in short], [said[n.id] for n in short]),
            "long": verdict_figures([n.verdict for n in long_], [said[n.id] for n in long_]),
            "twins": sum(all(said[i] == ids[i].verdict for i in pair) for pair in pairs),
            "writers better": sum(per[w] > rule_per[w] for w in writers),
            "writers worse": sum(per[w] < rule_per[w] for w in writers),
        }
        r = result[name]
        print(
            f"{name:24s} all {r['all']['accuracy']:.3f}/{r['all']['macro_f1']:.3f}/"
            f"{r['all']['prohibit_f1']:.3f} short {r['short']['accuracy']:.3f} long "
            f"{r['long']['accuracy']:.3f} twins {r['twins']}/{len(pairs)} "
            f"better {r['writers better']} worse {r['writers worse']}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
