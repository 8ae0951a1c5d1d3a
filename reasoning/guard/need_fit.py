"""Fit the guard's purpose and need models (:mod:`privacy_checklist.reasoning.guard.need`) on
drafts labelled span by span (the drafts corpus's form: ``purpose``, ``to``, ``purpose_words``,
``text`` and ``spans`` each with ``start`` and ``needed``).

    python -m privacy_checklist.reasoning.guard.need_fit bench/data/guard_corpus \
        [--conditions bench/data/guard_conditions] [--out PATH]

- The purpose model learns the purpose key from what the person typed (``to`` and
  ``purpose_words``; never the message).
- The need model learns, sentence by sentence, whether a sentence holds a span the purpose does
  not need and none it needs.
- The condition model learns whether a message states the condition its purpose needs, from
  triples of one message that state it, leave it out and deny it (``--conditions``): learned
  from the drafts (a draft that lets anything go states it) it read the recipient's words, not
  the condition's (a court clerk read as an order).

Needs the ``train`` extra (scikit-learn). The choices below (the tf-idf words and pairs, one
hidden layer of 256, its weight decay, the threshold of one half, the purpose floor) were made
leaving whole writers out (``bench/guard_corpus/measure.py``), never on one writer's set alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.guard.need import (
    NAME,
    TYPE_WEIGHT,
    NeedModel,
    NeedModels,
    PurposeModel,
    condition_text,
    context_text,
    positions,
    save,
    terms,
)

HIDDEN = 256
DECAY = 1e-2
THRESHOLD = 0.5
IDENTIFIER_HIDDEN = 128
#: an identifier goes when the head is this sure the purpose does not need it (leaving writers
#: out: 0.5 caught 71% of the unneeded and lost 12% of the needed, 0.7 caught 64% and lost 8%)
IDENTIFIER_THRESHOLD = 0.7
#: the drafts corpus's names for identifier types the guard names otherwise
ALIASES = {"DEVICE": "DEVICE_ID", "ACCOUNT": "ACCOUNT_NUMBER"}
#: below this probability the guard does not take the purpose model's reading (leaving drafts
#: writers out: at 0.2 the purpose read as labelled 0.729, unneeded identifiers left 0.294,
#: needed kept 0.818; at 0.1: 0.836, 0.218, 0.813; at 0.05: 0.862, 0.192, 0.809. On the
#: guard's six older sets, read by the model fitted on the drafts, 0.1 cost: leaks 2.4% ->
#: 3.6%, verdicts 0.851 -> 0.819; 0.05: 7.1% and 0.801)
FLOOR = 0.1


def _writers_sets(
    folder: Path, fields: tuple[str, ...], what: str, check: Any = None
) -> dict[str, list[dict[str, Any]]]:
    """Each writer's ``what`` (one ``*.jsonl`` a writer), each with ``fields`` and passing
    ``check(item)`` (a reason it does not, or "").

    Raises:
        ValueError: a file has none or one lacks a field or fails the check (naming the file
            and line).
    """
    sets: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        items = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            missing = [k for k in fields if k not in item]
            if missing:
                raise ValueError(f"{path}:{number}: a {what[:-1]} lacks {', '.join(missing)}")
            wrong = check(item) if check else ""
            if wrong:
                raise ValueError(f"{path}:{number}: {wrong}")
            items.append(item)
        if not items:
            raise ValueError(f"{path}: no {what}")
        sets[path.stem] = items
    if not sets:
        raise ValueError(f"{folder}: no *.jsonl {what}")
    return sets


def read_sets(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each writer's drafts (one ``*.jsonl`` a writer), checked for what fitting needs.

    Raises:
        ValueError: a file has no drafts or a draft lacks a field (naming the file and line).
    """
    return _writers_sets(folder, ("purpose", "text", "spans"), "drafts")


def sentences(item: dict[str, Any]) -> list[tuple[str, int]]:
    """Each sentence of a draft and its label: 1 when it holds an unneeded span and no needed
    one."""
    from privacy_checklist.reasoning.text import sentence_spans

    text = item["text"]
    out = []
    for start, end in sentence_spans(text, lines=True):
        inside = [s for s in item["spans"] if start <= s["start"] < end]
        unneeded = any(not s["needed"] for s in inside)
        out.append((text[start:end], int(unneeded and all(not s["needed"] for s in inside))))
    return out


