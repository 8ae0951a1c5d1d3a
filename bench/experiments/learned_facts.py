"""An experiment (issue 27): read the law's facts with a learned reader and let the checklist
decide — measured leave-writer-out on the labelled corpus against the checklist as it ships.

    python bench/experiments/learned_facts.py [--corpus bench/data/corpus] [--json OUT]

For each writer left out: the fact reader of ``fact_classifier.py`` (sentence embeddings of
the narrative and of the catalogue's question, a logistic regression: true / false / not
stated) is fitted on the other writers' labelled facts; on each of the left-out writer's
narratives the rule reader reads the flows (parties, roles, information), the learned reader
gives every condition kind's fact (in place of the rule reader's; the applicability facts
stay the rule reader's), and the checklist decides (``decide``, ``combine``; no learned layer
for long narratives on either side, so that the two differ only in how facts are read).
Not shipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from privacy_checklist.ingest.corpus import read_corpus, twin_pairs
from privacy_checklist.reasoning.text import sentences

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "corpus"))
sys.path.insert(0, str(REPO / "bench" / "experiments"))

from fact_classifier import VALUES, features  # noqa: E402
from measure import verdict_figures  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "data" / "corpus")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.0,
        help="keep the rule reader's fact unless the learned one is this sure",
    )
    parser.add_argument(
        "--unstated", type=int, default=6, help="unlabelled kinds a narrative adds as not stated"
    )
    args = parser.parse_args()
    from sklearn.linear_model import LogisticRegression
    from tqdm import tqdm

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.embeddings import model
    from privacy_checklist.reasoning.checklist.decide import combine, decide
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.reading.types import Fact

    narratives = read_corpus(sorted(args.corpus.glob("*.jsonl"))).narratives
    kb = kbmod.load(None)
    reasoner = ChecklistReasoner(kb, blend=False)
    assert reasoner.catalogue is not None and reasoner.reader is not None
    catalogue = reasoner.catalogue
    kinds = sorted(catalogue.kinds)
    encoder = model()
    qvec = dict(
        zip(
            kinds,
            encoder.encode([catalogue.question(k) for k in kinds], normalize_embeddings=True),
            strict=True,
        )
    )
    parts = [sentences(n.text) or [n.text] for n in narratives]
    flat = [s for p in parts for s in p]
    encoded = encoder.encode(flat, normalize_embeddings=True, batch_size=64)
    vectors: dict[str, np.ndarray] = {}
    at = 0
    for n, p in zip(narratives, parts, strict=True):
        vectors[n.id] = encoded[at : at + len(p)]
        at += len(p)
    rows, labels, groups = [], [], []
    for n in narratives:
        for fact in n.facts:
            if fact.kind in qvec:
                rows.append(
                    features(qvec[fact.kind], vectors[n.id], kinds.index(fact.kind), len(kinds))
                )
                labels.append(VALUES[fact.value])
                groups.append(n.writer)
        # the kinds it leaves unlabelled are not stated (the brief asks for every kind it
        # states): a few of them, so that the reader learns when a question is not answered
        labelled = {f.kind for f in n.facts}
        others = [k for k in kinds if k not in labelled]
        rng = np.random.default_rng(abs(hash(n.id)) % (2**32))
        for kind in rng.choice(others, size=min(args.unstated, len(others)), replace=False):
            rows.append(features(qvec[kind], vectors[n.id], kinds.index(kind), len(kinds)))
            labels.append("not stated")
            groups.append(n.writer)
    x, y, g = np.array(rows), np.array(labels), np.array(groups)
    readings = {n.id: reasoner.reader.read(n.text).flows for n in tqdm(narratives, desc="read")}
    rule: dict[str, str] = {}
    learned: dict[str, str] = {}
    value_of = {"true": True, "false": False, "not stated": None}
    for writer in tqdm(sorted(set(g)), desc="writers"):
        fitted = LogisticRegression(max_iter=5000, C=1.0, class_weight="balanced")
        fitted.fit(x[g != writer], y[g != writer])
        classes = list(fitted.classes_)
        for n in (n for n in narratives if n.writer == writer):
            flows = readings[n.id]
            kinds_x = np.array(
                [features(qvec[k], vectors[n.id], i, len(kinds)) for i, k in enumerate(kinds)]
            )
            probs = fitted.predict_proba(kinds_x)
            facts = {}
            for kind, p in zip(kinds, probs, strict=True):
                best = int(np.argmax(p))
                if p[best] >= args.threshold:
                    facts[kind] = value_of[classes[best]]
            first = [decide(catalogue, f, reasoner.rule) for f in flows]
            case = combine(first)
            rule[n.id] = case.label if case is not None else "not_applicable"
            changed = []
            for flow in flows:
                merged = dict(flow.facts)
                for kind, value in facts.items():
                    old = flow.facts.get(kind)
                    merged[kind] = (
                        Fact(kind, value, source="learned")
                        if value is not None
                        else (Fact(kind, None) if old is None or old.source != "role" else old)
                    )
                changed.append(decide(catalogue, replace(flow, facts=merged), reasoner.rule))
            case = combine(changed)
            learned[n.id] = case.label if case is not None else "not_applicable"
    result: dict[str, Any] = {"writers": {}}
    ids = {n.id: n for n in narratives}
    for name, said in (("rules", rule), ("learned facts", learned)):
        per = {}
        for writer in sorted(set(g)):
            mine = [n for n in narratives if n.writer == writer]
            per[writer] = verdict_figures([m.verdict for m in mine], [said[m.id] for m in mine])
        pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
        told = sum(all(said[i] == ids[i].verdict for i in pair) for pair in pairs)
        result["writers"][name] = per
        result[name] = {
            **verdict_figures([n.verdict for n in narratives], [said[n.id] for n in narratives]),
            "twins": f"{told}/{len(pairs)}",
        }
        print(name, result[name])
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
