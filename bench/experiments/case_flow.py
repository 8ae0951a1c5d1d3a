"""An experiment (issue 27 §3, §4): the learned case-flow reader
(:mod:`privacy_checklist.reasoning.learned.case_flow`) deciding each narrative's flow with the
checklist, leave-writer-out.

    python bench/experiments/case_flow.py --cache .cache/condition-reader --tag e2-w4.0-balanced

Every narrative's features are its sentences' vectors from the shipped condition reader's
encoder and the roles the rule reader read of its flows; the three regressions (sender role,
recipient role, information type) are fitted on the other writers' labelled deciding flows
(``--groups`` groups of writers, each left out in turn); the conditions are the condition
reader's out-of-fold readings (the fold files of ``condition-reader``; writers the folds do not
hold are read by the shipped reader, which was fitted without them). Figures for: the parts
read (exact agreement with the writers' labels); and the verdicts (accuracy, macro-F1,
prohibit F1, short and long, twins) of

- the rule reader's flows deciding, the learned conditions beside their facts (the default);
- the learned case flow with the learned conditions alone, and with the rule reader's facts of
  its deciding flow under them (the learned ones win where both say something);
- the learned parts with the writers' conditions, and the writers' parts with the learned
  conditions (where each reader falls short); the writers' parts and conditions both (how far
  the checklist's law agrees with the writers when nothing is misread);
- each of the above on the groups of writers named by ``--report`` (the court-style writers,
  the analyst-style writers);
- on the project's own narrative sets (``--own``: writers the case-flow reader never saw, and
  that have verdicts but no labelled flows), the rule reader's flows against the shipped
  case-flow reader deciding, and the case flow only where it reads every part at least so
  sure.

The out-of-fold regressions are kept in ``--cache`` (``case-flow-G.npz``) for
``bench/corpus/measure.py --case-flow``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "corpus"))

from measure import fold_arguments, is_short, verdict_figures  # noqa: E402

#: the groups of writers shown apart by default: the court-style writers, the analyst-style
#: ones, and the court-style writers weighted to the cases HIPAA does not cover
REPORT = ("court=w28,w29,w30", "analyst=w31,w32", "court-not-covered=w33,w34,w35,w36,w37")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fold_arguments(parser)
    parser.add_argument("--groups", type=int, default=6, help="groups of writers left out")
    parser.add_argument(
        "--report",
        action="append",
        metavar="NAME=WRITERS",
        help="a group of writers also shown apart (comma-separated; repeatable; default: "
        + "; ".join(REPORT)
        + ")",
    )
    parser.add_argument(
        "--own",
        nargs="*",
        default=[
            "tests/data/checklist_regression.csv",
            "tests/data/checklist_styles.csv",
            "tests/data/checklist_dev_a.csv",
            "tests/data/checklist_dev_b.csv",
            "tests/data/checklist_dev_c.csv",
            "bench/data/heldout_narratives.csv",
            "../shared/data/cases/train_generate_cases_hipaa_applicability.csv",
            "../shared/data/cases/val_generate_cases_hipaa_applicability.csv",
        ],
        help="the own narrative sets (case CSVs) read with the shipped case-flow reader",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--said", type=Path, help="also write each way's verdict on each narrative (JSON)"
    )
    args = parser.parse_args()
    from tqdm import tqdm

    from privacy_checklist.ingest.corpus import read_corpus, twin_pairs
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.decide import combine, decide
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.learned import case_flow as cfl
    from privacy_checklist.reasoning.learned.case_flow_fit import (
        corpus_features,
        corpus_flows,
        out_of_fold,
    )
    from privacy_checklist.reasoning.learned.condition_folds import out_of_fold as condition_oof
    from privacy_checklist.reasoning.learned.conditions import merge
    from privacy_checklist.reasoning.reading.types import Fact

    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    narratives = [n for n in corpus.narratives if n.deciding is not None]
    reasoner = ChecklistReasoner(kbmod.load(None), blend=False)
    assert reasoner.catalogue is not None and reasoner.reader is not None
    catalogue, reader = reasoner.catalogue, reasoner.reader
    role_rules = reader.cues.role_facts
    read_conditions = condition_oof(
        args.cache, args.tag, args.folds, corpus.narratives, sorted(catalogue.kinds)
    )
    reads = {n.id: read_conditions(n.text) for n in tqdm(narratives, desc="conditions")}
    x, roles = corpus_features(narratives, args.cache)
    predicted = out_of_fold(x, narratives, args.groups, args.cache, roles)
    # the rule reader's flows, as corpus_features read them (kept under its settings)
    flows = corpus_flows(narratives, args.cache)
    readings = {n.id: found for n, found in zip(narratives, flows, strict=True)}

    def label(flows: list[Any]) -> str:
        return verdict_of(reasoner, flows)

    said: dict[str, dict[str, str]] = defaultdict(dict)
    parts_right: dict[str, list[bool]] = defaultdict(list)
    for n in tqdm(narratives, desc="decide"):
        mine = reads[n.id]
        learned = {k: r.fact() for k, r in mine.items() if r.value is not None}
        gold = {
            f.kind: Fact(f.kind, f.value, -1, -1, "writer", "writer")
            for f in n.facts
            if f.kind in catalogue.kinds and f.value is not None
        }
        read = predicted[n.id]
        truth = cfl.CaseFlow(
            *((n.deciding.parts[h].term or "none", 1.0) for h in cfl.HEADS)  # type: ignore[arg-type]
        )
        for head in cfl.HEADS:
            parts_right[head].append(getattr(read, head)[0] == getattr(truth, head)[0])
        merged = merge(readings[n.id], mine)
        for name, got in shared_variants(read, learned, readings[n.id], merged, reasoner).items():
            said[name][n.id] = got
        case = combine([decide(catalogue, f, reasoner.rule) for f in merged])
        base = cfl.case_flow(read, learned, reader.ancestors, role_rules)
        for name, parts in (
            ("case flow, rule reader's roles where it read them", ("sender", "recipient")),
            ("case flow, rule reader's sender where it read one", ("sender",)),
        ):
            flow = cfl.with_rule_roles(base, case.flow, parts) if case is not None else base
            said[name][n.id] = label([flow])
        said["case flow read, writers' conditions"][n.id] = label(
            [cfl.case_flow(read, gold, reader.ancestors, role_rules)]
        )
        said["writers' flow and conditions (the law's logic alone)"][n.id] = label(
            [cfl.case_flow(truth, gold, reader.ancestors, role_rules)]
        )
        said["writers' flow, learned conditions"][n.id] = label(
            [cfl.case_flow(truth, learned, reader.ancestors, role_rules)]
        )
    ids = {n.id: n for n in narratives}
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    report = {
        name: set(writers.split(","))
        for name, _, writers in (g.partition("=") for g in args.report or list(REPORT))
    }

    def figures(got: dict[str, str], mine: list[Any]) -> dict[str, Any]:
        keep = {n.id for n in mine}
        short = [n for n in mine if is_short(n.text)]
        long_ = [n for n in mine if not is_short(n.text)]
        return {
            "all": verdict_figures([n.verdict for n in mine], [got[n.id] for n in mine]),
            "short": verdict_figures([n.verdict for n in short], [got[n.id] for n in short]),
            "long": verdict_figures([n.verdict for n in long_], [got[n.id] for n in long_]),
            "twins": {
                "told_apart": sum(
                    all(got[i] == ids[i].verdict for i in p) for p in pairs if p[0] in keep
                ),
                "pairs": sum(p[0] in keep for p in pairs),
            },
        }

    result: dict[str, Any] = {
        "groups": args.groups,
        "parts": {h: round(float(np.mean(v)), 4) for h, v in parts_right.items()},
        "methods": {},
    }
    print("parts read (exact):", result["parts"])
    for name, got in said.items():
        entry = {"corpus": figures(got, narratives)}
        entry["groups"] = {
            name: figures(got, [n for n in narratives if n.writer in writers])
            for name, writers in report.items()
        }
        result["methods"][name] = entry
        for part, f in [("corpus", entry["corpus"]), *entry["groups"].items()]:
            a = f["all"]
            print(
                f"{name:40s} {part:8s} {a['accuracy']:.3f}/{a['macro_f1']:.3f}/"
                f"{a['prohibit_f1']:.3f} short {f['short'].get('accuracy', 0):.3f} long "
                f"{f['long'].get('accuracy', 0):.3f} twins {f['twins']['told_apart']}/"
                f"{f['twins']['pairs']}",
                flush=True,
            )
    if args.said:
        args.said.write_text(json.dumps(said) + "\n", encoding="utf-8")
    result["own sets"] = own_sets(args.own)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def verdict_of(reasoner: Any, flows: list[Any]) -> str:
    """The checklist's verdict on a list of flows (not covered when there is none)."""
    from privacy_checklist.reasoning.checklist.decide import combine, decide

    case = combine([decide(reasoner.catalogue, f, reasoner.rule) for f in flows])
    return case.label if case is not None else "not_applicable"