class Vectors:
    """The shipped encoder's vectors, each text encoded once however many folds read it."""

    def __init__(self) -> None:
        self.seen: dict[str, npt.NDArray[np.float32]] = {}

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from privacy_checklist.kg.static import static_encoder

        new = sorted({t for t in texts if t not in self.seen})
        if new:
            for text, vector in zip(new, static_encoder().encode(new), strict=True):
                self.seen[text] = vector
        return np.stack([self.seen[t] for t in texts])


def need_rows(
    items: Iterable[dict[str, Any]], vectors: Vectors
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The need model's inputs and labels, a row a sentence."""
    blocks, labels = [], []
    for item in items:
        said = sentences(item)
        if not said:
            continue
        encoded = vectors([s for s, _ in said])
        context = vectors([context_text(item.get("to"), item.get("purpose_words"))])
        blocks.append(
            np.hstack([encoded, np.repeat(context, len(said), axis=0), positions(len(said))])
        )
        labels += [label for _, label in said]
    return np.vstack(blocks).astype(np.float32), np.array(labels, dtype=np.int64)


def identifier_rows(
    items: Iterable[dict[str, Any]], vectors: Vectors, types: Sequence[str]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The identifier head's inputs and labels, a row a labelled identifier: its type (the
    guard's name for it), the purpose's vector and its sentence's; 1 when not needed."""
    from privacy_checklist.reasoning.text import sentence_spans

    rows, labels = [], []
    for item in items:
        bounds = sentence_spans(item["text"], lines=True)
        context = vectors([context_text(item.get("to"), item.get("purpose_words"))])[0]
        for span in item["spans"]:
            if span.get("kind") != "identifier":
                continue
            start, end = next(((a, b) for a, b in bounds if a <= span["start"] < b), (0, 0))
            if end <= start:
                continue
            kind = ALIASES.get(span["type"], span["type"])
            onehot = np.zeros(len(types) + 1, dtype=np.float32)
            onehot[types.index(kind) if kind in types else len(types)] = TYPE_WEIGHT
            sentence = vectors([item["text"][start:end]])[0]
            rows.append(np.hstack([onehot, context, sentence]))
            labels.append(int(not span["needed"]))
    return np.vstack(rows).astype(np.float32), np.array(labels, dtype=np.int64)


def _layer(hidden: int) -> Any:
    """One hidden layer of ``hidden`` units, weight decay ``DECAY``, stopped early on a tenth
    held out, seeded."""
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(
        hidden_layer_sizes=(hidden,),
        alpha=DECAY,
        max_iter=200,
        early_stopping=True,
        random_state=0,
    )


def identifier_head(
    items: Sequence[dict[str, Any]], vectors: Vectors, need: NeedModel
) -> tuple[int, int]:
    """Fit the need model's identifier head on ``items`` and set it on ``need``; the
    identifiers it learned from, and how many of them were not needed."""

    from privacy_checklist.reasoning.guard.phi_data import identifier_types

    types = sorted(identifier_types())
    id_rows, id_labels = identifier_rows(items, vectors, types)
    head = _layer(IDENTIFIER_HIDDEN).fit(id_rows, id_labels)
    need.identifier = (
        head.coefs_[0].astype(np.float32),
        head.intercepts_[0].astype(np.float32),
        head.coefs_[1][:, 0].astype(np.float32),
        head.intercepts_[1].astype(np.float32),
    )
    need.types = types
    need.identifier_threshold = IDENTIFIER_THRESHOLD
    return len(id_labels), int(id_labels.sum())


CONDITIONS = ("stated", "absent", "denied")


def read_conditions(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each writer's messages that state, leave out or deny the condition their purpose
    needs (one ``*.jsonl`` a writer: triples of one message, ``condition`` each).

    Raises:
        ValueError: a file has no messages or a message lacks a field or a known value.
    """
    from privacy_checklist.reasoning.guard.purpose import purposes_data

    law = purposes_data()["law"]

    def check(item: dict[str, Any]) -> str:
        if item["purpose"] in law and item["condition"] in CONDITIONS:
            return ""
        return (
            f"purpose {item['purpose']!r} or condition {item['condition']!r} is not one the "
            "guard knows"
        )

    return _writers_sets(folder, ("purpose", "text", "condition"), "messages", check)


def condition_model(items: Sequence[dict[str, Any]]) -> PurposeModel | None:
    """The condition model fitted on messages labelled ``stated``, ``absent`` or ``denied``
    (1 when stated): the three of a triple differ only in what they say of the condition, so
    the words of the recipient and the purpose cannot carry it. None without both kinds."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    labels = [int(i["condition"] == "stated") for i in items]
    if len(set(labels)) < 2:
        return None
    said = [
        condition_text(str(i.get("purpose_words") or ""), f"{i.get('to') or ''} ;  ; {i['text']}")
        for i in items
    ]
    tfidf = TfidfVectorizer(analyzer=terms, sublinear_tf=True)
    x = tfidf.fit_transform(said)
    logistic = LogisticRegression(C=4.0, max_iter=3000).fit(x, labels)
    vocabulary = sorted(tfidf.vocabulary_, key=lambda t: tfidf.vocabulary_[t])
    coef = logistic.coef_.astype(np.float32)[0]
    return PurposeModel(
        vocabulary,
        tfidf.idf_.astype(np.float32),
        np.vstack([np.zeros_like(coef), coef]),  # softmax over (0, w·x + b) is the logistic
        np.array([0.0, float(logistic.intercept_[0])], dtype=np.float32),
        ["absent", "stated"],
    )


def fit(
    items: Sequence[dict[str, Any]],
    vectors: Vectors | None = None,
    conditions: Sequence[dict[str, Any]] = (),
) -> NeedModels:
    """The purpose and need models fitted on the drafts ``items``, the condition model on the
    messages ``conditions`` (none without them)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectors = vectors or Vectors()
    said = [context_text(i.get("to"), i.get("purpose_words")) for i in items]
    tfidf = TfidfVectorizer(analyzer=terms, sublinear_tf=True)
    x = tfidf.fit_transform(said)
    logistic = LogisticRegression(C=4.0, max_iter=3000).fit(x, [i["purpose"] for i in items])
    vocabulary = sorted(tfidf.vocabulary_, key=lambda t: tfidf.vocabulary_[t])
    purpose = PurposeModel(
        vocabulary,
        tfidf.idf_.astype(np.float32),
        logistic.coef_.astype(np.float32),
        logistic.intercept_.astype(np.float32),
        [str(c) for c in logistic.classes_],
    )
    rows, labels = need_rows(items, vectors)
    mlp = _layer(HIDDEN).fit(rows, labels)
    need = NeedModel(
        mlp.coefs_[0],
        mlp.intercepts_[0],
        mlp.coefs_[1][:, 0],
        float(mlp.intercepts_[1][0]),
        THRESHOLD,
    )
    identifiers, unneeded = identifier_head(items, vectors, need)
    condition = condition_model(conditions) if conditions else None
    about = {
        "drafts": len(items),
        "writers": sorted({str(i.get("writer", "")) for i in items}),
        "sentences": len(labels),
        "beside": int(labels.sum()),
        "identifiers": identifiers,
        "identifiers_unneeded": unneeded,
        "conditions": len(conditions),
        "condition_writers": sorted({str(i.get("writer", "")) for i in conditions}),
    }
    return NeedModels(purpose, need, FLOOR, about, condition)


def main(argv: list[str] | None = None) -> int:
    from privacy_checklist.kg.static import table_digest
    from privacy_checklist.reasoning.text import data_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of *.jsonl drafts, one a writer")
    parser.add_argument(
        "--conditions",
        type=Path,
        help="a folder of *.jsonl messages stating, leaving out or denying their purpose's "
        "condition (bench/data/guard_conditions); without it no condition model",
    )
    parser.add_argument("--out", type=Path, default=None, help=f"default: the shipped {NAME}")
    args = parser.parse_args(argv)
    try:
        sets = read_sets(args.corpus)
        told = read_conditions(args.conditions) if args.conditions else {}
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    items = [item for _, found in sorted(sets.items()) for item in found]
    conditions = [{**i, "writer": w} for w, found in sorted(told.items()) for i in found]
    models = fit(items, conditions=conditions)
    out = args.out or data_path(NAME)
    save(out, models, table_digest())
    print(
        f"{out}: {len(items)} drafts of {len(sets)} writers, {models.about['sentences']} sentences"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
