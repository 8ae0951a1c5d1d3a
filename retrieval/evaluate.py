"""Retrieval measured against the gold regulations of the court cases.

hit@k: the share of cases with at least one gold regulation in the top k; recall@k: the mean
share of each case's gold regulations found in the top k; MRR: the mean of 1/rank of the first
gold regulation (0 when none in the top 10). At paragraph level a retrieved paragraph finds a
gold one when it is that paragraph or lies under it; at section level, when it is in the same
section. Cases with no gold regulations are skipped and counted.
"""

from __future__ import annotations

import ast
import csv
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privacy_checklist.retrieval.base import section_of

_ID = re.compile(r"\b1[6][024]\.\d{3,4}(?:\([^()\s]{1,40}\))*")


@dataclass(frozen=True, slots=True)
class GoldCase:
    case_id: str
    text: str
    label: str
    gold: tuple[str, ...]
    characteristics: str = ""
    characteristics: str = ""


def _ids(value: str) -> list[str]:
    if not value or value.strip().lower() in ("nan", "none", "[]"):
        return []
    try:
        parsed = ast.literal_eval(value)
        if isinstance(parsed, list | tuple):
            return [str(v).strip() for v in parsed if str(v).strip()]
    except (ValueError, SyntaxError):
        pass
    return _ID.findall(value)


def read_cases(path: Path) -> list[GoldCase]:
    """A case CSV of ../shared/data/cases (narrative, label, gold regulation ids)."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such case file")
    with Path(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or "generate_background" not in reader.fieldnames:
            raise ValueError(f"{path}: not a case file (no generate_background column)")
        cases = []
        for number, row in enumerate(reader, start=1):
            gold: list[str] = []
            for column in ("refer_id", "generate_regulation_ids"):
                gold += _ids(row.get(column) or "")
            listed = (row.get("refer_regulation") or "").lstrip()
            if listed.startswith("["):  # the real cases list their regulations there
                gold += _ids(listed)
            cases.append(
                GoldCase(
                    row.get("case_id") or str(number),
                    row["generate_background"],
                    row.get("generate_HIPAA_type", ""),
                    tuple(dict.fromkeys(gold)),
                    row.get("generate_characteristics") or "",
                )
            )
    return cases


def _found(retrieved: str, gold: str, level: str) -> bool:
    if level == "section":
        return section_of(retrieved) == section_of(gold)
    return retrieved == gold or retrieved.startswith(gold + "(")


def score_case(ranked: Sequence[str], gold: Sequence[str], level: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (1, 5, 10):
        top = ranked[:k]
        out[f"hit@{k}"] = float(any(_found(r, g, level) for r in top for g in gold))
    top10 = ranked[:10]
    out["recall@10"] = sum(any(_found(r, g, level) for r in top10) for g in gold) / len(gold)
    first = next(
        (i for i, r in enumerate(top10, start=1) if any(_found(r, g, level) for g in gold)), 0
    )
    out["mrr"] = 1.0 / first if first else 0.0
    return out


def evaluate(
    cases: Sequence[GoldCase],
    search: Callable[[str], list[str]],
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    totals: dict[str, dict[str, float]] = {"section": {}, "paragraph": {}}
    n = skipped = 0
    for case in cases:
        if not case.gold or not case.text.strip():
            skipped += 1
            continue
        ranked = search(case.text)
        n += 1
        for level in totals:
            for key, value in score_case(ranked, case.gold, level).items():
                totals[level][key] = totals[level].get(key, 0.0) + value
        if progress is not None:
            progress()
    return {
        "n": n,
        "skipped": skipped,
        **{
            level: {k: round(v / n, 4) if n else 0.0 for k, v in values.items()}
            for level, values in totals.items()
        },
    }
