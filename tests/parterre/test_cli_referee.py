"""``parterre referee`` on an address it cannot bind: it tries again for ``PARTERRE_BIND_RETRY_S``
(default 90 s, longer than a TIME-WAIT; docs/deploy.md, "Ports") with a warning each time, then ends
in one clear line, exit 2, no traceback (docs/faults.md D-05)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from parterre.demo import wait_for_referee

ROOT = Path(__file__).resolve().parents[2]


def test_a_busy_port_is_one_line_not_a_traceback(tmp_path: Path, redis_base_url: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        proc = subprocess.run(
            [sys.executable, "-m", "parterre.cli", "referee", "--address", address, "--no-cluster"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PARTERRE_HOME": str(tmp_path), "PARTERRE_REDIS_URL": redis_base_url,
                 "PARTERRE_BIND_RETRY_S": "2"})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    mine = [line for line in proc.stderr.splitlines() if line.startswith("parterre: error:")]
    assert mine == [f"parterre: error: could not listen on {address}: the port is in use "
                    "or the host is not this machine's (tried for 2 s)"], proc.stderr
    assert proc.stderr.count("trying again in") >= 2, proc.stderr


def test_d05_a_port_held_by_another_socket_is_bound_once_it_is_released(tmp_path: Path, redis_base_url: str) -> None:
    """A socket holds the referee's port (as an outgoing connection or a TIME-WAIT would); the referee
    keeps trying with a warning each time and serves as soon as the port is free."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    address = f"127.0.0.1:{busy.getsockname()[1]}"
    log_path = tmp_path / "referee.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "parterre.cli", "referee", "--address", address, "--no-cluster"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PARTERRE_HOME": str(tmp_path), "PARTERRE_REDIS_URL": redis_base_url})
    try:
        deadline = time.monotonic() + 60
        while log_path.read_text(errors="replace").count("trying again in") < 2:
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        assert f"could not listen on {address}" in log_path.read_text()
        busy.close()  # the port is free again
        wait_for_referee(address, timeout_s=30)
        assert proc.poll() is None
    finally:
        busy.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
