"""A hosted seat connects only once its child has read its first line (workers/hosting/seat.py).

The referee asks a seat's first decision as soon as the seat is connected, so the adapter waits
for its fresh child to read the ``hello`` line before connecting. Oracle: children whose start-up
time the test sets (a sleep before the first read of stdin), timed with the wall clock.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from workers.hosting.seat import HELLO_LINE, HostedSeat


def start(tmp_path: Path, source: str, wait_s: float = 10.0) -> tuple[float, str, str]:
    """Start one child of a HostedSeat; returns (seconds until started, its notes, what it read first)."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "logs").mkdir()
    bot = HostedSeat([sys.executable, "-c", source.format(seen=str(seen))], log_dir=str(tmp_path / "logs"),
                     name="ready-test", max_concurrent_matches=1, stop_grace_s=0.5)
    bot.ready_wait_s = wait_s

    async def go() -> float:
        t0 = time.monotonic()
        child = await bot._start_child()
        took = time.monotonic() - t0
        assert child.proc is not None
        await bot._close()
        return took

    took = asyncio.run(go())
    notes = "".join(p.read_text() for p in (tmp_path / "logs").glob("*.log"))
    return took, notes, seen.read_text() if seen.exists() else ""


def test_the_seat_waits_for_a_slow_starting_child(tmp_path: Path) -> None:
    took, notes, first = start(tmp_path, "import sys, time\ntime.sleep(1.5)\n"
                                         "open({seen!r}, 'w').write(sys.stdin.readline())\ntime.sleep(30)\n")
    assert took >= 1.4, took  # it waited for the child's 1.5 s start-up
    # ... and connected when the child read the line, not at the 10 s limit ("connecting anyway")
    assert first.encode() == HELLO_LINE and "ready (read its first line)" in notes
    assert "connecting anyway" not in notes


def test_a_child_ready_at_once_costs_no_wait(tmp_path: Path) -> None:
    took, notes, _ = start(tmp_path, "import sys, time\nsys.stdin.readline()\ntime.sleep(30)\n")
    assert took < 1.0 and "ready" in notes


def test_a_child_that_never_reads_delays_the_seat_only_up_to_the_limit(tmp_path: Path) -> None:
    took, notes, _ = start(tmp_path, "import time\ntime.sleep(30)\n", wait_s=1.0)
    assert took >= 0.9 and "connecting anyway" in notes  # it waited the 1 s limit, then went on


def test_a_child_that_exits_at_once_is_not_waited_for(tmp_path: Path) -> None:
    took, _, _ = start(tmp_path, "raise SystemExit(3)\n")
    assert took < 3.0
