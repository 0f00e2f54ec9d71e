"""A superseded dataset tar is kept 10 minutes from the moment a newer one appears, even to a download
that sweeps while the newer one is being put in place (web/datasets.py).

A download in another thread that sees the new tar the instant it is renamed into place sweeps the
folder; the old tar, written long ago, must already carry its "superseded now" mark then, or it is
removed at once and a download that chose it a moment before fails. Oracle: the file system (the old
tar is still there within the 10 minutes the docs promise).
"""

from __future__ import annotations

import os
import pathlib
import threading
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from web import datasets

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class _PausingOs:
    """``os`` for web.datasets, whose ``replace`` stops right after renaming the new tar into place."""

    def __init__(self) -> None:
        self.replaced = threading.Event()
        self.go = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def replace(self, src: Any, dst: Any) -> None:
        os.replace(src, dst)
        self.replaced.set()
        assert self.go.wait(10)


def test_an_old_tar_survives_a_sweep_that_sees_its_successor_the_moment_it_appears(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ladder.competition_dataset as cd
    from ladder import competition_final

    folder = tmp_path / "datasets"
    folder.mkdir(mode=0o700)
    old = folder / "competition-7-0123456789abcdef.tar"  # the table before a disqualification, written 2 days ago
    old.write_bytes(b"old dataset")
    os.utime(old, (NOW.timestamp() - 2 * 86400,) * 2)
    row = SimpleNamespace(place="1", bot_id=1, rating=0.0, low=-1.0, high=1.0, matches=3, standing="disqualified")
    monkeypatch.setattr(competition_final, "final_table", lambda pool, cid: [row])

    def write(pool: Any, cid: int, out: pathlib.Path, *, now: datetime) -> dict[str, Any]:
        out.mkdir()
        (out / "manifest.json").write_text("{}")
        return {}

    monkeypatch.setattr(cd, "write_dataset", write)
    pausing = _PausingOs()
    monkeypatch.setattr(datasets, "os", pausing)
    written: list[pathlib.Path] = []
    no_pool: Any = None  # the table and the writer above read no database
    writer = threading.Thread(target=lambda: written.append(datasets.dataset_tar(no_pool, folder, 7, NOW)))
    writer.start()
    try:
        assert pausing.replaced.wait(10)
        # another download, the same second: the new tar is there, it sweeps the folder
        current = datasets.dataset_tar(no_pool, folder, 7, NOW)
        assert current != old and current.exists()
    finally:
        pausing.go.set()
        writer.join(10)
    assert written == [current]
    assert old.exists(), "the superseded tar was removed the moment it was superseded, not 10 minutes later"
    assert old.read_bytes() == b"old dataset"
