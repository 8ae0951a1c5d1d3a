"""Issue 12, part C: the editors' store loses nothing and says so when it cannot be trusted.

Validated norms reach retrieval and ``check``; import respects versions; a damaged or
read-only store is named as such; ``history --json`` is JSON; a version that never existed and
an unknown part are refused. Every test uses a store in a temporary folder (``--store`` or
``$PCHECK_STORE``), never the user's.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.kb import KnowledgeBase, KnowledgeBaseError
from privacy_checklist.kg.store import NormStore, StaleEditError
from privacy_checklist.retrieval.base import Filters
from privacy_checklist.retrieval.index import RetrievalIndex

NODE = "164.502(a)(1)(i)"  # "To the individual;", a permission in the shipped annotation
QUERY = "A covered entity may disclose protected health information to the individual"
CASE_NODE = "164.524(c)(1)"  # the top norm retrieved for CASE, a definition as shipped
CASE = "The hospital gave the patient a copy of her own medical records at her request."


@pytest.fixture(autouse=True)
def _own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every command here reads a store in the test's folder, never the user's."""
    path = tmp_path / "store" / "norms.sqlite"
    monkeypatch.setenv("PCHECK_STORE", str(path))
    return path


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One BM25 index folder for the module: it re-indexes only what changed between tests."""
    return tmp_path_factory.mktemp("index")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def editor_sets(store: Path, node: str, norm_type: str, editor: str = "eve") -> None:
    """An editor sets the norm type and validates it, through the command line."""
    argv = ["norms", "--store", str(store), "edit", node, "--editor", editor, "--version", "0"]
    assert main([*argv, "--set", f"norm_type={norm_type}"]) == 0
    argv = ["norms", "--store", str(store), "validate", node, "--editor", editor]
    assert main([*argv, "--version", "1"]) == 0


def search(capsys, index_dir: Path, *extra: str) -> list[dict]:
    """BM25 hits as JSON, on the store of ``$PCHECK_STORE``."""
    code, out, err = run(
        capsys, "search", QUERY, "--method", "bm25", "-k", "5", "--json", "--index",
        str(index_dir), *extra,
    )  # fmt: skip
    assert code == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------- fault 1


def test_validated_norm_reaches_search(capsys, _own_store: Path, index_dir: Path) -> None:
    before = search(capsys, index_dir, "--norm-type", "permit")
    assert before[0]["node"] == NODE  # as shipped, a permission found first
    assert not _own_store.exists()  # searching does not create the store
    editor_sets(_own_store, NODE, "prohibit")
    capsys.readouterr()
    permits = search(capsys, index_dir, "--norm-type", "permit")
    assert NODE not in [h["node"] for h in permits]
    prohibitions = search(capsys, index_dir, "--norm-type", "prohibit")
    assert prohibitions[0]["node"] == NODE
    code, out, _ = run(
        capsys, "search", QUERY, "--method", "bm25", "-k", "1", "--index", str(index_dir)
    )
    assert code == 0 and NODE in out and "prohibit" in out.splitlines()[0]


def test_search_store_option(capsys, tmp_path: Path, index_dir: Path) -> None:
    """``--store`` chooses the store as ``$PCHECK_STORE`` does."""
    store = tmp_path / "other.sqlite"
    editor_sets(store, NODE, "prohibit")
    capsys.readouterr()
    assert search(capsys, index_dir, "--norm-type", "permit")[0]["node"] == NODE  # $PCHECK_STORE
    hits = search(capsys, index_dir, "--norm-type", "prohibit", "--store", str(store))
    assert hits[0]["node"] == NODE


def test_validated_norm_reaches_check(capsys, _own_store: Path, tmp_path: Path) -> None:
    def retrieved_line() -> str:
        code, out, err = run(
            capsys, "check", CASE, "--method", "offline-fast", "--json", "--index",
            str(tmp_path / "index"),
        )  # fmt: skip
        assert code == 0, err
        verdict = json.loads(out)
        return next(r for r in verdict["reasoning"] if r.startswith("Retrieved norms"))

    assert f"{CASE_NODE} (definition)" in retrieved_line()
    editor_sets(_own_store, CASE_NODE, "prohibit")  # the store of $PCHECK_STORE
    capsys.readouterr()
    assert f"{CASE_NODE} (prohibit)" in retrieved_line()


def test_index_follows_the_store_and_reindexes_only_what_changed(
    tmp_path: Path, index_dir: Path, shipped: KnowledgeBase
) -> None:
    """The browser's case: one knowledge base and index live on while an editor validates."""
    path = tmp_path / "s.sqlite"
    kb = kbmod.load(store=path)
    index = RetrievalIndex(kb, index_dir, embeddings=False)
    permits = Filters(frozenset({"permit"}))
    assert index.search(QUERY, "bm25", 5, permits)[0].node == NODE
    with NormStore(path) as store:
        store.edit(NODE, {"norm_type": "prohibit"}, "eve", 0, shipped.norms)
    assert NODE not in [h.node for h in index.search(QUERY, "bm25", 5, permits)]
    assert index.method("bm25").reused == len(index.docs) - 1  # one document re-indexed
    assert kb.norms[NODE].norm_type == "prohibit" and kb.machine_norms[NODE].norm_type == "permit"
    assert shipped.norms[NODE].norm_type == "permit"  # no store given: none is read


