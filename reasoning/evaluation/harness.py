"""The evaluation harness: run a method over a case file, resumably, and measure it.

Each case's result is appended to ``<out>/<method>.jsonl`` as soon as it is known (case id,
verdict, gold, norms, reasoning, and ``inputs``: a digest of the narrative, the gold label and
everything that decided the verdict — method, parameters, model, prompts, knowledge base and
model digests, see :func:`~privacy_checklist.reasoning.methods.decision_settings`). An
interrupted run continues where it stopped: a logged case is reused only when its ``inputs`` are
the ones of this run and it was decided; otherwise (new narrative or label, another model or
parameter, an LLM request that failed) it is decided again and the new line, appended,
supersedes the old one (the last line of a case is the one read). A torn line left by a killed
run is dropped from the log, with a note. One run at a time writes into a folder
(:func:`locked`).

Metrics follow the labels permit / prohibit / not_applicable: accuracy, macro-F1, per-class
precision, recall, F1 and support, the confusion matrix (rows gold, columns predicted) and the
parse failures, which count as wrong. Cases whose LLM request failed (``request_failure``) are
not scored: they are counted apart (``request_failures``, ``undecided``), since they say nothing
about the method. A PNG of the confusion matrix is drawn with Pillow.

When the cases have gold regulations (:func:`gold_references`; each record also keeps them, as
``gold_refs``), the metrics add two figures (:func:`citation_figures`, :func:`accuracy_by_norm`):
how often a norm the verdict cites is in a gold regulation's section, and is a gold paragraph
or its ancestor or descendant (over the cases that cite a norm and have gold regulations, also
per gold label; the others are counted as not scored), and the accuracy by the case's first
gold regulation.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.metrics import per_class
from privacy_checklist.reasoning.verdict import LABELS, PARSE_FAILURE, CitedNorm, Label
from privacy_checklist.retrieval.evaluate import gold_ids

if TYPE_CHECKING:
    from privacy_checklist.ingest.cases import Case

try:
    import fcntl
except ImportError:  # not on POSIX: no lock
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".pcheck-eval.lock"


class FolderBusy(Exception):
    """Another run is writing into the folder; the message names it."""


@dataclass
class RunStats:
    """What a run did with the cases of one method (for its notes and an interruption)."""

    reused: int = 0
    decided: int = 0
    superseded: int = 0  # logged, decided again: what decided them changed
    changed: Counter[str] = field(default_factory=Counter)  # what changed, by input
    retried: int = 0  # logged without a verdict (a request failed), asked again
    notes: list[str] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return self.reused + self.decided


_HELD: dict[tuple[str, int], int] = {}
_HELD_LOCK = threading.Lock()


@contextmanager
def locked(out: Path) -> Iterator[Path]:
    """Hold ``out`` (created when missing) for one run: a second run into it, while this one
    runs, gets :class:`FolderBusy` at once. The same thread may enter again (``run`` inside
    ``pcheck eval``).

    Raises:
        FolderBusy: another run holds the folder.
        OSError: the folder cannot be made or written.
    """
    out.mkdir(parents=True, exist_ok=True)
    key = (str(out.resolve()), threading.get_ident())
    with _HELD_LOCK:
        if _HELD.get(key):
            _HELD[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield out
        finally:
            with _HELD_LOCK:
                _HELD[key] -= 1
        return
    handle = (out / LOCK_FILE).open("a+", encoding="utf-8")
    try:
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip()
                raise FolderBusy(
                    f"{out}: another pcheck eval is writing into this folder"
                    + (f" (process {holder})" if holder.isdigit() else "")
                    + "; wait for it to end or pass another --out"
                ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        with _HELD_LOCK:
            _HELD[key] = 1
        try:
            yield out
        finally:
            with _HELD_LOCK:
                _HELD.pop(key, None)
    finally:
        handle.close()  # closing releases the lock


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _changes(before: Any, now: dict[str, Any]) -> list[str]:
    """The inputs that differ between a logged record and this run."""
    if not isinstance(before, dict) or not before:
        return ["logged by an older version"]
    return [k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]


def undecided(record: dict[str, Any]) -> bool:
    """No verdict because a request failed (older logs: ``retry`` set)."""
    return record.get("verdict") == Label.REQUEST_FAILURE or bool(record.get("retry"))


class GoldCase(Protocol):
    """What an evaluation reads of a case (:class:`privacy_checklist.ingest.cases.Case`)."""

    @property
    def case_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def label(self) -> str: ...


def case_gold_refs(case: object) -> list[str] | None:
    """A case's gold regulation ids, normalised, in file order, without repeats (as
    :func:`privacy_checklist.retrieval.evaluate.gold_ids` reads them); None for a case that
    carries no ``regulations`` at all (not a case read from a case file)."""
    if getattr(case, "regulations", None) is None:
        return None
    return list(gold_ids(cast("Case", case)))


def gold_references(cases: Iterable[object]) -> dict[str, list[str]]:
    """Case id -> gold regulation ids (:func:`case_gold_refs`), for :func:`metrics`."""
    refs: dict[str, list[str]] = {}
    for case in cases:
        found = case_gold_refs(case)
        if found is not None:
            refs[str(getattr(case, "case_id", ""))] = found
    return refs


def read_log(path: Path) -> dict[str, dict[str, Any]]:
    """The last record of each case in a log (lines that are not records are skipped)."""
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by an interruption: the case is asked again
        done[str(record["case_id"])] = record
    return done


def repair_log(path: Path) -> list[str]:
    """Drop the lines of a log that are not records (a line torn when a run was killed), so
    garbage never stays in it; returns notes saying what was dropped. The file is replaced
    atomically."""
    if not path.exists():
        return []
    data = path.read_bytes()
    kept: list[bytes] = []
    torn: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
            if not isinstance(record, dict) or "case_id" not in record:
                raise ValueError("not a case record")
        except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            torn.append(number)
            continue
        kept.append(line)
    repaired = b"".join(line + b"\n" for line in kept)
    if repaired == data:
        return []
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with temporary.open("wb") as handle:
        handle.write(repaired)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    if not torn:
        return []
    where = ", ".join(map(str, torn[:5])) + (" ..." if len(torn) > 5 else "")
    return [
        f"{path}: dropped {len(torn)} torn line{'s' if len(torn) > 1 else ''} (line {where}, "
        "left by a run that was stopped while writing); those cases are decided again"
    ]


def run(
    cases: Sequence[GoldCase],
    method: str,
    decide: Callable[[str], dict[str, Any]],
    out: Path,
    progress: Callable[[], object] | None = None,
    *,
    workers: int = 1,
    settings: dict[str, Any] | None = None,
    stats: RunStats | None = None,
) -> list[dict[str, Any]]:
    """Decide every case not validly in the log; return the records in case order.

    A logged record is reused when it was decided and its ``inputs`` (narrative and gold
    digests and ``settings``: what decided it) are this run's. With ``workers`` > 1, that many
    cases are decided at once (threads: for LLM methods, whose time is spent waiting on the
    endpoint); each record is appended as soon as its case is decided, so the log's order is
    the order of completion and a stop loses only the cases in flight (an interruption lets
    those finish and be logged, and starts no other).
    """
    stats = stats if stats is not None else RunStats()
    with locked(out):
        log = out / f"{method}.jsonl"
        stats.notes += repair_log(log)
        done = read_log(log)
        todo: list[tuple[GoldCase, dict[str, Any]]] = []
        for case in cases:
            gold = Label.of_case(case.label)
            inputs = {
                "narrative": text_digest(case.text),
                "gold": None if gold is None else gold.value,
                **(settings or {}),
            }
            previous = done.get(case.case_id)
            if (
                previous is not None
                and not undecided(previous)
                and previous.get("inputs") == inputs
            ):
                stats.reused += 1
                if progress is not None:
                    progress()
                continue
            if previous is not None and undecided(previous):
                stats.retried += 1
            elif previous is not None:
                stats.superseded += 1
                stats.changed.update(_changes(previous.get("inputs"), inputs))
            todo.append((case, inputs))
        lock = threading.Lock()
        with log.open("a", encoding="utf-8") as handle:

            def one(case: GoldCase, inputs: dict[str, Any]) -> None:
                result = decide(case.text)
                record = {
                    "case_id": case.case_id,
                    "method": method,
                    "gold": inputs["gold"],
                    **result,
                    "inputs": inputs,
                }
                refs = case_gold_refs(case)
                if refs is not None:
                    record["gold_refs"] = refs
                with lock:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                    done[case.case_id] = record
                    stats.decided += 1
                    if progress is not None:
                        progress()

            if workers <= 1:
                for case, inputs in todo:
                    one(case, inputs)
            else:
                pool = ThreadPoolExecutor(max_workers=workers)
                futures = [pool.submit(one, case, inputs) for case, inputs in todo]
                try:
                    for future in futures:
                        future.result()  # an exception in one case is raised, after the rest
                except KeyboardInterrupt:
                    for future in futures:
                        future.cancel()  # a stop starts no other case ...
                    raise
                finally:
                    pool.shutdown(wait=True)  # ... and keeps those in flight
    if stats.superseded:
        stats.notes.append(
            f"{method}: {stats.superseded} logged case(s) decided again, since what decided "
            f"them changed ({', '.join(key for key, _ in stats.changed.most_common())}); "
            "their old lines are superseded"
        )
    if stats.retried:
        stats.notes.append(
            f"{method}: {stats.retried} case(s) whose LLM request had failed asked again"
        )
    return [done[c.case_id] for c in cases if c.case_id in done]


class OtherCaseFile(Exception):
    """A run folder's log belongs to another case file; the message says what to do."""


