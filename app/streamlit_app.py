"""The Streamlit entry point: ``streamlit run app/ui/main.py`` (``pcheck app`` does this)."""

from __future__ import annotations

import os

import streamlit as st

from privacy_checklist.app.ui import common
from privacy_checklist.app.ui.pages import check, evaluation, graphs, norms, regulation


def main() -> None:
    st.set_page_config(page_title="Privacy Checklist", page_icon="⚖️", layout="wide")
    pages = [
        st.Page(regulation.render, title="Regulation", url_path="regulation", default=True),
        st.Page(graphs.render, title="Graphs", url_path="graphs"),
        st.Page(check.render, title="Check a case", url_path="check"),
        st.Page(norms.render, title="Norms", url_path="norms"),
        st.Page(evaluation.render, title="Evaluation", url_path="evaluation"),
    ]
    navigation = st.navigation(pages)
    with st.sidebar:
        st.caption("HIPAA (45 CFR 160, 162, 164) through Contextual Integrity")
        st.text_input(
            "Editor name",
            value=os.environ.get("PCHECK_EDITOR", ""),
            key="editor",
            help="Editing norms is off until you give your name; it is kept in the history.",
        )
        if common.editor():
            st.caption(f"Editing as **{common.editor()}**")
        else:
            st.caption("Read-only: give an editor name to edit norms.")
    navigation.run()


main()
