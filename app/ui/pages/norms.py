"""The Norms page: the editors' queue.

Filter the annotated paragraphs by section, status and norm type; open one to read its text
(the words that state its conditions highlighted) and every field of its annotation, its
conditions, its history, and (an editor signed in) edit, validate or reject it. A condition is
edited as a kind of ``condition_kinds.json``, a mode, a group and the words of the text that
state it; the words are checked against the text before anything is saved.

Everything goes through :class:`~privacy_checklist.kg.store.NormStore`, exactly as
``pcheck norms show|edit|validate|reject|history`` does: an edit or a review names the version
the norm was opened at, so one made after someone else changed the norm is refused with who
changed which fields, and nothing is overwritten.

``/norms?node=ID`` opens a norm.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pandas as pd
import streamlit as st

from privacy_checklist.app.ui import common
from privacy_checklist.app.ui.pages.regulation import MODE_NAMES, linked_text
from privacy_checklist.kg.conditions import MODES
from privacy_checklist.kg.kb import KnowledgeBaseError
from privacy_checklist.kg.norms import LIST_FIELDS, NORM_TYPES, RELATIONS, Cues, Norm
from privacy_checklist.kg.store import (
    EDITABLE,
    STATUSES,
    YES_NO,
    NormStore,
    Record,
    StaleEditError,
    StoreError,
    condition_kinds,
    validate_changes,
)

KEY = "norms-"
OPENED = KEY + "opened"  # the norm shown
LOADED = KEY + "loaded"  # {"node", "version", "norm"}: what the forms were filled from
FLASH = KEY + "flash"  # the outcome of the last save / review, shown once
PICK = KEY + "pick"
ROWS = KEY + "rows"  # the ids of the table's rows, for its row selection
SECTION = KEY + "section"
STATUS = KEY + "status"
TYPE = KEY + "type"
TEXT = KEY + "text"
NO_REF = "not a reference"
NEW_CONDITIONS = 2  # blank condition rows offered in the edit form
SNIPPET = 110
PARTIES = ("sender", "recipient", "subject")
FIELD_LABELS = {
    "norm_type": "Norm type",
    "sender": "Sender (phrases)",
    "sender_roles": "Sender roles",
    "recipient": "Recipient (phrases)",
    "recipient_roles": "Recipient roles",
    "subject": "Subject (phrases)",
    "subject_roles": "Subject roles",
    "information_type": "Information type (phrase)",
    "information_class": "HIPAA information type",
    "purpose": "Purpose",
    "consent_form": "Consent form",
    "sender_is_subject": "Sender is the subject",
    "recipient_is_subject": "Recipient is the subject",
    "refs": "Cross-references",
    "conditions": "Conditions",
    "provenance": "Provenance",
    "version": "Annotation version",
}


# --------------------------------------------------------------------------- data


def _snippet(text: str, width: int = SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _baseline() -> dict[str, Norm]:
    """The knowledge base's machine annotation: the store's version 0 of every norm."""
    return common.kb().machine_norms


def _read_store() -> dict[str, Record]:
    """The store's records; looking opens it read-only (a missing store is not created)."""
    with common.store() as store:
        return store.all()


def _current(node: str, baseline: dict[str, Norm]) -> Record:
    with common.store() as store:
        return store.current(node, baseline)


def _history(node: str) -> list[dict[str, Any]]:
    with common.store() as store:
        return store.history(node)


@st.cache_resource(show_spinner=False)
def _choices() -> dict[str, list[str]]:
    """The pickers' options: role names from the role graph, HIPAA information types from the
    attribute graph, purposes and consent forms from the annotator's cues."""
    kb = common.kb()
    out: dict[str, list[str]] = {"roles": [], "hipaa": [], "purposes": [], "consent": []}
    try:
        out["roles"] = sorted(c.name for c in kb.roles.nodes.values() if c.kind == "regulatory")
        out["hipaa"] = [c.name for c in kb.attributes.nodes.values() if c.kind == "hipaa"]
    except KnowledgeBaseError:  # a knowledge base without graphs: current values stay pickable
        pass
    cues = Cues.load()
    out["purposes"] = [name for name, _ in cues.purposes]
    out["consent"] = ["none", *(name for name, _ in cues.consent_forms)]
    return out


