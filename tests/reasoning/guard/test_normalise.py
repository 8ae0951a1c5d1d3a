"""What people write to slip past the guard, read through (issue 28, item 4)."""

from __future__ import annotations

import json
import re
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


def _prompt_rewrite(guard: Guard, text: str, gone: tuple[str, ...]) -> str:
    """The rewrite of ``text`` as a prompt to an outside model: none of ``gone`` in it, and
    its re-check passed."""
    guarded = guard.check(text, to="ChatGPT", purpose="summarise this")
    rewrite = guarded.rewrite or ""
    assert not [g for g in gone if g in rewrite]
    assert guarded.recheck is not None and guarded.recheck.passed
    return rewrite


def test_the_rewrite_takes_out_what_was_written_to_slip_past(guard: Guard) -> None:
    text = (
        "Pt Jo\u200bhn Smi\u200bth, SSN 219.09.9999, S S N: 2 1 9-0 9-9 9 9 9, reach him at "
        "john dot smith at gmail dot com; he is 93 years old and has asthma."
    )
    rewrite = _prompt_rewrite(guard, text, ("Smi", "219.09", "9 9 9", "gmail", "93"))
    assert "90 or older" in rewrite and "asthma" in rewrite


def test_digits_and_years_said_in_words_are_read_as_numbers() -> None:
    text = "Her social is two one nine, zero nine, nine nine nine nine; born nineteen fifty-two."
    found = normalise(text)
    assert "219-09-9999" in found.text and "born 1952." in found.text
    at = found.text.index("219-09-9999")
    start, end = found.original(at, at + len("219-09-9999"))
    assert text[start:end] == "two one nine, zero nine, nine nine nine nine"
    assert normalise("in two thousand and nine").text == "in 2009"
    for text in ("Take one or two tablets three times a day.", "Oh, nine of ten improved."):
        assert normalise(text).text == text


def test_a_number_or_birth_date_said_in_words_is_taken_out(guard: Guard) -> None:
    text = (
        "Summarise: call her at five five five, two one two, nine nine eight seven; MRN "
        "eight four four two one nine; born the fourth of March, nineteen fifty-two; asthma."
    )
    rewrite = _prompt_rewrite(guard, text, ("five five", "eight four", "March", "fifty-two"))
    assert "asthma" in rewrite


def _turns(speaker: str, recipient: str, *texts: str) -> list[dict[str, str]]:
    return [{"speaker": speaker, "recipient": recipient, "text": t} for t in texts]


def test_an_identifier_given_in_pieces_is_stopped_at_the_piece_that_completes_it(
    guard: Guard,
) -> None:
    turns = _turns(
        "billing clerk at Mercy Hospital",
        "a caller",
        "The first three digits of the social on file are 219.",
        "The middle two are zero nine.",
        "The last four are 9999.",
    )
    results = guard.conversation(turns)
    assert [r["stop"] for r in results] == [False, False, True]
    assert results[2]["completed"] == [
        {"number": "219-09-9999", "type": "SSN", "with_turns": [1, 2]}
    ]
    assert "219-09-9999" in results[2]["why"] and "turns 1 and 2" in results[2]["why"]
    assert "9999" not in (results[2]["safer"] or "")
    # a record number in pieces, named by the words before its first piece
    record = _turns(
        "nurse at Mercy Hospital",
        "ChatGPT",
        "Her medical record number begins 8442.",
        "It ends one nine zero.",
    )
    results = guard.conversation(record, purpose="summarise this")
    assert [r["stop"] for r in results] == [False, True]
    assert results[1]["completed"][0]["type"] == "MRN"
    # told to someone else, the pieces do not add up
    other = [dict(turns[0]), dict(turns[1]), {**turns[2], "recipient": "a second caller"}]
    assert not guard.conversation(other)[2]["stop"]


def test_numbers_over_turns_that_make_no_identifier_go(guard: Guard) -> None:
    turns = _turns(
        "nurse at Mercy Hospital",
        "Dr. Patel, the covering cardiologist",
        "Her BP is 120 over 80 this morning.",
        "Pulse 72, sats 98 percent on room air.",
        "Weight 81 kg, down 2 since Monday.",
    )
    results = guard.conversation(turns, purpose="treatment")
    assert not any(r["stop"] for r in results)
    assert not any(r.get("completed") for r in results)


def test_a_writers_conversations_in_pieces(guard: Guard) -> None:
    """In-sample floor on the first pieces writer (the rules were changed after reading it;
    bench/guard_pieces/measure.py gives every writer's figures): most completing turns put
    together, and no number put together where the writer wrote none."""
    lines = (ROOT / "bench" / "data" / "guard_pieces" / "p01.jsonl").read_text("utf-8")
    found = labelled = false = 0
    for conversation in [json.loads(line) for line in lines.splitlines() if line.strip()]:
        labels = [t.get("completes") for t in conversation["turns"]]
        last = max((n for n, label in enumerate(labels, 1) if label), default=0)
        for label, result in zip(labels, guard.conversation(conversation["turns"]), strict=True):
            said = {c["number"].replace("-", "") for c in result.get("completed", [])}
            if label:
                labelled += 1
                found += re.sub(r"\D", "", label["number"]) in said
            elif said and result["turn"] > last:
                false += 1
    assert labelled >= 20 and found / labelled >= 0.65 and false == 0
