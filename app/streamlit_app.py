"""The Streamlit entry point: ``streamlit run app/streamlit_app.py`` (``pcheck app`` does this).

It lives outside ``app/ui/`` because Streamlit would read a ``pages/`` folder beside its script as
pages of their own."""

from __future__ import annotations

import streamlit as st

from privacy_checklist.app.ui import signin
from privacy_checklist.app.ui.pages import (
    check,
    evaluation,
    graphs,
    guard,
    home,
    norms,
    regulation,
)


def main() -> None:
    st.set_page_config(page_title="Privacy Checklist", page_icon="⚖️", layout="wide")
    pages = {
        "regulation": st.Page(regulation.render, title="Regulation", url_path="regulation"),
        "graphs": st.Page(graphs.render, title="Graphs", url_path="graphs"),
        "check": st.Page(check.render, title="Check a case", url_path="check"),
        "guard": st.Page(guard.render, title="Guard a message", url_path="guard"),
        "norms": st.Page(norms.render, title="Norms", url_path="norms"),
        "evaluation": st.Page(evaluation.render, title="Evaluation", url_path="evaluation"),
    }
    st.session_state["_pcheck_pages"] = pages  # for the front page's links
    # the front page is at "/": every other page keeps its own address (/regulation?node=...)
    front = st.Page(home.render, title="Overview", url_path="overview", default=True)
    navigation = st.navigation([front, *pages.values()])
    with st.sidebar:
        st.caption("HIPAA (45 CFR 160, 162, 164) through Contextual Integrity")
        signin.sidebar()
    navigation.run()


main()