def _sections() -> tuple[list[str], dict[str, str]]:
    """Sections with annotated paragraphs (in the regulation's order), and each norm's section."""
    kb = common.kb()
    tree = kb.tree
    of: dict[str, str] = {}
    for node in kb.machine_norms:
        section = tree.section_of(node)
        of[node] = section.id if section is not None else ""
    present = set(of.values())
    ordered = [n.id for n in tree if n.kind == "section" and n.id in present]
    return ordered, of


# --------------------------------------------------------------------------- opening


def _open(node: str) -> None:
    st.session_state[OPENED] = node
    st.query_params["node"] = node


def _on_pick() -> None:
    chosen = st.session_state.get(PICK)
    if chosen:
        _open(chosen)
    st.session_state[PICK] = None


def _on_row(table_key: str) -> None:
    state = st.session_state.get(table_key)
    rows = state["selection"]["rows"] if state else []
    ids = st.session_state.get(ROWS) or []
    if rows and rows[0] < len(ids):
        _open(ids[rows[0]])


def _load(record: Record) -> None:
    """Fill the forms from this record: edits and reviews are made against its version."""
    st.session_state[LOADED] = {
        "node": record.norm.node,
        "version": record.version,
        "norm": record.norm.to_json(),
    }


def _loaded(node: str) -> tuple[Norm, int] | None:
    loaded = st.session_state.get(LOADED)
    if not loaded or loaded["node"] != node:
        return None
    return Norm.from_json(loaded["norm"]), loaded["version"]


# --------------------------------------------------------------------------- saving


def _wkey(node: str, version: int, name: str) -> str:
    """A form widget's key: a new version loaded gives fresh widgets."""
    return f"{KEY}w:{node}@{version}:{name}"


def _form_values(node: str, version: int, norm: Norm) -> dict[str, Any]:
    state = st.session_state
    values: dict[str, Any] = {"norm_type": state[_wkey(node, version, "norm_type")]}
    for field in LIST_FIELDS:
        values[field] = state[_wkey(node, version, field)]
    for field in EDITABLE:
        if field not in ("norm_type", "refs", "conditions", *LIST_FIELDS):
            values[field] = state[_wkey(node, version, field)] or ""
    refs = []
    for target in _ref_targets(node, norm):
        relation = state[_wkey(node, version, f"ref:{target}")]
        if relation in RELATIONS:
            refs.append((target, relation))
    values["refs"] = refs
    values["conditions"] = _condition_values(node, version, norm)
    return values


def _condition_values(node: str, version: int, norm: Norm) -> list[dict[str, str]]:
    """The condition rows of the edit form with a kind chosen (a row set to no kind is
    removed), as ``{kind, mode, quote, group, node}``."""
    state = st.session_state
    out = []
    for row in range(len(norm.conditions) + NEW_CONDITIONS):
        kind = state.get(_wkey(node, version, f"cond:{row}:kind"))
        if not kind:
            continue
        out.append(
            {
                "kind": kind,
                "mode": state.get(_wkey(node, version, f"cond:{row}:mode")) or "required",
                "group": (state.get(_wkey(node, version, f"cond:{row}:group")) or "").strip(),
                "quote": state.get(_wkey(node, version, f"cond:{row}:quote")) or "",
                "node": (state.get(_wkey(node, version, f"cond:{row}:node")) or "").strip() or node,
            }
        )
    return out


def _since(node: str, version: int) -> list[dict[str, Any]]:
    return [_history_row(r) for r in _history(node) if r["version"] > version]


