"""The Graphs page of the browser, run headless with Streamlit's AppTest on the shipped
knowledge base: resolving phrases in the role and attribute graphs, the drawn paths, a node's
neighbourhood, the counts, and inputs that are empty or far too long."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from privacy_checklist.app.ui.pages import graphs
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.attributes import information_type
from privacy_checklist.kg.concepts import Match


def _script() -> None:
    from privacy_checklist.app.ui.pages import graphs

    graphs.render()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path / "norms.sqlite"))
    monkeypatch.delenv("PCHECK_KB", raising=False)


def open_page(**params: str) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def resolve(at: AppTest, phrase: str, graph: str | None = None) -> AppTest:
    if graph is not None:
        at.radio(key=graphs.GRAPH_KEY).set_value(graph)
    at.text_input(key=graphs.PHRASE_KEY).set_value(phrase).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at: AppTest) -> list[str]:
    return [c.proto.spec for c in at.get("graphviz_chart")]


def results(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown if m.value.startswith("**1. "))


def test_counts_and_an_empty_phrase(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page()
    assert at.radio(key=graphs.GRAPH_KEY).value == "roles"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Nodes"] == f"{shipped.roles.stats()['nodes']:,}"
    assert metrics["Edges"] == f"{shipped.roles.stats()['edges']:,}"
    regulatory = sum(1 for n in shipped.roles.nodes.values() if n.kind == "regulatory")
    assert metrics["Regulatory roles"] == str(regulatory)
    both = "\n".join(m.value for m in at.markdown if m.value.startswith("**Role graph**"))
    assert f"regulatory {regulatory}" in both
    assert len(at.info) == 1 and at.info[0].value.startswith("Type a phrase")
    assert not results(at)
    # the neighbourhood starts at the targets, drawn
    assert len(charts(at)) == 1
    for phrase in ("", "   ", "\n"):
        resolve(at, phrase)
        assert at.info[0].value.startswith("Type a phrase")
        assert not at.warning and not results(at)


def test_surgeon_resolves_to_health_care_provider_with_a_drawn_path(
    shipped: kbmod.KnowledgeBase,
) -> None:
    at = resolve(open_page(), "surgeon")
    expected = shipped.role_resolver(embeddings=False).resolve("surgeon", 3)
    assert expected[0].target == "health care provider"
    shown = results(at)
    assert shown.startswith("**1. health care provider**")
    assert f"score {expected[0].score:.2f}" in shown and f"via {expected[0].via}" in shown
    assert " → ".join(expected[0].path[1:]) in shown
    path_chart, around_chart = charts(at)
    assert path_chart.startswith("digraph resolution")
    for name in expected[0].path:
        assert f'label="{name}"' in path_chart
    assert path_chart.count("->") >= len(expected[0].path) - 1
    assert 'label="health care provider", fillcolor="#cfe3ff"' in path_chart
    # the neighbourhood opens on the matched node: its parents and its way up to a role
    node = at.selectbox[0]
    assert node.value == "wn:surgeon.n.01"
    around = next(m.value for m in at.markdown if "**Parents**" in m.value)
    for edge in shipped.roles.parents("wn:surgeon.n.01"):
        assert shipped.roles.nodes[edge.parent].name in around
    assert "health care provider" in around.split("**Up to the nearest")[1]
    assert around_chart.startswith("digraph neighbourhood") and 'label="doctor"' in around_chart
    assert at.query_params["phrase"] == "surgeon" and at.query_params["graph"] == "roles"


def test_attribute_phrases_reach_hipaa_information_types(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page()
    resolver = shipped.attribute_resolver(embeddings=False)
    for phrase in ("surgery operative report", "operative report", "medical records"):
        resolve(at, phrase, "attributes")
        expected = resolver.resolve(phrase, 3)
        if not expected:
            assert "resolves to no attribute" in at.warning[0].value
            continue
        best = expected[0]
        shown = results(at)
        assert f"HIPAA type **{information_type(best)}**" in shown
        assert " → ".join(best.path[1:]) in shown
        assert f'label="{best.target}"' in charts(at)[0]
    resolve(at, "surgery operative report", "attributes")
    assert "→ HIPAA type **protected health information**" in results(at)
    assert 'label="protected health information"' in charts(at)[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Nodes"] == f"{shipped.attributes.stats()['nodes']:,}"


def test_no_match_is_a_warning() -> None:
    at = resolve(open_page(), "a journalist")
    assert at.warning[0].value.startswith("“a journalist” resolves to no HIPAA role")
    at = resolve(at, "favorite movie", "attributes")
    assert not at.exception


@pytest.mark.parametrize("graph", graphs.GRAPHS)
def test_very_long_phrases_are_read_in_part(graph: str) -> None:
    at = open_page(graph=graph)
    for phrase in ("x" * 50_000, "surgeon " * 6_250, 'the "doctor" \\ ' * 3_000):
        resolve(at, phrase)
        assert any("the resolver reads the first" in c.value for c in at.caption)
        assert len(at.query_params["phrase"]) <= graphs.MAX_URL_PHRASE
        for spec in charts(at):
            assert max(len(line) for line in spec.split("\n")) < 300


def test_query_parameters_open_a_phrase() -> None:
    at = open_page(graph="attributes", phrase="medical records")
    assert at.radio(key=graphs.GRAPH_KEY).value == "attributes"
    assert at.text_input(key=graphs.PHRASE_KEY).value == "medical records"
    assert "protected health information" in results(at)
    # typing keeps the parameters in step, and they are not applied again
    resolve(at, "HIV test result")
    assert at.query_params["phrase"] == "HIV test result"
    assert at.text_input(key=graphs.PHRASE_KEY).value == "HIV test result"
    at = open_page(graph="nonsense", phrase="surgeon")
    assert at.radio(key=graphs.GRAPH_KEY).value == "roles"
    assert results(at).startswith("**1. health care provider**")


def test_neighbourhood_is_capped_and_searchable(shipped: kbmod.KnowledgeBase) -> None:
    at = open_page(graph="attributes")
    busiest = max(shipped.attributes.nodes, key=lambda n: len(shipped.attributes.children(n)))
    children = len(shipped.attributes.children(busiest))
    assert children > graphs.MAX_NEIGHBOURS
    at.text_input(key=graphs.FIND_KEY).set_value(busiest).run()
    assert at.selectbox[0].value == busiest
    chart = charts(at)[-1]
    center = graphs._dot_id(busiest)
    neighbours = [
        line
        for line in chart.split("\n")
        if "->" in line and center in line and "style=" not in line
    ]
    assert len(neighbours) == graphs.MAX_NEIGHBOURS
    parents = len(shipped.attributes.parents(busiest))
    left_out = children - (graphs.MAX_NEIGHBOURS - parents)
    assert f"… {left_out} more children" in chart
    around = next(m.value for m in at.markdown if "**Children**" in m.value)
    assert f"… and {left_out} more" in around
    # a node found by name, then another picked from the list
    at = open_page()
    at.text_input(key=graphs.FIND_KEY).set_value("covered entity").run()
    assert at.selectbox[0].options[0].startswith("covered entity (regulatory")
    around = next(m.value for m in at.markdown if "**Children**" in m.value)
    assert "health care provider" in around
    assert "[160.103(Covered entity)](/regulation?node=" in around  # where the role is defined
    at.text_input(key=graphs.FIND_KEY).set_value("no such concept anywhere").run()
    assert at.info[-1].value.startswith("No node has that name")


def test_dot_is_escaped() -> None:
    match = Match(
        "covered entity", 0.5, ('a "quoted" \\ phrase', "x", "covered entity"), "x", "lexicon"
    )
    dot = graphs.path_dot([match])
    assert 'label="a \\"quoted\\" \\\\ phrase"' in dot
    assert dot.count("->") == 2 and dot.rstrip().endswith("}")


def test_every_target_is_drawn_as_one() -> None:
    """A target that lies on another match's path is still drawn as a target."""
    first = Match(
        "subcontractor",
        1.0,
        ("p", "billing company", "subcontractor", "business associate"),
        "billing company",
        "delegation",
    )
    second = Match(
        "business associate",
        1.0,
        ("p", "billing company", "business associate"),
        "business associate",
        "lexicon",
    )
    dot = graphs.path_dot([first, second])
    for target in ("subcontractor", "business associate"):
        assert f'label="{target}", fillcolor="#cfe3ff"' in dot
    assert dot.count('label="business associate"') == 1


def test_embedding_fallback_can_be_turned_on(shipped: kbmod.KnowledgeBase) -> None:
    """An unknown name ("Medicorp Inc") reaches a role by sentence embeddings when asked to."""
    phrase = "Medicorp Inc"
    at = resolve(open_page(), phrase)
    assert not shipped.role_resolver(embeddings=False).resolve(phrase, 3)
    assert at.warning[0].value.startswith(f"“{phrase}” resolves to no HIPAA role")
    at.checkbox(key="graphs-embeddings").check()
    resolve(at, phrase)
    expected = shipped.role_resolver(embeddings=True).resolve(phrase, 3)
    assert expected and expected[0].via == "embedding"
    assert results(at).startswith(f"**1. {expected[0].target}** · score {expected[0].score:.2f}")
    assert "via embedding" in results(at)
