"""Take finished answers writers' sets into the answers corpus: each writer's ``answers.jsonl``
checked (a known question, a label of that question or null, ``committed`` words that are the
answer's) and written to ``bench/data/answer_corpus/WRITER.jsonl`` with its writer; unusable
lines listed, never silently dropped.

    python bench/answer_corpus/collect.py /work/answer_corpus/writers a01 a02 ...

A set already in the corpus is left as it is unless ``--replace`` (a set is read once, as
written, before anything changes on it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from privacy_checklist.reasoning.llm.answers import QUESTIONS

CORPUS = Path(__file__).resolve().parents[1] / "data" / "answer_corpus"
sys.path.insert(0, str(CORPUS.parents[1]))

from common import collect_json  # noqa: E402


def check(row: object) -> dict[str, Any]:
    """The answer as the corpus keeps it.

    Raises:
        ValueError: what is wrong with it.
    """
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    question = row.get("question")
    if question not in QUESTIONS:
        raise ValueError(f"question {question!r} is not one of {', '.join(QUESTIONS)}")
    if not isinstance(row.get("text"), str) or not row["text"].strip():
        raise ValueError("no text")
    if "label" not in row or (row["label"] is not None and row["label"] not in QUESTIONS[question]):
        raise ValueError(f"label {row.get('label')!r} is not one of {question}'s labels or null")
    committed = row.get("committed") or ""
    if committed and committed not in row["text"]:
        raise ValueError("committed words are not in the text")
    return row


if __name__ == "__main__":
    raise SystemExit(collect_json(__doc__, "answers.jsonl", CORPUS, check))
