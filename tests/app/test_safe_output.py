"""Writing a knowledge base or an export: nothing of the user's lost, nothing half-written.

Deaths are real: a child process is killed (SIGKILL, SIGTERM, SIGINT) at the moment under test,
held there by wrapping one function in the child. Most tests ingest only Part 160 of the real
eCFR pages without graphs (about a second); the swap itself is the same for every size.
A read-only folder is a real read-only bind mount in a private mount namespace (``unshare
-m``, we run as root, which ignores file permissions); a folder under a regular file gives the
same kind of error (``ENOTDIR``) everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.ingest.ecfr import load_page
from privacy_checklist.kg import atomic
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.kb import KnowledgeBase

PCHECK = Path(sys.executable).with_name("pcheck")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def hidden(folder: Path) -> list[str]:
    """Temporaries and old copies beside the outputs in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def part160(shared: Path) -> str:
    return str(shared / "hipaa" / "ecfr-title45-part160.html")


@pytest.fixture(scope="module")
def small(part160: str) -> KnowledgeBase:
    """The knowledge base of Part 160 alone (real text, small enough to write often)."""
    return kbmod.build([load_page(part160)])


def ingest(part160: str, out: Path | str, *extra: str) -> list[str]:
    return ["ingest", "--source", part160, "--out", str(out), "--no-graphs", *extra]


# --------------------------------------------------------------------------- fault 1: refusals


def test_ingest_refuses_a_folder_of_user_files(
    part160: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "userdocs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("three years of work")
    (docs / "notes.md").write_text("# notes")
    before = snapshot(docs)
    code, out, err = run(capsys, *ingest(part160, docs))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(docs) in err and "--force" in err and "another --out" in err
    assert "notes.md, thesis.txt" in err
    assert snapshot(docs) == before and hidden(tmp_path) == []
    # the refusal comes before the pages are read: a missing source is not even looked at
    code, _, err = run(capsys, *ingest(str(tmp_path / "missing.html"), docs))
    assert code == 1 and "not replaced" in err
    # --force is the way out it names
    code, out, _ = run(capsys, *ingest(part160, docs, "--force"))
    assert code == 0 and "593 nodes" in out
    assert {p.name for p in docs.iterdir()} == {*kbmod.JSON_FILES, "tree.graphml", "tree.ttl"}
    assert kbmod.load(docs).tree["160.103"].kind == "section"


def test_ingest_refuses_the_current_folder(
    part160: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "thesis.txt").write_text("three years of work")
    monkeypatch.chdir(proj)
    code, _, err = run(capsys, *ingest(part160, "."))
    assert code == 1 and err.count("\n") == 1 and "current folder" in err
    assert (proj / "thesis.txt").read_text() == "three years of work"
    # not even a knowledge base in the current folder, or its parent, nor with --force: the
    # shell would be left standing in a deleted folder
    (proj / "thesis.txt").unlink()
    assert run(capsys, *ingest(part160, str(tmp_path / "elsewhere")))[0] == 0
    for name in os.listdir(tmp_path / "elsewhere"):
        shutil.copy(tmp_path / "elsewhere" / name, proj / name)
    before = snapshot(proj)
    for out in (".", ".."):
        code, _, err = run(capsys, *ingest(part160, out, "--force"))
        assert code == 1 and "current folder" in err and "--force" not in err
    assert snapshot(proj) == before and Path.cwd() == proj


def test_ingest_refuses_an_existing_file(
    part160: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    code, _, err = run(capsys, *ingest(part160, notes))
    assert code == 1 and err.count("\n") == 1 and "is a file" in err and "--force" in err
    assert notes.read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_what_may_be_replaced(small: KnowledgeBase, tmp_path: Path) -> None:
    """Empty folders and knowledge bases are replaced; a knowledge base with a user's file in
    it, or a folder that only looks like one, is not."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert small.save(empty, graph_files=False) == empty
    assert kbmod.load(empty).tree["160.103"].kind == "section"
    small.save(empty)  # a knowledge base is replaced: now with its graph files
    assert (empty / "tree.graphml").exists()
    (empty / "index").mkdir()  # the retrieval cache built from it goes with it
    small.save(empty, graph_files=False)
    assert not (empty / "tree.graphml").exists() and not (empty / "index").exists()

    (empty / "thesis.txt").write_text("mine")
    with pytest.raises(atomic.OutputRefused, match=r"also holds other files \(thesis.txt\)"):
        small.save(empty)
    assert (empty / "thesis.txt").read_text() == "mine"

    lookalike = tmp_path / "lookalike"
    lookalike.mkdir()
    (lookalike / "tree.json").write_text("{}")  # another program's tree.json
    with pytest.raises(atomic.OutputRefused, match="not a knowledge base"):
        small.save(lookalike)
    assert (lookalike / "tree.json").read_text() == "{}"
    assert hidden(tmp_path) == []


# --------------------------------------------------------------------------- fault 2: deaths


def child(script: str, *args: str) -> subprocess.Popen[str]:
    """A Python child running ``script`` with ``args``; Ctrl-C raises KeyboardInterrupt in it
    as in a terminal (a background shell may have started us with SIGINT ignored)."""
    prelude = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    return subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    """Wait until the child has written ``path`` (its content, not only the empty file that
    write_text makes first: on a busy machine the path can be read in between)."""
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()):
        if proc.poll() is not None:
            raise AssertionError(f"child ended early ({proc.returncode}): {proc.stderr.read()}")
        assert time.monotonic() < deadline, "child never reached the point under test"
        time.sleep(0.05)


DIE_AT_SECOND_RENAME = """
    import os, signal, sys
    from privacy_checklist.ingest.ecfr import load_page
    from privacy_checklist.kg import kb as kbmod

    kb = kbmod.build([load_page(sys.argv[1])])
    real, moved = os.replace, []

    def dying(src, dst):
        if os.path.isdir(src):
            moved.append(src)
            if len(moved) == 2:  # the old copy is moved away, the new one not yet in place
                os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)

    os.replace = dying
    kb.save(sys.argv[2], graph_files=False)
    print("saved")
"""


def test_death_between_renames_leaves_a_knowledge_base(
    small: KnowledgeBase, part160: str, tmp_path: Path
) -> None:
    """The process is killed at the second of two renames, if the switch takes two."""
    out = small.save(tmp_path / "kb")
    proc = child(DIE_AT_SECOND_RENAME, part160, str(out))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and stdout == "saved\n", stderr
    assert kbmod.load(out).tree["160.103"].kind == "section"
    assert not (out / "tree.graphml").exists()  # the new copy, written without graph files
    assert not out.is_symlink() and hidden(tmp_path) == []


DIE_WITHOUT_EXCHANGE = """
    import os, signal, sys
    from privacy_checklist.ingest.ecfr import load_page
    from privacy_checklist.kg import atomic
    from privacy_checklist.kg import kb as kbmod

    kb = kbmod.build([load_page(sys.argv[1])])
    atomic._exchange = lambda new, old: False  # a file system that cannot exchange
    real, moved = os.replace, []

    def dying(src, dst):
        if os.path.isdir(src):
            moved.append(src)
            if len(moved) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)

    os.replace = dying
    kb.save(sys.argv[2], graph_files=False)
