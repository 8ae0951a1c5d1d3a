"""BM25 over the annotated paragraphs (rank-bm25, the paper's k1 = 1.5 and b = 0.75).

Indexes each paragraph's full specification (root to leaf) or its own text; the tokens are
saved as JSON with each document's content hash, so a rebuild re-tokenises only what changed.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from privacy_checklist.retrieval.base import NO_FILTERS, Document, Filters, Hit, check_query, top
from privacy_checklist.retrieval.text import TOKENIZER, match_spans, tokenize

K1, B = 1.5, 0.75
FIELDS = ("spec", "text")


class BM25Retriever:
    """Okapi BM25 over one field of the documents."""

    def __init__(
        self,
        docs: Sequence[Document],
        field: str = "spec",
        cached: dict[str, tuple[str, list[str]]] | None = None,
    ) -> None:
        if field not in FIELDS:
            raise ValueError(f"field {field!r}: use one of {FIELDS}")
        self.name = "bm25" if field == "spec" else "bm25-text"
        self.field = field
        self.docs = {d.node: d for d in docs}
        self.order = [d.node for d in docs]
        cached = cached or {}
        self.tokens: dict[str, tuple[str, list[str]]] = {}
        self.reused = 0
        for doc in docs:
            hit = cached.get(doc.node)
            if hit is not None and hit[0] == doc.digest:
                self.tokens[doc.node] = hit
                self.reused += 1
            else:
                self.tokens[doc.node] = (doc.digest, tokenize(getattr(doc, field)))
        self.bm25 = BM25Okapi([self.tokens[n][1] or ["_"] for n in self.order], k1=K1, b=B)
        self._postings = self._invert()

    def _invert(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """term -> (document positions, BM25 term weights): rank-bm25's formula, precomputed."""
        lengths = np.asarray(self.bm25.doc_len, dtype=float)
        norm = K1 * (1 - B + B * lengths / self.bm25.avgdl)
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for position, freqs in enumerate(self.bm25.doc_freqs):
            for term, tf in freqs.items():
                entry = postings.setdefault(term, ([], []))
                entry[0].append(position)
                entry[1].append(tf * (K1 + 1) / (tf + norm[position]))
        return {
            term: (np.asarray(ids), np.asarray(weights) * self.bm25.idf.get(term, 0.0))
            for term, (ids, weights) in postings.items()
        }

    def scores(self, terms: list[str]) -> np.ndarray:
        """The same scores as ``BM25Okapi.get_scores``, from an inverted index (much faster)."""
        out = np.zeros(len(self.order))
        for term, count in Counter(terms).items():
            posting = self._postings.get(term)
            if posting is not None:
                out[posting[0]] += count * posting[1]
        return out

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        terms = tokenize(check_query(query))
        if not terms:
            return []
        scores = self.scores(terms)
        hits = top(zip(self.order, scores, strict=True), self.docs, k, filters, self.name)
        wanted = set(terms)
        return [
            Hit(
                node=h.node,
                score=h.score,
                method=h.method,
                spans=match_spans(getattr(self.docs[h.node], self.field), wanted),
            )
            for h in hits
        ]

    def save(self, path: Path) -> None:
        # a temporary name of this process and thread: two writers never share one
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
        try:
            tmp.write_text(
                json.dumps(
                    {
                        "field": self.field,
                        "tokenizer": TOKENIZER,
                        "k1": K1,
                        "b": B,
                        "tokens": {n: list(v) for n, v in self.tokens.items()},
                    }
                ),
                encoding="utf-8",
            )
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def cached(path: Path) -> dict[str, tuple[str, list[str]]]:
        """Saved tokens by node (empty when the file is missing or damaged, or was tokenized
        another way: rebuilt)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data["tokenizer"] != TOKENIZER:
                return {}
            return {n: (v[0], list(v[1])) for n, v in data["tokens"].items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return {}
