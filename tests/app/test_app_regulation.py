"""The Regulation page of the browser, run headless with Streamlit's AppTest on the shipped
knowledge base: a unit's path, text, references, definitions and norm; search; browsing;
unknown ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.ui import common
from privacy_checklist.app.ui.pages import regulation
from privacy_checklist.app.views import node_report
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.store import NormStore

NODE = "164.502(a)"


def _script() -> None:
    from privacy_checklist.app.ui.pages import regulation

    regulation.render()


@pytest.fixture(autouse=True)
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test reads a store of its own (never the user's) and the shipped knowledge base."""
    path = tmp_path / "store" / "norms.sqlite"
    monkeypatch.setenv("PCHECK_STORE", str(path))
    monkeypatch.delenv("PCHECK_KB", raising=False)
    return path


def open_page(node: str | None = None) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=60)
    if node is not None:
        at.query_params["node"] = node
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def markdowns(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def plain(markdown: str) -> str:
    """What a reader sees of the page's Markdown: highlights, links and escapes removed (a
    condition's words may hold links, so their highlight goes after the links)."""
    text = re.sub(r":blue-background\[((?:\\.|[^\]\\])*)\]", r"\1", markdown)
    text = re.sub(r"\[((?:\\.|[^\[\]\\])*)\]\([^)\s]*\)", r"\1", text)
    text = re.sub(r":(?:orange|violet|gray)-background\[((?:\\.|[^\]\\])*)\]", r"\1", text)
    text = re.sub(r"\*((?:\\.|[^*\\])+)\*", r"\1", text)
    return re.sub(r"\\(.)", r"\1", text).replace("  \n", "\n")


def test_paragraph_view_shows_path_text_references_definitions_and_norm(
    shipped: kbmod.KnowledgeBase, store_path: Path
) -> None:
    at = open_page(NODE)
    node = shipped.tree[NODE]
    shown = markdowns(at)
    # the breadcrumb links every unit from the root down
    breadcrumb = next(m for m in shown if " › " in m)
    for ancestor in shipped.tree.path(NODE):
        assert f"]({common.node_url(ancestor.id)})" in breadcrumb
    assert breadcrumb.index(common.node_url("Part 164")) < breadcrumb.index(
        common.node_url("164.502")
    )
    assert any(NODE in h.value and "Standard" in h.value for h in at.subheader)
    # the text, with each citation a link where it stands
    text = next(m for m in shown if plain(m) == node.text)
    for ref in shipped.refs_out[NODE]:
        assert f"]({common.node_url(ref.target)})" in text
        assert f"[{ref.text}]({common.node_url(ref.target)})" in text
    # what it cites, listed with the citation
    assert any(
        m.startswith("- [Part 160 Subpart C]") and "subpart C of part 160" in m for m in shown
    )
    # the defined terms are highlighted, each with its definition at hand
    assert ":blue-background[covered entity]" in text
    assert ":blue-background[protected health information]" in text
    labels = [e.label for e in at.expander]
    assert "Covered entity" in labels and "Protected health information" in labels
    definition = shipped.define("covered entity", NODE)
    assert any(m.startswith(definition.text.split("\n")[0]) for m in shown)
    assert any(common.node_link(definition.node) in m for m in shown)
    # its children, as links
    for child in node.children:
        assert any(common.node_link(child) in m for m in shown)
    # the norm, with its parties' roles, its information type, its exception and provenance
    norm = shipped.norms[NODE]
    annotation = next(m for m in shown if "**Sender**" in m)
    assert f"-badge[{norm.norm_type}]" in annotation
    for role in norm.sender_roles:
        assert f"[{role}](/graphs?graph=roles&phrase=" in annotation
    assert f"HIPAA type: {norm.information_class}" in annotation
    for target, relation in norm.refs:
        line = next(x for x in annotation.split("\n") if x.startswith(f"- **{relation.title()}**"))
        assert common.node_link(target) in line
    assert any(
        c.value.startswith("Provenance: machine") and norm.version in c.value for c in at.caption
    )
    # reading a unit does not create the editors' store
    assert not store_path.exists()


def test_every_unit_renders_its_text_exactly(shipped: kbmod.KnowledgeBase) -> None:
    """Escaping, links and highlights never change what the reader sees ($, *, [ ...)."""
    for node in shipped.tree:
        if not node.text:
            continue
        report = node_report(shipped, node.id)
        own = [d for d in report["definitions"] if d["in"] == node.id]
        shown = regulation.linked_text(node.text, report["refs_out"], own)
        assert plain(shown) == node.text, node.id
    dollars = open_page("160.404(b)(2)(iii)(A)")
    text = shipped.tree["160.404(b)(2)(iii)(A)"].text
    assert "$10,000" in text
    assert any(plain(m) == text and r"\$10,000" in m for m in markdowns(dollars))


def test_cited_by_and_external_references(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page("162.920")
    shown = "\n".join(markdowns(at))
    refs_in = shipped.refs_in["162.920"]
    assert len(refs_in) > regulation.MAX_CITED_BY
    for ref in refs_in:  # the first 40 listed, the rest in an expander
        assert common.node_link(ref.source) in shown
    assert any(e.label == f"{len(refs_in) - regulation.MAX_CITED_BY} more" for e in at.expander)
    assert "(outside 45 CFR 160–164)" in shown
    assert f"**Cited by** ({len(refs_in)})" in shown


def test_search_lists_and_opens_units(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page()
    at.text_input(key=regulation.SEARCH).set_value("psychotherapy notes").run()
    assert not at.exception
    results = next(m for m in markdowns(at) if common.node_link("164.508(a)(2)") in m)
    assert common.node_link("164.508(a)(2)") in results
    assert common.node_link("164.501(Psychotherapy notes)") in results
    at.selectbox(key=regulation.OPEN).set_value("164.508(a)(2)").run()
    assert not at.exception
    assert at.query_params["node"] == "164.508(a)(2)"
    assert any("164.508(a)(2)" in h.value for h in at.subheader)
    text = shipped.tree["164.508(a)(2)"].text
    assert any(plain(m) == text for m in markdowns(at))
    # by id: the unit itself first; by heading; by words in any order
    assert regulation.search("164.502(a)")[0].id == "164.502(a)"
    assert regulation.search("§ 164.502")[0].id == "164.502"
    assert "164.508(a)(2)" in [n.id for n in regulation.search("notes psychotherapy")]
    assert regulation.search("   ") == []
    assert regulation.search("x" * 50_000) == []
    at.text_input(key=regulation.SEARCH).set_value("x" * 50_000).run()
    assert not at.exception
    assert at.info[0].value.startswith("Nothing matches") and len(at.info[0].value) < 200


def browse(at: AppTest) -> list:
    return [s for s in at.selectbox if (s.key or "").startswith("regulation-browse")]


def test_browse_by_level(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page()
    part = browse(at)[0]
    assert part.label == "Part"
    assert part.options == [
        regulation._describe(shipped.tree[p], 70) for p in shipped.tree["HIPAA"].children
    ]
    part.set_value("Part 164").run()
    assert not at.exception
    assert at.query_params["node"] == "Part 164"
    assert [s.label for s in browse(at)] == ["Part", "Subpart"]
    browse(at)[1].set_value("Part 164 Subpart E").run()
    browse(at)[2].set_value("164.502").run()
    browse(at)[3].set_value(NODE).run()
    assert not at.exception
    assert [s.label for s in browse(at)] == [
        "Part",
        "Subpart",
        "Section",
        "Paragraph of § 164.502",
        f"Paragraph of {NODE}",
    ]
    assert [s.value for s in browse(at)] == [
        "Part 164",
        "Part 164 Subpart E",
        "164.502",
        NODE,
        None,
    ]
    assert any(plain(m) == shipped.tree[NODE].text for m in markdowns(at))
    # following a reference in the same session
    at.selectbox(key=regulation.FOLLOW).set_value("160.103(Covered entity)").run()
    assert at.query_params["node"] == "160.103(Covered entity)"
    assert browse(at)[2].value == "160.103"
    # the page remembers the unit when it is opened again without ?node=
    del at.query_params["node"]
    at.run()
    assert any("160.103(Covered entity)" in h.value for h in at.subheader)


@pytest.mark.parametrize(
    ("node", "suggested"),
    [
        ("999.999", None),
        ("164.502(a)(9)(z)", "164.502(a)"),
        ("164.502(a", "164.502"),
        ("164.502(A)", "164.502(a)"),
        ("<script>alert(1)</script>", None),
        ("x" * 50_000, None),
    ],
)
def test_unknown_id_warns_with_suggestions(node: str, suggested: str | None) -> None:
    at = open_page(node)
    assert len(at.warning) == 1
    warning = at.warning[0].value
    assert warning.startswith("There is no unit")
    assert len(warning) < 2_000
    if suggested is not None:
        assert common.node_link(suggested) in warning
    else:
        assert "Did you mean" in warning or common.node_link("Part 164") in warning
    assert not at.subheader  # no unit is shown


def test_norm_provenance_follows_the_store(shipped: kbmod.KnowledgeBase, store_path: Path) -> None:
    node = "164.502(a)(1)(i)"
    with NormStore(store_path) as store:
        store.edit(node, {"purpose": "treatment"}, "alice", 0, shipped.norms, "checked")
    at = open_page(node)
    annotation = next(m for m in markdowns(at) if "**Sender**" in m)
    assert "- **Purpose**: treatment" in annotation
    caption = next(c.value for c in at.caption if c.value.startswith("Provenance"))
    assert "validated by alice" in caption and "store version 1" in caption
    assert "editor:alice" in caption and "checked" in caption
    with NormStore(store_path) as store:
        store.set_status(node, "rejected", "bob", 1, shipped.norms)
    at = open_page(node)
    annotation = next(m for m in markdowns(at) if "**Sender**" in m)
    assert "- **Purpose**: treatment" not in annotation  # the machine reading is back
    caption = next(c.value for c in at.caption if c.value.startswith("Provenance"))
    assert caption.startswith("Provenance: rejected by bob")


def test_root_and_units_without_a_norm(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page("HIPAA")
    shown = "\n".join(markdowns(at))
    assert f"{len(shipped.tree):,} units" in shown
    for part in shipped.tree["HIPAA"].children:
        assert common.node_link(part) in shown
    at = open_page("162.920")  # Part 162 is not annotated
    assert any(c.value.startswith("No norm") for c in at.caption)
