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


#: measurements that are a script of ``bench/`` writing its JSON to ``{out}/out.json``
#: the learned condition reader's out-of-fold readings of the corpus (``condition-reader``
#: makes them): the corpus's figures read each writer's narratives with a reader fitted
#: without that writer
CONDITIONS_OOF = ".cache/condition-reader:e2-w4.0-balanced:3"
#: the case-flow reader out of fold: the writers in six groups, each read by regressions fitted
#: on the other five
CASE_FLOW_OOF = "oof:6"
SCRIPTS = {
    "speed": ["bench/reasoning.py", "--runs", "3", "--json", "{out}/out.json"],
    "condition-reader": [
        "bench/experiments/condition_reader.py",
        "--folds",
        "3",
        "--epochs",
        "2",
        "--cache",
        CONDITIONS_OOF.split(":")[0],
        "--json",
        "{out}/out.json",
    ],
    **{
        f"corpus-{method}": [
            "bench/corpus/measure.py",
            "--method",
            method,
            *(["--conditions", CONDITIONS_OOF] if method == "checklist-alone" else []),
            "--json",
            "{out}/out.json",
        ]
        for method in ("checklist-alone", "offline-fast")
    },
    "corpus-checklist-case-flow": [
        "bench/corpus/measure.py",
        "--method",
        "checklist-alone",
        "--conditions",
        CONDITIONS_OOF,
        "--case-flow",
        CASE_FLOW_OOF,
        "--json",
        "{out}/out.json",
    ],
    "corpus-checklist-rules": [
        "bench/corpus/measure.py",
        "--method",
        "checklist-alone",
        "--conditions",
        "none",
        "--case-flow",
        "none",
        "--json",
        "{out}/out.json",
    ],
    "case-flow": [
        "bench/experiments/case_flow.py",
        "--cache",
        CONDITIONS_OOF.split(":")[0],
        "--tag",
        CONDITIONS_OOF.split(":")[1],
        "--json",
        "{out}/out.json",
    ],
    "corpus-invariance": [
        "bench/corpus/invariance.py",
        "--limit",
        "12",
        "--json",
        "{out}/out.json",
    ],
    "corpus-invariance-lwo": [
        "bench/corpus/invariance.py",
        "--limit",
        "12",
        "--conditions",
        CONDITIONS_OOF,
        "--json",
        "{out}/out.json",
    ],
    "corpus-invariance-alone": [
        "bench/corpus/invariance.py",
        "--method",
        "checklist-layer",
        "--limit",
        "12",
        "--json",
        "{out}/out.json",
    ],
    "guard-corpus": ["bench/guard_corpus/measure.py", "--json", "{out}/out.json"],
    "guard-corpus-words": [
        "bench/guard_corpus/measure.py",
        "--models",
        "none",
        "--json",
        "{out}/out.json",
    ],
    "guard-text": ["bench/guard_text/measure.py", "--json", "{out}/out.json"],
    "guard-text-tagger": ["bench/guard_text/tagger_lwo.py", "--json", "{out}/out.json"],
    "guard-speed": ["bench/guard.py", "--notes", "--repeat", "1", "--json", "{out}/out.json"],
    "answer-corpus": [
        "bench/answer_corpus/measure.py",
        "--also",
        *(f"tests/data/{file}" for file in ANSWER_SETS.values()),
        "--json",
        "{out}/out.json",
    ],
    "guard-pieces": ["bench/guard_pieces/measure.py", "--json", "{out}/out.json"],
    "guard-conditions": ["bench/guard_conditions/measure.py", "--json", "{out}/out.json"],
    **{
        name: [
            "bench/experiments/blend_lwo.py",
            *extra,
            "--cases",
            *NARRATIVES.values(),
            "--synthetic",
            *(
                str(SHARED / "cases" / f"{part}_generate_cases_hipaa_applicability.csv")
                for part in ("train", "val")
            ),
            "--conditions",
            CONDITIONS_OOF,
            "--json",
            "{out}/out.json",
        ]
        for name, extra in (
            ("corpus-layer", ["--embed", "--grid", "0.001", "0.003", "0.01"]),
            ("corpus-layer-fast", []),
        )
    },
}
#: outputs measured once at a commit and kept as they were (``commit`` in the file): the first
#: reading of the corpus, before anything was fitted on it
FROZEN = (
    "corpus-first-reading",
    "corpus-first-reading-court",
    "corpus-first-reading-analyst",
    "corpus-first-reading-exclusions",
    "corpus-first-reading-court-na",
    "corpus-first-reading-mixed",
    "eval-case-flow-real-dev",
    "guard-corpus-first-reading",
    "guard-text-first-reading",
    "answer-corpus-first-reading",
)
#: the learned layers' model files, whose cross-validated figures the page shows as they are
MODELS = {
    "with the sentence embedding": "reasoning/data/checklist_blend_embed_model.json",
    "without it": "reasoning/data/checklist_blend_model.json",
}


