"""Hybrid retrieval (ours): reciprocal rank fusion of BM25, embeddings and CI-ES, then the
supports and exceptions of the top norms, marked as such."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from privacy_checklist.retrieval.base import (
    NO_FILTERS,
    Document,
    Filters,
    Hit,
    Retriever,
    check_query,
)

if TYPE_CHECKING:
    from privacy_checklist.kg.citations import CrossRef
    from privacy_checklist.kg.norms import Norm

RRF_K = 60
POOL = 50


class HybridRetriever:
    name = "hybrid"

    def __init__(
        self,
        parts: Sequence[Retriever],
        refs_out: Mapping[str, list[CrossRef]],
        norms: Mapping[str, Norm],
        docs: Mapping[str, Document],
        *,
        expand: int = 3,
        weights: dict[str, float] | None = None,
    ) -> None:
        self.parts = list(parts)
        self.refs_out = refs_out
        self.norms = norms
        self.docs = docs
        self.expand = expand
        self.weights = weights or {}

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        check_query(query)
        fused: dict[str, float] = {}
        sources: dict[str, list[str]] = {}
        spans: dict[str, tuple[tuple[int, int], ...]] = {}
        for part in self.parts:
            weight = self.weights.get(part.name, 1.0)
            for rank, hit in enumerate(part.search(query, POOL, filters), start=1):
                fused[hit.node] = fused.get(hit.node, 0.0) + weight / (RRF_K + rank)
                sources.setdefault(hit.node, []).append(f"{part.name}#{rank}")
                if hit.spans and hit.node not in spans:
                    spans[hit.node] = hit.spans
        ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        hits = [
            Hit(
                node=n, score=s, method=self.name, spans=spans.get(n, ()), via=", ".join(sources[n])
            )
            for n, s in ranked
        ]
        head = hits[: max(0, k)]
        seen = {h.node for h in head}
        extra: list[Hit] = []
        for hit in hits[: self.expand]:
            relations = dict(self.norms[hit.node].refs) if hit.node in self.norms else {}
            for ref in self.refs_out.get(hit.node, []):
                target = ref.target
                if target is None or target in seen or target not in self.docs:
                    continue
                if not filters.allows(self.docs[target]):
                    continue
                relation = relations.get(target, "support")
                seen.add(target)
                extra.append(
                    Hit(
                        node=target,
                        score=hit.score * 0.5,
                        method=self.name,
                        via=f"{relation} of {hit.node}",
                    )
                )
        merged = sorted(head + extra, key=lambda h: -h.score)
        return merged[: max(0, k)]
