"""``pcheck``: the command line of privacy-checklist.

Every subcommand reads the knowledge base given by ``--kb DIR`` (or ``$PCHECK_KB``), by default
the one that ships inside the package, so it works with no network and no ``../shared``.
Errors print one line on stderr and exit 1; usage errors exit 2.

A module per command group, each registering its subcommands (:mod:`.parser` puts them
together): :mod:`.ingest` (ingest), :mod:`.kb` (stats, show, define, export), :mod:`.graphs`
(roles and attributes: resolve, evaluate), :mod:`.retrieval` (search, retrieval-eval,
retrieval-tune), :mod:`.reasoning` (check, and the methods' options and pipeline),
:mod:`.evaluation` (eval), :mod:`.training` (reasoner train), :mod:`.annotate` (annotate,
annotate-eval), :mod:`.norms` (the editors' store), :mod:`.demo` and :mod:`.browser` (app).
Options taken by several commands are built in :mod:`.options`; the one-line errors, loading
the knowledge base and running a command in :mod:`.common`.
"""

from __future__ import annotations

from collections.abc import Sequence

from privacy_checklist.app.cli.common import CliError, one_line_warnings, run_command
from privacy_checklist.app.cli.parser import build_parser

__all__ = ["CliError", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``pcheck``: run one subcommand; returns the exit status."""
    with one_line_warnings():
        return run_command(build_parser().parse_args(argv))
