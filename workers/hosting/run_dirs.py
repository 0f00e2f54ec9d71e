"""Per-run folders under ``$PARTERRE_HOSTED_DIR/run``, each held by a lock while a process uses it (docs/hosted.md).

A gRPC run (validation or regression games, a rated seat) gets a folder for
its relay's socket and logs; its worker removes it when the run ends. A worker
killed with SIGKILL never does, so the folders are swept at the worker's start
and by its reaper (:func:`sweep_runs`). The sweep must never take a folder that
a live run of another worker process on the same machine still uses, so each
folder ``NAME`` has a lock file ``NAME.lock`` beside it, locked (``flock``,
exclusive) by the process that made it *before* the folder exists, and
inherited by the processes that use the folder (the runner, the seat: the
lock belongs to the open file, so it is held while any of them lives). The
sweep removes a folder only after taking its lock itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_SUFFIX = ".lock"
UNLOCKED_AGE_S = 86400.0
"""A folder with no lock file at all (made before the locks existed) is removed once this old."""


class RunDir:
    """A run folder and the open, locked lock file that keeps it from :func:`sweep_runs`.

    Attributes:
        path: the folder (``0755``, under a ``0711`` ``run`` folder).
        lock_fd: the lock file's descriptor: give it to the processes that use the folder
            (``subprocess.Popen(pass_fds=...)``) so the lock outlives this one.
    """

    def __init__(self, path: Path, lock_fd: int) -> None:
        self.path, self.lock_fd = path, lock_fd

    def remove(self) -> None:
        """Remove the folder and its lock file, then let the lock go (idempotent)."""
        shutil.rmtree(self.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(f"{self.path}{LOCK_SUFFIX}")
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


def make_run_dir(base: Path, prefix: str) -> RunDir:
    """A fresh folder ``base/<prefix><random>`` held by its lock (see the module doc).

    The lock file is made and locked first, and checked to be still linked (a sweep may have taken an
    unlocked one in between: then another name is tried), so a folder never exists unlocked while its
    maker lives."""
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    while True:
        fd, lock_path = tempfile.mkstemp(prefix=prefix, suffix=LOCK_SUFFIX, dir=base)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            linked = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            linked = False
        if linked:
            break
        os.close(fd)
    path = Path(lock_path[: -len(LOCK_SUFFIX)])
    path.mkdir(mode=0o755)
    path.chmod(0o755)
    return RunDir(path, fd)


def sweep_runs(base: Path, now: float | None = None) -> list[str]:
    """Remove the run folders under ``base`` that no live process holds; returns their names.

    A folder whose lock file can be locked here has no live user (its maker and every process it gave
    the lock to are gone): it is removed, then its lock file. A locked one is left. A folder with no
    lock file is removed once :data:`UNLOCKED_AGE_S` old (``now``: the clock, for tests)."""
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return removed
    for name in names:
        path = base / name
        if name.endswith(LOCK_SUFFIX):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # a live run
            try:
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    folder = base / name[: -len(LOCK_SUFFIX)]
                    if folder.is_dir() and not folder.is_symlink():
                        shutil.rmtree(folder, ignore_errors=True)
                        removed.append(folder.name)
                    os.unlink(path)
            except FileNotFoundError:
                pass  # its run just ended and removed it
            except OSError as exc:
                log.warning("hosted run folder %s: %s", name, exc)
            finally:
                os.close(fd)
        elif not (base / f"{name}{LOCK_SUFFIX}").exists():
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if os.path.isdir(path) and not os.path.islink(path) and now - st.st_mtime > UNLOCKED_AGE_S:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(name)
    if removed:
        log.info("removed %d hosted run folder(s) left by dead workers: %s", len(removed), ", ".join(removed))
    return removed
