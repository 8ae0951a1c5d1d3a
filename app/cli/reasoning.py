"""Deciding a case: ``pcheck check``, and what it shares with ``pcheck eval`` and the demo (the
methods and their options, the LLM client, building a method's pipeline, printing a verdict)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.checklist import print_checklist
from privacy_checklist.app.cli.common import (
    WIDTH,
    CliError,
    clip,
    load_kb,
    print_json,
    read_text_file,
    wrap,
)
from privacy_checklist.app.cli.options import (
    DEFAULT_METHOD,
    TOP_CANDIDATES,
    index_option,
    json_option,
    llm_backend_option,
    llm_endpoint_options,
    llm_request_options,
    reading_store_option,
)
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.reasoning.methods import CHECKLIST_LLM, DEFAULT_K, OFFLINE_METHODS
from privacy_checklist.reasoning.methods import METHODS as REASONING_METHODS

if TYPE_CHECKING:
    from privacy_checklist.reasoning.llm.client import Client
    from privacy_checklist.reasoning.verdict import Reasoner, Verdict
    from privacy_checklist.retrieval.index import RetrievalIndex

FLOW_PARTS = ("sender", "recipient", "subject", "information", "purpose", "consent")
CHECKLIST_METHODS = ("checklist", CHECKLIST_LLM)
METHODS_TEXT = (
    "Methods: checklist (ours, the default, no LLM: reads the flows and the facts of the case "
    "and checks each candidate permission's conditions, met / unmet / unknown; permitted when "
    "one candidate has all its conditions met, prohibited when a prohibition applies or none "
    "does, and it says which facts would change the verdict), offline (ours, no LLM: "
    "explainable features, the case's sentence embedding and "
    "a linear model), offline-fast (the same without the embedding: quicker, less accurate); "
    "with an LLM, checklist-llm (the checklist, with the model asked one short question for "
    "each fact it could not read: at most 8, each answer accepted only with words quoted from "
    "the case) and "
    "the paper's: dp (direct prompt), cot-auto (the model plans its own steps), cot-manual "
    "(our Contextual Integrity guidelines step by step), agent-id (the model names the "
    "applicable paragraph ids, checked against the regulation tree, whose text then goes into "
    "the cot-manual prompt), bm25-content (the model explains the case in the law's terms; "
    "BM25 retrieves k paragraphs with it), ci-es-content (the model reads the case's CI "
    "characteristics; CI-ES retrieves k paragraphs). The two retrieval methods also check "
    "each paragraph (does the flow comply with it, violate it, or is it unrelated?): one "
    "violated gives prohibited, else one complied with gives permitted, else the overall "
    "answer decides. An answer with no readable label is a parse failure (never a default); "
    "a request that failed (refused, timeout, HTTP error, a body that is not a completion) "
    "is its own outcome, 'LLM request failed: CAUSE at URL', and exits 1. LLM methods need "
    "--llm-base-url and --llm-model (or PCHECK_LLM_BASE_URL and "
    "PCHECK_LLM_MODEL; PCHECK_LLM_API_KEY or OPENAI_API_KEY for a key), or --llm-backend "
    "local. Answers are cached on disk (~/.cache/privacy-checklist/llm-cache.sqlite), so a "
    "rerun costs nothing."
)


def method_options(p: argparse.ArgumentParser, *, several: bool) -> None:
    """The options of ``check`` (one method) and ``eval`` (``several``, comma-separated)."""
    reading_store_option(p)
    p.add_argument(
        "--method",
        default=DEFAULT_METHOD,
        metavar="M[,M2...]" if several else "M",
        help=f"{'comma-separated methods' if several else 'the method'}: "
        f"{', '.join(REASONING_METHODS)} (default {DEFAULT_METHOD})",
    )
    llm_backend_option(p)
    llm_endpoint_options(p)
    llm_request_options(p, retries=True, concurrency_help="LLM requests at once (default 4)")
    p.add_argument(
        "-k",
        "--k",
        dest="k",
        type=int,
        default=DEFAULT_K,
        metavar="K",
        help=f"paragraphs retrieved by bm25-content and ci-es-content (default {DEFAULT_K})",
    )
    p.add_argument(
        "--no-schema",
        dest="schema",
        action="store_false",
        help="do not send the answer's JSON schema (response_format); by default it is sent, "
        "and an endpoint that refuses it is asked without it and remembered in the cache",
    )
    p.add_argument(
        "--no-restate",
        dest="restate",
        action="store_false",
        help="do not ask the model once more, in the same conversation, to state its verdict "
        "in one word when its answer holds no readable verdict",
    )
    index_option(p)


def selected_methods(value: str) -> list[str]:
    """The methods of ``--method`` (comma-separated), checked."""
    methods = [m.strip() for m in str(value).split(",") if m.strip()]
    unknown = [m for m in methods if m not in REASONING_METHODS]
    if unknown or not methods:
        raise CliError(
            f"unknown method {', '.join(map(repr, unknown)) or repr(value)}; choose from "
            + ", ".join(REASONING_METHODS)
        )
    return methods


def llm_client(args: argparse.Namespace) -> Client:
    """The LLM client of the ``--llm-*`` options (or the PCHECK_LLM_* environment)."""
    from privacy_checklist.reasoning.llm.client import LLMError, build_client

    try:
        return build_client(
            args.llm_backend,
            args.llm_base_url,
            args.llm_model,
            timeout=args.llm_timeout,
            concurrency=args.concurrency,
            max_retries=args.llm_retries,
            **({} if getattr(args, "schema", True) else {"schema": False}),
        )
    except LLMError as exc:
        raise CliError(str(exc)) from exc


def reasoning_index(kb: KnowledgeBase, directory: str | None) -> RetrievalIndex:
    """The retrieval index the methods search (BM25 and CI-ES: no embedding model)."""
    from privacy_checklist.retrieval.index import RetrievalIndex

    return RetrievalIndex(kb, Path(directory) if directory else None, embeddings=False)


def build_reasoner(
    method: str,
    kb: KnowledgeBase,
    index: RetrievalIndex | None,
    client: Client | None,
    k: int,
    *,
    restate: bool = True,
) -> Reasoner:
    """The method's pipeline (``client``: None for the offline methods)."""
    from privacy_checklist.reasoning.llm.client import LLMError
    from privacy_checklist.reasoning.methods import build_method

    try:
        return build_method(method, kb, index, client, k=k, restate=restate)
    except (FileNotFoundError, ValueError, LLMError) as exc:
        raise CliError(str(exc)) from exc


