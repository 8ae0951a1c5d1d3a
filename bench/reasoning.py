"""Benchmark: the reasoners' speed — the checklist (the default) and the offline reasoners.

Measures, in a fresh process each run:

- ``checklist``: one ``pcheck check "<short narrative>"`` as a user runs it (wall time including
  the interpreter's start-up, the knowledge base, spaCy and the answer; the peak memory of
  those processes; and, in one more run, whether it left torch or sentence-transformers
  imported); then, in one process,
  start-up (knowledge base, catalogue, parser, one warm-up case), every short narrative of
  ``tests/data/checklist_regression.csv`` checked one after another (cases per second once
  loaded, p50 / p95 / max), the peak resident memory, and whether torch or
  sentence-transformers were imported (the core install has neither). Target (issues 14, 26):
  one ``pcheck check`` at most 2 s on the ``make demo`` install (every extra installed: it
  imports neither Presidio nor transformers), at least 50 cases a second once loaded, under
  400 MB.
- ``checklist`` on the real dev court cases: long narratives, which also go through the
  learned layer (the offline features and their retrieval index).
- ``offline`` and ``offline-fast`` on the real dev court cases, as before (target 20 cases/s).

Speed only: the verdicts' quality is ``pcheck eval``'s job.

    python bench/reasoning.py [--runs 3] [--shared ../shared/data] [--json out.json]
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, percentile, run_child, run_main

CASES = "cases/goldcoin_real_dev_cases_hipaa_applicability.csv"
SHORT = REPO / "tests" / "data" / "checklist_regression.csv"
SAMPLE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a police "
    "detective without her consent."
)


#: what a check never uses: a ``pcheck check`` that imports them pays seconds for nothing
HEAVY = ("torch", "sentence_transformers", "transformers", "presidio_analyzer")


def cli_once() -> float:
    """Wall seconds of one ``pcheck check`` in a fresh process, as a user runs it."""
    pcheck = Path(sys.executable).with_name("pcheck")
    start = time.perf_counter()
    subprocess.run([str(pcheck), "check", SAMPLE], capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def cli_imports() -> dict[str, bool]:
    """Whether one ``pcheck check`` leaves torch, sentence-transformers, transformers or
    Presidio imported: the
    command's entry point run in a fresh interpreter, which then reports ``sys.modules`` (a
    blocked import attempt, as the fact reader makes for spaCy, is no import); not timed."""
    code = (
        "import json, sys\n"
        "from privacy_checklist.app.cli import main\n"
        "main(['check', sys.argv[1]])\n"
        f"print(json.dumps({{n: sys.modules.get(n) is not None for n in {HEAVY!r}}}))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code, SAMPLE], capture_output=True, text=True, check=True
    )
    return json.loads(found.stdout.strip().splitlines()[-1])


def checklist_child(task: str, shared: Path) -> None:
    start = time.perf_counter()
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    kb = kbmod.load()
    reasoner = ChecklistReasoner(kb)
    cases = read_cases(SHORT if task == "checklist-short" else shared / CASES)
    reasoner.check(cases[0].text)
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
                **{name: name in sys.modules for name in HEAVY},
            }
        )
    )


def child(task: str, shared: Path) -> None:
    if task.startswith("checklist"):
        checklist_child(task, shared)
        return
    start = time.perf_counter()
    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner
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


def _heavy(result: dict) -> str:
    """Which of torch and sentence-transformers a measured process imported."""
    return ", ".join(f"{name} imported: {'yes' if result[name] else 'no'}" for name in HEAVY)


def main() -> int:
    args = run_main(__doc__, 3, "cases", child)
    if args is None:
        return 0
    results: dict[str, dict] = {}
    walls = [cli_once() for _ in range(args.runs)]
    cli = {
        "median_s": statistics.median(walls),
        "max_s": max(walls),
        "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "runs": args.runs,
        **cli_imports(),
    }
    results["pcheck check"] = cli
    print(
        f"pcheck check (one short narrative, fresh process, median of {args.runs}): "
        f"{cli['median_s']:.2f} s wall, max {cli['max_s']:.2f} s (target 2 s); peak RSS "
        f"{cli['peak_mb']:.0f} MB (target 400); {_heavy(cli)}"
    )
    for task, label in (
        ("checklist-short", "checklist on the short narratives of the regression set"),
        ("checklist-long", "checklist on the real dev court cases"),
    ):
        samples = [
            run_child(__file__, task, "--shared", str(args.shared)) for _ in range(args.runs)
        ]
        result = {
            key: statistics.median(s[key] for s in samples)
            for key in ("startup_s", "cases_per_s", "p50_ms", "p95_ms", "max_ms")
        }
        result["peak_mb"] = max(s["peak_mb"] for s in samples)
        result["cases"] = samples[0]["cases"]
        for name in HEAVY:
            result[name] = any(s[name] for s in samples)
        results[task] = result
        print(
            f"{label} ({result['cases']}, median of {args.runs} runs): "
            f"{result['cases_per_s']:.1f} cases/s (target 50), p50 {result['p50_ms']:.1f} ms, "
            f"p95 {result['p95_ms']:.1f} ms, max {result['max_ms']:.0f} ms; start-up "
            f"{result['startup_s']:.1f} s; peak RSS {result['peak_mb']:.0f} MB (target 400); "
            f"{_heavy(result)}"
        )
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
