"""The Check page (app/ui/pages/check.py) through Streamlit's AppTest, with the real engine:
the shipped knowledge base, the offline reasoner and, for an LLM method, a scripted
OpenAI-compatible server on loopback."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.samples import DEMO_CASE
from privacy_checklist.app.ui.pages import check
from privacy_checklist.reasoning.reading.types import Flow, Part
from tests.scripted_llm import ScriptedLLM

TIMEOUT = 120  # the first check loads the embedding model


def script() -> None:
    from privacy_checklist.app.ui.pages import check

    check.render()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("index")


@pytest.fixture
def env(monkeypatch, tmp_path: Path, index_dir: Path) -> Path:
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path / "norms.sqlite"))
    monkeypatch.setenv("PCHECK_INDEX", str(index_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("PCHECK_LLM_BASE_URL", "PCHECK_LLM_MODEL", "PCHECK_KB"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def open_page() -> AppTest:
    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def markdowns(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def test_offline_check_of_a_sample(env: Path) -> None:
    at = open_page()
    # no LLM configured: the methods without one (the checklist, the default, and offline)
    assert at.selectbox(key=check.METHOD).options == [
        check.METHOD_HELP["checklist"],
        check.METHOD_HELP["offline"],
        check.METHOD_HELP["offline-fast"],
    ]
    assert at.selectbox(key=check.METHOD).value == "checklist"
    at.selectbox(key=check.METHOD).select("offline").run()
    assert any("need an LLM" in c.value for c in at.caption)
    sample = next(iter(check.SAMPLES))
    at.selectbox(key=check.SAMPLE).select(sample).run()
    assert at.text_area(key=check.NARRATIVE).value == check.SAMPLES[sample] == DEMO_CASE
    at.button(key="check-run").click().run()
    assert not at.exception
    assert not at.error
    result = at.session_state[check.RESULT]
    verdict = result["verdict"]
    label = verdict["verdict"]
    # the offline model's label is its likeliest (it reads this clear prohibition wrongly:
    # issue 27; the default method's verdict on it is asserted below)
    probabilities = verdict["probabilities"]
    assert label == max(probabilities, key=probabilities.__getitem__)
    shown = markdowns(at)
    assert any("Verdict" in m and check.LABEL_TEXT[label] in m for m in shown)
    assert len(at.metric) == 3  # the three probabilities
    # the flows: the sender's words inside a coloured mark of the narrative
    flows = verdict["flows"]
    assert flows and flows[0]["sender"]
    sender = flows[0]["sender"]["text"]
    highlighted = [m for m in shown if m.startswith('<div style="line-height')]
    assert len(highlighted) == 1
    assert f">{html.escape(sender)}</mark>" in highlighted[0]
    assert check.PART_COLORS["sender"] in highlighted[0]
    assert any(check.PART_COLORS["recipient"] in m and "recipient" in m for m in shown)  # legend
    # norms as links to the Regulation page, with the retrieval hits and their scores
    assert any("](/regulation?node=" in m for m in shown)
    assert result["hits"] and all("score" in h for h in result["hits"])
    assert any(m.startswith("| # | paragraph | score") for m in shown)
    # a second check on the loaded page (its speed is measured by bench/app.py, not here)
    at.button(key="check-run").click().run()
    assert not at.exception
    # downloads: the result as JSON (it holds the verdict and the narrative) and the report
    assert [b.label for b in at.download_button] == [
        "The result as JSON",
        "The report as Markdown",
    ]
    data = json.loads(check.result_json(at.session_state[check.RESULT]))
    assert data["verdict"] == label and data["narrative"] == DEMO_CASE
    # the default method on the same sample: a surgeon's records to a detective, no consent
    at.selectbox(key=check.METHOD).select("checklist").run()
    at.button(key="check-run").click().run()
    assert not at.exception
    assert at.session_state[check.RESULT]["verdict"]["verdict"] == "prohibit"


def test_empty_narrative_warns(env: Path) -> None:
    at = open_page()
    at.button(key="check-run").click().run()
    assert not at.exception
    assert any("narrative" in w.value for w in at.warning)
    assert not any("Verdict" in m for m in markdowns(at))
    at.text_area(key=check.NARRATIVE).set_value("   \n  ").run()
    at.button(key="check-run").click().run()
    assert not at.exception
    assert any("narrative" in w.value for w in at.warning)


@pytest.mark.filterwarnings("ignore:query of .* truncated")
def test_very_long_narrative_is_cut_not_crashed(env: Path) -> None:
    at = open_page()
    text = "A nurse at the clinic told a reporter about a patient's cancer. " * 900
    assert len(text) > check.common.MAX_CASE_CHARS
    at.text_area(key=check.NARRATIVE).set_value(text).run()
    assert not at.exception
    at.button(key="check-run").click().run()
    assert not at.exception
    assert not at.error
    assert any(f"{check.common.MAX_CASE_CHARS:,} were checked" in w.value for w in at.warning)
    assert len(at.session_state[check.RESULT]["text"]) == check.common.MAX_CASE_CHARS
    assert any("Verdict" in m for m in markdowns(at))


def test_engine_error_is_one_line(env: Path) -> None:
    # an LLM method with no LLM configured: the engine raises; the page gets one line
    result = check.run_check("A doctor told a friend about a patient.", "dp", 5)
    assert "error" in result and "no LLM configured" in result["error"]
    assert "\n" not in result["error"] and "Traceback" not in result["error"]


def test_report_markdown(env: Path) -> None:
    result = check.run_check(check.SAMPLES[next(iter(check.SAMPLES))], "offline", 5)
    verdict = result["verdict"]
    report = check.report_markdown(result["text"], verdict, result["hits"])
    assert report.startswith("# Privacy check")
    assert f"**Verdict: {check.LABEL_TEXT[verdict['verdict']]}** (`{verdict['verdict']}`)" in report
    assert "> " + DEMO_CASE in report
    for norm in verdict["norms"]:
        assert f"- **{norm['id']}**" in report
    assert "## The flows" in report and "### Flow 1" in report
    sender = verdict["flows"][0]["sender"]
    assert f"| sender | {sender['text']} | {sender['resolved']} |" in report
    assert "## Reasoning" in report and verdict["reasoning"][0].split(":")[0] in report
    assert result["hits"][0]["node"] in report
    # an LLM verdict: its raw answers; no flows; a parse failure said as such
    llm = {
        "verdict": "parse_failure",
        "method": "dp",
        "llm": "llm:scripted-1",
        "norms": [],
        "flows": [],
        "reasoning": [],
        "failure": "dp: no JSON 'answer' field",
        "answers": [{"step": "dp", "text": "I cannot tell.", "error": None}],
    }
    report = check.report_markdown("A case.", llm)
    assert "No verdict" in report and "Failure: dp: no JSON" in report
    assert "## The model's raw answers" in report and "I cannot tell." in report
    assert "No flow was read" in report


def test_highlight_escapes_the_narrative() -> None:
    text = "Dr. <b>Lee</b> & co sent $5 of records\n\nto the <script>police</script>."
    start = text.index("<b>Lee</b>")
    flows = [
        Flow(
            sender=Part(text="<b>Lee</b>", start=start, end=start + 10, resolved="x"),
            recipient=Part(text="police", start=-1, end=-1),
            information=Part(text="not in it", start=-1, end=-1),
            verb=Part(text="sent", start=200, end=204),  # a stale span
        )
    ]
    out = check.highlight_html(text, flows)
    assert "<b>" not in out and "<script>" not in out
    assert ">&lt;b&gt;Lee&lt;/b&gt;</mark>" in out
    assert ">police</mark>" in out  # found by its words
    assert ">sent</mark>" in out
    assert "not in it" not in out
    assert "&#36;5" in out and "\n" not in out and out.count("<br>") == 2
    assert (
        check.highlight_html("Plain text.", []) == '<div style="line-height:1.9">Plain text.</div>'
    )


def test_llm_method_shows_raw_answers(env: Path, monkeypatch) -> None:
    answer = json.dumps(
        {"reasoning": "The plan shares PHI without authorization.", "answer": "prohibited"}
    )
    with ScriptedLLM(lambda body, n: answer) as server:
        monkeypatch.setenv("PCHECK_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("PCHECK_LLM_MODEL", "scripted-1")
        at = open_page()
        assert check.METHOD_HELP["dp"] in at.selectbox(key=check.METHOD).options
        assert not any("need an LLM" in c.value for c in at.caption)
        at.selectbox(key=check.METHOD).select("dp").run()
        at.text_area(key=check.NARRATIVE).set_value(check.SAMPLES[next(iter(check.SAMPLES))])
        at.button(key="check-run").click().run()
        assert not at.exception
        assert not at.error
        assert at.session_state[check.RESULT]["verdict"]["verdict"] == "prohibit"
        assert any(check.LABEL_TEXT["prohibit"] in m for m in markdowns(at))
        assert any("prohibited" in c.value for c in at.code)  # the raw answer
        assert server.requests
