"""Benchmark: ``pcheck ingest`` as a user runs it, and loading the built knowledge base.

``pcheck ingest`` (whole process) runs the command line in a fresh process, from start-up to
exit: the three eCFR parts and the ontologies in, every file of the knowledge base out (JSON,
GraphML, Turtle; role and attribute graphs, WordNet nouns, the machine norms), as
``make kb`` runs it. ``load`` times loading the shipped knowledge base in a fresh process.
Each is run ``--runs`` times; the table gives the median, the spread and the largest peak
resident memory. Targets on the project's 2-core machine: ingest at most 5 s, load at most
0.5 s. ``--steps`` also prints where one build spends its time.

    python bench/ingest.py [--runs 3] [--shared ../shared/data] [--json FILE] [--steps]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, measure

TARGETS = {"pcheck ingest (whole process)": 5.0, "load": 0.5}


def ingest_command(shared: Path, out: Path) -> list[str]:
    """``pcheck ingest`` with the shared pages and ontologies, as ``make kb`` runs it."""
    script = Path(sys.executable).with_name("pcheck")
    start = (
        [str(script)] if script.exists() else [sys.executable, "-m", "privacy_checklist.app.cli"]
    )
    pages = sorted(str(p) for p in (shared / "hipaa").glob("ecfr-title45-part*.html"))
    ontologies = str(shared / "ontologies")
    return [*start, "ingest", "--source", *pages, "--ontologies", ontologies, "--out", str(out)]


def whole_process(shared: Path, runs: int) -> dict[str, float]:
    """Wall-clock seconds and peak RSS of ``pcheck ingest``, a fresh process per run."""
    times: list[float] = []
    peak_mb = 0.0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            command = ingest_command(shared, Path(tmp) / "kb")
            with open(Path(tmp) / "stderr", "w+b") as stderr:
                start = time.perf_counter()
                child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
                _, status, usage = os.wait4(child.pid, 0)
                times.append(time.perf_counter() - start)
                child.returncode = os.waitstatus_to_exitcode(status)
                if child.returncode != 0:
                    stderr.seek(0)
                    error = stderr.read().decode("utf-8", "replace")
                    raise SystemExit(f"bench: {' '.join(command)} failed:\n{error}")
            peak_mb = max(peak_mb, usage.ru_maxrss / 1024)
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "peak_mb": peak_mb,
        "runs": runs,
    }


def child(task: str, shared: Path) -> None:
    """One in-process measurement, printed as JSON: seconds and peak RSS of this process."""
    from privacy_checklist.kg import kb as kbmod

    start = time.perf_counter()
    if task == "load":
        kb = kbmod.load()
        kb.refs_out  # noqa: B018 - build the indexes a command uses
    else:
        raise SystemExit(f"bench: unknown task {task!r}")
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))


def steps(shared: Path) -> None:
    """Where one build spends its time, step by step (in this process)."""
    from privacy_checklist.ingest.ecfr import load_page
    from privacy_checklist.kg import kb as kbmod

    marks = [("reading the pages", time.perf_counter())]  # (step starting, when)
    pages = [load_page(str(p)) for p in sorted((shared / "hipaa").glob("ecfr-title45-*.html"))]

    def progress(step: str) -> None:
        marks.append((step, time.perf_counter()))

    built = kbmod.build(pages, progress=progress, ontologies=shared / "ontologies")
    progress("saving (JSON, GraphML, Turtle)")
    with tempfile.TemporaryDirectory() as tmp:
        built.save(Path(tmp) / "kb")
    progress("")
    print(f"{'step':<40} {'s':>6}")
    for (name, start), (_, end) in itertools.pairwise(marks):
        print(f"{name:<40} {end - start:>6.2f}")
    print(f"{'total (after the imports)':<40} {marks[-1][1] - marks[0][1]:>6.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (default 3)")
    parser.add_argument(
        "--shared", type=Path, default=REPO.parent / "shared" / "data", help="the shared data"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--steps", action="store_true", help="also time one build's steps")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.shared)
        return 0
    for need in ("hipaa", "ontologies"):
        if not (args.shared / need).is_dir():
            raise SystemExit(f"bench: {args.shared / need} not found; pass --shared")
    results = {
        "pcheck ingest (whole process)": whole_process(args.shared, args.runs),
        "load": measure(__file__, "load", args.runs, "--shared", str(args.shared)),
    }
    print(
        f"{'measurement':<40} {'median s':>9} {'min s':>7} {'max s':>7} {'peak MB':>8} "
        f"{'target s':>9}  ok"
    )
    for name, r in results.items():
        ok = "yes" if r["median_s"] <= TARGETS[name] else "NO"
        print(
            f"{name:<40} {r['median_s']:>9.3f} {r['min_s']:>7.3f} {r['max_s']:>7.3f} "
            f"{r['peak_mb']:>8.0f} {TARGETS[name]:>9.1f}  {ok}"
        )
    print(f"({args.runs} runs each, a fresh process per run; peak = max resident set size)")
    print(f"ingest command: {' '.join(ingest_command(args.shared, Path('OUT')))}")
    if args.steps:
        steps(args.shared)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(r["median_s"] <= TARGETS[n] for n, r in results.items()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