"""


def test_death_between_renames_without_exchange_is_repaired(
    small: KnowledgeBase, part160: str, tmp_path: Path
) -> None:
    """Where the atomic exchange is missing, the next write puts the previous copy back."""
    out = small.save(tmp_path / "kb")
    before = snapshot(out)
    proc = child(DIE_WITHOUT_EXCHANGE, part160, str(out))
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    assert [n.split("-")[0] for n in hidden(tmp_path)] == [".kb.old", ".kb.tmp"]
    assert atomic.clean_leftovers(out)  # what the next write does first
    assert snapshot(out) == before and hidden(tmp_path) == []
    small.save(out, graph_files=False)
    assert kbmod.load(out).tree["160.103"].kind == "section" and hidden(tmp_path) == []


DIE_AFTER_EXCHANGE = """
    import os, signal, sys
    from privacy_checklist.ingest.ecfr import load_page
    from privacy_checklist.kg import atomic
    from privacy_checklist.kg import kb as kbmod

    kb = kbmod.build([load_page(sys.argv[1])])
    real = atomic._exchange

    def exchange_then_die(new, old):
        real(new, old)
        os.kill(os.getpid(), signal.SIGKILL)

    atomic._exchange = exchange_then_die
    kb.save(sys.argv[2], graph_files=False)
"""


def test_death_right_after_the_switch(small: KnowledgeBase, part160: str, tmp_path: Path) -> None:
    out = small.save(tmp_path / "kb")
    proc = child(DIE_AFTER_EXCHANGE, part160, str(out))
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert kbmod.load(out).tree["160.103"].kind == "section"
    assert not (out / "tree.graphml").exists()  # the new copy is in place
    assert [n.split("-")[0] for n in hidden(tmp_path)] == [".kb.tmp"]  # the old one, to delete
    small.save(out)
    assert hidden(tmp_path) == []


PAUSE_IN_WRITE = """
    import pathlib, sys, time
    from privacy_checklist.app.cli import main
    from privacy_checklist.kg.kb import KnowledgeBase

    original = KnowledgeBase._write

    def paused(self, directory, graph_files):
        original(self, directory, graph_files)
        pathlib.Path(sys.argv[1]).write_text(str(directory))
        time.sleep(120)

    KnowledgeBase._write = paused
    sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_or_terminate_leaves_nothing(
    sig: signal.Signals, small: KnowledgeBase, part160: str, tmp_path: Path
) -> None:
    """Ctrl-C (as before) and SIGTERM (new) while the new copy is being written."""
    out = small.save(tmp_path / "kb")
    before = snapshot(out)
    ready = tmp_path / "ready"
    proc = child(PAUSE_IN_WRITE, str(ready), *ingest(part160, out))
    wait_for(ready, proc)
    assert Path(ready.read_text()).is_dir()  # the temporary, complete, not yet switched in
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert stderr.strip().splitlines()[-1] == "pcheck ingest: interrupted; nothing was changed"
    assert "Traceback" not in stderr
    assert snapshot(out) == before
    assert hidden(tmp_path) == []


