"""Minimum necessary before a message leaves: ``pcheck guard``.

``pcheck guard --file DRAFT [--to R] [--purpose P] [--from S] [--rewrite] [--json]`` reads a
draft, the flow it makes and the checklist's verdict, each span of protected health
information and whether the purpose needs it (naming the norm), and with ``--rewrite`` a
rewrite that keeps only what is needed, re-checked. ``--conversation FILE.jsonl`` judges each
outgoing turn against what its recipient has already been told. ``pcheck guard-eval``
(:mod:`privacy_checklist.app.cli.guard_eval`) measures it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError, load_kb, print_json, read_text_file, wrap
from privacy_checklist.app.cli.options import (
    json_option,
    llm_backend_option,
    llm_endpoint_options,
)

#: the most turns one conversation file may hold
MAX_TURNS = 500


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "guard",
        help="before a message leaves: what may go, what must come out, a safe rewrite",
        description="Guard a draft message (an email, a text, a prompt to an outside model, a "
        "reply to a review): the flow it makes and the checklist's verdict, every span of "
        "protected health information (the 18 identifiers of 164.514(b)(2)(i) and health "
        "information) and whether the purpose needs it under minimum necessary (164.502(b)), "
        "naming the norm. --to and --purpose take the words a person would type ('the patient's "
        "health plan', 'payment: submitting a claim', 'an outside AI chatbot'), read into the "
        "44 purposes the law names (public health, a subpoena, police identifying a suspect, "
        "fundraising ...); one that cannot be read is reported, not guessed. A sentence that "
        "carries only what the purpose does not need is taken out whatever its words' types. "
        "Nothing is written unless --out is given.",
        epilog="examples:\n"
        '  pcheck guard --file draft.txt --to "the patient\'s health plan" '
        '--purpose "submitting a claim" --rewrite\n'
        "  pcheck guard --file prompt.txt --to ChatGPT --rewrite --json\n"
        '  pcheck guard --conversation chat.jsonl   # {"speaker", "recipient", "text"} a line',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--file", metavar="DRAFT", help="the draft message (- for stdin)")
    what.add_argument(
        "--conversation",
        metavar="FILE.jsonl",
        help='a conversation, one turn a line: {"speaker": ..., "recipient": ..., '
        '"text": ...}; each turn of the covered entity\'s side is judged against what its '
        "recipient already knows",
    )
    p.add_argument("--to", metavar="RECIPIENT", help="who receives it, in your words")
    p.add_argument("--purpose", metavar="PURPOSE", help="what it is for, in your words")
    p.add_argument(
        "--from",
        dest="sender",
        metavar="SENDER",
        help="who sends it (default: your own covered entity's staff)",
    )
    p.add_argument(
        "--rewrite",
        action="store_true",
        help="also rewrite it without what the purpose does not need, and re-check the rewrite",
    )
    p.add_argument(
        "--llm",
        action="store_true",
        help="with --rewrite: ask the configured LLM for a fluent rewrite, held to the same "
        "re-check (one that leaks or drops a needed span is refused; the offline one is kept)",
    )
    _rewrite_options(p)
    p.set_defaults(func=cmd_guard)


def _rewrite_options(p: argparse.ArgumentParser) -> None:
    """The LLM's fluent rewrite, Presidio, where the result is written, JSON."""
    llm_backend_option(p)
    llm_endpoint_options(p)
    p.add_argument(
        "--llm-timeout", type=float, default=60.0, metavar="S", help="seconds per request"
    )
    p.add_argument(
        "--presidio",
        action="store_true",
        help="also take Microsoft Presidio's person names (its analyzer, offline) beside the "
        "guard's own recognizers (pip install 'privacy-checklist[guard]')",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also write the result there (guard.json, and rewrite.txt with --rewrite)",
    )
    json_option(p, "print the result as JSON (keys: verdict, flow, spans, rewrite, recheck)")


def make_guard(args: argparse.Namespace) -> Any:
    from privacy_checklist.kg.extras import MissingExtra
    from privacy_checklist.reasoning.guard.message import Guard

    kb = load_kb(args)
    try:
        return Guard(kb, presidio=bool(getattr(args, "presidio", False)))
    except MissingExtra as exc:
        raise CliError(str(exc)) from exc


def _read_draft(name: str) -> str:
    from privacy_checklist.reasoning.guard.message import GuardError, check_message

    if name != "-":
        path = Path(name)
        if path.is_file() and path.stat().st_size > 1_000_000:
            raise CliError(f"{name}: {path.stat().st_size:,} bytes; the guard reads one message")
        if path.is_file() and b"\x00" in path.read_bytes()[:4096]:
            raise CliError(f"{name}: binary, not a text message")
    text = read_text_file(name)
    try:
        return check_message(text, name)
    except GuardError as exc:
        raise CliError(str(exc)) from exc


