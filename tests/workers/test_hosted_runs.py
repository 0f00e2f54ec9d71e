"""Run folders left by a worker killed with SIGKILL are swept, never one a live run still uses (docs/hosted.md).

The worker is a real process running ``workers.hosting.validation.play_deals`` with a gRPC
side (its run folder under ``$PARTERRE_HOSTED_DIR/run``; the worker waits for it to connect),
killed with SIGKILL mid-run while the side's keeper lives on; another real process holds a second
run folder all along. Oracles:
the file system and ``/proc`` (which processes are alive), not the code's own
bookkeeping.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pids_with(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return [p for p in pids if p != os.getpid()]


def _gone(pid: int) -> bool:
    """The process has exited all the way (a zombie or reaped): its files are closed. An empty command line is
    not enough: the kernel drops a dying process's memory before its files."""
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def _holders(path: Path) -> list[str]:
    """Processes with ``path`` open (read from /proc), for the failure message."""
    out = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == str(path):
                pid = fd.parts[2]
                out.append(f"{pid}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:200]!r}")
        except OSError:
            continue
    return out


def _until(what: Callable[[], object], within_s: float = 30.0) -> None:
    end = time.monotonic() + within_s
    while not what():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.05)


WORKER = """
import sys
from pathlib import Path
from workers.hosting import validation as hosted
deals = hosted.play_deals("floriferous(players=2)", sys.argv[2], "builtin:greedy", run_seed="killed", deals=1,
                          deadline_ms=200, hosted_dir=Path(sys.argv[1]))
next(deals)
"""

LIVE = """
import sys, time
from pathlib import Path
from workers.hosting.run_dirs import make_run_dir
run = make_run_dir(Path(sys.argv[1]) / "run", "live-")
print(run.path, flush=True)
time.sleep(120)
"""


def test_a_sigkilled_workers_run_folder_is_swept_and_a_live_ones_is_kept(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the folder of the killed worker's run stayed under run/ for ever (2 of 2 runs)."""
    from referee.testing import SERVICE_TOKEN, ThreadedReferee
    from workers import tasks

    monkeypatch.setenv("PARTERRE_HOSTED_DIR", str(tmp_path))
    ref = ThreadedReferee({}, control=True).start()  # the side never connects: its game waits there
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PARTERRE_REFEREE_ADDRESS": ref.control_address,
           "PARTERRE_HOSTED_REFEREE_ADDRESS": ref.address, "PARTERRE_SERVICE_TOKEN": SERVICE_TOKEN,
           "PARTERRE_REFEREE_DISCOVERY": "0"}
    marker = f"sleeper-runs-{os.getpid()}"
    side = f'grpc:["python3", "-c", "import time; time.sleep(60)", "{marker}"]'
    live = subprocess.Popen([sys.executable, "-c", LIVE, str(tmp_path)], stdout=subprocess.PIPE, env=env, cwd=ROOT)
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), side], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL)
    try:
        assert live.stdout is not None
        live_dir = Path(live.stdout.readline().decode().strip())
        _until(lambda: list((tmp_path / "run").glob("games-*/grpc-a/referee.sock")) and _pids_with(marker))
        games_dir = next((tmp_path / "run").glob("games-*/grpc-a")).parent
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        # The keeper the worker started still uses the folder (it inherited the lock): kept.
        runners = _pids_with(marker)
        assert runners and games_dir.is_dir()
        assert tasks.sweep_hosted_runs() == [] and games_dir.is_dir() and live_dir.is_dir()
        for pid in runners:
            with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
                os.kill(pid, signal.SIGKILL)
        _until(lambda: all(_gone(pid) for pid in runners))
        # Nobody holds it now: a sweep (a worker's start, its reaper) removes it; the live run's stays. Polled:
        # the kernel closes a dying process's files once its last thread is gone, a moment after it shows dead.
        removed: list[str] = []
        try:
            def swept() -> bool:
                removed.extend(tasks.sweep_hosted_runs())
                return games_dir.name in removed

            _until(swept, within_s=10)
        except AssertionError:
            raise AssertionError(f"still held by {_holders(Path(f'{games_dir}.lock'))}") from None
        assert removed == [games_dir.name]
        assert not games_dir.exists() and live_dir.is_dir()
        assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted([live_dir.name, f"{live_dir.name}.lock"])
        live.kill()
        live.wait()
        assert tasks.sweep_hosted_runs() == [live_dir.name]
        assert list((tmp_path / "run").iterdir()) == []
    finally:
        for proc in (worker, live):
            proc.kill()
            proc.wait()
        ref.stop()
        for pid in _pids_with(marker):
            with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
                os.kill(pid, signal.SIGKILL)


def test_a_folder_from_before_the_locks_is_removed_only_when_old(tmp_path: Path) -> None:
    from workers.hosting.run_dirs import UNLOCKED_AGE_S, sweep_runs

    old = tmp_path / "games-old"
    old.mkdir()
    assert sweep_runs(tmp_path, now=time.time()) == [] and old.is_dir()
    assert sweep_runs(tmp_path, now=time.time() + UNLOCKED_AGE_S + 1) == ["games-old"] and not old.exists()
