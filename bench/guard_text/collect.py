"""Take finished clinical-text writers' sets (notes and questions, issue 28) into
``bench/data/guard_text/WRITER.jsonl``: each item checked, its spans placed (a span's ``text``
and ``occurrence`` become ``start`` and ``end``), marked with its writer; unusable lines listed,
never silently dropped.

    python bench/guard_text/collect.py /work/guard_text/writers n01 q01 ...

A set already in the corpus is left as it is unless ``--replace``.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from common import collect_json, span_start  # noqa: E402

CORPUS = HERE.parent / "data" / "guard_text"
TYPES = frozenset(
    "NAME DATE AGE_OVER_89 PHONE FAX EMAIL URL IP ID ADDRESS LOCATION HOSPITAL".split()
)
KINDS = frozenset({"note", "question"})


def place(row: object) -> dict[str, Any]:
    """The item with each span's offsets (a ValueError says why it is unusable)."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no text")
    if row.get("kind") not in KINDS:
        raise ValueError(f"kind {row.get('kind')!r} is not note or question")
    spans = []
    for span in row.get("spans") or []:
        words, kind = span.get("text"), span.get("type")
        start = span_start(text, words, span.get("occurrence", 1))
        if kind not in TYPES:
            raise ValueError(f"span {words!r}: type {kind!r} is not one of the list")
        spans.append({"text": words, "type": kind, "start": start, "end": start + len(str(words))})
    spans.sort(key=lambda s: (s["start"], s["end"]))
    for a, b in itertools.pairwise(spans):
        if b["start"] < a["end"]:
            raise ValueError(f"spans {a['text']!r} and {b['text']!r} overlap")
    return {**row, "spans": spans}


if __name__ == "__main__":
    raise SystemExit(collect_json(__doc__, "items.jsonl", CORPUS, place))
