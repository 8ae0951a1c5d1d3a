"""Benchmark: the checklist reasoner's fact reader on a labelled case file.

Reads every case of a CSV (columns ``generate_background`` and ``generate_HIPAA_type``, as the
project's case reader reads them), reads its flows and facts with
:class:`~privacy_checklist.reasoning.reading.facts.FactReader`, decides each flow with
:func:`~privacy_checklist.reasoning.checklist.decide.decide` and the case with ``combine`` (a case
with no flow of health information is not covered), and prints:

- accuracy, macro-F1 and precision / recall / F1 per class;
- accuracy per ``variant`` and per ``refer_id`` (its first paragraph) when the file has them;
- for ``breaks`` rows (one condition fails, named in ``condition_kind``): how often the reader
  states that condition false, in the flow the verdict rests on and in any flow;
- time: loading, and per case once loaded.

    python bench/checklist.py tests/data/checklist_regression.csv [--rule stated]
        [--limit N] [--no-parse] [--errors] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

LABELS = ("permit", "prohibit", "not_applicable")


def read_cases(path: Path) -> list[Any]:
    """The cases of a file, read by the project's case reader (wherever it lives now)."""
    try:
        from privacy_checklist.ingest.cases import read_case_file  # type: ignore[import-not-found]
    except ImportError:
        from privacy_checklist.retrieval.evaluate import read_case_file
    found = read_case_file(path)
    for skipped in getattr(found, "skipped", []):
        print(f"skipped {skipped}", file=sys.stderr)
    return list(found.cases)