def cmd_check(args: argparse.Namespace) -> int:
    kb = load_kb(args)
    if args.file:
        text = read_text_file(args.file)
    elif args.narrative:  # "-" reads stdin, as for pcheck retrieve
        text = args.narrative if args.narrative != "-" else read_text_file("-")
    else:
        raise CliError("no case given: pass NARRATIVE or --file F")
    methods = selected_methods(args.method)
    if len(methods) != 1:
        raise CliError("check takes one --method (eval compares several)")
    (method,) = methods
    # the checklist methods search no index: none is opened for them
    index = None if method in CHECKLIST_METHODS else reasoning_index(kb, args.index)
    client = llm_client(args) if method not in OFFLINE_METHODS else None
    return check_case(
        build_reasoner(method, kb, index, client, args.k, restate=args.restate),
        text,
        as_json=args.json,
        every=args.all,
    )


def check_case(reasoner: Reasoner, text: str, *, as_json: bool = False, every: bool = False) -> int:
    """Decide ``text`` with ``reasoner`` and print the verdict (as JSON with ``as_json``; the
    checklist methods' every candidate with ``every``); a request that failed is an error, after
    the JSON."""
    from privacy_checklist.retrieval.base import QueryError

    try:
        verdict = reasoner.check(text)
    except QueryError as exc:
        raise CliError(str(exc)) from exc
    if as_json:
        print_json(verdict.to_json())
    if verdict.request_failed:  # no verdict: the request, not the method
        raise CliError(verdict.failure or "LLM request failed")
    if not as_json:
        if verdict.checklist is not None:
            print_checklist(verdict, every=every)
        else:
            print_verdict(verdict)
    return 0


def print_verdict(verdict: Verdict) -> None:
    """The verdict, the paragraphs it rests on, the flows, the reasoning and the raw answers."""
    shown = ", ".join(f"{k} {v:.2f}" for k, v in verdict.probabilities.items())
    print(f"Verdict: {verdict.label.replace('_', ' ')}" + (f"  ({shown})" if shown else ""))
    if verdict.failure:
        print(f"Parse failure: {verdict.failure}")
    print(
        "Rests on: " + (", ".join(n.id for n in verdict.norms) or "none (not covered by HIPAA)")
        if verdict.method in OFFLINE_METHODS or verdict.norms
        else "Rests on: no paragraph named"
    )
    for norm in verdict.norms:
        print(wrap(f"{norm.id}: {norm.text}", "  "))
    for number, flow in enumerate(verdict.flows, start=1):
        parts = [
            f"{key}: “{part.text}” ({part.resolved or '?'})"
            + (f" [{part.start}:{part.end}]" if part.start >= 0 else " [not in the text]")
            for key, part in flow.parts().items()
            if key in FLOW_PARTS
        ]
        print(f"Flow {number} ({flow.verb.text if flow.verb else '?'}): " + "; ".join(parts))
    print("Reasoning:")
    for step in verdict.reasoning:
        print(textwrap.fill(step, WIDTH, initial_indent="  - ", subsequent_indent="    "))
    if verdict.method not in OFFLINE_METHODS:
        print(f"Raw answer{'s' if len(verdict.calls) > 1 else ''}:")
        print(wrap(clip(verdict.raw), "  "))


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="decide a case: permitted, prohibited or not covered by HIPAA, and why",
        description="Read a case narrative and give the verdict, the paragraphs it rests on, "
        "the flows read from the case and the reasoning (for LLM methods also the model's raw "
        "answers; --json adds the prompts). The checklist methods print the checklist: each "
        "flow with its spans, whether HIPAA applies and why, the prohibitions met, the "
        "candidate permissions with each condition met (✓), unmet (✗) or unknown (?) beside "
        "the words of the case that decided it and the words of the law that state it, the "
        "verdict and what would change it. The checklist and the offline reasoner need no "
        "LLM. " + METHODS_TEXT,
    )
    p.add_argument("narrative", nargs="?", help="the case, quoted ('-' reads stdin; or --file)")
    p.add_argument("--file", metavar="F", help="read the case from F ('-' = stdin)")
    method_options(p, several=False)
    p.add_argument(
        "--all",
        action="store_true",
        help=f"the checklist methods: print every candidate permission of each flow (default: "
        f"the first {TOP_CANDIDATES} in the checklist's order)",
    )
    json_option(p)
    p.set_defaults(func=cmd_check)
