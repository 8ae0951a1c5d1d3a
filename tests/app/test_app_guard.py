"""The Guard page (app/ui/pages/guard.py) through Streamlit's AppTest, with the real engine:
paste a draft, say who it goes to and what for, press Guard, read the spans and the rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.samples import DRAFTS
from privacy_checklist.app.ui.pages import guard

TIMEOUT = 120

CLAIM = (
    "Resubmitting the claim for Marta Okafor (member ID ZHP555104422). DOS 05/14/2025, office "
    "visit 99213 for acute sinusitis (J01.90). FYI she also has bipolar disorder on lithium, not "
    "addressed at this visit."
)


def script() -> None:
    from privacy_checklist.app.ui.pages import guard

    guard.render()


@pytest.fixture
def env(monkeypatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path / "norms.sqlite"))
    monkeypatch.delenv("PCHECK_KB", raising=False)
    return tmp_path


def open_page() -> AppTest:
    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def test_guard_a_claim_and_read_the_rewrite(env: Path) -> None:
    at = open_page()
    at.text_area(key=guard.TEXT).input(CLAIM)
    at.text_input(key=guard.TO).input("the patient's health plan")
    at.text_input(key=guard.PURPOSE).input("payment: resubmitting a claim")
    at.button(key="guard-run").click().run()
    assert not at.exception and not at.warning
    result = at.session_state[guard.RESULT]
    assert result["verdict"] == "prohibit"
    assert result["purpose"]["key"] == "payment"
    removed = {s["text"] for s in result["spans"] if s["needed"] is False}
    assert any("bipolar" in t for t in removed)
    rewrite = at.text_area(key=guard.REWRITE).value
    assert rewrite == result["rewrite"]
    assert "Marta Okafor" in rewrite and "acute sinusitis" in rewrite
    assert "bipolar" not in rewrite and "lithium" not in rewrite
    assert result["recheck"]["passed"] and result["recheck"]["verdict"] == "permit"
    assert any("Not as written" in e.value for e in at.error)
    highlighted = next(m.value for m in at.markdown if "<mark" in m.value)
    assert "#ffa8a8" in highlighted and "bipolar" in highlighted  # the unneeded span, in red


def test_a_sample_fills_the_form(env: Path) -> None:
    at = open_page()
    title = next(t for t in DRAFTS if "chatbot" in t)
    at.selectbox(key=guard.SAMPLE).select(title).run()
    assert at.text_area(key=guard.TEXT).value == DRAFTS[title]["text"]
    at.button(key="guard-run").click().run()
    result = at.session_state[guard.RESULT]
    assert result["purpose"]["key"] == "llm_prompt"
    rewrite = at.text_area(key=guard.REWRITE).value
    assert "Dorian Vale" not in rewrite and "00482913" not in rewrite
    assert "obstructive sleep apnea" in rewrite  # what the letter is about stays


def test_empty_and_unread(env: Path) -> None:
    at = open_page()
    at.button(key="guard-run").click().run()
    assert any("Write or paste a message first" in w.value for w in at.warning)
    assert at.session_state[guard.RESULT] is None
    at.text_area(key=guard.TEXT).input("Hi, your MRI from 4/2 looks normal.")
    at.text_input(key=guard.TO).input("zzz")
    at.text_input(key=guard.PURPOSE).input("qqq")
    at.button(key="guard-run").click().run()
    assert not at.exception
    assert any("The purpose was not read" in w.value for w in at.warning)
