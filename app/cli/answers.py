"""Reading recorded model answers: ``pcheck answers --file ANSWERS.jsonl``.

One answer a line (``{"id": ..., "text": ...}``; a line may name its own ``question``); each is
read as the LLM methods read answers (:func:`privacy_checklist.reasoning.llm.answers.read_answer`:
the JSON field, the final ``Answer:`` line, an answer that is only a label, else the prose
reader), and printed with its label or null and the reason, then the counts. A line that also
carries ``label`` (what a person reads in it, null for no verdict) is compared: agreement where
a person reads a verdict, the share called unreadable where a person reads none, and the wrong
labels.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from privacy_checklist.app.cli.common import CliError, print_json, read_text_file
from privacy_checklist.app.cli.options import json_option

#: the most lines one file may hold
MAX_LINES = 200_000


def _rows(name: str, question: str) -> list[dict[str, Any]]:
    from privacy_checklist.reasoning.llm.answers import QUESTIONS

    text = read_text_file(name)
    if "\x00" in text:
        raise CliError(f"{name}: binary, not JSON lines; give one JSON object a line")
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(rows) >= MAX_LINES:
            raise CliError(f"{name}: more than {MAX_LINES:,} answers; split the file")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CliError(
                f"{name}:{number}: not JSON ({exc.msg}); one JSON object a line"
            ) from exc
        if not isinstance(row, dict) or not isinstance(row.get("text"), (str, type(None))):
            raise CliError(f'{name}:{number}: needs {{"id": ..., "text": "..."}}')
        if "text" not in row:
            raise CliError(
                f'{name}:{number}: no "text" field (the answer); write "text": null for an '
                "answer that was empty"
            )
        asked = row.get("question", question)
        if asked not in QUESTIONS:
            raise CliError(
                f"{name}:{number}: question {asked!r} is not one of {', '.join(QUESTIONS)}"
            )
        if "label" in row and row["label"] is not None and row["label"] not in QUESTIONS[asked]:
            raise CliError(
                f"{name}:{number}: label {row['label']!r} is not one of "
                f"{', '.join(QUESTIONS[asked])} (or null)"
            )
        rows.append({**row, "id": row.get("id", number), "question": asked, "line": number})
    if not rows:
        raise CliError(f"{name}: no answer in the file")
    return rows


def compare(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Agreement with what a person reads, for the rows that say it (``label``)."""
    judged = [r for r in rows if "label" in r]
    if not judged:
        return None
    committed = [r for r in judged if r["label"] is not None]
    none = [r for r in judged if r["label"] is None]
    agree = sum(r["read"] == r["label"] for r in committed)
    unreadable = sum(r["read"] is None for r in none)
    wrong = sum(r["read"] is not None and r["read"] != r["label"] for r in judged)

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "judged": len(judged),
        "committed": len(committed),
        "agreement": share(agree, len(committed)),
        "agree": agree,
        "no_verdict": len(none),
        "unreadable_when_none": share(unreadable, len(none)),
        "unreadable": unreadable,
        "wrong": wrong,
        "wrong_share": share(wrong, len(judged)),
    }


def cmd_answers(args: argparse.Namespace) -> int:
    from privacy_checklist.reasoning.llm.answers import read_answer

    rows = _rows(args.file, args.question)
    for row in rows:
        read = read_answer(row.get("text"), row["question"])
        row["read"], row["reason"], row["how"] = read.label, read.reason, read.how
    counts = Counter("null" if r["read"] is None else r["read"] for r in rows)
    result = {
        "file": args.file,
        "answers": [
            {
                "id": r["id"],
                "question": r["question"],
                "label": r["read"],
                "how": r["how"] or None,
                "reason": r["reason"] or None,
                **({"person": r["label"]} if "label" in r else {}),
            }
            for r in rows
        ],
        "counts": dict(sorted(counts.items())),
        "compared": compare(rows),
    }
    if args.json:
        print_json(result)
        return 0
    for r in result["answers"]:
        said = r["label"] if r["label"] is not None else "null"
        why = f"  ({r['how']})" if r["label"] is not None else f"  {r['reason']}"
        person = f"  [person: {r['person'] or 'null'}]" if "person" in r else ""
        print(f"{r['id']}\t{said}{why}{person}")
    print("counts: " + ", ".join(f"{k} {v}" for k, v in result["counts"].items()))
    c = result["compared"]
    if c is not None:
        print(
            f"against the person's reading ({c['judged']} answers): agreement "
            f"{c['agree']}/{c['committed']} ({c['agreement']}), unreadable where none "
            f"{c['unreadable']}/{c['no_verdict']} ({c['unreadable_when_none']}), wrong "
            f"{c['wrong']} ({c['wrong_share']})"
        )
    return 0


def register(sub: Any) -> None:
    from privacy_checklist.reasoning.llm.answers import QUESTIONS

    p = sub.add_parser(
        "answers",
        help="read recorded model answers (JSON lines) as the LLM methods read them",
        description='Read one answer a line of a JSON-lines file ({"id": ..., "text": ...}) '
        "as the LLM methods do: the JSON field, the final 'Answer:' line, an answer that is "
        "only a label, else the prose reader (concluding statements, negation, hedges, "
        "conditions and contradictions read as unreadable, never a default label). Prints each "
        "answer's label or null with the reason, then the counts; lines that carry 'label' (what "
        "a person reads, null for none) are compared with it.",
    )
    p.add_argument("--file", required=True, metavar="ANSWERS.jsonl", help="- reads stdin")
    p.add_argument(
        "--question",
        choices=tuple(QUESTIONS),
        default="verdict",
        help="what the answers answer (a line's own 'question' wins): verdict (permit / "
        "prohibit / not_applicable, default), applicability (applies / does_not_apply), "
        "compliance (complies / violates)",
    )
    json_option(p)
    p.set_defaults(func=cmd_answers)
