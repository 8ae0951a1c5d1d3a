"""The ``pcheck`` argument parser: the global options, then each command group's subcommands,
registered by its module in the order ``pcheck --help`` lists them."""

from __future__ import annotations

import argparse

from privacy_checklist.app.cli import (
    annotate,
    answers,
    browser,
    demo,
    evaluation,
    graphs,
    guard,
    guard_eval,
    ingest,
    kb,
    norms,
    reasoning,
    retrieval,
    users,
)

EPILOG = """examples:
  pcheck stats                          counts of the built-in knowledge base
  pcheck show "164.502(a)(1)(i)"        a paragraph, its path, references and definitions
  pcheck define "health care operations" --at "164.506(c)(1)"
  pcheck ingest --source ../shared/data/hipaa --out my-kb
  pcheck --kb my-kb export --what tree --format ttl --out hipaa.ttl
  pcheck guard --file draft.txt --to "the patient's health plan" --purpose claim --rewrite
"""
VERSION = "pcheck 0.1.0"
# building the knowledge base, reading it, its graphs, retrieval, reasoning, the norms, showing
GROUPS = (
    ingest,
    kb,
    graphs,
    retrieval,
    reasoning,
    evaluation,
    answers,
    guard,
    guard_eval,
    annotate,
    norms,
    demo,
    browser,
    users,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pcheck",
        description="privacy-checklist: HIPAA as a knowledge graph for Contextual Integrity "
        "checks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--kb",
        metavar="DIR",
        default=None,
        help="knowledge base directory (default: $PCHECK_KB, else the built-in one)",
    )
    parser.add_argument("--version", action="version", version=VERSION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser
