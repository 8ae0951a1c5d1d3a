"""The Regulation page: browse and search the tree, and read one unit with its references,
the definitions of the terms it uses and its norm annotation, the words of its text that state
a norm's conditions highlighted.

The unit shown is ``?node=ID`` (``/regulation?node=164.502(a)``), so every
:func:`common.node_link` in the app lands here; browsing and search set it too. Search and the
ids suggested for an unknown one are the knowledge base's (:mod:`privacy_checklist.kg.search`),
the same as ``pcheck show`` suggests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from privacy_checklist.app.ui import common
from privacy_checklist.app.views import node_report
from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.search import SUGGESTIONS, TreeSearch, did_you_mean
from privacy_checklist.kg.tree import ROOT_ID, Node

MAX_RESULTS = 25
MAX_CITED_BY = 40
DEFINITION_LINES = 12
LAST = "regulation-node"  # the unit last shown, restored when the page is opened bare
OPEN = "regulation-open"
FOLLOW = "regulation-follow"
SEARCH = "regulation-search"
KIND_COLORS = {"permit": "green", "prohibit": "red", "definition": "gray"}
#: The background of the words that state a condition, by the condition's mode.
MODE_COLORS = {"required": "orange", "one_of": "violet", "exception": "gray"}
MODE_NAMES = {"required": "required", "one_of": "one of", "exception": "exception"}


# --------------------------------------------------------------------------- navigation


def _go(node_id: str) -> None:
    st.query_params["node"] = node_id
    st.session_state[LAST] = node_id


def _on_browse(key: str, parent: str) -> None:
    chosen = st.session_state.get(key)
    _go(chosen or parent)


def _on_pick(key: str) -> None:
    chosen = st.session_state.get(key)
    if chosen:
        _go(chosen)
    st.session_state[key] = None


def short_label(node: Node) -> str:
    """How a unit is named in a breadcrumb: ``Part 164``, ``Subpart E``, ``§ 164.502``, ``(a)``."""
    if node.kind == "root":
        return "HIPAA"
    if node.kind == "part":
        return node.id
    if node.kind == "subpart":
        return f"Subpart {RegId.parse(node.id).subpart}"
    if node.kind == "section":
        return f"§ {node.id}"
    return node.heading_line()


def _snippet(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _describe(node: Node, width: int = 90) -> str:
    """A unit's name and a little of what it says, for lists and select boxes."""
    name = short_label(node)
    if node.kind == "paragraph" and node.label and name.startswith("("):
        name = node.id
    words = node.title or node.text
    return f"{name} — {_snippet(words, width)}" if words else name


def _list_line(node: Node) -> str:
    """A Markdown list item: the unit's id as a link, then its heading or the start of its text."""
    return (
        f"- {common.node_link(node.id)} {common.md_escape(_snippet(node.title or node.text, 80))}"
    )


def _link(label: str, node_id: str) -> str:
    return f"[{common.md_escape(label)}]({common.node_url(node_id)})"


def _graph_link(role: str) -> str:
    from urllib.parse import quote

    return f"[{common.md_escape(role)}](/graphs?graph=roles&phrase={quote(role)})"


# --------------------------------------------------------------------------- search


@st.cache_resource(show_spinner=False)
def _finder() -> TreeSearch:
    """The tree's units folded for search (built once per server)."""
    return TreeSearch(common.kb().tree)


def search(query: str, limit: int | None = None) -> list[Node]:
    """Units whose id, heading or text match ``query``, best first (see
    :meth:`~privacy_checklist.kg.search.TreeSearch.search`)."""
    return _finder().search(query, limit)


def _search_panel() -> None:
    st.text_input(
        "Search the regulation",
        key=SEARCH,
        placeholder="an id, a heading or words: 164.508(a)(2), psychotherapy notes",
    )
    query = st.session_state.get(SEARCH) or ""
    if not query.strip():
        return
    found = search(query)
    if not found:
        st.info(f"Nothing matches “{common.md_escape(_snippet(query, 60))}”.")
        return
    shown = found[:MAX_RESULTS]
    st.markdown("\n".join(_list_line(n) for n in shown))
    if len(found) > len(shown):
        st.caption(f"{len(found)} units match; the first {len(shown)} are listed.")
    st.selectbox(
        "Open a result here",
        [n.id for n in shown],
        index=None,
        key=OPEN,
        placeholder="choose a result",
        on_change=_on_pick,
        args=(OPEN,),
    )


