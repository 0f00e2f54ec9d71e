"""Competitions' datasets as the site serves them: one tar per final table, written once, in a private folder.

The route is ``GET /api/competitions/{id}/dataset`` (:mod:`web.competitions`; docs/competitions.md, "The
results archive"); the dataset itself is written by :func:`ladder.competition_dataset.write_dataset`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pathlib
import shutil
import stat
import tarfile
import tempfile
import threading
from datetime import datetime

from fastapi import HTTPException
from psycopg_pool import ConnectionPool

from ladder import competition_final as final

log = logging.getLogger(__name__)

DATASET_BUILDS = threading.BoundedSemaphore(1)
"""Datasets one web process writes at once (each is every match of a competition, read and compressed)."""

SUPERSEDED_KEPT_S = 600
"""How long a tar stays after a newer final table's tar replaced it: a download that chose the old file
just before (its route returns the path; the response opens it a moment later) still finds it."""

DEAD_WRITE_S = 86400
"""A ``.writing-*`` folder not modified for this long was left by a process killed while writing (a day: a
write takes minutes, and the folder's own time changes only when an entry is made directly in it)."""


_FALLBACK_FOLDER: list[pathlib.Path] = []
"""The folder :func:`private_temp_folder` made when the usual one was taken (one per process)."""
_FALLBACK_LOCK = threading.Lock()


def ours_alone(folder: pathlib.Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) of this user that no one else may write."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def private_temp_folder() -> pathlib.Path:
    """``<temp>/parterre-datasets-<uid>``, this user's alone (mode 700): the datasets are a cache, rebuilt
    when missing, and the temporary folder is writable where the rest of the file system is read-only
    (docker-compose.yml). That name is known in advance, so another user of the machine may have taken it
    (a folder of theirs, one anyone may write, a link): then the process makes a folder of its own with a
    name no one could guess (``tempfile.mkdtemp``) and keeps it, rather than refusing every download."""
    folder = pathlib.Path(tempfile.gettempdir()) / f"parterre-datasets-{os.getuid()}"
    with contextlib.suppress(OSError):  # there already (ours from before, or taken), or the temporary folder refuses
        folder.mkdir(mode=0o700)
    if ours_alone(folder):
        return folder
    with _FALLBACK_LOCK:
        if not _FALLBACK_FOLDER or not ours_alone(_FALLBACK_FOLDER[0]):
            _FALLBACK_FOLDER[:] = [pathlib.Path(tempfile.mkdtemp(prefix=f"parterre-datasets-{os.getuid()}-"))]
            log.warning("%s is not a folder of this user's alone: competition datasets go to %s", folder,
                        _FALLBACK_FOLDER[0])
        return _FALLBACK_FOLDER[0]


def dataset_tar(pool: ConnectionPool, folder: pathlib.Path, competition_id: int, now: datetime) -> pathlib.Path:
    """The final competition's dataset as a tar in ``folder``, written once per final table.

    The file is named by the final table's fingerprint: a disqualification after the freeze
    recomputes the table (``ladder.competition_final.recompute_final``), and the next download
    writes a new tar; the old one stays :data:`SUPERSEDED_KEPT_S` more (a download may be about to
    open it) and a later download removes it (:func:`_sweep`, by ``now``, the site's clock). The tar
    is written next to its final name and renamed into place, so a reader never sees half a file;
    parallel first downloads in one process are one write (:data:`DATASET_BUILDS`), the others
    answered 503 with ``Retry-After``.
    """
    from ladder.competition_dataset import write_dataset

    rows = final.final_table(pool, competition_id)
    fingerprint = hashlib.sha256(repr([(r.place, r.bot_id, r.rating, r.low, r.high, r.matches, r.standing)
                                       for r in rows]).encode()).hexdigest()[:16]
    path = folder / f"competition-{competition_id}-{fingerprint}.tar"
    if path.exists():
        _sweep(folder, competition_id, path, now.timestamp())
        return path
    if not DATASET_BUILDS.acquire(blocking=False):
        raise HTTPException(503, "another dataset is being written; try again in a few seconds",
                            headers={"Retry-After": "5"})
    try:
        if path.exists():  # written while this request waited for the database
            return path
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder, prefix=".writing-") as tmp:
            source = pathlib.Path(tmp) / f"competition-{competition_id}"
            write_dataset(pool, competition_id, source, now=now)
            part = pathlib.Path(tmp) / "dataset.tar"
            with tarfile.open(part, mode="w") as tar:
                tar.add(source, arcname=source.name)
            # superseded now: its modification time says since when (see _sweep); marked before the new
            # tar is in place, as a download that sees the new one sweeps at once
            for old in folder.glob(f"competition-{competition_id}-*.tar"):
                if old != path:
                    with contextlib.suppress(OSError):
                        os.utime(old, (now.timestamp(), now.timestamp()))
            os.replace(part, path)
    finally:
        DATASET_BUILDS.release()
    return path


def _sweep(folder: pathlib.Path, competition_id: int, current: pathlib.Path, now_s: float) -> None:
    """Remove the competition's tars superseded more than :data:`SUPERSEDED_KEPT_S` ago and the
    ``.writing-*`` folders of processes killed mid-write (untouched for :data:`DEAD_WRITE_S`)."""
    for old in folder.glob(f"competition-{competition_id}-*.tar"):
        with contextlib.suppress(OSError):
            if old != current and old.stat().st_mtime < now_s - SUPERSEDED_KEPT_S:
                old.unlink()
    for dead in folder.glob(".writing-*"):
        with contextlib.suppress(OSError):
            if dead.lstat().st_mtime < now_s - DEAD_WRITE_S and ours_alone(dead):
                shutil.rmtree(dead)
