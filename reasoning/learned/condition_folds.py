"""The learned condition reader's folds of writers (:mod:`~privacy_checklist.reasoning.
learned.condition_fit`): each fold's model kept, its out-of-fold readings of the corpus, and a
reader that reads each corpus narrative with the fold that left its writer out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.kg.extras import require
from privacy_checklist.reasoning.learned.condition_fit import NEEDED_FOR, Rows, _Model, rows_of
from privacy_checklist.reasoning.text import sentence_spans


def save_fold(model: _Model, path: Path, writers: Sequence[str]) -> None:
    """Keep a fold's fitted model (its encoder's and layer's weights, and the writers it left
    out) so that texts its writers' narratives become can be read without them (whole or not
    at all)."""
    torch = model.torch
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "bert": model.bert.state_dict(),
            "out": model.out.state_dict(),
            "kinds": model.kinds,
            "left_out": [str(w) for w in writers],
        },
        tmp,
    )
    tmp.replace(path)


def load_fold(path: Path, source: Path) -> tuple[_Model, list[str]]:
    """A fold's model kept by :func:`save_fold` (the encoder's files at ``source``) and the
    writers it left out."""
    torch = require("torch", "embeddings", NEEDED_FOR)
    transformers = require("transformers", "embeddings", NEEDED_FOR)
    saved = torch.load(path, map_location="cpu")
    model = _Model(torch, transformers, source, int(saved["kinds"]))
    model.bert.load_state_dict(saved["bert"])
    model.out.load_state_dict(saved["out"])
    model.train(False)
    return model, list(saved["left_out"])


def out_of_fold(
    cache: Path, tag: str, folds: int, narratives: Sequence[Any], kinds: Sequence[str]
) -> Callable[[str], Any]:
    """A stand-in for the shipped condition reader (``ChecklistReasoner(conditions=...)``): a
    corpus narrative is read with the probabilities of the fold that left its writer out (the
    fold files ``bench/experiments/condition_reader.py`` keeps in ``cache``); any other text
    (cases not in the corpus) by the shipped reader. What a learned layer stacked on the
    checklist is fitted on, so that it learns how far to trust facts read from writers the
    reader has not seen.

    Raises:
        FileNotFoundError: a fold file is missing.
        ValueError: the folds were read from another corpus.
    """
    from privacy_checklist.reasoning.learned.conditions import reads_of, shipped

    rows = rows_of(narratives, kinds)
    probs, covered = fold_probabilities(cache, tag, folds, rows, len(kinds))
    at: dict[str, list[int]] = {}
    for i, nid in enumerate(rows.narratives):
        at.setdefault(nid, []).append(i)
    by_text = {n.text: probs[at[n.id]] for n in narratives if covered[at[n.id]].all()}

    def read(text: str) -> Any:
        if text in by_text:
            spans = sentence_spans(text) or [(0, len(text))]
            return reads_of(text, spans, by_text[text], kinds)
        return shipped().read(text)

    return read


def fold_probabilities(
    cache: Path, tag: str, folds: int, rows: Rows, kinds: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """The out-of-fold probabilities of ``rows`` (sentences, kinds, 3) from the fold files in
    ``cache``, and which rows they cover.

    Raises:
        FileNotFoundError: a fold file is missing.
        ValueError: the folds were read from another corpus.
    """
    probs = np.zeros((len(rows.sentences), kinds, 3), dtype=np.float32)
    covered = np.zeros(len(rows.sentences), dtype=bool)
    for number in range(folds):
        saved = np.load(cache / f"{tag}-fold{number}-of{folds}.npz")
        if saved["test"].max() >= len(covered) or (
            "sentences" in saved
            and any(
                rows.sentences[i] != s
                for i, s in zip(saved["test"], saved["sentences"], strict=True)
            )
        ):
            raise ValueError(f"{cache}: its folds were read from another corpus")
        probs[saved["test"]] = saved["probs"]
        covered[saved["test"]] = True
    return probs, covered
