"""The Evaluation page (app/ui/pages/evaluation.py) through Streamlit's AppTest, on a real run
folder written by ``pcheck eval`` (the offline method on six synthetic val cases)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app import cli
from privacy_checklist.app.ui.pages import evaluation

TIMEOUT = 60


def script() -> None:
    from privacy_checklist.app.ui.pages import evaluation

    evaluation.render()


@pytest.fixture(scope="module")
def runs(shared: Path, tmp_path_factory) -> Path:
    """A folder of runs holding one real run, ``val-offline``."""
    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCHECK_STORE", str(root.parent / "norms.sqlite"))
        code = cli.main(
            [
                "eval",
                "--method",
                "offline",
                "--cases",
                str(shared / "cases" / "val_generate_cases_hipaa_applicability.csv"),
                "--limit",
                "6",
                "--out",
                str(root / "val-offline"),
                "--index",
                str(tmp_path_factory.mktemp("index")),
            ]
        )
    assert code == 0
    return root


@pytest.fixture
def env(monkeypatch, tmp_path: Path) -> Path:
    """The test's folder, which is also the runs folder the operator set (pcheck app --runs)."""
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path / "norms.sqlite"))
    monkeypatch.setenv("PCHECK_RUNS", str(tmp_path))
    return tmp_path


def open_page(folder: Path | str | None = None) -> AppTest:
    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    if folder is not None:
        at.text_input(key=evaluation.FOLDER).set_value(str(folder)).run()
        assert not at.exception
    return at


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def test_metrics_per_class_and_comparison(runs: Path, env: Path, monkeypatch) -> None:
    monkeypatch.setenv("PCHECK_RUNS", str(runs))  # the default folder: pcheck app --runs
    at = open_page()
    assert at.text_input(key=evaluation.FOLDER).value == ""  # the whole runs folder
    assert any(f"Runs are read from {runs}" in c.value for c in at.caption)
    assert not at.info and not at.warning
    saved = json.loads((runs / "val-offline" / "offline.metrics.json").read_text())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Accuracy"] == f"{saved['accuracy']:.3f}"
    assert metrics["Macro-F1"] == f"{saved['macro_f1']:.3f}"
    assert metrics["Cases"] == "6"
    assert metrics["Parse failures"] == str(saved["parse_failures"])
    tables = frames(at)
    compare = next(t for t in tables if "macro-F1" in t.columns)
    assert list(compare["run"]) == ["val-offline"] and list(compare["method"]) == ["offline"]
    per_class = next(t for t in tables if "precision" in t.columns)
    assert list(per_class["class"]) == ["permit", "prohibit", "not applicable"]
    assert list(per_class["support"]) == [
        saved["per_class"][label]["support"] for label in ("permit", "prohibit", "not_applicable")
    ]
    assert list(per_class["F1"]) == [
        round(saved["per_class"][label]["f1"], 3)
        for label in ("permit", "prohibit", "not_applicable")
    ]
    assert len(at.image) == 1  # the confusion PNG
    confusion = next(t for t in tables if "gold \\ predicted" in t.columns)
    row = confusion[confusion["gold \\ predicted"] == "permit"].iloc[0]
    columns = ("permit", "prohibit", "not applicable", "parse failure")
    assert sum(int(row[c]) for c in columns) == saved["per_class"]["permit"]["support"]
    assert int(row["permit"]) == saved["confusion"]["permit"]["permit"]
    assert any("| offline | 6 |" in m.value for m in at.markdown)  # the paper-style table