# --------------------------------------------------------------------------- browsing


def _browse_panel(path: Sequence[Node]) -> None:
    """One select box per level, from the parts down to the children of the current unit."""
    kb = common.kb()
    for depth, parent in enumerate(path):
        if not parent.children:
            break
        children = [kb.tree[c] for c in parent.children]
        selected = path[depth + 1].id if depth + 1 < len(path) else None
        kinds = {c.kind for c in children}
        label = (
            "Part"
            if kinds == {"part"}
            else "Subpart"
            if kinds == {"subpart"}
            else "Section"
            if kinds <= {"section", "appendix"}
            else f"Paragraph of {parent.id if parent.kind == 'paragraph' else short_label(parent)}"
        )
        options = [c.id for c in children]
        key = f"regulation-browse|{parent.id}|{selected}"
        by_id = {c.id: c for c in children}
        st.selectbox(
            label,
            options,
            index=options.index(selected) if selected in options else None,
            format_func=lambda i, by_id=by_id: _describe(by_id[i], 70),
            key=key,
            placeholder=f"{len(options)} to choose from",
            on_change=_on_browse,
            args=(key, parent.id),
        )


# --------------------------------------------------------------------------- the unit


def unknown_suggestions(node_id: str, limit: int = SUGGESTIONS) -> list[str]:
    """Ids close to an unknown one, as ``pcheck show`` suggests them (see
    :func:`~privacy_checklist.kg.search.did_you_mean`)."""
    return did_you_mean(common.kb().tree, node_id, limit)


def _unknown(node_id: str) -> None:
    shown = _snippet(node_id, 80)
    suggestions = unknown_suggestions(node_id)
    message = f"There is no unit “{common.md_escape(shown)}” in the regulation tree."
    if suggestions:
        message += " Did you mean " + ", ".join(common.node_link(s) for s in suggestions) + "?"
    else:
        parts = [n for n in common.kb().tree.children(ROOT_ID)]
        message += (
            " Search for it, or browse from the parts: "
            + ", ".join(common.node_link(p.id) for p in parts)
            + "."
        )
    st.warning(message, icon="⚠️")


def condition_marks(text: str, conditions: Sequence[Any]) -> list[tuple[int, int, str]]:
    """The spans of ``text`` that state ``conditions`` (each a
    :class:`~privacy_checklist.kg.conditions.Condition` quoting this text), as ``(start, end,
    mode)``, not overlapping (the first wins), never across a line break. A span that no longer
    points at its words is looked up by them; words not in the text are left out."""
    marks: list[tuple[int, int, str]] = []
    for condition in conditions:
        start, end = condition.start, condition.end
        if text[start:end] != condition.quote or start == end:
            start = text.find(condition.quote) if condition.quote else -1
            if start < 0:
                continue
            end = start + len(condition.quote)
        if any(s < end and start < e for s, e, _ in marks):
            continue
        at = start
        for line in text[start:end].split("\n"):
            if line.strip():
                marks.append((at, at + len(line), condition.mode))
            at += len(line) + 1
    return sorted(marks)


