"""Measuring the guard: ``pcheck guard-eval --file DRAFTS.jsonl [--presidio] [--conversations F]``.

The guard sees only what a person would type (the recipient, the purpose's words, the sender);
the figures (:mod:`privacy_checklist.reasoning.guard.evaluate`) are the leak rate, the needed spans
kept, the unneeded spans removed and the verdict agreement, beside Presidio's analyzer and
anonymizer with their defaults (the type-based baseline) when asked.
"""

from __future__ import annotations

import argparse
from typing import Any

from privacy_checklist.app.cli.common import CliError, print_json, read_text_file
from privacy_checklist.app.cli.guard import make_guard
from privacy_checklist.app.cli.options import json_option


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser(
        "guard-eval",
        help="measure the guard on labelled drafts (leak rate, needed kept, unneeded removed)",
        description="Measure the guard on labelled drafts (tests/data/guard_drafts.jsonl: the "
        "recipient, the purpose's words, the sender, the verdict and every span marked "
        "identifier or health and needed or not). The guard sees only what a person would type. "
        "Leak rate: unneeded identifiers left after the rewrite; needed kept; unneeded "
        "removed; verdict agreement. --presidio adds Presidio's analyzer and anonymizer with "
        "their defaults (the type-based baseline); --conversations the turn-level figures.",
    )
    e.add_argument("--file", required=True, metavar="DRAFTS.jsonl", help="labelled drafts")
    e.add_argument("--conversations", metavar="FILE.jsonl", help="labelled conversations too")
    e.add_argument(
        "--presidio",
        action="store_true",
        help="measure Presidio's analyzer and anonymizer with their defaults beside the guard",
    )
    e.add_argument(
        "--guard-presidio",
        action="store_true",
        help="also measure the guard with Presidio's recognizers added to its own (--presidio "
        "on pcheck guard)",
    )
    e.add_argument("--show", type=int, default=10, metavar="N", help="list N leaks and losses")
    json_option(e, "print the figures as JSON")
    e.set_defaults(func=cmd_guard_eval)


def cmd_guard_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from privacy_checklist.reasoning.guard.evaluate import (
        guard_output,
        load_drafts,
        measure,
        measure_conversations,
        presidio_output,
    )

    try:
        drafts = load_drafts(read_text_file(args.file).splitlines(), args.file)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    # the guard with its own recognizers; Presidio is measured apart, with its defaults
    guard = make_guard(argparse.Namespace(**{**vars(args), "presidio": False}))
    figures: dict[str, Any] = {"file": args.file}
    with tqdm(total=len(drafts), desc="guard", unit="draft", disable=None) as bar:
        figures["guard"] = measure(drafts, lambda d: guard_output(guard, d), bar.update)
    if args.guard_presidio:
        helped = make_guard(argparse.Namespace(**{**vars(args), "presidio": True}))
        with tqdm(total=len(drafts), desc="guard+presidio", unit="draft", disable=None) as bar:
            figures["guard+presidio"] = measure(
                drafts, lambda d: guard_output(helped, d), bar.update
            )
    if args.presidio:
        analyzer, anonymizer = _presidio_defaults()
        with tqdm(total=len(drafts), desc="presidio", unit="draft", disable=None) as bar:
            figures["presidio"] = measure(
                drafts, lambda d: presidio_output(analyzer, anonymizer, d), bar.update
            )
    if args.conversations:
        from privacy_checklist.reasoning.guard.message import json_lines

        try:
            conversations = json_lines(
                read_text_file(args.conversations).splitlines(), args.conversations, ()
            )
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        if not all(isinstance(c.get("turns"), list) and c["turns"] for c in conversations):
            raise CliError(f'{args.conversations}: each line needs {{"turns": [...]}}')
        figures["conversations"] = measure_conversations(guard, conversations)
    if args.json:
        print_json(figures)
        return 0
    print(f"{args.file}: {len(drafts)} drafts")
    print(
        f"{'':<14} {'leak':>6} {'needed kept':>12} {'unneeded out':>13} "
        f"{'verdicts':>9} {'drafts/s':>9}"
    )
    for name in ("guard", "guard+presidio", "presidio"):
        if name in figures:
            f = figures[name]
            print(
                f"{name:<14} {_pct(f['leak_rate']):>6} {_pct(f['needed_kept']):>12} "
                f"{_pct(f['unneeded_removed']):>13} {_pct(f['verdict_agreement']):>9} "
                f"{f['drafts_per_second']:>9}"
            )
    g = figures["guard"]
    for leak in g["leaks"][: args.show]:
        print(f"  leaked {leak['id']}: {leak['span']!r} ({leak['type']})")
    for lost in g["lost"][: args.show]:
        print(f"  lost   {lost['id']}: {lost['span']!r}")
    if "conversations" in figures:
        c = figures["conversations"]
        print(
            f"conversations: {c['conversations']}, stopping turns {c['stopping_turns']}: "
            f"stopped right {c['stopped_right']}, missed {c['missed']}, stopped wrongly "
            f"{c['stopped_wrongly']}"
        )
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _presidio_defaults() -> tuple[Any, Any]:
    """Presidio's analyzer (its predefined recognizers, spaCy's small English model as its NLP
    engine when installed, offline) and its anonymizer, with their defaults."""
    from privacy_checklist.kg.extras import MissingExtra, require
    from privacy_checklist.reasoning.guard.presidio import presidio_analyzer
    from privacy_checklist.reasoning.text import load_pipeline

    try:
        anonymizer = require("presidio_anonymizer", "guard", "--presidio")
        analyzer = presidio_analyzer(load_pipeline(), required=True)
    except MissingExtra as exc:
        raise CliError(str(exc)) from exc
    return analyzer, anonymizer.AnonymizerEngine()