def _stale(node: str, version: int, exc: StaleEditError) -> None:
    since = _since(node, version)
    who = "; ".join(
        f"{r['by']} ({r['action']} → version {r['version']}"
        + (f", fields: {r['changed']}" if r["changed"] else ", no field changed")
        + ")"
        for r in since
    )
    st.session_state[FLASH] = {
        "kind": "stale",
        "node": node,
        "text": (
            f"Not saved: {node} changed since you opened it at version {version}"
            + (f" — by {who}" if who else "")
            + f". Nothing was overwritten.\n\n{exc}"
        ),
        "since": since,
    }


def _on_save(node: str) -> None:
    loaded = _loaded(node)
    name = common.editor()
    if loaded is None or not name:
        return
    norm, version = loaded
    try:
        clean = validate_changes(
            _form_values(node, version, norm), node=node, tree=common.kb().tree
        )
    except StoreError as exc:
        st.session_state[FLASH] = {"kind": "error", "node": node, "text": f"Not saved: {exc}"}
        return
    changes = {k: v for k, v in clean.items() if getattr(norm, k) != v}
    if not changes:
        st.session_state[FLASH] = {
            "kind": "warning",
            "node": node,
            "text": "Nothing to save: no field differs from the version you opened.",
        }
        return
    comment = (st.session_state.get(_wkey(node, version, "comment")) or "").strip()
    record = _write(
        node,
        version,
        lambda store: store.edit(
            node, changes, name, version, _baseline(), comment, tree=common.kb().tree
        ),
    )
    if record is not None:
        st.session_state[FLASH] = {
            "kind": "success",
            "node": node,
            "text": (
                f"{node}: saved as version {record.version} (validated by {record.updated_by}); "
                f"changed: {', '.join(sorted(changes))}"
            ),
        }


def _write(node: str, version: int, action: Callable[[NormStore], Record]) -> Record | None:
    """Run ``action(store)``; a refusal (stale, invalid) becomes the page's message, not an
    exception. The record written, or None."""
    try:
        with common.store(readonly=False) as store:
            record = action(store)
    except StaleEditError as exc:
        _stale(node, version, exc)
        return None
    except StoreError as exc:
        st.session_state[FLASH] = {"kind": "error", "node": node, "text": f"Not saved: {exc}"}
        return None
    _load(record)
    return record


def _on_review(node: str, status: str) -> None:
    loaded = _loaded(node)
    name = common.editor()
    if loaded is None or not name:
        return
    _, version = loaded
    comment = (st.session_state.get(_wkey(node, version, "review")) or "").strip()
    record = _write(
        node,
        version,
        lambda store: store.set_status(node, status, name, version, _baseline(), comment),
    )
    if record is not None:
        st.session_state[FLASH] = {
            "kind": "success",
            "node": node,
            "text": f"{node}: {status} at version {record.version} by {record.updated_by}",
        }


def _on_reload(node: str, baseline: dict[str, Norm]) -> None:
    _load(_current(node, baseline))


# --------------------------------------------------------------------------- drawing


def _filters(sections: list[str]) -> None:
    tree = common.kb().tree
    left, mid, right, text = st.columns([3, 2, 2, 2])

    def section_name(section: str | None) -> str:
        if section is None:
            return "All sections"
        title = tree[section].title
        return f"§ {section}" + (f" — {_snippet(title, 60)}" if title else "")

    left.selectbox(
        "Section",
        [None, *sections],
        format_func=section_name,
        key=SECTION,
        help="Type to search: 164.512 finds § 164.512.",
    )
    mid.multiselect("Status", list(STATUSES), key=STATUS, placeholder="any status")
    right.multiselect("Norm type", list(NORM_TYPES), key=TYPE, placeholder="any type")
    text.text_input("Id or text contains", key=TEXT, max_chars=200)


