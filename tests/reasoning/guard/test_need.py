"""The guard's purpose and need models (issue 28, items 1 and 2): the purposes the law names
read from what the person typed, and sentences that carry only what the purpose does not need
taken out whatever their words' types."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.guard.message import Guard
from privacy_checklist.reasoning.guard.need import NeedModelError, load, shipped, terms
from privacy_checklist.reasoning.guard.need_fit import read_sets, sentences
from privacy_checklist.reasoning.guard.purpose import purposes_data
from privacy_checklist.reasoning.text import sentence_spans

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "bench" / "data" / "guard_corpus"
# written here, not taken from the corpus the models were fitted on
POLICE = (
    "Officer Ruiz, here is what you asked for. The man we treated on 3/4 was Tomas Greer, DOB "
    "4/5/1980, for a laceration to the left hand. He also has hepatitis C and has been homeless "
    "since May. Thanks, Amy"
)


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(kbmod.load(None))


def test_every_purpose_the_law_names_has_its_paragraph_and_a_guard_purpose() -> None:
    data = purposes_data()
    models = shipped()
    assert set(models.purpose.classes) == set(data["law"])
    for key, entry in data["law"].items():
        assert entry["base"] in data["purposes"], key
        assert entry["paragraph"].startswith("164."), key


def test_the_purpose_model_reads_tf_idf_as_it_was_fitted() -> None:
    sklearn = pytest.importorskip("sklearn.feature_extraction.text")
    said = ["Detective Hale (suspect ID) | identify a suspect", "Acme Billing LLC | claim"]
    vectorizer = sklearn.TfidfVectorizer(analyzer=terms, sublinear_tf=True).fit(said)
    from privacy_checklist.reasoning.guard.need import PurposeModel

    model = PurposeModel(
        sorted(vectorizer.vocabulary_, key=lambda t: vectorizer.vocabulary_[t]),
        vectorizer.idf_.astype(np.float32),
        np.zeros((2, len(vectorizer.vocabulary_)), dtype=np.float32),
        np.zeros(2, dtype=np.float32),
        ["a", "b"],
    )
    for text in said:
        expected = vectorizer.transform([text]).toarray()[0]
        assert np.allclose(model.vector(text), expected, atol=1e-6)


def test_purposes_outside_the_first_eleven_are_read(guard: Guard) -> None:
    cases = {
        (
            "Detective Sgt. Ana Ruiz, city police (trying to identify a hit-and-run suspect)",
            "suspect ID",
        ): "law_enforcement_identification",
        (
            "County health department, communicable disease unit",
            "reportable disease report",
        ): "public_health",
        (
            "Lakeview Elementary school nurse (parent agreed)",
            "immunization record for school",
        ): "school_immunization",
        ("Hospital foundation development office", "donor outreach list"): "fundraising",
    }
    for (to, words), law in cases.items():
        reading = guard.read_purpose(words, to)
        assert reading.law == law, (to, reading.how)
        assert reading.spec["norm"].startswith("164.")


def test_a_sentence_beside_the_purpose_goes_whatever_its_types(guard: Guard) -> None:
    out = guard.check(
        POLICE, to="Officer Ruiz, city police (identifying a suspect)", purpose="suspect ID"
    )
    assert out.purpose.law == "law_enforcement_identification"
    assert out.verdict == "prohibit"
    assert "hepatitis" not in out.rewrite and "homeless" not in out.rewrite
    assert "laceration" in out.rewrite and "Tomas Greer" in out.rewrite
    beside = [d for d in out.decisions if "need model" in d.why]
    assert beside and all(d.needed is False for d in beside)


def test_without_the_models_the_data_files_words_decide(guard: Guard) -> None:
    plain = Guard(guard.kb, reasoner=guard.reasoner, phi=guard.phi, need=None)
    reading = plain.read_purpose("claim for the 3/4 visit", "Aetna claims")
    assert reading.key == "payment" and reading.law == ""
    out = plain.check(POLICE, to="Officer Ruiz, city police", purpose="suspect ID")
    assert not any("need model" in d.why for d in out.decisions)


def test_sentences_are_labelled_by_what_they_hold() -> None:
    lines = (CORPUS / "d01.jsonl").read_text(encoding="utf-8").splitlines()
    labels = []
    for line in lines:
        item = json.loads(line)
        bounds = sentence_spans(item["text"], lines=True)
        said = sentences(item)
        assert [t for t, _ in said] == [item["text"][a:b] for a, b in bounds]
        for (start, end), (_text, label) in zip(bounds, said, strict=True):
            inside = [s["needed"] for s in item["spans"] if start <= s["start"] < end]
            labels.append(label)
            assert label == (False in inside and True not in inside)
    assert 0 < sum(labels) < len(labels)


def test_a_damaged_model_file_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "need.npz"
    bad.write_bytes(b"not a model")
    with pytest.raises(NeedModelError) as caught:
        load(bad)
    assert "\n" not in str(caught.value) and "need_fit" in str(caught.value)


def test_fitting_refuses_a_folder_without_drafts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no \*\.jsonl"):
        read_sets(tmp_path)
    (tmp_path / "w1.jsonl").write_text('{"text": "Hi", "spans": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"w1\.jsonl:1: a draft lacks purpose"):
        read_sets(tmp_path)


def test_an_identifier_the_types_allow_goes_when_this_purpose_does_not_need_it(
    guard: Guard,
) -> None:
    """The identifier head's chance decides, at its threshold, over an identifier the
    purpose's types allow: here a social security number in a disease report (the head reads
    it 0.63 unneeded; leaving writers out it catches 0.68 of the unneeded identifiers at the
    shipped 0.7, bench/guard_corpus/measure.py), while the name and the findings stay."""
    report = (
        "Reporting a case of pertussis: Maya Lindgren, DOB 3/14/2015, SSN 512-44-9087, seen "
        "11/2 with paroxysmal cough; PCR positive 11/4."
    )
    models = shipped()
    head = copy.copy(models.need)
    head.identifier_threshold = 0.6
    sure = replace(models, need=head)
    strict = Guard(guard.kb, reasoner=guard.reasoner, phi=guard.phi, need=sure)
    out = strict.check(report, to="County health department", purpose="reportable disease")
    assert out.purpose.law == "public_health"
    fate = {d.span.text: d.needed for d in out.decisions}
    assert fate["512-44-9087"] is False and "512-44-9087" not in out.rewrite
    assert "need model" in next(d.why for d in out.decisions if d.span.text == "512-44-9087")
    assert fate["Maya Lindgren"] and fate["pertussis"] and "PCR positive 11/4" in out.rewrite
    # at the shipped threshold the head is not that sure, and the number stays
    kept = guard.check(report, to="County health department", purpose="reportable disease")
    assert {d.span.text: d.needed for d in kept.decisions}["512-44-9087"] is True
    # police identifying a suspect may have the social security number (164.512(f)(2)(i))
    police = guard.check(
        "The man we treated on 3/4 was Tomas Greer, DOB 4/5/1980, SSN 512-44-9087.",
        to="Officer Ruiz, city police (identifying a suspect)",
        purpose="suspect ID",
    )
    assert {d.span.text: d.needed for d in police.decisions}["512-44-9087"] is True


def test_the_condition_model_reads_the_condition_not_the_recipient(guard: Guard) -> None:
    """One message stating a court order in words the data file's lists do not hold, the
    same with it left out, and with it denied: only the first is read as stated. (Learned
    from the drafts, where a draft to a court mostly had its order, it read any message to a
    court clerk as ordered.)"""
    from privacy_checklist.reasoning.guard.purpose import PurposeReading

    reading = PurposeReading(
        "attorney", "labelled", "records for the Lopez case", law="court_order"
    )
    to = "Records custodian desk, Superior Court of Marin County"
    base = "Attached are Maria Lopez's ER records from 4/2 (DOB 6/5/1971)"
    told = {
        "stated": f"{base}, produced under the order Judge Whitfield signed on 5/1 compelling "
        "their release.",
        "absent": f"{base}.",
        "denied": f"{base}; the judge has not signed anything compelling their release yet.",
    }
    _, flow = guard.flow("our clinic", to, reading, True)
    read = {k: guard.permission(reading, flow, f"{to} ;  ; {text}") for k, text in told.items()}
    assert read["stated"][0] is True and "read in the words" in read["stated"][1]
    assert read["absent"][0] is not True and read["denied"][0] is not True


def test_condition_messages_are_checked_when_read(tmp_path: Path) -> None:
    from privacy_checklist.reasoning.guard.need_fit import read_conditions

    bad = {"purpose": "court_order", "text": "Hi", "condition": "maybe"}
    (tmp_path / "c9.jsonl").write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"c9\.jsonl:1: .*'maybe' is not one the guard knows"):
        read_conditions(tmp_path)
