"""The hosted-bot sandbox, tried as a hostile submitter would (docs/hosted.md).

Each test runs a hostile bot through ``python -m workers.hosting.sandbox`` (the keeper the
workers use), then checks: the verdict in the status file, that nothing leaked
into the bot's output (it prints what it managed to get), that no process of
the sandbox's uid is left, and that this process (the "worker") is intact.
The oracle is the operating system: a socket that connects, a file that opens.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workers.hosting.sandbox import UID_BASE, uid_pids

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                reason="needs bubblewrap and root (the workers' setting)")

ROOT = Path(__file__).resolve().parents[2]
SECRET = "parterre-secret-4b1d"


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A fresh directory the sandbox's uid can reach (pytest's own is mode 0700); removed afterwards.

    The workers keep hosted bots the same way: a root-owned 0711 parent (docs/hosted.md)."""
    base = Path(tempfile.gettempdir()) / "parterre-sandbox-tests"
    base.mkdir(mode=0o711, exist_ok=True)
    base.chmod(0o711)
    path = Path(tempfile.mkdtemp(dir=base))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def no_process_left(uid: int, within_s: float = 3.0) -> bool:
    """True when no live process of ``uid`` exists within ``within_s`` (the kernel tears a pid namespace
    down asynchronously after its init is killed)."""
    end = time.monotonic() + within_s
    while uid_pids(uid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def run_bot(tmp_path: Path, source: str, *limits: str, stdin: bytes = b"", timeout: float = 60,
            runtime: str = "python3.11", command: list[str] | None = None) -> tuple[dict[str, Any], bytes, str]:
    """Run ``source`` as ``bot.py`` in a sandbox; returns (status, stdout, stderr log)."""
    bot = tmp_path / "bot"
    bot.mkdir(mode=0o755, exist_ok=True)
    (bot / "bot.py").write_text(textwrap.dedent(source))
    (bot / "bot.py").chmod(0o644)
    tmp_path.chmod(0o755)
    status, log = tmp_path / "status.json", tmp_path / "stderr.log"
    env = {**os.environ, "PARTERRE_DATABASE_URL": f"postgresql://x:{SECRET}@127.0.0.1/db", "PARTERRE_SECRET": SECRET}
    proc = subprocess.Popen(
        [sys.executable, "-m", "workers.hosting.sandbox", "--root", str(bot), "--runtime", runtime,
         "--stderr-file", str(log), "--status-file", str(status), *limits, "--",
         *(command or ["python3.11", "bot.py"])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, env=env)
    out, _ = proc.communicate(stdin, timeout=timeout)
    assert no_process_left(UID_BASE + proc.pid), "a process of the sandbox is left"
    assert os.path.isdir("/proc/self") and Path(__file__).exists()  # the worker is intact
    return json.loads(status.read_text()), out, log.read_text(errors="replace") if log.exists() else ""


def test_an_honest_bot_runs_and_sees_only_its_own_world(tmp_path: Path) -> None:
    status, out, log = run_bot(tmp_path, """
        import os, sys, games
        print(os.getcwd(), sorted(os.environ), file=sys.stderr)
        print(open("/bot/bot.py").read()[:6], flush=True)
        open("/scratch/x", "w").write("ok")
    """)
    assert status["verdict"] == "ok", status
    assert b"\nimpor" in out or out.startswith(b"\nimpo")
    assert "/bot" in log and "PARTERRE" not in log


def test_no_network_to_referee_postgres_redis_or_anything(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    status, out, _ = run_bot(tmp_path, f"""
        import socket
        for host, port in [("127.0.0.1", {port}), ("127.0.0.1", 5432), ("127.0.0.1", 6379), ("127.0.0.1", 50051),
                           ("10.0.0.1", 80), ("8.8.8.8", 53)]:
            s = socket.socket(); s.settimeout(2)
            try:
                s.connect((host, port)); print("CONNECTED", host, port)
            except OSError as e:
                print("refused", host, port, type(e).__name__)
        try:
            socket.getaddrinfo("example.com", 80); print("CONNECTED dns")
        except OSError:
            print("refused dns")
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect("/var/run/postgresql/.s.PGSQL.5432"); print("CONNECTED unix")
        except OSError:
            print("refused unix")
    """)
    listener.close()
    assert status["verdict"] == "ok", status
    assert b"CONNECTED" not in out
    assert out.count(b"refused") == 8


def test_reading_outside_its_directory(tmp_path: Path) -> None:
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.py").write_text(SECRET)
    me = os.getpid()
    status, out, _ = run_bot(tmp_path, f"""
        import os
        paths = ["{ROOT / 'workers' / 'tasks.py'}", "{other / 'secret.py'}", "/proc/{me}/environ", "/proc/1/environ",
                 "/proc/{me}/cmdline", "/root/.bashrc", "/etc/shadow", "/etc/passwd", "{tmp_path / 'status.json'}"]
        for p in paths:
            try:
                data = open(p, "rb").read(); print("READ", p, data[:80])
            except OSError as e:
                print("denied", p, type(e).__name__)
        print("pids", sorted(int(d) for d in os.listdir("/proc") if d.isdigit()))
        print("env", dict(os.environ))
    """)
    assert status["verdict"] == "ok", status
    lines = out.decode(errors="replace").splitlines()
    # /proc/1 inside is the sandbox's own init (bwrap, started with an empty environment)
    read = [line for line in lines if line.startswith("READ") and not line.startswith("READ /proc/1/environ")]
    assert read == [], lines
    assert SECRET.encode() not in out
    pids = json.loads(out.split(b"pids ")[1].split(b"\n")[0].decode())
    assert max(pids) < 10  # a fresh pid namespace: only the sandbox's own processes


def test_fork_bomb(tmp_path: Path) -> None:
    status, out, _ = run_bot(tmp_path, """
        import os, time
        n = 0
        for _ in range(10000):
            try:
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                n += 1
            except OSError:
                break
        print("forked", n, flush=True)
        time.sleep(30)
    """, "--pids", "16", "--wall-s", "4")
    assert status["verdict"] == "wall_time", status
    forked = int(out.split()[1])
    assert forked < 16


def test_unbounded_memory(tmp_path: Path) -> None:
    status, _, _ = run_bot(tmp_path, """
        chunks = []
        while True:
            chunks.append(bytearray(16 << 20))
    """, "--memory-mb", "128")
    if Path("/sys/fs/cgroup/memory").is_dir():  # the keeper makes a memory cgroup: its OOM killer ends the bot
        assert status["verdict"] == "memory", status
        assert status["signal"] == 9
    else:  # RLIMIT_DATA: MemoryError
        assert status["verdict"] == "exit" and status["exit_code"] != 0, status


def test_dev_is_not_a_place_to_hide_memory(tmp_path: Path) -> None:
    """/dev (bwrap's tmpfs of device nodes, /dev/shm inside it) is read-only: a tmpfs there would hold up
    to half the machine's memory outside every limit."""
    status, out, _ = run_bot(tmp_path, """
        for p in ["/dev/shm/fill", "/dev/fill"]:
            try:
                with open(p, "wb") as fh:
                    fh.write(b"x" * (1 << 20))
                print("WROTE", p, flush=True)
            except OSError as e:
                print("refused", p, type(e).__name__, flush=True)
        open("/dev/null", "wb").write(b"x"); print("null ok", len(open("/dev/urandom", "rb").read(8)), flush=True)
    """)
    assert status["verdict"] == "ok", status
    assert b"WROTE" not in out and out.count(b"refused") == 2 and b"null ok 8" in out, out


def test_filling_the_disk(tmp_path: Path) -> None:
    status, out, _ = run_bot(tmp_path, """
        written = 0
        try:
            with open("/scratch/fill", "wb") as fh:
                while True:
                    fh.write(b"x" * (1 << 20)); fh.flush(); written += 1
        except OSError as e:
            print("stopped", written, type(e).__name__, flush=True)
        for p in ["/bot/x", "/usr/x", "/x"]:
            try:
                open(p, "w").write("x"); print("WROTE", p)
            except OSError:
                pass
    """, "--scratch-mb", "8")
    assert status["verdict"] in ("ok", "exit"), status
    assert b"WROTE" not in out
    if out.startswith(b"stopped"):
        assert int(out.split()[1]) <= 8


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_gigabytes_on_output(tmp_path: Path, stream: str) -> None:
    status, out, log = run_bot(tmp_path, f"""
        import sys
        block = "y" * 65535 + "\\n"
        while True:
            sys.{stream}.write(block)
    """, "--output-mb", "8", "--stderr-kb", "64")
    assert status["verdict"] == "output_limit", status
    assert len(out) <= (8 << 20) + (1 << 16)
    assert len(log) <= (64 << 10) + 200


def test_sleeping_forever_and_ignoring_sigterm(tmp_path: Path) -> None:
    status, _, _ = run_bot(tmp_path, """
        import signal, time, os
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            os.setsid(); time.sleep(3600)
        time.sleep(3600)
    """, "--wall-s", "2")
    assert status["verdict"] == "wall_time", status


def test_stopped_from_outside_kills_the_tree(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    (bot / "bot.py").write_text("import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                "os.fork(); os.fork(); print('up', flush=True); time.sleep(3600)\n")
    (bot / "bot.py").chmod(0o644)
    status = tmp_path / "st.json"
    proc = subprocess.Popen([sys.executable, "-m", "workers.hosting.sandbox", "--root", str(bot),
                             "--runtime", "python3.11", "--status-file", str(status), "--", "python3.11", "bot.py"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None
    proc.stdout.readline()
    assert len(uid_pids(UID_BASE + proc.pid)) >= 4
    proc.terminate()
    proc.wait(timeout=10)
    assert no_process_left(UID_BASE + proc.pid)
    assert json.loads(status.read_text())["verdict"] == "stopped"


def test_cpu_time(tmp_path: Path) -> None:
    status, _, _ = run_bot(tmp_path, "while True: pass\n", "--cpu-s", "1", "--wall-s", "30")
    assert status["verdict"] == "cpu_time", status


def test_a_missing_command_is_start_failed_or_exit(tmp_path: Path) -> None:
    status, _, log = run_bot(tmp_path, "", command=["/bot/no-such-program"])
    assert status["verdict"] == "exit" and status["exit_code"] != 0, status
