"""Benchmark: the offline reasoners (``offline`` and ``offline-fast``) on the real dev court cases.

Measures, in a fresh process each run: start-up (load the knowledge base, the retrieval index,
the model and the embedding model, and answer one warm-up case), then every real dev case
checked one after another (``OfflineReasoner.check``, flows included): cases per second once
loaded, per-case latency p50 / p95 / max, and peak resident memory. Target: at least 20 cases
per second once loaded. Speed only: the verdicts' quality is ``pcheck eval``'s job.

    python bench/reasoning.py [--runs 3] [--shared ../shared/data] [--json out.json]
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from pathlib import Path

from common import percentile, run_child, run_main

CASES = "cases/goldcoin_real_dev_cases_hipaa_applicability.csv"


def child(task: str, shared: Path) -> None:
    start = time.perf_counter()
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.offline import OfflineReasoner
    from privacy_checklist.retrieval.index import RetrievalIndex

    kb = kbmod.load()
    reasoner = OfflineReasoner(kb, RetrievalIndex(kb, embeddings=False), fast=task == "fast")
    cases = read_cases(shared / CASES)
    reasoner.check(cases[0].text)  # warm-up: the embedding model and the flow reader load here
    startup = time.perf_counter() - start
    latencies = []
    began = time.perf_counter()
    for case in cases:
        t = time.perf_counter()
        reasoner.check(case.text)
        latencies.append(time.perf_counter() - t)
    total = time.perf_counter() - began
    print(
        json.dumps(
            {
                "cases": len(cases),
                "startup_s": startup,
                "cases_per_s": len(cases) / total,
                "p50_ms": 1000 * percentile(latencies, 50),
                "p95_ms": 1000 * percentile(latencies, 95),
                "max_ms": 1000 * max(latencies),
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def main() -> int:
    args = run_main(__doc__, 3, "cases", child)
    if args is None:
        return 0
    results = {}
    for task, method in (("check", "offline"), ("fast", "offline-fast")):
        samples = [
            run_child(__file__, task, "--shared", str(args.shared)) for _ in range(args.runs)
        ]
        result = {
            key: statistics.median(s[key] for s in samples)
            for key in ("startup_s", "cases_per_s", "p50_ms", "p95_ms", "max_ms")
        }
        result["peak_mb"] = max(s["peak_mb"] for s in samples)
        result["cases"] = samples[0]["cases"]
        result["runs"] = args.runs
        results[method] = result
        print(
            f"{method} on {result['cases']} real dev cases (median of {args.runs} runs): "
            f"{result['cases_per_s']:.1f} cases/s (target 20), p50 {result['p50_ms']:.0f} ms, "
            f"p95 {result['p95_ms']:.0f} ms, max {result['max_ms']:.0f} ms; start-up "
            f"{result['startup_s']:.1f} s; peak RSS {result['peak_mb']:.0f} MB"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
