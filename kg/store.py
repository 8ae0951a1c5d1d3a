"""The editors' store: norm annotations with provenance, status, versions and full history.

SQLite (standard library, WAL mode) in the user's data directory, or wherever ``--store`` /
``$PCHECK_STORE`` points. The knowledge base's rules annotations are the baseline (version 0);
the store holds what LLMs and editors add on top. An edit names the version it was made
against; when someone changed the norm since, the edit is refused with who changed what, and
nothing is overwritten. Each change is one transaction (``BEGIN IMMEDIATE``), so two processes
editing the same norm at once cannot both win. Validated annotations win over machine ones
wherever norms are read (:meth:`NormStore.effective`, served by ``KnowledgeBase.norms`` when the
knowledge base is loaded with its store).

A norm's ``conditions`` are a field like the others; an edit or an import of them is checked as
the curated ones are (:func:`~privacy_checklist.kg.norms.read_condition`: a kind of
``condition_kinds.json``, and words found in the paragraph's text), so the store never holds a
condition quoting words the regulation does not say.

Opening checks the file (SQLite's integrity check): a damaged store is refused by name, never
read as empty. What only reads opens the store read-only (``readonly=True``): nothing is
created, and a store on a read-only file system can still be shown and exported.
"""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from privacy_checklist.kg.conditions import CatalogueError, Condition, ConditionKind, load_kinds
from privacy_checklist.kg.ids import section_id
from privacy_checklist.kg.norms import (
    LIST_FIELDS,
    NORM_TYPES,
    PAPER_TYPES,
    RELATIONS,
    Norm,
    paper_fields,
    read_condition,
)
from privacy_checklist.kg.tree import RegulationTree

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
    "conditions",
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


TABLES = frozenset({"annotations", "history"})
SHOWN_CONFLICTS = 5  # conflicts named in an import's refusal (the rest are counted)


class StoreError(Exception):
    """A store operation was refused; the message says why and what to do."""


class StaleEditError(StoreError):
    """The norm changed since the version the edit was made against."""


class ImportFileError(StoreError):
    """An import file is malformed; nothing was imported."""


class StoreDamagedError(StoreError):
    """The store's file is damaged: what it holds cannot be trusted, so nothing is read."""


class StoreReadOnlyError(StoreError):
    """The store can be read but not written (a read-only file system or no permission)."""


