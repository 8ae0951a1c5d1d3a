"""The front page: what the knowledge base holds, and where to go from here."""

from __future__ import annotations

import streamlit as st

from privacy_checklist.app.ui import common

PAGES = (
    ("regulation", "Regulation", "read the law: the tree, cross-references, definitions, norms"),
    ("graphs", "Graphs", "how everyday words reach the law's roles and information types"),
    (
        "check",
        "Check a case",
        "is a flow of health information permitted, prohibited or not covered by HIPAA, and why",
    ),
    ("norms", "Norms", "the editors' queue: review, correct, validate or reject annotations"),
    ("evaluation", "Evaluation", "the runs of pcheck eval: metrics, confusion, errors"),
)


def render() -> None:
    st.title("Privacy Checklist")
    st.caption(
        "HIPAA (45 CFR Parts 160, 162 and 164) as a legal knowledge graph, read through "
        "Contextual Integrity: a flow is judged by its sender, recipient and subject, the "
        "information, the purpose and the consent, against the norms of the law."
    )
    kb = common.kb()
    stats = kb.stats()
    columns = st.columns(4)
    columns[0].metric("Regulation units", f"{stats['nodes']:,}")
    columns[1].metric("Cross-references", f"{stats['references']['internal']:,}")
    columns[2].metric("Definitions", f"{stats['definitions']['total']:,}")
    if kb.has_norms:
        counts: dict[str, int] = {}
        for norm in kb.norms.values():
            counts[norm.norm_type] = counts.get(norm.norm_type, 0) + 1
        columns[3].metric(
            "Norms (permit / prohibit)", f"{counts.get('permit', 0)} / {counts.get('prohibit', 0)}"
        )
    for path, title, what in PAGES:
        st.page_link(_page(path), label=f"**{title}**: {what}")


def _page(path: str):
    """The st.Page registered for ``path`` (see streamlit_app.py)."""
    return st.session_state["_pcheck_pages"][path]