#: where a case-flow variant decides only when the rule reader reads a flow HIPAA covers
GATED = ", where the rule reader reads a covered flow (else not covered)"


def shared_variants(
    read: Any, learned: dict[str, Any], flows: list[Any], merged: list[Any], reasoner: Any
) -> dict[str, str]:
    """The verdicts of the ways of deciding measured on the corpus and the own sets alike, from
    a case's flow as read (``read``), the learned conditions (``learned``: kind -> fact), the
    rule reader's flows (``flows``) and those flows with the learned conditions beside their
    facts (``merged``)."""
    from privacy_checklist.reasoning.checklist.decide import combine, decide
    from privacy_checklist.reasoning.learned import case_flow as cfl

    catalogue, reader = reasoner.catalogue, reasoner.reader

    def label(found: list[Any]) -> str:
        return verdict_of(reasoner, found)

    def decided(facts: dict[str, Any]) -> str:
        return label([cfl.case_flow(read, facts, reader.ancestors, reader.cues.role_facts)])

    case = combine([decide(catalogue, f, reasoner.rule) for f in merged])
    deciding = {
        k: f
        for k, f in (case.flow.facts.items() if case is not None else ())
        if k in catalogue.kinds and f.value is not None
    }
    every = cfl.rule_facts(flows)
    rule = label(merged)
    out = {
        "the rule reader's flows decide (the default)": rule,
        "case flow, learned conditions": decided(learned),
        "case flow, rule facts under learned": decided({**deciding, **learned}),
        "case flow, every rule-read fact under learned": decided({**every, **learned}),
    }
    both = cfl.case_flow(read, {**every, **learned}, reader.ancestors, reader.cues.role_facts)
    if case is not None:
        both = cfl.with_rule_roles(both, case.flow)
    out["case flow, every rule-read fact under learned, rule reader's roles where it read them"] = (
        label([both])
    )
    for name in (
        "case flow, learned conditions",
        "case flow, every rule-read fact under learned",
        "case flow, every rule-read fact under learned, rule reader's roles where it read them",
    ):
        out[name + GATED] = "not_applicable" if rule == "not_applicable" else out[name]
    return out


