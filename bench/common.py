"""Shared helpers for the benchmarks: fresh-process timing and percentiles."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
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


def run_main(
    doc: str, runs: int, need: str, child: Callable[[str, Path], None]
) -> argparse.Namespace | None:
    """Parse the benchmarks' common options; run ``child`` and return None in a child process.

    Exits with a clear message when ``../shared/data/<need>`` is missing.
    """
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=runs, help=f"runs per measurement (default {runs})"
    )
    parser.add_argument(
        "--shared",
        type=Path,
        default=REPO.parent / "shared" / "data",
        help="the shared data folder",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.shared)
        return None
    if not (args.shared / need).is_dir():
        raise SystemExit(f"bench: {args.shared / need} not found; pass --shared")
    return args


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
