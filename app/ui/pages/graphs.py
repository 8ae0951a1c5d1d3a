"""The Graphs page: how an everyday phrase resolves in the role graph or the attribute graph
(target, score, how it was found, the justifying path, drawn), a node's neighbourhood, and the
graphs' counts.

``?graph=roles&phrase=surgeon`` opens the page on a phrase (the Regulation page links a norm's
roles here).
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import streamlit as st

from privacy_checklist.app.ui import common
from privacy_checklist.kg import lexicon
from privacy_checklist.kg.attributes import information_type
from privacy_checklist.kg.concepts import ConceptGraph, Match, Resolver

GRAPHS = ("roles", "attributes")
TITLES = {"roles": "Role graph", "attributes": "Attribute graph"}
TARGETS = {"roles": "regulatory roles", "attributes": "HIPAA information types"}
TARGET_LABELS = {"roles": "Regulatory roles", "attributes": "HIPAA information types"}
EXAMPLES = {
    "roles": ("the treating orthopedic surgeon", "City of Plainfield police department"),
    "attributes": ("surgery operative report", "HIV test result"),
}
GRAPH_KEY = "graphs-graph"
PHRASE_KEY = "graphs-phrase"
FIND_KEY = "graphs-find"
APPLIED = "graphs-applied"  # the query parameters last copied into the widgets
MAX_NEIGHBOURS = 40
MAX_OPTIONS = 100
MAX_LABEL = 60
MAX_URL_PHRASE = 200


# --------------------------------------------------------------------------- data


@st.cache_resource(show_spinner="Loading the graph's resolver ...")
def resolver(graph: str, *, embeddings: bool = False) -> Resolver:
    """The knowledge base's resolver for ``graph`` (one per server)."""
    kb = common.kb()
    return (
        kb.role_resolver(embeddings=embeddings)
        if graph == "roles"
        else kb.attribute_resolver(embeddings=embeddings)
    )


def concept_graph(graph: str) -> ConceptGraph:
    kb = common.kb()
    return kb.roles if graph == "roles" else kb.attributes


@st.cache_resource(show_spinner=False)
def _by_name(graph: str) -> dict[str, list[str]]:
    """Node ids by name (names are not unique: WordNet has several "doctor" senses)."""
    out: dict[str, list[str]] = {}
    for node in concept_graph(graph).nodes.values():
        out.setdefault(node.name, []).append(node.id)
    return out


@st.cache_resource(show_spinner=False)
def counts(graph: str) -> dict[str, Any]:
    """Nodes, edges, targets, nodes by kind and edges by relation."""
    g = concept_graph(graph)
    is_target = resolver(graph).is_target
    return {
        **g.stats(),
        "targets": sum(1 for n in g.nodes if is_target(n)),
        "kinds": dict(Counter(n.kind for n in g.nodes.values()).most_common()),
        "relations": dict(Counter(e.relation for e in g.edges).most_common()),
    }


# --------------------------------------------------------------------------- drawing


def _quote(text: str) -> str:
    """A DOT string literal."""
    text = " ".join(text.split())
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1].rstrip() + "…"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _header(name: str) -> list[str]:
    return [
        f"digraph {name} {{",
        "  rankdir=BT;",
        '  node [shape=box, style="rounded,filled", fillcolor="#f4f4f4", color="#999999", '
        'fontname="Helvetica", fontsize=11];',
        '  edge [color="#777777", fontname="Helvetica", fontsize=9];',
    ]


