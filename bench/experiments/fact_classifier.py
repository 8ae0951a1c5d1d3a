"""An experiment (issue 27): a learned reader of the law's facts, measured leave-writer-out
against the rule reader on the labelled corpus.

    python bench/experiments/fact_classifier.py [--corpus bench/data/corpus] [--json OUT]

For each condition a writer labelled on a narrative's deciding flow (stated true, stated false,
not stated), the learned reader sees the narrative's sentences and the catalogue's question for
the condition kind, embeds both with the bundled all-MiniLM-L6-v2, and a logistic regression on
[question, the sentences nearest it, their products and differences, the similarities] says
true / false / not stated. It is fitted on every writer but one and measured on the one left
out, every writer in turn (GroupKFold by writer). The rule reader's figure is the shipped
checklist's fact on the flow it decides by (bench/corpus/measure.py). Not shipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from privacy_checklist.ingest.corpus import read_corpus
from privacy_checklist.reasoning.text import sentences

REPO = Path(__file__).resolve().parents[2]
VALUES = {True: "true", False: "false", None: "not stated"}
TOP = 2  # the sentences nearest the question that the reader looks at


def features(question: np.ndarray, vectors: np.ndarray, kind_index: int, kinds: int) -> np.ndarray:
    """The pair's features: the question, the nearest sentences (mean of the top ``TOP``) and
    the nearest alone, their products and differences, the top similarities, the kind."""
    sims = vectors @ question
    order = np.argsort(-sims)
    best = vectors[order[0]]
    top = vectors[order[:TOP]].mean(axis=0)
    padded = np.pad(np.sort(sims)[::-1][:3], (0, max(0, 3 - len(sims))))
    kind = np.zeros(kinds)
    kind[kind_index] = 1.0
    return np.concatenate(
        [best * question, np.abs(best - question), top * question, best, padded, kind]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "data" / "corpus")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.embeddings import model
    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of

    catalogue = catalogue_of(kbmod.load(None))
    kinds = sorted(catalogue.kinds)
    encoder = model()
    rows, labels, groups, writers_of = [], [], [], []
    questions = {k: catalogue.question(k) for k in kinds}
    qvec = dict(
        zip(
            kinds,
            encoder.encode([questions[k] for k in kinds], normalize_embeddings=True),
            strict=True,
        )
    )
    narratives = [n for n in corpus.narratives if any(f.kind in qvec for f in n.facts)]
    texts = [sentences(n.text) or [n.text] for n in narratives]
    flat = [s for ss in texts for s in ss]
    print(f"{len(narratives)} narratives, {len(flat)} sentences", file=sys.stderr)
    encoded = encoder.encode(flat, normalize_embeddings=True, batch_size=64, show_progress_bar=True)
    at = 0
    for narrative, said in zip(narratives, texts, strict=True):
        vectors = encoded[at : at + len(said)]
        at += len(said)
        for fact in narrative.facts:
            if fact.kind not in qvec:
                continue
            rows.append(features(qvec[fact.kind], vectors, kinds.index(fact.kind), len(kinds)))
            labels.append(VALUES[fact.value])
            groups.append(narrative.writer)
            writers_of.append(narrative.writer)
    x, y, g = np.array(rows), np.array(labels), np.array(groups)
    writers = sorted(set(groups))
    predicted = np.empty(len(y), dtype=object)
    for train, test in GroupKFold(n_splits=len(writers)).split(x, y, g):
        model_ = LogisticRegression(max_iter=5000, C=1.0, class_weight="balanced")
        model_.fit(x[train], y[train])
        predicted[test] = model_.predict(x[test])
    per: dict[str, Any] = defaultdict(dict)
    for writer in writers:
        mask = g == writer
        per[writer]["agreement"] = round(float((predicted[mask] == y[mask]).mean()), 4)
        per[writer]["n"] = int(mask.sum())
    overall = round(float((predicted == y).mean()), 4)
    by_value = {
        v: round(float((predicted[y == v] == v).mean()), 4)
        for v in VALUES.values()
        if (y == v).any()
    }
    result = {"leave_writer_out": dict(per), "all": overall, "recall_by_value": by_value}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
