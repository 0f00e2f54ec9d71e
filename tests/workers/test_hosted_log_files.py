"""The worker's own hosted log files are deleted some days after their last write (docs/hosted.md,
"Logs"); the settings that say how long refuse nonsense.

Oracle: the files this test writes itself, with modification times it sets, and what is left on
disk afterwards.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from workers.hosting import logs as hosted_logs
from workers.hosting.logs import prune_logs, prune_logs_at_times
from workers.hosting.validation import hosted_settings

DAY = 86400.0


def _write(path: Path, text: str, age_days: float, now: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (now - age_days * DAY, now - age_days * DAY))
    return path


def test_files_older_than_the_limit_go_and_the_rest_stay(tmp_path: Path) -> None:
    now = time.time()
    logs = tmp_path / "logs"
    old = [_write(logs / "match-1-bot-7.log", "old stderr", 15, now),
           _write(logs / "v3-validation.log", "old validation", 30, now),
           _write(logs / "adapter" / "deep" / "note.log", "old note", 20, now)]
    fresh = [_write(logs / "match-2-bot-7.log", "fresh stderr", 13.9, now),
             _write(logs / "adapter" / "note-now.log", "now", 0, now)]
    assert prune_logs(logs, 14 * DAY, now=now) == (3, 0)
    assert not any(p.exists() for p in old)
    assert all(p.exists() for p in fresh)
    assert (logs / "adapter" / "deep").is_dir()  # folders stay
    assert prune_logs(logs, 14 * DAY, now=now) == (0, 0)


def test_a_link_is_removed_as_a_link_and_its_target_is_never_touched(tmp_path: Path) -> None:
    """A symbolic link in the log folder (to a file or a folder elsewhere) is not followed."""
    now = time.time()
    outside = _write(tmp_path / "outside" / "precious.txt", "keep me", 100, now)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "to-file").symlink_to(outside)
    (logs / "to-folder").symlink_to(outside.parent, target_is_directory=True)
    for link in ("to-file", "to-folder"):
        os.utime(logs / link, (now - 100 * DAY, now - 100 * DAY), follow_symlinks=False)
    assert prune_logs(logs, 14 * DAY, now=now) == (2, 0)
    assert not os.path.lexists(logs / "to-file") and not os.path.lexists(logs / "to-folder")
    assert outside.read_text() == "keep me"


def test_a_log_folder_that_is_a_link_is_not_pruned_at_all(tmp_path: Path) -> None:
    """An operator pointed ``logs`` at another folder (``/var/log``, a bigger disk): nothing there is
    touched, and the refusal is counted."""
    now = time.time()
    elsewhere = [_write(tmp_path / "var-log" / "syslog.1", "old", 30, now),
                 _write(tmp_path / "var-log" / "nginx" / "access.log.2", "old", 30, now)]
    logs = tmp_path / "hosted" / "logs"
    logs.parent.mkdir()
    logs.symlink_to(tmp_path / "var-log", target_is_directory=True)
    assert prune_logs(logs, 14 * DAY, now=now) == (0, 1)
    assert all(p.read_text() == "old" for p in elsewhere)


def test_a_file_that_cannot_be_removed_does_not_stop_the_rest(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    now = time.time()
    logs = tmp_path / "logs"
    old = [_write(logs / f"match-{i}-bot-1.log", "old", 20, now) for i in range(5)]
    real_unlink = os.unlink

    def unlink(path: Any, *, dir_fd: int | None = None) -> None:
        if str(path) == old[2].name:
            raise PermissionError(13, "Permission denied", str(path))
        real_unlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", unlink)
    assert prune_logs(logs, 14 * DAY, now=now) == (4, 1)
    assert [p.exists() for p in old] == [False, False, True, False, False]


def test_a_missing_folder_is_nothing_to_prune(tmp_path: Path) -> None:
    assert prune_logs(tmp_path / "never-made", DAY) == (0, 0)


def test_a_worker_looks_at_most_once_an_hour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosted_logs, "_last_prune", {})
    now = time.time()
    logs = tmp_path / "logs"
    first = _write(logs / "a.log", "old", 20, now)
    thread = prune_logs_at_times(logs, {"log_days": 14})  # in the background: a match does not wait
    assert thread is not None
    thread.join(10)
    assert not first.exists()
    second = _write(logs / "b.log", "old too", 20, now)
    assert prune_logs_at_times(logs, {"log_days": 14}) is None  # within the hour: not looked at again
    assert second.exists()
    monkeypatch.setitem(hosted_logs._last_prune, logs, time.monotonic() - hosted_logs.PRUNE_EVERY_S - 1)
    thread = prune_logs_at_times(logs, {"log_days": 14})
    assert thread is not None
    thread.join(10)
    assert not second.exists()


def test_the_settings_refuse_nonsense() -> None:
    assert hosted_settings({})["logs_kept"] == 200 and hosted_settings({})["log_days"] == 14
    assert hosted_settings({"PARTERRE_HOSTED_LOG_DAYS": "inf"})["log_days"] == float("inf")  # never
    for env, why in (({"PARTERRE_HOSTED_LOGS_KEPT": "0"}, "PARTERRE_HOSTED_LOGS_KEPT must be between 1 and"),
                     ({"PARTERRE_HOSTED_LOGS_KEPT": str(10**21)}, "PARTERRE_HOSTED_LOGS_KEPT must be between"),
                     ({"PARTERRE_HOSTED_LOG_DAYS": "0.00001"}, "PARTERRE_HOSTED_LOG_DAYS must be between 1.0"),
                     ({"PARTERRE_HOSTED_LOG_DAYS": "-3"}, "PARTERRE_HOSTED_LOG_DAYS must be between"),
                     ({"PARTERRE_HOSTED_LOG_DAYS": "nan"}, "PARTERRE_HOSTED_LOG_DAYS must be between"),
                     ({"PARTERRE_HOSTED_LOGS_KEPT": "many"}, "invalid literal")):
        with pytest.raises(ValueError, match=why):
            hosted_settings(env)


def test_a_deep_tree_is_walked_to_a_bound_and_a_fifo_is_a_file(tmp_path: Path) -> None:
    """A chain of 200 folders neither overflows the walk nor holds 200 descriptors: the part past
    ``PRUNE_MAX_DEPTH`` is counted, not entered; a FIFO is removed as an entry, never opened."""
    now = time.time()
    logs = tmp_path / "logs"
    shallow = _write(logs / "a" / "old.log", "old", 20, now)
    deep = logs / "b"
    for i in range(200):
        deep = deep / f"d{i}"
    deepest = _write(deep / "old.log", "old", 20, now)
    fifo = logs / "pipe"
    os.mkfifo(fifo)
    os.utime(fifo, (now - 20 * DAY, now - 20 * DAY))
    fds_before = len(os.listdir("/proc/self/fd"))
    removed, failed = prune_logs(logs, 14 * DAY, now=now)
    assert len(os.listdir("/proc/self/fd")) == fds_before  # every folder it opened is closed
    assert (removed, failed) == (2, 1)
    assert not shallow.exists() and not os.path.lexists(fifo) and deepest.exists()


def test_never_means_nothing_is_walked(tmp_path: Path) -> None:
    now = time.time()
    old = _write(tmp_path / "logs" / "old.log", "old", 10_000, now)
    assert prune_logs(tmp_path / "logs", float("inf"), now=now) == (0, 0)
    assert old.exists()


def test_two_log_folders_are_pruned_independently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosted_logs, "_last_prune", {})
    monkeypatch.setattr(hosted_logs, "_pruning", {})
    now = time.time()
    a, b = tmp_path / "a", tmp_path / "b"
    old = [_write(a / "x.log", "old", 20, now), _write(b / "y.log", "old", 20, now)]
    hosted_logs._pruning.setdefault(a, hosted_logs.threading.Lock()).acquire()  # a's prune is still running
    try:
        assert prune_logs_at_times(a, {"log_days": 14}) is None  # not two at once on one folder
        thread = prune_logs_at_times(b, {"log_days": 14})
        assert thread is not None
        thread.join(10)
    finally:
        hosted_logs._pruning[a].release()
    assert old[0].exists() and not old[1].exists()
