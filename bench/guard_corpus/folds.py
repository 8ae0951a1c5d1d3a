"""The guard's purpose and need models fitted without one drafts writer, cached
(``.cache/guard-need``).

A fold's file is named by the writer left out and a digest of everything it was fitted from
(the other writers' drafts, the models' and their fitting's source, the sentence encoder), so a
change to any of them fits it again and a stale fold is never read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "guard-need"


class Folds:
    """Each writer's fold, fitted on demand; the encoder's vectors shared between fits."""

    def __init__(
        self, sets: dict[str, list[dict[str, Any]]], conditions: list[dict[str, Any]] = ()
    ) -> None:
        from privacy_checklist.reasoning.guard.need_fit import Vectors

        self.sets = sets
        #: the condition writers' messages: no drafts writer wrote them, so every fold has all
        self.conditions = list(conditions)
        self.vectors = Vectors()

    def __call__(self, writer: str) -> Any:
        """The models fitted on every writer but ``writer``."""
        from privacy_checklist.kg.static import table_digest
        from privacy_checklist.reasoning.guard import need, need_fit

        train = [item for w, items in sorted(self.sets.items()) if w != writer for item in items]
        digest = hashlib.sha256()
        digest.update(json.dumps([train, self.conditions], sort_keys=True).encode())
        for module in (need, need_fit):
            digest.update(Path(module.__file__).read_bytes())
        digest.update(table_digest().encode())
        path = CACHE / f"{writer}-{digest.hexdigest()[:16]}.npz"
        if not path.exists():
            CACHE.mkdir(parents=True, exist_ok=True)
            models = need_fit.fit(train, self.vectors, self.conditions)
            need.save(path, models, table_digest())
        return need.load(path)
