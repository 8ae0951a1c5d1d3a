"""The evaluation page."""

from __future__ import annotations

import streamlit as st


def render() -> None:
    st.title("evaluation")
    st.info("This page is being written.")
