"""Leave-writer-out: a method's figures on each writer of the labelled corpus, short and long
narratives apart, with what its reader read of the facts and whether it tells twins apart.

    python bench/corpus/measure.py [--corpus bench/data/corpus] [--method checklist]
        [--writers w01,w02] [--json OUT.json]

A method that learns nothing from the corpus (the checklist's rules without its learned layer,
``checklist-alone``; the offline models, fitted on the synthetic cases) is measured on every
writer as it stands: each writer's figure is what a writer it has not seen gets. The default
``checklist`` weighs with a layer fitted on this corpus, so its figures here are in-sample;
``bench/experiments/blend_lwo.py`` fits that layer on the other writers each time. Per writer
and overall:

- verdicts: accuracy, macro-F1, prohibit F1, short (at most six sentences) and long apart;
- facts: for each condition the writer labelled on the deciding flow, whether the reader's
  fact (true / false / not stated) on the flow the checklist decides by is the label's;
- roles: whether the labelled sender's and recipient's roles are among the roles read;
- twins: of the pairs whose gold verdicts differ, how many the method gets both right.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from privacy_checklist.ingest.corpus import Narrative, read_corpus, twin_pairs
from privacy_checklist.reasoning.text import sentences

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import write_json

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "bench" / "data" / "corpus"
#: where out-of-fold readings are kept (gitignored)
CACHE = REPO / ".cache"
LABELS = ("permit", "prohibit", "not_applicable")
SHORT = 6  # sentences


def verdict_figures(gold: Sequence[str], said: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1 over the three labels, prohibit F1 and each label's recall (n: how
    many)."""
    n = len(gold)
    if not n:
        return {"n": 0}
    f1 = {}
    for label in LABELS:
        tp = sum(g == s == label for g, s in zip(gold, said, strict=True))
        fp = sum(s == label != g for g, s in zip(gold, said, strict=True))
        fn = sum(g == label != s for g, s in zip(gold, said, strict=True))
        f1[label] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    present = [label for label in LABELS if label in gold]
    return {
        "n": n,
        "accuracy": round(sum(g == s for g, s in zip(gold, said, strict=True)) / n, 4),
        "macro_f1": round(sum(f1[label] for label in present) / len(present), 4),
        "prohibit_f1": round(f1["prohibit"], 4),
        "recall": {
            label: round(sum(g == s == label for g, s in zip(gold, said, strict=True)) / k, 4)
            for label in present
            if (k := sum(g == label for g in gold))
        },
    }


def fold_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of the experiments that read the corpus with the condition reader's
    out-of-fold probabilities: the corpus, the folds' cache and tag, how many folds."""
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, required=True, help="the fold files' folder")
    parser.add_argument("--tag", required=True, help="the fold files' tag")
    parser.add_argument("--folds", type=int, default=3, help="the condition reader's folds")


def fold_readings(args: argparse.Namespace) -> dict[str, Any]:
    """What the experiments of :func:`fold_arguments` read the corpus with: its narratives, the
    checklist alone, the catalogue's kinds, each sentence's condition probabilities out of fold
    (rows the folds do not hold, writers added after them, read by the shipped reader, which
    was fitted without them), each narrative's rows, the rule reader's flows (kept in the
    cache under the rule reader's settings: ``case_flow_fit.corpus_flows``), and the
    checklist's verdict on a list of flows."""
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.learned import condition_fit as cf
    from privacy_checklist.reasoning.learned.case_flow_fit import corpus_flows
    from privacy_checklist.reasoning.learned.condition_folds import fold_probabilities
    from privacy_checklist.reasoning.learned.conditions import shipped

    narratives = read_corpus(sorted(args.corpus.glob("*.jsonl"))).narratives
    reasoner = ChecklistReasoner(kbmod.load(None), blend=False)
    assert reasoner.catalogue is not None and reasoner.reader is not None
    kinds = sorted(reasoner.catalogue.kinds)
    rows = cf.rows_of(narratives, kinds)
    probs, covered = fold_probabilities(args.cache, args.tag, args.folds, rows, len(kinds))
    missing = [i for i in range(len(covered)) if not covered[i]]
    if missing:
        reader = shipped()
        vectors = reader.encoder.encode([rows.sentences[i] for i in missing])
        probs[missing] = reader.probabilities_of(vectors)
    by_narrative: dict[str, list[int]] = defaultdict(list)
    for i, nid in enumerate(rows.narratives):
        by_narrative[nid].append(i)
    flows = corpus_flows(narratives, args.cache)  # kept under the rule reader's settings
    readings = {n.id: found for n, found in zip(narratives, flows, strict=True)}
    catalogue = reasoner.catalogue

    def verdict(flows: list[Any]) -> str:
        """The checklist's verdict on a narrative's flows."""
        from privacy_checklist.reasoning.checklist.decide import combine, decide

        case = combine([decide(catalogue, f, reasoner.rule) for f in flows])
        return case.label if case is not None else "not_applicable"

    return {
        "verdict": verdict,
        "narratives": narratives,
        "reasoner": reasoner,
        "kinds": kinds,
        "probs": probs,
        "by_narrative": by_narrative,
        "readings": readings,
    }


