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
    writes a new tar and removes the old one. The tar is written next to its final name and renamed
    into place, so a reader never sees half a file; parallel first downloads in one process are one
    write (:data:`DATASET_BUILDS`), the others answered 503 with ``Retry-After``.
    """
    from ladder.competition_dataset import write_dataset

    rows = final.final_table(pool, competition_id)
    fingerprint = hashlib.sha256(repr([(r.place, r.bot_id, r.rating, r.low, r.high, r.matches, r.standing)
                                       for r in rows]).encode()).hexdigest()[:16]
    path = folder / f"competition-{competition_id}-{fingerprint}.tar"
    if path.exists():
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
            os.replace(part, path)
        for old in folder.glob(f"competition-{competition_id}-*.tar"):
            if old != path:
                old.unlink(missing_ok=True)
    finally:
        DATASET_BUILDS.release()
    return path