def case_file_record(path: Path, cases: Sequence[GoldCase]) -> dict[str, Any]:
    """What identifies the case file of a run: its path, its content's digest and its case
    ids (the records a run's metrics and the browser count)."""
    return {
        "file": str(Path(path).resolve()),
        "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
        "ids": [c.case_id for c in cases],
    }


def claim_run(out: Path, method: str, case_file: Mapping[str, Any]) -> None:
    """Tie ``method``'s log in ``out`` to one case file (``<method>.run.json``): the same file
    (its content edited or not) resumes the run; another file is refused, since its records
    would mix with the earlier file's in one log. A log from before runs recorded their file
    is taken as this file's.

    Raises:
        OtherCaseFile: the log belongs to another case file.
    """
    marker = out / f"{method}.run.json"
    if marker.exists():
        try:
            earlier = json.loads(marker.read_text(encoding="utf-8")).get("cases", {})
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            earlier = {}
        other = earlier.get("file") if isinstance(earlier, dict) else None
        if other and other != case_file["file"]:
            raise OtherCaseFile(
                f"{out} holds {method}'s run on {other}; its log would mix that file's records "
                f"with {case_file['file']}'s: pass another --out for this case file (or delete "
                f"{marker.name} and {method}.jsonl to start the folder over)"
            )
    out.mkdir(parents=True, exist_ok=True)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps({"method": method, "cases": case_file}, indent=1), encoding="utf-8")
    os.replace(tmp, marker)