def path_dot(matches: Sequence[Any]) -> str:
    """The paths of the matches as a DOT graph, from the phrase up to the broadest concept;
    each target is drawn in blue (grey when a concept reaches no target)."""
    lines = _header("resolution")
    ids: dict[str, str] = {}
    styles: dict[str, str] = {}
    for m in matches:
        styles.setdefault(
            m.target,
            ', fillcolor="#cfe3ff", color="#1f5fbf", penwidth=2'
            if m.reached
            else ', fillcolor="#e6e6e6", style="rounded,filled,dashed"',
        )
        if m.path:
            styles.setdefault(m.path[0], ', shape=note, fillcolor="#fff6cc"')

    def node(name: str) -> str:
        if name not in ids:
            ids[name] = f"n{len(ids)}"
            lines.append(f"  {ids[name]} [label={_quote(name)}{styles.get(name, '')}];")
        return ids[name]

    edges: set[tuple[str, str]] = set()
    for m in matches:
        for lower, upper in itertools.pairwise(m.path):
            pair = (node(lower), node(upper))
            if pair not in edges:
                edges.add(pair)
                label = f" [label={_quote(m.via)}]" if lower == m.path[0] else ""
                lines.append(f"  {pair[0]} -> {pair[1]}{label};")
        if len(m.path) == 1:
            node(m.path[0])
    lines.append("}")
    return "\n".join(lines)


def neighbourhood(graph: str, node_id: str, cap: int = MAX_NEIGHBOURS) -> dict[str, Any]:
    """A node's parents and children (at most ``cap`` in all, parents first), how many were
    left out, and its path up to the nearest target."""
    g = concept_graph(graph)
    parents = g.parents(node_id)[:cap]
    children = g.children(node_id)[: max(cap - len(parents), 0)]
    up = g.path_up(node_id, resolver(graph).is_target) or []
    return {
        "parents": parents,
        "children": children,
        "more_parents": len(g.parents(node_id)) - len(parents),
        "more_children": len(g.children(node_id)) - len(children),
        "to_target": up,
    }


def neighbourhood_dot(graph: str, node_id: str, around: dict[str, Any]) -> str:
    """The node (yellow), its parents above and children below, and its path to the nearest
    target (dashed, the target in blue)."""
    is_target = resolver(graph).is_target
    lines = _header("neighbourhood")
    drawn: set[str] = set()

    def node(nid: str, extra: str = "") -> str:
        if nid not in drawn:
            drawn.add(nid)
            style = extra or (', fillcolor="#cfe3ff", color="#1f5fbf"' if is_target(nid) else "")
            lines.append(f"  {_dot_id(nid)} [label={_quote(_label(graph, nid))}{style}];")
        return _dot_id(nid)

    node(node_id, ', fillcolor="#fff6cc", penwidth=2')
    for edge in around["parents"]:
        label = "" if edge.relation == "is_a" else f" [label={_quote(edge.relation)}]"
        lines.append(f"  {node(node_id)} -> {node(edge.parent)}{label};")
    for edge in around["children"]:
        label = "" if edge.relation == "is_a" else f" [label={_quote(edge.relation)}]"
        lines.append(f"  {node(edge.child)} -> {node(node_id)}{label};")
    if around["more_children"]:
        lines.append(
            f'  more [label="… {around["more_children"]} more children", shape=plaintext, '
            'style=""];'
        )
        lines.append(f"  more -> {node(node_id)} [style=dotted];")
    chain = around["to_target"]
    direct = {e.parent for e in around["parents"]}
    for lower, upper in itertools.pairwise(chain):
        if lower == node_id and upper in direct:
            continue
        lines.append(f"  {node(lower)} -> {node(upper)} [style=dashed];")
    lines.append("}")
    return "\n".join(lines)


def _dot_id(node_id: str) -> str:
    return "c" + hashlib.sha1(node_id.encode("utf-8")).hexdigest()[:12]


# --------------------------------------------------------------------------- widgets


def _apply_query_params() -> None:
    """Copy ``?graph=`` and ``?phrase=`` into the widgets when they changed (a link)."""
    wanted = (st.query_params.get("graph"), st.query_params.get("phrase"))
    if wanted == st.session_state.get(APPLIED):
        return
    st.session_state[APPLIED] = wanted
    if wanted[0] in GRAPHS:
        st.session_state[GRAPH_KEY] = wanted[0]
    if wanted[1] is not None:
        st.session_state[PHRASE_KEY] = wanted[1]


