"""Replace an output (a knowledge base folder, an exported file) so that nothing is lost and
nothing is left half-written, whenever the process dies.

How, and why this way:

- The new copy is written beside the target, in ``.NAME.tmp-XXXX`` (same folder, so the same
  file system), and only then switched into place.
- The switch is one atomic step: on Linux ``renameat2(RENAME_EXCHANGE)`` swaps the new folder
  and the old one in a single system call, so at every instant ``NAME`` is either the old,
  complete copy or the new, complete one. The old copy, now under the temporary name, is then
  deleted. ``NAME`` stays a plain folder of plain files: ``kg/builtin`` is committed to git and
  read by :func:`importlib.resources`, where a symlink or versioned folders would not survive.
- Where the kernel or the file system cannot exchange (macOS, some network file systems), the
  old copy is renamed to ``.NAME.old-XXXX`` and the new one into place. A death between those
  two renames is repaired by the next write to ``NAME``: it renames ``.NAME.old-*`` back when
  ``NAME`` is missing.
- Leftovers: every temporary holds an ``flock`` for as long as its writer lives; the kernel
  drops the lock when the process dies, even by SIGKILL. The next write to the same ``NAME``
  removes the unlocked ``.NAME.tmp-*`` and ``.NAME.old-*`` it finds and leaves a live writer's
  alone.
- SIGTERM is turned into :class:`Terminated` (a ``KeyboardInterrupt``) while writing, so it
  cleans up exactly as Ctrl-C does. During the switch itself both signals wait until it is
  done; one that came then is raised afterwards as :class:`InterruptedAfterCommit`, so the
  caller can say truthfully that the new copy is in place.
- A folder is replaced only when it is empty or the caller's ``replaceable`` check says it is
  its own kind of output (a knowledge base); anything else raises :class:`OutputRefused`
  unless ``force`` is given. The folder the process runs in (or one holding it) is never
  replaced: the shell would be left in a deleted folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

try:  # POSIX only; without it leftovers are never removed (a live writer's could be)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class OutputRefused(Exception):
    """The target exists and is not something this writer may replace.

    Attributes:
        path: the target as given.
        reason: why it may not be replaced (what it holds).
        forceable: whether ``force=True`` would replace it.
    """

    def __init__(self, path: Path, reason: str, *, forceable: bool = True) -> None:
        self.path, self.reason, self.forceable = path, reason, forceable
        way_out = "choose another place" + (", or force the replacement" if forceable else "")
        super().__init__(f"{path}: not replaced, {reason}; {way_out}")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same clean-up runs."""