def _write_out(directory: str, files: dict[str, str]) -> list[str]:
    """Write each file whole (a temporary name, then renamed): nothing half-written."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in files.items():
            target = out / name
            partial = out / f".{name}.partial"
            partial.write_text(text, encoding="utf-8")
            partial.replace(target)
            written.append(str(target))
        return written
    except OSError as exc:
        raise CliError(f"--out {directory}: cannot write ({exc.strerror or exc})") from exc


def cmd_guard(args: argparse.Namespace) -> int:
    from privacy_checklist.reasoning.guard.message import GuardError

    if args.llm and not args.rewrite:
        raise CliError("--llm asks for a fluent rewrite: add --rewrite")
    if args.conversation:
        return _cmd_conversation(args)
    text = _read_draft(args.file)
    guard = make_guard(args)
    try:
        guarded = guard.check(
            text, to=args.to, purpose=args.purpose, sender=args.sender, rewrite=args.rewrite
        )
    except GuardError as exc:
        raise CliError(str(exc)) from exc
    if args.purpose and guarded.purpose.key is None:
        raise CliError(f"--purpose: {guarded.purpose.how}")
    if args.llm:
        from privacy_checklist.app.cli.reasoning import llm_client

        args.llm_retries, args.concurrency = 2, 1
        guard.fluent_rewrite(guarded, llm_client(args))
    result = guarded.to_json()
    if args.out:
        files = {"guard.json": json.dumps(result, indent=2, ensure_ascii=False) + "\n"}
        if guarded.rewrite is not None:
            files["rewrite.txt"] = guarded.rewrite + "\n"
        for path in _write_out(args.out, files):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print_json(result)
        return 0
    _print(guarded)
    return 0


def _print(guarded: Any) -> None:
    purpose = guarded.purpose
    print(guarded.explanation)
    print(
        f"purpose: {purpose.spec.get('label') or 'not read'}"
        + (f" [{purpose.spec.get('norm')}]" if purpose.key else "")
        + f" ({purpose.how})"
    )
    flow = guarded.flow
    print(f"flow: {flow['summary']}")
    print(f"  checklist: {flow['verdict']} {', '.join(flow['rests_on'])}")
    print(wrap(flow["explanation"], "    "))
    print(f"minimum necessary: {guarded.minimum_necessary}")
    if purpose.key and purpose.spec.get("needs"):
        print(wrap(f"what it needs: {purpose.spec['needs']}", "  "))
    for note in guarded.notes:
        print(f"note: {note}")
    if not guarded.decisions:
        print("spans: none (no protected health information read)")
    for d in guarded.decisions:
        mark = {True: "keep  ", False: "REMOVE", None: "?     "}[d.needed]
        law = d.span.item
        print(f"  {mark} {d.span.kind:<10} {d.span.type:<18} {d.span.text!r}  [{law}]")
        if (
            d.needed is not True
            or not purpose.spec.get("needs")
            or d.why.startswith("minimum necessary does not apply")
        ):
            print(wrap(f"{d.why}" + (f" ({d.norm})" if d.norm else ""), "           "))
    if guarded.rewrite is not None:
        print("rewrite:")
        print(wrap(guarded.rewrite, "  "))
        check = guarded.recheck
        if check is not None:
            state = "passed" if check.passed else "FAILED"
            print(
                f"re-check: {state}; {len(check.leaked)} unneeded identifier(s) left, "
                f"{len(check.dropped)} needed span(s) lost; verdict on the rewrite: "
                f"{check.verdict}"
            )
        if guarded.fluent is not None:
            print(f"fluent rewrite: {guarded.fluent['why']}")


def _turns(name: str) -> list[dict[str, Any]]:
    from privacy_checklist.reasoning.guard.message import json_lines

    try:
        turns = json_lines(
            read_text_file(name).splitlines(), name, ("speaker", "recipient", "text")
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if len(turns) > MAX_TURNS:
        raise CliError(f"{name}: {len(turns)} turns; split the conversation (at most {MAX_TURNS})")
    return turns


def _cmd_conversation(args: argparse.Namespace) -> int:
    from privacy_checklist.reasoning.guard.message import GuardError

    turns = _turns(args.conversation)
    guard = make_guard(args)
    try:
        results = guard.conversation(turns, purpose=args.purpose)
    except GuardError as exc:
        raise CliError(str(exc)) from exc
    result = {"turns": results, "stopped": [r["turn"] for r in results if r["stop"]]}
    if args.out:
        payload = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
        for path in _write_out(args.out, {"conversation.json": payload}):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print_json(result)
        return 0
    for r in results:
        head = f"turn {r['turn']}: {r['speaker']} -> {r['recipient']}"
        if not r["judged"]:
            print(f"{head}: not judged ({r['why']})")
        elif r["stop"]:
            print(f"{head}: STOP")
            print(wrap(r["why"], "    "))
            print(
                wrap(f"safer turn: {r.get('safer') or '(say nothing about the patient)'}", "    ")
            )
        else:
            print(f"{head}: may go")
    print(f"{len(result['stopped'])} turn(s) stopped of {len(results)}")
    return 0
