"""Benchmark: retrieval index build time, query latency per method, model load, peak memory.

Queries are the narratives of the real dev cases (latency only; nothing is fitted to them).
Index builds run in a fresh process each, into a temporary folder (cold) and again into the
same folder (warm: nothing changed, so nothing is re-indexed). Targets on the project's 2-core
machine: bm25 p50 under 10 ms, embedding under 50 ms, hybrid under 100 ms.

    python bench/retrieval.py [--runs 1] [--shared ../shared/data] [--json FILE]
    python bench/retrieval.py --child select     # how the hybrid's legs were chosen

The selection compares sets of legs for the hybrid on the first 250 synthetic train cases that
have gold regulations (never on the real cases) and prints section and paragraph hit@10.
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
from pathlib import Path

from common import percentile, run_child, run_main

METHODS = ("bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es", "hybrid")
TARGETS = {"bm25": 10.0, "embedding": 50.0, "hybrid": 100.0}


def child(task: str, shared: Path) -> None:
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.retrieval.index import RetrievalIndex

    if task == "select":
        select(shared)
        return
    method, _, folder = task.partition("@")
    kb = kbmod.load()
    start = time.perf_counter()
    index = RetrievalIndex(kb, Path(folder))
    index.method(method)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


LEG_SETS = {
    "rewrite+embedding+ci-es": ["bm25-rewrite", "embedding", "ci-es"],
    "text+rewrite+embedding+ci-es": ["bm25-text", "bm25-rewrite", "embedding", "ci-es"],
    "text+embedding+ci-es": ["bm25-text", "embedding", "ci-es"],
    "text+embedding": ["bm25-text", "embedding"],
    "spec+text+embedding+ci-es": ["bm25", "bm25-text", "embedding", "ci-es"],
    "all": ["bm25", "bm25-text", "bm25-rewrite", "embedding", "ci-es"],
}


def select(shared: Path) -> None:
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.retrieval.evaluate import evaluate, gold_ids
    from privacy_checklist.retrieval.hybrid import HybridRetriever
    from privacy_checklist.retrieval.index import RetrievalIndex

    kb = kbmod.load()
    index = RetrievalIndex(kb)
    cases = read_cases(shared / "cases" / "train_generate_cases_hipaa_applicability.csv")
    cases = [c for c in cases if gold_ids(c)][:250]
    for name, legs in LEG_SETS.items():
        hybrid = HybridRetriever(
            [index.method(leg) for leg in legs], kb.refs_out, kb.norms, index.by_node
        )
        r = evaluate(cases, lambda q, h=hybrid: [x.node for x in h.search(q, 10)])
        print(
            f"{name:<30} section hit@10 {r['section']['hit@10']:.3f} mrr {r['section']['mrr']:.3f}"
            f"  paragraph hit@10 {r['paragraph']['hit@10']:.3f}"
        )


def main() -> int:
    args = run_main(__doc__, 1, "cases", child)
    if args is None:
        return 0
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.embeddings import model
    from privacy_checklist.retrieval.index import RetrievalIndex

    results: dict = {"build": {}, "latency": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("bm25", "embedding", "ci-es"):
            folder = Path(tmp) / method
            cold = run_child(__file__, f"{method}@{folder}", "--shared", str(args.shared))
            warm = run_child(__file__, f"{method}@{folder}", "--shared", str(args.shared))
            results["build"][method] = {
                "cold_s": round(cold["seconds"], 3),
                "warm_s": round(warm["seconds"], 3),
                "peak_mb": round(max(cold["peak_mb"], warm["peak_mb"])),
            }
        kb = kbmod.load()
        start = time.perf_counter()
        model()
        results["model_load_s"] = round(time.perf_counter() - start, 2)
        index = RetrievalIndex(kb, Path(tmp) / "embedding")
        cases = read_cases(
            args.shared / "cases" / "goldcoin_real_dev_cases_hipaa_applicability.csv"
        )
        queries = [c.text for c in cases]
        for method in METHODS:
            index.search(queries[0], method, 10)  # builds the method; not timed
            times = []
            for query in queries:
                t = time.perf_counter()
                index.search(query, method, 10)
                times.append((time.perf_counter() - t) * 1000)
            results["latency"][method] = {
                "p50_ms": round(percentile(times, 50), 2),
                "p95_ms": round(percentile(times, 95), 2),
                "n": len(times),
            }
    results["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(f"{'index build':<12} {'cold s':>8} {'warm s':>8} {'peak MB':>8}")
    for method, r in results["build"].items():
        print(f"{method:<12} {r['cold_s']:>8.2f} {r['warm_s']:>8.2f} {r['peak_mb']:>8}")
    print(f"\nmodel load (apart) {results['model_load_s']} s")
    print(f"{'query latency':<14} {'p50 ms':>8} {'p95 ms':>8} {'target':>8}")
    for method, r in results["latency"].items():
        target = TARGETS.get(method)
        shown = f"{target:.0f}" if target else "-"
        print(f"{method:<14} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} {shown:>8}")
    print(
        f"\npeak memory of this process {results['peak_mb']} MB; "
        f"queries: {len(queries)} real dev narratives"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
