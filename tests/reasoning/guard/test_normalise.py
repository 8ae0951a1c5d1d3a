"""What people write to slip past the guard, read through (issue 28, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.guard.message import Guard, check_message
from privacy_checklist.reasoning.guard.normalise import normalise

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(kbmod.load(None))


def test_what_hides_an_identifier_is_undone_and_traced_back() -> None:
    text = "call mary dot jones at gmail dot com or Ma\u200brta, S S N: 2 1 9-0 9-9 9 9 9."
    found = normalise(text)
    assert "mary.jones@gmail.com" in found.text
    assert "Marta" in found.text and "SSN: 219-09-9999." in found.text
    at = found.text.index("mary.jones@gmail.com")
    start, end = found.original(at, at + len("mary.jones@gmail.com"))
    assert text[start:end] == "mary dot jones at gmail dot com"
    at = found.text.index("219-09-9999")
    start, end = found.original(at, at + len("219-09-9999"))
    assert text[start:end] == "2 1 9-0 9-9 9 9 9"


def test_ordinary_clinical_text_is_read_as_written() -> None:
    for text in ("K 3.6, Mg 2.0. Seen at clinic. Follow up at 5 pm.", "RR 16, BP 120/80, A B"):
        assert normalise(text).text == text
    # the writers' notes and questions: only what hides something changes
    lines = (ROOT / "bench" / "data" / "guard_text" / "n02.jsonl").read_text("utf-8")
    items = [json.loads(line) for line in lines.splitlines() if line.strip()]
    changed = [i for i in items if normalise(i["text"]).text != i["text"]]
    assert len(changed) <= len(items) // 5


def test_an_html_block_ends_a_line() -> None:
    text = check_message("<p>Patient: Ann Lee</p><p>DOB 03/04/1950</p><div>Dx: asthma</div>")
    assert text.splitlines() == ["Patient: Ann Lee", "DOB 03/04/1950", "Dx: asthma"]


def test_the_rewrite_takes_out_what_was_written_to_slip_past(guard: Guard) -> None:
    text = (
        "Pt Jo\u200bhn Smi\u200bth, SSN 219.09.9999, S S N: 2 1 9-0 9-9 9 9 9, reach him at "
        "john dot smith at gmail dot com; he is 93 years old and has asthma."
    )
    guarded = guard.check(text, to="ChatGPT", purpose="summarise this")
    rewrite = guarded.rewrite or ""
    for gone in ("Smi", "219.09", "9 9 9", "gmail", "93"):
        assert gone not in rewrite
    assert "90 or older" in rewrite and "asthma" in rewrite
    assert guarded.recheck is not None and guarded.recheck.passed
