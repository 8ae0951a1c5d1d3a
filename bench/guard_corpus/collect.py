"""Take finished drafts writers' sets into the guard's corpus: each writer's ``drafts.jsonl``
checked, its spans placed (a span's ``text`` and ``occurrence`` become ``start`` and ``end``),
each draft marked with its writer, and the set written to ``bench/data/guard_corpus/WRITER.jsonl``
in the labelled-drafts format ``pcheck guard-eval`` reads; its unusable lines listed, never
silently dropped.

    python bench/guard_corpus/collect.py /work/guard_corpus/writers d01 d02 ...

A writer's set is taken whole (its usable drafts) or not at all; one already in the corpus is
left as it is unless ``--replace`` (a set is read once, as written, before anything changes on
it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.reasoning.guard.evaluate import load_drafts

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from common import collect_json, span_start  # noqa: E402

CORPUS = HERE.parents[0] / "data" / "guard_corpus"
PURPOSES = set(json.loads((HERE / "purposes.json").read_text(encoding="utf-8"))["purposes"])


def place(draft: dict[str, Any]) -> dict[str, Any]:
    """The draft with each span's offsets (the ``occurrence``-th match of its text).

    Raises:
        ValueError: a span whose text is not in the draft that many times, or an unknown purpose.
    """
    if draft.get("purpose") not in PURPOSES:
        raise ValueError(f"purpose {draft.get('purpose')!r} is not a key of purposes.json")
    text = draft.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no text")
    spans = []
    for span in draft.get("spans") or []:
        start = span_start(text, span.get("text"), span.get("occurrence", 1))
        spans.append({**span, "start": start, "end": start + len(span["text"])})
    return {**draft, "spans": spans}


def check(row: object) -> dict[str, Any]:
    """A draft placed and checked as ``pcheck guard-eval`` reads it (a ValueError says why)."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    draft = place(row)
    load_drafts([json.dumps(draft)], "draft")
    return draft


if __name__ == "__main__":
    raise SystemExit(collect_json(__doc__, "drafts.jsonl", CORPUS, check))
