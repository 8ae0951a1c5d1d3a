"""Labeled phrase lists (``phrase<TAB>expected``) and the top-1 accuracy of a resolver on them.

``expected`` is a label, ``none``, or alternatives joined with ``|`` (any one counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privacy_checklist.kg.concepts import Match, Resolver


class LabelFileError(ValueError):
    """A labeled list is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Labeled:
    phrase: str
    expected: tuple[str, ...]
    line: int


def read_labels(path: Path) -> list[Labeled]:
    """Read a labeled list; blank lines and ``#`` comments are skipped.

    Raises:
        LabelFileError: a line without exactly one tab, an empty phrase or label, bad UTF-8.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LabelFileError(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise LabelFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    rows: list[Labeled] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise LabelFileError(f"{path}:{number}: expected 'phrase<TAB>label', got {line!r}")
        labels = tuple(label.strip() for label in parts[1].split("|") if label.strip())
        rows.append(Labeled(parts[0].strip(), labels, number))
    if not rows:
        raise LabelFileError(f"{path}: no labeled phrases")
    return rows


def evaluate(
    resolver: Resolver,
    rows: Sequence[Labeled],
    label_of: Callable[[Match | None], str],
) -> dict[str, Any]:
    """Top-1 accuracy, per expected label, and the misses with what was found instead."""
    per_label: Counter[str] = Counter()
    right: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    for row in rows:
        matches = resolver.resolve(row.phrase, 1)
        got = label_of(matches[0] if matches else None)
        key = row.expected[0]
        per_label[key] += 1
        if got in row.expected:
            right[key] += 1
        else:
            misses.append(
                {
                    "line": row.line,
                    "phrase": row.phrase,
                    "expected": "|".join(row.expected),
                    "got": got,
                    "path": list(matches[0].path) if matches else [],
                }
            )
    total = sum(per_label.values())
    return {
        "n": total,
        "correct": sum(right.values()),
        "accuracy": round(sum(right.values()) / total, 4) if total else 0.0,
        "per_label": {k: {"n": n, "correct": right[k]} for k, n in sorted(per_label.items())},
        "misses": misses,
    }
