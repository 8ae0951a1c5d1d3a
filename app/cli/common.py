"""What every ``pcheck`` command shares: the one-line error, the knowledge base and the editors'
store of ``--kb``/``--store``, reading a text file or a case file, printing, and how a command
is run (its errors as one line and an exit status, Ctrl-C, warnings on one line).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.ingest.ecfr import IngestError
from privacy_checklist.ingest.ontology import OntologyError
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.extras import MissingExtra
from privacy_checklist.kg.kb import KnowledgeBase, KnowledgeBaseError
from privacy_checklist.kg.roles import RoleGraphError

if TYPE_CHECKING:
    from privacy_checklist.ingest.cases import Case
    from privacy_checklist.kg.store import NormStore

WIDTH = 100  # columns of wrapped text


class CliError(Exception):
    """An error to print as one line."""


# the knowledge base and the editors' store


def load_kb(args: argparse.Namespace) -> KnowledgeBase:
    """The knowledge base of ``--kb`` (else ``$PCHECK_KB``, else the built-in one); its norms are
    the store's effective view."""
    where = args.kb or os.environ.get("PCHECK_KB") or None
    return kbmod.load(where, store=store_path(args))


def store_path(args: argparse.Namespace) -> Path:
    """The editors' store: ``--store``, else ``$PCHECK_STORE``, else the user's data folder."""
    from privacy_checklist.kg.store import default_store_path

    return Path(args.store) if getattr(args, "store", None) else default_store_path()


def open_store(args: argparse.Namespace, *, readonly: bool = False) -> NormStore:
    """The editors' store, opened to read only (nothing created) or to write."""
    from privacy_checklist.kg.store import NormStore, StoreError

    try:
        return NormStore(store_path(args), readonly=readonly)
    except StoreError as exc:
        raise CliError(str(exc)) from exc


# reading the input


#: the most bytes read of one text file (a case, a draft, an answers file): a larger one, or an
#: endless one such as /dev/zero, is refused rather than read into memory
MAX_FILE_BYTES = 16 * 1024 * 1024


def read_text_file(name: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of the file ``name`` (``-``: stdin), at most ``limit`` bytes, or a
    :class:`CliError` naming the fix."""
    try:
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)  # a text stream without bytes: encode
            data = (
                stream.read(limit + 1)
                if stream is not None
                else sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
            )
        else:
            with Path(name).open("rb") as handle:
                data = handle.read(limit + 1)
        if len(data) > limit:
            raise CliError(
                f"{name}: larger than {limit // (1024 * 1024)} MB; give a smaller text file"
            )
        # as a file opened in text mode reads it: "\r\n" and "\r" end lines as "\n" does
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError as exc:
        raise CliError(f"{name}: no such file; pass --file a text file") from exc
    except IsADirectoryError as exc:
        raise CliError(f"{name}: is a folder; pass --file a text file") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{name}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    except OSError as exc:
        raise CliError(f"{name}: cannot be read ({exc.strerror or exc})") from exc


def read_cases(
    path: str, *, command: str, limit: int | None, need_label: bool = True
) -> list[Case]:
    """The usable cases of the case file ``path`` (the first ``limit`` of them); each row skipped
    is reported on stderr by its line and why, and none usable is an error."""
    from privacy_checklist.ingest.cases import read_case_file

    try:
        found = read_case_file(Path(path), need_label=need_label)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    for row in found.skipped:
        print(f"pcheck {command}: {path} {row}; skipped", file=sys.stderr)
    if not found.cases:
        raise CliError(
            f"{path}: no case to "
            + ("score" if need_label else "search")
            + (
                f" ({len(found.skipped)} row(s) skipped, see above)"
                if found.skipped
                else " (only a header)"
            )
        )
    return found.cases[:limit] if limit else found.cases


# printing


#: the most characters of a model's answer printed on a terminal (the whole is in --json)
MAX_PRINTED = 4000


def clip(text: str, limit: int = MAX_PRINTED) -> str:
    """``text``, or its first ``limit`` characters and how many more there are."""
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n[... {len(text) - limit:,} more characters not printed; --json has them]"
    )


def printable(value: object) -> str:
    """``value`` as text with every control and format character written as an escape
    (``\\x1b``, ``\\r``): what a store or a file holds is shown, never obeyed by the terminal."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


def wrap(text: str, indent: str = "  ") -> str:
    """``text`` wrapped to :data:`WIDTH` columns, each of its lines indented."""
    lines = []
    for para in text.split("\n"):
        lines.append(
            textwrap.fill(para, WIDTH, initial_indent=indent, subsequent_indent=indent) or indent
        )
    return "\n".join(lines)


def print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


# running a command


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command: its errors print ``pcheck COMMAND: <message>`` and exit 1, Ctrl-C
    exits 130, a closed pipe 0."""
    from privacy_checklist.kg.encoder import EncoderError
    from privacy_checklist.reasoning.guard.need import NeedModelError
    from privacy_checklist.reasoning.learned.blend import BlendModelError
    from privacy_checklist.reasoning.learned.conditions import ConditionModelError

    try:
        return int(args.func(args) or 0)
    except (
        CliError,
        IngestError,
        KnowledgeBaseError,
        RoleGraphError,
        OntologyError,
        MissingExtra,
        ConditionModelError,
        BlendModelError,
        EncoderError,
        NeedModelError,
    ) as exc:
        print(f"pcheck {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # only commands whose writes are all-or-nothing say that nothing was changed
        note = getattr(args, "on_interrupt", None)
        print(
            f"pcheck {args.command}: interrupted" + (f"; {note}" if note else ""), file=sys.stderr
        )
        return 130
    except BrokenPipeError:
        return 0


def format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """``warning: <message>`` on one line: a CLI user needs the message, not the library's
    file, line number and source line that Python prints."""
    return f"warning: {' '.join(str(message).split())}\n"


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Python's ``showwarning`` with :func:`format_warning`'s one line."""
    stream = file if file is not None else sys.stderr
    if stream is None:  # no stderr (pythonw): the warning goes nowhere, as Python's would
        return
    with contextlib.suppress(OSError):  # stderr closed: dropped, as Python's display does
        stream.write(format_warning(message, category, filename, lineno, line))


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Warnings shown as ``warning: <message>`` while the command runs, Python's display put
    back after: set here and not at import, so a program or test importing this package keeps
    its own."""
    saved = warnings.formatwarning
    with warnings.catch_warnings():  # restores showwarning and the filters on exit
        warnings.formatwarning = format_warning
        warnings.showwarning = show_warning
        try:
            yield
        finally:
            warnings.formatwarning = saved
