"""The evaluation harness: run a method over a case file, resumably, and measure it.

Each case's result is appended to ``<out>/<method>.jsonl`` as soon as it is known (case id,
verdict, gold, norms, reasoning), so an interrupted run continues where it stopped: cases
already in the log are not asked again (a torn last line is ignored), except those whose record
says ``"retry": true`` (an LLM request failed, not the answer's parse): they are asked again and
the new record, appended, is the one read. Metrics follow the labels permit / prohibit /
not_applicable: accuracy, macro-F1, per-class precision, recall, F1 and support, the confusion
matrix (rows gold, columns predicted) and the parse failures, which count as wrong. A PNG of
the confusion matrix is drawn with Pillow.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from privacy_checklist.kg.metrics import per_class
from privacy_checklist.reasoning.offline import CASE_LABELS, LABELS

PARSE_FAILURE = "parse_failure"


def read_log(path: Path) -> dict[str, dict[str, Any]]:
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


def run(
    cases: Sequence[Any],
    method: str,
    decide: Callable[[str], dict[str, Any]],
    out: Path,
    progress: Callable[[], None] | None = None,
    workers: int = 1,
) -> list[dict[str, Any]]:
    """Decide every case not yet in the log; return all records in case order.

    With ``workers`` > 1, that many cases are decided at once (threads: for LLM methods, whose
    time is spent waiting on the endpoint); each record is appended as soon as its case is
    decided, so the log's order is the order of completion and a stop loses only the cases in
    flight.
    """
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"{method}.jsonl"
    done = read_log(log)
    if log.exists() and log.stat().st_size and not log.read_bytes().endswith(b"\n"):
        with log.open("a", encoding="utf-8") as handle:
            handle.write("\n")  # close a line torn by an interruption
    todo = []
    for case in cases:
        if case.case_id in done and not done[case.case_id].get("retry"):
            if progress is not None:
                progress()
        else:
            todo.append(case)
    lock = threading.Lock()
    with log.open("a", encoding="utf-8") as handle:

        def one(case: Any) -> None:
            result = decide(case.text)
            record = {
                "case_id": case.case_id,
                "method": method,
                "gold": CASE_LABELS.get(case.label),
                **result,
            }
            with lock:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                done[case.case_id] = record
                if progress is not None:
                    progress()

        if workers <= 1:
            for case in todo:
                one(case)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for future in [pool.submit(one, case) for case in todo]:
                    future.result()  # an exception in one case is raised here, after the rest
    return [done[c.case_id] for c in cases if c.case_id in done]


def metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in records if r.get("gold") in LABELS]
    confusion = {g: {p: 0 for p in (*LABELS, PARSE_FAILURE)} for g in LABELS}
    for record in scored:
        predicted = record.get("verdict")
        confusion[record["gold"]][predicted if predicted in LABELS else PARSE_FAILURE] += 1
    figures = per_class(confusion, LABELS)
    return {
        **figures,
        "confusion": confusion,
        "parse_failures": sum(confusion[g][PARSE_FAILURE] for g in LABELS),
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
    recall and F1 (P / R / F1), then the parse failures."""
    lines = [
        "| method | n | accuracy | macro-F1 | permit P / R / F1 | prohibit P / R / F1 "
        "| not applicable P / R / F1 | parse failures |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, r in results.items():
        cells = [
            " / ".join(f"{r['per_class'][label][key]:.3f}" for key in ("precision", "recall", "f1"))
            for label in LABELS
        ]
        lines.append(
            f"| {method} | {r['n']} | {r['accuracy']:.3f} | {r['macro_f1']:.3f} | "
            + " | ".join(cells)
            + f" | {r['parse_failures']} |"
        )
    return "\n".join(lines) + "\n"
