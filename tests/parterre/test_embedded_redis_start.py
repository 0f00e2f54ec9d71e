"""The embedded Redis of one ``$PARTERRE_HOME`` is one server, however many processes start, attach and
leave at once, and it stops when the last of them leaves.

A new user's ``parterre referee & parterre worker &`` (README, docs/bots.md §3) started two
``redis-server`` processes on the same files, one per process: the referee then read bot tokens
from one while the worker and the CLI wrote to the other ("unknown or revoked token" for a bot
just registered). A review then found the other half: a process leaving could stop the server
another had just attached to, and ``Services.close()`` stopped it under the feet of the others.
Oracles: the server pid each process reports and ``/proc/<pid>`` (redis-server renames its process
title, so the home cannot be searched for in command lines), and each process pinging the server
after the others left.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys, time
from pathlib import Path
from parterre.embedded import EmbeddedRedis, Services
home, go, hold, how = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print("waiting", flush=True)
while not go.exists():
    time.sleep(0.001)
redis = EmbeddedRedis(home)
redis.start()
print(getattr(redis, "_pid", 0) or redis._client.pid, flush=True)
time.sleep(hold)
client = redis._client
if how == "close":  # the demo's way out
    Services("", redis.url, [redis]).close()
elif how == "ping":  # still served after the others left?
    print("ping", client.ping(), flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(home: Path, go: Path, hold: float, how: str = "") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(home), str(go), str(hold), how],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_processes_starting_at_once_share_one_server_and_the_last_one_stops_it(tmp_path: Path) -> None:
    home, go = tmp_path / "home", tmp_path / "go"
    procs = [_start(home, go, 1.0) for _ in range(4)]
    assert [p.stdout.readline().strip() for p in procs if p.stdout] == ["waiting"] * 4  # every child imported
    go.touch()
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    pids = {out.strip() for out, _ in outs}
    assert len(pids) == 1, outs  # one server
    assert _gone(int(pids.pop()))  # the last one to leave stopped it (4 left together)


def test_a_process_leaving_never_stops_the_server_under_one_attaching(tmp_path: Path) -> None:
    """The sole user leaves (within a few ms either way) as another attaches, several times: the newcomer
    is served after the other left, and stops the server itself when it leaves."""
    for trial in range(4):
        home, go = tmp_path / f"home{trial}", tmp_path / f"go{trial}"
        first = _start(home, go, 0.5)
        go.touch()
        first_pid = (first.stdout.readline(), first.stdout.readline())[1].strip() if first.stdout else ""
        time.sleep(0.5 + 0.004 * (trial - 2))  # around the moment the first leaves
        second = _start(home, go, 1.5, "ping")
        out, err = second.communicate(timeout=60)
        first.communicate(timeout=60)
        assert second.returncode == 0 and "ping True" in out, (trial, out, err)
        assert all(_gone(int(pid)) for pid in {first_pid, out.split()[1]} if pid), trial


def test_a_process_closing_its_services_leaves_the_server_to_the_others(tmp_path: Path) -> None:
    """``Services.close()`` (the demo's ``finally``) used to shut the server down whoever else used it."""
    home, go = tmp_path / "home", tmp_path / "go"
    go.touch()
    stays = _start(home, go, 2.0, "ping")
    assert stays.stdout is not None and stays.stdout.readline().strip() == "waiting"
    stays_pid = int(stays.stdout.readline())  # the server's pid: it is attached
    closer = _start(home, go, 0.1, "close")
    assert closer.wait(60) == 0
    out, err = stays.communicate(timeout=60)
    assert stays.returncode == 0 and "ping True" in out, (out, err)
    assert _gone(stays_pid)
