"""Norms that carry their conditions: the curated readings laid over the rules' at build, the
conditions as a field of the editors' store (checked against the vocabulary and the text), the
LLM annotator's conditions, and the browser showing and editing them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.cli import main
from privacy_checklist.app.views import node_report
from privacy_checklist.kg import conditions as conditions_module
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.conditions import CATALOGUE_FILE, load_catalogue
from privacy_checklist.kg.norms import CURATED, CURATED_VERSION, Norm
from privacy_checklist.kg.store import ImportFileError, NormStore, StoreError
from privacy_checklist.reasoning.llm.annotate import LLMAnnotator
from tests.app.test_app_regulation import plain
from tests.conftest import sign_in
from tests.scripted_llm import ScriptedLLM, client_for

COURT = "164.512(e)(1)(i)"  # "In response to an order of a court or administrative tribunal, ..."
COURT_ORDER = "In response to an order of a court or administrative tribunal"
SUBPOENA = "164.512(e)(1)(ii)"  # its conditions quote (e)(1)(iii)-(vi) too
PROCEEDING = "in the course of any judicial or administrative proceeding"  # 164.512(e)(1)'s


@pytest.fixture
def store(tmp_path: Path):
    with NormStore(tmp_path / "norms.sqlite") as opened:
        yield opened


def conditions_json(*items: dict[str, str]) -> str:
    return json.dumps(list(items))


# --------------------------------------------------------------------------- the build


def test_curated_norms_carry_their_conditions(shipped: kbmod.KnowledgeBase) -> None:
    catalogue = load_catalogue(shipped.tree)
    norms = shipped.norms
    assert len(catalogue.readings) >= 90
    for node, reading in catalogue.readings.items():
        norm = norms[node]
        assert (norm.provenance, norm.version) == (CURATED, CURATED_VERSION), node
        assert norm.norm_type == reading.norm_type
        assert norm.sender_roles == reading.sender_roles
        assert norm.recipient_roles == reading.recipient_roles
        assert norm.information_class == reading.information
        assert norm.purpose == reading.purpose
        assert norm.conditions == reading.conditions and norm.conditions, node
        for condition in norm.conditions:  # each span points at the quoted words
            text = shipped.tree[condition.node].text
            assert text[condition.start : condition.end] == condition.quote, (node, condition)
    others = [n for n in norms.values() if n.node not in catalogue.readings]
    assert others and all(not n.conditions and n.provenance == "rules" for n in others)
    court = norms[COURT].conditions[0]
    assert (court.kind, court.mode, court.quote, court.node) == (
        "court_order",
        "required",
        COURT_ORDER,
        COURT,
    )
    assert (court.start, court.end) == (0, len(COURT_ORDER))
    # a condition stated in another paragraph of the section points there
    further = [c for c in norms[SUBPOENA].conditions if c.node != SUBPOENA]
    assert further and all(c.node.startswith("164.512(e)(1)(") for c in further)


def test_norms_without_conditions_still_load() -> None:
    """norms.json and store rows written before norms had conditions."""
    old = Norm(COURT, "permit", sender=("covered entity",)).to_json()
    del old["conditions"]
    assert Norm.from_json(old).conditions == ()
    norm = Norm.from_json(
        {
            **old,
            "conditions": [
                {"kind": "court_order", "mode": "required", "quote": "x", "node": COURT}
            ],
        }
    )
    assert norm.conditions[0].kind == "court_order"
    assert Norm.from_json(norm.to_json()) == norm


def test_old_store_rows_load(tmp_path: Path, shipped: kbmod.KnowledgeBase) -> None:
    path = tmp_path / "old.sqlite"
    with NormStore(path) as store:
        store.set_status(COURT, "validated", "alice", 0, shipped.norms)
        data = shipped.norms[COURT].to_json()
        del data["conditions"]
        store.db.execute(
            "UPDATE annotations SET data = ? WHERE node = ?", (json.dumps(data), COURT)
        )
        assert store.get(COURT).norm.conditions == ()  # type: ignore[union-attr]


def _bad_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the build at a copy of the catalogue whose court-order quote is not the law's."""
    original = conditions_module.ontology_path
    data = json.loads(original(CATALOGUE_FILE).read_text(encoding="utf-8"))
    entry = next(e for e in data["norms"] if e["node"] == COURT)
    entry["conditions"][0]["quote"] = "In response to a court's polite request"
    bad = tmp_path / CATALOGUE_FILE
    bad.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(
        conditions_module,
        "ontology_path",
        lambda name: bad if name == CATALOGUE_FILE else original(name),
    )


