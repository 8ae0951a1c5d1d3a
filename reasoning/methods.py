"""The registry of methods: their names, which need an LLM, the default, and
:func:`build_method`, which makes one by name (:data:`METHODS`).

Every method is a :class:`~privacy_checklist.reasoning.verdict.Reasoner` (a ``name`` and
``check(text) -> Verdict``): the checklist (:mod:`~privacy_checklist.reasoning.checklist`, the
default), checklist-llm, the offline reasoners (:mod:`~privacy_checklist.reasoning.learned`) and
the paper's six LLM methods (:mod:`privacy_checklist.reasoning.llm.methods`). What decides a
verdict, for an evaluation's reuse rule, is :mod:`privacy_checklist.reasoning.evaluation.digests`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from privacy_checklist.reasoning.llm.client import Client, LLMConfigError
from privacy_checklist.reasoning.llm.prompting import (
    client_name,
)
from privacy_checklist.reasoning.verdict import (
    Reasoner,
)
from privacy_checklist.retrieval.base import SearchIndex

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase

METHODS = (
    "checklist",
    "offline",
    "offline-fast",
    "checklist-llm",
    "dp",
    "cot-auto",
    "cot-manual",
    "agent-id",
    "bm25-content",
    "ci-es-content",
)
OFFLINE_METHODS = ("checklist", "offline", "offline-fast")
#: the checklist with a model asked for the facts it could not read (needs an LLM client, but
#: the checklist decides: reasoning/checklist/llm.py)
CHECKLIST_LLM = "checklist-llm"
#: the paper's methods: the model gives the verdict
LLM_METHODS = tuple(m for m in METHODS if m not in (*OFFLINE_METHODS, CHECKLIST_LLM))
RETRIEVAL_METHODS = ("bm25-content", "ci-es-content")
#: the method of ``pcheck check`` and ``pcheck eval`` and of the browser's Check page when none
#: is chosen (app/cli/options.py and the page read it here: the browser imports no CLI module)
DEFAULT_METHOD = "checklist"
DEFAULT_K = 5
NO_LLM = (
    "method {name!r} needs an LLM: pass --llm-base-url URL and --llm-model NAME (or set "
    "PCHECK_LLM_BASE_URL and PCHECK_LLM_MODEL), or --llm-backend local"
)

# --------------------------------------------------------------------------- regulation ids


# --------------------------------------------------------------------------- regulation text


# --------------------------------------------------------------------------- verdicts


# --------------------------------------------------------------------------- methods


def build_method(
    name: str,
    kb: KnowledgeBase,
    index: SearchIndex | None,
    client: Client | None,
    *,
    k: int = DEFAULT_K,
    per_rule: bool = True,
    restate: bool = True,
) -> Reasoner:
    """The method called ``name`` (:data:`METHODS`): "checklist" is the checklist reasoner,
    "checklist-llm" the same with a model asked for the facts it could not read (it needs
    ``client``), "offline" and "offline-fast" the offline reasoner.

    Raises:
        ValueError: unknown method or k < 1.
        LLMConfigError: an LLM method without a client.
        FileNotFoundError: (offline) no model file.
    """
    if name == "checklist":
        from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

        return ChecklistReasoner(kb)
    if name == CHECKLIST_LLM:
        from privacy_checklist.reasoning.checklist.llm import ChecklistLLMReasoner

        if client is None:
            raise LLMConfigError(NO_LLM.format(name=name))
        return ChecklistLLMReasoner(kb, client=client)
    if name in OFFLINE_METHODS:
        from privacy_checklist.reasoning.learned.offline import OfflineReasoner

        if index is None:
            raise ValueError(f"method {name!r} needs a retrieval index")
        return OfflineReasoner(kb, index, fast=name == "offline-fast")
    from privacy_checklist.reasoning.llm.methods import CLASSES

    if name not in CLASSES:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    if client is None:
        raise LLMConfigError(NO_LLM.format(name=name))
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if name in RETRIEVAL_METHODS and index is None:
        raise ValueError(f"method {name!r} needs a retrieval index")
    return CLASSES[name](kb, index, client, k=k, per_rule=per_rule, restate=restate)


# --------------------------------------------------------------------------- what decides a verdict


def llm_location(client: Any) -> str:
    """Where a client's requests go: the endpoint URL, or the local model file."""
    config = getattr(client, "config", None)
    url = getattr(config, "base_url", None)
    if url:
        return str(url)
    path = getattr(config, "model_path", None)
    if path:
        return f"the local model {path}"
    return client_name(client)
