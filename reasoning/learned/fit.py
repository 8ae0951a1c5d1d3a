"""The one trainer of the learned layers: a logistic regression whose regularisation and class
weighting are chosen by cross-validation, then fitted on every case; and the model file written
whole or not at all.

The offline reasoner's model (:mod:`~privacy_checklist.reasoning.learned.offline`) and the
checklist's learned layer (:mod:`~privacy_checklist.reasoning.learned.blend`) are both fitted
here, never on real court cases: the offline model on the synthetic cases (stratified folds),
the layer on the corpus's writers (folds that leave whole writers out). scikit-learn is the
``train`` extra: a check applies the written coefficients with numpy and never imports it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from privacy_checklist.reasoning.verdict import LABELS, Label

#: the regularisation strengths tried when a trainer gives none
GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


class LabelledCase(Protocol):
    """A training case (:class:`privacy_checklist.ingest.cases.Case`)."""

    @property
    def label(self) -> str: ...


@dataclass(frozen=True)
class Fitted:
    """The model fitted on every case with the chosen parameters, and what chose them: the
    cross-validated predictions and their (macro-F1, accuracy)."""

    model: Any
    params: dict[str, Any]
    predicted: list[str]
    score: tuple[float, float]


def gold(cases: Sequence[LabelledCase]) -> np.ndarray:
    """The cases' gold labels as the verdict's labels.

    Raises:
        ValueError: a label that is not one of permit, prohibit, not applicable.
    """
    labels = [Label.of_case(c.label) for c in cases]
    unread = [c.label for c, label in zip(cases, labels, strict=True) if label is None]
    if unread:
        raise ValueError(f"gold label {unread[0]!r} is not one of permit, prohibit, not applicable")
    return np.array([str(label) for label in labels])


def choose(
    x: np.ndarray,
    y: np.ndarray,
    grid: Sequence[float] = GRID,
    folds: int = 5,
    groups: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
) -> tuple[tuple[float, float], dict[str, Any], list[str]]:
    """The parameters (C, balanced class weights or none) with the best cross-validated
    macro-F1, then accuracy (the first best wins a tie), with that score and its predictions.

    The folds are stratified; with ``groups`` (each case's writer) they are grouped instead, so
    every case is predicted by a model that saw none of its writer's narratives. With
    ``weights`` (one a case) the fits and the scores weigh each case by it."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_predict

    splits: Any = StratifiedKFold(folds, shuffle=True, random_state=0)
    if groups is not None:
        splits = GroupKFold(n_splits=min(folds, len(set(groups))))
    best: tuple[tuple[float, float], dict[str, Any], list[str]] | None = None
    for balanced in (True, False):
        for c in grid:
            params = {"C": c, "class_weight": "balanced" if balanced else None}
            model = LogisticRegression(max_iter=10000, **params)
            fitting = {} if weights is None else {"sample_weight": weights}
            predicted = list(
                cross_val_predict(model, x, y, cv=splits, groups=groups, params=fitting)
            )
            score = (
                float(f1_score(y, predicted, average="macro", sample_weight=weights)),
                float(accuracy_score(y, predicted, sample_weight=weights)),
            )
            if best is None or score > best[0]:
                best = (score, params, predicted)
    assert best is not None
    return best


def fit(
    x: np.ndarray,
    y: np.ndarray,
    grid: Sequence[float] = GRID,
    folds: int = 5,
    groups: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
) -> Fitted:
    """Choose the parameters by cross-validation (:func:`choose`, grouped by writer when
    ``groups``, each case weighed by ``weights``), then fit on every case."""
    from sklearn.linear_model import LogisticRegression

    score, params, predicted = choose(x, y, grid, folds, groups, weights)
    model = LogisticRegression(max_iter=10000, **params).fit(x, y, sample_weight=weights)
    return Fitted(model, params, predicted, score)


def figures(y: np.ndarray, predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1 and each label's F1 of predictions against the gold labels."""
    from sklearn.metrics import accuracy_score, f1_score

    per_class = f1_score(y, predicted, labels=list(LABELS), average=None, zero_division=0)
    return {
        "accuracy": round(float(accuracy_score(y, predicted)), 4),
        "macro_f1": round(float(f1_score(y, predicted, average="macro", zero_division=0)), 4),
        "f1": {str(lab): round(float(v), 4) for lab, v in zip(LABELS, per_class, strict=True)},
    }


def coefficients(model: Any) -> dict[str, Any]:
    """A fitted model's labels, coefficients and intercepts, as a model file holds them."""
    return {
        "labels": [str(label) for label in model.classes_],
        "coef": np.round(model.coef_, 6).tolist(),
        "intercept": np.round(model.intercept_, 6).tolist(),
    }


def write_model(out: Path, data: dict[str, Any]) -> None:
    """Write a model file whole or not at all (through a temporary file beside it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)
