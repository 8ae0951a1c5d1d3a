"""What every page shares: the knowledge base, index, reasoner and store, loaded once per
server (``st.cache_resource``), and the settings ``pcheck app`` passes through the environment.

Environment (set by ``pcheck app``; the defaults are the command line's):
``PCHECK_KB`` (knowledge base folder), ``PCHECK_STORE`` (the editors' SQLite store),
``PCHECK_INDEX`` (retrieval index folder), ``PCHECK_USERS`` (the editors who may sign in:
editing is off without one), ``PCHECK_RUNS`` (where evaluation run folders are looked for), and
the LLM's ``PCHECK_LLM_BASE_URL`` / ``PCHECK_LLM_MODEL`` / ``PCHECK_LLM_API_KEY``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.kg.store import NormStore
    from privacy_checklist.reasoning.guard.message import Guard
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner
    from privacy_checklist.retrieval.index import RetrievalIndex

MAX_CASE_CHARS = 50_000  # the longest narrative the check page accepts


def _where() -> tuple[str, str, str]:
    """The knowledge base, store and index folders of the environment: what the shared
    resources are cached by, so a different store never reads another's norms."""
    return (
        os.environ.get("PCHECK_KB") or "",
        str(store_path()),
        os.environ.get("PCHECK_INDEX") or "",
    )


def kb() -> KnowledgeBase:
    """The knowledge base, its norms the store's effective view (followed as editors change
    it: the index and reasoners read ``kb().norms``)."""
    return _kb(*_where()[:2])


@st.cache_resource(show_spinner="Loading the knowledge base ...")
def _kb(where: str, store: str) -> KnowledgeBase:
    from privacy_checklist.kg import kb as kbmod

    return kbmod.load(where or None, store=store)


def index() -> RetrievalIndex:
    """The retrieval index over :func:`kb` (it re-indexes what an editor changed)."""
    return _index(*_where())


@st.cache_resource(show_spinner="Opening the retrieval index ...")
def _index(where: str, store: str, folder: str) -> RetrievalIndex:
    from privacy_checklist.retrieval.index import RetrievalIndex

    return RetrievalIndex(_kb(where, store), Path(folder) if folder else None, embeddings=False)


def offline_reasoner(*, fast: bool = False) -> OfflineReasoner:
    return _offline_reasoner(*_where(), fast)


@st.cache_resource(show_spinner="Loading the offline reasoner ...")
def _offline_reasoner(where: str, store: str, folder: str, fast: bool) -> OfflineReasoner:
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner

    return OfflineReasoner(_kb(where, store), _index(where, store, folder), fast=fast)


def guard() -> Guard:
    """The message guard over :func:`kb` (the parser loads once)."""
    return _guard(*_where()[:2])


@st.cache_resource(show_spinner="Loading the guard (the parser and the checklist) ...")
def _guard(where: str, store: str) -> Guard:
    from privacy_checklist.reasoning.guard.message import Guard

    return Guard(_kb(where, store))


def store_path() -> Path:
    """The editors' store: ``$PCHECK_STORE``, else the user's data folder."""
    from privacy_checklist.kg.store import default_store_path

    return default_store_path()


def store(*, readonly: bool = True) -> NormStore:
    """The editors' store (a new connection per call: SQLite connections are per thread).
    Read-only unless asked (``readonly=False``, to save an edit or a review): looking never
    creates the store, and a store on a read-only file system can still be read."""
    from privacy_checklist.kg.store import NormStore

    return NormStore(store_path(), readonly=readonly)


def editor() -> str | None:
    """The signed-in editor's user name, or None: editing needs an editor who signed in
    (:mod:`~privacy_checklist.app.ui.signin`)."""
    from privacy_checklist.app.ui.signin import editor as signed_in

    return signed_in()


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