def _matching(
    baseline: dict[str, Norm], records: dict[str, Record], section_of: dict[str, str]
) -> list[tuple[str, Record]]:
    tree = common.kb().tree
    section = st.session_state.get(SECTION)
    statuses = set(st.session_state.get(STATUS) or ())
    types = set(st.session_state.get(TYPE) or ())
    words = (st.session_state.get(TEXT) or "").strip().lower()
    out = []
    for node in baseline:
        if section and section_of.get(node) != section:
            continue
        record = records.get(node) or Record.machine(baseline[node])
        if statuses and record.status not in statuses:
            continue
        if types and record.norm.norm_type not in types:
            continue
        if words and words not in node.lower() and words not in tree[node].text.lower():
            continue
        out.append((node, record))
    order = {n.id: i for i, n in enumerate(tree)}
    out.sort(key=lambda item: order.get(item[0], len(order)))
    return out


def _link(node: str) -> str:
    """The Regulation page's address for a paragraph, readable (so the table can show the id)."""
    return f"/regulation?node={quote(node, safe=' ().')}"


def _table(matching: list[tuple[str, Record]]) -> None:
    tree = common.kb().tree
    st.session_state[ROWS] = [node for node, _ in matching]
    rows = [
        {
            "id": _link(node),
            "type": record.norm.norm_type,
            "status": record.status,
            "version": record.version,
            "by": record.updated_by if record.version else "",
            "text": _snippet(tree[node].text),
        }
        for node, record in matching
    ]
    columns = ["id", "type", "status", "version", "by", "text"]
    filters = (
        st.session_state.get(SECTION),
        tuple(st.session_state.get(STATUS) or ()),
        tuple(st.session_state.get(TYPE) or ()),
        st.session_state.get(TEXT),
    )
    table_key = f"{KEY}table-{abs(hash(filters))}"  # new filters, no stale row selection
    st.dataframe(
        pd.DataFrame(rows, columns=columns),
        key=table_key,
        on_select=functools.partial(_on_row, table_key),
        selection_mode="single-row",
        hide_index=True,
        column_config={
            "id": st.column_config.LinkColumn(
                "id", display_text=r"node=(.+)$", help="Read the paragraph on the Regulation page"
            ),
            "version": st.column_config.NumberColumn("version", format="%d"),
            "text": st.column_config.TextColumn("text", width="large"),
        },
    )
    st.selectbox(
        "Open a norm",
        [node for node, _ in matching],
        index=None,
        key=PICK,
        on_change=_on_pick,
        placeholder="Choose an id (or select a row above)",
    )


def _field_value(name: str, value: Any) -> str:
    if name == "refs":
        return ", ".join(f"{target} ({relation})" for target, relation in value) or "—"
    if name == "conditions":
        return f"{len(value)} (listed below)" if value else "—"
    if isinstance(value, list | tuple):
        return "; ".join(value) or "—"
    return str(value) if value not in ("", None) else "—"


def _fields(record: Record) -> None:
    data = record.norm.to_json()
    rows = [
        {"field": FIELD_LABELS.get(k, k), "value": _field_value(k, v)}
        for k, v in data.items()
        if k != "node"
    ]
    rows += [
        {"field": "Status", "value": record.status},
        {"field": "Store version", "value": str(record.version)},
        {"field": "Updated", "value": record.updated_at or "—"},
        {"field": "Updated by", "value": record.updated_by or "—"},
        {"field": "Comment", "value": record.comment or "—"},
    ]
    st.dataframe(rows, hide_index=True)


