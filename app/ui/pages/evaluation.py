"""The Evaluation page: study the run folders written by ``pcheck eval --out DIR``.

A run folder holds, per method, ``METHOD.jsonl`` (one record per case), ``METHOD.metrics.json``
(accuracy, macro-F1, per class, confusion, parse failures, and the request failures: cases left
undecided because an LLM request failed, not scored) and ``METHOD.confusion.png``, and
``table.md``. The page looks for them in a folder (``pcheck app --runs DIR``, by default
``runs/``): the folder itself when it is a run, else its sub-folders that are. It shows each
method's figures, its per-class table and confusion matrix, a comparison of every method of
every run found, and an error browser: filter the cases by gold and predicted label, and open
one to read its record (verdict, reasoning, norms, flows, and for LLM methods the prompts and
raw answers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from privacy_checklist.app.ui import common
from privacy_checklist.app.ui.pages.check import (
    flow_table,
    flow_title,
    label_text,
    norm_lines,
    one_line,
)
from privacy_checklist.reasoning.evaluation.harness import markdown_table, metrics, read_log
from privacy_checklist.reasoning.methods import OFFLINE_METHODS
from privacy_checklist.reasoning.verdict import (
    LABELS,
    PARSE_FAILURE,
    REQUEST_FAILURE,
    Label,
    Verdict,
)

FOLDER = "eval-folder"
RUN = "eval-run"
METHOD = "eval-method"
GOLD = "eval-gold"
PREDICTED = "eval-predicted"
MISTAKES = "eval-mistakes"
CASE = "eval-case"
ANY = "any"
MAX_RUNS = 200  # run folders listed
MAX_DEPTH = 2  # how deep below the chosen folder runs are looked for


@dataclass
class Method:
    """One method of a run: its metrics (from the file, or the log when there is none)."""

    name: str
    metrics: dict[str, Any] | None = None
    source: str = ""
    problem: str = ""
    log: Path | None = None
    png: Path | None = None
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- reading runs


def is_run(folder: Path) -> bool:
    try:
        return any(folder.glob("*.metrics.json")) or any(folder.glob("*.jsonl"))
    except OSError:
        return False


def find_runs(folder: Path, depth: int = MAX_DEPTH) -> list[Path]:
    """The run folders at or below ``folder`` (a run holds ``*.metrics.json`` or a log); a link
    to a folder outside ``folder`` is not followed."""
    found: list[Path] = []
    try:
        if not folder.is_dir():
            return []
    except OSError:
        return []
    queue = [(folder, 0)]
    while queue and len(found) < MAX_RUNS:
        here, level = queue.pop(0)
        if is_run(here):
            found.append(here)
        if level >= depth:
            continue
        try:
            children = sorted(
                p
                for p in here.iterdir()
                if p.is_dir() and not p.name.startswith(".") and inside(folder, str(p))
            )
        except OSError:
            continue
        queue += [(child, level + 1) for child in children]
    return found


def check_metrics(data: Any) -> dict[str, Any]:
    """The metrics of a ``METHOD.metrics.json``, checked (ValueError says what is wrong)."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in ("n", "accuracy", "macro_f1", "per_class", "confusion") if k not in data]
    if missing:
        raise ValueError("no " + ", ".join(missing))
    for label in LABELS:
        row = data["per_class"].get(label) if isinstance(data["per_class"], dict) else None
        if not isinstance(row, dict) or any(
            not isinstance(row.get(k), int | float)
            for k in ("precision", "recall", "f1", "support")
        ):
            raise ValueError(f"per_class has no precision / recall / F1 / support for {label}")
        confusion = data["confusion"].get(label) if isinstance(data["confusion"], dict) else None
        if not isinstance(confusion, dict):
            raise ValueError(f"the confusion matrix has no row for {label}")
    for key in ("n", "accuracy", "macro_f1"):
        if not isinstance(data[key], int | float):
            raise ValueError(f"{key} is not a number")
    data.setdefault("parse_failures", 0)
    data.setdefault("request_failures", 0)
    return data


