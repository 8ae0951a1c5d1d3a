"""An experiment (issue 27 §3): a learned reader of a party's regulatory role from its words,
against the rule reader's (:meth:`FactReader.resolve_role`), leave-writer-out.

    python bench/experiments/role_reader.py [--json OUT]

Every sender, recipient and subject the corpus's writers labelled (their words and role) is a
row; the learned reader is the shipped encoder's vector of the words and a logistic regression,
fitted on every writer but one and measured on that one, each writer in turn. Figures: exact
role agreement for the rules, the learned reader, and the two together (the rules' role where
they find one, else the learned one).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "data" / "corpus")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from sklearn.linear_model import LogisticRegression
    from tqdm import tqdm

    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.encoder import encoder
    from privacy_checklist.reasoning.reading.facts import FactReader

    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    reader = FactReader(kbmod.load(None))
    words, roles, writers = [], [], []
    for n in corpus.narratives:
        for flow in n.flows:
            for part in ("sender", "recipient", "subject"):
                said = flow.parts.get(part)
                if said is not None and said.words and said.term and said.term != "any":
                    words.append(said.words)
                    roles.append(said.term)
                    writers.append(n.writer)
    print(f"{len(words)} parties, {len(set(roles))} roles", file=sys.stderr)
    unique = sorted(set(words))
    vectors = dict(zip(unique, encoder().encode(unique), strict=True))
    x = np.stack([vectors[w] for w in words])
    y = np.array(roles)
    g = np.array(writers)
    rules = np.array([reader.resolve_role(w)[0] or "" for w in tqdm(words, desc="rules")])
    learned = np.empty(len(y), dtype=object)
    for writer in tqdm(sorted(set(writers)), desc="writers"):
        test = g == writer
        model = LogisticRegression(max_iter=3000, C=10.0).fit(x[~test] * 5, y[~test])
        learned[test] = model.predict(x[test] * 5)
    both = np.where(rules != "", rules, learned)
    result = {
        "parties": len(y),
        "rules": round(float((rules == y).mean()), 4),
        "rules found": round(float((rules != "").mean()), 4),
        "rules where found": round(float((rules == y)[rules != ""].mean()), 4),
        "learned": round(float((learned == y).mean()), 4),
        "learned where rules found none": round(float((learned == y)[rules == ""].mean()), 4),
        "rules, else learned": round(float((both == y).mean()), 4),
        "confused": Counter(
            f"{a} -> {b}" for a, b in zip(y, learned, strict=True) if a != b
        ).most_common(12),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
