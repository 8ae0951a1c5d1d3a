"""The editors' store: norm annotations with provenance, status, versions and full history.

SQLite (standard library, WAL mode) in the user's data directory, or wherever ``--store`` /
``$PCHECK_STORE`` points. The knowledge base's rules annotations are the baseline (version 0);
the store holds what LLMs and editors add on top. An edit names the version it was made
against; when someone changed the norm since, the edit is refused with who changed what, and
nothing is overwritten. Each change is one transaction (``BEGIN IMMEDIATE``), so two processes
editing the same norm at once cannot both win. Validated annotations win over machine ones
wherever norms are read (:meth:`NormStore.effective`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from privacy_checklist.kg.norms import (
    LIST_FIELDS,
    NORM_TYPES,
    PAPER_TYPES,
    RELATIONS,
    TO_PAPER,
    Norm,
)

STATUSES = ("machine", "validated", "rejected")
EDITABLE = (
    "norm_type",
    *LIST_FIELDS,
    "information_type",
    "information_class",
    "purpose",
    "consent_form",
    "sender_is_subject",
    "recipient_is_subject",
    "refs",
)
YES_NO = ("yes", "no", "not sure")

SCHEMA = """
CREATE TABLE IF NOT EXISTS annotations (
    node TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    provenance TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('machine', 'validated', 'rejected')),
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    node TEXT NOT NULL,
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    data TEXT NOT NULL,
    provenance TEXT NOT NULL,
    status TEXT NOT NULL,
    at TEXT NOT NULL,
    by TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    changed TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS history_node ON history (node, version);
"""
UPSERT = """
INSERT INTO annotations (node, data, provenance, status, version, updated_at, updated_by, comment)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(node) DO UPDATE SET data = excluded.data, provenance = excluded.provenance,
    status = excluded.status, version = excluded.version, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by, comment = excluded.comment
"""
HISTORY = """
INSERT INTO history (node, version, action, data, provenance, status, at, by, comment, changed)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
SELECT_ONE = """
SELECT data, status, version, updated_at, updated_by, comment FROM annotations WHERE node = ?
"""
LAST_CHANGE = "SELECT by, at, action, changed FROM history WHERE node = ? ORDER BY id DESC LIMIT 1"


class StoreError(Exception):
    """A store operation was refused; the message says why and what to do."""


class StaleEditError(StoreError):
    """The norm changed since the version the edit was made against."""


class ImportFileError(StoreError):
    """An import file is malformed; nothing was imported."""


