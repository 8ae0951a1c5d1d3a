"""The retrieval index of a knowledge base: every method behind one ``search``.

Saved beside the knowledge base (``<kb>/index``), or, when that is not writable (the copy that
ships inside the package), in ``~/.cache/privacy-checklist/index/<kb digest>``. Each method is
built on first use, by its factory in :data:`RETRIEVERS` (name -> factory; pass your own to
:class:`RetrievalIndex` to add or replace one), and re-indexes only the documents whose content
changed.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from privacy_checklist.retrieval.base import (
    MAX_QUERY_CHARS,
    NO_FILTERS,
    Document,
    Filters,
    Hit,
    QueryError,
    Retriever,
    check_filters,
    check_query,
    documents,
)
from privacy_checklist.retrieval.bm25 import BM25Retriever
from privacy_checklist.retrieval.cies import CIESRetriever
from privacy_checklist.retrieval.hybrid import Fusion, HybridRetriever, shipped_fusion
from privacy_checklist.retrieval.rewrite import RewriteRetriever

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.kg.norms import Norm


class IndexUnavailable(RuntimeError):
    """An index that cannot be opened or rebuilt; the message says what to do."""


def default_index_dir(kb: KnowledgeBase) -> Path:
    from privacy_checklist.kg.kb import builtin_path

    shipped = kb.path is not None and Path(kb.path).resolve() == builtin_path().resolve()
    if kb.path is not None and not shipped and os.access(kb.path, os.W_OK):
        return Path(kb.path) / "index"
    key = hashlib.sha256(str(Path(kb.path or ".").resolve()).encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "privacy-checklist" / "index" / key


# --------------------------------------------------------------------------- the factories

#: A retriever's factory: called with the index (its documents, norms, folder, the other
#: methods) when the method is first searched, and again after the norms changed.
RetrieverFactory = Callable[["RetrievalIndex"], Retriever]


def bm25(field: str) -> RetrieverFactory:
    """BM25 over the documents' ``field`` (``spec``: ``bm25``, ``text``: ``bm25-text``); its
    tokens saved in the index folder, re-tokenising only the documents that changed."""
    name = "bm25" if field == "spec" else "bm25-text"

    def build(index: RetrievalIndex) -> Retriever:
        path = index.directory / f"{name}.json"
        before = index.previous(name)
        cached = before.tokens if isinstance(before, BM25Retriever) else BM25Retriever.cached(path)
        retriever = BM25Retriever(index.docs, field, cached)
        if retriever.reused != len(index.docs):
            retriever.save(path)
        return retriever

    return build


def bm25_rewrite(index: RetrievalIndex) -> Retriever:
    """``bm25`` searched with the query plus the law's terms it reaches."""
    return RewriteRetriever(index.method("bm25"), index.kb.roles, index.kb.attributes)


def embedding(index: RetrievalIndex) -> Retriever:
    """Sentence embeddings in Chroma (the ``embeddings`` extra).

    Raises:
        MissingExtra: the ``embeddings`` extra is not installed.
        IndexUnavailable: the Chroma collection cannot be opened.
    """
    from privacy_checklist.kg.extras import MissingExtra
    from privacy_checklist.retrieval.embedding import EmbeddingRetriever

    try:
        before = index.previous("embedding")
        if isinstance(before, EmbeddingRetriever):
            before.sync(index.docs)
            return before
        return EmbeddingRetriever(
            index.docs, index.directory / "chroma", index.chroma_url, index.model_path
        )
    except MissingExtra:
        raise  # an extra to install, not an index to rebuild
    except Exception as exc:  # chromadb raises many kinds; all mean the same here
        where = index.chroma_url or index.directory / "chroma"
        raise IndexUnavailable(
            f"{where}: the embedding index cannot be opened ({type(exc).__name__}: {exc}); "
            "delete the folder to rebuild it, check the Chroma server, or search with "
            "--method bm25 / --no-embeddings"
        ) from exc


def ci_es(index: RetrievalIndex) -> Retriever:
    """Norms whose annotated parties and information match the case's (with the role names'
    embedding similarity unless the index has ``embeddings`` off)."""
    return CIESRetriever(
        index.docs,
        index.norms,
        index.kb.roles,
        index.kb.attributes,
        index.role_similarity() if index.embeddings else None,
    )