def _conditions(norm: Norm) -> None:
    """The norm's conditions: mode and group, the kind and its question, the words that state
    them and where."""
    if not norm.conditions:
        st.caption("No conditions.")
        return
    kinds = condition_kinds()
    rows = []
    for c in norm.conditions:
        found = kinds.get(c.kind)
        rows.append(
            {
                "mode": MODE_NAMES.get(c.mode, c.mode) + (f" {c.group}" if c.group else ""),
                "kind": c.kind,
                "condition": found.label if found is not None else c.kind,
                "words": c.quote,
                "in": c.node if c.node != norm.node else "this paragraph",
                "asks": found.question if found is not None else "",
            }
        )
    st.dataframe(
        pd.DataFrame(rows, columns=["mode", "kind", "condition", "words", "in", "asks"]),
        hide_index=True,
        column_config={"words": st.column_config.TextColumn("words", width="large")},
    )


def _condition_rows(node: str, norm: Norm, key: Callable[[str], str]) -> None:
    """One row of pickers a condition (its kind, mode, group, the words and where), then
    :data:`NEW_CONDITIONS` blank rows to add some; a row set to no kind is removed."""
    kinds = condition_kinds()
    options = ["", *kinds]

    def kind_name(kind: str) -> str:
        if not kind:
            return "(no condition)"
        found = kinds.get(kind)
        return f"{found.label} ({kind})" if found is not None else kind

    st.markdown(
        "**Conditions**: the words must be the paragraph's own (or, with another paragraph of "
        "the section named, that one's); they are checked before saving."
    )
    rows = [*norm.conditions, *([None] * NEW_CONDITIONS)]
    for row, condition in enumerate(rows):
        name = f"Condition {row + 1}" if condition is not None else f"New condition {row + 1}"
        kind_col, mode_col, group_col = st.columns([3, 2, 1])
        kind = condition.kind if condition is not None else ""
        kind_options = options if kind in options else [*options, kind]
        kind_col.selectbox(
            f"{name}: kind",
            kind_options,
            index=kind_options.index(kind),
            format_func=kind_name,
            key=key(f"cond:{row}:kind"),
            help="Choose (no condition) to remove it",
        )
        mode = condition.mode if condition is not None else "required"
        mode_col.selectbox(
            f"{name}: mode",
            list(MODES),
            index=list(MODES).index(mode),
            format_func=lambda m: MODE_NAMES.get(m, m),
            key=key(f"cond:{row}:mode"),
        )
        group_col.text_input(
            f"{name}: group",
            value=condition.group if condition is not None else "",
            key=key(f"cond:{row}:group"),
            help="One of: the conditions sharing a group, at least one of which must hold",
        )
        words_col, where_col = st.columns([4, 2])
        words_col.text_input(
            f"{name}: words",
            value=condition.quote if condition is not None else "",
            key=key(f"cond:{row}:quote"),
            help="The exact words of the text that state the condition",
        )
        where_col.text_input(
            f"{name}: in paragraph",
            value=condition.node if condition is not None and condition.node != node else "",
            key=key(f"cond:{row}:node"),
            placeholder=node,
            help="Another paragraph of the section whose text states it (empty: this one)",
        )


def _ref_targets(node: str, norm: Norm) -> list[str]:
    """The norm's references, then the paragraph's other citations of the regulation."""
    targets = [target for target, _ in norm.refs]
    for ref in common.kb().refs_out.get(node, []):
        if ref.target and not ref.external and ref.target not in targets:
            targets.append(ref.target)
    return targets


def _with(options: list[str], *current: str) -> list[str]:
    return [*options, *(c for c in current if c not in options)]


def _pick(
    column: Any,
    norm: Norm,
    field: str,
    choices: list[str],
    key: Any,
    new: bool = False,
    help: str | None = None,
) -> None:
    """A select box for one of the norm's text fields, on its current value ("" shown as
    "(none)"); with ``new``, the editor may type a value that is not offered."""
    value = getattr(norm, field)
    options = _with(choices, value)
    column.selectbox(
        FIELD_LABELS[field],
        options,
        index=options.index(value),
        format_func=lambda v: v or "(none)",
        accept_new_options=new,
        key=key(field),
        help=help,
    )