def default_store_path() -> Path:
    env = os.environ.get("PCHECK_STORE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "privacy-checklist" / "norms.sqlite"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class Record:
    """A norm as the store holds it (or the knowledge base's baseline, version 0)."""

    norm: Norm
    status: str
    version: int
    updated_at: str
    updated_by: str
    comment: str = ""


class NormStore:
    """The SQLite store of norm annotations."""

    def __init__(self, path: Path | str | None = None, timeout: float = 30.0) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a norm store ({exc}); move it aside or pass --store"
            ) from exc

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> NormStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``); rolled back on error."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # reading ---------------------------------------------------------------------------------
    def get(self, node: str) -> Record | None:
        row = self.db.execute(
            "SELECT data, status, version, updated_at, updated_by, comment FROM annotations "
            "WHERE node = ?",
            (node,),
        ).fetchone()
        if row is None:
            return None
        return Record(Norm.from_json(json.loads(row[0])), row[1], row[2], row[3], row[4], row[5])

    def current(self, node: str, baseline: Mapping[str, Norm]) -> Record:
        """The store's record, else the knowledge base's machine norm as version 0."""
        found = self.get(node)
        if found is not None:
            return found
        if node not in baseline:
            raise StoreError(f"no norm for {node!r}: it is not an annotated paragraph")
        return Record(baseline[node], "machine", 0, "", baseline[node].provenance)

    def all(self) -> dict[str, Record]:
        rows = self.db.execute(
            "SELECT node, data, status, version, updated_at, updated_by, comment FROM annotations"
        ).fetchall()
        return {
            r[0]: Record(Norm.from_json(json.loads(r[1])), r[2], r[3], r[4], r[5], r[6])
            for r in rows
        }

    def effective(self, baseline: Mapping[str, Norm]) -> dict[str, Norm]:
        """The norms as everything else reads them: a validated annotation wins, then an
        edited or LLM one in the store, then the knowledge base's rules; rejected ones drop
        back to the baseline."""
        out = dict(baseline)
        for node, record in self.all().items():
            if record.status == "rejected":
                continue
            out[node] = record.norm
        return out

    def history(self, node: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT version, action, status, provenance, at, by, comment, changed, data "
            "FROM history WHERE node = ? ORDER BY id",
            (node,),
        ).fetchall()
        keys = (
            "version",
            "action",
            "status",
            "provenance",
            "at",
            "by",
            "comment",
            "changed",
            "data",
        )
        return [
            {k: (json.loads(v) if k == "data" else v) for k, v in zip(keys, row, strict=True)}
            for row in rows
        ]

    def counts(self) -> dict[str, int]:
        rows = self.db.execute(
            "SELECT status, COUNT(*) FROM annotations GROUP BY status"
        ).fetchall()
        return {status: n for status, n in rows}

    # writing ---------------------------------------------------------------------------------
    def _write(
        self,
        db: sqlite3.Connection,
        node: str,
        norm: Norm,
        status: str,
        version: int,
        by: str,
        action: str,
        comment: str,
        changed: Iterable[str],
    ) -> None:
        data = json.dumps(norm.to_json(), ensure_ascii=False, sort_keys=True)
        at = _now()
        db.execute(UPSERT, (node, data, norm.provenance, status, version, at, by, comment))
        db.execute(
            HISTORY,
            (
                node,
                version,
                action,
                data,
                norm.provenance,
                status,
                at,
                by,
                comment,
                ",".join(changed),
            ),
        )

    def _check(
        self, db: sqlite3.Connection, node: str, expected: int, baseline: Mapping[str, Norm]
    ) -> Record:
        row = db.execute(SELECT_ONE, (node,)).fetchone()
        if row is None:
            if node not in baseline:
                raise StoreError(f"no norm for {node!r}: it is not an annotated paragraph")
            current = Record(baseline[node], "machine", 0, "", baseline[node].provenance)
        else:
            current = Record(
                Norm.from_json(json.loads(row[0])), row[1], row[2], row[3], row[4], row[5]
            )
        if current.version != expected:
            last = db.execute(LAST_CHANGE, (node,)).fetchone()
            who = (
                f"{last[0]} ({last[2]} at {last[1]}; fields: {last[3] or 'none'})"
                if last
                else "someone"
            )
            raise StaleEditError(
                f"{node} is at version {current.version}, not {expected}: changed since by {who}. "
                f"Nothing was saved; look at it again (pcheck norms show {node!r}) and redo "
                f"the edit against version {current.version}."
            )
        return current

    def edit(
        self,
        node: str,
        changes: Mapping[str, Any],
        editor: str,
        expected_version: int,
        baseline: Mapping[str, Norm],
        comment: str = "",
    ) -> Record:
        """Change fields of a norm as an editor. The result is validated (an editor's word).

        Raises:
            StaleEditError: the norm is no longer at ``expected_version``.
            StoreError: an unknown field or a bad value.
        """
        editor = _editor(editor)
        clean = validate_changes(changes)
        with self.transaction() as db:
            current = self._check(db, node, expected_version, baseline)
            norm = replace(
                current.norm,
                **clean,
                provenance=f"editor:{editor}",
                version=f"edit-{expected_version + 1}",
            )
            self._write(
                db,
                node,
                norm,
                "validated",
                expected_version + 1,
                editor,
                "edit",
                comment,
                sorted(clean),
            )
        return self.get(node)  # type: ignore[return-value]

    def set_status(
        self,
        node: str,
        status: str,
        editor: str,
        expected_version: int,
        baseline: Mapping[str, Norm],
        comment: str = "",
    ) -> Record:
        """Validate or reject a norm as it stands."""
        if status not in ("validated", "rejected"):
            raise StoreError(f"status {status!r}: use validated or rejected")
        editor = _editor(editor)
        with self.transaction() as db:
            current = self._check(db, node, expected_version, baseline)
            action = "validate" if status == "validated" else "reject"
            self._write(
                db, node, current.norm, status, expected_version + 1, editor, action, comment, []
            )
        return self.get(node)  # type: ignore[return-value]

    def put_machine(self, norms: Iterable[Norm], by: str) -> int:
        """Store machine annotations (an LLM's); an editor's validated or rejected word stays."""
        written = 0
        with self.transaction() as db:
            for norm in norms:
                row = db.execute(
                    "SELECT status, version FROM annotations WHERE node = ?", (norm.node,)
                ).fetchone()
                if row is not None and row[0] != "machine":
                    continue
                self._write(
                    db,
                    norm.node,
                    norm,
                    "machine",
                    (row[1] if row else 0) + 1,
                    by,
                    "annotate",
                    "",
                    [],
                )
                written += 1
        return written

    # exchange --------------------------------------------------------------------------------
    def export(self, baseline: Mapping[str, Norm], tree: Any) -> dict[str, Any]:
        """Every norm in the paper's format, with our fields (``ci``) and store state."""
        from privacy_checklist.kg.norms import to_paper

        records = self.all()
        out: dict[str, Any] = {}
        for node in sorted(set(baseline) | set(records), key=lambda n: (n.split("(")[0], n)):
            record = records.get(node) or Record(
                baseline[node], "machine", 0, "", baseline[node].provenance
            )
            entry = to_paper(record.norm, tree) if node in tree else {"node_index": node}
            entry.update(
                {
                    "status": record.status,
                    "store_version": record.version,
                    "updated_at": record.updated_at,
                    "updated_by": record.updated_by,
                    "comment": record.comment,
                    "ci": record.norm.to_json(),
                }
            )
            out[node] = entry
        return out

    def import_file(self, path: Path, editor: str, baseline: Mapping[str, Norm]) -> int:
        """Import a file written by :meth:`export` (or in the paper's format) as one transaction.

        The whole file is checked first; a malformed one is refused with the line and field at
        fault and nothing changes. A failure half-way leaves the store as it was.
        """
        editor = _editor(editor)
        entries = parse_import(path, baseline)
        with self.transaction() as db:
            for node, (norm, status, comment) in entries.items():
                row = db.execute(
                    "SELECT version FROM annotations WHERE node = ?", (node,)
                ).fetchone()
                version = (row[0] if row else 0) + 1
                self._write(
                    db, node, norm, status, version, editor, "import", comment, sorted(EDITABLE)
                )
        return len(entries)


