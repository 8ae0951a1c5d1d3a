"""The regulation page."""

from __future__ import annotations

import streamlit as st


def render() -> None:
    st.title("regulation")
    st.info("This page is being written.")
