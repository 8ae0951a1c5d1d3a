"""``pcheck demo``: the main job on the built-in knowledge base (or ``--kb``), step by step."""

from __future__ import annotations

import argparse
from typing import Any

from privacy_checklist.app.cli.common import CliError, load_kb, wrap
from privacy_checklist.app.cli.kb import print_node, print_stats
from privacy_checklist.app.cli.reasoning import build_reasoner, check_case, reasoning_index
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.reasoning.methods import DEFAULT_K

DEMO_NODE = "164.502(a)(1)(i)"
DEMO_ROLES = (
    "the treating orthopedic surgeon",
    "City of Plainfield police department",
    "a journalist",
)
DEMO_ATTRIBUTES = ("surgery operative report", "favorite movie")
DEMO_METHOD = "checklist"


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job on the built-in knowledge base (or ``--kb``): its counts, one paragraph,
    everyday words resolved to the law's terms and a sample case checked offline.

    No step is dropped silently: the built-in knowledge base must hold every file (one missing
    is a broken install, an error); another one prints which steps it cannot run and why.
    """
    from privacy_checklist.app.samples import DEMO_CASE

    kb = load_kb(args)
    lacking = [
        name
        for name in (*kbmod.GRAPH_FILES, kbmod.NORMS_FILE)
        if kb.path is None or not (kb.path / name).exists()
    ]
    if lacking and kb.path is not None and kb.path.resolve() == kbmod.builtin_path().resolve():
        raise CliError(
            f"the built-in knowledge base in {kb.path} lacks {', '.join(lacking)} (a broken "
            "install): reinstall privacy-checklist"
        )
    rebuild = f"lacks {', '.join(lacking)}; pcheck ingest --ontologies DIR builds a complete one"
    print("== The knowledge base")
    print_stats(kb)
    print()
    print(f"== One paragraph: {DEMO_NODE}")
    print_node(kb, DEMO_NODE, spec=True)
    print()
    if not kb.has_graphs:
        print(f"== Everyday words to the law's terms: skipped, this knowledge base {rebuild}")
    else:
        print("== Everyday words to the law's terms")
        _print_resolved(kb)
    print()
    if not (kb.has_graphs and kb.has_norms):
        print(f"== A sample case: skipped, this knowledge base {rebuild}")
        return 0
    print("== A sample case, checked offline")
    print(wrap(DEMO_CASE))
    reasoner = build_reasoner(DEMO_METHOD, kb, reasoning_index(kb, None), None, DEFAULT_K)
    return check_case(reasoner, DEMO_CASE)


def _print_resolved(kb: KnowledgeBase) -> None:
    """The demo's phrases resolved to roles and information types, with their paths."""
    roles, attributes = kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
    for phrase in DEMO_ROLES:
        found = roles.resolve(phrase, 1)
        print(f"  {phrase}: " + (" → ".join(found[0].path[1:]) if found else "no HIPAA role"))
    for phrase in DEMO_ATTRIBUTES:
        found = attributes.resolve(phrase, 1)
        reached = found and found[0].reached
        shown = " → ".join(found[0].path[1:]) if reached else "no health class"
        print(f"  {phrase}: {shown}")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the main job on the built-in knowledge base",
        description="Print the knowledge base's summary and one paragraph "
        f"({DEMO_NODE}) with its path, references and definitions.",
    )
    p.set_defaults(func=cmd_demo)
