"""``parterre up`` starts again a child that exits on its own, and stops the stack when one keeps
exiting (docs/faults.md, "Lost dependencies and half-open connections", D-06).

The children are real processes (a Python one-liner that exits with a chosen status, or one that
waits); the clock given to ``Stack.supervise`` is virtual, so the backoff and the restart window
are checked without waiting them out.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from parterre import up

EXIT_3 = ["-c", "raise SystemExit(3)"]
WAITS = ["-c", "import time; time.sleep(3600)"]


def _stack(tmp_path: Path) -> up.Stack:
    return up.Stack(tmp_path / "logs", dict(os.environ), threading.Event())


def test_d06_a_child_that_exits_is_started_again_after_its_backoff_and_the_others_keep_running(
        tmp_path: Path) -> None:
    stack = _stack(tmp_path)
    lines: list[str] = []
    try:
        other = stack.start("referee", WAITS)
        worker = stack.start("worker-1", EXIT_3)
        first_pid = worker.pid
        assert worker.proc.wait(30) == 3
        t = 1000.0
        assert stack.supervise(t, lines.append) is False  # found exited: due after the first backoff
        assert any("worker-1" in line and "exited with status 3" in line for line in lines), lines
        assert stack.supervise(t + up.RESTART_BACKOFF_S[0] / 2, lines.append) is False  # not yet
        assert stack.supervise(t + up.RESTART_BACKOFF_S[0], lines.append) is True
        assert worker.pid != first_pid
        assert lines[-1] == f"parterre up: worker-1 started again (pid {worker.pid})"
        assert worker.proc.wait(30) == 3  # the same command ran again
        # the second exit waits twice as long
        t2 = t + 5
        stack.supervise(t2, lines.append)
        assert stack.supervise(t2 + 2 * up.RESTART_BACKOFF_S[0] - 0.01, lines.append) is False
        assert stack.supervise(t2 + 2 * up.RESTART_BACKOFF_S[0], lines.append) is True
        assert other.proc.poll() is None  # the referee was never touched
        assert [c.role for c in stack.children] == ["referee", "worker-1"]
    finally:
        stack.stop(5)


def test_d06_a_child_that_keeps_exiting_stops_the_stack_with_its_name(tmp_path: Path) -> None:
    stack = _stack(tmp_path)
    lines: list[str] = []
    try:
        worker = stack.start("worker-1", EXIT_3)
        now = 0.0
        for _ in range(up.MAX_RESTARTS):
            worker.proc.wait(30)
            stack.supervise(now, lines.append)
            assert worker.restart_at is not None
            now = worker.restart_at
            assert stack.supervise(now, lines.append) is True
        assert now < up.RESTART_WINDOW_S  # all within one window
        worker.proc.wait(30)
        with pytest.raises(up.UpError, match=r"worker-1 exited with status 3, after 5 restarts within 60 s"):
            stack.supervise(now, lines.append)
        # once the window has passed, the old restarts no longer count
        assert stack.supervise(now + up.RESTART_WINDOW_S + 1, lines.append) is False
        assert worker.restart_at is not None
    finally:
        stack.stop(5)


def test_d06_a_requested_stop_is_not_a_restart(tmp_path: Path) -> None:
    stack = _stack(tmp_path)
    try:
        stack.start("worker-1", EXIT_3).proc.wait(30)
        stack.stop_requested.set()
        with pytest.raises(up.Interrupted):
            stack.supervise(0.0)
    finally:
        stack.stop(5)
