"""Fit the learned answer reader (:mod:`.conclusion`) on answers labelled by a person.

    python -m privacy_checklist.reasoning.llm.conclusion_fit bench/data/answer_corpus \
        [--out reasoning/data/answer_reader.json]

Each line of a ``WRITER.jsonl`` set is an answer: ``text``, ``question``, ``label`` (the
committed verdict a person reads, or null) and ``committed`` (the words that carry it). A
sentence is a positive example of "the committed one" when it holds those words (or most of
them); a set without ``committed`` teaches only whether an answer commits. The sentence model
is fitted first; the answer model is fitted on the sentence model's scores of answers it did
not see (two folds over writers), so that its trust in a score is the trust a new writer
earns. Needs scikit-learn (the ``train`` extra); deterministic.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from privacy_checklist.reasoning.llm import conclusion
from privacy_checklist.reasoning.llm.answers import read_rules, stated
from privacy_checklist.reasoning.llm.continuation import own_answer
from privacy_checklist.reasoning.text import data_path

#: the regularisation of the two models (inverse strength)
SENTENCE_C, ANSWER_C = 1.0, 10.0


def _words(text: str) -> str:
    return re.sub(r"\W+", " ", re.sub(r"[*_`#>]+", " ", text)).strip().lower()


def holds(sentence: str, committed: str) -> bool:
    """Whether a sentence carries the committed words (one within the other, or most of them)."""
    s, c = _words(sentence), _words(committed)
    if not s or not c:
        return False
    wanted = set(c.split())
    return s in c or c in s or len(set(s.split()) & wanted) >= 0.6 * len(wanted)


def prepared(row: dict[str, Any]) -> dict[str, Any] | None:
    """An answer's sentences, their features and labels, and which hold the committed words."""
    from privacy_checklist.kg.static import static_encoder

    text = own_answer(row["text"])
    sentences = stated(text)
    if not sentences:
        return None
    rows, labels = zip(
        *(
            conclusion.sentence_features(sentences, i, row["question"])
            for i in range(len(sentences))
        ),
        strict=True,
    )
    return {
        "row": row,
        "text": text,
        "sentences": sentences,
        "labels": list(labels),
        "x": np.hstack([np.asarray(rows), static_encoder().encode(sentences)]),
        "y": np.array([int(holds(s, row.get("committed") or "")) for s in sentences]),
        "rule": read_rules(row["text"], row["question"]),
    }


def _sentence_model(items: list[dict[str, Any]]) -> Any:
    from sklearn.linear_model import LogisticRegression

    marked = [p for p in items if "committed" in p["row"]]  # sets that say where it is
    x = np.vstack([p["x"] for p in marked])
    y = np.concatenate([p["y"] for p in marked])
    return LogisticRegression(C=SENTENCE_C, max_iter=3000, class_weight="balanced").fit(x, y)


def _answer_rows(model: Any, items: list[dict[str, Any]]) -> np.ndarray:
    return np.array(
        [
            conclusion.answer_features(
                p["text"],
                p["sentences"],
                p["labels"],
                model.predict_proba(p["x"])[:, 1],
                p["rule"],
            )
            for p in items
        ]
    )


def fit(rows: Iterable[dict[str, Any]]) -> conclusion.ConclusionModel:
    """The two models fitted on labelled answers (each with its ``writer``)."""
    return fit_prepared([p for p in map(prepared, rows) if p is not None])


def fit_prepared(items: list[dict[str, Any]]) -> conclusion.ConclusionModel:
    """The two models fitted on :func:`prepared` answers."""
    from sklearn.linear_model import LogisticRegression

    writers = sorted({p["row"]["writer"] for p in items})
    if len(writers) < 2:
        raise ValueError("the answer reader is fitted on at least two writers' answers")
    halves = [set(writers[0::2]), set(writers[1::2])]
    x_answer, y_answer = [], []
    for half in halves:  # the answer model sees the sentence model's scores of unseen writers
        seen = _sentence_model([p for p in items if p["row"]["writer"] not in half])
        unseen = [p for p in items if p["row"]["writer"] in half]
        x_answer.append(_answer_rows(seen, unseen))
        y_answer += [int(p["row"]["label"] is not None) for p in unseen]
    answer = LogisticRegression(C=ANSWER_C, max_iter=3000).fit(np.vstack(x_answer), y_answer)
    sentence = _sentence_model(items)
    return conclusion.ConclusionModel(
        sentence.coef_[0].astype(float),
        float(sentence.intercept_[0]),
        answer.coef_[0].astype(float),
        float(answer.intercept_[0]),
    )


def save(model: conclusion.ConclusionModel, path: Path, sources: list[str]) -> None:
    """Write the model as JSON, whole or not at all."""
    data = {
        "fitted_on": sources,
        "sentence_floor": model.sentence_floor,
        "answer_floor": model.answer_floor,
        "agreed_floor": model.agreed_floor,
        "sentence": {
            "coef": [round(float(c), 6) for c in model.sentence_coef],
            "bias": model.sentence_bias,
        },
        "answer": {
            "coef": [round(float(c), 6) for c in model.answer_coef],
            "bias": model.answer_bias,
        },
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_sets(folders: Iterable[Path]) -> dict[str, list[dict[str, Any]]]:
    """Every writer's labelled answers (``WRITER.jsonl``) of the folders, each with its writer."""
    sets: dict[str, list[dict[str, Any]]] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.jsonl")):
            lines = path.read_text(encoding="utf-8").splitlines()
            sets[path.stem] = [
                {**json.loads(line), "writer": path.stem} for line in lines if line.strip()
            ]
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", type=Path, help="folders of WRITER.jsonl answer sets")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped model file")
    args = parser.parse_args(argv)
    sets = read_sets(args.data)
    if len(sets) < 2:
        parser.error(
            "need at least two writers' sets (WRITER.jsonl) in " + ", ".join(map(str, args.data))
        )
    out = args.out or data_path(conclusion.MODEL)
    save(fit(row for rows in sets.values() for row in rows), out, sorted(sets))
    print(
        f"{out}: fitted on {sum(map(len, sets.values()))} answers of {len(sets)} writers",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
