"""Case files, and retrieval measured against the gold regulations of their cases.

A case file is a CSV of ../shared/data/cases: the narrative (``generate_background``), the gold
label (``generate_HIPAA_type``: Permit, Forbid, Not Applicable, or a synonym read by
:func:`case_label`) and the gold regulation ids. :func:`read_case_file` keeps the usable rows
and lists the others by line and reason.

hit@k: the share of cases with at least one gold regulation in the top k; recall@k: the mean
share of each case's gold regulations found in the top k; MRR: the mean of 1/rank of the first
gold regulation (0 when none in the top 10). At paragraph level a retrieved paragraph finds a
gold one when it is that paragraph or lies under it; at section level, when it is in the same
section. Cases with no gold regulations are skipped and counted.
"""

from __future__ import annotations

import ast
import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privacy_checklist.kg.citations import ids_in
from privacy_checklist.kg.ids import RegId

#: Every spelling of a gold label met in case files (lower-cased, ``_`` and ``-`` read as
#: spaces), by label. One mapping for every reader of case files (:func:`case_label`).
LABEL_SYNONYMS: dict[str, tuple[str, ...]] = {
    "permit": ("permit", "permits", "permitted", "permissible", "allow", "allowed"),
    "prohibit": (
        "forbid",
        "forbids",
        "forbidden",
        "prohibit",
        "prohibits",
        "prohibited",
        "not permitted",
        "not allowed",
        "violation",
    ),
    "not_applicable": (
        "not applicable",
        "n/a",
        "na",
        "inapplicable",
        "not covered",
        "not covered by hipaa",
        "hipaa not applicable",
    ),
}
#: How the shipped case files spell each label.
CSV_LABELS = {"permit": "Permit", "prohibit": "Forbid", "not_applicable": "Not Applicable"}
_LABEL_OF = {word: label for label, words in LABEL_SYNONYMS.items() for word in words}
LABEL_COLUMN = "generate_HIPAA_type"
TEXT_COLUMN = "generate_background"
LABEL_HELP = "Permit, Forbid or Not Applicable (or permitted, prohibited, not applicable ...)"


def case_label(value: object) -> str | None:
    """The label (permit / prohibit / not_applicable) of a gold label as a case file writes it,
    in any case and spacing (``Forbid``, ``prohibited``, ``not applicable``); None for anything
    else, so that an unknown label is reported, never guessed."""
    if not isinstance(value, str):
        return None
    key = " ".join(value.replace("_", " ").replace("-", " ").split()).lower()
    return _LABEL_OF.get(key)


class CaseFileError(ValueError):
    """A case file cannot be read at all; the message names it and the way out."""


@dataclass(frozen=True, slots=True)
class GoldCase:
    """One row of a case file. ``label`` is the gold label as the shipped files spell it
    (``Permit``, ``Forbid``, ``Not Applicable``; a synonym is brought to it), ``expected`` the
    same as permit / prohibit / not_applicable (None when the row has no readable label), and
    ``line`` the line of the file the row starts on."""

    case_id: str
    text: str
    label: str
    gold: tuple[str, ...]
    characteristics: str = ""
    line: int = 0
    expected: str | None = None


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """A row that cannot be used, and why (to be reported, never dropped in silence)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class CaseFile:
    """The usable cases of a case file and the rows skipped."""

    path: Path
    cases: list[GoldCase]
    skipped: list[SkippedRow]


def _ids(value: str) -> list[str]:
    """The gold regulation ids of a cell: a Python list of ids, or ids in free text, each
    normalised (:func:`~privacy_checklist.kg.citations.ids_in`); a listed item that holds no
    id is kept as written."""
    if not value or value.strip().lower() in ("nan", "none", "[]"):
        return []
    try:
        parsed = ast.literal_eval(value)
        if isinstance(parsed, list | tuple):
            out = []
            for item in (str(v).strip() for v in parsed):
                found = ids_in(item)
                out += [str(f.id) for f in found] if found else [item] if item else []
            return out
    except (ValueError, SyntaxError):
        pass
    return [str(f.id) for f in ids_in(value)]


def _breaks(value: object) -> int:
    """Line breaks inside a cell (a list: the cells beyond the header)."""
    if isinstance(value, list):
        return sum(_breaks(v) for v in value)
    return value.count("\n") if isinstance(value, str) else 0


def read_case_file(path: Path | str, need_label: bool = True) -> CaseFile:
    """A case CSV of ../shared/data/cases (narrative, gold label, gold regulation ids).

    Rows that cannot be used are skipped and listed with their line and reason: an empty
    narrative, a repeated case id, and (``need_label``, as for ``eval``) a missing or unknown
    gold label. Labels are read with :func:`case_label`.

    Raises:
        CaseFileError: no such file, a folder, not UTF-8, not a CSV, or a column missing.
    """
    path = Path(path)
    if path.is_dir():
        raise CaseFileError(
            f"{path}: is a folder, not a case file; pass one CSV of it (e.g. "
            f"{path / 'val_generate_cases_hipaa_applicability.csv'})"
        )
    if not path.is_file():
        raise CaseFileError(f"{path}: no such case file")
    cases: list[GoldCase] = []
    skipped: list[SkippedRow] = []
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            if TEXT_COLUMN not in columns:
                raise CaseFileError(
                    f"{path}: not a case file (no {TEXT_COLUMN} column"
                    + (f"; its columns: {', '.join(columns[:8])}" if columns else ", no header")
                    + ")"
                )
            if need_label and LABEL_COLUMN not in columns:
                raise CaseFileError(
                    f"{path}: no {LABEL_COLUMN} column (the gold label: {LABEL_HELP}); "
                    "add one to score the cases"
                )
            for number, row in enumerate(reader, start=1):
                line = reader.line_num - sum(_breaks(v) for v in row.values())
                case_id = (row.get("case_id") or "").strip() or str(number)
                text = row.get(TEXT_COLUMN) or ""
                written = (row.get(LABEL_COLUMN) or "").strip()
                expected = case_label(written)
                problem = None
                if not text.strip():
                    problem = f"empty narrative ({TEXT_COLUMN})"
                elif need_label and not written:
                    problem = f"no gold label ({LABEL_COLUMN} is empty; write {LABEL_HELP})"
                elif need_label and expected is None:
                    problem = f"gold label {written!r} is not one of {LABEL_HELP}"
                elif case_id in seen:
                    problem = f"case id {case_id!r} again (first on line {seen[case_id]})"
                if problem is not None:
                    skipped.append(SkippedRow(line, problem))
                    continue
                seen[case_id] = line
                gold: list[str] = []
                for column in ("refer_id", "generate_regulation_ids"):
                    gold += _ids(row.get(column) or "")
                listed = (row.get("refer_regulation") or "").lstrip()
                if listed.startswith("["):  # the real cases list their regulations there
                    gold += _ids(listed)
                cases.append(
                    GoldCase(
                        case_id,
                        text,
                        CSV_LABELS[expected] if expected else written,
                        tuple(dict.fromkeys(gold)),
                        row.get("generate_characteristics") or "",
                        line,
                        expected,
                    )
                )
    except UnicodeDecodeError as exc:
        raise CaseFileError(
            f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8 CSV"
        ) from exc
    except csv.Error as exc:
        raise CaseFileError(f"{path}: not a readable CSV ({exc})") from exc
    return CaseFile(path, cases, skipped)


def read_cases(path: Path | str) -> list[GoldCase]:
    """The usable cases of a case file, whatever their label (see :func:`read_case_file`)."""
    return read_case_file(path, need_label=False).cases


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
