"""The identifier tagger fitted without one writer, cached (``.cache/identifier-tagger``).

A fold's file is named by the writer left out and a digest of everything it was fitted from
(the other writers' sets, the copies, the tagger's and its fitting's source, the lexicon), so a
change to any of them fits it again and a stale fold is never read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "identifier-tagger"
DATA = REPO / "bench" / "data" / "guard_text"


def read(folder: Path = DATA) -> dict[str, list[dict[str, Any]]]:
    from privacy_checklist.reasoning.guard.tagger_fit import read_sets

    return read_sets([folder])


def fold(sets: dict[str, list[dict[str, Any]]], writer: str, copies: int = 2) -> Any:
    """The tagger fitted on every writer of ``sets`` but ``writer``."""
    from privacy_checklist.reasoning.guard import lexicon, tagger, tagger_fit
    from privacy_checklist.reasoning.guard.tagger import Tagger
    from privacy_checklist.reasoning.text import data_path

    train = [item for w, items in sorted(sets.items()) if w != writer for item in items]
    digest = hashlib.sha256()
    digest.update(json.dumps(train, sort_keys=True).encode())
    digest.update(str(copies).encode())
    for module in (tagger, tagger_fit):
        digest.update(Path(module.__file__).read_bytes())
    digest.update(data_path(lexicon.NAME).read_bytes())
    path = CACHE / f"{writer}-{digest.hexdigest()[:16]}.crfsuite"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tagger_fit.fit(train, path, copies=copies)
    return Tagger(path)
