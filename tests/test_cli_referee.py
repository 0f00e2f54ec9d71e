"""``parterre referee`` on an address it cannot bind ends in one clear line, exit 2, no traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_busy_port_is_one_line_not_a_traceback(tmp_path: Path, redis_base_url: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        proc = subprocess.run(
            [sys.executable, "-m", "parterre.cli", "referee", "--address", address, "--no-cluster"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PARTERRE_HOME": str(tmp_path), "PARTERRE_REDIS_URL": redis_base_url})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    mine = [line for line in proc.stderr.splitlines() if line.startswith("parterre: error:")]
    assert mine == [f"parterre: error: could not listen on {address}: the port is in use "
                    "or the host is not this machine's"], proc.stderr
