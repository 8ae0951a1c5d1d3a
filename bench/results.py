"""The results page: every figure on ``docs/results.md`` comes from a command's output kept in
``bench/results/``, and the page is made from those outputs alone (no figure typed by hand).

    python bench/results.py run [--only NAME] [--force]   # the measurements (resumable)
    python bench/results.py render                        # docs/results.md from bench/results/

``run`` runs each measurement of :data:`MEASUREMENTS` as a user would (``pcheck ... --json``)
and keeps its command and output in ``bench/results/NAME.json``; one already there is kept
unless ``--force`` (a stopped run resumes). ``render`` writes the page; a test checks that the
page in the repository is what ``render`` makes of the outputs in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results"
PAGE = REPO / "docs" / "results.md"
SHARED = Path(os.environ.get("PRIVACY_CHECKLIST_SHARED", REPO.parent / "shared")) / "data"

#: the narrative sets the checklist's readers were written against (in-sample, said so)
NARRATIVES = {
    "regression": "tests/data/checklist_regression.csv",
    "styles": "tests/data/checklist_styles.csv",
    "dev_a": "tests/data/checklist_dev_a.csv",
    "dev_b": "tests/data/checklist_dev_b.csv",
    "dev_c": "tests/data/checklist_dev_c.csv",
    "heldout": "bench/data/heldout_narratives.csv",
}
GUARD_SETS = {
    "development": "guard_drafts.jsonl",
    "leave-out 1": "guard_drafts_leaveout.jsonl",
    "leave-out 2": "guard_drafts_leaveout2.jsonl",
    "leave-out 3": "guard_drafts_leaveout3.jsonl",
    "leave-out 4": "guard_drafts_leaveout4.jsonl",
    "leave-out 5": "guard_drafts_leaveout5.jsonl",
}
ANSWER_SETS = {
    "dev": "answers_dev.jsonl",
    "heldout": "answers_heldout.jsonl",
    "c": "answers_c.jsonl",
    "smollm2": "answers_smollm2.jsonl",
}
REAL_DEV = "cases/goldcoin_real_dev_cases_hipaa_applicability.csv"


def measurements() -> dict[str, list[str]]:
    """Each measurement's name and the ``pcheck`` arguments that make it (``{out}``: a
    scratch folder)."""
    out: dict[str, list[str]] = {}
    for method in ("checklist", "offline-fast"):
        for name, path in NARRATIVES.items():
            out[f"eval-{method}-{name}"] = [
                "eval", "--cases", path, "--method", method, "--out", "{out}", "--json",
            ]  # fmt: skip
        out[f"eval-{method}-real-dev"] = [
            "eval", "--cases", str(SHARED / REAL_DEV), "--method", method, "--out", "{out}",
            "--json",
        ]  # fmt: skip
    for name, file in GUARD_SETS.items():
        out[f"guard-{name.replace(' ', '')}"] = [
            "guard-eval", "--file", f"tests/data/{file}", "--json",
        ]  # fmt: skip
    for name, file in ANSWER_SETS.items():
        out[f"answers-{name}"] = ["answers", "--file", f"tests/data/{file}", "--json"]
    return out


def run(only: str | None, force: bool) -> int:
    pcheck = Path(sys.executable).with_name("pcheck")
    OUT.mkdir(parents=True, exist_ok=True)
    todo = {k: v for k, v in measurements().items() if only is None or only in k}
    for number, (name, argv) in enumerate(todo.items(), start=1):
        target = OUT / f"{name}.json"
        if target.exists() and not force:
            continue
        print(f"[{number}/{len(todo)}] {name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as scratch:
            args = [a.replace("{out}", scratch) for a in argv]
            done = subprocess.run(
                [str(pcheck), *args], cwd=REPO, capture_output=True, text=True, check=False
            )
        if done.returncode != 0:
            print(f"{name}: pcheck {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
            return 1
        shown = [
            "pcheck",
            *(
                a.replace(str(SHARED), "../shared/data") if "{out}" not in a else "DIR"
                for a in argv
            ),
        ]
        record = {"command": " ".join(shown), "output": json.loads(done.stdout)}
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    return 0


def _load(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))
    }


def _f(value: Any) -> str:
    return "–" if value is None else f"{float(value):.3f}"


def _table(columns: list[str], rows: list[tuple[list[Any], str]]) -> list[str]:
    """A Markdown table: each row's cells (figures as three decimals) and its command last."""
    out = ["| " + " | ".join([*columns, "command"]) + " |", "|" + "---|" * (len(columns) + 1)]
    for cells, command in rows:
        shown = [_f(c) if isinstance(c, float) else str(c) for c in cells]
        out.append("| " + " | ".join([*shown, f"`{command}`"]) + " |")
    return out


def _eval_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for name in [*NARRATIVES, "real-dev"]:
        for method in ("checklist", "offline-fast"):
            if (found := results.get(f"eval-{method}-{name}")) is not None:
                m = found["output"]
                prohibit = float(m["per_class"]["prohibit"]["f1"])
                cells = [name, method, m["n"], float(m["accuracy"]), float(m["macro_f1"]), prohibit]
                rows.append((cells, found["command"]))
    columns = ["set", "method", "n", "accuracy", "macro-F1", "prohibit F1"]
    return _table(columns, rows)


def _guard_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for name in GUARD_SETS:
        if (found := results.get(f"guard-{name.replace(' ', '')}")) is not None:
            g = found["output"]["guard"]
            keys = ("leak_rate", "needed_kept", "unneeded_removed", "verdict_agreement")
            rows.append(([name, g["drafts"], *(float(g[k]) for k in keys)], found["command"]))
    columns = ["set", "drafts", "leak rate", "needed kept", "unneeded removed", "verdicts"]
    return _table(columns, rows)


def _answer_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for name in ANSWER_SETS:
        found = results.get(f"answers-{name}")
        if found is not None and (c := found["output"].get("compared")):
            keys = ("agreement", "unreadable_when_none", "wrong_share")
            rows.append(([name, c["judged"], *(float(c[k]) for k in keys)], found["command"]))
    columns = ["set", "answers", "agreement (committed)", "unreadable where none", "wrong"]
    return _table(columns, rows)


def render(folder: Path = OUT) -> str:
    """The results page made from the outputs in ``folder``."""
    results = _load(folder)
    parts = [
        "# Results",
        "",
        "Made by `python bench/results.py render` from the command outputs kept in "
        "`bench/results/` (`python bench/results.py run` measures them again); no figure on "
        "this page is typed by hand, and a test checks the page against those outputs.",
        "",
        "What each figure is worth: the narrative, draft and answer sets below are the "
        "project's own, and the readers were developed on them (in-sample, except where a set "
        "is named a leave-out set and was read once before anything changed on it: its first "
        "reading is in the issue that brought it). The real dev court cases are reported, never "
        "fitted or chosen on.",
        "",
        "## Verdicts (`pcheck eval`)",
        "",
        *_eval_rows(results),
        "",
        "## The guard (`pcheck guard-eval`)",
        "",
        *_guard_rows(results),
        "",
        "## Reading what models answer (`pcheck answers`)",
        "",
        *_answer_rows(results),
        "",
    ]
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    runner = sub.add_parser("run", help="run the measurements into bench/results/")
    runner.add_argument("--only", help="only the measurements whose name holds this")
    runner.add_argument("--force", action="store_true", help="measure again what is there")
    sub.add_parser("render", help="write docs/results.md from bench/results/")
    args = parser.parse_args()
    if args.action == "run":
        return run(args.only, args.force)
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
