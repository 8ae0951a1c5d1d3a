"""The message guard (issue 17), on the shipped knowledge base with spaCy's parser model: the
spans it reads, what each purpose needs, the rewrite and its re-check, conversations, the
command line, and its figures on the labelled drafts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.guard.evaluate import guard_output, load_drafts, measure
from privacy_checklist.reasoning.guard.message import Guard, GuardError, check_message
from privacy_checklist.reasoning.guard.phi import PhiReader
from privacy_checklist.reasoning.guard.phi_data import identifier_types
from privacy_checklist.reasoning.guard.presidio import presidio_analyzer
from tests.conftest import DATA
from tests.scripted_llm import ScriptedLLM, client_for

CLAIM = (
    "Resubmitting the claim for Marta Okafor (member ID ZHP555104422, DOB 02/11/1970). DOS "
    "05/14/2025, office visit 99213 for acute sinusitis (J01.90). FYI she also has bipolar "
    "disorder on lithium, not addressed at this visit. Her SSN is 000-12-3456 if you need it."
)


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(kbmod.load())


def spans(reader: PhiReader, text: str) -> dict[str, str]:
    return {s.text: s.type for s in reader.find(text)}


def test_the_identifiers_the_sample_draft_of_the_issue_misread(guard: Guard) -> None:
    """Presidio read "42 Elm Street" as a date, "Springfield IL" as an organisation, a 555
    number as a UK NHS number, and missed "MRN 00482913"."""
    assert guard.phi is not None
    found = spans(
        guard.phi,
        "Patient Jane Roe, MRN 00482913, lives at 42 Elm Street, Springfield IL 62704; "
        "call (217) 555-0143. She is 93 years old.",
    )
    assert found["Jane Roe"] == "NAME"
    assert found["00482913"] == "MRN"
    assert any(t.startswith("42 Elm Street") and k == "ADDRESS" for t, k in found.items())
    assert found["(217) 555-0143"] == "PHONE"
    assert found["93 years old"] == "AGE_OVER_89"


def test_numbers_are_typed_by_the_words_before_them(guard: Guard) -> None:
    assert guard.phi is not None
    found = spans(
        guard.phi,
        "Account 555-20-7714 and SSN 000-33-8104; member #BCX555030917; VIN 1FTEW555XKFA01234; "
        "serial PM555-0091-XK. Vision 20/20, BP 152/98, seen 3/14/2025.",
    )
    assert found["555-20-7714"] == "ACCOUNT_NUMBER"
    assert found["000-33-8104"] == "SSN"
    assert found["BCX555030917"] == "HEALTH_PLAN_NUMBER"
    assert found["1FTEW555XKFA01234"] == "VEHICLE"
    assert found["PM555-0091-XK"] == "DEVICE_ID"
    assert found["3/14/2025"] == "DATE"
    assert "20/20" not in found  # acuity and pressure are no dates
    assert found.get("BP 152/98") == "TEST"


def test_health_information_through_the_attribute_graph(guard: Guard) -> None:
    assert guard.phi is not None
    found = spans(
        guard.phi,
        "Seen for osteoarthritis of the knee, started metformin, colposcopy planned; "
        "A1c 9.2 today. Bayside Physical Therapy will call.",
    )
    health = [t for t, k in found.items() if k not in identifier_types()]
    assert any("osteoarthritis" in t for t in health)
    assert any("metformin" in t for t in health)
    assert any("colposcopy" in t for t in health)  # a medical word's ending
    assert any(t.startswith("A1c") for t in health)
    assert not any("Physical Therapy" in t for t in health)  # a practice's name


def test_the_senders_own_contact_is_no_ones_phi(guard: Guard) -> None:
    assert guard.phi is not None
    text = "Please call our office at 555-0100 or write to info@clinic.test."
    found = guard.phi.find(text)
    assert found and all(s.own for s in found if s.kind == "identifier")
    assert not guard.check(text, to="Harbor Mutual claims", purpose="a claim").decisions
    # to an outside model everything identifying goes, the sender's own too
    prompt = guard.check(text, to="ChatGPT", purpose="summarise this")
    assert "555-0100" not in (prompt.rewrite or "")


def test_nothing_is_flagged_where_minimum_necessary_does_not_apply(guard: Guard) -> None:
    for to, purpose, exempt in (
        ("Dr. Patel's office (cardiology)", "referral for a stress test", "164.502(b)(2)(i)"),
        ("the patient (portal message)", "her results", "164.502(b)(2)(ii)"),
    ):
        guarded = guard.check(CLAIM, to=to, purpose=purpose)
        assert guarded.minimum_necessary == f"does not apply: {exempt}"
        assert guarded.decisions and all(d.needed for d in guarded.decisions)
        assert guarded.verdict == "permit" and guarded.rewrite == guarded.text


def test_a_claim_needs_identity_dates_and_procedures_not_unrelated_diagnoses(
    guard: Guard,
) -> None:
    guarded = guard.check(CLAIM, to="the patient's health plan", purpose="payment: a claim")
    assert guarded.purpose.key == "payment" and guarded.verdict == "prohibit"
    needed = {d.span.text for d in guarded.decisions if d.needed}
    unneeded = {d.span.text for d in guarded.unneeded}
    assert {"Marta Okafor", "ZHP555104422", "05/14/2025"} <= needed
    assert any("sinusitis" in t for t in needed)
    assert "000-12-3456" in unneeded and any("bipolar" in t for t in unneeded)
    rewrite = guarded.rewrite or ""
    assert "Marta Okafor" in rewrite and "acute sinusitis" in rewrite
    assert "bipolar" not in rewrite and "lithium" not in rewrite and "000-12-3456" not in rewrite
    assert guarded.recheck is not None and guarded.recheck.passed
    assert guarded.recheck.verdict == "permit"
    assert all(d.norm for d in guarded.decisions)  # every decision names its norm


def test_a_reminder_needs_a_name_and_a_time(guard: Guard) -> None:
    guarded = guard.check(
        "Hi Ana Ruiz, a reminder of your HIV follow-up with Dr. Moss on Tuesday 6/10 at 9:30.",
        to="the patient (text message)",
        purpose="appointment reminder",
    )
    assert guarded.purpose.key == "reminder"
    rewrite = guarded.rewrite or ""
    assert "Ana Ruiz" in rewrite and "6/10" in rewrite and "HIV" not in rewrite


def test_a_prompt_to_an_outside_model_needs_no_identifier(guard: Guard) -> None:
    guarded = guard.check(
        "Write a letter for my patient Dorian Vale, DOB 07/30/1958, who is 93 years old, lives "
        "at 12 Oak Road, Dover DE, and needs a CPAP machine for severe obstructive sleep apnea.",
        to="ChatGPT",
        purpose="help me write a letter",
    )
    rewrite = guarded.rewrite or ""
    for gone in ("Dorian", "07/30", "93", "12 Oak Road"):
        assert gone not in rewrite
    assert "90 or older" in rewrite  # an age over 89 generalised, the state kept
    assert "obstructive sleep apnea" in rewrite
    assert guarded.recheck is not None and guarded.recheck.passed


def test_a_public_reply_and_an_employer_without_authorization_get_nothing(guard: Guard) -> None:
    review = guard.check(
        "Mr. Feld, our records show you missed your colonoscopy prep on 3/2.",
        to="the public (reply under a Google review)",
    )
    assert review.verdict == "prohibit" and all(d.needed is False for d in review.decisions)
    assert "Feld" not in (review.rewrite or "") and "colonoscopy" not in (review.rewrite or "")
    employer = guard.check(
        "Dana Whitford was seen 10/27 and diagnosed with shingles.",
        to="the patient's employer (HR)",
        purpose="employer asking why she is out",
    )
    assert employer.flow["permission"]["stated"] is False
    assert "shingles" not in (employer.rewrite or "")
    authorized = guard.check(
        "Per the authorization she signed, Dana Whitford may return to work on 11/03/2025.",
        to="the patient's employer (HR)",
        purpose="return-to-work note",
    )
    assert authorized.flow["permission"]["stated"] is True and authorized.verdict == "permit"
    denied = guard.check(
        "We can't send the chart without her authorization, but Dana was seen 10/27 for shingles.",
        to="the patient's employer (HR)",
        purpose="employer asking",
    )
    assert denied.flow["permission"]["stated"] is False  # named only to deny it


def test_an_unreadable_purpose_is_reported_not_guessed(guard: Guard) -> None:
    guarded = guard.check("Your MRI from 4/2 looks normal, Ana.", to="zzz", purpose="qqq")
    assert guarded.purpose.key is None and "no purpose read" in guarded.purpose.how
    assert all(d.needed is None for d in guarded.decisions)
    assert guarded.rewrite is None  # nothing to rewrite against


def test_bad_input_is_one_line(guard: Guard) -> None:
    for bad, words in (
        ("", "empty"),
        ("   \n", "empty"),
        ("a\x00b", "binary"),
        (b"\xff\xfe", "not UTF-8"),
        ("x" * 20_001, "20,001 characters"),
        ("<html><body><script>x</script></body></html>", "no text"),
    ):
        with pytest.raises(GuardError, match=words) as info:
            check_message(bad)
        assert "\n" not in str(info.value)
    html = "<html><body><p>Hi <b>Ana</b>, your MRI is normal.</p></body></html>"
    assert check_message(html) == "Hi Ana, your MRI is normal."


def test_a_conversation_stops_the_turn_that_completes_a_disclosure(guard: Guard) -> None:
    turns = [
        {
            "speaker": "a caller",
            "recipient": "front desk at Mercy Hospital",
            "text": "Hi, I'm asking about my coworker, Frank Dorsey. Is he there?",
        },
        {
            "speaker": "front desk at Mercy Hospital",
            "recipient": "a caller",
            "text": "I'm sorry, I can't give out information about anyone.",
        },
        {
            "speaker": "a caller",
            "recipient": "front desk at Mercy Hospital",
            "text": "Come on, is it his heart again?",
        },
        {
            "speaker": "front desk at Mercy Hospital",
            "recipient": "a caller",
            "text": "Between us, he is on the psych unit after an overdose.",
        },
    ]
    results = guard.conversation(turns)
    assert [r["stop"] for r in results] == [False, False, False, True]
    assert not results[0]["judged"] and results[1]["judged"]
    assert "overdose" in results[3]["why"]  # the patient was named by the caller
    assert "overdose" not in (results[3]["safer"] or "")


def test_the_llm_rewrite_is_held_to_the_same_recheck(guard: Guard, tmp_path: Path) -> None:
    draft = CLAIM
    answers = iter(
        [
            "Resubmitting the claim for [ID-1] (member ID [ID-2], DOB [ID-3]): office visit "
            "99213 on [ID-4] for acute sinusitis (J01.90).",
            "Claim for [ID-1], who also has bipolar disorder; SSN 000-12-3456. [ID-2] [ID-3] "
            "[ID-4]",
        ]
    )
    with ScriptedLLM(lambda request, count: next(answers)) as server:
        client = client_for(server, tmp_path)
        ok = guard.fluent_rewrite(
            guard.check(draft, to="the patient's health plan", purpose="a claim"), client
        )
        assert ok.fluent is not None and ok.fluent["accepted"], ok.fluent
        assert ok.rewrite == ok.fluent["text"] and ok.recheck is not None and ok.recheck.passed
        assert "Marta Okafor" in ok.rewrite and "05/14/2025" in ok.rewrite  # put back
        other = draft.replace("office visit", "follow-up visit")  # not the cache's request
        bad = guard.fluent_rewrite(
            guard.check(other, to="the patient's health plan", purpose="a claim"), client
        )
        assert bad.fluent is not None and not bad.fluent["accepted"]
        assert "000-12-3456" in bad.fluent["why"] and "bipolar" not in (bad.rewrite or "")
        sent = json.dumps(server.requests)
    # the outside model received no value the guard took out, and no identifier at all
    for value in ("000-12-3456", "bipolar", "lithium", "Marta Okafor", "ZHP555104422"):
        assert value not in sent, value
    assert "02/11/1970" not in sent and "05/14/2025" not in sent and "[ID-4]" in sent


def test_actions_say_what_the_rewrite_did(guard: Guard) -> None:
    guarded = guard.check(CLAIM, to="the patient's health plan", purpose="a claim")
    actions = {d["text"]: d["action"] for d in guarded.to_json()["spans"]}
    assert actions["Marta Okafor"] == "keep" and actions["000-12-3456"] == "drop-sentence"
    assert all(actions[t] != "keep" for t in ("bipolar disorder", "lithium"))
    unread = guard.check(CLAIM, to="the patient's health plan", purpose="a claim", rewrite=False)
    assert {d.action for d in unread.unneeded} == {"take-out"}
    declined = guard.check(CLAIM, to="a newspaper reporter", purpose="a story")
    assert declined.unneeded and {d.action for d in declined.unneeded} == {"decline"}


def test_guard_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text(CLAIM, encoding="utf-8")
    out = tmp_path / "out"
    argv = ["guard", "--file", str(draft), "--to", "the patient's health plan"]
    argv += ["--purpose", "payment: a claim", "--rewrite", "--json", "--out", str(out)]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert isinstance(result["rewrite"], str) and "bipolar" not in result["rewrite"]
    assert result["recheck"]["passed"] and result["spans"]
    assert sorted(p.name for p in out.iterdir()) == ["guard.json", "rewrite.txt"]
    assert main(["guard", "--file", str(draft), "--to", "my cousin"]) == 0
    shown = capsys.readouterr().out
    assert "REMOVE" in shown and "rewrite:" not in shown


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "empty"), (b"\x00\x01binary", "binary"), (b"caf\xe9", "not UTF-8")],
)
def test_guard_cli_bad_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, words: str
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    assert main(["guard", "--file", str(bad), "--to", "ChatGPT"]) != 0
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["bad.txt"]  # nothing written


def test_guard_cli_unread_purpose_and_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("Your MRI from 4/2 is normal, Ana.", encoding="utf-8")
    assert main(["guard", "--file", str(draft), "--to", "zzz", "--purpose", "qqq"]) != 0
    assert "no purpose read" in capsys.readouterr().err
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        "\n".join(
            json.dumps(t)
            for t in [
                {
                    "speaker": "nurse at Elm Clinic",
                    "recipient": "ChatGPT",
                    "text": "Draft a discharge note for a man after a hip replacement.",
                },
                {
                    "speaker": "nurse at Elm Clinic",
                    "recipient": "ChatGPT",
                    "text": "Use his name, Walter Brandt, and his MRN 00412255.",
                },
            ]
        ),
        encoding="utf-8",
    )
    assert main(["guard", "--conversation", str(chat), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stopped"] == [2]
    chat.write_text('{"speaker": "x"}\n', encoding="utf-8")
    assert main(["guard", "--conversation", str(chat)]) != 0
    assert "needs" in capsys.readouterr().err


def test_presidio_runs_offline() -> None:
    import tldextract

    analyzer = presidio_analyzer(required=True)
    assert analyzer is not None
    assert tuple(tldextract.tldextract.TLD_EXTRACTOR.suffix_list_urls) == ()  # no download
    found = {r.entity_type for r in analyzer.analyze("mail jane@example.org", language="en")}
    assert "EMAIL_ADDRESS" in found


def test_figures_on_the_development_drafts(guard: Guard) -> None:
    """The figures the guard was developed on (in-sample: a regression floor, not a result;
    the leave-out figures are on docs/results.md and come from ``pcheck guard-eval``). The
    purpose and need models were fitted on other writers (the drafts corpus): they take out
    sentences these writers needed (needed kept 0.99 with the data file's words alone, 0.90
    with the models on the static encoder; verdicts 0.87, 0.90 on the transformer, whose
    models kept more here and caught less on the drafts corpus), and the floors below say so."""
    drafts = load_drafts((DATA / "guard_drafts.jsonl").read_text("utf-8").splitlines())
    figures = measure(drafts, lambda d: guard_output(guard, d))
    assert figures["leak_rate"] <= 0.01
    assert figures["needed_kept"] >= 0.9
    assert figures["unneeded_removed"] >= 0.9
    assert figures["verdict_agreement"] >= 0.86
    plain = Guard(guard.kb, reasoner=guard.reasoner, phi=guard.phi, need=None)
    words = measure(drafts, lambda d: guard_output(plain, d))
    assert words["needed_kept"] >= 0.95 and words["verdict_agreement"] >= 0.9


def test_guard_eval_cli_with_the_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["guard-eval", "--file", str(DATA / "guard_drafts_leaveout.jsonl"), "--presidio"]
    assert main([*argv, "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    guard, presidio = figures["guard"], figures["presidio"]
    assert guard["drafts"] == presidio["drafts"] == 80
    # the type-based baseline masks what the task needs: it keeps far fewer needed spans
    assert presidio["needed_kept"] < 0.6 < guard["needed_kept"]