def _edit_form(node: str, norm: Norm, version: int) -> None:
    choices = _choices()

    def key(name: str) -> str:
        return _wkey(node, version, name)

    with st.form(key(KEY + "edit"), border=True):
        st.markdown(f"**Edit** (against version {version})")
        st.selectbox(
            FIELD_LABELS["norm_type"],
            list(NORM_TYPES),
            index=list(NORM_TYPES).index(norm.norm_type),
            key=key("norm_type"),
        )
        for party in PARTIES:
            phrases, roles = st.columns(2)
            phrases.text_input(
                FIELD_LABELS[party],
                value="; ".join(getattr(norm, party)),
                key=key(party),
                help="Phrases as the paragraph says them, separated by ;",
            )
            current = list(getattr(norm, f"{party}_roles"))
            roles.multiselect(
                FIELD_LABELS[f"{party}_roles"],
                _with(choices["roles"], *current),
                default=current,
                key=key(f"{party}_roles"),
                help="Regulatory roles of the role graph",
            )
        info, hipaa = st.columns(2)
        _pick(
            info,
            norm,
            "information_type",
            ["", *choices["hipaa"]],
            key,
            new=True,
            help="The information the paragraph names (type another phrase if needed)",
        )
        _pick(
            hipaa,
            norm,
            "information_class",
            ["", *choices["hipaa"]],
            key,
            help="The HIPAA information type of the attribute graph",
        )
        purpose, consent = st.columns(2)
        _pick(purpose, norm, "purpose", ["", *choices["purposes"]], key, new=True)
        _pick(consent, norm, "consent_form", choices["consent"], key, new=True)
        sender_subject, recipient_subject = st.columns(2)
        for column, name in (
            (sender_subject, "sender_is_subject"),
            (recipient_subject, "recipient_is_subject"),
        ):
            value = getattr(norm, name)
            options = _with(list(YES_NO), value)
            column.selectbox(FIELD_LABELS[name], options, index=options.index(value), key=key(name))
        targets = _ref_targets(node, norm)
        if targets:
            st.markdown("**Cross-references**: does each support the norm or except from it?")
            relations = dict(norm.refs)
            options = [*RELATIONS, NO_REF]
            for target in targets:
                st.selectbox(
                    target,
                    options,
                    index=options.index(relations.get(target, NO_REF)),
                    key=key(f"ref:{target}"),
                    help=f"§ {target}",
                )
        else:
            st.caption("No cross-references.")
        _condition_rows(node, norm, key)
        st.text_area("Comment", key=key("comment"), max_chars=2000, height=68)
        st.form_submit_button("Save edit", type="primary", on_click=_on_save, args=(node,))


def _review_form(node: str, version: int) -> None:
    with st.form(_wkey(node, version, KEY + "review-form"), border=True):
        st.markdown(f"**Review** the norm as it stands (version {version})")
        st.text_input("Comment", key=_wkey(node, version, "review"), max_chars=2000)
        validate, reject = st.columns(2)
        validate.form_submit_button(
            "Validate", on_click=_on_review, args=(node, "validated"), width="stretch"
        )
        reject.form_submit_button(
            "Reject", on_click=_on_review, args=(node, "rejected"), width="stretch"
        )


def _history_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": row["version"],
        "action": row["action"],
        "status": row["status"],
        "by": row["by"],
        "at": row["at"][:19].replace("T", " "),
        "changed": row["changed"].replace(",", ", "),
        "comment": row["comment"],
    }


def _flash(node: str) -> None:
    flash = st.session_state.pop(FLASH, None)
    if not flash or flash.get("node") != node:
        return
    kind, text = flash["kind"], common.md_escape(flash["text"])
    if kind == "success":
        st.success(text)
    elif kind == "warning":
        st.warning(text)
    else:
        st.error(text)
    if kind == "stale" and flash.get("since"):
        st.markdown("**Changed since you opened it**")
        st.dataframe(flash["since"], hide_index=True)


