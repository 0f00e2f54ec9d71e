"""``parterre``'s SIGTERM handling: the command exits with 143 through ``SystemExit`` (atexit runs),
and a caller of ``parterre.cli.main`` keeps its own SIGTERM handler once the command returns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

import pytest
from fixtures.waiting import wait_until

from parterre.cli import main


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (its ``SigCgt`` mask in /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def test_main_gives_back_the_callers_sigterm_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    def ours(signum: int, frame: FrameType | None) -> None:  # never delivered
        raise AssertionError("not expected")

    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    previous = signal.signal(signal.SIGTERM, ours)
    try:
        assert main(["leaderboard", "chess"]) == 2  # a command that runs and returns
        assert signal.getsignal(signal.SIGTERM) is ours
        f = tmp_path / "r.json"
        f.write_text("{not json")
        assert main(["replay", "verify", str(f)]) == 2
        assert signal.getsignal(signal.SIGTERM) is ours
    finally:
        signal.signal(signal.SIGTERM, previous)
    capsys.readouterr()


def test_sigterm_to_a_running_command_exits_143_and_runs_atexit(tmp_path: Path) -> None:
    """A real process blocked in a command (opening a FIFO no one writes) gets SIGTERM."""
    fifo = tmp_path / "replay.json"
    os.mkfifo(fifo)
    marker = tmp_path / "atexit-ran"
    code = ("import atexit, sys; from pathlib import Path; from parterre.cli import main; "
            f"atexit.register(lambda: Path({str(marker)!r}).write_text('yes')); "
            f"sys.exit(main(['replay', 'verify', {str(fifo)!r}]))")
    env = {**os.environ, "PARTERRE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wait_until(lambda: proc.poll() is not None or _catches_sigterm(proc.pid), 60.0,
                   what="the command to install its SIGTERM handler")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert marker.read_text() == "yes"
