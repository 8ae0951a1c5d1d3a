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
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from privacy_checklist.kg.metrics import per_class
from privacy_checklist.reasoning.verdict import LABELS, PARSE_FAILURE, Label

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


def metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the decided records; request failures are counted apart, not scored."""
    failed = [r for r in records if undecided(r)]
    scored = [r for r in records if r.get("gold") in LABELS and not undecided(r)]
    confusion = {g: {p: 0 for p in (*LABELS, PARSE_FAILURE)} for g in LABELS}
    for record in scored:
        predicted = record.get("verdict")
        confusion[record["gold"]][predicted if predicted in LABELS else PARSE_FAILURE] += 1
    figures = per_class(confusion, LABELS)
    return {
        **figures,
        "confusion": confusion,
        "parse_failures": sum(confusion[g][PARSE_FAILURE] for g in LABELS),
        "request_failures": len(failed),
        "undecided": [str(r.get("case_id")) for r in failed],
    }


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


def markdown_table(results: dict[str, dict[str, Any]]) -> str:
    """Methods in rows, as in the paper's tables: accuracy, macro-F1, and per class precision,
    recall and F1 (P / R / F1), then the parse failures and the request failures (cases
    left undecided, not in n)."""
    lines = [
        "| method | n | accuracy | macro-F1 | permit P / R / F1 | prohibit P / R / F1 "
        "| not applicable P / R / F1 | parse failures | request failures |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, r in results.items():
        cells = [
            " / ".join(f"{r['per_class'][label][key]:.3f}" for key in ("precision", "recall", "f1"))
            for label in LABELS
        ]
        lines.append(
            f"| {method} | {r['n']} | {r['accuracy']:.3f} | {r['macro_f1']:.3f} | "
            + " | ".join(cells)
            + f" | {r['parse_failures']} | {r.get('request_failures', 0)} |"
        )
    return "\n".join(lines) + "\n"