def default_store_path() -> Path:
    """The user's store: ``$PCHECK_STORE``, else ``norms.sqlite`` in the user's data folder.
    What the command line and the browser open when given no ``--store``; nothing in ``kg``
    opens it by itself (a :class:`~privacy_checklist.kg.kb.KnowledgeBase` reads the store it is
    given, :class:`NormStore` the file it is given)."""
    env = os.environ.get("PCHECK_STORE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "privacy-checklist" / "norms.sqlite"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _wal(path: Path) -> Path:
    return Path(f"{path}-wal")


def stamp(path: Path | str) -> tuple[Any, ...]:
    """What changes whenever the store at ``path`` is written: the inode, size and time of its
    file and of its write-ahead log, and the log's header (new salts at each restart). A reader
    compares stamps to know, cheaply, whether to read the store again."""
    out: list[Any] = []
    for file in (Path(path), _wal(Path(path))):
        try:
            info = file.stat()
            head = b""
            if file.name.endswith("-wal"):
                with file.open("rb") as handle:
                    head = handle.read(32)
        except OSError:
            out.append(None)
            continue
        out.append((info.st_ino, info.st_size, info.st_mtime_ns, head))
    return tuple(out)


def _unwritable(path: Path) -> str | None:
    """Why ``path`` (a file, or the folder that would hold it) cannot be written, or None."""
    if os.access(path, os.W_OK):
        return None
    try:
        readonly = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        readonly = False
    return "a read-only file system" if readonly else "no permission to write"


@dataclass(frozen=True, slots=True)
class Record:
    """A norm as the store holds it (or the knowledge base's baseline, version 0)."""

    norm: Norm
    status: str
    version: int
    updated_at: str
    updated_by: str
    comment: str = ""

    @classmethod
    def machine(cls, norm: Norm) -> Record:
        """The knowledge base's own annotation of a norm the store does not hold: version 0."""
        return cls(norm, status="machine", version=0, updated_at="", updated_by=norm.provenance)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Record:
        """A record from the columns ``data, status, version, updated_at, updated_by, comment``."""
        data, status, version, updated_at, updated_by, comment = row
        return cls(
            Norm.from_json(json.loads(data)),
            status=status,
            version=version,
            updated_at=updated_at,
            updated_by=updated_by,
            comment=comment,
        )


@dataclass(frozen=True, slots=True)
class ImportEntry:
    """One norm of an import file, checked: its annotation, status and comment, and the
    store version it was exported at (None for a file in the paper's format)."""

    norm: Norm
    status: str
    comment: str = ""
    version: int | None = None
    #: an export's entry carries the norm twice, in ``ci`` and in the paper's fields: the
    #: norm its paper fields say, where it differs from ``norm`` (an edit made there)
    paper: Norm | None = None


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: the norms written and the ones skipped because the store already
    holds them exactly as the file does."""

    imported: list[str]
    unchanged: list[str]


class NormStore:
    """The SQLite store of norm annotations.

    Args:
        path: the store's file; nothing here chooses one (the command line and the browser
            take ``--store``, else :func:`default_store_path`).
        timeout: seconds to wait for another process's write.
        readonly: open only to read (show, history, export, the effective view): nothing is
            created, a missing store reads as empty, and a store on a read-only file system
            opens. Writing through such a store is refused.

    Raises:
        StoreDamagedError: the file fails SQLite's integrity check.
        StoreReadOnlyError: ``readonly`` is false and the store cannot be written.
        StoreError: not a norm store, or its folder cannot be created.
    """

    def __init__(self, path: Path | str, timeout: float = 30.0, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.readonly = readonly
        self.exists = self.path.exists()
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a norm store; pass --store its file")
        self.db = self._open_reader() if readonly else self._open_writer()

    # opening ---------------------------------------------------------------------------------
    def _open_reader(self) -> sqlite3.Connection:
        if not self.exists or self.path.stat().st_size == 0:
            db = sqlite3.connect(":memory:", isolation_level=None)  # an empty store
            db.executescript(SCHEMA)
            return db
        uri = self.path.resolve().as_uri() + "?mode=ro"
        try:
            return self._connect(uri)
        except StoreError as exc:
            cause = exc.__cause__
            name = getattr(cause, "sqlite_errorname", "")
            # SQLite cannot make the shared-memory file of a store in WAL mode beside it: it
            # says so (READONLY_DIRECTORY), or cannot open (CANTOPEN) where we see no write
            # access
            if not (
                name == "SQLITE_READONLY_DIRECTORY"
                or (name == "SQLITE_CANTOPEN" and _unwritable(self.path.parent))
            ):
                raise
        # a store in WAL mode needs its shared-memory file beside it; in a folder that
        # cannot be written, read the file as it stands unless it has changes not merged yet
        wal = _wal(self.path)
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreReadOnlyError(
                f"the norm store at {self.path} is read-only and holds changes not yet merged "
                f"into it ({wal.name}); open it once where it can be written (copy its folder) "
                "and pass --store the copy"
            )
        return self._connect(uri + "&immutable=1")

    def _open_writer(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = next((p for p in self.path.parents if p.exists()), None)
            cause = exc.strerror or str(exc)
            if blocker is not None and not blocker.is_dir():
                cause = f"{blocker} is a file, not a folder"
            raise self._cannot_create(cause) from exc
        why = _unwritable(self.path) if self.exists else None
        why = why or _unwritable(self.path.parent)
        if why is not None:
            if not self.exists:
                raise self._cannot_create(why)
            raise StoreReadOnlyError(
                f"the norm store at {self.path} is read-only ({why}): it can be read (pcheck "
                "norms show, history, export) but not changed; copy it to a writable place and "
                "pass --store the copy"
            )
        db = self._connect(str(self.path))
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise self._error(exc) from exc
        return db

    def _cannot_create(self, why: str) -> StoreError:
        kind = StoreReadOnlyError if "read-only" in why.lower() else StoreError
        return kind(
            f"cannot create the norm store at {self.path}: {why}; pass --store a path in a "
            "folder you can write to"
        )

    def _connect(self, target: str) -> sqlite3.Connection:
        """Connect and check the file: a norm store (or empty), whole by SQLite's integrity
        check. Damage is found here, before anything is read or written."""
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(
                target,
                timeout=self.timeout,
                isolation_level=None,
                uri=target.startswith("file:"),
            )
            db.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            tables = {
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if tables - {"sqlite_sequence"} and not tables >= TABLES:
                raise StoreError(
                    f"{self.path} is an SQLite database but not a norm store (it has no "
                    f"{' or '.join(sorted(TABLES - tables))} table); pass --store the store's path"
                )
            if tables:
                rows = db.execute("PRAGMA integrity_check(3)").fetchall()
                if rows != [("ok",)]:
                    lines = [line.strip() for row in rows for line in str(row[0]).splitlines()]
                    problems = [line for line in lines if line and not line.startswith("***")]
                    raise StoreDamagedError(self._damaged("; ".join(problems[:2]) or "unreadable"))
        except sqlite3.DatabaseError as exc:
            if db is not None:
                db.close()
            raise self._error(exc) from exc
        except StoreError:
            if db is not None:
                db.close()
            raise
        return db

    def _damaged(self, detail: str) -> str:
        detail = " ".join(detail.split())  # one line
        return (
            f"the norm store at {self.path} is damaged: {detail}; nothing was read or changed. "
            f"Recover what it holds (sqlite3 {self.path} .recover) or restore a backup; pass "
            "--store another store meanwhile"
        )

    def _error(self, exc: sqlite3.Error) -> StoreError:
        """The store's words for an SQLite error."""
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith("SQLITE_CORRUPT") or "malformed" in str(exc):
            return StoreDamagedError(self._damaged(str(exc)))
        if name == "SQLITE_NOTADB":
            return StoreError(
                f"{self.path} is not a norm store ({exc}); pass --store the store's path"
            )
        if name.startswith("SQLITE_READONLY"):
            why = _unwritable(self.path) or _unwritable(self.path.parent) or str(exc)
            return StoreReadOnlyError(
                f"the norm store at {self.path} is read-only ({why}); nothing was changed"
            )
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return StoreError(
                f"the norm store at {self.path} is busy: another process held it for more "
                f"than {self.timeout:g} s; nothing was changed, try again"
            )
        return StoreError(f"the norm store at {self.path} cannot be used: {exc}")

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """Reads, with SQLite's errors in the store's words (damage found late, a lock)."""
        try:
            yield self.db
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> NormStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``); rolled back on error."""
        if self.readonly:
            raise StoreReadOnlyError(
                f"the norm store at {self.path} was opened only to read; nothing was changed"
            )
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            yield self.db
        except BaseException as exc:
            with suppress(sqlite3.Error):  # nothing was committed; the error below says why
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from exc
            raise
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    # reading ---------------------------------------------------------------------------------
    def get(self, node: str) -> Record | None:
        with self._reading() as db:
            row = db.execute(SELECT_ONE, (node,)).fetchone()
        if row is None:
            return None
        return Record.from_row(row)

    def current(self, node: str, baseline: Mapping[str, Norm]) -> Record:
        """The store's record, else the knowledge base's machine norm as version 0."""
        found = self.get(node)
        if found is not None:
            return found
        if node not in baseline:
            raise StoreError(f"no norm for {node!r}: it is not an annotated paragraph")
        return Record.machine(baseline[node])

    def all(self) -> dict[str, Record]:
        with self._reading() as db:
            rows = db.execute(
                "SELECT node, data, status, version, updated_at, updated_by, comment "
                "FROM annotations"
            ).fetchall()
        return {r[0]: Record.from_row(r[1:]) for r in rows}

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
        with self._reading() as db:
            rows = db.execute(
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
        with self._reading() as db:
            rows = db.execute("SELECT status, COUNT(*) FROM annotations GROUP BY status").fetchall()
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
        comment = safe_text(comment or "", f"the comment on {node}", MAX_COMMENT)
        fields = norm.to_json()
        for key, value in fields.items():
            _safe_values(value, f"{node}'s {key}")
        data = json.dumps(fields, ensure_ascii=False, sort_keys=True)
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

    def _current_in(
        self, db: sqlite3.Connection, node: str, baseline: Mapping[str, Norm]
    ) -> Record:
        row = db.execute(SELECT_ONE, (node,)).fetchone()
        if row is not None:
            return Record.from_row(row)
        if node not in baseline:
            raise StoreError(f"no norm for {node!r}: it is not an annotated paragraph")
        return Record.machine(baseline[node])

    def _last_change(self, db: sqlite3.Connection, node: str) -> str:
        last = db.execute(LAST_CHANGE, (node,)).fetchone()
        if not last:
            return "someone"
        return f"{last[0]} ({last[2]} at {last[1]}; fields: {last[3] or 'none'})"

    def _check(
        self, db: sqlite3.Connection, node: str, expected: int, baseline: Mapping[str, Norm]
    ) -> Record:
        current = self._current_in(db, node, baseline)
        if expected < 0 or expected > current.version:
            raise StaleEditError(
                f"{node} has no version {expected}: its current version is {current.version}. "
                f"Nothing was saved; look at it (pcheck norms show {node!r}) and redo the edit "
                f"against version {current.version}."
            )
        if current.version != expected:
            raise StaleEditError(
                f"{node} is at version {current.version}, not {expected}: changed since by "
                f"{self._last_change(db, node)}. Nothing was saved; look at it again (pcheck "
                f"norms show {node!r}) and redo the edit against version {current.version}."
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
        tree: RegulationTree | None = None,
    ) -> Record:
        """Change fields of a norm as an editor. The result is validated (an editor's word).

        Args:
            tree: the regulation text, to check the quotes of edited ``conditions`` against
                (an edit of conditions without it is refused).

        Raises:
            StaleEditError: the norm is no longer at ``expected_version``, or never was.
            StoreError: an unknown field or a bad value.
        """
        editor = _editor(editor)
        clean = validate_changes(changes, node=node, tree=tree)
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
    def export(self, baseline: Mapping[str, Norm], tree: RegulationTree) -> dict[str, Any]:
        """Every norm in the paper's format, with our fields (``ci``) and store state."""
        from privacy_checklist.kg.norms import to_paper

        records = self.all()
        out: dict[str, Any] = {}
        for node in sorted(set(baseline) | set(records), key=lambda n: (section_id(n) or n, n)):
            record = records.get(node) or Record.machine(baseline[node])
            entry: dict[str, Any] = (
                to_paper(record.norm, tree) if node in tree else {"node_index": node}
            )
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

    def import_file(
        self,
        path: Path,
        editor: str,
        baseline: Mapping[str, Norm],
        tree: RegulationTree | None = None,
    ) -> ImportResult:
        """Import a file written by :meth:`export` (or in the paper's format) as one transaction.

        Each entry is an edit made against the version it was exported at (``store_version``;
        an entry in the paper's format, which has none, against the knowledge base's
        annotation, version 0). An entry the store already holds exactly so (annotation and
        status) is skipped, so re-importing a file changes nothing. An entry whose norm the
        store changed since (another version than the file's, where the store holds one) is a
        conflict: the import is refused naming every conflict, and nothing is applied, so an
        old export never overwrites a newer edit nor demotes a validated norm. The whole file is
        checked first; a malformed one is refused with the line and field at fault. A failure
        half-way leaves the store as it was. With ``tree``, each entry's conditions are
        checked against the regulation text as an edit's are.

        Raises:
            ImportFileError: the file is malformed.
            StaleEditError: entries conflict with changes made since the export.
        """
        editor = _editor(editor)
        entries = parse_import(path, baseline, tree)
        imported: list[str] = []
        unchanged: list[str] = []
        with self.transaction() as db:
            todo: list[tuple[str, ImportEntry, Record]] = []
            conflicts: list[str] = []
            for node, entry in entries.items():
                current = self._current_in(db, node, baseline)
                expected = entry.version if entry.version is not None else 0
                stale = current.version not in (0, expected)
                if entry.paper is not None and not stale:
                    entry = replace(entry, norm=_both_ways(node, entry, current.norm))
                if (
                    entry.norm == current.norm
                    and entry.status == current.status
                    and (entry.paper is None or not stale)  # a paper field's edit is no echo
                ):
                    unchanged.append(node)
                    continue
                if stale:
                    last = self._last_change(db, node)
                    conflicts.append(
                        f"{node} is at version {current.version} (last {last}), "
                        "the file's entry at "
                        + (
                            f"version {expected}"
                            if entry.version is not None
                            else "none (no store_version: taken as version 0)"
                        )
                    )
                    continue
                todo.append((node, entry, current))
            if conflicts:
                more = len(conflicts) - SHOWN_CONFLICTS
                raise StaleEditError(
                    f"{path}: {len(conflicts)} of {len(entries)} norms changed in the store since "
                    f"the file was exported; nothing was imported: "
                    + "; ".join(conflicts[:SHOWN_CONFLICTS])
                    + (f"; and {more} more" if more > 0 else "")
                    + ". Export again and redo the changes there, or set an entry's "
                    "store_version to the store's version to overwrite it"
                )
            for node, entry, current in todo:
                changed = [
                    f for f in EDITABLE if getattr(entry.norm, f) != getattr(current.norm, f)
                ]
                self._write(
                    db,
                    node,
                    entry.norm,
                    entry.status,
                    current.version + 1,
                    editor,
                    "import",
                    entry.comment,
                    changed,
                )
                imported.append(node)
        return ImportResult(imported, unchanged)


def _both_ways(node: str, entry: ImportEntry, current: Norm) -> Norm:
    """The norm an export's entry means when its paper fields and its ``ci`` disagree: a field
    edited in one place (the other still as the store has it) takes that edit; a field edited
    differently in both is refused, naming it."""
    assert entry.paper is not None
    norm = entry.norm
    for field in EDITABLE:
        ci, paper, was = (
            getattr(entry.norm, field),
            getattr(entry.paper, field),
            getattr(current, field),
        )
        if ci == paper:
            continue
        if ci == was:
            norm = replace(norm, **{field: paper})
        elif paper != was:
            raise ImportFileError(
                f"{node}: {field} is {paper!r} in the paper's fields and {ci!r} in ci (the store "
                f"has {was!r}); edit it in one place"
            )
    return norm


def read_effective(path: Path | str, baseline: Mapping[str, Norm]) -> tuple[dict[str, Norm], int]:
    """The effective view of the store at ``path`` over ``baseline`` and how many norms an
    editor validated, read without creating or changing anything (a missing store reads as
    empty: the baseline stands).

    Raises:
        StoreError: the store is damaged or not a norm store.
    """
    with NormStore(path, readonly=True) as store:
        return store.effective(baseline), store.counts().get("validated", 0)


#: the longest comment, and the longest text in a norm's field, the store takes
MAX_COMMENT = 2_000
MAX_FIELD = 5_000


def safe_text(value: str, what: str, limit: int) -> str:
    """``value`` if it can be shown as written: no control or format character (an escape
    sequence, a carriage return, a bidirectional override can make a terminal or a page show
    another history than the store holds) and at most ``limit`` characters.

    Raises:
        StoreError: naming ``what`` and the character or the length.
    """
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            raise StoreError(
                f"{what} holds the control character U+{ord(ch):04X}; write it as plain text"
            )
    if len(value) > limit:
        raise StoreError(f"{what} is {len(value):,} characters; at most {limit:,}")
    return value


def _safe_values(value: Any, what: str) -> None:
    """Every string inside a norm's field checked by :func:`safe_text`."""
    if isinstance(value, str):
        safe_text(value, what, MAX_FIELD)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _safe_values(key, what)
            _safe_values(item, what)
    elif isinstance(value, list | tuple):
        for item in value:
            _safe_values(item, what)


def _editor(name: str) -> str:
    name = (name or "").strip()
    if (
        not name
        or len(name) > 80
        or any(
            unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp")
            for c in name
        )
    ):
        raise StoreError(
            "an editor name is required (--editor NAME, one line of printable characters, at "
            "most 80 characters)"
        )
    return name


@cache
def condition_kinds() -> dict[str, ConditionKind]:
    """The condition kinds of ``ontologies/condition_kinds.json`` (read once)."""
    return load_kinds()


def validate_conditions(
    value: Any, node: str, tree: RegulationTree | None
) -> tuple[Condition, ...]:
    """Edited conditions (a JSON list, or a list, of ``{kind, mode, quote[, group][, node]}``)
    checked against the vocabulary and ``node``'s text, each with its span.

    Raises:
        StoreError: naming the condition and what is wrong with it.
    """
    if tree is None:
        raise StoreError(
            "conditions can only be checked against the regulation text: pass the knowledge "
            "base's tree"
        )
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"conditions must be a JSON list of {{kind, mode, quote[, group][, node]}} "
                f"({exc.msg} at character {exc.pos})"
            ) from exc
    if isinstance(value, Condition):
        value = [value]
    if not isinstance(value, list | tuple):
        raise StoreError("conditions must be a list of {kind, mode, quote[, group][, node]}")
    kinds = condition_kinds()
    out: list[Condition] = []
    for index, item in enumerate(value):
        raw = item.to_json() if isinstance(item, Condition) else item
        try:
            condition = read_condition(raw, node, tree, kinds)
        except CatalogueError as exc:
            raise StoreError(f"conditions[{index}] of {node}: {exc}") from exc
        if condition in out:
            raise StoreError(f"conditions[{index}] of {node}: the same condition twice")
        out.append(condition)
    return tuple(out)