def test_browser_follows_the_store(
    _own_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: KnowledgeBase
) -> None:
    """The browser's knowledge base and index (loaded once per server) follow an edit made on
    the Norms page: the Check page's retrieved norms carry the validated type."""
    from privacy_checklist.app.ui import common
    from privacy_checklist.app.ui.pages import check

    monkeypatch.setenv("PCHECK_INDEX", str(tmp_path / "index"))

    def typed() -> dict[str, str]:
        return {hit["node"]: hit["norm_type"] for hit in check.retrieval_hits(QUERY)}

    assert typed()[NODE] == "permit"
    with common.store(readonly=False) as store:
        store.edit(NODE, {"norm_type": "prohibit"}, "eve", 0, shipped.norms)
    assert typed()[NODE] == "prohibit"
    assert common.index().norms[NODE].norm_type == "prohibit"


# --------------------------------------------------------------------------- fault 2


def test_import_of_an_old_export_overwrites_nothing(capsys, tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    old = tmp_path / "old.json"
    assert main(["norms", "--store", store, "export", "--out", str(old)]) == 0
    editor_sets(Path(store), NODE, "prohibit", editor="bob")  # bob's word, after the export
    capsys.readouterr()
    code, _, err = run(capsys, "norms", "--store", store, "import", str(old), "--editor", "ann")
    assert code == 1 and NODE in one_line_error(err) and "bob" in err
    with NormStore(store) as opened:
        record = opened.get(NODE)
        assert (record.version, record.status, record.updated_by) == (2, "validated", "bob")
        assert record.norm.norm_type == "prohibit" and len(opened.history(NODE)) == 2


def test_reimporting_an_identical_file_changes_nothing(capsys, tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    editor_sets(Path(store), NODE, "prohibit")
    exported = tmp_path / "now.json"
    assert main(["norms", "--store", store, "export", "--out", str(exported)]) == 0
    capsys.readouterr()
    code, out, _ = run(
        capsys, "norms", "--store", store, "import", str(exported), "--editor", "ann"
    )
    assert code == 0 and "Imported 0 norms" in out
    with NormStore(store) as opened:
        assert len(opened.history(NODE)) == 2 and opened.get(NODE).status == "validated"
        assert opened.counts() == {"validated": 1}


def test_import_applies_changed_entries_listing_their_fields_all_or_nothing(
    tmp_path: Path, shipped: KnowledgeBase
) -> None:
    baseline = shipped.norms
    other = "164.502(a)(1)(ii)"
    with NormStore(tmp_path / "s.sqlite") as store:
        data = store.export(baseline, shipped.tree)
        data[NODE]["ci"]["purpose"] = "treatment"  # edited in the file, at version 0
        data[other]["ci"]["purpose"] = "payment"
        store.edit(other, {"purpose": "operations"}, "bob", 0, baseline)  # meanwhile
        file = tmp_path / "edited.json"
        file.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(StaleEditError, match=r"1 of 1619 norms changed.*ii\) is at version 1"):
            store.import_file(file, "ann", baseline)
        assert store.get(NODE) is None  # all or nothing: the good entry was not applied
        del data[other]
        file.write_text(json.dumps(data), encoding="utf-8")
        result = store.import_file(file, "ann", baseline)
        assert result.imported == [NODE] and len(result.unchanged) == 1617
        assert store.history(NODE)[-1]["changed"] == "purpose"


# --------------------------------------------------------------------------- fault 3


def damaged_store(tmp_path: Path, shipped: KnowledgeBase) -> Path:
    """A real store holding version 4 of NODE, its later pages then partly overwritten (the
    header and first page intact: SQLite still opens it)."""
    path = tmp_path / "damaged.sqlite"
    baseline = shipped.norms
    with NormStore(path) as store:
        store.edit(NODE, {"purpose": "treatment"}, "alice", 0, baseline)
        for version in (1, 2, 3):
            store.set_status(NODE, "validated", "alice", version, baseline)
    data = bytearray(path.read_bytes())
    size = 4096
    assert len(data) >= 4 * size
    for page in range(1, len(data) // size):
        data[(page + 1) * size - 64 : (page + 1) * size] = b" " * 64
    path.write_bytes(bytes(data))
    assert sqlite3.connect(path).execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    return path


@pytest.mark.parametrize(
    "action",
    [
        ["show", NODE],
        ["show", NODE, "--json"],
        ["history", NODE],
        ["history", NODE, "--json"],
        ["edit", NODE, "--editor", "bob", "--version", "4", "--set", "purpose=payment"],
        ["validate", NODE, "--editor", "bob", "--version", "4"],
        ["reject", NODE, "--editor", "bob", "--version", "4"],
        ["export", "--out", "OUT"],
        ["import", "IN", "--editor", "bob"],
    ],
    ids=lambda a: "-".join(a[:1] + [x for x in a if x == "--json"]),
)
def test_damaged_store_is_named_by_every_action(
    capsys, tmp_path: Path, shipped: KnowledgeBase, action: list[str]
) -> None:
    path = damaged_store(tmp_path, shipped)
    before = path.read_bytes()
    good = tmp_path / "good.json"
    with NormStore(tmp_path / "fine.sqlite") as fine:
        good.write_text(json.dumps(fine.export(shipped.norms, shipped.tree)))
    argv = [str(tmp_path / "out.json") if a == "OUT" else str(good) if a == "IN" else a
            for a in action]  # fmt: skip
    code, out, err = run(capsys, "norms", "--store", str(path), *argv)
    assert code == 1 and out == ""
    assert f"the norm store at {path} is damaged: " in one_line_error(err)
    assert path.read_bytes() == before and not (tmp_path / "out.json").exists()


def test_damaged_store_stops_search_too(capsys, tmp_path: Path, shipped, index_dir) -> None:
    path = damaged_store(tmp_path, shipped)
    code, _, err = run(
        capsys, "search", QUERY, "--method", "bm25", "--store", str(path), "--index",
        str(index_dir),
    )  # fmt: skip
    assert code == 1 and f"the norm store at {path} is damaged" in one_line_error(err)
    with pytest.raises(KnowledgeBaseError, match="is damaged"):
        kbmod.load(store=path).norms  # noqa: B018


# --------------------------------------------------------------------------- fault 4

UNSHARE = shutil.which("unshare")


def _unshare_works() -> bool:
    if UNSHARE is None:
        return False
    probe = subprocess.run(
        [UNSHARE, "-rm", "sh", "-c", "mount --bind /tmp /tmp && mount -o remount,ro,bind /tmp"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare -rm and bind mounts")
def test_store_on_a_read_only_mount(tmp_path: Path, shipped: KnowledgeBase) -> None:
    """A real read-only file system: a read-only bind mount in a user namespace."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "norms.sqlite"
    with NormStore(path) as store:
        store.edit(NODE, {"purpose": "treatment"}, "alice", 0, shipped.norms)
    pcheck = f"{sys.executable} -m privacy_checklist.app.cli norms --store"
    lines = [
        f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} || exit 99",
        f"{pcheck} {path} show '{NODE}' --json > {tmp_path}/show.json; echo show $?",
        f"{pcheck} {path} export --out {tmp_path}/export.json >/dev/null; echo export $?",
        f"{pcheck} {path} edit '{NODE}' --editor bob --version 1 --set purpose=x; echo edit $?",
        f"{pcheck} {folder}/new/norms.sqlite validate '{NODE}' --editor bob --version 0;"
        " echo create $?",
        f"{pcheck} {path} export --out {folder}/e.json; echo out $?",
    ]
    done = subprocess.run(
        [UNSHARE, "-rm", "sh", "-c", "\n".join(lines)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    codes = dict(line.split() for line in done.stdout.split("\n") if line)
    assert codes == {"show": "0", "export": "0", "edit": "1", "create": "1", "out": "1"}
    assert json.loads((tmp_path / "show.json").read_text())["version"] == 1
    assert json.loads((tmp_path / "export.json").read_text())[NODE]["store_version"] == 1
    errors = done.stderr.splitlines()
    assert len(errors) == 3 and "Traceback" not in done.stderr, done.stderr
    assert "move it aside" not in done.stderr and "not a norm store" not in done.stderr
    assert f"the norm store at {path} is read-only (a read-only file system)" in errors[0]
    assert "cannot create the norm store" in errors[1] and "Read-only file system" in errors[1]
    assert "cannot write there (Read-only file system)" in errors[2]


SETPRIV = shutil.which("setpriv")
NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    """``argv`` run as a user with no rights of its own (root writes any folder)."""
    prefix = [SETPRIV, *NOBODY] if os.geteuid() == 0 and SETPRIV else []
    return subprocess.run(
        [*prefix, *argv],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ | {"HOME": "/tmp"},
    )


def _nobody_runs_python() -> bool:
    return os.geteuid() != 0 or (
        SETPRIV is not None
        and _as_nobody(sys.executable, "-c", "import privacy_checklist").returncode == 0
    )


@pytest.mark.skipif(not _nobody_runs_python(), reason="needs setpriv and a Python others can run")
def test_store_in_a_folder_that_cannot_be_written_is_read(shipped: KnowledgeBase) -> None:
    """SQLite cannot make a WAL store's shared-memory file in a folder without write access
    (SQLITE_READONLY_DIRECTORY): the store is read as it stands, and only changes refused."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="pcheck-ro-"))
    try:
        path = folder / "norms.sqlite"
        with NormStore(path) as store:
            store.edit(NODE, {"purpose": "treatment"}, "alice", 0, shipped.norms)
        folder.chmod(0o555)
        path.chmod(0o444)
        pcheck = [sys.executable, "-m", "privacy_checklist.app.cli", "norms", "--store", str(path)]
        shown = _as_nobody(*pcheck, "show", NODE, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["version"] == 1
        edit = [*pcheck, "edit", NODE, "--editor", "bob", "--version", "1", "--set", "purpose=x"]
        changed = _as_nobody(*edit)
        assert changed.returncode == 1 and "Traceback" not in changed.stderr
        assert "read-only" in changed.stderr and len(changed.stderr.strip().splitlines()) == 1
        checked = _as_nobody(
            sys.executable, "-m", "privacy_checklist.app.cli", "check", "--method", "offline-fast",
            "--store", str(path), "A nurse told a reporter that a patient has HIV.",
        )  # fmt: skip
        assert checked.returncode == 0, checked.stderr
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_store_and_export_under_a_regular_file(capsys, tmp_path: Path) -> None:
    """ENOTDIR: --store and --out under a regular file give one line, not an OSError."""
    file = tmp_path / "file.txt"
    file.write_text("not a folder")
    code, _, err = run(
        capsys, "norms", "--store", str(file / "norms.sqlite"), "edit", NODE, "--editor",
        "bob", "--version", "0", "--set", "purpose=x",
    )  # fmt: skip
    assert code == 1 and f"{file} is a file, not a folder" in one_line_error(err)
    code, _, err = run(
        capsys, "norms", "--store", str(tmp_path / "s.sqlite"), "export", "--out",
        str(file / "export.json"),
    )  # fmt: skip
    assert code == 1 and "cannot write there (Not a directory)" in one_line_error(err)
    assert not (tmp_path / "s.sqlite").exists()  # exporting did not create the store


# --------------------------------------------------------------------------- faults 5 to 7


def test_history_json_is_json(capsys, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    editor_sets(store, NODE, "prohibit")
    capsys.readouterr()
    code, out, _ = run(capsys, "norms", "--store", str(store), "history", NODE, "--json")
    rows = json.loads(out)
    assert code == 0 and [r["action"] for r in rows] == ["edit", "validate"]


def test_edit_against_a_version_that_never_existed(capsys, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    editor_sets(store, NODE, "prohibit", editor="bob")
    capsys.readouterr()
    code, _, err = run(
        capsys, "norms", "--store", str(store), "edit", NODE, "--editor", "ann", "--version",
        "99", "--set", "purpose=x",
    )  # fmt: skip
    assert code == 1 and "changed since" not in one_line_error(err)
    assert f"{NODE} has no version 99: its current version is 2" in err


def test_search_refuses_an_unknown_part(capsys, index_dir: Path) -> None:
    code, out, err = run(
        capsys, "search", QUERY, "--method", "bm25", "--part", "abc", "--index", str(index_dir)
    )
    assert code == 1 and out == ""
    assert "unknown part 'abc': the parts are 160, 162, 164" in one_line_error(err)
    code, out, _ = run(
        capsys, "search", QUERY, "--method", "bm25", "--part", "164", "--json", "--index",
        str(index_dir),
    )  # fmt: skip
    assert code == 0 and all(h["node"].startswith("164.") for h in json.loads(out))


# --------------------------------------------------------------------------- control characters


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--editor", "bob\x1b[2K\rv9 forged"], "an editor name is required"),
        (["--editor", "bob", "--comment", "ok\r\x1b[31mv9 by eve"], "U+000D"),
        (["--editor", "bob", "--comment", "right\u202etfel"], "U+202E"),
        (["--editor", "bob", "--comment", "a" * 100_000], "at most 2,000"),
        (["--editor", "bob", "--set", "purpose=care\x1b[1m"], "purpose holds the control"),
    ],
)
def test_control_characters_and_sizes_are_refused(capsys, tmp_path: Path, args, said) -> None:
    store = tmp_path / "s.sqlite"
    argv = ["norms", "--store", str(store), "edit", NODE, "--version", "0", *args]
    if "--set" not in args:
        argv += ["--set", "purpose=treatment"]
    code, _, err = run(capsys, *argv)
    assert code == 1 and said in one_line_error(err)
    with NormStore(store) as opened:
        assert opened.history(NODE) == []


def test_what_a_store_holds_is_shown_not_obeyed(capsys, tmp_path: Path) -> None:
    """A store written by other means (an older version, sqlite3 itself) with escapes in it:
    history and show print them as escapes, one line a change."""
    store = tmp_path / "s.sqlite"
    editor_sets(store, NODE, "prohibit")
    with sqlite3.connect(store) as db:
        db.execute("UPDATE history SET comment = ?, by = ?", ("x\r\x1b[2Kv9 forged", "e\x1bve"))
    capsys.readouterr()
    code, out, _ = run(capsys, "norms", "--store", str(store), "history", NODE)
    assert code == 0 and "\x1b" not in out and "\r" not in out
    assert "\\x1b[2K" in out and "\\r" in out and len(out.strip().splitlines()) == 2
