"""The learned layer of the checklist: the checklist weighed with other evidence of the case,
on every narrative, short or long (one model; nothing switches by length).

A short analyst narrative ("the clinic faxed her chart to her employer without asking her") has
one flow, and the checklist's reading of it is most of what there is to know. A court narrative
of two thousand characters tells a story with many flows, most of which the case does not turn
on; the checklist reads each, and one misread flow can decide the case. A multinomial logistic
regression weighs:

- the checklist's own outcome: the case's label, how many flows were read as permitted,
  prohibited and not covered, whether a prohibition was triggered, a candidate met, the
  applicability facts stated false, whether the verdict was decided
  (:func:`.evidence.checklist_features`);
- the offline reasoner's explainable features (the words' roles and information types, the
  phrase cues, the norm types BM25 and CI-ES retrieve:
  :class:`~privacy_checklist.reasoning.learned.offline.Features`), and the sentence embedding
  of the sentences the checklist's flows were read from (:func:`.evidence.flow_text`;
  all-MiniLM-L6-v2 run with ONNX Runtime, :mod:`privacy_checklist.kg.encoder`: no torch). A
  variant without the embedding ships beside it (:data:`MODEL_FILES`); the default is the one
  :data:`DEFAULT_EMBED` names, and the verdict says which was used.

It is fitted on the labelled corpus (``bench/data/corpus``: many independent writers), the
project's own narrative sets and the synthetic cases, its regularisation and class weighting
chosen by cross-validation whose folds leave whole writers out, so what is chosen is what
carries over to a writer the layer has not seen (``pcheck reasoner train --method checklist``);
the real court cases are never used. The model file records the writer-grouped cross-validated
figures of the blend, of the checklist alone and of the offline features alone on the same
folds, and the digest of the checklist settings it was trained on.

It never overrides silently: the verdict says what the checklist alone read and that the
learned layer weighed it, with the probabilities; and it only chooses a label some norm that
fits a flow can support (a permit needs a candidate permission that fits a flow).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.checklist.decide import Checklist, combine
from privacy_checklist.reasoning.checklist.report import Weighed
from privacy_checklist.reasoning.learned.evidence import (
    checklist_feature_names,
    checklist_features,
    flow_text,
)
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.retrieval.text import TOKENIZER

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.learned.offline import Features, TrainingCase

Vector = npt.NDArray[np.float64]
#: The shipped models: without the sentence embedding (no torch) and with it.
MODEL_FILES = {False: "checklist_blend_model.json", True: "checklist_blend_embed_model.json"}
TRAIN_COMMAND = "pcheck reasoner train --method checklist"
#: what the layer's evidence is read from (:func:`.evidence.flow_text`); a model fitted on
#: other text is refused
READS = "embedding of the flow sentences"
#: the regularisation strengths tried (the smallest win when the other evidence adds little)
GRID = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: whether the default layer weighs the sentence embedding. It does not: chosen as each layer's
#: own parameters are, by cross-validation that leaves whole writers out (the synthetic cases:
#: whole regulations) with the court-style synthetic cases and the other writers' narratives
#: counting equally, macro-F1 then accuracy (without it 0.632, with it 0.599, the checklist alone
#: 0.609). Since the checklist reads the conditions with the learned reader, the embedding no
#: longer pays: with it the layer falls below the checklist alone on the court-style cases
#: (0.690 against 0.720 accuracy), without it the layer is well above there (0.815) and level on
#: the writers (0.630 against 0.633) (the Results page, from the model files).
DEFAULT_EMBED = False


def encoder_digest() -> str:
    """The digest of the shipped sentence encoder the embedding is computed with."""
    from privacy_checklist.kg.encoder import graph_digest

    return graph_digest()


def model_path(embed: bool | None = None) -> Path:
    """A shipped model: with the embedding when ``embed``, without it when not (default:
    :data:`DEFAULT_EMBED`)."""
    return data_path(MODEL_FILES[DEFAULT_EMBED if embed is None else embed])


class BlendModelError(ValueError):
    """The shipped (or given) blend model is missing or does not fit these features."""


class Blend:
    """The shipped (or a given) blend model, applied with numpy.

    Args:
        kb: the knowledge base.
        model_file: a model (default: :func:`model_path`, the shipped default); whether it
            weighs the embedding is read from it.

    Raises:
        BlendModelError: the model file is missing or was fitted on other features.
    """

    def __init__(self, kb: KnowledgeBase, model_file: Path | None = None) -> None:
        self.kb = kb
        self.path = model_file or model_path()
        if not self.path.exists():
            raise BlendModelError(
                f"{self.path}: no checklist blend model; train one with {TRAIN_COMMAND}"
            )
        raw = self.path.read_bytes()
        self.digest = hashlib.sha256(raw).hexdigest()[:16]
        model = json.loads(raw)
        self.model: dict[str, Any] = model
        self.names = checklist_feature_names() + list(model.get("offline_features", []))
        if model.get("features") != self.names:
            raise BlendModelError(
                f"{self.path}: fitted on other features; train it again with {TRAIN_COMMAND}"
            )
        self.coef = np.asarray(model["coef"], dtype=float)
        self.intercept = np.asarray(model["intercept"], dtype=float)
        self.mean = np.asarray(model["mean"], dtype=float)
        self.scale = np.asarray(model["scale"], dtype=float)
        numbers = (self.coef, self.intercept, self.mean, self.scale)
        if not all(np.isfinite(a).all() for a in numbers) or (self.scale <= 0).any():
            raise BlendModelError(
                f"{self.path}: holds weights that are not finite or a zero spread; train it "
                f"again with {TRAIN_COMMAND}"
            )
        if model.get("tokenizer") != TOKENIZER:
            raise BlendModelError(
                f"{self.path}: fitted on retrieval over other tokens (another stemmer or stop "
                f"words); train it again with {TRAIN_COMMAND}"
            )
        if model.get("reads") != READS:
            raise BlendModelError(
                f"{self.path}: fitted on evidence read from other text than the {READS}; train "
                f"it again with {TRAIN_COMMAND}"
            )
        self.labels: list[str] = list(model["labels"])
        self.embed = bool(model.get("embed", False))
        if self.embed and model.get("encoder") != encoder_digest():
            raise BlendModelError(
                f"{self.path}: fitted on another sentence encoder's vectors; train it again "
                f"with {TRAIN_COMMAND}"
            )
        self._features: Features | None = None

    def features(self) -> Features:
        """The offline features, with the embedding when the model weighs it (built on first
        use, with the retrieval index)."""
        if self._features is None:
            self._features = offline_features(self.kb, embed=self.embed)
            if self._features.names != list(self.model.get("offline_features", [])):
                raise BlendModelError(
                    f"{self.path}: fitted on other offline features; train it again with "
                    f"{TRAIN_COMMAND}"
                )
        return self._features

    def vector(self, text: str, checklists: Sequence[Checklist]) -> Vector:
        offline, _ = self.features()(text, embed_text=flow_text(text, checklists))
        return np.asarray(checklist_features(checklists) + offline.tolist(), dtype=float)

    def weigh(self, text: str, checklists: Sequence[Checklist]) -> Weighed:
        """The label and probabilities of a case. A label no fitting norm supports (permit
        with no candidate permission fitting any flow) is not chosen."""
        x = (self.vector(text, checklists) - self.mean) / self.scale
        logits = self.coef @ x + self.intercept
        probs = np.exp(logits - logits.max())
        probs = probs / probs.sum()
        order = np.argsort(-probs)
        has_candidate = any(c.candidates for c in checklists)
        label = next(
            self.labels[int(i)] for i in order if self.labels[int(i)] != "permit" or has_candidate
        )
        case = combine(checklists)
        return Weighed(
            label=label,
            probabilities={
                lab: round(float(p), 4) for lab, p in zip(self.labels, probs, strict=True)
            },
            checklist_label=case.label if case is not None else "not_applicable",
            model=self.digest,
            embed=self.embed,
        )


def offline_features(kb: KnowledgeBase, *, embed: bool = False) -> Features:
    """The offline reasoner's features over BM25 and CI-ES without embeddings (retrieval needs
    none), with the case's sentence embedding when ``embed``."""
    from privacy_checklist.reasoning.learned.offline import Features
    from privacy_checklist.retrieval.index import RetrievalIndex

    return Features(kb, RetrievalIndex(kb, embeddings=False), embed=embed)