def validate_changes(
    changes: Mapping[str, Any], *, node: str = "", tree: RegulationTree | None = None
) -> dict[str, Any]:
    """Check and normalise edited fields of ``node``'s norm; raise :class:`StoreError` naming
    the field at fault. ``conditions`` are checked against ``tree``'s text (required for them).
    """
    clean: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in EDITABLE:
            raise StoreError(f"unknown field {key!r}; editable fields: {', '.join(EDITABLE)}")
        if key == "conditions":
            value = validate_conditions(value, node, tree)
        elif key == "norm_type":
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


def parse_import(
    path: Path, baseline: Mapping[str, Norm], tree: RegulationTree | None = None
) -> dict[str, ImportEntry]:
    """Read and check an import file; :class:`ImportFileError` names the line and field. With
    ``tree``, conditions are checked against its text (:func:`validate_conditions`)."""
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
    out: dict[str, ImportEntry] = {}
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
        version = entry.get("store_version")
        if version is not None and (
            isinstance(version, bool) or not isinstance(version, int) or version < 0
        ):
            raise ImportFileError(
                f"{where}: field store_version {version!r} is not a version (0, 1, 2 ...)"
            )
        paper: Norm | None = None
        try:
            if isinstance(entry.get("ci"), dict):
                norm = Norm.from_json(entry["ci"])
                if norm.node != node:
                    raise StoreError(f"ci.node {norm.node!r} differs from the key")
                if tree is not None and norm.conditions:
                    checked = validate_conditions(list(norm.conditions), node, tree)
                    norm = replace(norm, conditions=checked)
                # the paper's fields that say something else than ci's own rendering of them
                rendered = paper_fields(norm)
                edited = {k: v for k, v in entry.items() if k in PAPER_FIELDS and v != rendered[k]}
                if edited:
                    changes = _paper_changes(edited, tree, required=False)
                    said = replace(norm, **validate_changes(changes, node=node, tree=tree))
                    paper = said if said != norm else None
            else:
                norm = replace(
                    baseline[node],
                    **validate_changes(_paper_changes(entry, tree), node=node, tree=tree),
                    provenance=str(entry.get("provenance") or "import"),
                )
        except KeyError as exc:
            raise ImportFileError(f"{where}: a condition has no {exc.args[0]!r}") from exc
        except (StoreError, TypeError, ValueError) as exc:
            raise ImportFileError(f"{where}: {exc}") from exc
        out[node] = ImportEntry(norm, status, str(entry.get("comment") or ""), version, paper)
    return out