def metrics(
    records: Sequence[dict[str, Any]], gold_refs: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """The figures of the decided records; request failures are counted apart, not scored.

    ``gold_refs`` (case id -> gold regulation ids, :func:`gold_references`) gives the cases'
    gold regulations; a case it lacks is read from its record's ``gold_refs``. With them the
    figures add ``citations`` (:func:`citation_figures`) and ``by_norm``
    (:func:`accuracy_by_norm`).
    """
    failed = [r for r in records if undecided(r)]
    scored = [r for r in records if r.get("gold") in LABELS and not undecided(r)]
    confusion = {g: {p: 0 for p in (*LABELS, PARSE_FAILURE)} for g in LABELS}
    for record in scored:
        predicted = record.get("verdict")
        confusion[record["gold"]][predicted if predicted in LABELS else PARSE_FAILURE] += 1
    figures = per_class(confusion, LABELS)
    refs = [_gold_refs_of(record, gold_refs) for record in scored]
    return {
        **figures,
        "confusion": confusion,
        "parse_failures": sum(confusion[g][PARSE_FAILURE] for g in LABELS),
        # verdicts read from the model's answer to the restating question (methods.py)
        "restated": sum(
            1
            for r in scored
            if r.get("verdict") in LABELS
            and any(
                isinstance(a, Mapping) and str(a.get("step", "")).startswith("restate")
                for a in r.get("answers") or []
            )
        ),
        "request_failures": len(failed),
        "undecided": [str(r.get("case_id")) for r in failed],
        "citations": citation_figures(scored, refs),
        "by_norm": accuracy_by_norm(scored, refs),
    }


def _gold_refs_of(
    record: Mapping[str, Any], gold_refs: Mapping[str, Sequence[str]] | None
) -> list[str]:
    """A record's gold regulation ids: from ``gold_refs`` when it has the case, else logged."""
    case_id = str(record.get("case_id"))
    if gold_refs is not None and case_id in gold_refs:
        return [str(i) for i in gold_refs[case_id]]
    logged = record.get("gold_refs")
    return [str(i) for i in logged if i] if isinstance(logged, list) else []


def cited_ids(record: Mapping[str, Any]) -> list[str]:
    """The ids of the norms a logged verdict cites, in order, without repeats."""
    norms = record.get("norms")
    found = (CitedNorm.from_json(n) for n in (norms if isinstance(norms, list) else []))
    return list(dict.fromkeys(norm.id for norm in found if norm is not None))


def _section(reg: str) -> str:
    """The section of an id (``164.512`` for ``164.512(f)(1)(ii)``); the text itself for what
    names no section (a part, text that is not an id)."""
    parsed = RegId.try_parse(reg)
    return parsed.section if parsed is not None and parsed.section else reg


def _same_line(cited: str, gold: str) -> bool:
    """Whether ``cited`` is the paragraph ``gold``, or its ancestor or descendant within the
    same section (a part or subpart is no paragraph: only the same text matches it)."""
    a, b = RegId.try_parse(cited), RegId.try_parse(gold)
    if a is None or b is None or a.section is None or b.section is None:
        return cited == gold
    if a.section != b.section:
        return False
    n = min(len(a.labels), len(b.labels))
    return a.labels[:n] == b.labels[:n]


def citation_hits(cited: Sequence[str], gold: Sequence[str]) -> tuple[bool, bool]:
    """(section, paragraph): whether a cited id's section is a gold id's section, and whether a
    cited id is a gold paragraph or its ancestor or descendant."""
    sections = {_section(g) for g in gold}
    return (
        any(_section(c) in sections for c in cited),
        any(_same_line(c, g) for c in cited for g in gold),
    )


def _shares(hits: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    n = len(hits)
    section = sum(s for s, _ in hits)
    paragraph = sum(p for _, p in hits)
    return {
        "n": n,
        "section": round(section / n, 4) if n else None,
        "paragraph": round(paragraph / n, 4) if n else None,
        "section_hits": section,
        "paragraph_hits": paragraph,
    }


def citation_figures(
    records: Sequence[Mapping[str, Any]], refs: Sequence[Sequence[str]]
) -> dict[str, Any]:
    """How often the norms a verdict cites are among the case's gold regulations (issue 14).

    Over the records (with ``refs``, each one's gold ids) that cite a norm and have gold
    regulations: ``section``, the share where a cited norm's section is a gold regulation's
    section (164.512(f)(1)(ii) -> 164.512), and ``paragraph``, the share where a cited norm is
    a gold paragraph or its ancestor or descendant; ``n`` those records, and the hit counts.
    ``not_scored`` counts the others: ``no_gold_refs`` (no gold regulation) and ``no_citation``
    (gold regulations but no norm cited). ``per_label``: the same by gold label. Shares are
    None when ``n`` is 0.
    """
    hits: list[tuple[bool, bool]] = []
    by_label: dict[str, list[tuple[bool, bool]]] = {label: [] for label in LABELS}
    no_gold = no_citation = 0
    for record, gold in zip(records, refs, strict=True):
        cited = cited_ids(record)
        if not gold:
            no_gold += 1
            continue
        if not cited:
            no_citation += 1
            continue
        hit = citation_hits(cited, gold)
        hits.append(hit)
        by_label.setdefault(str(record.get("gold")), []).append(hit)
    return {
        **_shares(hits),
        "not_scored": {
            "total": no_gold + no_citation,
            "no_gold_refs": no_gold,
            "no_citation": no_citation,
        },
        "per_label": {label: _shares(found) for label, found in by_label.items()},
    }


def accuracy_by(pairs: Iterable[tuple[str, bool]]) -> dict[str, dict[str, Any]]:
    """Accuracy by group from (group, correct) pairs: ``{group: {"n", "accuracy"}}``, groups
    sorted (what ``bench/checklist.py`` prints by variant and by norm)."""
    groups: dict[str, list[bool]] = {}
    for group, ok in pairs:
        groups.setdefault(group, []).append(ok)
    return {
        group: {"n": len(oks), "accuracy": round(sum(oks) / len(oks), 4)}
        for group, oks in sorted(groups.items())
    }


def accuracy_by_norm(
    records: Sequence[Mapping[str, Any]], refs: Sequence[Sequence[str]]
) -> dict[str, dict[str, Any]]:
    """Accuracy by each record's first gold regulation (``refer_id``'s first id when the file
    has one); records without gold regulations are left out."""
    return accuracy_by(
        (gold[0], record.get("verdict") == record.get("gold"))
        for record, gold in zip(records, refs, strict=True)
        if gold
    )


def confusion_png(result: dict[str, Any], title: str, path: Path) -> None:
    """A confusion matrix picture (rows gold, columns predicted)."""
    from PIL import Image, ImageDraw, ImageFont

    cell, left, top = 110, 150, 80
    columns = [*LABELS, PARSE_FAILURE]
    image = Image.new(
        "RGB", (left + cell * len(columns) + 20, top + cell * len(LABELS) + 40), "white"
    )
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    draw.text((10, 10), title, fill="black", font=font)
    draw.text((left, 40), "predicted ->", fill="black", font=font)
    peak = max(1, max(v for row in result["confusion"].values() for v in row.values()))
    for j, column in enumerate(columns):
        draw.text(
            (left + j * cell + 8, top - 18), column.replace("_", " "), fill="black", font=font
        )
    for i, gold in enumerate(LABELS):
        draw.text(
            (10, top + i * cell + cell // 2),
            f"gold {gold.replace('_', ' ')}",
            fill="black",
            font=font,
        )
        for j, column in enumerate(columns):
            value = result["confusion"][gold][column]
            shade = 255 - int(200 * value / peak)
            box = (
                left + j * cell,
                top + i * cell,
                left + (j + 1) * cell - 4,
                top + (i + 1) * cell - 4,
            )
            draw.rectangle(box, fill=(shade, shade, 255), outline="grey")
            draw.text(
                (box[0] + cell // 2 - 10, box[1] + cell // 2 - 6),
                str(value),
                fill="black" if shade > 120 else "white",
                font=font,
            )
    image.save(path)


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown_table(results: dict[str, dict[str, Any]]) -> str:
    """Methods in rows, as in the paper's tables: accuracy, macro-F1, and per class precision,
    recall and F1 (P / R / F1), then the parse failures (with, in brackets, the verdicts read
    from the model's answer to the restating question) and the request failures (cases
    left undecided, not in n), and how often a cited norm is in a gold section / is a gold
    paragraph or its ancestor or descendant, over the n' cases that cite a norm and have gold
    regulations (– when none)."""
    lines = [
        "| method | n | accuracy | macro-F1 | permit P / R / F1 | prohibit P / R / F1 "
        "| not applicable P / R / F1 | parse failures (restated) | request failures "
        "| cited in gold section / paragraph (n') |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, r in results.items():
        cells = [
            " / ".join(f"{r['per_class'][label][key]:.3f}" for key in ("precision", "recall", "f1"))
            for label in LABELS
        ]
        cited = r.get("citations") or {}
        citations = (
            f"{_share(cited['section'])} / {_share(cited['paragraph'])} ({cited['n']})"
            if cited.get("n")
            else "–"
        )
        lines.append(
            f"| {method} | {r['n']} | {r['accuracy']:.3f} | {r['macro_f1']:.3f} | "
            + " | ".join(cells)
            + f" | {r['parse_failures']} ({r.get('restated', 0)} restated) | "
            + f"{r.get('request_failures', 0)} | {citations} |"
        )
    return "\n".join(lines) + "\n"


def markdown_details(results: dict[str, dict[str, Any]], worst: int = 15) -> str:
    """For each method whose cases have gold regulations: the cited-norm figures by gold
    label, with the cases not scored, and the accuracy by first gold regulation (the
    ``worst`` lowest below 1.0; all of them are in the metrics JSON). Empty when no case has
    gold regulations."""
    parts: list[str] = []
    for method, r in results.items():
        cited = r.get("citations") or {}
        by_norm = r.get("by_norm") or {}
        if cited.get("n") or by_norm:
            skipped = cited.get("not_scored") or {}
            rows = [("all", cited), *((label, cited["per_label"][label]) for label in LABELS)]
            parts.append(
                f"{method}: cited norms against the gold regulations (not scored: "
                f"{skipped.get('no_gold_refs', 0)} cases without gold regulations, "
                f"{skipped.get('no_citation', 0)} citing no norm)\n\n"
                "| gold | n | cited in gold section | cited is a gold paragraph or its "
                "ancestor / descendant |\n|---|---|---|---|\n"
                + "".join(
                    f"| {label.replace('_', ' ')} | {row['n']} | {_share(row['section'])} | "
                    f"{_share(row['paragraph'])} |\n"
                    for label, row in rows
                    if row
                )
            )
        if by_norm:
            low = sorted(
                ((norm, row) for norm, row in by_norm.items() if row["accuracy"] < 1.0),
                key=lambda item: (item[1]["accuracy"], -item[1]["n"], item[0]),
            )
            shown = low[:worst]
            parts.append(
                f"{method}: accuracy by first gold regulation ({len(by_norm)} regulations, "
                f"{len(low)} below 1.000"
                + (f"; the {len(shown)} lowest" if len(low) > len(shown) else "")
                + ")\n"
                + (
                    "\n| regulation | n | accuracy |\n|---|---|---|\n"
                    + "".join(
                        f"| {norm} | {row['n']} | {row['accuracy']:.3f} |\n" for norm, row in shown
                    )
                    if shown
                    else ""
                )
            )
    return "\n".join(parts)