def _editor(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 80 or any(c in name for c in "\n\r\t"):
        raise StoreError(
            "an editor name is required (--editor NAME, one line, at most 80 characters)"
        )
    return name


def validate_changes(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Check and normalise edited fields; raise :class:`StoreError` naming the field at fault."""
    clean: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in EDITABLE:
            raise StoreError(f"unknown field {key!r}; editable fields: {', '.join(EDITABLE)}")
        if key == "norm_type":
            value = PAPER_TYPES.get(str(value), str(value))
            if value not in NORM_TYPES:
                raise StoreError(f"norm_type {value!r}: use one of {', '.join(NORM_TYPES)}")
        elif key in LIST_FIELDS:
            if isinstance(value, str):
                value = [v.strip() for v in value.split(";") if v.strip()]
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise StoreError(f"{key} must be a list of phrases (or 'a; b' on the command line)")
            value = tuple(v for v in value if v.lower() != "none")
        elif key in ("sender_is_subject", "recipient_is_subject"):
            value = str(value).lower()
            if value not in YES_NO:
                raise StoreError(f"{key} {value!r}: use one of {', '.join(YES_NO)}")
        elif key == "refs":
            if isinstance(value, Mapping):
                value = list(value.items())
            try:
                value = tuple((str(t), str(r)) for t, r in value)
            except (TypeError, ValueError) as exc:
                raise StoreError("refs must be pairs of (target node, support|exception)") from exc
            bad = [r for _, r in value if r not in RELATIONS]
            if bad:
                raise StoreError(f"refs relation {bad[0]!r}: use support or exception")
        elif not isinstance(value, str):
            raise StoreError(f"{key} must be text")
        clean[key] = value
    return clean


def _line_of(text: str, key: str) -> int:
    needle = json.dumps(key)
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else 0


def parse_import(path: Path, baseline: Mapping[str, Norm]) -> dict[str, tuple[Norm, str, str]]:
    """Read and check an import file; :class:`ImportFileError` names the line and field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFileError(f"{path}: cannot read as UTF-8 text ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not data:
        raise ImportFileError(f"{path}:1: expected an object keyed by paragraph id")
    out: dict[str, tuple[Norm, str, str]] = {}
    for node, entry in data.items():
        line = _line_of(text, node)
        where = f"{path}:{line}: {node}"
        if node not in baseline:
            raise ImportFileError(f"{where}: not an annotated paragraph of this knowledge base")
        if not isinstance(entry, dict):
            raise ImportFileError(f"{where}: expected an object")
        status = entry.get("status", "validated")
        if status not in STATUSES:
            raise ImportFileError(f"{where}: field status {status!r} is not one of {STATUSES}")
        try:
            if isinstance(entry.get("ci"), dict):
                norm = Norm.from_json(entry["ci"])
                if norm.node != node:
                    raise StoreError(f"ci.node {norm.node!r} differs from the key")
            else:
                if entry.get("norm_type") not in PAPER_TYPES:
                    raise StoreError(
                        f"norm_type {entry.get('norm_type')!r} is not one of {sorted(PAPER_TYPES)}"
                    )
                changes = {
                    "norm_type": entry["norm_type"],
                    **{k: entry[k] for k in ("sender", "recipient", "subject") if k in entry},
                    **{
                        k: str(entry[k])
                        for k in ("information_type", "purpose", "consent_form")
                        if k in entry
                    },
                    **{
                        k: entry[k]
                        for k in ("sender_is_subject", "recipient_is_subject")
                        if k in entry
                    },
                    "refs": entry.get("refer_list") or {},
                }
                norm = replace(
                    baseline[node],
                    **validate_changes(changes),
                    provenance=str(entry.get("provenance") or "import"),
                )
        except (StoreError, TypeError, ValueError) as exc:
            raise ImportFileError(f"{where}: {exc}") from exc
        out[node] = (norm, status, str(entry.get("comment") or ""))
    return out


def to_paper_type(norm_type: str) -> str:
    return TO_PAPER[norm_type]
