"""Shared helpers for the benchmarks: fresh-process timing and percentiles."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_child(script: str, task: str, *extra: str) -> dict:
    """Run ``script --child TASK`` in a fresh interpreter; it prints one JSON line last."""
    result = subprocess.run(
        [sys.executable, script, "--child", task, *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(script: str, task: str, runs: int, *extra: str) -> dict[str, float]:
    """Median, min, max seconds and peak RSS over ``runs`` fresh processes."""
    samples = [run_child(script, task, *extra) for _ in range(runs)]
    times = [s["seconds"] for s in samples]
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "peak_mb": max(s["peak_mb"] for s in samples),
        "runs": runs,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