#: the paper's fields an import reads, as the norm's fields they set
PAPER_FIELDS = {
    "norm_type": "norm_type",
    "sender": "sender",
    "recipient": "recipient",
    "subject": "subject",
    "information_type": "information_type",
    "purpose": "purpose",
    "consent_form": "consent_form",
    "sender_is_subject": "sender_is_subject",
    "recipient_is_subject": "recipient_is_subject",
    "refer_list": "refs",
    "conditions": "conditions",
}


def _paper_changes(
    entry: Mapping[str, Any], tree: RegulationTree | None, *, required: bool = True
) -> dict[str, Any]:
    """The edits an entry's paper fields make, for :func:`validate_changes` ("none", the
    paper's word for an empty field, is empty). ``required``: the entry is in the paper's
    format alone, so it must have a norm type."""
    if (required or "norm_type" in entry) and entry.get("norm_type") not in PAPER_TYPES:
        raise StoreError(
            f"norm_type {entry.get('norm_type')!r} is not one of {sorted(PAPER_TYPES)}"
        )
    changes: dict[str, Any] = {}
    for key, field in PAPER_FIELDS.items():
        if key not in entry or (key == "conditions" and tree is None):
            continue
        value = entry[key]
        if key in ("information_type", "purpose"):
            value = "" if str(value).strip().lower() == "none" else str(value)
        elif key == "consent_form":
            value = str(value)
        elif key == "refer_list":
            value = value or {}
        changes[field] = value
    if required and "refs" not in changes:
        changes["refs"] = {}
    return changes
