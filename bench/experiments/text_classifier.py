"""An experiment (issue 27): the reference a reader must beat — the whole narrative's sentence
embedding (the bundled all-MiniLM-L6-v2, the mean of its sentences' normalized vectors) and a
logistic regression, fitted on every writer of the corpus but one and measured on that one.

    python bench/experiments/text_classifier.py [--corpus bench/data/corpus] [--json OUT]

It reads no fact: it cannot tell a narrative from its twin except by the words that differ, so
its twin figure is the measure of what a whole-text classifier misses. Not shipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from privacy_checklist.ingest.corpus import read_corpus, twin_pairs
from privacy_checklist.reasoning.text import sentences

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "corpus"))

from measure import verdict_figures  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "data" / "corpus")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    narratives = corpus.narratives
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    from privacy_checklist.kg.embeddings import model

    encoder = model()
    parts = [sentences(n.text) or [n.text] for n in narratives]
    flat = [s for p in parts for s in p]
    encoded = encoder.encode(flat, normalize_embeddings=True, batch_size=64)
    rows, at = [], 0
    for p in parts:
        rows.append(encoded[at : at + len(p)].mean(axis=0))
        at += len(p)
    x = np.array(rows)
    y = np.array([n.verdict for n in narratives])
    g = np.array([n.writer for n in narratives])
    predicted = np.empty(len(y), dtype=object)
    writers = sorted(set(g))
    for train, test in GroupKFold(n_splits=len(writers)).split(x, y, g):
        fitted = LogisticRegression(max_iter=5000, C=1.0, class_weight="balanced")
        predicted[test] = fitted.fit(x[train], y[train]).predict(x[test])
    said = dict(zip((n.id for n in narratives), predicted, strict=True))
    per = {}
    for writer in writers:
        mine = [n for n in narratives if n.writer == writer]
        per[writer] = verdict_figures([n.verdict for n in mine], [said[n.id] for n in mine])
    ids = {n.id: n for n in narratives}
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    told = sum(all(said[i] == ids[i].verdict for i in pair) for pair in pairs)
    result = {
        "leave_writer_out": per,
        "all": verdict_figures(list(y), list(predicted)),
        "twins": {"told_apart": told, "pairs": len(pairs)},
    }
    for writer, f in per.items():
        print(
            f"{writer}: acc {f['accuracy']:.3f} macro {f['macro_f1']:.3f} "
            f"prohibit {f['prohibit_f1']:.3f}"
        )
    print("all", result["all"], result["twins"])
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