def _sync_query_params(graph: str, phrase: str) -> None:
    shown = phrase.strip()[:MAX_URL_PHRASE] or None
    st.query_params["graph"] = graph
    if shown:
        st.query_params["phrase"] = shown
    elif "phrase" in st.query_params:
        del st.query_params["phrase"]
    st.session_state[APPLIED] = (graph, shown)


def _counts(graph: str) -> None:
    found = counts(graph)
    cols = st.columns(3)
    cols[0].metric("Nodes", f"{found['nodes']:,}")
    cols[1].metric("Edges", f"{found['edges']:,}")
    cols[2].metric(TARGET_LABELS[graph], found["targets"])
    with st.expander("Both graphs: nodes by kind, edges by relation"):
        for name in GRAPHS:
            other = counts(name)
            kinds = ", ".join(f"{k} {n:,}" for k, n in other["kinds"].items())
            relations = ", ".join(f"{k} {n:,}" for k, n in other["relations"].items())
            st.markdown(
                f"**{TITLES[name]}**: {other['nodes']:,} nodes ({kinds}); "
                f"{other['edges']:,} edges ({relations})"
            )


def _describe_match(graph: str, rank: int, m: Match) -> str:
    esc = common.md_escape
    if graph == "roles":
        head = f"**{rank}. {esc(m.target)}**"
    elif m.reached:
        head = f"**{rank}. {esc(m.matched)}** → HIPAA type **{esc(information_type(m))}**"
    else:
        head = f"**{rank}. {esc(m.matched)}** (no HIPAA information type)"
    return (
        f"{head} · score {m.score:.2f} · via {esc(m.via)} · matched *{esc(m.matched)}*  \n"
        + " → ".join(esc(p) for p in m.path[1:])
    )


def _resolve(graph: str, phrase: str, k: int, embeddings: bool) -> list[Match]:
    if len(phrase) > lexicon.MAX_CHARS:
        st.caption(
            f"The phrase has {len(phrase):,} characters; the resolver reads the first "
            f"{lexicon.MAX_CHARS}."
        )
    matches = resolver(graph, embeddings=embeddings).resolve(phrase, k)
    shown = common.md_escape(" ".join(phrase.split())[:80])
    if not matches:
        what = "no HIPAA role" if graph == "roles" else "no attribute the graph knows"
        st.warning(f"“{shown}” resolves to {what}.")
        return []
    st.markdown("\n\n".join(_describe_match(graph, i, m) for i, m in enumerate(matches, 1)))
    st.graphviz_chart(path_dot(matches))
    return matches


def _options(graph: str, find: str, matches: Sequence[Any]) -> list[str]:
    """Nodes to choose from: those matching ``find`` (name, id or alias), else the nodes on
    the resolution's paths and the targets."""
    g = concept_graph(graph)
    by_name = _by_name(graph)
    needle = " ".join(find.lower().split())[:MAX_URL_PHRASE]
    if needle:
        ranked = []
        for node in g.nodes.values():
            name = node.name.lower()
            if name == needle or node.id.lower() == needle:
                rank = 0
            elif name.startswith(needle):
                rank = 1
            elif needle in name or needle in node.id.lower():
                rank = 2
            elif any(needle in a.lower() for a in node.aliases):
                rank = 3
            else:
                continue
            ranked.append((rank, len(name), name, node.id))
        return [nid for *_, nid in sorted(ranked)[:MAX_OPTIONS]]
    on_paths = [
        nid
        for m in matches
        for name in (m.matched, *m.path[1:])
        for nid in by_name.get(name, [])[:1]
    ]
    is_target = resolver(graph).is_target
    targets = [nid for nid in g.nodes if is_target(nid)]
    return list(dict.fromkeys([*on_paths, *targets]))[:MAX_OPTIONS]


def _label(graph: str, node_id: str) -> str:
    """A node's name, with its kind unless it is a WordNet sense (two nodes may share a name:
    the role "subcontractor" and WordNet's)."""
    node = concept_graph(graph).nodes[node_id]
    return node.name if node.kind == "wordnet" else f"{node.name} ({node.kind})"