def is_short(text: str) -> bool:
    return len(sentences(text)) <= SHORT


def checklist_method(
    kb: Any, layer: bool = True, conditions: Any = True, case_flow: Any = False
) -> Callable[[str], tuple[str, dict[str, Any]]]:
    """The shipped checklist (with its learned layer unless not ``layer``; ``conditions`` as
    :class:`ChecklistReasoner` takes it): the verdict, and the facts and roles of the flow it
    decides by."""
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    reasoner = ChecklistReasoner(kb, blend=layer, conditions=conditions, case_flow=case_flow)

    def run(text: str) -> tuple[str, dict[str, Any]]:
        verdict = reasoner.check(text)
        report = verdict.checklist
        flow = report.deciding.flow if report is not None and report.deciding else None
        read = {
            "facts": {k: f.value for k, f in flow.facts.items()} if flow else {},
            "sender_roles": sorted(flow.sender_roles) if flow else [],
            "recipient_roles": sorted(flow.recipient_roles) if flow else [],
        }
        return verdict.label.value, read

    return run


def offline_method(kb: Any, fast: bool) -> Callable[[str], tuple[str, dict[str, Any]]]:
    from privacy_checklist.reasoning.methods import build_method
    from privacy_checklist.retrieval.index import RetrievalIndex

    index = RetrievalIndex(kb, embeddings=not fast)
    reasoner = build_method("offline-fast" if fast else "offline", kb, index, None)

    def run(text: str) -> tuple[str, dict[str, Any]]:
        return reasoner.check(text).label.value, {}

    return run


