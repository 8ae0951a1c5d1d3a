"""The retrieval index of a knowledge base: every method behind one ``search``.

Saved beside the knowledge base (``<kb>/index``), or, when that is not writable (the copy that
ships inside the package), in ``~/.cache/privacy-checklist/index/<kb digest>``. Each method is
built on first use and re-indexes only the documents whose content changed.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from pathlib import Path
from typing import Any

from privacy_checklist.retrieval.base import (
    MAX_QUERY_CHARS,
    NO_FILTERS,
    Document,
    Filters,
    Hit,
    QueryError,
    check_filters,
    check_query,
    documents,
)
from privacy_checklist.retrieval.bm25 import BM25Retriever
from privacy_checklist.retrieval.cies import CIESRetriever, read_case, rewrite
from privacy_checklist.retrieval.hybrid import HybridRetriever


class IndexUnavailable(RuntimeError):
    """An index that cannot be opened or rebuilt; the message says what to do."""


METHODS = ("bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es", "hybrid")


def default_index_dir(kb: Any) -> Path:
    from privacy_checklist.kg.kb import builtin_path

    shipped = kb.path is not None and Path(kb.path).resolve() == builtin_path().resolve()
    if kb.path is not None and not shipped and os.access(kb.path, os.W_OK):
        return Path(kb.path) / "index"
    key = hashlib.sha256(str(Path(kb.path or ".").resolve()).encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "privacy-checklist" / "index" / key


class RewriteRetriever:
    """BM25 on the query with the law's terms for its roles and information appended."""

    name = "bm25-rewrite"

    def __init__(self, bm25: BM25Retriever, kb: Any) -> None:
        self.bm25, self.kb = bm25, kb

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        reading = read_case(check_query(query), self.kb.roles, self.kb.attributes)
        hits = self.bm25.search(rewrite(query, reading), k, filters)
        return [Hit(h.node, h.score, self.name, h.spans, h.via) for h in hits]


class RetrievalIndex:
    """All retrieval methods over one knowledge base, on its norms as everything reads them
    (``kb.norms``: the editors' store's effective view when the knowledge base has a store).

    When those norms change (an editor validated a new norm type), the next search re-indexes
    the documents whose content changed, and only those: BM25 re-tokenises them, the embedding
    collection re-embeds them, CI-ES and the hybrid read the new norms.
    """

    def __init__(
        self,
        kb: Any,
        directory: Path | None = None,
        chroma_url: str | None = None,
        model_path: str | None = None,
        embeddings: bool = True,
    ) -> None:
        self.kb = kb
        self.directory = Path(directory) if directory else default_index_dir(kb)
        self.chroma_url = chroma_url
        self.model_path = model_path
        self.embeddings = embeddings
        self.docs: list[Document] = []
        self.by_node: dict[str, Document] = {}
        self._norms: dict[str, Any] | None = None
        self._methods: dict[str, Any] = {}
        self._previous: dict[str, Any] = {}  # methods built on the norms before, to update
        self._similarity: Any = None
        self._lock = threading.RLock()
        self._refresh()

    @property
    def norms(self) -> dict[str, Any]:
        """The norms the index stands on (read again from the knowledge base first)."""
        self._refresh()
        assert self._norms is not None
        return self._norms

    def _refresh(self) -> None:
        """Follow the knowledge base's norms: new documents when they changed (``kb.norms``
        gives the same dict while nothing changed); methods are rebuilt on next use."""
        norms = self.kb.norms
        if norms is self._norms:
            return
        with self._lock:
            if norms is self._norms:
                return
            docs = documents(self.kb, norms)
            self._previous = {**self._previous, **self._methods}
            self.docs, self.by_node = docs, {d.node: d for d in docs}
            self._methods = {}
            self._norms = norms

    def method(self, name: str) -> Any:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
        self._refresh()
        with self._lock:
            if name not in self._methods:
                self._methods[name] = self._build(name)
            return self._methods[name]

    def _build(self, name: str) -> Any:
        self.directory.mkdir(parents=True, exist_ok=True)
        if name in ("bm25", "bm25-text"):
            field = "spec" if name == "bm25" else "text"
            path = self.directory / f"{name}.json"
            before = self._previous.get(name)
            cached = before.tokens if before is not None else BM25Retriever.cached(path)
            retriever = BM25Retriever(self.docs, field, cached)
            if retriever.reused != len(self.docs):
                retriever.save(path)
            return retriever
        if name == "bm25-rewrite":
            return RewriteRetriever(self.method("bm25"), self.kb)
        if name == "embedding":
            from privacy_checklist.kg.extras import MissingExtra
            from privacy_checklist.retrieval.embedding import EmbeddingRetriever

            try:
                before = self._previous.get("embedding")
                if before is not None:
                    before.sync(self.docs)
                    return before
                return EmbeddingRetriever(
                    self.docs, self.directory / "chroma", self.chroma_url, self.model_path
                )
            except MissingExtra:
                raise  # an extra to install, not an index to rebuild
            except Exception as exc:  # chromadb raises many kinds; all mean the same here
                where = self.chroma_url or self.directory / "chroma"
                raise IndexUnavailable(
                    f"{where}: the embedding index cannot be opened ({type(exc).__name__}: {exc}); "
                    "delete the folder to rebuild it, check the Chroma server, or search with "
                    "--method bm25 / --no-embeddings"
                ) from exc
        if name == "ci-es":
            from privacy_checklist.retrieval.cies import role_similarity

            if self.embeddings and self._similarity is None:
                self._similarity = role_similarity(self.kb.roles)
            return CIESRetriever(
                self.docs,
                self._norms,
                self.kb.roles,
                self.kb.attributes,
                self._similarity if self.embeddings else None,
            )
        # chosen on synthetic train cases only (python bench/retrieval.py --child select)
        legs = ["bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es"]
        parts = [self.method(leg) for leg in legs if leg != "embedding" or self.embeddings]
        return HybridRetriever(parts, self.kb.refs_out, self._norms, self.by_node)

    def search(
        self, query: object, method: str = "hybrid", k: int = 10, filters: Filters = NO_FILTERS
    ) -> list[Hit]:
        """Search; ``k`` larger than the corpus returns everything.

        Raises:
            QueryError: empty or non-text query, k below 1, or a filter naming an unknown
                norm type, part or section.
        """
        text = check_query(query)
        if len(text) > MAX_QUERY_CHARS:
            warnings.warn(
                f"query of {len(text):,} characters truncated to {MAX_QUERY_CHARS:,}", stacklevel=2
            )
            text = text[:MAX_QUERY_CHARS]
        if k < 1:
            raise QueryError(f"k must be at least 1, not {k}")
        check_filters(filters, self.kb.tree)
        retriever = self.method(method)
        return retriever.search(text, min(k, len(self.docs)), filters)
