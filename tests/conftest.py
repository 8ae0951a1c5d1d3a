"""Shared fixtures: the real eCFR pages of ../shared/data and the knowledge bases built from them.

Tests that need ../shared/data skip with a clear reason when it is missing on a developer's
machine, and fail in CI (CI=true), where it must be there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from privacy_checklist.ingest.ecfr import PartPage, load_page
from privacy_checklist.kg import kb as kbmod

REPO = Path(__file__).resolve().parents[1]
#: the project's own labelled sets
DATA = REPO / "tests" / "data"
PARTS = ("160", "162", "164")


def shared_data_dir() -> Path | None:
    env = os.environ.get("PRIVACY_CHECKLIST_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    for candidate in candidates:
        if (candidate / "hipaa").is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def shared() -> Path:
    found = shared_data_dir()
    if found is None:
        message = "../shared/data is missing (set PRIVACY_CHECKLIST_SHARED to its path)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def page_paths(shared: Path) -> list[Path]:
    return [shared / "hipaa" / f"ecfr-title45-part{part}.html" for part in PARTS]


@pytest.fixture(scope="session")
def pages(page_paths: list[Path]) -> list[PartPage]:
    return [load_page(str(p)) for p in page_paths]


@pytest.fixture(scope="session")
def built(pages: list[PartPage]) -> kbmod.KnowledgeBase:
    """A knowledge base built now from ../shared/data/hipaa."""
    return kbmod.build(pages)


@pytest.fixture(scope="session")
def shipped() -> kbmod.KnowledgeBase:
    """The knowledge base that ships inside the package."""
    return kbmod.load()


#: a query whose norms every retrieval method should find (164.512(f))
POLICE_QUERY = (
    "A police detective investigating a hit-and-run asked the emergency room for the blood "
    "alcohol test results of the injured driver, who was a suspect; the hospital disclosed them."
)


@pytest.fixture(scope="session")
def police_query() -> str:
    return POLICE_QUERY


@pytest.fixture(scope="module")
def bm25_index(shipped: kbmod.KnowledgeBase, tmp_path_factory):
    """A retrieval index of the shipped knowledge base without embeddings, in a temporary
    folder."""
    from privacy_checklist.retrieval.index import RetrievalIndex

    return RetrievalIndex(shipped, tmp_path_factory.mktemp("index"), embeddings=False)


@pytest.fixture(autouse=True)
def _keep_main_module():
    """Streamlit's AppTest runs its script as ``__main__`` and leaves it there; a later
    ``multiprocessing`` spawn would then re-run that temporary script in its children. Put the
    real ``__main__`` back after every test."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def _private_norm_store(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """Every test (and the commands it starts) reads and writes a store of its own, never the
    user's ~/.local/share/privacy-checklist/norms.sqlite; a test may point PCHECK_STORE
    elsewhere itself."""
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path_factory.mktemp("store") / "norms.sqlite"))


#: the editors of the test users file and their passwords
EDITORS = {"alice": "alice-password", "bob": "bob-password", "carol": "carol-password"}
EDITORS |= {"e2e-editor": "e2e-password"}


@pytest.fixture(scope="session")
def users_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A users file (pcheck users add) with :data:`EDITORS` who may sign in."""
    from privacy_checklist.app.users import add_user

    path = tmp_path_factory.mktemp("users") / "users.yaml"
    for name, password in EDITORS.items():
        add_user(path, name, password)
    return path


def sign_in(at: Any, name: str) -> None:
    """An AppTest's session as streamlit-authenticator leaves it once ``name`` signed in."""
    at.session_state["authentication_status"] = True
    at.session_state["username"] = name
    at.session_state["name"] = name


@pytest.fixture
def editors_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, users_file: Path) -> Path:
    """A browser page's environment: its own editors' store (not created until written), the
    test users file for sign-in, and the built-in knowledge base."""
    path = tmp_path / "norms.sqlite"
    monkeypatch.setenv("PCHECK_STORE", str(path))
    monkeypatch.setenv("PCHECK_USERS", str(users_file))
    monkeypatch.delenv("PCHECK_KB", raising=False)
    return path


def loaded_after(code: str, modules: tuple[str, ...]) -> list[bool]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([n in sys.modules for n in {modules!r}]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))
