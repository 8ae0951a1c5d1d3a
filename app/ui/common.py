"""What every page shares: the knowledge base, index, reasoner and store, loaded once per
server (``st.cache_resource``), and the settings ``pcheck app`` passes through the environment.

Environment (set by ``pcheck app``; the defaults are the command line's):
``PCHECK_KB`` (knowledge base folder), ``PCHECK_STORE`` (the editors' SQLite store),
``PCHECK_INDEX`` (retrieval index folder), ``PCHECK_EDITOR`` (editor name: editing is off
without one), ``PCHECK_RUNS`` (where evaluation run folders are looked for), and the LLM's
``PCHECK_LLM_BASE_URL`` / ``PCHECK_LLM_MODEL`` / ``PCHECK_LLM_API_KEY``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import streamlit as st

MAX_CASE_CHARS = 50_000  # the longest narrative the check page accepts


@st.cache_resource(show_spinner="Loading the knowledge base ...")
def kb() -> Any:
    from privacy_checklist.kg import kb as kbmod

    return kbmod.load(os.environ.get("PCHECK_KB") or None)


@st.cache_resource(show_spinner="Opening the retrieval index ...")
def index() -> Any:
    from privacy_checklist.retrieval.index import RetrievalIndex

    where = os.environ.get("PCHECK_INDEX")
    return RetrievalIndex(kb(), Path(where) if where else None, embeddings=False)


@st.cache_resource(show_spinner="Loading the offline reasoner ...")
def offline_reasoner(fast: bool = False) -> Any:
    from privacy_checklist.reasoning.offline import OfflineReasoner

    return OfflineReasoner(kb(), index(), fast=fast)


def store() -> Any:
    """The editors' store (a new connection per call: SQLite connections are per thread)."""
    from privacy_checklist.kg.store import NormStore

    where = os.environ.get("PCHECK_STORE")
    return NormStore(where) if where else NormStore()


def editor() -> str | None:
    """The editor's name, or None: editing is off unless a name is given (sidebar or
    ``pcheck app --editor NAME``)."""
    name = st.session_state.get("editor")
    if name is None:
        name = os.environ.get("PCHECK_EDITOR") or ""
    name = name.strip()
    return name or None


def llm_configured() -> bool:
    return bool(os.environ.get("PCHECK_LLM_BASE_URL") and os.environ.get("PCHECK_LLM_MODEL"))


def node_link(node: str) -> str:
    """A Markdown link to a paragraph on the Regulation page."""
    return f"[{node}]({node_url(node)})"


def runs_root() -> Path:
    return Path(os.environ.get("PCHECK_RUNS") or "runs")


def node_url(node: str) -> str:
    """The Regulation page's address for a paragraph (what :func:`node_link` links to)."""
    from urllib.parse import quote

    return f"/regulation?node={quote(node)}"


def md_escape(text: str) -> str:
    """Text shown literally by ``st.markdown``: no emphasis, links, HTML, lists or LaTeX ($)."""
    import re

    text = re.sub(r"([\\`*_\[\]<>$|~#])", r"\\\1", text)
    text = re.sub(r"(?m)^(\s*)([-+])(?=\s)", r"\1\\\2", text)
    return re.sub(r"(?m)^(\s*\d+)\.(?=\s)", r"\1\\.", text)
