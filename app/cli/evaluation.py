"""Measuring the reasoning methods: ``pcheck eval`` (verdicts on a case file, resumable); it
registers ``pcheck reasoner train`` too (:mod:`.training`)."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.common import CliError, load_kb, print_json, read_cases
from privacy_checklist.app.cli.options import cases_option, json_option, limit_option
from privacy_checklist.app.cli.reasoning import (
    METHODS_TEXT,
    build_reasoner,
    llm_client,
    method_options,
    reasoning_index,
    selected_methods,
)
from privacy_checklist.reasoning.methods import OFFLINE_METHODS

if TYPE_CHECKING:
    from privacy_checklist.ingest.cases import Case
    from privacy_checklist.reasoning.evaluation.harness import RunStats
    from privacy_checklist.reasoning.verdict import Reasoner


def cmd_eval_verdicts(args: argparse.Namespace) -> int:
    """``pcheck eval``: decide every case with each method, log and score the verdicts."""
    from privacy_checklist.reasoning.evaluation.harness import (
        FolderBusy,
        RunStats,
        locked,
        markdown_details,
        markdown_table,
    )

    methods = selected_methods(args.method)
    kb = load_kb(args)
    cases = read_cases(args.cases, command=args.command, limit=args.limit)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"{out}: is a file, not a folder; pass --out a folder")
    client = llm_client(args) if any(m not in OFFLINE_METHODS for m in methods) else None
    reasoners = {
        m: build_reasoner(
            m, kb, reasoning_index(kb, args.index), client, args.k, restate=args.restate
        )
        for m in methods
    }
    results: dict[str, dict[str, Any]] = {}
    stats: dict[str, RunStats] = {}
    undecided: list[str] = []
    report = ""
    try:
        with locked(out):
            for method, reasoner in reasoners.items():
                stats[method] = RunStats()
                results[method], note = _evaluate_method(args, cases, method, reasoner, stats)
                undecided += [note] if note else []
            details = markdown_details(results)
            report = markdown_table(results) + (f"\n{details}" if details else "")
            (out / "table.md").write_text(report, encoding="utf-8")
    except FolderBusy as exc:
        raise CliError(str(exc)) from exc
    except KeyboardInterrupt:
        kept = ", ".join(f"{m} {s.kept} of {len(cases)}" for m, s in stats.items())
        total = sum(s.kept for s in stats.values())
        print(
            f"pcheck eval: interrupted; {total} cases kept in {out} ({kept}); rerun the same "
            "command to resume: the kept cases are not decided again",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:
        if not str(exc.filename or "").startswith(str(out)):
            raise
        raise CliError(
            f"{out}: cannot write the evaluation there ({exc.strerror or exc}); pass --out a "
            "folder you can write to"
        ) from exc
    if args.json:
        print_json(results if len(results) > 1 else next(iter(results.values())))
    else:
        print(report, end="")
        print(f"Logs, metrics and confusion matrices in {out}")
    if undecided:
        raise CliError(
            "; ".join(undecided) + "; they are not scored: rerun the same command to ask them again"
        )
    return 0


def _evaluate_method(
    args: argparse.Namespace,
    cases: list[Case],
    method: str,
    reasoner: Reasoner,
    stats: dict[str, RunStats],
) -> tuple[dict[str, Any], str | None]:
    """Decide the cases with one method (logged cases reused), write its metrics and confusion
    matrix; returns the metrics and a note on the cases left undecided, if any."""
    from tqdm import tqdm

    from privacy_checklist.reasoning.evaluation.digests import decision_settings
    from privacy_checklist.reasoning.evaluation.harness import (
        OtherCaseFile,
        case_file_record,
        claim_run,
        confusion_png,
        gold_references,
        metrics,
        run,
    )
    from privacy_checklist.reasoning.verdict import Verdict

    out = Path(args.out)
    case_file = case_file_record(Path(args.cases), cases)
    try:
        claim_run(out, method, case_file)
    except OtherCaseFile as exc:
        raise CliError(str(exc)) from exc
    bar = tqdm(total=len(cases), desc=method, unit="case", file=sys.stderr, disable=None)
    local = method in OFFLINE_METHODS or args.llm_backend == "local"
    try:
        records = run(
            cases,
            method,
            partial(_decide, reasoner),
            out,
            bar.update,
            workers=1 if local else max(1, args.parallel),
            settings=decision_settings(reasoner),
            stats=stats[method],
        )
    finally:
        bar.close()
    for note in stats[method].notes:
        print(f"pcheck eval: {note}", file=sys.stderr)
    result = metrics(records, gold_references(cases))
    (out / f"{method}.metrics.json").write_text(
        json.dumps(result | {"cases": case_file}, indent=2) + "\n", encoding="utf-8"
    )
    result["cases"] = {k: v for k, v in case_file.items() if k != "ids"} | {"n": len(cases)}
    confusion_png(result, f"{method} on {Path(args.cases).name}", out / f"{method}.confusion.png")
    if not result["request_failures"]:
        return result, None
    failures = (Verdict.from_json(r).failure for r in records)
    first = next((failure for failure in failures if failure), "no answer")
    return result, (
        f"{result['request_failures']} of {len(records)} cases undecided by {method} ({first})"
    )


def _decide(reasoner: Reasoner, text: str) -> dict[str, Any]:
    """A verdict on ``text`` as the evaluation logs it."""
    return reasoner.check(text).to_json()


def register(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="measure a method on a case file: accuracy, macro-F1, per class, confusion",
        description="Decide every case of a case CSV, logging each to OUT/METHOD.jsonl as it goes "
        "(stop and rerun: it continues where it was; a logged case is reused only when its "
        "narrative, gold label, method, parameters, model, prompts and knowledge base are the "
        "same, and cases whose LLM request failed are asked again), then write "
        "OUT/METHOD.metrics.json, a confusion-matrix PNG and OUT/table.md (one row per method). "
        "Gold labels: Permit, Forbid, Not Applicable or a synonym, in any case; unusable rows are "
        "reported by line. For LLM methods each record holds the prompts, the raw answers and "
        "the parsed verdict; parse failures count as wrong; cases whose request failed are not "
        "scored, are counted as request failures, and make the run exit 1. One run at a time "
        "writes into OUT. " + METHODS_TEXT,
    )
    cases_option(p)
    method_options(p, several=True)
    p.add_argument("--out", required=True, metavar="DIR")
    limit_option(p)
    p.add_argument(
        "--parallel",
        type=int,
        default=4,
        metavar="N",
        help="cases decided at once by LLM methods over an endpoint (default 4; the offline "
        "reasoner and the local backend take one at a time)",
    )
    json_option(p, "print the metrics as JSON")
    p.set_defaults(func=cmd_eval_verdicts)

    from privacy_checklist.app.cli.training import register_train

    register_train(sub)