def measure(
    narratives: Sequence[Narrative], run: Callable[[str], tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """Every narrative decided, then the figures per writer and overall (module docstring)."""
    from tqdm import tqdm

    said: dict[str, str] = {}
    read: dict[str, dict[str, Any]] = {}
    for narrative in tqdm(narratives, desc="narratives", unit="case", file=sys.stderr):
        said[narrative.id], read[narrative.id] = run(narrative.text)
    by_writer: dict[str, list[Narrative]] = defaultdict(list)
    for narrative in narratives:
        by_writer[narrative.writer].append(narrative)
    out: dict[str, Any] = {"writers": {}}
    for writer, mine in sorted(by_writer.items()):
        out["writers"][writer] = figures(mine, said, read)
    out["all"] = figures(list(narratives), said, read)
    out["said"] = said
    return out


def figures(
    narratives: Sequence[Narrative], said: dict[str, str], read: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    short = [n for n in narratives if is_short(n.text)]
    long = [n for n in narratives if not is_short(n.text)]
    result: dict[str, Any] = {
        "all": verdict_figures([n.verdict for n in narratives], [said[n.id] for n in narratives]),
        "short": verdict_figures([n.verdict for n in short], [said[n.id] for n in short]),
        "long": verdict_figures([n.verdict for n in long], [said[n.id] for n in long]),
    }
    facts = [0, 0]
    by_value: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    roles = [0, 0]
    for n in narratives:
        got = read[n.id]
        if "facts" not in got:
            continue
        for fact in n.facts:
            value = got["facts"].get(fact.kind)
            right = value is fact.value
            facts[0] += right
            facts[1] += 1
            key = {True: "true", False: "false", None: "not stated"}[fact.value]
            by_value[key][0] += right
            by_value[key][1] += 1
        flow = n.deciding
        for part, key in (("sender", "sender_roles"), ("recipient", "recipient_roles")):
            role = flow.parts[part].term if flow is not None else ""
            if role and role != "no HIPAA role":
                roles[0] += role in got[key]
                roles[1] += 1
    if facts[1]:
        result["facts"] = {
            "agreement": round(facts[0] / facts[1], 4),
            "n": facts[1],
            **{k: round(v[0] / v[1], 4) for k, v in by_value.items() if v[1]},
        }
    if roles[1]:
        result["roles"] = {"agreement": round(roles[0] / roles[1], 4), "n": roles[1]}
    ids = {n.id: n for n in narratives}
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    told = sum(all(said[i] == ids[i].verdict for i in pair) for pair in pairs)
    result["twins"] = {"told_apart": told, "pairs": len(pairs)}
    return result


def case_flow_option(how: str, narratives: Sequence[Narrative]) -> Any:
    """What ``--case-flow HOW`` gives ``ChecklistReasoner(case_flow=...)``."""
    if how in ("shipped", "none"):
        return how == "shipped"
    kind, _, groups = how.partition(":")
    if kind != "oof" or not groups.isdigit() or int(groups) < 2:
        raise SystemExit(f"--case-flow {how}: not shipped, none or oof:GROUPS (GROUPS >= 2)")
    from privacy_checklist.reasoning.learned.case_flow_fit import stand_in

    return stand_in(narratives, int(groups), CACHE / "case-flow")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of WRITER.jsonl")
    parser.add_argument(
        "--method",
        default="checklist",
        choices=("checklist", "checklist-alone", "offline", "offline-fast"),
        help="checklist: the checklist with its learned layer, fitted on this corpus (so its "
        "figures here are in-sample; bench/experiments/blend_lwo.py measures it leaving each "
        "writer out); checklist-alone: the checklist without that layer (the default method)",
    )
    parser.add_argument("--writers", help="only these writers (comma-separated)")
    parser.add_argument(
        "--conditions",
        default="shipped",
        metavar="HOW",
        help="how the checklist reads the conditions: 'shipped' (the learned condition reader "
        "that ships, fitted on this corpus: in-sample), 'none' (the rule reader alone), or "
        "'DIR:TAG:FOLDS' (each narrative read by the reader fitted without its writer: "
        "bench/experiments/condition_reader.py's out-of-fold probabilities)",
    )
    parser.add_argument(
        "--case-flow",
        default="none",
        metavar="HOW",
        help="how the checklist reads the flow the case turns on: 'none' (the rule reader's "
        "flows decide, as in the default method), 'shipped' (the learned case-flow reader that "
        "ships, fitted on this corpus: in-sample), or 'oof:GROUPS' (each narrative read by "
        "regressions fitted without its writer, the writers in GROUPS groups; kept in "
        ".cache/case-flow)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    files = sorted(args.corpus.glob("*.jsonl"))
    if not files:
        parser.error(f"{args.corpus}: no corpus files (WRITER.jsonl)")
    corpus = read_corpus(files)
    for path, row in corpus.skipped:
        print(f"skipped {path} {row}", file=sys.stderr)
    narratives = corpus.narratives
    if args.writers:
        wanted = set(args.writers.split(","))
        narratives = [n for n in narratives if n.writer in wanted]
    from privacy_checklist.kg import kb as kbmod

    kb = kbmod.load(None)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from condition_reader import conditions_option

    conditions = conditions_option(args.conditions, corpus.narratives, kb)
    case_flow = case_flow_option(args.case_flow, corpus.narratives)
    run = (
        checklist_method(
            kb, layer=args.method == "checklist", conditions=conditions, case_flow=case_flow
        )
        if args.method.startswith("checklist")
        else offline_method(kb, fast=args.method == "offline-fast")
    )
    result = {"method": args.method, "skipped": len(corpus.skipped), **measure(narratives, run)}
    for writer, f in [*result["writers"].items(), ("all", result["all"])]:
        a, s, lg = f["all"], f["short"], f["long"]
        line = (
            f"{writer:>5}  n {a['n']:4d}  acc {a.get('accuracy', 0):.3f}  macro "
            f"{a.get('macro_f1', 0):.3f}  prohibit {a.get('prohibit_f1', 0):.3f}  | short "
            f"{s.get('accuracy', 0):.3f} ({s['n']})  long {lg.get('accuracy', 0):.3f} ({lg['n']})"
        )
        if "facts" in f:
            line += f"  | facts {f['facts']['agreement']:.3f}"
        if "roles" in f:
            line += f"  roles {f['roles']['agreement']:.3f}"
        line += f"  | twins {f['twins']['told_apart']}/{f['twins']['pairs']}"
        print(line)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