def _apart(
    y: np.ndarray, predicted: Sequence[str], alone: Sequence[str], writers: Sequence[str] | None
) -> dict[str, Any]:
    """The cross-validated figures of the synthetic (court-style) cases and of the other
    writers' narratives apart (none without writers)."""
    from privacy_checklist.reasoning.learned import fit

    if writers is None:
        return {}
    court = np.array([w.startswith("synthetic") for w in writers])
    return {
        part: {
            "cases": int(mask.sum()),
            "blend": fit.figures(y[mask], list(np.asarray(predicted)[mask])),
            "checklist_alone": fit.figures(y[mask], list(np.asarray(alone)[mask])),
        }
        for part, mask in (("synthetic", court), ("writers", ~court))
        if mask.any()
    }


def _cached(cache: Path | None, identity: dict[str, Any]) -> dict[str, Any]:
    """The feature rows a cache holds, if they were read with the same settings, features and
    encoder (``identity``); else none."""
    if cache is None or not cache.exists():
        return {}
    stored: dict[str, Any] = json.loads(cache.read_text(encoding="utf-8"))
    same = all(stored.get(key, "") == value for key, value in identity.items())
    return stored if same else {}


def _keep(cache: Path, data: dict[str, Any]) -> None:
    """Write the cache whole or not at all."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(cache)


def _rows(
    cases: Sequence[TrainingCase],
    checklists_of: Callable[[str], list[Checklist]],
    features: Features,
    cache: Path | None,
    identity: dict[str, Any],
    progress: Callable[[], object] | None,
) -> tuple[list[list[float]], list[str]]:
    """Each case's feature row and the checklist's own label, reused from the cache when it
    was read with the same settings (``identity``) and written back whole."""
    stored = _cached(cache, identity)
    rows_cache: dict[str, list[float]] = stored.get("rows", {})
    alone: dict[str, str] = stored.get("alone", {})
    rows, checklist_labels = [], []
    for case in cases:
        key = hashlib.sha256(case.text.encode("utf-8")).hexdigest()
        if key not in rows_cache:
            checklists = checklists_of(case.text)
            offline, _ = features(case.text, embed_text=flow_text(case.text, checklists))
            rows_cache[key] = checklist_features(checklists) + offline.tolist()
            combined = combine(checklists)
            alone[key] = combined.label if combined is not None else "not_applicable"
        rows.append(rows_cache[key])
        checklist_labels.append(alone[key])
        if progress is not None:
            progress()
    if cache is not None:
        _keep(cache, {**identity, "rows": rows_cache, "alone": alone})
    return rows, checklist_labels


def train(
    kb: KnowledgeBase,
    checklists_of: Callable[[str], list[Checklist]],
    cases: Sequence[TrainingCase],
    out: Path,
    *,
    settings: str,
    sources: dict[str, str],
    cache: Path | None = None,
    grid: tuple[float, ...] = GRID,
    folds: int = 5,
    progress: Callable[[], object] | None = None,
    embed: bool = False,
    writers: Sequence[str] | None = None,
    weights: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Fit the blend; choose C and class weighting by cross-validation.

    Args:
        checklists_of: the checklist reasoner's reading of a narrative (its flows' checklists).
        cases: the labelled narratives (never the real court cases).
        out: where the model JSON goes (written whole or not at all).
        settings: the digest of the checklist settings the features were read with.
        sources: the training files and their sha256.
        cache: a JSON file of per-case feature rows, reused when the case text and the settings
            are the same (so a second run is quick).
        embed: weigh the sentence embedding of the flows' sentences too
            (:func:`.evidence.flow_text`).
        writers: each case's writer: the folds leave whole writers out (default: stratified
            folds over the cases). A writer named ``synthetic:...`` is one regulation's
            synthetic cases: the figures give the court-style cases apart.
        weights: each case's weight in the fits and the scores (default: equal).

    Returns:
        The model's data, with the cross-validated figures of the blend, of the checklist alone
        and of the offline features alone, on the same folds.
    """
    if writers is not None and len(writers) != len(cases):
        raise ValueError(f"{len(writers)} writers for {len(cases)} cases")
    from privacy_checklist.kg.extras import require
    from privacy_checklist.reasoning.learned import fit

    require("sklearn", "train", "training the checklist's learned layer (scikit-learn)")
    features = offline_features(kb, embed=embed)
    encoder = encoder_digest() if embed else ""
    identity = {
        "settings": settings,
        "features": features.names,
        "encoder": encoder,
        "reads": READS,
        "tokenizer": TOKENIZER,
        # features read with the condition reader out of fold are not the shipped reader's
        "conditions": sources.get("conditions read out of fold", "shipped"),
    }
    rows, checklist_labels = _rows(cases, checklists_of, features, cache, identity, progress)
    y = fit.gold(cases)
    x_raw = np.asarray(rows, dtype=float)
    mean = x_raw.mean(axis=0)
    scale = x_raw.std(axis=0)
    scale[scale == 0] = 1.0
    x = (x_raw - mean) / scale
    width = len(checklist_feature_names())
    w = None if weights is None else np.asarray(weights, dtype=float)
    blend = fit.fit(x, y, grid, folds, writers, w)
    _, offline_params, offline_predicted = fit.choose(x[:, width:], y, grid, folds, writers, w)
    apart = _apart(y, blend.predicted, checklist_labels, writers)
    data = {
        "format": 1,
        "embed": embed,
        "encoder": encoder,
        "reads": READS,
        "tokenizer": TOKENIZER,
        "features": checklist_feature_names() + features.names,
        "offline_features": features.names,
        **fit.coefficients(blend.model),
        # full precision: an embedding dimension's spread can be under 1e-6, and rounding it
        # to 0 would divide by zero when the model is applied
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "params": blend.params,
        "checklist_settings": settings,
        "trained_on": sources,
        "cases": len(cases),
        "writers": len({w.split(":")[0] for w in writers}) if writers is not None else None,
        "cross_validation": {
            "folds": folds,
            "grouped_by_writer": writers is not None,
            "weighted": weights is not None,
            **apart,
            "blend": fit.figures(y, blend.predicted),
            "checklist_alone": fit.figures(y, checklist_labels),
            "offline_features_alone": {
                **fit.figures(y, offline_predicted),
                "params": offline_params,
            },
        },
    }
    fit.write_model(out, data)
    return data
