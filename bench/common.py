"""Shared helpers for the benchmarks: fresh-process timing and percentiles."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def write_json(path: Path | None, data: object) -> None:
    """A measurement's figures as JSON at ``path`` (nothing when None), whole or not at all."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def writer_sets(parser: Any, corpus: Path, writers: str | None = None) -> list[Path]:
    """The writers' sets of a corpus folder (``WRITER.jsonl``), only ``writers`` (comma-
    separated) when given; a parser error when there are none."""
    files = sorted(corpus.glob("*.jsonl"))
    if writers:
        files = [f for f in files if f.stem in set(writers.split(","))]
    if not files:
        parser.error(f"{corpus}: no writers' sets (WRITER.jsonl)")
    return files


def collect_sets(
    doc: str, file_name: str, target: Path, take: Callable[[str, Path], tuple[list[str], list[str]]]
) -> int:
    """The command that takes finished writers' sets into a corpus: ``SOURCE WRITER ...``, each
    writer's ``SOURCE/WRITER/file_name`` read by ``take(writer, path)`` into the lines kept and
    the reasons for those skipped, written to ``target/WRITER.jsonl`` whole; a set already there
    is left as it is unless ``--replace`` (a set is read once, as written, before anything
    changes on it). Skipped lines are listed on stderr, never silently dropped."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("source", type=Path, help=f"the writers' folders (WRITER/{file_name})")
    parser.add_argument("writers", nargs="+")
    parser.add_argument("--replace", action="store_true")
    args = parser.parse_args()
    target.mkdir(parents=True, exist_ok=True)
    for writer in args.writers:
        out = target / f"{writer}.jsonl"
        if out.exists() and not args.replace:
            print(f"{writer}: already in the corpus (--replace to take it again)")
            continue
        kept, skipped = take(writer, args.source / writer / file_name)
        tmp = out.with_suffix(".tmp")
        tmp.write_text("\n".join(kept) + "\n", encoding="utf-8")
        tmp.replace(out)
        print(f"{writer}: {len(kept)} kept; {len(skipped)} lines skipped")
        for reason in skipped:
            print(f"  {reason}", file=sys.stderr)
    return 0


def collect_json(doc: str, file_name: str, target: Path, check: Callable[[object], dict]) -> int:
    """:func:`collect_sets` for writers' JSON lines, each checked by ``check`` (the command
    that takes a corpus's finished sets)."""
    return collect_sets(
        doc.split("\n\n")[0], file_name, target, lambda writer, path: json_rows(writer, path, check)
    )


def span_start(text: str, words: object, nth: object) -> int:
    """Where a labelled span starts: the ``nth`` occurrence (from 1) of ``words`` in ``text``
    (a ValueError says why it cannot be placed)."""
    if not isinstance(words, str) or not words.strip() or not isinstance(nth, int) or nth < 1:
        raise ValueError(f"span {words!r}: needs its text and an occurrence from 1")
    start = -1
    for _ in range(nth):
        start = text.find(words, start + 1)
        if start < 0:
            raise ValueError(f"span {words!r}: not in the text {nth} time(s)")
    return start


def json_rows(
    writer: str, path: Path, check: Callable[[object], dict]
) -> tuple[list[str], list[str]]:
    """A writer's JSON lines, each checked by ``check`` (a ValueError says why it is unusable)
    and marked with its writer; ids must not repeat. Returns the lines kept and the reasons
    for those skipped."""
    kept, skipped, ids = [], [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = check(json.loads(line))
            if row.get("id") in ids:
                raise ValueError(f"id {row.get('id')!r} repeated")
        except ValueError as exc:  # json.JSONDecodeError is one
            skipped.append(f"line {number}: {exc}")
            continue
        ids.add(row.get("id"))
        kept.append(json.dumps({**row, "writer": writer}, ensure_ascii=False))
    return kept, skipped
