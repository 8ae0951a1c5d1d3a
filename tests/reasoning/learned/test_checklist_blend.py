"""The checklist's learned layer (reasoning/learned/blend.py)."""

from __future__ import annotations

import json

import pytest

from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from privacy_checklist.reasoning.learned.blend import (
    DEFAULT_EMBED,
    MODEL_FILES,
    Blend,
    BlendModelError,
)
from privacy_checklist.reasoning.learned.evidence import checklist_feature_names, flow_text
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.reasoning.verdict import Label
from tests.conftest import REPO


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load(None)


@pytest.fixture(scope="module")
def reasoner(kb) -> ChecklistReasoner:
    return ChecklistReasoner(kb, blend=True)


def model(embed: bool = False) -> dict:
    return json.loads(data_path(MODEL_FILES[embed]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("embed", [False, True], ids=["no-embedding", "embedding"])
def test_the_shipped_models_fit_the_features_and_were_chosen_leaving_writers_out(kb, embed) -> None:
    data = model(embed)
    blend = Blend(kb, data_path(MODEL_FILES[embed]))
    assert blend.embed is embed and data["embed"] is embed
    assert data["features"][: len(checklist_feature_names())] == checklist_feature_names()
    assert blend.features().names == data["offline_features"]
    assert any(n.startswith("embedding:") for n in data["offline_features"]) is embed
    # the synthetic cases, the corpus's writers and the project's own narrative sets; never the
    # real court cases
    trained_on = set(data["trained_on"])
    assert {
        "train_generate_cases_hipaa_applicability.csv",
        "val_generate_cases_hipaa_applicability.csv",
        "checklist_regression.csv",
        "heldout_narratives.csv",
    } <= trained_on
    assert sum(name.endswith(".jsonl") for name in trained_on) >= 20
    assert not any("real" in name for name in trained_on)
    cv = data["cross_validation"]
    assert cv["grouped_by_writer"] is True and data["writers"] >= 25
    # the layer earns its place: better than the checklist alone on folds of unseen writers;
    # the default also on the court-style synthetic cases of regulations it has not seen (the
    # variant with the embedding is not, since the checklist reads conditions with the learned
    # reader: why it is not the default)
    assert cv["blend"]["macro_f1"] > cv["checklist_alone"]["macro_f1"]
    assert cv["blend"]["accuracy"] > cv["checklist_alone"]["accuracy"]
    synthetic = cv["synthetic"]
    if embed is DEFAULT_EMBED:
        assert synthetic["blend"]["accuracy"] > synthetic["checklist_alone"]["accuracy"]


@pytest.mark.parametrize("embed", [False, True], ids=["no-embedding", "embedding"])
def test_the_shipped_models_were_trained_on_the_current_checklist(kb, embed) -> None:
    """A change to the reader's cues, the catalogue or the rule changes the checklist's outcome
    the model was fitted on: train it again (pcheck reasoner train --method checklist, and
    with --fast for the model without the embedding)."""
    current = ChecklistReasoner(kb, blend=True).settings()["checklist"]
    assert model(embed)["checklist_settings"] == current


def test_the_default_layer_is_the_one_without_the_embedding(kb) -> None:
    """The default is the model without the sentence embedding (DEFAULT_EMBED says why); the
    variant with it loads from its file."""
    assert Blend(kb).embed is False
    assert Blend(kb).path.name == MODEL_FILES[False]
    assert Blend(kb, data_path(MODEL_FILES[True])).embed is True


def test_a_check_with_the_embedding_never_imports_torch(long_case) -> None:
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from privacy_checklist.kg import kb\n"
        "from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner\n"
        "from privacy_checklist.reasoning.learned.blend import MODEL_FILES, Blend\n"
        "from privacy_checklist.reasoning.text import data_path\n"
        "r = ChecklistReasoner(kb.load(None), blend=True)\n"
        "r._blend = Blend(r.kb, data_path(MODEL_FILES[True]))\n"
        "v = r.check(sys.argv[1])\n"
        "print(json.dumps([v.checklist.blend.embed, 'torch' in sys.modules, "
        "'sentence_transformers' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, long_case], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, False, False]


def test_a_model_fitted_on_another_encoder_is_refused(kb, tmp_path) -> None:
    data = model(True)
    data["encoder"] = "0" * 16
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BlendModelError, match="another sentence encoder"):
        Blend(kb, other)


@pytest.mark.parametrize(
    ("key", "said"),
    [("tokenizer", "other tokens"), ("reads", "other text")],
    ids=["another stemmer", "whole text"],
)
def test_a_model_fitted_on_other_evidence_is_refused(kb, tmp_path, key, said) -> None:
    """A layer fitted on retrieval over other stems, or on the embedding of other text than
    the flows' sentences, would weigh numbers it never saw: refused with one line."""
    for embed in (False, True):
        data = model(embed)
        data[key] = "something else"
        other = tmp_path / "other.json"
        other.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(BlendModelError, match=said):
            Blend(kb, other)


LEE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's complete medical records to a "
    "newspaper reporter without her authorization."
)
AROUND = (
    "Good morning!",
    "The rain started shortly after lunch and kept falling until well past dark.",
    "The cafeteria was serving tomato soup that afternoon.",
)


