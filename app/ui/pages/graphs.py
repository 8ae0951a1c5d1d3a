"""The graphs page."""

from __future__ import annotations

import streamlit as st


def render() -> None:
    st.title("graphs")
    st.info("This page is being written.")
