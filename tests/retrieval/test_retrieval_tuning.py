"""The hybrid's fusion (weights, sections first) and its choice by cross-validation
(``pcheck retrieval-tune``), on the shipped knowledge base and the synthetic validation cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.retrieval.evaluate import gold_ids
from privacy_checklist.retrieval.hybrid import Fusion, HybridRetriever, shipped_fusion
from privacy_checklist.retrieval.index import RetrievalIndex, hybrid
from privacy_checklist.retrieval.tuning import (
    CachedLeg,
    TuningError,
    cross_validate,
    folds_of,
    grid,
    leg_pools,
    score_fusions,
)


@pytest.fixture
def index(bm25_index: RetrievalIndex) -> RetrievalIndex:
    return bm25_index


@pytest.fixture(scope="module")
def cases(shared: Path) -> list:
    found = read_cases(shared / "cases" / "val_generate_cases_hipaa_applicability.csv")
    return [c for c in found if gold_ids(c)][:20]


def _hybrid(index: RetrievalIndex, fusion: Fusion) -> HybridRetriever:
    legs = [index.method(m) for m in ("bm25", "bm25-text", "ci-es")]
    return HybridRetriever(legs, index.kb.refs_out, index.norms, index.by_node, fusion=fusion)


def test_a_leg_of_weight_zero_is_left_out(index: RetrievalIndex, police_query: str) -> None:
    only = _hybrid(index, Fusion(weights={"bm25": 1.0, "bm25-text": 0.0, "ci-es": 0.0}, expand=0))
    assert [p.name for p in only.parts] == ["bm25"]
    ranked = [h.node for h in only.search(police_query, 10)]
    assert ranked == [h.node for h in index.method("bm25").search(police_query, 10)]


def test_sections_first_reach_more_sections(index: RetrievalIndex, police_query: str) -> None:
    plain = _hybrid(index, Fusion(expand=0))
    first = _hybrid(index, Fusion(expand=0, sections="max"))
    top = [h.node for h in plain.search(police_query, 10)]
    spread = [h.node for h in first.search(police_query, 10)]
    sections = lambda nodes: {index.by_node[n].section for n in nodes}  # noqa: E731
    assert len(sections(spread)) == len(spread) == 10  # one paragraph a section
    assert len(sections(spread)) > len(sections(top))
    assert spread[0] == top[0]  # the best paragraph stays first


def test_a_bad_fusion_is_refused() -> None:
    with pytest.raises(ValueError, match="sections"):
        Fusion(sections="sideways")
    with pytest.raises(ValueError, match="negative"):
        Fusion(weights={"bm25": -1.0})


def test_cached_legs_give_what_the_legs_gave(index: RetrievalIndex, cases, tmp_path) -> None:
    cache = tmp_path / "pools.json"
    calls: list[int] = []
    pools = leg_pools(index, cases, ["bm25", "ci-es"], cache, lambda: calls.append(1))
    assert len(calls) == 2 * len(cases) and cache.is_file()
    again: list[int] = []
    assert leg_pools(index, cases, ["bm25", "ci-es"], cache, lambda: again.append(1)) == pools
    assert again == []  # resumed from the cache: nothing searched again
    leg = CachedLeg("bm25", pools["bm25"])
    text = cases[0].text
    assert [h.node for h in leg.search(text, 10)] == [
        h.node for h in index.method("bm25").search(text, 10)
    ]


def test_cross_validation_measures_each_fold_with_a_choice_made_elsewhere(
    index: RetrievalIndex, cases
) -> None:
    legs = ["bm25", "ci-es"]
    pools = leg_pools(index, cases, legs)
    fusions = grid(legs)
    assert len(fusions) == (3**2 - 1) * 3 * 2
    scored = score_fusions(index, cases, pools, fusions)
    report = cross_validate(scored, folds=4)
    assert report["n"] == len(cases) and len(report["chosen_per_fold"]) == 4
    for level in ("section", "paragraph"):
        assert 0.0 <= report["leave_out"][level]["mrr"] <= 1.0
    # the fusion chosen on all cases is the best in-sample, so at least the leave-out estimate
    # on the selection figures
    best = report["in_sample"]["section"]
    assert best["hit@10"] + best["mrr"] >= (
        report["leave_out"]["section"]["hit@10"] + report["leave_out"]["section"]["mrr"] - 1e-9
    )
    folds = folds_of(len(cases), 4)
    assert sorted(i for f in folds for i in f) == list(range(len(cases)))
    with pytest.raises(TuningError):
        folds_of(3, 5)


def test_cli_writes_a_fusion_the_hybrid_reads(
    shipped: KnowledgeBase, shared: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "hybrid.json"
    code = main(
        [
            "retrieval-tune",
            "--cases",
            str(shared / "cases" / "val_generate_cases_hipaa_applicability.csv"),
            "--limit",
            "15",
            "--folds",
            "3",
            "--no-embeddings",
            "--index",
            str(tmp_path / "idx"),
            "--write",
            str(out),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["fusion"] == json.loads(out.read_text())["fusion"]
    assert set(report) >= {"leave_out", "in_sample", "bm25_alone", "chosen_per_fold"}
    fusion = shipped_fusion(out)
    assert fusion.to_json() == report["fusion"]
    retriever = hybrid(fusion=fusion)(RetrievalIndex(shipped, tmp_path / "i2", embeddings=False))
    assert isinstance(retriever, HybridRetriever) and retriever.fusion == fusion
