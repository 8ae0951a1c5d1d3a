"""The Norms page of ``pcheck app`` (the editors' queue), driven by Streamlit's AppTest over the
shipped knowledge base and a real editors' store in a temporary folder."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.kg.store import NormStore
from tests.conftest import sign_in

NODE = "164.512(a)(1)"  # a permit of § 164.512 (purpose: required by law)


def script() -> None:
    from privacy_checklist.app.ui.pages import norms

    norms.render()


@pytest.fixture
def store_path(editors_store: Path) -> Path:
    return editors_store


def app(editor: str | None = None) -> AppTest:
    at = AppTest.from_function(script, default_timeout=120)
    if editor is not None:
        sign_in(at, editor)
    at.run()
    assert not at.exception, at.exception
    return at


def tables(at: AppTest, column: str) -> list:
    """The tables shown that have this column, in page order."""
    return [d.value for d in at.dataframe if column in d.value.columns]


def queue(at: AppTest):
    found = [d.value for d in at.dataframe if d.key and d.key.startswith("norms-table-")]
    assert len(found) == 1, [d.key for d in at.dataframe]
    return found[0]


def queue_ids(at: AppTest) -> list[str]:
    return [unquote(url.split("node=", 1)[1]) for url in queue(at)["id"]]


def fields(at: AppTest) -> dict[str, str]:
    (found,) = tables(at, "field")
    return dict(zip(found["field"], found["value"], strict=True))


def history(at: AppTest):
    """The norm's history (the last table with an action column; a refused edit's table of
    changes since comes before it)."""
    return tables(at, "action")[-1]


def widget(elements, label: str):
    found = [e for e in elements if e.label == label]
    assert len(found) == 1, f"{label!r}: {[e.label for e in elements]}"
    return found[0]


def click(at: AppTest, label: str) -> None:
    widget(at.button, label).click()
    at.run()
    assert not at.exception, at.exception


def open_norm(at: AppTest, node: str = NODE) -> None:
    at.selectbox(key="norms-pick").set_value(node)
    at.run()
    assert not at.exception, at.exception


def test_filters_narrow_the_queue(store_path: Path, shipped) -> None:
    at = app()
    everything = queue_ids(at)
    assert len(everything) == len(shipped.norms)
    at.selectbox(key="norms-section").set_value("164.512")
    at.multiselect(key="norms-type").set_value(["permit"])
    at.run()
    ids = queue_ids(at)
    assert 0 < len(ids) < len(everything)
    assert all(i.startswith("164.512(") for i in ids)
    assert {shipped.norms[i].norm_type for i in ids} == {"permit"}
    expected = {
        n
        for n, norm in shipped.norms.items()
        if n.startswith("164.512(") and norm.norm_type == "permit"
    }
    assert set(ids) == expected
    assert set(queue(at)["type"]) == {"permit"}
    # status: nothing is validated yet; after an editor's word, just that norm
    at.multiselect(key="norms-status").set_value(["validated"])
    at.run()
    assert queue_ids(at) == []
    with NormStore(store_path) as store:
        store.set_status(NODE, "validated", "carol", 0, shipped.norms)
    at.run()
    assert queue_ids(at) == [NODE]
    assert list(queue(at)["by"]) == ["carol"]


def test_read_only_without_an_editor(store_path: Path) -> None:
    at = app()
    open_norm(at)
    labels = {b.label for b in at.button}
    assert not labels & {"Save edit", "Validate", "Reject"}
    assert any("sign in (in the sidebar) to edit" in i.value.lower() for i in at.info)
    shown = fields(at)
    assert shown["Norm type"] == "permit"
    assert shown["Purpose"] == "complying with a legal requirement"  # the curated reading
    assert shown["Status"] == "machine"
    assert any("required by law" in m.value for m in at.markdown)  # the paragraph's text
    assert not store_path.exists()  # looking does not create the store


def test_validate_with_a_comment(store_path: Path) -> None:
    at = app("alice")
    open_norm(at)
    widget(at.text_input, "Comment").set_value("checked against the text")
    click(at, "Validate")
    with NormStore(store_path) as store:
        record = store.get(NODE)
    assert record is not None
    assert (record.status, record.version, record.updated_by) == ("validated", 1, "alice")
    assert record.comment == "checked against the text"
    assert any("validated at version 1 by alice" in s.value for s in at.success)
    rows = history(at)
    assert list(rows["by"]) == ["alice"]
    assert list(rows["action"]) == ["validate"]
    assert list(rows["status"]) == ["validated"]
    assert list(rows["comment"]) == ["checked against the text"]
    assert fields(at)["Status"] == "validated"


def test_edit_a_field(store_path: Path) -> None:
    at = app("alice")
    open_norm(at)
    widget(at.selectbox, "Purpose").set_value("research")
    widget(at.text_area, "Comment").set_value("a research disclosure")
    click(at, "Save edit")
    with NormStore(store_path) as store:
        record = store.get(NODE)
    assert record is not None
    assert (record.norm.purpose, record.version, record.status) == ("research", 1, "validated")
    assert record.norm.provenance == "editor:alice"
    rows = history(at)
    assert list(rows["changed"]) == ["purpose"]
    assert list(rows["by"]) == ["alice"]
    assert list(rows["comment"]) == ["a research disclosure"]
    assert fields(at)["Purpose"] == "research"
    # the form now edits version 1, filled from it
    assert any("against version 1" in m.value for m in at.markdown)
    assert widget(at.selectbox, "Purpose").value == "research"
    # saving with nothing changed saves nothing
    click(at, "Save edit")
    assert any("Nothing to save" in w.value for w in at.warning)
    with NormStore(store_path) as store:
        assert store.get(NODE).version == 1  # type: ignore[union-attr]


def test_stale_edit_is_refused(store_path: Path, shipped) -> None:
    at = app("alice")
    open_norm(at)  # alice opens version 0
    with NormStore(store_path) as store:  # bob changes it meanwhile
        store.edit(NODE, {"purpose": "law enforcement"}, "bob", 0, shipped.norms, "bob's word")
    widget(at.selectbox, "Purpose").set_value("research")
    click(at, "Save edit")
    assert at.error, "a stale edit must be refused"
    message = at.error[0].value
    assert "bob" in message and "purpose" in message and "version 0" in message
    since, _ = tables(at, "action")  # the changes since alice opened it, then the history
    assert since["by"].tolist() == ["bob"]
    assert since["changed"].tolist() == ["purpose"]
    with NormStore(store_path) as store:
        record = store.get(NODE)
    assert record is not None
    assert (record.norm.purpose, record.version, record.updated_by) == ("law enforcement", 1, "bob")
    # a review against the old version is refused too; then reload and redo the edit
    click(at, "Validate")
    assert at.error and "bob" in at.error[0].value
    click(at, "Load the current version (drops your unsaved entries)")
    assert widget(at.selectbox, "Purpose").value == "law enforcement"
    widget(at.selectbox, "Purpose").set_value("research")
    click(at, "Save edit")
    assert not at.error
    with NormStore(store_path) as store:
        record = store.get(NODE)
        history = store.history(NODE)
    assert (record.norm.purpose, record.version, record.updated_by) == ("research", 2, "alice")  # type: ignore[union-attr]
    assert [h["by"] for h in history] == ["bob", "alice"]


def test_query_parameter_opens_a_norm(store_path: Path) -> None:
    at = AppTest.from_function(script, default_timeout=120)
    at.query_params["node"] = NODE
    at.run()
    assert not at.exception, at.exception
    assert fields(at)["Purpose"] == "complying with a legal requirement"  # the curated reading