def linked_text(
    text: str,
    refs: Sequence[dict[str, Any]],
    terms: Sequence[dict[str, Any]],
    conditions: Sequence[Any] = (),
) -> str:
    """The text as Markdown: each citation a link to what it cites (a range to its first
    unit), each defined term highlighted, the words that state each of ``conditions``
    (:func:`condition_marks`) on the background of its mode (:data:`MODE_COLORS`; citations
    inside stay links); everything else shown literally."""
    marks = condition_marks(text, conditions)

    def crosses(start: int, end: int) -> bool:
        return any(s < end and start < e and not (s <= start and end <= e) for s, e, _ in marks)

    def inside(start: int, end: int) -> bool:
        return any(s < end and start < e for s, e, _ in marks)

    spans: list[tuple[int, int, str]] = []
    for ref in refs:
        start, end = ref["start"], ref["end"]
        if (
            text[start:end] != ref["text"]
            or any(s < end and start < e for s, e, _ in spans)
            or crosses(start, end)
        ):
            continue
        cited = common.md_escape(text[start:end])
        if ref["external"] or ref["target"] is None:
            spans.append((start, end, f"*{cited}*"))
        else:
            spans.append((start, end, f"[{cited}]({common.node_url(ref['target'])})"))
    for use in terms:
        start, end = use["start"], use["end"]
        if any(s < end and start < e for s, e, _ in spans) or inside(start, end):
            continue  # a term within a condition's words: the condition's highlight shows
        spans.append((start, end, f":blue-background[{common.md_escape(text[start:end])}]"))

    def render(lo: int, hi: int) -> str:
        out, at = [], lo
        for start, end, shown in sorted(spans):
            if start < lo or end > hi:
                continue
            out.append(common.md_escape(text[at:start]))
            out.append(shown)
            at = end
        out.append(common.md_escape(text[at:hi]))
        return "".join(out)

    out, at = [], 0
    for start, end, mode in marks:
        out.append(render(at, start))
        out.append(f":{MODE_COLORS.get(mode, 'orange')}-background[{render(start, end)}]")
        at = end
    out.append(render(at, len(text)))
    return "".join(out).replace("\n", "  \n")


def _references(report: dict[str, Any]) -> None:
    refs_out, refs_in = report["refs_out"], report["refs_in"]
    st.markdown(f"**Cites** ({len(refs_out)})")
    if refs_out:
        cites = []
        for ref in refs_out:
            quoted = f"“{common.md_escape(ref['text'])}”"
            if ref["external"] or ref["target"] is None:
                cites.append(f"- {quoted} (outside 45 CFR 160–164)")
                continue
            note = "" if ref["exact"] else " (the cited paragraph is missing: its nearest ancestor)"
            cites.append(f"- {common.node_link(ref['target'])} {quoted} · {ref['via']}{note}")
        st.markdown("\n".join(cites))
    else:
        st.caption("It cites nothing.")
    st.markdown(f"**Cited by** ({len(refs_in)})")
    if not refs_in:
        st.caption("Nothing cites it.")
        return

    def lines(refs: Sequence[dict[str, Any]]) -> str:
        return "\n".join(
            f"- {common.node_link(r['source'])} “{common.md_escape(r['text'])}”" for r in refs
        )

    st.markdown(lines(refs_in[:MAX_CITED_BY]))
    if len(refs_in) > MAX_CITED_BY:
        with st.expander(f"{len(refs_in) - MAX_CITED_BY} more"):
            st.markdown(lines(refs_in[MAX_CITED_BY:]))


def _definitions(report: dict[str, Any]) -> None:
    definitions = report["definitions"]
    st.markdown(f"**Defined terms it uses** ({len(definitions)})")
    if not definitions:
        st.caption("No defined term is used here (or in the text above it).")
        return
    for d in definitions:
        where = "" if d["in"] == report["id"] else f" (in {d['in']})"
        with st.expander(f"{common.md_escape(d['term'])}{common.md_escape(where)}"):
            st.markdown(
                f"Defined in {common.node_link(d['node'])}, in force for "
                f"{common.node_link(d['scope'])}"
                + ("" if not where else f"; used in the text of {common.node_link(d['in'])}")
            )
            lines = d["text"].split("\n")
            body = "  \n".join(common.md_escape(line) for line in lines[:DEFINITION_LINES])
            if len(lines) > DEFINITION_LINES:
                body += f"  \n… {len(lines) - DEFINITION_LINES} more lines"
            st.markdown(body)


def _follow(report: dict[str, Any]) -> None:
    """Links open a new tab; this opens what the unit cites, what cites it, or where a term
    it uses is defined, in this one."""
    linked = [r["target"] for r in report["refs_out"] if r["target"] and not r["external"]]
    linked += [r["source"] for r in report["refs_in"]]
    linked += [d["node"] for d in report["definitions"]]
    linked = list(dict.fromkeys(linked))
    if not linked:
        return
    st.selectbox(
        "Open a cited, citing or defining unit here",
        linked,
        index=None,
        key=FOLLOW,
        format_func=lambda i: _describe(common.kb().tree[i], 70),
        placeholder=f"{len(linked)} to choose from",
        on_change=_on_pick,
        args=(FOLLOW,),
    )