def own_sets(paths: list[str]) -> dict[str, Any]:
    """Each own set's figures (accuracy, and each verdict's recall) for the ways of deciding
    that need no writer's labels (:func:`shared_variants`), with the shipped readers."""
    from tqdm import tqdm

    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.learned import case_flow as cfl
    from privacy_checklist.reasoning.learned import conditions

    reasoner = ChecklistReasoner(kbmod.load(None), blend=False)
    reader = conditions.shipped()
    flow_reader = cfl.shipped(reader.encoder.digest)
    out: dict[str, Any] = {}
    for path in paths:
        cases = read_cases(REPO / path)
        said: dict[str, list[str]] = defaultdict(list)
        for case in tqdm(cases, desc=Path(path).stem, unit="case"):
            flows = reasoner.reader.read(case.text).flows
            spans, vectors = reader.vectors(case.text)
            reads = conditions.reads_of(
                case.text, spans, reader.probabilities_of(vectors), reader.kinds
            )
            learned = {k: r.fact() for k, r in reads.items() if r.value is not None}
            merged = conditions.merge(flows, reads)
            read = flow_reader.read(vectors, flows)
            for name, got in shared_variants(read, learned, flows, merged, reasoner).items():
                said[name].append(got)
        gold = [case.expected for case in cases]
        out[Path(path).stem] = {
            "n": len(cases),
            **{name: verdict_figures(gold, got) for name, got in said.items()},
        }
        shown = {k: v["accuracy"] for k, v in out[Path(path).stem].items() if k != "n"}
        print(Path(path).stem, shown, flush=True)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