def load_run(folder: Path) -> dict[str, Method]:
    """The methods of a run folder, by name (never raises for a bad file: its problem is kept)."""
    methods: dict[str, Method] = {}
    try:
        files = sorted(folder.iterdir())
    except OSError as exc:
        return {"?": Method("?", problem=f"{folder}: cannot be read ({exc.strerror or exc})")}
    for path in files:
        if path.is_symlink() and path.resolve().parent != folder.resolve():
            continue  # a link to a file elsewhere on the server is not read
        if path.name.endswith(".metrics.json"):
            name = path.name[: -len(".metrics.json")]
            method = methods.setdefault(name, Method(name))
            try:
                method.metrics = check_metrics(json.loads(path.read_text(encoding="utf-8")))
                method.source = path.name
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
                method.problem = f"{path.name} cannot be read: {one_line(exc)}"
        elif path.suffix == ".jsonl":
            methods.setdefault(path.stem, Method(path.stem)).log = path
        elif path.name.endswith(".confusion.png"):
            name = path.name[: -len(".confusion.png")]
            methods.setdefault(name, Method(name)).png = path
    for method in methods.values():
        if method.metrics is None and method.log is not None:
            try:
                records = list(read_log(method.log).values())
            except (OSError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
                method.problem = method.problem or (
                    f"{method.log.name} cannot be read: a line is not a case record "
                    f"({one_line(exc)})"
                )
                continue
            if records:
                method.metrics = metrics(records)
                method.source = f"{method.log.name} (no metrics file: measured from the log)"
                method.problem = ""
    return {k: v for k, v in methods.items() if v.metrics is not None or v.problem}


def records_of(method: Method) -> list[dict[str, Any]]:
    """The log's records of the cases its metrics count, in order (a torn last line is
    skipped by ``read_log``; a case the run's case file no longer holds is not shown)."""
    if method.log is None:
        return []
    try:
        records = [r for r in read_log(method.log).values() if isinstance(r, dict)]
    except (OSError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
        return []
    cases = (method.metrics or {}).get("cases")
    ids = cases.get("ids") if isinstance(cases, dict) else None
    if isinstance(ids, list):
        kept = set(ids)
        records = [r for r in records if r.get("case_id") in kept]
    return records


def predicted(record: dict[str, Any]) -> Label:
    """The record's label, ``request_failure`` (no verdict: the request failed) or
    ``parse_failure``."""
    return Label.of_record(record)


def matching(
    records: list[dict[str, Any]], gold: str = ANY, guess: str = ANY, *, mistakes: bool = False
) -> list[dict[str, Any]]:
    """The records whose gold and predicted labels pass the filters (a request failure is no
    mistake of the method: it had no say)."""
    return [
        r
        for r in records
        if (gold == ANY or r.get("gold") == gold)
        and (guess == ANY or predicted(r) == guess)
        and (not mistakes or predicted(r) not in (r.get("gold"), REQUEST_FAILURE))
    ]


def comparison_rows(runs: dict[str, dict[str, Method]]) -> list[dict[str, Any]]:
    rows = []
    for run, methods in runs.items():
        for name, method in methods.items():
            m = method.metrics
            if m is None:
                continue
            rows.append(
                {
                    "run": run,
                    "method": name,
                    "n": m["n"],
                    "accuracy": round(float(m["accuracy"]), 3),
                    "macro-F1": round(float(m["macro_f1"]), 3),
                    **{
                        f"{label.replace('_', ' ')} F1": round(
                            float(m["per_class"][label]["f1"]), 3
                        )
                        for label in LABELS
                    },
                    "parse failures": m.get("parse_failures", 0),
                    "request failures": m.get("request_failures", 0),
                }
            )
    return rows


def per_class_rows(m: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "class": label.replace("_", " "),
            "precision": round(float(m["per_class"][label]["precision"]), 3),
            "recall": round(float(m["per_class"][label]["recall"]), 3),
            "F1": round(float(m["per_class"][label]["f1"]), 3),
            "support": int(m["per_class"][label]["support"]),
        }
        for label in LABELS
    ]


def confusion_rows(m: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows gold, columns predicted (parse failures last)."""
    columns = [*LABELS, PARSE_FAILURE]
    return [
        {
            "gold \\ predicted": label.replace("_", " "),
            **{c.replace("_", " "): int(m["confusion"][label].get(c, 0)) for c in columns},
        }
        for label in LABELS
    ]


# --------------------------------------------------------------------------- page


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Three decimals for every fraction column of a table."""
    return {
        key: st.column_config.NumberColumn(format="%.3f")
        for key, value in (rows[0].items() if rows else [])
        if isinstance(value, float)
    }


def inside(base: Path, where: str | None) -> Path | None:
    """The folder ``where`` names below ``base`` (relative to it, or absolute inside it), or
    None when it would leave it (``..``, an absolute path elsewhere, a link that points out):
    the page never says whether a folder outside exists, nor reads it."""
    try:
        top = base.expanduser().resolve()
        asked = Path((where or "").strip() or ".").expanduser()
        target = (asked if asked.is_absolute() else top / asked).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return target if target == top or top in target.parents else None


def _name(run: Path, root: Path) -> str:
    try:
        relative = run.relative_to(root)
    except ValueError:
        return str(run)
    return str(relative) if str(relative) != "." else f"{root.name or root} (this folder)"


def render() -> None:
    st.title("Evaluation")
    st.caption(
        "The runs of `pcheck eval --cases CSV --method M[,M2...] --out DIR`: each method's "
        "figures, per class and confusion, a comparison of the methods, and the cases it got "
        "wrong."
    )
    base = common.runs_root()
    st.caption(
        f"Runs are read from {base} and the folders below it (the operator sets it: "
        "`pcheck app --runs DIR`)."
    )
    where = st.text_input(
        "Run folder",
        value="",
        key=FOLDER,
        placeholder="(all of it)",
        help="A folder below the runs folder, written by pcheck eval --out, or a folder of such "
        "folders.",
    )
    root = inside(base, where)
    if root is None:
        st.info(
            f"{(where or '').strip()!r} is not a folder below the runs folder {base}; give a "
            "folder below it (the operator chooses it with pcheck app --runs DIR)."
        )
        return
    try:
        exists, folder = root.exists(), root.is_dir()
    except OSError:
        exists, folder = False, False
    if not exists:
        st.info(
            f"There is no folder {root}. Write a run with `pcheck eval --cases CSV --out "
            f"{root / 'NAME'}`, or give another folder."
        )
        return
    if not folder:
        st.info(f"{root} is a file, not a folder: give the folder of a run.")
        return
    runs = find_runs(root)
    if not runs:
        st.info(
            f"No run in {root}: a run folder holds METHOD.metrics.json (or METHOD.jsonl), as "
            f"written by `pcheck eval --cases CSV --out {root / 'NAME'}`."
        )
        return
    loaded = {_name(run, root): load_run(run) for run in runs}

    st.subheader("All methods of all runs")
    rows = comparison_rows(loaded)
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch", column_config=_figures(rows))
    else:
        st.info("No method of these runs has readable metrics.")

    names = list(loaded)
    if st.session_state.get(RUN) not in names:
        st.session_state[RUN] = names[0]
    chosen = st.selectbox("Run", names, key=RUN)
    run = runs[names.index(chosen)]
    methods = loaded[chosen]
    st.caption(f"Folder: {run.resolve()}")
    for method in methods.values():
        if method.problem:
            st.warning(f"{method.name}: {method.problem}")
    good = {k: m for k, m in methods.items() if m.metrics is not None}
    if not good:
        st.info("This run has no readable metrics or logs.")
        return
    table = run / "table.md"
    with st.expander("The run's table (as in the paper)", expanded=False):
        st.markdown(
            markdown_table({k: m.metrics for k, m in good.items() if m.metrics is not None})
        )
        if table.is_file():
            st.caption(f"{table.name} is beside it.")

    for name, method in good.items():
        try:
            show_method(name, method)
        except Exception as exc:  # odd figures in a metrics file never give a traceback
            st.error(f"{name}: its metrics cannot be shown: {one_line(exc)}")

    st.subheader("Error browser")
    error_browser(good)


def show_method(name: str, method: Method) -> None:
    m = method.metrics
    assert m is not None
    st.subheader(f"Method: {name}")
    cases = m.get("cases")
    if isinstance(cases, dict) and cases.get("file"):
        digest = str(cases.get("sha256", ""))[:12]
        st.caption(f"From {method.source}, on the case file {cases['file']} (sha256 {digest}…)")
    else:
        st.caption(f"From {method.source} (the case file was not recorded)")
    columns = st.columns(5)
    columns[0].metric("Accuracy", f"{float(m['accuracy']):.3f}")
    columns[1].metric("Macro-F1", f"{float(m['macro_f1']):.3f}")
    columns[2].metric("Cases", f"{int(m['n'])}")
    columns[3].metric("Parse failures", f"{int(m.get('parse_failures', 0))}")
    failed = int(m.get("request_failures", 0))
    columns[4].metric("Request failures", f"{failed}")
    if failed:
        st.warning(
            f"{failed} case(s) have no verdict: their LLM request failed, so they are not "
            "scored. Rerun the same pcheck eval command to ask them again."
        )
    left, right = st.columns(2)
    with left:
        st.markdown("**Per class**")
        rows = per_class_rows(m)
        st.dataframe(rows, hide_index=True, width="stretch", column_config=_figures(rows))
    with right:
        st.markdown("**Confusion matrix** (rows gold, columns predicted)")
        shown = False
        if method.png is not None:
            try:
                st.image(method.png.read_bytes(), caption=method.png.name)
                shown = True
            except Exception:  # an unreadable picture: the table below says the same
                shown = False
        if not shown:
            st.dataframe(confusion_rows(m), hide_index=True, width="stretch")
        else:
            with st.expander("As a table"):
                st.dataframe(confusion_rows(m), hide_index=True, width="stretch")


def error_browser(methods: dict[str, Method]) -> None:
    logged = [k for k, m in methods.items() if m.log is not None]
    if not logged:
        st.info("No case log (METHOD.jsonl) in this run.")
        return
    if st.session_state.get(METHOD) not in logged:
        st.session_state[METHOD] = logged[0]
    columns = st.columns(4)
    with columns[0]:
        name = st.selectbox("Method", logged, key=METHOD)
    with columns[1]:
        gold = st.selectbox("Gold label", [ANY, *map(str, LABELS)], key=GOLD)
    with columns[2]:
        guess = st.selectbox(
            "Predicted label",
            [ANY, *map(str, (*LABELS, PARSE_FAILURE, REQUEST_FAILURE))],
            key=PREDICTED,
        )
    with columns[3]:
        mistakes = st.checkbox("Only mistakes", key=MISTAKES)
    records = records_of(methods[name])
    found = matching(records, gold, guess, mistakes=mistakes)
    st.caption(f"{len(found)} of {len(records)} cases")
    if not found:
        st.info("No case matches these filters.")
        return
    st.dataframe(
        [
            {
                "case": str(r.get("case_id")),
                "gold": str(r.get("gold")),
                "predicted": str(predicted(r)),
                "right": predicted(r) == r.get("gold"),
            }
            for r in found
        ],
        hide_index=True,
        width="stretch",
    )
    by_id = {str(r.get("case_id")): r for r in found}
    case = st.selectbox(
        "Open a case",
        list(by_id),
        index=None,
        key=CASE,
        placeholder="Choose a case",
        format_func=lambda c: (
            f"case {c}: gold {by_id[c].get('gold')}, predicted {predicted(by_id[c])}"
        ),
    )
    if case is None or case not in by_id:
        return
    try:
        show_record(by_id[case])
    except Exception as exc:  # an odd record never gives a traceback
        st.error(f"Case {case} cannot be shown: {one_line(exc)}")


def show_record(record: dict[str, Any]) -> None:
    verdict = Verdict.from_json(record)
    label = verdict.label
    right = label == record.get("gold")
    st.markdown(
        f"#### Case {common.md_escape(str(record.get('case_id')))}: "
        f"{':green[right]' if right else ':red[wrong]'}"
    )
    st.markdown(
        f"Gold: **{label_text(record.get('gold'))}** · Predicted: **{label_text(label)}**"
        + (f" · by {common.md_escape(verdict.llm)}" if verdict.llm else "")
    )
    if label == REQUEST_FAILURE:
        st.warning(
            f"No verdict: {verdict.failure or 'the LLM request failed'}. This says nothing "
            "about the method; rerunning the evaluation asks it again."
        )
    elif verdict.failure:
        st.warning(f"Why there is no verdict: {verdict.failure}")
    if verdict.probabilities:
        st.caption(
            "Probabilities: "
            + ", ".join(f"{label_text(k)} {v:.2f}" for k, v in verdict.probabilities.items())
        )
    st.markdown("**The norms it rests on**")
    lines = norm_lines(verdict.norms)
    st.markdown("\n".join(lines) if lines else "None.")
    st.markdown("**Reasoning**")
    steps = [" ".join(s.split()) for s in verdict.reasoning]
    st.markdown("\n".join(f"- {common.md_escape(s)}" for s in steps) or "(none given)")
    if verdict.flows:
        st.markdown("**Flows**")
        for number, flow in enumerate(verdict.flows, start=1):
            st.markdown(f"*{flow_title(number, flow)}*")
            st.markdown(flow_table(flow))
    if verdict.calls:
        st.markdown("**The model's raw answers**")
        for call in verdict.calls:
            with st.expander(call.step or "answer", expanded=True):
                st.code(
                    call.text if call.text is not None else f"(no answer: {call.error})",
                    language="text",
                    wrap_lines=True,
                )
                if call.messages:
                    st.caption("The prompt")
                    st.json(call.messages, expanded=False)
    elif verdict.raw and verdict.method not in OFFLINE_METHODS:
        st.markdown("**The model's raw answer**")
        st.code(verdict.raw, language="text", wrap_lines=True)
    with st.expander("The whole record (JSON)"):
        st.json(record, expanded=False)