def _annotation(node_id: str) -> tuple[Any, Any, str | None]:
    """The norm as everything reads it (the store's effective view), the store's record of
    it (None when the store has none), and a problem with the store, if any. A missing store
    is not created: the knowledge base's machine reading stands."""
    from privacy_checklist.kg.kb import KnowledgeBaseError
    from privacy_checklist.kg.store import StoreError, default_store_path

    kb = common.kb()
    try:
        baseline = kb.norms
    except KnowledgeBaseError as exc:
        return None, None, str(exc)
    if not default_store_path().exists():
        return baseline.get(node_id), None, None
    try:
        with common.store() as store:
            return store.effective(baseline).get(node_id), store.get(node_id), None
    except StoreError as exc:
        return baseline.get(node_id), None, str(exc)


def _norm(node_id: str) -> None:
    st.markdown("**Norm annotation**")
    norm, record, problem = _annotation(node_id)
    if problem:
        st.warning(f"The editors' store cannot be read: {common.md_escape(problem)}")
    if norm is None:
        st.caption(
            "No norm: only paragraphs of Parts 160 and 164 with text of their own are annotated."
        )
        return

    def words(values: Sequence[str]) -> str:
        return ", ".join(common.md_escape(v) for v in values) if values else "—"

    def party(name: str, phrases: Sequence[str], roles: Sequence[str], is_subject: str) -> str:
        shown = f"- **{name}**: {words(phrases)}"
        if roles:
            shown += " → roles: " + ", ".join(_graph_link(r) for r in roles)
        if is_subject and is_subject != "no":
            shown += f" · is the subject: {common.md_escape(is_subject)}"
        return shown

    color = KIND_COLORS.get(norm.norm_type, "gray")
    supports = [t for t, relation in norm.refs if relation == "support"]
    exceptions = [t for t, relation in norm.refs if relation == "exception"]
    lines = [
        f":{color}-badge[{norm.norm_type}]",
        "",
        party("Sender", norm.sender, norm.sender_roles, norm.sender_is_subject),
        party("Recipient", norm.recipient, norm.recipient_roles, norm.recipient_is_subject),
        party("Subject", norm.subject, norm.subject_roles, ""),
        f"- **Information**: {words([norm.information_type] if norm.information_type else [])}"
        + (
            f" → HIPAA type: {common.md_escape(norm.information_class)}"
            if norm.information_class
            else ""
        ),
        f"- **Purpose**: {words([norm.purpose] if norm.purpose else [])}",
        f"- **Consent**: {common.md_escape(norm.consent_form)}",
        "- **Support**: " + (", ".join(common.node_link(t) for t in supports) or "—"),
        "- **Exception**: " + (", ".join(common.node_link(t) for t in exceptions) or "—"),
        *condition_lines(node_id, norm.conditions),
    ]
    st.markdown("\n".join(lines))
    reading = (
        f"read by {common.md_escape(norm.provenance)}, version {common.md_escape(norm.version)}"
    )
    if record is None:
        status = f"machine ({reading}); no editor has looked at it"
    elif record.status == "rejected":
        status = (
            f"rejected by {common.md_escape(record.updated_by)} (store version {record.version}, "
            f"{record.updated_at[:19]}); the knowledge base's machine reading is shown ({reading})"
        )
    else:
        status = (
            f"{record.status} by {common.md_escape(record.updated_by)} (store version "
            f"{record.version}, {record.updated_at[:19]}; {reading})"
        )
    if record is not None and record.comment:
        status += f" — “{common.md_escape(record.comment)}”"
    st.caption(f"Provenance: {status}")


def condition_lines(node_id: str, conditions: Sequence[Any]) -> list[str]:
    """The norm's conditions as a Markdown list: mode (and group), the kind's label, and the
    words that state it (with where, when another paragraph states it)."""
    from privacy_checklist.kg.store import condition_kinds

    if not conditions:
        return ["- **Conditions**: —"]
    kinds = condition_kinds()
    lines = [f"- **Conditions** ({len(conditions)}):"]
    for c in conditions:
        mode = MODE_NAMES.get(c.mode, c.mode) + (f" {c.group}" if c.group else "")
        found = kinds.get(c.kind)
        label = found.label if found is not None else c.kind
        where = f" (in {common.node_link(c.node)})" if c.node and c.node != node_id else ""
        lines.append(
            f"    - :{MODE_COLORS.get(c.mode, 'orange')}-badge[{common.md_escape(mode)}] "
            f"**{common.md_escape(label)}** ({common.md_escape(c.kind)}): "
            f"“{common.md_escape(c.quote)}”{where}"
        )
    return lines


