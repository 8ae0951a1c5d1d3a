"""Retrieval measured against the gold regulations of cases (``pcheck retrieval-eval``).

The cases are read by :mod:`privacy_checklist.ingest.cases`, which keeps their gold
regulations as the file writes them; :func:`gold_ids` reads the ids in them with the knowledge
base's one id finder (:func:`~privacy_checklist.kg.citations.ids_in`).

hit@k: the share of cases with at least one gold regulation in the top k; recall@k: the mean
share of each case's gold regulations found in the top k; MRR: the mean of 1/rank of the first
gold regulation (0 when none in the top 10). At paragraph level a retrieved paragraph finds a
gold one when it is that paragraph or lies under it; at section level, when it is in the same
section. Cases with no gold regulations are skipped and counted. The figures are given for all
the cases and for each slice of them by gold label (``slices``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from privacy_checklist.ingest.cases import Case, case_label
from privacy_checklist.kg.citations import ids_in
from privacy_checklist.kg.ids import RegId


@lru_cache(maxsize=4096)
def cell_ids(value: str) -> tuple[str, ...]:
    """The gold regulation ids of a case file's cell: a Python list of ids, or ids in free
    text, each normalised (:func:`~privacy_checklist.kg.citations.ids_in`); a listed item
    that holds no id is kept as written."""
    if not value or value.strip().lower() in ("nan", "none", "[]"):
        return ()
    try:
        parsed = ast.literal_eval(value)
        if isinstance(parsed, list | tuple):
            out: list[str] = []
            for item in (str(v).strip() for v in parsed):
                found = ids_in(item)
                out += [str(f.id) for f in found] if found else [item] if item else []
            return tuple(out)
    except (ValueError, SyntaxError):
        pass
    return tuple(str(f.id) for f in ids_in(value))


def gold_ids(case: Case) -> tuple[str, ...]:
    """A case's gold regulation ids, normalised, in file order, without repeats."""
    return tuple(dict.fromkeys(i for cell in case.regulations for i in cell_ids(cell)))


def _found(retrieved: str, gold: str, level: str) -> bool:
    """Whether a retrieved unit finds a gold one: at paragraph level it is the gold unit or
    lies under it, at section level it is in the same section (see the module docstring)."""
    got, wanted = RegId.try_parse(retrieved), RegId.try_parse(gold)
    if got is None or wanted is None:
        return retrieved == gold
    if level == "section":
        return (got.section or str(got)) == (wanted.section or str(wanted))
    return got.is_under(wanted)


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
    cases: Sequence[Case],
    search: Callable[[str], list[str]],
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """hit@k, recall@10 and MRR of ``search`` (a case's narrative -> ranked node ids) over the
    cases that have gold regulations, at section and paragraph level."""
    slices: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, int] = {}
    n = skipped = 0
    for case in cases:
        gold = gold_ids(case)
        if not gold or not case.text.strip():
            skipped += 1
            continue
        ranked = search(case.text)
        n += 1
        for name in ("all", f"label={label_of(case)}"):
            counts[name] = counts.get(name, 0) + 1
            totals = slices.setdefault(name, {"section": {}, "paragraph": {}})
            for level in totals:
                for key, value in score_case(ranked, gold, level).items():
                    totals[level][key] = totals[level].get(key, 0.0) + value
        if progress is not None:
            progress()

    def means(name: str) -> dict[str, dict[str, float]]:
        totals = slices.get(name, {"section": {}, "paragraph": {}})
        m = counts.get(name, 0)
        return {
            level: {k: round(v / m, 4) if m else 0.0 for k, v in values.items()}
            for level, values in totals.items()
        }

    return {
        "n": n,
        "skipped": skipped,
        **means("all"),
        "slices": {
            name.removeprefix("label="): {"n": counts[name], **means(name)}
            for name in sorted(slices)
            if name != "all"
        },
    }


def label_of(case: Case) -> str:
    """The case's gold label as the reasoning reads it ("permit", "prohibit",
    "not_applicable"), or "unlabelled"."""
    return case_label(case.label) or "unlabelled"