def test_error_browser(runs: Path, env: Path) -> None:
    run = env / "runs" / "torn"
    shutil.copytree(runs / "val-offline", run)
    log = run / "offline.jsonl"
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"case_id": "99", "gold": "permit", "verd')  # a torn last line
    records = [json.loads(line) for line in log.read_text().splitlines()[:-1]]
    at = open_page("runs/torn")  # the run folder itself, below the runs folder
    assert not at.warning
    assert any(c.value == f"{len(records)} of {len(records)} cases" for c in at.caption)
    gold = records[0]["gold"]
    guess = records[0]["verdict"]
    at.selectbox(key=evaluation.GOLD).select(gold).run()
    at.selectbox(key=evaluation.PREDICTED).select(guess).run()
    assert not at.exception
    expected = [r for r in records if r["gold"] == gold and r["verdict"] == guess]
    assert any(c.value == f"{len(expected)} of {len(records)} cases" for c in at.caption)
    listed = next(t for t in frames(at) if "predicted" in t.columns and "case" in t.columns)
    assert list(listed["case"]) == [r["case_id"] for r in expected]
    # a label no case was given
    other = next(lab for lab in ("prohibit", "not_applicable", "parse_failure") if lab != guess)
    if not any(r["verdict"] == other and r["gold"] == gold for r in records):
        at.selectbox(key=evaluation.PREDICTED).select(other).run()
        assert any("No case matches" in i.value for i in at.info)
        at.selectbox(key=evaluation.PREDICTED).select(evaluation.ANY).run()
    # open a case: its record
    case = expected[0]
    at.selectbox(key=evaluation.CASE).select(case["case_id"]).run()
    assert not at.exception
    shown = [m.value for m in at.markdown]
    assert any(m.startswith(f"#### Case {case['case_id']}") for m in shown)
    for norm in case["norms"]:
        assert any(f"[{norm['id']}](/regulation?node=" in m for m in shown)
    assert any(case["reasoning"][0].split(":")[0] in m for m in shown)
    if case["flows"]:
        assert any(m.startswith("| part | words in the case") for m in shown)
    assert at.json  # the whole record


def test_metrics_from_the_log_alone(runs: Path, env: Path) -> None:
    run = env / "runs" / "unfinished"
    shutil.copytree(runs / "val-offline", run)
    (run / "offline.metrics.json").unlink()
    (run / "offline.confusion.png").write_bytes(b"not a picture")
    at = open_page(env / "runs")  # an absolute path inside the runs folder
    assert not at.exception
    assert any("measured from the log" in c.value for c in at.caption)
    assert {m.label: m.value for m in at.metric}["Cases"] == "6"


@pytest.mark.parametrize("kind", ["missing", "file", "empty", "garbage"])
def test_bogus_folders_are_explained(env: Path, kind: str) -> None:
    folder = env / "bogus"
    if kind == "file":
        folder.write_text("hello")
    elif kind in ("empty", "garbage"):
        folder.mkdir()
    if kind == "garbage":
        (folder / "offline.metrics.json").write_text("{not json")
        (folder / "dp.metrics.json").write_text(json.dumps({"n": 3, "accuracy": "high"}))
        (folder / "cot-auto.jsonl").write_text('[1, 2]\n{"no": "case id"}\n\x00\x01')
        (folder / "table.md").write_text("| nothing |")
    at = open_page("bogus")
    assert not at.exception
    assert not at.error
    if kind == "garbage":
        assert any("offline.metrics.json cannot be read" in w.value for w in at.warning)
        assert any("dp.metrics.json cannot be read" in w.value for w in at.warning)
    else:
        assert at.info
    assert not at.metric


@pytest.mark.parametrize("where", ["/etc", "/root/.ssh", "/no/such/folder", "..", "../..", "link"])
def test_only_folders_below_the_runs_folder_are_read(runs: Path, env: Path, where: str) -> None:
    """Neither whether a folder outside exists, nor anything in it, is shown."""
    outside = env.parent / f"{env.name}-outside"
    outside.mkdir(exist_ok=True)
    shutil.copytree(runs / "val-offline", outside / "run", dirs_exist_ok=True)
    (env / "link").symlink_to(outside, target_is_directory=True)
    at = open_page(where)
    assert not at.exception and not at.metric and not at.dataframe
    (said,) = [i.value for i in at.info]
    assert said.startswith(f"{where!r} is not a folder below the runs folder {env}")
    at = open_page()  # the whole runs folder: the link out is not followed
    assert not at.metric and not at.dataframe
