"""The checklist's learned layer for long narratives (reasoning/learned/blend.py)."""

from __future__ import annotations

import json

import pytest

from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from privacy_checklist.reasoning.learned.blend import (
    LONG_CHARS,
    MODEL_FILES,
    Blend,
    BlendModelError,
    checklist_feature_names,
)
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.reasoning.verdict import Label


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load(None)


@pytest.fixture(scope="module")
def reasoner(kb) -> ChecklistReasoner:
    return ChecklistReasoner(kb)


def model(embed: bool = False) -> dict:
    return json.loads(data_path(MODEL_FILES[embed]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("embed", [False, True], ids=["no-embedding", "embedding"])
def test_the_shipped_models_fit_the_features_and_were_chosen_on_synthetic_cases(kb, embed) -> None:
    data = model(embed)
    blend = Blend(kb, data_path(MODEL_FILES[embed]))
    assert blend.embed is embed and data["embed"] is embed
    assert data["features"][: len(checklist_feature_names())] == checklist_feature_names()
    assert blend.features().names == data["offline_features"]
    assert any(n.startswith("embedding:") for n in data["offline_features"]) is embed
    assert set(data["trained_on"]) == {
        "train_generate_cases_hipaa_applicability.csv",
        "val_generate_cases_hipaa_applicability.csv",
    }
    cv = data["cross_validation"]
    # the layer earns its place: better than the checklist alone on the held-out folds
    assert cv["blend"]["macro_f1"] > cv["checklist_alone"]["macro_f1"]


@pytest.mark.parametrize("embed", [False, True], ids=["no-embedding", "embedding"])
def test_the_shipped_models_were_trained_on_the_current_checklist(kb, embed) -> None:
    """A change to the reader's cues, the catalogue or the rule changes the checklist's outcome
    the model was fitted on: train it again (pcheck reasoner train --method checklist, and
    with --fast for the model without the embedding)."""
    current = ChecklistReasoner(kb, blend=False).settings()["checklist"]
    assert model(embed)["checklist_settings"] == current


def test_the_layer_weighs_the_embedding_where_the_extra_is_installed(kb, monkeypatch) -> None:
    """With the embeddings extra the layer uses the model with the embedding; without it, the
    one without (and never imports torch)."""
    from privacy_checklist.reasoning.learned import blend as checklist_blend

    assert Blend(kb).embed is True  # the test environment has every extra
    monkeypatch.setattr(checklist_blend, "embeddings_installed", lambda: False)
    assert Blend(kb).embed is False
    assert Blend(kb).path.name == MODEL_FILES[False]


@pytest.fixture(scope="module")
def long_case(shared) -> str:
    cases = read_cases(shared / "cases" / "val_generate_cases_hipaa_applicability.csv")
    return next(c.text for c in cases if len(c.text) > 2 * LONG_CHARS)


def test_a_long_narrative_is_weighed_and_says_so(reasoner, long_case) -> None:
    text = long_case
    verdict = reasoner.check(text)
    assert verdict.checklist is not None and verdict.checklist.blend is not None
    blend = verdict.checklist.blend
    assert blend.label == verdict.label.value
    assert set(blend.probabilities) == {"permit", "prohibit", "not_applicable"}
    assert abs(sum(blend.probabilities.values()) - 1.0) < 1e-3  # finite, a distribution
    assert verdict.probabilities == blend.probabilities
    assert "the checklist alone reads" in verdict.reasoning[0]
    assert blend.embed is True and "sentence embedding" in verdict.reasoning[0]
    # every cited norm fits a flow of the case (a candidate or a prohibition), or is 164.502(a)
    fitting = {"164.502(a)"} | {
        c.node for flow in verdict.checklist.flows for c in [*flow.candidates, *flow.prohibitions]
    }
    assert {n.id for n in verdict.norms} <= fitting
    if verdict.label is Label.NOT_APPLICABLE:
        assert verdict.norms == []


def test_a_short_narrative_never_uses_the_layer(kb, reasoner) -> None:
    text = "Dr. Lee emailed the patient's medical records to a reporter."
    with_layer = reasoner.check(text)
    alone = ChecklistReasoner(kb, blend=False).check(text)
    assert with_layer.checklist is not None and with_layer.checklist.blend is None
    assert with_layer.to_json() == alone.to_json()


def test_the_layer_can_be_turned_off(kb, long_case) -> None:
    verdict = ChecklistReasoner(kb, blend=False).check(long_case)
    assert verdict.checklist is not None and verdict.checklist.blend is None


def test_a_missing_or_mismatched_model_is_one_clear_error(kb, tmp_path) -> None:
    with pytest.raises(BlendModelError, match="pcheck reasoner train --method checklist"):
        Blend(kb, tmp_path / "none.json")
    data = model()
    data["features"] = data["features"][:-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BlendModelError, match="other features"):
        Blend(kb, bad)
    data = model()
    data["scale"][0] = 0.0  # a spread rounded away: applying it would divide by zero
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BlendModelError, match="zero spread"):
        Blend(kb, bad)


def test_training_writes_a_model_that_loads_and_records_its_figures(kb, shared, tmp_path) -> None:
    """pcheck reasoner train --method checklist on a small synthetic slice: the model loads,
    records the cross-validated figures of the blend and of both parts alone, and a second run
    reuses the cached features."""
    import csv

    from privacy_checklist.app.cli import main

    cases = tmp_path / "cases"
    cases.mkdir()
    for name, keep in (
        ("train_generate_cases_hipaa_applicability.csv", 25),
        ("val_generate_cases_hipaa_applicability.csv", 40),
    ):
        with (shared / "cases" / name).open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        with (cases / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows[:keep])
    out, cache = tmp_path / "blend.json", tmp_path / "cache.json"
    args = ["reasoner", "train", "--method", "checklist", "--fast", "--cases-dir", str(cases)]
    assert main([*args, "--out", str(out), "--cache", str(cache)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["cases"] == 65
    assert set(data["cross_validation"]) == {
        "folds",
        "blend",
        "checklist_alone",
        "offline_features_alone",
    }
    assert Blend(kb, out).embed is False  # loads: the features match
    assert len(json.loads(cache.read_text(encoding="utf-8"))["rows"]) == 65
    assert main([*args, "--out", str(out), "--cache", str(cache)]) == 0
