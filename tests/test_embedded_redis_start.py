"""The embedded Redis of one ``$PARTERRE_HOME`` is one server, however many processes start at once.

A new user's ``parterre referee & parterre worker &`` (README, docs/bots.md §3) started two
``redis-server`` processes on the same files, one per process: the referee then read bot tokens
from one while the worker and the CLI wrote to the other ("unknown or revoked token" for a bot
just registered). Oracle: the socket path and the server pid each process reports, and ``/proc``
for a server left running.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import sys, time
from pathlib import Path
from parterre.embedded import EmbeddedRedis
home, go = Path(sys.argv[1]), Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
redis = EmbeddedRedis(home)
redis.start()
print(redis._client.socket_file, redis._client.pid, flush=True)
time.sleep(2)
"""


def _servers(home: Path) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"redis-server" in cmd and str(home).encode() in cmd:
                out.append(int(entry))
    return out


def test_processes_starting_at_once_share_one_server_and_the_last_one_stops_it(tmp_path: Path) -> None:
    home, go = tmp_path / "home", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(home), str(go)], stdout=subprocess.PIPE, text=True,
                              env=env) for _ in range(4)]
    time.sleep(1.0)  # every child imported and waiting
    go.touch()
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len(set(outs)) == 1, outs  # one socket, one server pid
    deadline = time.monotonic() + 10
    while _servers(home) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers(home) == []  # the last process to leave stopped it