def _detail(node: str, baseline: dict[str, Norm]) -> None:
    kb = common.kb()
    paragraph = kb.tree[node]
    st.divider()
    st.subheader(common.md_escape(f"{node}" + (f" {paragraph.title}" if paragraph.title else "")))
    st.caption(
        " › ".join(common.md_escape(n.heading_line()) for n in kb.tree.path(node)[1:-1])
        + f" · {common.node_link(node)} on the Regulation page"
    )
    record: Record | None = None
    try:
        record = _current(node, baseline)
        history = _history(node)
    except StoreError as exc:
        problem = f"The editors' store cannot be read: {exc}"
    shown = baseline[node] if record is None or record.status == "rejected" else record.norm
    with st.container(border=True):
        own = [c for c in shown.conditions if c.node == node]
        st.markdown(linked_text(paragraph.text, [], [], own) or "(no text of its own)")
    if record is None:
        st.error(problem)
        return
    _flash(node)
    name = common.editor()
    left, right = st.columns([2, 3]) if name else (st.container(), None)
    with left:
        st.markdown(f"**Annotation** — {record.status}, store version {record.version}")
        if record.status == "rejected":
            st.caption(
                "Rejected: everything else reads the knowledge base's machine annotation instead."
            )
        _fields(record)
        st.markdown("**Conditions**")
        _conditions(record.norm)
        st.markdown("**History**")
        if history:
            st.dataframe([_history_row(r) for r in history], hide_index=True)
        else:
            st.caption("No changes yet: the knowledge base's machine annotation (version 0).")
    if right is None:
        st.info("Sign in (in the sidebar) to edit, validate or reject this norm.")
        return
    with right:
        loaded = _loaded(node)
        if loaded is None:
            _load(record)
            loaded = _loaded(node)
        assert loaded is not None
        norm, version = loaded
        if record.version != version:
            st.warning(
                f"Changed since you opened it at version {version}: now version "
                f"{record.version} by {common.md_escape(record.updated_by)}. Saving or reviewing "
                f"against version {version} will be refused; load the current version to redo "
                "your edit."
            )
            st.button(
                "Load the current version (drops your unsaved entries)",
                key=f"{KEY}reload",
                on_click=_on_reload,
                args=(node, baseline),
            )
        _edit_form(node, norm, version)
        _review_form(node, version)


def render() -> None:
    st.title("Norms")
    st.caption(
        "The editors' queue: the Contextual Integrity reading of every annotated paragraph. "
        "Validated annotations win over machine ones wherever norms are read; a rejected one "
        "drops back to the knowledge base's machine reading."
    )
    try:
        baseline = _baseline()
    except KnowledgeBaseError as exc:
        st.error(str(exc))
        return
    try:
        records = _read_store()
    except StoreError as exc:
        st.error(f"The editors' store cannot be read: {exc}")
        return
    statuses = {s: 0 for s in STATUSES}
    for node in baseline:
        statuses[records[node].status if node in records else "machine"] += 1
    st.caption(
        f"{len(baseline):,} norms: "
        + ", ".join(f"{n:,} {s}" for s, n in statuses.items())
        + f" · store: {common.store_path()}"
    )
    sections, section_of = _sections()
    _filters(sections)
    matching = _matching(baseline, records, section_of)
    st.caption(f"{len(matching):,} matching")
    _table(matching)

    asked = st.query_params.get("node")
    if asked and asked != st.session_state.get(OPENED):
        if asked in baseline:
            st.session_state[OPENED] = asked
        else:
            st.warning(
                f"No norm for {common.md_escape(asked[:200])!r}: it is not an annotated paragraph."
            )
    opened = st.session_state.get(OPENED)
    if opened and opened in baseline:
        _detail(opened, baseline)
    elif not common.editor():
        st.info("Editors sign in (in the sidebar) to edit norms; everyone else reads.")