def test_build_fails_when_the_catalogue_does_not_fit(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _bad_catalogue(tmp_path, monkeypatch)
    out = tmp_path / "kb"
    pages = [str(shared / "hipaa" / f"ecfr-title45-part{p}.html") for p in (160, 162, 164)]
    code = main(
        [
            "ingest",
            "--source",
            *pages,
            "--ontologies",
            str(shared / "ontologies"),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith("pcheck ingest: the curated norm readings do not fit")
    assert "polite request" in err[0] and COURT in err[0] and "nothing was written" in err[0]
    assert not out.exists()


def test_rules_annotation_fails_when_the_catalogue_does_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    copy = tmp_path / "kb"
    shutil.copytree(kbmod.builtin_path(), copy)
    before = (copy / "norms.json").read_bytes()
    _bad_catalogue(tmp_path, monkeypatch)
    code = main(["--kb", str(copy), "annotate", "--only", "164.512(e)"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "polite request" in err[0], err
    assert (copy / "norms.json").read_bytes() == before


# --------------------------------------------------------------------------- the store


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        (
            conditions_json({"kind": "court_orders", "mode": "required", "quote": COURT_ORDER}),
            "kind 'court_orders' is not in condition_kinds.json",
        ),
        (
            conditions_json(
                {"kind": "court_order", "mode": "required", "quote": "by order of the king"}
            ),
            "the words 'by order of the king' .* are not in 164.512\\(e\\)\\(1\\)\\(i\\)'s text",
        ),
        (
            conditions_json({"kind": "court_order", "mode": "perhaps", "quote": COURT_ORDER}),
            "mode 'perhaps'",
        ),
        (
            conditions_json({"kind": "court_order", "mode": "one_of", "quote": COURT_ORDER}),
            "needs a group",
        ),
        (
            conditions_json(
                {
                    "kind": "court_order",
                    "mode": "required",
                    "quote": "facility directory",
                    "node": "164.510(a)(1)",
                }
            ),
            "not a paragraph of 164.512\\(e\\)\\(1\\)\\(i\\)'s section",
        ),
        ('[{"kind": "court_order"', "JSON list"),
    ],
)
def test_bad_condition_edits_are_refused(
    store: NormStore, shipped: kbmod.KnowledgeBase, conditions: str, message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        store.edit(COURT, {"conditions": conditions}, "alice", 0, shipped.norms, tree=shipped.tree)
    assert store.get(COURT) is None  # nothing was saved
    with pytest.raises(StoreError, match="regulation text"):  # no text to check against
        store.edit(COURT, {"conditions": "[]"}, "alice", 0, shipped.norms)


def test_cli_refuses_a_quote_not_in_the_text(
    tmp_path: Path, capsys, shipped: kbmod.KnowledgeBase
) -> None:
    db = str(tmp_path / "cli.sqlite")
    bad = conditions_json({"kind": "court_order", "mode": "required", "quote": "a royal decree"})
    edit = ["norms", "--store", db, "edit", COURT, "--editor", "eve", "--version", "0"]
    code = main([*edit, "--set", f"conditions={bad}"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "'a royal decree'" in err and f"not in {COURT}'s text" in err
    good = conditions_json(
        {"kind": "court_order", "mode": "required", "quote": COURT_ORDER},
        {"kind": "minimum_necessary", "mode": "one_of", "group": "g", "quote": "such order"},
    )
    code = main([*edit, "--set", f"conditions={good}"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["norms", "--store", db, "show", COURT]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"conditions\s+2\n", shown)
    assert re.search(rf"required\s+court_order\s+“{COURT_ORDER}”", shown)
    assert re.search(r"one_of g\s+minimum_necessary\s+“such order”", shown)
    assert main(["norms", "--store", db, "show", COURT, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    start = shipped.tree[COURT].text.find("such order")
    assert data["conditions"][1] == {
        "kind": "minimum_necessary",
        "mode": "one_of",
        "group": "g",
        "quote": "such order",
        "node": COURT,
        "span": [start, start + len("such order")],
    }
    assert main(["norms", "--store", db, "history", COURT]) == 0
    assert "[conditions]" in capsys.readouterr().out


def test_validated_conditions_win_in_kb_norms(tmp_path: Path, shipped: kbmod.KnowledgeBase) -> None:
    path = tmp_path / "norms.sqlite"
    edited = [{"kind": "court_order", "mode": "required", "quote": "an order of a court"}]
    with NormStore(path) as store:
        record = store.edit(
            COURT, {"conditions": edited}, "alice", 0, shipped.norms, "narrower", tree=shipped.tree
        )
    assert record.status == "validated" and len(record.norm.conditions) == 1
    kb = kbmod.load(store=path)
    (condition,) = kb.norms[COURT].conditions
    assert condition.quote == "an order of a court"
    assert kb.tree[COURT].text[condition.start : condition.end] == "an order of a court"
    assert kb.machine_norms[COURT].conditions == shipped.norms[COURT].conditions  # untouched
    with NormStore(path) as store:
        store.set_status(COURT, "rejected", "bob", 1, shipped.norms)
    assert kbmod.load(store=path).norms[COURT].conditions == shipped.norms[COURT].conditions


def test_export_import_round_trip_keeps_conditions(
    store: NormStore, shipped: kbmod.KnowledgeBase, tmp_path: Path
) -> None:
    baseline = shipped.norms
    edited = [
        {"kind": "court_order", "mode": "required", "quote": COURT_ORDER},
        {"kind": "minimum_necessary", "mode": "exception", "quote": "expressly authorized"},
    ]
    store.edit(COURT, {"conditions": edited}, "alice", 0, baseline, tree=shipped.tree)
    exported = store.export(baseline, shipped.tree)
    assert [c["kind"] for c in exported[COURT]["ci"]["conditions"]] == [
        "court_order",
        "minimum_necessary",
    ]
    assert exported[COURT]["conditions"] == exported[COURT]["ci"]["conditions"]
    file = tmp_path / "export.json"
    file.write_text(json.dumps(exported), encoding="utf-8")
    with NormStore(tmp_path / "other.sqlite") as other:
        result = other.import_file(file, "importer", baseline, shipped.tree)
        assert COURT in result.imported
        assert other.get(COURT).norm.conditions == store.get(COURT).norm.conditions  # type: ignore[union-attr]
        assert other.effective(baseline)[SUBPOENA].conditions == baseline[SUBPOENA].conditions
        again = other.export(baseline, shipped.tree)
    assert again[COURT]["ci"] == exported[COURT]["ci"]
    # a tampered quote is refused by line and norm; nothing is imported
    exported[COURT]["ci"]["conditions"][0]["quote"] = "a court's wish"
    file.write_text(json.dumps(exported, indent=1), encoding="utf-8")
    with NormStore(tmp_path / "third.sqlite") as third:
        with pytest.raises(ImportFileError, match=r"a court's wish.*not in"):
            third.import_file(file, "importer", baseline, shipped.tree)
        assert third.all() == {}


# --------------------------------------------------------------------------- the LLM annotator


def annotation(conditions: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "norm_type": "permit",
            "sender": ["covered entity"],
            "recipient": ["court"],
            "subject": ["individual"],
            "information_type": "protected health information",
            "purpose": "judicial proceeding",
            "consent_form": "none",
            "sender_is_subject": "no",
            "recipient_is_subject": "no",
            "references": {},
            "conditions": conditions,
        }
    )


ANSWER = annotation(
    [
        {"kind": "court_order", "mode": "required", "quote": COURT_ORDER},
        {"kind": "court_order", "mode": "required", "quote": "a note from the judge's clerk"},
        {"kind": "crystal_ball", "mode": "required", "quote": "In response to an order"},
        # words of an ancestor's text (164.512(e)(1)) are kept, pointing there
        {"kind": "court_order", "mode": "one_of", "group": "p", "quote": PROCEEDING},
    ]
)


def test_llm_annotator_keeps_good_conditions_and_drops_made_up_ones(
    shipped: kbmod.KnowledgeBase, tmp_path: Path
) -> None:
    with ScriptedLLM(lambda body, n: ANSWER) as server:
        annotator = LLMAnnotator(client_for(server, tmp_path), shipped.tree, shipped.refs_out)
        (norm,), failures = annotator.annotate([COURT])
        prompt = server.requests[0]["messages"][-1]["content"]
    assert failures == []
    assert [(c.kind, c.quote, c.node) for c in norm.conditions] == [
        ("court_order", COURT_ORDER, COURT),
        ("court_order", PROCEEDING, "164.512(e)(1)"),
    ]
    for c in norm.conditions:
        assert shipped.tree[c.node].text[c.start : c.end] == c.quote
    dropped = [d.reason for d in annotator.dropped]
    assert len(dropped) == 2
    assert "judge's clerk" in dropped[0] and "not in" in dropped[0]
    assert "crystal_ball" in dropped[1]
    assert norm.version == "annotate_norm.v2.txt"
    # the prompt asks for conditions from the vocabulary
    assert '"conditions"' in prompt and "- court_order: order of a court" in prompt
    assert "<<<" in prompt and prompt.index("- court_order") < prompt.index("<<<")


def test_llm_answer_with_malformed_conditions_is_repaired(
    shipped: kbmod.KnowledgeBase, tmp_path: Path
) -> None:
    malformed = annotation([])
    malformed = malformed.replace('"conditions": []', '"conditions": {"court_order": "yes"}')

    def script(body: dict[str, Any], n: int) -> str:
        repair = "not usable" in body["messages"][-1]["content"]
        return ANSWER if repair else malformed

    with ScriptedLLM(script) as server:
        annotator = LLMAnnotator(client_for(server, tmp_path), shipped.tree, shipped.refs_out)
        norms, failures = annotator.annotate([COURT])
    assert failures == [] and len(norms[0].conditions) == 2
    assert "conditions must be a list" in server.requests[-1]["messages"][-1]["content"]


def test_cli_annotate_llm_counts_dropped_conditions(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store_path = tmp_path / "store.sqlite"
    with ScriptedLLM(lambda body, n: ANSWER) as server:
        code = main(
            [
                *("annotate", "--annotator", "llm", "--only", COURT),
                *("--llm-base-url", server.base_url, "--llm-model", "scripted-1"),
                *("--store", str(store_path)),
            ]
        )
    captured = capsys.readouterr()
    assert code == 0 and "stored 1" in captured.out
    assert "2 condition(s) dropped" in captured.out
    assert "judge's clerk" in captured.err
    with NormStore(store_path) as store:
        stored = store.get(COURT).norm  # type: ignore[union-attr]
    assert [c.quote for c in stored.conditions] == [COURT_ORDER, PROCEEDING]


# --------------------------------------------------------------------------- the browser


def _norms_page() -> None:
    from privacy_checklist.app.ui.pages import norms

    norms.render()


def _regulation_page() -> None:
    from privacy_checklist.app.ui.pages import regulation

    regulation.render()


@pytest.fixture
def page_store(editors_store: Path) -> Path:
    return editors_store


def _labelled(elements: Any, label: str) -> Any:
    (found,) = [e for e in elements if e.label == label]
    return found


def test_norms_page_shows_and_edits_conditions(
    page_store: Path, shipped: kbmod.KnowledgeBase
) -> None:
    at = AppTest.from_function(_norms_page, default_timeout=120)
    sign_in(at, "alice")
    at.query_params["node"] = COURT
    at.run()
    assert not at.exception, at.exception
    (table,) = [d.value for d in at.dataframe if "words" in d.value.columns]
    assert list(table["kind"]) == [c.kind for c in shipped.norms[COURT].conditions]
    assert table["words"][0] == COURT_ORDER and table["mode"][0] == "required"
    assert "court" in table["asks"][0]  # the kind's question
    # the paragraph's text, the words of each condition highlighted
    assert any(f":orange-background[{COURT_ORDER}]" in m.value for m in at.markdown)
    # the edit form: a picker per condition, blank ones to add
    assert _labelled(at.selectbox, "Condition 1: kind").value == "court_order"
    assert _labelled(at.text_input, "Condition 1: words").value == COURT_ORDER
    # words not in the text: refused, nothing saved
    _labelled(at.text_input, "New condition 3: words").set_value("a royal decree")
    _labelled(at.selectbox, "New condition 3: kind").set_value("court_order")
    _labelled(at.button, "Save edit").click()
    at.run()
    assert any("'a royal decree'" in e.value and "not in" in e.value for e in at.error)
    with NormStore(page_store, readonly=True) as store:
        assert store.get(COURT) is None
    # words of the text: saved as a validated edit that wins
    _labelled(at.text_input, "New condition 3: words").set_value("expressly authorized")
    _labelled(at.selectbox, "Condition 2: kind").set_value("")  # removed
    _labelled(at.button, "Save edit").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    with NormStore(page_store) as store:
        record = store.get(COURT)
    assert record is not None and record.status == "validated"
    assert [(c.kind, c.quote) for c in record.norm.conditions] == [
        ("court_order", COURT_ORDER),
        ("court_order", "expressly authorized"),
    ]
    assert kbmod.load(store=page_store).norms[COURT].conditions == record.norm.conditions


def test_regulation_page_highlights_the_words_of_conditions(
    page_store: Path, shipped: kbmod.KnowledgeBase
) -> None:
    at = AppTest.from_function(_regulation_page, default_timeout=60)
    at.query_params["node"] = COURT
    at.run()
    assert not at.exception, at.exception
    text = shipped.tree[COURT].text
    shown = next(m.value for m in at.markdown if plain(m.value) == text)
    assert f":orange-background[{COURT_ORDER}]" in shown
    annotation = next(m.value for m in at.markdown if "**Sender**" in m.value)
    assert "**Conditions** (2)" in annotation and "order of a court" in annotation
    assert any("Highlighted" in c.value for c in at.caption)
    # a paragraph quoted by another norm's conditions shows them too
    quoted = next(c.node for c in shipped.norms[SUBPOENA].conditions if c.node != SUBPOENA)
    at = AppTest.from_function(_regulation_page, default_timeout=60)
    at.query_params["node"] = quoted
    at.run()
    assert any("-background[" in m.value for m in at.markdown)


def test_highlighted_text_reads_as_the_text(shipped: kbmod.KnowledgeBase) -> None:
    """Every paragraph a condition quotes shows its text exactly, highlights and links aside."""
    from privacy_checklist.app.ui.pages import regulation

    quoting: dict[str, list[Any]] = {}
    for norm in shipped.norms.values():
        for c in norm.conditions:
            quoting.setdefault(c.node, []).append(c)
    assert quoting
    for node, conditions in quoting.items():
        report = node_report(shipped, node)
        own = [d for d in report["definitions"] if d["in"] == node]
        shown = regulation.linked_text(shipped.tree[node].text, report["refs_out"], own, conditions)
        assert "-background[" in shown, node
        assert plain(shown) == shipped.tree[node].text, node
