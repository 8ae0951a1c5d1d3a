"""What decides a verdict besides the case: digests of the method's settings, the knowledge base
(its files and the editors' store's effective norms), every data file the readers and models
read, and the prompts. An evaluation reuses a logged verdict only when they are the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.llm.prompting import (
    PROMPT_VERSION,
    client_name,
)
from privacy_checklist.reasoning.verdict import (
    Reasoner,
)

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase

from privacy_checklist.reasoning.methods import llm_location


def _digest(data: Any) -> str:
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


_KB_DIGESTS: dict[tuple[Any, ...], str] = {}


def _files_digest(folders: Sequence[Path]) -> str:
    """A digest of every file in ``folders`` (names and contents), kept per file sizes and
    times, so each is read once."""
    files = sorted(
        (p for folder in folders if folder.is_dir() for p in folder.iterdir() if p.is_file()),
        key=lambda p: (str(p.parent), p.name),
    )
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    if stamp not in _KB_DIGESTS:
        hashed = hashlib.sha256()
        for path in files:
            hashed.update(f"{path.parent.name}/{path.name}".encode() + b"\0")
            hashed.update(hashlib.sha256(path.read_bytes()).digest())
        _KB_DIGESTS[stamp] = hashed.hexdigest()[:16]
    return _KB_DIGESTS[stamp]


def kb_digest(kb: KnowledgeBase) -> str:
    """A digest of the knowledge base as a method reads it: its files (tree, references,
    definitions, graphs, norms) and, with an editors' store, the effective norms (an edit in
    the store changes it as a rebuild does)."""
    files = _files_digest([Path(kb.path)]) if kb.path is not None else "in-memory"
    if kb.store is None:
        return files
    norms = kb.norms
    return f"{files}+{_digest(sorted((n, norms[n].to_json()) for n in norms))}"


def data_digest() -> str:
    """A digest of every data file the package's readers and models read: the reasoning
    layer's data (cues, models, purposes, answer words ...) and the ontologies' (condition
    kinds, norm conditions, stop words, PHI types ...). Every method's settings carry it, so a
    change to any of them decides the verdicts again."""
    return _files_digest(data_folders())


def data_folders() -> list[Path]:
    """The folders of the package's data files (:func:`data_digest`)."""
    return [
        Path(str(resources.files("privacy_checklist.reasoning") / "data")),
        Path(str(resources.files("privacy_checklist.ontologies"))),
    ]


def prompts_digest() -> str:
    """A digest of the prompt files of the current version (an edit without a new version
    still changes it)."""
    folder = resources.files("privacy_checklist.reasoning") / "prompts"
    suffix = f".{PROMPT_VERSION}.txt"
    texts = {
        item.name: item.read_text(encoding="utf-8")
        for item in folder.iterdir()
        if item.name.endswith(suffix)
    }
    return _digest(texts)


def llm_settings(client: Any, kb: KnowledgeBase) -> dict[str, Any]:
    """The model, endpoint, generation parameters, prompts and knowledge base of an LLM step."""
    config = getattr(client, "config", None)
    return {
        "llm": client_name(client),
        "endpoint": llm_location(client),
        "temperature": getattr(config, "temperature", None),
        "max_tokens": getattr(config, "max_tokens", None),
        "json_mode": getattr(config, "json_mode", None),
        "schema": getattr(config, "schema", None),
        "prompt_version": PROMPT_VERSION,
        "prompts": prompts_digest(),
        "kb": kb_digest(kb),
    }


def decision_settings(reasoner: Reasoner) -> dict[str, Any]:
    """Everything besides the case that decides a verdict of ``reasoner``: its name, every data
    file, and what the reasoner says decides it (:meth:`Reasoner.settings`: its parameters, the
    model, the endpoint, the prompts, the knowledge base, as digests). An evaluation reuses a
    logged verdict only when these are the same."""
    return {"method": reasoner.name, "data": data_digest()} | reasoner.settings()


def offline_settings(model: Any, features: Any) -> dict[str, Any]:
    """An offline reasoner's shipped model and cues, and its knowledge base, as digests."""
    return {
        "model": _digest(model),
        "cues": _digest(
            {
                "cues": {name: p.pattern for name, p in features.cues.items()},
                "roles": features.roles,
                "types": features.hipaa_types,  # the digest's key as logged before
            }
        ),
        "kb": kb_digest(features.kb),
    }
