"""Choosing the hybrid's fusion by cross-validation on cases with gold regulations
(``pcheck retrieval-tune``).

Each leg searches each case once (the ranked pools are cached in a JSON file, so a long run
resumes where it stopped); every :class:`~privacy_checklist.retrieval.hybrid.Fusion` of the grid
is then the hybrid's own code run on those pools. For each fold, the fusion with the best
selection score on the other folds is measured on the fold: the mean of those held-out figures
is the leave-out estimate. The fusion chosen on all the cases is the one shipped.

The selection score is the mean of hit@10, recall@10 and MRR at section and at paragraph level
(the section figures are the ones the targets are set for; the paragraph ones keep a fusion that
reaches more sections from losing the paragraph a case turns on); BM25 alone is measured the
same way beside it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.retrieval.base import NO_FILTERS, Filters, Hit
from privacy_checklist.retrieval.evaluate import gold_ids, score_case
from privacy_checklist.retrieval.hybrid import POOL, SECTION_MODES, Fusion, HybridRetriever

if TYPE_CHECKING:
    from privacy_checklist.ingest.cases import Case
    from privacy_checklist.retrieval.index import RetrievalIndex

#: the legs the hybrid may weigh
LEGS = ("bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es")
WEIGHTS = (0.0, 1.0, 2.0)
EXPANDS = (0, 3)
SELECTION = ("hit@10", "recall@10", "mrr")
LEVELS = ("section", "paragraph")
CACHE_VERSION = 2  # 2: the embedding leg searches exactly


class TuningError(ValueError):
    """Tuning cannot run: no case with gold regulations, too few for the folds, a bad cache."""


class CachedLeg:
    """A leg that answers from the pools it ran before (the hybrid's own code then fuses them)."""

    def __init__(self, name: str, pools: Mapping[str, Sequence[str]]) -> None:
        self.name = name
        self.pools = pools

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        nodes = self.pools.get(_key(query), ())
        return [
            Hit(node=n, score=1.0 / rank, method=self.name)
            for rank, n in enumerate(nodes[:k], start=1)
        ]


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def write_json(path: Path, data: Any) -> None:
    """Written whole or not at all (:func:`~privacy_checklist.kg.atomic.replace_file`)."""
    from privacy_checklist.kg import atomic

    atomic.replace_file(path, lambda tmp: tmp.write_text(json.dumps(data), encoding="utf-8"))


def leg_pools(
    index: RetrievalIndex,
    cases: Sequence[Case],
    legs: Sequence[str],
    cache: Path | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """leg -> case text digest -> the leg's top :data:`~privacy_checklist.retrieval.hybrid.POOL`
    node ids, from ``cache`` where it has them (keyed by the index's documents, so a changed
    knowledge base is searched again), saved to it every 25 searches."""
    corpus = _key("\n".join(sorted(d.digest for d in index.docs)))
    pools: dict[str, dict[str, list[str]]] = {leg: {} for leg in legs}
    if cache is not None and cache.is_file():
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise TuningError(f"{cache}: not a tuning cache ({exc}); remove it") from exc
        if data.get("version") == CACHE_VERSION and data.get("corpus") == corpus:
            for leg in legs:
                pools[leg].update(data.get("pools", {}).get(leg, {}))
    todo = [(leg, case) for leg in legs for case in cases if _key(case.text) not in pools[leg]]
    for done, (leg, case) in enumerate(todo, start=1):
        retriever = index.method(leg)
        pools[leg][_key(case.text)] = [h.node for h in retriever.search(case.text, POOL)]
        if cache is not None and done % 25 == 0:
            write_json(cache, {"version": CACHE_VERSION, "corpus": corpus, "pools": pools})
        if progress is not None:
            progress()
    if cache is not None and todo:
        write_json(cache, {"version": CACHE_VERSION, "corpus": corpus, "pools": pools})
    return pools


def grid(legs: Sequence[str]) -> list[Fusion]:
    """Every fusion tried: a weight of :data:`WEIGHTS` for each leg (not all 0), each section
    mode, each expansion."""
    out = []
    for weights in itertools.product(WEIGHTS, repeat=len(legs)):
        if not any(weights):
            continue
        for sections in SECTION_MODES:
            for expand in EXPANDS:
                out.append(
                    Fusion(
                        weights=dict(zip(legs, weights, strict=True)),
                        expand=expand,
                        sections=sections,
                    )
                )
    return out


@dataclass(frozen=True)
class Scored:
    """A fusion's per-case figures (section and paragraph level)."""

    fusion: Fusion
    cases: tuple[dict[str, dict[str, float]], ...]

    def mean(self, rows: Iterable[int], level: str = "section") -> dict[str, float]:
        rows = list(rows)
        keys = self.cases[0][level].keys() if self.cases else ()
        return {k: sum(self.cases[i][level][k] for i in rows) / len(rows) for k in keys}

    def selection(self, rows: Iterable[int]) -> float:
        rows = list(rows)
        figures = [self.mean(rows, level)[k] for level in LEVELS for k in SELECTION]
        return sum(figures) / len(figures)


def score_fusions(
    index: RetrievalIndex,
    cases: Sequence[Case],
    pools: Mapping[str, Mapping[str, Sequence[str]]],
    fusions: Sequence[Fusion],
    k: int = 10,
    progress: Callable[[], None] | None = None,
) -> list[Scored]:
    """Each fusion run through the hybrid's own code on the cached pools, scored per case."""
    legs = [CachedLeg(leg, pools[leg]) for leg in pools]
    golds = [gold_ids(c) for c in cases]
    out = []
    for fusion in fusions:
        hybrid = HybridRetriever(legs, index.kb.refs_out, index.norms, index.by_node, fusion=fusion)
        rows = []
        for case, gold in zip(cases, golds, strict=True):
            ranked = [h.node for h in hybrid.search(case.text, k)]
            rows.append({level: score_case(ranked, gold, level) for level in LEVELS})
        out.append(Scored(fusion, tuple(rows)))
        if progress is not None:
            progress()
    return out


def folds_of(n: int, folds: int, seed: int = 13) -> list[list[int]]:
    """``folds`` disjoint sets of row numbers, shuffled with ``seed``."""
    if n < folds:
        raise TuningError(f"{n} cases with gold regulations cannot make {folds} folds")
    rows = list(range(n))
    random.Random(seed).shuffle(rows)
    return [sorted(rows[i::folds]) for i in range(folds)]


def cross_validate(scored: Sequence[Scored], folds: int = 5) -> dict[str, Any]:
    """The leave-out estimate: per fold, the fusion best on the other folds, measured on the
    fold; the mean over folds (section and paragraph), the fusions chosen, and the fusion best
    on all the cases."""
    if not scored:
        raise TuningError("no fusion to choose from")
    n = len(scored[0].cases)
    parts = folds_of(n, folds)
    held: dict[str, dict[str, float]] = {"section": {}, "paragraph": {}}
    chosen = []
    for fold in parts:
        rest = [i for i in range(n) if i not in set(fold)]
        best = max(scored, key=lambda s: s.selection(rest))
        chosen.append(best.fusion.to_json())
        for level in held:
            for key, value in best.mean(fold, level).items():
                held[level][key] = held[level].get(key, 0.0) + value * len(fold) / n
    best_all = max(scored, key=lambda s: s.selection(range(n)))
    return {
        "n": n,
        "folds": folds,
        "leave_out": {lv: {k: round(v, 4) for k, v in m.items()} for lv, m in held.items()},
        "chosen_per_fold": chosen,
        "fusion": best_all.fusion.to_json(),
        "in_sample": {
            lv: {k: round(v, 4) for k, v in best_all.mean(range(n), lv).items()}
            for lv in ("section", "paragraph")
        },
    }
