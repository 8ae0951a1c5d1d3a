"""Hybrid retrieval (ours): weighted reciprocal rank fusion of BM25, embeddings and CI-ES, then
the supports and exceptions of the top norms, marked as such; optionally each section's best
paragraph first, so that the top k reaches more of the sections a case turns on.

How the legs are weighed (:class:`Fusion`) is chosen by cross-validation on the synthetic train
cases (``pcheck retrieval-tune``) and shipped in ``retrieval/data/hybrid.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
#: sections: "off" (the fused order), or each section's best paragraph first, the sections
#: ordered by their best paragraph ("max") or by their two best together ("sum2")
SECTION_MODES = ("off", "max", "sum2")
FUSION_FILE = Path(__file__).parent / "data" / "hybrid.json"


@dataclass(frozen=True)
class Fusion:
    """How the hybrid weighs its legs: a weight per leg (a leg not named weighs 1, a weight of 0
    leaves the leg out), the reciprocal-rank constant, how many top hits have their supports and
    exceptions added, and whether sections are put first (:data:`SECTION_MODES`)."""

    weights: Mapping[str, float] = field(default_factory=dict)
    rrf_k: int = RRF_K
    expand: int = 3
    sections: str = "off"

    def __post_init__(self) -> None:
        if self.sections not in SECTION_MODES:
            raise ValueError(f"sections {self.sections!r} is not one of {', '.join(SECTION_MODES)}")
        if any(w < 0 for w in self.weights.values()) or self.rrf_k < 1 or self.expand < 0:
            raise ValueError("weights, rrf_k and expand must not be negative (rrf_k at least 1)")

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 1.0))

    def to_json(self) -> dict[str, Any]:
        return {
            "weights": dict(sorted(self.weights.items())),
            "rrf_k": self.rrf_k,
            "expand": self.expand,
            "sections": self.sections,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fusion:
        return cls(
            weights={str(k): float(v) for k, v in dict(data.get("weights", {})).items()},
            rrf_k=int(data.get("rrf_k", RRF_K)),
            expand=int(data.get("expand", 3)),
            sections=str(data.get("sections", "off")),
        )


def shipped_fusion(path: Path = FUSION_FILE) -> Fusion:
    """The fusion chosen by ``pcheck retrieval-tune`` (equal weights when none was written)."""
    if not path.is_file():
        return Fusion()
    return Fusion.from_json(json.loads(path.read_text(encoding="utf-8"))["fusion"])


def section_first(hits: Sequence[Hit], docs: Mapping[str, Document], mode: str) -> list[Hit]:
    """Each section's best paragraph first, the sections by their best paragraph's score
    ("max") or by their two best paragraphs' together ("sum2"), then the rest in order."""
    if mode == "off":
        return list(hits)
    by_section: dict[str, list[Hit]] = {}
    for hit in hits:
        doc = docs.get(hit.node)
        by_section.setdefault(doc.section if doc is not None else hit.node, []).append(hit)

    def key(item: tuple[str, list[Hit]]) -> float:
        scores = sorted((h.score for h in item[1]), reverse=True)
        return scores[0] + (scores[1] if mode == "sum2" and len(scores) > 1 else 0.0)

    sections = sorted(by_section.items(), key=lambda item: -key(item))
    firsts = [members[0] for _, members in sections]
    chosen = {id(h) for h in firsts}
    return firsts + [h for h in hits if id(h) not in chosen]


class HybridRetriever:
    name = "hybrid"

    def __init__(
        self,
        parts: Sequence[Retriever],
        refs_out: Mapping[str, list[CrossRef]],
        norms: Mapping[str, Norm],
        docs: Mapping[str, Document],
        *,
        fusion: Fusion | None = None,
    ) -> None:
        self.fusion = fusion or Fusion()
        self.parts = [p for p in parts if self.fusion.weight(p.name) > 0]
        self.refs_out = refs_out
        self.norms = norms
        self.docs = docs

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        check_query(query)
        fused: dict[str, float] = {}
        sources: dict[str, list[str]] = {}
        spans: dict[str, tuple[tuple[int, int], ...]] = {}
        for part in self.parts:
            weight = self.fusion.weight(part.name)
            for rank, hit in enumerate(part.search(query, POOL, filters), start=1):
                fused[hit.node] = fused.get(hit.node, 0.0) + weight / (self.fusion.rrf_k + rank)
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
        for hit in hits[: self.fusion.expand]:
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
        if self.fusion.sections != "off":
            # the sections of the whole fused pool, each by its best paragraph
            pool = merged + [h for h in hits[max(0, k) :] if h.node not in seen]
            return section_first(pool, self.docs, self.fusion.sections)[: max(0, k)]
        return merged[: max(0, k)]