class InterruptedAfterCommit(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived while the new copy was being switched in; it is in place."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"interrupted after {path} was written")


# --------------------------------------------------------------------------- signals


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated`, so ``finally`` blocks run.

    Python's default SIGTERM action kills the process on the spot and leaves temporaries
    behind. Signal handlers can only be set from the main thread; elsewhere this does nothing.
    """
    if not _in_main_thread():
        yield
        return

    def handler(_signum: int, _frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_held(path: Path) -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the new copy is switched in and the old one removed.

    An interruption in the middle would leave the caller unable to tell whether the target was
    replaced; a signal that came is raised once the switch is complete instead.
    """
    if not _in_main_thread():
        yield
        return
    pending: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, _frame: pending.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if pending:
        raise InterruptedAfterCommit(path)


# --------------------------------------------------------------------------- locks and leftovers


def _lock(path: Path, *, blocking: bool = True) -> int | None:
    """Open ``path`` (a folder or a file) and take an exclusive ``flock`` on it.

    Returns:
        The descriptor holding the lock (close it to release), or ``None`` when ``blocking`` is
        false and another live process holds it, or when locks are unavailable.
    """
    if fcntl is None:  # pragma: no cover - Windows
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _leftover_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(name)}\.(tmp|old)-[A-Za-z0-9_]+")


def leftovers(target: Path) -> list[Path]:
    """The temporaries of writes to ``target`` found beside it (live or dead)."""
    target = Path(target)
    pattern = _leftover_pattern(target.name)
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return []
    return sorted(p for p in entries if pattern.fullmatch(p.name))


def clean_leftovers(target: Path) -> list[Path]:
    """Repair and remove what dead writers of ``target`` left behind.

    A ``.NAME.old-*`` is the previous copy of a writer that died between its two renames (only
    where the atomic exchange is unavailable): when ``target`` is missing it is renamed back.
    Every other unlocked ``.NAME.tmp-*`` or ``.NAME.old-*`` is deleted; locked ones belong to a
    live writer and are left alone.

    Returns:
        The leftovers handled (restored or deleted).
    """
    if fcntl is None:  # pragma: no cover - Windows: cannot tell live from dead
        return []
    target = Path(target)
    handled = []
    found = leftovers(target)
    for path in sorted(found, key=lambda p: ".old-" not in p.name):  # restore before deleting
        try:
            fd = _lock(path, blocking=False)
        except OSError:  # vanished meanwhile, or unreadable: not ours to judge
            continue
        if fd is None:
            continue
        try:
            if ".old-" in path.name and not os.path.lexists(target):
                os.rename(path, target)
            else:
                _remove(path)
            handled.append(path)
        finally:
            _release(fd)
    return handled


# --------------------------------------------------------------------------- the switch


def _exchange(new: Path, old: Path) -> bool:
    """Swap two paths in one system call; ``False`` when the system cannot."""
    libc_rename = getattr(_libc(), "renameat2", None) if os.name == "posix" else None
    if libc_rename is None:
        return False
    done = libc_rename(
        _AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(old), ctypes.c_uint(_RENAME_EXCHANGE)
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(old))


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None


def _switch(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; whatever stood there is deleted once ``new`` is in place."""
    if not os.path.lexists(target):
        os.rename(new, target)
        return
    if _exchange(new, target):
        _remove(new)  # the old copy, now under the temporary name
        return
    old = target.with_name(f".{target.name}.old-{secrets.token_hex(4)}")
    fd = _lock(target) if target.is_dir() else None  # so clean_leftovers leaves it alone
    try:
        os.replace(target, old)
        try:
            os.replace(new, target)
        except BaseException:
            os.replace(old, target)  # put the previous copy back
            raise
        _remove(old)
    finally:
        _release(fd)


def _fsync_tree(path: Path) -> None:
    """Flush the new copy to disk before the switch, so a power cut cannot leave it empty."""
    paths = [path] if path.is_file() else [*sorted(path.rglob("*")), path]
    for item in paths:
        if item.is_symlink():
            continue
        fd = os.open(item, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError:  # some file systems cannot fsync a folder; the data is still written
            pass
        finally:
            os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _refuse_working_folder(target: Path) -> None:
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return
    if cwd == target or target in cwd.parents:
        raise OutputRefused(
            target, "it is the current folder or holds it (run from elsewhere)", forceable=False
        )


def check_dir_target(
    target: Path | str,
    replaceable: Callable[[Path], str | None],
    *,
    force: bool = False,
) -> Path:
    """Check, writing nothing, that :func:`replace_dir` may put a folder at ``target``.

    Callers with long work before the write (an ingest) call it first, so a refusal comes at
    once rather than after the work.

    Returns:
        ``target`` as an absolute path.

    Raises:
        OutputRefused: as :func:`replace_dir`.
        NotADirectoryError: a parent of ``target`` is a file.
    """
    given = Path(target)
    target = given.resolve()
    _refuse_working_folder(target)
    if not force and os.path.lexists(target):
        if not target.is_dir():
            raise OutputRefused(given, "it is a file, not a folder")
        reason = replaceable(target) if any(target.iterdir()) else None
        if reason is not None:
            raise OutputRefused(given, reason)
    _check_parents(target)
    return target


def _check_parents(target: Path) -> None:
    """Raise when the nearest existing parent of ``target`` is a file (nothing could be made)."""
    parent = target.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{parent} is a file, not a folder", str(parent))


def replace_dir(
    target: Path | str,
    fill: Callable[[Path], object],
    replaceable: Callable[[Path], str | None],
    *,
    force: bool = False,
) -> Path:
    """Write a folder with ``fill`` and put it at ``target`` in one atomic step.

    Args:
        target: the folder to write (its parents are created).
        fill: writes the files into the temporary folder it is given.
        replaceable: for an existing, non-empty ``target``, ``None`` when it may be replaced,
            else the reason why not (what it holds).
        force: replace whatever stands at ``target`` (except the current folder).

    Returns:
        The absolute path written.

    Raises:
        OutputRefused: ``target`` holds something else and ``force`` is false.
        OSError: the place cannot be written; ``target`` is then as it was.
    """
    target = check_dir_target(target, replaceable, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(target)
    with sigterm_as_interrupt():
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        fd: int | None = None
        try:
            fd = _lock(tmp)
            tmp.chmod(0o777 & ~_umask())
            fill(tmp)
            _fsync_tree(tmp)
            with _signals_held(target):
                _switch(tmp, target)
                _fsync_dir(target.parent)
        except BaseException:
            _remove(tmp)  # the unfinished copy; after the switch there is nothing left here
            raise
        finally:
            _release(fd)
    return target


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_file(target: Path | str, fill: Callable[[Path], object]) -> Path:
    """Write a file with ``fill`` and put it at ``target`` with one rename.

    Args:
        target: the file to write (its parents are created); an existing file is replaced.
        fill: writes the content to the temporary path it is given.

    Returns:
        ``target``.

    Raises:
        OutputRefused: ``target`` is a folder.
        OSError: the place cannot be written; ``target`` is then as it was.
    """
    target = Path(target)
    if target.is_dir():
        raise OutputRefused(target, "it is a folder (give a file name)", forceable=False)
    _check_parents(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(target)
    with sigterm_as_interrupt():
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.tmp-", dir=target.parent)
        tmp = Path(name)
        try:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            os.chmod(handle, 0o666 & ~_umask())
            fill(tmp)
            _fsync_tree(tmp)
            with _signals_held(target):
                os.replace(tmp, target)
                _fsync_dir(target.parent)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finally:
            os.close(handle)
    return target