def measurements() -> dict[str, list[str]]:
    """Each measurement's name and the ``pcheck`` arguments that make it (``{out}``: a
    scratch folder); the scripts of :data:`SCRIPTS` besides."""
    out: dict[str, list[str]] = dict(SCRIPTS)
    for method in ("checklist", "offline-fast"):
        for name, path in NARRATIVES.items():
            out[f"eval-{method}-{name}"] = [
                "eval",
                "--cases",
                path,
                "--method",
                method,
                "--out",
                "{out}",
                "--json",
            ]
        out[f"eval-{method}-real-dev"] = [
            "eval",
            "--cases",
            str(SHARED / REAL_DEV),
            "--method",
            method,
            "--out",
            "{out}",
            "--json",
        ]
    for name, file in GUARD_SETS.items():
        out[f"guard-{name.replace(' ', '')}"] = [
            "guard-eval",
            "--file",
            f"tests/data/{file}",
            "--json",
        ]
    for name, file in ANSWER_SETS.items():
        out[f"answers-{name}"] = ["answers", "--file", f"tests/data/{file}", "--json"]
    return out


def run(only: str | None, force: bool) -> int:
    pcheck = Path(sys.executable).with_name("pcheck")
    OUT.mkdir(parents=True, exist_ok=True)
    every = measurements()
    # a measurement's whole name is that measurement alone; a part of names, every one holding it
    todo = {k: v for k, v in every.items() if only is None or only == k or only in k}
    if only in every:
        todo = {only: every[only]}
    for number, (name, argv) in enumerate(todo.items(), start=1):
        target = OUT / f"{name}.json"
        if target.exists() and not force:
            continue
        print(f"[{number}/{len(todo)}] {name}", file=sys.stderr, flush=True)
        script = name in SCRIPTS
        program = [sys.executable] if script else [str(pcheck)]
        with tempfile.TemporaryDirectory() as scratch:
            args = [a.replace("{out}", scratch) for a in argv]
            done = subprocess.run(
                [*program, *args], cwd=REPO, capture_output=True, text=True, check=False
            )
            if done.returncode == 0:
                written = Path(scratch, "out.json") if script else None
                output = json.loads(written.read_text() if written else done.stdout)
        if done.returncode != 0:
            print(f"{name}: {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
            return 1
        shown = [
            "python" if script else "pcheck",
            *(
                a.replace(str(SHARED), "../shared/data") if "{out}" not in a else "DIR"
                for a in argv
            ),
        ]
        shown = [s if s != "DIR" or not script else "OUT.json" for s in shown]
        record = {"command": " ".join(shown), "output": output}
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
    if (found := results.get("eval-case-flow-real-dev")) is not None:  # measured once
        m = found["output"]
        prohibit = float(m["per_class"]["prohibit"]["f1"])
        method = "checklist, the learned case-flow reader deciding (once)"
        cells = ["real-dev", method, m["n"], float(m["accuracy"]), float(m["macro_f1"]), prohibit]
        rows.append((cells, _command(found)))
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


def _speed_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    found = results.get("speed")
    if found is None:
        return ["Not measured yet (`python bench/results.py run --only speed`)."]
    out, command = found["output"], found["command"]
    check = out["pcheck check"]
    rows = [
        (
            [
                "one `pcheck check` (fresh process, median)",
                f"{check['median_s']:.2f} s wall",
                f"{check['peak_mb']:.0f} MB",
            ],
            command,
        ),
    ]
    for key, what in (
        ("checklist-short", "checklist, short narratives, once loaded"),
        ("checklist-long", "checklist, real dev court cases, once loaded"),
        ("offline", "offline, real dev court cases, once loaded"),
        ("offline-fast", "offline-fast, real dev court cases, once loaded"),
    ):
        if key in out:
            r = out[key]
            rows.append(
                ([what, f"{r['cases_per_s']:.1f} cases/s", f"{r['peak_mb']:.0f} MB"], command)
            )
    return _table(["what", "speed", "peak memory"], rows)


def _model_rows() -> list[str]:
    rows = []
    for name, file in MODELS.items():
        cv = json.loads((REPO / file).read_text(encoding="utf-8"))["cross_validation"]
        fast = " --fast" if "without" in name else ""
        parts = [("all", part, cv[part]) for part in ("blend", "offline_features_alone")]
        parts += [("all", "checklist_alone", cv["checklist_alone"])]
        for domain in ("synthetic", "writers"):
            if domain in cv:
                parts += [(domain, part, cv[domain][part]) for part in ("blend", "checklist_alone")]
        for domain, part, f in parts:
            cells = [name, domain, part.replace("_", " "), float(f["accuracy"])]
            cells += [float(f["macro_f1"]), float(f["f1"]["prohibit"])]
            rows.append((cells, f"pcheck reasoner train --method checklist{fast}"))
    columns = ["learned layer", "cases", "part", "accuracy", "macro-F1", "prohibit F1"]
    return _table(columns, rows)


#: the figures of a method on the corpus, as the corpus tables' columns give them
CORPUS_FIGURES = [
    "accuracy", "macro-F1", "prohibit F1", "short", "long", "twins both right", "worst writer",
]  # fmt: skip


#: the corpus measurements of :func:`_corpus_rows`, and what each row is called
CORPUS_METHODS = {
    "first-reading": "checklist, first reading",
    "checklist-rules": "checklist alone, the rule reader's facts only",
    "checklist-alone": "checklist alone, with the learned condition reader (out of fold): the "
    "default",
    "checklist-case-flow": "checklist alone, the learned case-flow reader where the rule reader "
    "reads a covered flow, and the condition reader (out of fold)",
    "offline-fast": "offline-fast",
}


def _command(found: dict[str, Any]) -> str:
    """A measurement's command, with the commit to check out when it was measured at one."""
    commit = found.get("commit")
    return f"git checkout {commit} && {found['command']}" if commit else found["command"]


def _corpus_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for key, method in CORPUS_METHODS.items():
        found = results.get(f"corpus-{key}")
        if found is None:
            continue
        out = found["output"]
        a, s, lg, t = (out["all"][k] for k in ("all", "short", "long", "twins"))
        worst = min(w["all"]["accuracy"] for w in out["writers"].values())
        cells = [
            method,
            len(out["writers"]),
            a["n"],
            float(a["accuracy"]),
            float(a["macro_f1"]),
            float(a["prohibit_f1"]),
            float(s.get("accuracy", 0)),
            float(lg.get("accuracy", 0)),
            f"{t['told_apart']}/{t['pairs']}",
            float(worst),
        ]
        rows.append((cells, _command(found)))
    if not rows:
        return ["Not measured yet (`python bench/results.py run --only corpus`)."]
    columns = ["method", "writers", "n", *CORPUS_FIGURES]
    return _table(columns, rows)


def _fact_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    """The conditions the writers labelled, read by the rule reader and by the learned one (at
    the threshold the shipped reader states a condition from)."""
    from privacy_checklist.reasoning.learned.conditions import THRESHOLD as CONDITION_THRESHOLD

    rows = []
    for key, name in (
        ("corpus-checklist-rules", "rule reader (the deciding flow's facts)"),
        (
            "corpus-checklist-alone",
            "the checklist's facts: rules and learned reader out of fold (the deciding flow's)",
        ),
    ):
        if (found := results.get(key)) is not None:
            f = found["output"]["all"]["facts"]
            cells = [name, f["n"], float(f["agreement"]), float(f["true"]), float(f["false"])]
            rows.append(([*cells, float(f["not stated"])], _command(found)))
    if (found := results.get("condition-reader")) is not None:
        out = found["output"]
        f = out[str(CONDITION_THRESHOLD)]
        by = f["by value"]
        cells = [
            f"learned reader, {out['folds']} folds of writers (stated from {CONDITION_THRESHOLD})",
            f["n"],
            float(f["agreement"]),
            float(by["True"]),
            float(by["False"]),
            float(by["None"]),
        ]
        rows.append((cells, _command(found)))
    if not rows:
        return ["Not measured yet (`python bench/results.py run --only condition-reader`)."]
    return _table(["reader", "facts", "agreement", "true", "false", "not stated"], rows)


def _writer_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    found = {key: results.get(f"corpus-{key}") for key in CORPUS_METHODS}
    writers: dict[str, int] = {}
    for measured in found.values():
        for writer, figures in (measured["output"]["writers"] if measured else {}).items():
            writers.setdefault(writer, figures["all"]["n"])
    if not writers:
        return []
    out = ["| writer | n | " + " | ".join(CORPUS_METHODS.values()) + " |"]
    out.append("|---|---|" + "---|" * len(CORPUS_METHODS))
    for writer, n in writers.items():
        cells = [
            _f(measured["output"]["writers"][writer]["all"]["accuracy"])
            if measured and writer in measured["output"]["writers"]
            else "–"
            for measured in found.values()
        ]
        out.append(f"| {writer} | {n} | " + " | ".join(cells) + " |")
    return out


#: the methods of a later group of writers' first reading, and what each row is called
FIRST_READ = {
    "checklist-alone": "checklist alone, learned condition reader (the default then)",
    "checklist": "checklist with its learned layer",
    "offline": "offline",
    "offline-fast": "offline-fast",
    "checklist-alone --case-flow shipped": "checklist alone, learned case-flow reader",
}


def _first_rows(results: dict[str, dict[str, Any]], name: str) -> list[str]:
    """A later group of writers' first reading (the frozen result ``name``): each method's
    figures and each writer's accuracy."""
    found = results.get(name)
    if found is None:
        return []
    rows = []
    for key, label in FIRST_READ.items():
        if (out := found["output"].get(key)) is None:
            continue
        a, t = out["all"]["all"], out["all"]["twins"]
        writers = [float(w["all"]["accuracy"]) for _, w in sorted(out["writers"].items())]
        cells = [label, a["n"], float(a["accuracy"]), float(a["macro_f1"])]
        rows.append(
            (
                [*cells, float(a["prohibit_f1"]), *writers, f"{t['told_apart']}/{t['pairs']}"],
                _command(found).replace("METHOD", key),
            )
        )
    names = sorted(next(iter(found["output"].values()))["writers"])
    columns = ["method", "n", "accuracy", "macro-F1", "prohibit F1", *names, "twins both right"]
    return _table(columns, rows)


def _case_flow_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    """The learned case-flow reader, leave-writer-out on the corpus and on the groups of
    writers added later, and on the own sets."""
    found = results.get("case-flow")
    if found is None:
        return ["Not measured yet (`python bench/results.py run --only case-flow`)."]
    out = found["output"]
    rows = []
    groups = list(next(iter(out["methods"].values())).get("groups", {}))
    for name, r in out["methods"].items():
        c = r["corpus"]
        cells = [
            name,
            float(c["all"]["accuracy"]),
            float(c["all"]["macro_f1"]),
            float(c["all"]["prohibit_f1"]),
            float(c["short"].get("accuracy", 0)),
            float(c["long"].get("accuracy", 0)),
            f"{c['twins']['told_apart']}/{c['twins']['pairs']}",
        ]
        for group in groups:
            g = r["groups"][group]["all"]
            cells += [float(g.get("accuracy", 0)), float(g.get("macro_f1", 0))]
        rows.append((cells, _command(found)))
    columns = [
        "how the case is read", "accuracy", "macro-F1", "prohibit F1", "short", "long",
        "twins both right",
    ]  # fmt: skip
    for group in groups:
        columns += [f"{group}-style writers: accuracy", "macro-F1"]
    parts = ", ".join(f"{k} {v:.3f}" for k, v in out["parts"].items())
    lines = [f"Parts read (exact agreement with the writers' labels, out of fold): {parts}.", ""]
    lines += _table(columns, rows)
    own = out.get("own sets", {})
    if own:
        lines += [
            "",
            "On the project's own sets and GoldCoin's synthetic cases (writers the case-flow "
            "reader never saw; GoldCoin's `train` and `val` hold the court-style cases HIPAA "
            "does not cover), accuracy and, in brackets, the recall of not covered / permit / "
            "prohibit:",
            "",
        ]
        names = list(own)
        ways = [k for k in own[names[0]] if k != "n"]
        own_rows = []
        for way in ways:
            cells: list[Any] = [way]
            for name in names:
                f = own[name][way]
                if not isinstance(f, dict):  # an older run: accuracy alone
                    cells.append(float(f))
                    continue
                recall = f.get("recall", {})
                shown = " / ".join(
                    f"{recall[k]:.2f}" if k in recall else "–"
                    for k in ("not_applicable", "permit", "prohibit")
                )
                cells.append(f"{f['accuracy']:.3f} ({shown})")
            own_rows.append((cells, _command(found)))
        heads = [f"{name} (n {own[name]['n']})" for name in names]
        lines += _table(["how the case is read", *heads], own_rows)
    return lines


def _layer_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    from privacy_checklist.reasoning.learned.blend import DEFAULT_EMBED

    default = {True: " (the default)", False: ""}
    variants = (
        ("corpus-layer", ", with the embedding" + default[DEFAULT_EMBED]),
        ("corpus-layer-fast", ", without the embedding" + default[not DEFAULT_EMBED]),
    )
    for number, (key, suffix) in enumerate(variants):
        if (found := results.get(key)) is None:
            continue
        for name, r in found["output"].items():
            if number and name == "checklist alone":
                continue  # the same in both measurements
            a = r["all"]
            cells = [
                name + ("" if name == "checklist alone" else suffix),
                len(r["writers"]),
                a["n"],
                float(a["accuracy"]),
                float(a["macro_f1"]),
                float(a["prohibit_f1"]),
                float(r["short"]["accuracy"]),
                float(r["long"]["accuracy"]),
                r["twins"],
                float(min(r["writers"].values())),
                _f(r["writers"].get("synthetic")),
            ]
            rows.append((cells, found["command"]))
    if not rows:
        return ["Not measured yet (`python bench/results.py run --only corpus-layer`)."]
    columns = [
        "how the checklist is weighed", "writers", "n", *CORPUS_FIGURES, "synthetic writer",
    ]  # fmt: skip
    return _table(columns, rows)


def _writers_table(found: dict[str, Any] | None, name: str, columns: dict[str, str]) -> list[str]:
    """A corpus measured writer by writer: one row a writer and one for all, with its command."""
    if found is None:
        return [f"Not measured yet (`python bench/results.py run --only {name}`)."]
    out = found["output"]
    rows = []
    for writer, figures in [*out["writers"].items(), ("all", out["all"])]:
        count = figures.get("drafts", figures.get("judged", figures.get("conversations")))
        shown = [_f(figures.get(key)) for key in columns]
        rows.append(([writer, count, *shown], _command(found)))
    return _table(["writer", "n", *columns.values()], rows)


def _writers_table_plain(found: dict[str, Any] | None, name: str) -> list[str]:
    """The tagger's span recall, left and precision, a writer a row."""
    if found is None:
        return [f"Not measured yet (`python bench/results.py run --only {name}`)."]
    rows = [
        ([w, f["items"], f["identifiers"], _f(f["recall"]), _f(f["left"]), _f(f["precision"])],
         _command(found))
        for w, f in found["output"]["writers"].items()
    ]  # fmt: skip
    return _table(["writer", "n", "identifiers", "found", "left", "precision"], rows)


#: the guard's figures on the drafts corpus, as its table shows them
GUARD_CORPUS = {
    "leak_rate": "unneeded identifiers left",
    "needed_kept": "needed kept",
    "unneeded_removed": "unneeded removed",
    "sensitive_removed": "unneeded sensitive removed",
    "verdict_agreement": "verdicts",
}
#: the same with the purpose and need models, and how often the purpose was read as labelled
GUARD_CORPUS_MODELS = {**GUARD_CORPUS, "purpose_read": "purpose read as labelled"}
#: the guard's figures on conversations that give an identifier in pieces
GUARD_PIECES = {
    "completing_turns": "completing turns",
    "completed_found": "put together",
    "completed_stopped": "stopped",
    "not_judged": "speaker not read as staff",
    "early_completions": "a piece early",
    "false_completions": "where none was",
}
#: the guard's reading of a purpose's condition on the condition writers' triples
GUARD_CONDITIONS = {
    "right": "right",
    "stated_read": "stated read as stated",
    "absent_granted": "left out, read as stated",
    "denied_granted": "denied, read as stated",
    "twins_told_apart": "triples told apart",
}


def _conditions_rows(found: dict[str, Any] | None) -> list[str]:
    """The condition writers' figures, the word lists' and the condition model's, a row each."""
    if found is None:
        return ["Not measured yet (`python bench/results.py run --only guard-conditions`)."]
    out = found["output"]
    rows = []
    for writer, readers in [*out["writers"].items(), ("all", out["all"])]:
        for reader, figures in readers.items():
            shown = [_f(figures.get(k)) for k in GUARD_CONDITIONS]
            rows.append(([writer, reader, figures["messages"], *shown], _command(found)))
    return _table(["writer", "reader", "n", *GUARD_CONDITIONS.values()], rows)


#: the guard's figures on clinical text pasted or typed into a chatbot, as its table shows them
GUARD_TEXT = {
    "found": "identifiers found",
    "left": "left",
    "precision": "removed that were identifiers",
    "left_names": "names left",
    "left_numbers": "dates, numbers left",
    "left_places": "places left",
    "clean_untouched": "no-PHI untouched",
    "per_second": "a second",
}


def _guard_text_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    """Each clinical-text writer: its first reading, then the guard now with the identifier
    tagger fitted without that writer; then the notes and the questions pooled."""
    now, first = results.get("guard-text"), results.get("guard-text-first-reading")
    if now is None:
        return ["Not measured yet (`python bench/results.py run --only guard-text`)."]
    rows = []
    for writer, figures in now["output"]["writers"].items():
        was = (first or {}).get("output", {}).get("writers", {}).get(writer)
        if was is not None:
            shown = [_f(was.get(k)) for k in GUARD_TEXT]
            rows.append(([writer, "first reading", was["items"], *shown], _command(first)))
        shown = [_f(figures.get(k)) for k in GUARD_TEXT]
        rows.append(([writer, "tagger without it", figures["items"], *shown], _command(now)))
    for kind in ("note", "question"):
        if (pooled := now["output"].get(kind)) is not None:
            shown = [_f(pooled.get(k)) for k in GUARD_TEXT]
            rows.append(
                (
                    [f"all {kind}s", "tagger without the writer", pooled["items"], *shown],
                    _command(now),
                )
            )
    rows = _table(["writer", "guard", "n", *GUARD_TEXT.values()], rows)
    speed = results.get("guard-speed")
    if speed is None:
        return [
            *rows,
            "",
            "Speed: not measured yet (`python bench/results.py run --only guard-speed`).",
        ]
    s = speed["output"]
    return [
        *rows,
        "",
        f"Speed once loaded (`{speed['command']}`): {s['notes_per_second']} notes a second "
        f"({s['notes']} notes of {s['note_chars']} characters on average; target 20), "
        f"{s['one_at_a_time']} of the development drafts a second one at a time, "
        f"{s['batch']} in a batch (target 50); peak memory {s['peak_mb']} MB.",
    ]


def _answer_corpus_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    """Each answers writer's first reading and its reading by the reader fitted without it;
    all writers pooled; the older sets."""
    now, first = results.get("answer-corpus"), results.get("answer-corpus-first-reading")
    if now is None:
        return ["Not measured yet (`python bench/results.py run --only answer-corpus`)."]
    out, was = now["output"], (first or {}).get("output", {})
    rows = []
    for writer, figures in [*out["writers"].items(), ("all", out["all"])]:
        before = was.get("writers", {}).get(writer) if writer != "all" else was.get("all")
        for how, found, source in (
            ("first reading", before, first),
            ("learned, without it", figures, now),
        ):
            if found is not None:
                shown = [_f(found.get(key)) for key in ANSWER_CORPUS]
                rows.append(([writer, how, found["judged"], *shown], _command(source)))
    for name, figures in out.get("also", {}).items():
        shown = [_f(figures.get(key)) for key in ANSWER_CORPUS]
        rows.append(([name, "learned on the corpus", figures["judged"], *shown], _command(now)))
    return _table(["writer", "reader", "n", *ANSWER_CORPUS.values()], rows)


#: the answer reader's figures on the answers corpus
ANSWER_CORPUS = {
    "agreement": "committed read right",
    "unreadable_when_none": "unreadable where none",
    "wrong_share": "wrong",
}


def _invariance_rows(results: dict[str, dict[str, Any]]) -> list[str]:
    found = results.get("corpus-invariance")
    lwo = results.get("corpus-invariance-lwo")
    if found is None and lwo is None:
        return ["Not measured yet (`python bench/results.py run --only invariance`)."]
    main = lwo or found
    assert main is not None
    out = main["output"]
    shipped = found["output"] if found else None
    alone = results.get("corpus-invariance-alone", {}).get("output")

    def rate(of: dict[str, Any] | None, kind: str | None) -> Any:
        if of is None:
            return None
        if kind is None:
            return of["negated"]["changed_rate"]
        return of["must_not_matter"].get(kind, {}).get("flip_rate")

    rows = []
    for kind, c in out["must_not_matter"].items():
        cells = [
            f"{kind} (must not change)",
            c["n"],
            float(c["flip_rate"]),
            *(_or_dash(rate(other, kind)) for other in (shipped, alone) if lwo),
            *(() if lwo else (_or_dash(rate(alone, kind)),)),
        ]
        rows.append((cells, main["command"]))
    cells = [
        "the deciding fact negated (must change)",
        out["negated"]["pairs"],
        float(out["negated"]["changed_rate"] or 0),
        *(_or_dash(rate(other, None)) for other in (shipped, alone) if lwo),
        *(() if lwo else (_or_dash(rate(alone, None)),)),
    ]
    rows.append((cells, main["command"]))
    columns = [
        "change",
        "n",
        "verdicts changed"
        + (", each writer's conditions read by the reader fitted without it" if lwo else ""),
        *(("with the shipped reader (fitted on these writers)",) if lwo else ()),
        "with the learned layer (`--method checklist-layer`)",
    ]
    return _table(columns, rows)


def _or_dash(value: Any) -> Any:
    """A figure, or a dash where it was not measured."""
    return "–" if value is None else float(value)


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
        "## The labelled corpus (issue 27): each writer read as written",
        "",
        "Narratives by independent writers, each with its own register and its share of the "
        "law's permissions, prohibitions and exclusions, written as twin pairs that differ in "
        "the deciding fact (`bench/data/corpus/`, `bench/corpus/make_briefs.py`). The first "
        "reading is the checklist as it stood before anything was fitted on the corpus; the "
        "checklist alone (without the learned layer) with the rule reader's facts only and "
        "offline-fast (fitted on the synthetic cases) are not fitted on the corpus either; "
        "with the learned condition reader, each writer's narratives are read by the reader "
        "fitted on the other groups of writers (three groups). So each writer's figure is "
        "what a writer they have not seen gets. The default method's learned layer is fitted "
        "on the corpus: its figures are the leave-writer-out ones below. Short: at most six "
        "sentences. Twins: the pairs whose gold verdicts differ, both read right.",
        "",
        *_corpus_rows(results),
        "",
        *_writer_rows(results),
        "",
        "The court-style writers (a trial court's discovery ruling, an appellate opinion, a law "
        "student's case brief; 15-40 sentences) read once as they came, before anything changed "
        "on them:",
        "",
        *_first_rows(results, "corpus-first-reading-court"),
        "",
        "The analyst-style writers (an analyst's case summary, 1-3 sentences; a training "
        "scenario, 2-5 sentences) read once as they came, before anything changed on them:",
        "",
        *_first_rows(results, "corpus-first-reading-analyst"),
        "",
        "Two more court-style writers, their cases weighted to those HIPAA does not cover (a "
        "federal order on a motion to dismiss, a state appellate records dispute; 15-35 "
        "sentences), read once as they came; no shipped model was fitted on them:",
        "",
        *_first_rows(results, "corpus-first-reading-exclusions"),
        "",
        "Three more court-style writers, their cases weighted to two kinds of case HIPAA does "
        "not cover that the corpus lacked and that court text is full of (a court matter not "
        "about health information at all; health information that no covered entity "
        "disclosed): a federal criminal ruling, a civil opinion's background, a summary of "
        "undisputed facts (10-35 sentences); read once as they came, no shipped model fitted "
        "on them:",
        "",
        *_first_rows(results, "corpus-first-reading-court-na"),
        "",
        "Four more writers in registers the corpus lacked (a hospital counsel's memo on a "
        "records request, 10-25 sentences; a text-message thread between staff, 3-10 messages; "
        "a state trial court's brief order, 8-18 sentences, weighted to cases HIPAA does not "
        "cover; a patient advocate's intake note, 3-8 sentences), read once as they came by the "
        "readers refitted on the 37 writers before them (a refit since taken back: it read a "
        "plainly signed authorization as a missing one); no model was fitted on them (the "
        "case-flow row is the gated case flow, `case_flow=True`):",
        "",
        *_first_rows(results, "corpus-first-reading-mixed"),
        "",
        "The learned case-flow reader (`reasoning/learned/case_flow.py`): the "
        "flow a narrative turns on (its sender's and recipient's roles and its information's "
        "type) read from the whole narrative's sentence vectors and the rule reader's roles by "
        "regressions fitted on the other writers' labelled deciding flows (six groups of "
        "writers), decided by the checklist with the learned conditions (out of fold), alone "
        "or over every fact the rule reader read, everywhere or only where the rule reader "
        "reads a flow HIPAA covers (as `ChecklistReasoner(case_flow=True)` does); beside "
        "them, the rule reader's flows and where each reader falls short (the writers' own "
        "labels put in):",
        "",
        *_case_flow_rows(results),
        "",
        "The conditions the writers labelled on each narrative's deciding flow (stated true, "
        "stated false, not stated), as each reader reads them. The learned condition reader "
        "(all-MiniLM-L6-v2 fine-tuned on the corpus's sentences, "
        "`reasoning/learned/conditions.py`) is measured with the writers in three groups, "
        "each read by a reader fitted on the other two; the corpus's figures for the checklist "
        "with it read every narrative that way (out of fold), never with the reader that "
        "ships (fitted on every writer):",
        "",
        *_fact_rows(results),
        "",
        "The checklist alone (the default method) and with its learned layer, "
        "leave-writer-out over the "
        "corpus's writers, the six own sets and the synthetic GoldCoin cases (each a writer; "
        "the synthetic one is the court-style writer): the checklist alone; the layer fitted "
        "on the other writers on every narrative (as it ships, one model whatever the length); "
        "that layer only from 600 characters (how it shipped before); each with and without "
        "the sentence embedding of the flows' sentences (which is the default is chosen on the "
        "model files' cross-validation, below):",
        "",
        *_layer_rows(results),
        "",
        "Invariance, the default method (the checklist without its learned layer) on the "
        "first twelve narratives of each writer and their twins: leaving writers out (each "
        "writer's texts, changed or not, read by the condition reader fitted without that "
        "writer), then with the shipped reader (fitted on every writer: not a result), and "
        "the checklist with the layer beside it "
        "(`bench/corpus/invariance.py`; the target is under 2% where nothing should change "
        "and over 90% where the deciding fact is negated):",
        "",
        *_invariance_rows(results),
        "",
        "## The guard (`pcheck guard-eval`)",
        "",
        *_guard_rows(results),
        "",
        "The drafts corpus (issue 28): drafts by independent writers, each a sender with its "
        "own voice and its share of the purposes the law names, every span of PHI labelled "
        "identifier or health and needed or not for the purpose (`bench/data/guard_corpus/`, "
        "`bench/guard_corpus/make_briefs.py`). Each writer's first reading, before the "
        "identifier tagger:",
        "",
        *_writers_table(
            results.get("guard-corpus-first-reading"), "guard-corpus-first-reading", GUARD_CORPUS
        ),
        "",
        "The same with the identifier tagger, which was fitted on the clinical-text writers "
        "below, none of them a drafts writer, and the purposes read by the data file's words "
        "alone (`--models none`: the guard before the purpose and need models):",
        "",
        *_writers_table(
            results.get("guard-corpus-words"), "guard-corpus-words", GUARD_CORPUS_MODELS
        ),
        "",
        "The same with the purpose and need models (`reasoning/guard/need.py`), each writer "
        "read by models fitted on the other writers (folds cached in `.cache/guard-need`). "
        "The purpose model reads the recipient and the purpose's words into the 44 purposes "
        "the law names (`law` in `reasoning/data/guard_purposes.json`, each with its "
        "paragraph); the need model takes out a sentence that carries only what the purpose "
        "does not need, whatever its words' types. Targets: unneeded left at most 5%, needed "
        "kept at least 90%.",
        "",
        *_writers_table(results.get("guard-corpus"), "guard-corpus", GUARD_CORPUS_MODELS),
        "",
        "Clinical text into a chatbot (issue 28): notes (`n` writers: ICU nursing notes in "
        "capitals and shorthand, hospitalists' notes, emergency and social work notes, clinic "
        "notes) and questions (`q` writers: patients, clinicians, office staff, the public), "
        "every identifier labelled (`bench/data/guard_text/`, `bench/guard_text/make_briefs.py`). "
        "The guard is told only that the text goes to an AI chatbot. Targets: notes found at "
        "least 0.97, left at most 2%, at least 0.85 of what is removed an identifier; questions "
        "names, dates and numbers left at most 1%, places at most 5%, no-PHI questions "
        "untouched at least 95%; 20 notes a second.",
        "",
        *_guard_text_rows(results),
        "",
        "The condition a purpose needs (an order, an authorization, a waiver, an agreement), "
        "read on triples of one message that state it, leave it out and deny it, by three "
        "writers (`bench/data/guard_conditions/`), the purpose given as labelled: the data "
        "file's word lists (`words`: the first reading) and the condition model fitted on the "
        "other writers, read where the lists find the condition neither stated nor denied "
        "(`model`).",
        "",
        *_conditions_rows(results.get("guard-conditions")),
        "",
        "An identifier given in pieces over a conversation (issue 28, item 4): writers wrote "
        "conversations in which staff give one patient's number to one outsider over several "
        "turns, labelling the turn with the last piece, and conversations where numbers over "
        "several turns make none (`bench/data/guard_pieces/`). Nothing is fitted. First "
        "readings: p01 0.136 put together and 1 where none was, p02 0.095 and 13 (8e6b286); "
        "p03, written after the changes made on p01 and p02 and read once with them, 0.10 "
        "and 0, 12 of its 20 completing turns said by a speaker the guard did not read as "
        'staff ("Dana (St. Brigid Medical Center registration)": the words in brackets were '
        "not read; now they are when the rest names no role).",
        "",
        *_writers_table(results.get("guard-pieces"), "guard-pieces", GUARD_PIECES),
        "",
        "The identifier tagger alone, each writer read by the tagger fitted on the others:",
        "",
        *_writers_table_plain(results.get("guard-text-tagger"), "guard-text-tagger"),
        "",
        "## Reading what models answer (`pcheck answers`)",
        "",
        *_answer_rows(results),
        "",
        "The answers corpus (issue 29): answers by independent writers, each imitating a "
        "family of models and prompts, each labelled with what a person reads as its "
        "committed verdict or none (`bench/data/answer_corpus/`, "
        "`bench/answer_corpus/make_briefs.py`). Each writer's first reading (the rules alone, "
        "before anything was fitted on the corpus), then the learned reader "
        "(`reasoning/llm/conclusion.py`) fitted on the other writers; the older answer sets "
        "(`tests/data/answers_*.jsonl`, which the rules were developed on) read by the reader "
        "fitted on the whole corpus, never on them:",
        "",
        *_answer_corpus_rows(results),
        "",
        "## The checklist's learned layer",
        "",
        "Cross-validated on what the layer is fitted on (the corpus's writers, the six own "
        "sets, the synthetic train and val cases; never court cases), five folds that leave "
        "whole writers out (the synthetic cases: whole regulations, and weighed as much as the "
        "other writers together), as the model files that ship record them; the synthetic "
        "(court-style) cases and the other writers' narratives also apart; the default is "
        "the one with the better macro-F1 with both kinds of text counting equally "
        "(`DEFAULT_EMBED` in `reasoning/learned/blend.py`):",
        "",
        *_model_rows(),
        "",
        "## Speed and memory (`bench/reasoning.py`)",
        "",
        "Two cores, no GPU; the figures are medians of three fresh processes.",
        "",
        *_speed_rows(results),
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
