"""The learned identifier tagger (issue 28): its word lists, its fitting, and the guard reading
clinical shorthand with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.guard.lexicon import lexicon, states
from privacy_checklist.reasoning.guard.message import Guard
from privacy_checklist.reasoning.guard.tagger import Tagged, Tagger, number, shipped, tokens
from privacy_checklist.reasoning.guard.tagger_fit import Maker, fit, varied

ROOT = Path(__file__).resolve().parents[3]
WRITERS = ROOT / "bench" / "data" / "guard_text"
NOTE = (
    "NEURO: A+OX3, MAE. CV: NSR 70S, NO ECTOPY. RESP: LUNGS CLEAR, RR 16, O2 2L NC. PAIN 4/10. "
    "GI: TOL CLEARS, "
    "+BS, ABD SOFT. GU: VOIDING QS. SOCIAL: WIFE MARTA CALLED AT 2200 (617-555-0142), UPDATED "
    "BY DR. OKAFOR. PT TO GO TO 5 WEST ON 4/12. MRN 00482913."
)


def read(writer: str) -> list[dict]:
    lines = (WRITERS / f"{writer}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_word_lists_know_names_places_words_and_states() -> None:
    words = lexicon()
    assert "F" in words["marta"] and "L" in words["okafor"]
    assert "P" in words["worcester"] and "W" in words["soft"]
    assert "de" in states() and "new york" in states()


def test_numbers_in_figures_and_in_words() -> None:
    assert number("91F") == 91
    assert number("ninety-three") == 93
    assert number("a hundred and two") == 102
    assert number("centenarian") is None


def test_an_age_of_89_or_a_state_is_no_identifier() -> None:
    assert Tagged(0, 2, "AGE", "89").guard_type is None
    assert Tagged(0, 12, "AGE", "ninety-four").guard_type == "AGE_OVER_89"
    assert Tagged(0, 2, "LOCATION", "DE").guard_type is None
    assert Tagged(0, 6, "LOCATION", "Dover").guard_type == "ADDRESS"
    assert Tagged(0, 9, "HOSPITAL", "St. Anne's").guard_type == "FACILITY"


def test_a_varied_copy_keeps_its_labels_on_the_made_up_identifiers() -> None:
    item = {
        "text": "WIFE MARTA CALLED 3/14, pt seen at Mercy Hospital by dr okafor",
        "spans": [
            {"start": 5, "end": 10, "type": "NAME"},
            {"start": 18, "end": 22, "type": "DATE"},
            {"start": 35, "end": 50, "type": "HOSPITAL"},
            {"start": 57, "end": 63, "type": "NAME"},
        ],
    }
    maker = Maker(seed=3)
    for _ in range(5):
        copy = varied(item, maker)
        assert copy["text"].startswith("WIFE ") and " CALLED " in copy["text"]
        first, *_, last = [copy["text"][s["start"] : s["end"]] for s in copy["spans"]]
        assert first == first.upper()  # cased as the writer wrote it
        assert last == last.lower()
        assert [s["type"] for s in copy["spans"]] == ["NAME", "DATE", "HOSPITAL", "NAME"]


def test_fitted_on_two_writers_it_reads_a_third(tmp_path: Path) -> None:
    """Leaving the writer out: fitted on two question writers, it finds most of a third's
    identifiers and flags few words that are none."""
    model = fit(read("q01") + read("q02"), tmp_path / "two.crfsuite", copies=0, iterations=60)
    tagger = Tagger(model)
    found = total = right = flagged = 0
    for item in read("q03"):
        spans = tagger.tag(item["text"])
        flagged += len(spans)
        for gold in item["spans"]:
            total += 1
            found += any(t.start < gold["end"] and gold["start"] < t.end for t in spans)
        right += sum(
            any(t.start < g["end"] and g["start"] < t.end for g in item["spans"]) for t in spans
        )
    assert found / total > 0.75
    assert right / flagged > 0.85


def test_the_tokens_keep_a_date_a_phone_and_an_email_whole() -> None:
    words = [w for _, _, w in tokens("seen 3/14, call 617-555-0142 or mary.jones@mail.com")]
    assert "3/14" in words and "617-555-0142" in words and "mary.jones@mail.com" in words


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(kbmod.load(None))


def test_a_note_in_capitals_loses_its_names_and_keeps_its_shorthand(guard: Guard) -> None:
    assert shipped() is not None
    guarded = guard.check(NOTE, to="ChatGPT", purpose="summarise this note")
    rewrite = guarded.rewrite or ""
    for gone in ("MARTA", "OKAFOR", "617-555-0142", "4/12", "00482913"):
        assert gone not in rewrite
    for kept in ("TOL CLEARS", "ABD SOFT", "VOIDING QS", "LUNGS CLEAR", "NEURO: A+OX3"):
        assert kept in rewrite
    # a rural route's form, which a respiratory rate shares, stands only where the tagger reads one
    assert "RR 16" in rewrite
    assert "2012" not in rewrite  # a day of a month has no year to generalise to


def test_a_partys_own_name_is_no_ones_phi(guard: Guard) -> None:
    text = "Claim for an office visit at Elmstead Hospital on 3/4/2024 for Ann Lee, knee pain."
    guarded = guard.check(
        text, to="Harbor Mutual claims", purpose="a claim", sender="billing at Elmstead Hospital"
    )
    flagged = {d.span.text for d in guarded.decisions if d.span.kind == "identifier"}
    assert "Ann Lee" in flagged
    assert "Elmstead Hospital" not in flagged
    other = guard.check(text, to="Harbor Mutual claims", purpose="a claim", sender="billing")
    assert "Elmstead Hospital" in {d.span.text for d in other.decisions}


def test_a_signature_is_the_senders_own_unless_all_must_go(guard: Guard) -> None:
    text = (
        "Claim for Ann Lee, knee arthroscopy on 3/4/2024.\n\nThank you,\nRenata Ilves\n"
        "Larkspur Billing Office | (617) 555-0190"
    )
    claim = guard.check(text, to="Harbor Mutual claims", purpose="a claim")
    flagged = {d.span.text for d in claim.decisions if d.span.kind == "identifier"}
    assert "Ann Lee" in flagged
    assert not flagged & {"Renata Ilves", "(617) 555-0190", "617) 555-0190"}
    prompt = guard.check(text, to="ChatGPT", purpose="summarise this")
    assert "Renata" not in (prompt.rewrite or "") and "555-0190" not in (prompt.rewrite or "")
