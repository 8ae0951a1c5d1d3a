"""The learned answer reader (issue 29): a committed conclusion found where the rules do not
look, no label where the answer commits to none, and the rules alone without the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.reasoning.llm import conclusion
from privacy_checklist.reasoning.llm.answers import read_answer, read_rules

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "data" / "answer_corpus"

STEP = (
    "Step 1: Parties. The clinic is a covered entity.\n"
    "Step 2: Information. The lab results are PHI.\n"
    "Step 3: Assessment: Based on these facts, the HIPAA Privacy Rule permits the clinic's "
    "disclosure to the county health department. The report was required by state law.\n"
    "However, the clinic's failure to log the disclosure may expose it to questions later."
)


def test_the_conclusion_is_found_in_a_step_followed_by_a_caveat() -> None:
    assert conclusion.shipped() is not None
    assert read_rules(STEP).label is None  # the rules look at the last sentences only
    read = read_answer(STEP)
    assert read.label == "permit" and "permits the clinic's disclosure" in read.evidence


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (
            "Whether the disclosure is permitted would depend on whether the patient had "
            "agreed beforehand. Without knowing that, I cannot say.",
            "verdict",
        ),
        (
            "I'm not able to provide legal advice about a specific situation. Please consult a "
            "lawyer or your compliance officer.",
            "verdict",
        ),
        ("", "compliance"),
    ],
)
def test_no_label_where_the_answer_commits_to_none(text: str, question: str) -> None:
    read = read_answer(text, question)
    assert read.label is None and read.reason


def test_a_json_field_stands_as_the_rules_read_it() -> None:
    read = read_answer('{"verdict": "prohibited", "reason": "no authorization"}')
    assert (read.label, read.how) == ("prohibit", "json")


def test_without_the_model_the_rules_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conclusion, "shipped", lambda: None)
    assert read_answer(STEP).label is None
    assert read_answer("Therefore, this is not permitted.").label == "prohibit"


def test_fitting_on_two_writers(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    from privacy_checklist.reasoning.llm import conclusion_fit

    rows = [
        {**json.loads(line), "writer": path.stem}
        for path in sorted(CORPUS.glob("*.jsonl"))[:2]
        for line in path.read_text(encoding="utf-8").splitlines()[:24]
    ]
    model = conclusion_fit.fit(rows)
    out = tmp_path / "reader.json"
    conclusion_fit.save(model, out, ["a", "b"])
    again = conclusion.ConclusionModel.load(out)
    assert again.sentence_coef.shape == model.sentence_coef.shape
    assert conclusion.read_learned(STEP, model=again).label in (None, "permit")
    with pytest.raises(ValueError, match="two writers"):
        conclusion_fit.fit([{**row, "writer": "one"} for row in rows])


AGREED = (
    "The hospital sent the chart to the patient's new cardiologist. Therefore, the disclosure "
    "is permitted for treatment. The hospital should still log the request."
)


def test_two_readers_agreeing_are_trusted_on_a_lower_floor() -> None:
    import dataclasses

    shipped = conclusion.shipped()
    assert shipped is not None
    rule = read_rules(AGREED)
    assert rule.label == "permit"  # the rules read the same label in the prose
    trusting = dataclasses.replace(shipped, answer_floor=1.01, agreed_floor=0.0)
    assert conclusion.read_learned(AGREED, model=trusting).label == "permit"
    doubting = dataclasses.replace(shipped, answer_floor=0.0, agreed_floor=1.01)
    read = conclusion.read_learned(AGREED, model=doubting)
    assert read.label is None and "not committed" in read.reason