#: The hybrid's legs; how each is weighed is chosen on synthetic train cases only (``pcheck
#: retrieval-tune``, ``retrieval/data/hybrid.json``); ``embedding`` is left out of an index with
#: ``embeddings`` off.
HYBRID_LEGS = ("bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es")


def hybrid(legs: Sequence[str] = HYBRID_LEGS, fusion: Fusion | None = None) -> RetrieverFactory:
    """Weighted reciprocal rank fusion of the methods ``legs`` (``fusion``: default the one
    ``pcheck retrieval-tune`` chose, :func:`~privacy_checklist.retrieval.hybrid.shipped_fusion`),
    then the supports and exceptions of the top norms."""

    def build(index: RetrievalIndex) -> Retriever:
        chosen = fusion or shipped_fusion()
        parts = [
            index.method(leg)
            for leg in legs
            if (leg != "embedding" or index.embeddings) and chosen.weight(leg) > 0
        ]
        if not parts:  # (an index without embeddings, a fusion that weighs only them)
            chosen, parts = Fusion(), [index.method("bm25")]
        return HybridRetriever(parts, index.kb.refs_out, index.norms, index.by_node, fusion=chosen)

    return build


#: Every retrieval method by name (``pcheck search --method``).
RETRIEVERS: dict[str, RetrieverFactory] = {
    "bm25": bm25("spec"),
    "bm25-text": bm25("text"),
    "bm25-rewrite": bm25_rewrite,
    "embedding": embedding,
    "ci-es": ci_es,
    "hybrid": hybrid(),
}
METHODS = tuple(RETRIEVERS)


# --------------------------------------------------------------------------- the index


class RetrievalIndex:
    """All retrieval methods over one knowledge base, on its norms as everything reads them
    (``kb.norms``: the editors' store's effective view when the knowledge base has a store).

    When those norms change (an editor validated a new norm type), the next search re-indexes
    the documents whose content changed, and only those: BM25 re-tokenises them, the embedding
    collection re-embeds them, CI-ES and the hybrid read the new norms.

    Args:
        kb: the knowledge base.
        directory: the index folder (default: :func:`default_index_dir`).
        chroma_url: a Chroma server for the embedding method (default: a folder of the index).
        model_path: a sentence-transformers model for it (default: all-MiniLM-L6-v2).
        embeddings: whether CI-ES and the hybrid use sentence embeddings.
        retrievers: the methods by name (default :data:`RETRIEVERS`).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        directory: Path | None = None,
        chroma_url: str | None = None,
        model_path: str | None = None,
        *,
        embeddings: bool = True,
        retrievers: Mapping[str, RetrieverFactory] | None = None,
    ) -> None:
        self.kb = kb
        self.directory = Path(directory) if directory else default_index_dir(kb)
        self.chroma_url = chroma_url
        self.model_path = model_path
        self.embeddings = embeddings
        self.retrievers = dict(RETRIEVERS if retrievers is None else retrievers)
        self.docs: list[Document] = []
        self.by_node: dict[str, Document] = {}
        self._norms: dict[str, Norm] | None = None
        self._methods: dict[str, Retriever] = {}
        self._previous: dict[str, Retriever] = {}  # methods built on the norms before, to update
        self._similarity: Callable[[str, set[str]], float] | None = None
        self._lock = threading.RLock()
        self._refresh()

    @property
    def norms(self) -> dict[str, Norm]:
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

    def method(self, name: str) -> Retriever:
        """The retriever called ``name``, built on first use.

        Raises:
            ValueError: no method of that name (naming the methods there are).
        """
        if name not in self.retrievers:
            raise ValueError(f"unknown method {name!r}; choose one of {', '.join(self.retrievers)}")
        self._refresh()
        with self._lock:
            if name not in self._methods:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._methods[name] = self.retrievers[name](self)
            return self._methods[name]

    def previous(self, name: str) -> Retriever | None:
        """The method ``name`` as built on the norms before they changed (to update it rather
        than build it again), or None."""
        return self._previous.get(name)

    def role_similarity(self) -> Callable[[str, set[str]], float]:
        """The similarity of role names by their embeddings (computed once per index)."""
        if self._similarity is None:
            from privacy_checklist.retrieval.cies import role_similarity

            self._similarity = role_similarity(self.kb.roles)
        return self._similarity

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