def _names(graph: str, ids: Iterable[str]) -> str:
    return ", ".join(common.md_escape(_label(graph, i)) for i in ids) or "—"


def _neighbourhood(graph: str, matches: Sequence[Any]) -> None:
    st.subheader("A node's neighbourhood", anchor=False)
    g = concept_graph(graph)
    find = st.text_input(
        "Find a node", key=FIND_KEY, placeholder="a name, id or alias: nurse, wn:surgeon.n.01"
    )
    options = _options(graph, find or "", matches)
    if not options:
        st.info("No node has that name, id or alias.")
        return
    digest = hashlib.sha1("\n".join(options).encode("utf-8")).hexdigest()[:10]
    chosen = st.selectbox(
        "Node",
        options,
        format_func=lambda nid: f"{g.nodes[nid].name} ({g.nodes[nid].kind}, {nid})",
        key=f"graphs-node-{graph}-{digest}",
    )
    if chosen is None:
        return
    concept = g.nodes[chosen]
    around = neighbourhood(graph, chosen)
    kb = common.kb()
    source = concept.source
    source_md = common.node_link(source) if source in kb.tree else common.md_escape(source or "—")
    lines = [
        f"**{common.md_escape(concept.name)}** · {common.md_escape(concept.kind)} · "
        f"`{chosen}` · source: {source_md}",
        f"- **Parents**: {_names(graph, (e.parent for e in around['parents']))}"
        + (f" … and {around['more_parents']} more" if around["more_parents"] else ""),
        f"- **Children**: {_names(graph, (e.child for e in around['children']))}"
        + (f" … and {around['more_children']} more" if around["more_children"] else ""),
        f"- **Up to the nearest of the {TARGETS[graph]}**: "
        + (" → ".join(common.md_escape(g.nodes[n].name) for n in around["to_target"]) or "none"),
    ]
    if concept.aliases:
        aliases = ", ".join(common.md_escape(a) for a in concept.aliases[:20])
        more = len(concept.aliases) - 20
        lines.append(f"- **Aliases**: {aliases}" + (f" … and {more} more" if more > 0 else ""))
    if concept.iris:
        lines.append("- **IRIs**: " + ", ".join(f"<{iri}>" for iri in concept.iris))
    st.markdown("\n".join(lines))
    st.graphviz_chart(neighbourhood_dot(graph, chosen, around))


# --------------------------------------------------------------------------- page


def render() -> None:
    st.title("Graphs")
    kb = common.kb()
    if not kb.has_graphs:
        st.warning(
            "This knowledge base has no role and attribute graphs; build one with "
            "`pcheck ingest --ontologies DIR --out DIR` and start the app with `--kb DIR`."
        )
        return
    _apply_query_params()
    graph = (
        st.radio("Graph", GRAPHS, format_func=TITLES.get, horizontal=True, key=GRAPH_KEY)
        or GRAPHS[0]
    )
    _counts(graph)
    st.subheader("Resolve a phrase", anchor=False)
    cols = st.columns([4, 1, 1], vertical_alignment="bottom")
    phrase = cols[0].text_input(
        "Phrase",
        key=PHRASE_KEY,
        placeholder=f"e.g. {EXAMPLES[graph][0]}",
        max_chars=common.MAX_CASE_CHARS,
    )
    k = int(cols[1].number_input("Matches", min_value=1, max_value=10, value=3, step=1))
    embeddings = cols[2].checkbox(
        "Embeddings",
        key="graphs-embeddings",
        help="When the lexicon finds nothing, compare the phrase with the graph's names by "
        "sentence embeddings (as the command line does; loading the model takes seconds).",
    )
    phrase = phrase or ""
    _sync_query_params(graph, phrase)
    matches: list[Any] = []
    if not phrase.strip():
        examples = " or ".join(f"“{e}”" for e in EXAMPLES[graph])
        st.info(
            f"Type a phrase, such as {examples}, to see which of the {TARGETS[graph]} it "
            "reaches and the path that justifies it."
        )
    else:
        matches = _resolve(graph, phrase, k, embeddings)
    _neighbourhood(graph, matches)