def test_the_embedding_reads_the_sentences_the_flows_were_read_from(kb) -> None:
    reasoner = ChecklistReasoner(kb, blend=False)
    text = f"{AROUND[0]} {LEE} {AROUND[1]} {AROUND[2]}"
    assert flow_text(text, reasoner.checklists(text)) == LEE
    # no flow read: the whole text
    quiet = f"{AROUND[1]} {AROUND[2]}"
    assert flow_text(quiet, reasoner.checklists(quiet)) == quiet


def test_sentences_that_tell_no_flow_do_not_move_the_verdict(reasoner) -> None:
    """The issue's case: the same disclosure followed by the weather and the cafeteria, or
    after a greeting, is decided the same (it came out not covered by HIPAA at all once)."""
    alone = reasoner.check(LEE)
    assert alone.label is Label.PROHIBIT
    for text in (
        f"{LEE} {AROUND[1]} {AROUND[2]}",
        f"{AROUND[0]} {LEE}",
        f"{AROUND[1]} {LEE} {AROUND[2]}",
        f"{LEE} 🙂",
    ):
        assert reasoner.check(text).label is Label.PROHIBIT, text


@pytest.fixture(scope="module")
def long_case(shared) -> str:
    cases = read_cases(shared / "cases" / "val_generate_cases_hipaa_applicability.csv")
    return next(c.text for c in cases if len(c.text) > 1200)


SHORT = "Dr. Lee emailed the patient's medical records to a reporter."


@pytest.mark.parametrize("length", ["short", "long"])
def test_every_narrative_is_weighed_and_says_so(reasoner, long_case, length) -> None:
    """One model whatever the length: a one-sentence case is weighed as a court-length one."""
    text = SHORT if length == "short" else long_case
    verdict = reasoner.check(text)
    assert verdict.checklist is not None and verdict.checklist.blend is not None
    blend = verdict.checklist.blend
    assert blend.label == verdict.label.value
    assert set(blend.probabilities) == {"permit", "prohibit", "not_applicable"}
    assert abs(sum(blend.probabilities.values()) - 1.0) < 1e-3  # finite, a distribution
    assert verdict.probabilities == blend.probabilities
    assert "The checklist alone reads" in verdict.reasoning[0]
    assert blend.embed is DEFAULT_EMBED
    assert ("sentence embedding" in verdict.reasoning[0]) is DEFAULT_EMBED
    # every cited norm fits a flow of the case (a candidate or a prohibition), or is 164.502(a)
    fitting = {"164.502(a)"} | {
        c.node for flow in verdict.checklist.flows for c in [*flow.candidates, *flow.prohibitions]
    }
    assert {n.id for n in verdict.norms} <= fitting
    if verdict.label is Label.NOT_APPLICABLE:
        assert verdict.norms == []


def test_the_layer_can_be_turned_off(kb, long_case) -> None:
    for text in (SHORT, long_case):
        verdict = ChecklistReasoner(kb, blend=False).check(text)
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
    """pcheck reasoner train --method checklist on a small slice (synthetic cases and two
    writers' sets): the model loads, records the writer-grouped cross-validated figures of the
    blend and of both parts alone, and a second run reuses the cached features."""
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
    corpus = tmp_path / "w01.jsonl"
    lines = (REPO / "bench" / "data" / "corpus" / "w01.jsonl").read_text(encoding="utf-8")
    corpus.write_text("".join(lines.splitlines(keepends=True)[:20]), encoding="utf-8")
    own = tmp_path / "own.csv"
    with (REPO / "tests" / "data" / "checklist_regression.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with own.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows[:20])
    out, cache = tmp_path / "blend.json", tmp_path / "cache.json"
    args = ["reasoner", "train", "--method", "checklist", "--fast", "--cases-dir", str(cases)]
    args += ["--writers", str(corpus), str(own)]
    assert main([*args, "--out", str(out), "--cache", str(cache)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["cases"] == 65 + 20 + 20 and data["writers"] == 3
    assert {"w01.jsonl", "own.csv"} <= set(data["trained_on"])
    cv = data["cross_validation"]
    assert set(cv) == {
        "folds",
        "grouped_by_writer",
        "weighted",
        "blend",
        "checklist_alone",
        "offline_features_alone",
        "synthetic",
        "writers",
    }
    assert cv["grouped_by_writer"] is True and cv["weighted"] is True
    # the synthetic (court-style) cases and the other writers' narratives apart
    assert cv["synthetic"]["cases"] == 65 and cv["writers"]["cases"] == 40
    assert Blend(kb, out).embed is False  # loads: the features match
    assert len(json.loads(cache.read_text(encoding="utf-8"))["rows"]) == 105
    assert main([*args, "--out", str(out), "--cache", str(cache)]) == 0
