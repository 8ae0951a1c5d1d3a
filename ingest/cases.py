"""Case files: the CSVs of ../shared/data/cases read into :class:`Case` records.

A case file holds, per row, the narrative (``generate_background``), the gold label
(``generate_HIPAA_type``: Permit, Forbid, Not Applicable, or a synonym read by
:func:`case_label`), the gold CI tuple (``generate_characteristics``) and the gold regulations
(``refer_id``, ``generate_regulation_ids``, and ``refer_regulation`` when it holds a list).
:func:`read_case_file` keeps the usable rows and lists the others by line and reason.

The gold regulations are kept as the file writes them: ``ingest/`` knows no regulation id
(those are ``kg/``'s); :func:`privacy_checklist.retrieval.evaluate.gold_ids` reads the ids in
them with the knowledge base's one id finder. :data:`LABEL_SYNONYMS` is the one mapping from
the ways case files write a label to the verdict labels (``permit``, ``prohibit``,
``not_applicable``); :class:`privacy_checklist.reasoning.verdict.Label` reads labels with it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
CHARACTERISTICS_COLUMN = "generate_characteristics"
#: The columns that hold gold regulations (``refer_regulation`` only when it is a list).
REGULATION_COLUMNS = ("refer_id", "generate_regulation_ids")
LISTED_REGULATION_COLUMN = "refer_regulation"
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One case: its narrative and, where the file gives them, its gold label, gold CI tuple
    and gold regulations.

    Attributes:
        case_id: the row's ``case_id`` (else its number among the rows).
        text: the narrative.
        label: the gold label as the shipped files spell it (``Permit``, ``Forbid``,
            ``Not Applicable``; a synonym is brought to it); as written when unreadable.
        expected: the same as permit / prohibit / not_applicable; None when the row has no
            readable label.
        regulations: the gold regulation cells as the file writes them (a Python list of ids,
            or ids in free text); see :func:`privacy_checklist.retrieval.evaluate.gold_ids`.
        characteristics: the gold CI tuple as the file writes it (a Python dict), or ''.
        line: the line of the file the row starts on.
    """

    case_id: str
    text: str
    label: str = ""
    expected: str | None = None
    regulations: tuple[str, ...] = ()
    characteristics: str = ""
    line: int = 0


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
    cases: list[Case]
    skipped: list[SkippedRow]


def _breaks(value: object) -> int:
    """Line breaks inside a cell (a list: the cells beyond the header)."""
    if isinstance(value, list):
        return sum(_breaks(v) for v in value)
    return value.count("\n") if isinstance(value, str) else 0


def _regulations(row: dict[str, str | None]) -> tuple[str, ...]:
    """The row's non-empty gold regulation cells, in column order."""
    cells = [row.get(column) or "" for column in REGULATION_COLUMNS]
    listed = row.get(LISTED_REGULATION_COLUMN) or ""
    if listed.lstrip().startswith("["):  # the real cases list their regulations there
        cells.append(listed)
    return tuple(cell for cell in cells if cell.strip())


def _check_shape(path: Path, line: int, row: dict[str | None, Any], columns: list[str]) -> None:
    """Refuse a row that is not one row: fewer or more cells than the header, or a cell that
    holds whole rows (an unbalanced quote mark reads on to the next quote, taking the rows
    between into one narrative).

    Raises:
        CaseFileError: naming the row's line and what is wrong with it.
    """
    width = len(columns)
    label = columns.index(LABEL_COLUMN) if LABEL_COLUMN in columns else None
    cells = [v for k, v in row.items() if k is not None]
    extra = row.get(None)
    if any(v is None for v in cells) or extra:
        count = sum(v is not None for v in cells) + (len(extra) if isinstance(extra, list) else 0)
        raise CaseFileError(
            f"{path}:{line}: this row has {count} cells, the header {width}; an unbalanced "
            'quote mark (") or a missing one is the usual cause: close it, or write a quote '
            'inside a cell as ""'
        )
    for value in cells:
        lines = value.split("\n") if isinstance(value, str) else []
        for offset, text in enumerate(lines[1:], start=1):
            fields = next(csv.reader([text]), [])
            # a line of the cell that reads as a row of its own: as many cells, a gold label
            if label is not None and len(fields) >= width and case_label(fields[label]):
                raise CaseFileError(
                    f'{path}:{line}: an unbalanced quote mark (") in this row takes line '
                    f"{line + offset} ({text[:40]!r}...) into its cell as if it were text; close "
                    'the quote, or write a quote inside a cell as ""'
                )


def read_case_file(path: Path | str, *, need_label: bool = True) -> CaseFile:
    """A case CSV of ../shared/data/cases (narrative, gold label, gold regulations), or a
    writer's set of the labelled corpus (``.jsonl``: :mod:`~privacy_checklist.ingest.corpus`).

    Rows that cannot be used are skipped and listed with their line and reason: an empty
    narrative, a repeated case id, and (``need_label``, as for ``eval``) a missing or unknown
    gold label. Labels are read with :func:`case_label`.

    Raises:
        CaseFileError: no such file, a folder, not UTF-8, not a CSV, or a column missing.
    """
    path = Path(path)
    if path.suffix == ".jsonl" and path.is_file():  # a writer's set of the labelled corpus
        return _corpus_file(path)
    if path.is_dir():
        raise CaseFileError(
            f"{path}: is a folder, not a case file; pass one CSV of it (e.g. "
            f"{path / 'val_generate_cases_hipaa_applicability.csv'})"
        )
    if not path.is_file():
        raise CaseFileError(f"{path}: no such case file")
    cases: list[Case] = []
    skipped: list[SkippedRow] = []
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            _check_columns(path, list(columns), need_label)
            last = reader.line_num  # the header's last line
            for number, row in enumerate(reader, start=1):
                # a row starts after the last one (a cell that ends the file with its line
                # break is no earlier row), or later where blank lines were skipped
                line = max(last + 1, reader.line_num - sum(_breaks(v) for v in row.values()))
                last = reader.line_num
                _check_shape(path, line, row, list(columns))
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
                cases.append(
                    Case(
                        case_id=case_id,
                        text=text,
                        label=CSV_LABELS[expected] if expected else written,
                        expected=expected,
                        regulations=_regulations(row),
                        characteristics=row.get(CHARACTERISTICS_COLUMN) or "",
                        line=line,
                    )
                )
    except UnicodeDecodeError as exc:
        raise CaseFileError(
            f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8 CSV"
        ) from exc
    except csv.Error as exc:
        raise CaseFileError(f"{path}: not a readable CSV ({exc})") from exc
    return CaseFile(path, cases, skipped)


def _check_columns(path: Path, columns: list[str], need_label: bool) -> None:
    """A case CSV's header has the narrative's column (and the gold label's, ``need_label``).

    Raises:
        CaseFileError: a column missing.
    """
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


def _corpus_file(path: Path) -> CaseFile:
    """A writer's set of the labelled corpus as a case file."""
    from privacy_checklist.ingest.corpus import read_corpus

    corpus = read_corpus([path])
    return CaseFile(path, [n.case() for n in corpus.narratives], [row for _, row in corpus.skipped])


def read_cases(path: Path | str) -> list[Case]:
    """The usable cases of a case file, whatever their label (see :func:`read_case_file`)."""
    return read_case_file(path, need_label=False).cases
