"""Classification figures from a confusion matrix (rows gold, columns predicted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

#: A label: any kind of string (plain text, a ``StrEnum`` member).
L = TypeVar("L", bound=str)


def per_class(confusion: Mapping[L, Mapping[L, int]], labels: Sequence[L]) -> dict[str, Any]:
    """Precision, recall, F1 and support of each label, accuracy and macro-F1.

    Columns other than ``labels`` (a parse failure) count as wrong predictions. Macro-F1
    averages over the labels that occur, in the gold or in the predictions (as scikit-learn
    does): a label absent from both says nothing about the method.
    """
    scores: dict[str, dict[str, float | int]] = {}
    for label in labels:
        tp = confusion[label].get(label, 0)
        predicted = sum(confusion[g].get(label, 0) for g in labels)
        support = sum(confusion[label].values())
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[label] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "support": support,
        }
    n = sum(sum(row.values()) for row in confusion.values())
    correct = sum(confusion[label].get(label, 0) for label in labels)
    occurring = [
        label
        for label in labels
        if scores[label]["support"] or sum(confusion[g].get(label, 0) for g in labels)
    ]
    return {
        "n": n,
        "accuracy": round(correct / n, 4) if n else 0.0,
        "macro_f1": round(sum(scores[label]["f1"] for label in occurring) / len(occurring), 4)
        if occurring
        else 0.0,
        "per_class": scores,
    }