def extra_columns(path: Path) -> dict[str, dict[str, str]]:
    """The columns the case reader does not keep (variant, condition_kind, refer_id), by case id
    (the row number when the file has no case_id column, as the case reader numbers them)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {
        ((row.get("case_id") or "").strip() or str(number)): row
        for number, row in enumerate(rows, start=1)
    }


def scores(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Accuracy, macro-F1 over the classes present in gold or predictions, per-class figures."""
    total = len(pairs)
    correct = sum(1 for gold, got in pairs if gold == got)
    classes = [c for c in LABELS if any(c in pair for pair in pairs)]
    per: dict[str, dict[str, float]] = {}
    for label in classes:
        tp = sum(1 for g, p in pairs if g == label and p == label)
        fp = sum(1 for g, p in pairs if g != label and p == label)
        fn = sum(1 for g, p in pairs if g == label and p != label)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per[label] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "support": tp + fn,
        }
    macro = sum(v["f1"] for v in per.values()) / len(per) if per else 0.0
    return {
        "cases": total,
        "accuracy": round(correct / total, 4) if total else 0.0,
        "macro_f1": round(macro, 4),
        "per_class": per,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cases", type=Path, help="a case CSV")
    parser.add_argument(
        "--rule",
        choices=("stated", "strict", "lenient"),
        default="stated",
        help="how an unknown fact is weighed (default: stated)",
    )
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--no-parse", action="store_true", help="patterns only (no spaCy)")
    parser.add_argument("--errors", action="store_true", help="list the cases decided wrong")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)

    began = time.perf_counter()
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.conditions import load_catalogue
    from privacy_checklist.reasoning.checklist.decide import UnknownRule, combine, decide
    from privacy_checklist.reasoning.reading.facts import FactReader

    kb = kbmod.load()
    catalogue = load_catalogue(kb.tree)
    reader = FactReader(kb, nlp=None if args.no_parse else "auto")
    rule = UnknownRule(args.rule)
    cases = read_cases(args.cases)
    if args.limit:
        cases = cases[: args.limit]
    extra = extra_columns(args.cases)
    reader.read(cases[0].text if cases else "")  # warm-up
    loaded = time.perf_counter() - began

    pairs: list[tuple[str, str]] = []
    by_variant: dict[str, list[bool]] = defaultdict(list)
    by_norm: dict[str, list[bool]] = defaultdict(list)
    breaks: Counter[str] = Counter()
    errors: list[dict[str, Any]] = []
    times: list[float] = []
    for case in cases:
        start = time.perf_counter()
        flows = reader.read(case.text).flows
        checks = [decide(catalogue, flow, rule) for flow in flows]
        best = combine(checks)
        times.append(time.perf_counter() - start)
        got = best.label if best is not None else "not_applicable"
        gold = case.expected or "not_applicable"
        pairs.append((gold, got))
        row = extra.get(case.case_id, {})
        ok = gold == got
        if row.get("variant"):
            by_variant[row["variant"]].append(ok)
        norm = (row.get("refer_id") or "").split(";")[0].strip()
        if norm:
            by_norm[norm].append(ok)
        kind = (row.get("condition_kind") or "").strip()
        if row.get("variant") == "breaks" and kind:
            breaks["rows"] += 1
            deciding = best.flow.fact(kind).value if best is not None else None
            anywhere = [flow.fact(kind).value for flow in flows]
            breaks["false_deciding"] += deciding is False
            breaks["false_any"] += False in anywhere
            breaks["true_deciding"] += deciding is True
            breaks["unknown_deciding"] += deciding is None
        if not ok:
            errors.append(
                {
                    "case_id": case.case_id,
                    "gold": gold,
                    "got": got,
                    "variant": row.get("variant", ""),
                    "refer_id": row.get("refer_id", ""),
                    "flows": [flow.summary for flow in flows],
                    "explanation": best.explanation if best is not None else "no flow",
                }
            )

    result = scores(pairs)
    result["parser"] = reader.parser
    result["rule"] = args.rule
    result["file"] = str(args.cases)
    result["load_s"] = round(loaded, 2)
    result["ms_per_case"] = round(1000 * sum(times) / len(times), 2) if times else 0.0
    result["cases_per_s"] = round(len(times) / sum(times), 1) if times and sum(times) else 0.0
    if by_variant:
        result["by_variant"] = {
            k: {"n": len(v), "accuracy": round(sum(v) / len(v), 4)} for k, v in by_variant.items()
        }
    if by_norm:
        result["by_norm"] = {
            k: {"n": len(v), "accuracy": round(sum(v) / len(v), 4)} for k, v in by_norm.items()
        }
    if breaks["rows"]:
        result["breaks"] = {
            "rows": breaks["rows"],
            "read_false_in_deciding_flow": round(breaks["false_deciding"] / breaks["rows"], 4),
            "read_false_in_any_flow": round(breaks["false_any"] / breaks["rows"], 4),
            "read_true_in_deciding_flow": round(breaks["true_deciding"] / breaks["rows"], 4),
            "unknown_in_deciding_flow": round(breaks["unknown_deciding"] / breaks["rows"], 4),
        }
    result["errors"] = errors
    _print(result, args.errors)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def _print(result: dict[str, Any], show_errors: bool) -> None:
    print(f"{result['file']}  ({result['parser']}; unknown facts: {result['rule']})")
    print(
        f"cases {result['cases']}  accuracy {result['accuracy']:.3f}  "
        f"macro-F1 {result['macro_f1']:.3f}"
    )
    print(f"{'class':16}{'P':>8}{'R':>8}{'F1':>8}{'n':>6}")
    for label, row in result["per_class"].items():
        print(
            f"{label:16}{row['precision']:8.3f}{row['recall']:8.3f}{row['f1']:8.3f}"
            f"{row['support']:6d}"
        )
    if "by_variant" in result:
        print("by variant:")
        for name, row in sorted(result["by_variant"].items()):
            print(f"  {name:16}{row['accuracy']:7.3f}  (n={row['n']})")
    if "by_norm" in result:
        worst = sorted(result["by_norm"].items(), key=lambda kv: (kv[1]["accuracy"], kv[0]))
        shown = [kv for kv in worst if kv[1]["accuracy"] < 1.0][:15]
        print(f"by norm: {len(result['by_norm'])} norms; below 1.0:")
        for name, row in shown:
            print(f"  {name:24}{row['accuracy']:7.3f}  (n={row['n']})")
    if "breaks" in result:
        b = result["breaks"]
        print(
            f"breaks rows {b['rows']}: condition read false in the deciding flow "
            f"{b['read_false_in_deciding_flow']:.3f}, in any flow {b['read_false_in_any_flow']:.3f}"
            f" (true {b['read_true_in_deciding_flow']:.3f}, unknown "
            f"{b['unknown_in_deciding_flow']:.3f})"
        )
    print(
        f"time: load {result['load_s']:.2f} s; {result['ms_per_case']:.1f} ms a case "
        f"({result['cases_per_s']:.0f} cases/s once loaded)"
    )
    if show_errors:
        for error in result["errors"]:
            print(
                f"  {error['case_id']}: gold {error['gold']}, got {error['got']} "
                f"[{error['variant']} {error['refer_id']}] {error['explanation'][:160]}"
            )


if __name__ == "__main__":
    sys.exit(main())