def test_sigkill_leftovers_are_removed_but_a_live_writers_are_not(
    small: KnowledgeBase, part160: str, tmp_path: Path
) -> None:
    out = small.save(tmp_path / "kb")
    killed_ready, live_ready = tmp_path / "killed", tmp_path / "live"
    killed = child(PAUSE_IN_WRITE, str(killed_ready), *ingest(part160, out))
    wait_for(killed_ready, killed)
    killed.kill()
    killed.communicate(timeout=60)
    dead_tmp = Path(killed_ready.read_text())
    assert dead_tmp.is_dir() and dead_tmp.name.startswith(".kb.tmp-")  # what SIGKILL leaves

    live = child(PAUSE_IN_WRITE, str(live_ready), *ingest(part160, out))
    try:
        wait_for(live_ready, live)
        live_tmp = Path(live_ready.read_text())
        small.save(out, graph_files=False)  # the next write to the same place
        assert not dead_tmp.exists()
        assert live_tmp.is_dir() and (live_tmp / "tree.json").exists()  # still being written
    finally:
        live.terminate()
        live.communicate(timeout=60)
    assert live.returncode == 130 and hidden(tmp_path) == []
    assert kbmod.load(out).tree["160.103"].kind == "section"


def test_signal_during_the_switch_is_raised_after_it(
    small: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of the switch waits for it, then says the new copy is in place."""
    out = small.save(tmp_path / "kb")
    real = atomic._exchange

    def exchange_and_interrupt(new: Path, old: Path) -> bool:
        os.kill(os.getpid(), signal.SIGINT)
        return real(new, old)

    monkeypatch.setattr(atomic, "_exchange", exchange_and_interrupt)
    with pytest.raises(atomic.InterruptedAfterCommit):
        small.save(out, graph_files=False)
    assert not (out / "tree.graphml").exists() and hidden(tmp_path) == []
    assert kbmod.load(out).tree["160.103"].kind == "section"


# --------------------------------------------------------------------------- fault 3: unwritable


def test_unwritable_places_print_one_line(
    part160: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    for args in (
        ingest(part160, notes / "kb"),
        ["export", "--format", "json", "--out", str(notes / "tree.json")],
    ):
        code, out, err = run(capsys, *args)
        assert code == 1 and out == "" and err.count("\n") == 1, err
        assert "is a file, not a folder" in err and "choose another --out" in err
    code, _, err = run(capsys, "export", "--format", "json", "--out", str(tmp_path))
    assert code == 1 and "is a folder" in err and err.count("\n") == 1
    assert notes.read_text() == "my notes" and sorted(os.listdir(tmp_path)) == ["notes.txt"]


def _can_mount_read_only(folder: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    mount = f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}'"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True, check=False)
    return probe.returncode == 0


def test_read_only_folder_prints_one_line(part160: str, tmp_path: Path) -> None:
    """A real read-only file system: ``unshare -m`` and a read-only bind mount of tmp_path."""
    if not _can_mount_read_only(tmp_path):
        pytest.skip("needs unshare -m and mount (a private mount namespace)")
    ro = tmp_path / "ro"
    ro.mkdir()
    script = (
        f"mount --bind '{ro}' '{ro}' && mount -o remount,bind,ro '{ro}' && "
        f"'{PCHECK}' ingest --source '{part160}' --no-graphs --out '{ro}/kb'; echo \"rc=$?\"; "
        f"'{PCHECK}' export --format ttl --out '{ro}/tree.ttl'; echo \"rc=$?\""
    )
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.stdout.splitlines() == ["rc=1", "rc=1"], result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("pcheck")]
    assert "Traceback" not in result.stderr and len(lines) == 2, result.stderr
    assert all("Read-only file system" in line and "choose another --out" in line for line in lines)
    assert os.listdir(ro) == []


def test_export_replaces_a_file_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "tree.json"
    target.write_text("old export")
    (tmp_path / ".tree.json.tmp-dead00").write_text("left by a killed export")
    code, out, _ = run(capsys, "export", "--format", "json", "--out", str(target))
    assert code == 0 and "Wrote" in out
    assert len(json.loads(target.read_text())["nodes"]) == 2274
    assert sorted(os.listdir(tmp_path)) == ["tree.json"]