def conditions_quoting(node_id: str) -> list[tuple[str, Any]]:
    """``(norm, condition)`` for every condition of the norms as everything reads them whose
    words are in this paragraph's text (its own norm's first)."""
    from privacy_checklist.kg.kb import KnowledgeBaseError

    try:
        norms = common.kb().norms
    except KnowledgeBaseError:
        return []
    found = [(n.node, c) for n in norms.values() for c in n.conditions if c.node == node_id]
    return sorted(found, key=lambda item: item[0] != node_id)


def _overview() -> None:
    kb = common.kb()
    stats = kb.stats()
    kinds = stats["nodes_by_kind"]
    st.markdown(
        f"The HIPAA Administrative Simplification rules (45 CFR Parts 160, 162 and 164): "
        f"{stats['nodes']:,} units ({kinds.get('part', 0)} parts, {kinds.get('subpart', 0)} "
        f"subparts, {kinds.get('section', 0)} sections, {kinds.get('paragraph', 0)} "
        f"paragraphs), {stats['references']['internal']:,} cross-references and "
        f"{stats['definitions']['total']} defined terms. Search, browse, or open a part:"
    )


def _unit(node_id: str) -> None:
    kb = common.kb()
    report = node_report(kb, node_id)
    node = kb.tree[node_id]
    path = kb.tree.path(node_id)
    st.markdown(" › ".join(_link(short_label(n), n.id) for n in path))
    title = node.heading_line() if node.kind != "paragraph" else node.id
    if node.kind == "paragraph" and node.title:
        title += f" {node.title}"
    st.subheader(common.md_escape(title), anchor=False)
    st.caption(
        f"{node.kind} · {len(node.children)} units under it · cites {len(report['refs_out'])} · "
        f"cited by {len(report['refs_in'])}"
    )
    if node.kind == "root":
        _overview()
    own_terms = [d for d in report["definitions"] if d["in"] == node_id]
    quoting = conditions_quoting(node_id) if node.kind == "paragraph" else []
    if node.text:
        conditions = [c for _, c in quoting]
        st.markdown(linked_text(node.text, report["refs_out"], own_terms, conditions))
        if quoting:
            norms = list(dict.fromkeys(n for n, _ in quoting))
            colours = ", ".join(f"{MODE_COLORS[m]} {MODE_NAMES[m]}" for m in MODE_COLORS)
            st.caption(
                "Highlighted: the words that state a condition of the norm of "
                + ", ".join(common.node_link(n) for n in norms)
                + f" ({colours})."
            )
    elif node.kind != "root":
        st.caption("(no text of its own)")
    for note in node.notes:
        st.caption(common.md_escape(note))
    if node.children:
        st.markdown(f"**Contains** ({len(node.children)})")
        st.markdown("\n".join(_list_line(kb.tree[c]) for c in node.children))
    if node.kind == "root":
        return
    _references(report)
    _definitions(report)
    _follow(report)
    _norm(node_id)
    with st.expander("Full specification (what an annotator reads: root to this unit)"):
        st.text(kb.full_specification(node_id))


# --------------------------------------------------------------------------- page


def render() -> None:
    st.title("Regulation")
    kb = common.kb()
    requested = st.query_params.get("node")
    if not requested and st.session_state.get(LAST) in kb.tree:
        requested = st.session_state[LAST]
        st.query_params["node"] = requested
    known = bool(requested) and requested in kb.tree
    current = requested if requested and known else ROOT_ID
    if known:
        st.session_state[LAST] = current
    side, main = st.columns([1, 2], gap="large")
    with side:
        _search_panel()
        st.markdown("**Browse**")
        _browse_panel(kb.tree.path(current))
    with main:
        if requested and not known:
            _unknown(requested)
            return
        _unit(current)
