"""Benchmark: ingest the three eCFR parts, and load the built knowledge base.

Each measurement runs in a fresh Python process (so caches and memory do not carry over),
five times; the table gives the median and the spread, and each process's peak resident
memory. Targets on the project's 2-core machine: ingest at most 5 s, load at most 0.5 s.

    python bench/ingest.py [--runs 5] [--shared ../shared/data] [--json FILE]
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
from pathlib import Path

from common import measure, run_main

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"ingest (parse + build)": 5.0, "ingest + save (JSON, GraphML, Turtle)": 5.0, "load": 0.5}


def child(task: str, shared: Path) -> None:
    """One measurement, printed as JSON: seconds and peak RSS of this process."""
    from privacy_checklist.ingest.ecfr import load_page
    from privacy_checklist.kg import kb as kbmod

    pages = sorted((shared / "hipaa").glob("ecfr-title45-part*.html"))
    start = time.perf_counter()
    if task == "load":
        kb = kbmod.load()
        kb.refs_out  # noqa: B018 - build the indexes a command uses
    else:
        built = kbmod.build([load_page(str(p)) for p in pages])
        if task == "save":
            with tempfile.TemporaryDirectory() as tmp:
                built.save(Path(tmp) / "kb")
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))


def main() -> int:
    args = run_main(__doc__, 5, "hipaa", child)
    if args is None:
        return 0
    results = {
        "ingest (parse + build)": measure(
            __file__, "ingest", args.runs, "--shared", str(args.shared)
        ),
        "ingest + save (JSON, GraphML, Turtle)": measure(
            __file__, "save", args.runs, "--shared", str(args.shared)
        ),
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
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(r["median_s"] <= TARGETS[n] for n, r in results.items()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
