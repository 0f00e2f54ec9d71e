"""The sandbox run by an unprivileged worker (the image's non-root user), tried as a hostile submitter would.

``deploy/Dockerfile`` runs every role as uid 10001. There the keeper cannot
change uid or make cgroups; bwrap runs in an unprivileged user namespace (this
machine allows them: ``user.max_user_namespaces`` > 0). The test starts the
keeper exactly so — ``setpriv --reuid U --regid U --clear-groups python -m
workers.hosting.sandbox --per-process-limits ...`` with a uid of no user and no cgroup (the
operator's acceptance of per-process limits; without it the keeper refuses:
``tests/workers/test_sandbox_limits.py``) — and checks the same things as
``tests/workers/test_sandbox.py``: verdicts, what the bot could reach, the process
limit (``RLIMIT_NPROC`` on the shared uid: its tasks at the start plus the
allowance), the memory limit (``RLIMIT_AS``), and that the tree is gone
afterwards while another process of the same uid (standing for the worker)
is untouched. Oracle: the operating system (a socket that connects, a file
that opens, ``/proc``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
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
from fixtures.toolchains import missing

from workers.hosting.sandbox import uid_pids

ROOT = Path(__file__).resolve().parents[2]
SECRET = "parterre-secret-unpriv-77"


def _userns_ok() -> bool:
    try:
        return int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    except (OSError, ValueError):
        return False


pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("setpriv") is None
                                or os.geteuid() != 0 or not _userns_ok(),
                                reason="needs bubblewrap, setpriv, root to drop to another uid, user namespaces")


@pytest.fixture
def uid() -> int:
    """A uid of no user, unique to this test process (the image's 10001 stands in the docs)."""
    return 61000 + os.getpid() % 4000


@pytest.fixture
def place(uid: int) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="parterre-unpriv-", dir="/var/tmp"))
    base.chmod(0o755)
    os.chown(base, uid, uid)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def others(uid: int, keep: set[int]) -> set[int]:
    return set(uid_pids(uid)) - keep


def run_bot(place: Path, uid: int, source: str, *limits: str, timeout: float = 60,
            stop_after_s: float | None = None, runtime: str = "python3.11") -> tuple[dict[str, Any], bytes, set[int]]:
    """Run ``source`` as ``bot.py`` (``bot.js`` for runtime ``node``) under a keeper of uid ``uid``; returns
    (status, stdout, the uid's leftovers)."""
    bot = place / "bot"
    bot.mkdir(mode=0o755, exist_ok=True)
    name, interpreter = ("bot.js", "node") if runtime == "node" else ("bot.py", "python3.11")
    (bot / name).write_text(textwrap.dedent(source))
    (bot / name).chmod(0o644)
    status = place / "status.json"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(place), "PARTERRE_HOSTED_DIR": str(place / "hosted"),
           "PARTERRE_DATABASE_URL": f"postgresql://x:{SECRET}@127.0.0.1/db", "PYTHONPATH": str(ROOT)}
    # Another process of the same uid: the worker itself, in the image. It must outlive the sandbox.
    worker = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "120"])
    try:
        proc = subprocess.Popen(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-m",
             "workers.hosting.sandbox", "--root", str(bot), "--runtime", runtime, "--status-file", str(status),
             "--per-process-limits", *limits, "--",
             interpreter, name],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=ROOT, env=env)
        if stop_after_s is not None:
            time.sleep(stop_after_s)
            proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=timeout)
        end = time.monotonic() + 5
        while others(uid, {worker.pid}) and time.monotonic() < end:
            time.sleep(0.1)
        left = others(uid, {worker.pid})
        assert worker.poll() is None, "the sandbox killed another process of the worker's uid"
    finally:
        worker.kill()
        worker.wait()
    return json.loads(status.read_text()), out, left


def test_an_honest_bot_runs_unprivileged(place: Path, uid: int) -> None:
    status, out, left = run_bot(place, uid, """
        import os, games
        print("uid", os.getuid(), "cwd", os.getcwd(), "env", sorted(os.environ), flush=True)
        open("/scratch/x", "w").write("ok")
        try:
            open("/bot/y", "w"); print("WROTE /bot")
        except OSError:
            print("read-only /bot")
    """)
    assert status["verdict"] == "ok", (status, out)
    assert b"cwd /bot" in out and b"read-only /bot" in out and b"PARTERRE" not in out
    assert left == set()


def test_no_network_unprivileged(place: Path, uid: int) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    status, out, left = run_bot(place, uid, f"""
        import socket
        for host, port in [("127.0.0.1", {port}), ("127.0.0.1", 5432), ("127.0.0.1", 6379), ("8.8.8.8", 53)]:
            s = socket.socket(); s.settimeout(2)
            try:
                s.connect((host, port)); print("CONNECTED", host, port)
            except OSError as e:
                print("refused", host, port)
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect("/var/run/postgresql/.s.PGSQL.5432"); print("CONNECTED unix")
        except OSError:
            print("refused unix")
    """)
    listener.close()
    assert status["verdict"] == "ok", status
    assert b"CONNECTED" not in out and out.count(b"refused") == 5
    assert left == set()


def test_reading_outside_unprivileged(place: Path, uid: int) -> None:
    other = place / "other-bot"
    other.mkdir()
    (other / "secret.py").write_text(SECRET)
    other.chmod(0o755)
    (other / "secret.py").chmod(0o644)  # readable by the uid on the host: only the sandbox stops it
    status, out, _ = run_bot(place, uid, f"""
        import os
        for p in ["{ROOT / 'workers' / 'tasks.py'}", "{other / 'secret.py'}", "/proc/{os.getpid()}/environ",
                  "/etc/passwd", "{place / 'status.json'}"]:
            try:
                data = open(p, "rb").read(); print("READ", p, data[:40])
            except OSError as e:
                print("denied", p)
        print("pids", sorted(int(d) for d in os.listdir("/proc") if d.isdigit()), flush=True)
        print("env", dict(os.environ))
    """)
    assert status["verdict"] == "ok", status
    assert b"READ" not in out and SECRET.encode() not in out, out
    pids = json.loads(out.split(b"pids ")[1].split(b"\n")[0].decode())
    assert max(pids) < 10  # a fresh pid namespace


def test_fork_bomb_unprivileged(place: Path, uid: int) -> None:
    status, out, left = run_bot(place, uid, """
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
    assert int(out.split()[1]) < 16
    assert left == set()


def test_unbounded_memory_unprivileged(place: Path, uid: int) -> None:
    status, _, left = run_bot(place, uid, """
        chunks = []
        while True:
            chunks.append(bytearray(16 << 20))
    """, "--memory-mb", "128")
    assert status["verdict"] == "exit" and status["exit_code"] != 0, status  # MemoryError under RLIMIT_DATA
    assert left == set()


def test_node_memory_is_bounded_unprivileged(place: Path, uid: int) -> None:
    """Node.js under 256 MiB allocating 1.5 GiB of Buffers (outside V8's heap): before, no limit applied
    to Node at all without a memory cgroup (RLIMIT_AS would stop V8 starting) and it exited 0."""
    if shutil.which("node") is None:
        missing("needs Node.js (bots/install-toolchains.sh)")
    status, out, left = run_bot(place, uid, """
        const bufs = [];
        for (let i = 0; i < 48; i++) bufs.push(Buffer.alloc(32 << 20, 1));
        console.log("allocated", bufs.length * 32);
    """, "--memory-mb", "256", runtime="node")
    assert status["verdict"] == "exit" and status["exit_code"] != 0, status
    assert b"allocated" not in out and left == set()


def test_dev_shm_is_read_only_unprivileged(place: Path, uid: int) -> None:
    status, out, left = run_bot(place, uid, """
        try:
            open("/dev/shm/fill", "wb").write(b"x" * (64 << 20)); print("WROTE")
        except OSError as e:
            print("refused", type(e).__name__)
    """)
    assert status["verdict"] == "ok" and b"refused" in out and b"WROTE" not in out, (status, out)
    assert left == set()


def test_stopped_from_outside_unprivileged(place: Path, uid: int) -> None:
    status, _, left = run_bot(place, uid, """
        import os, signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in range(3):
            if os.fork() == 0:
                break
        time.sleep(3600)
    """, stop_after_s=2.0)
    assert status["verdict"] == "stopped", status
    assert left == set()


THREADS = 40
"""Threads of a process of the uid that the keeper cannot see (another container's, in the image)."""


def test_tasks_of_the_uid_outside_the_keepers_pid_namespace_count(place: Path, uid: int) -> None:
    """In a container the keeper's /proc shows only its own container, while the kernel charges every task of
    uid 10001 on the host to RLIMIT_NPROC (the referees, the web site... run as that uid too). Here: a process
    of the uid with THREADS threads outside, the keeper in a pid namespace of its own (``unshare --pid``).
    Oracle: the threads this test started. The measured count includes them, an honest bot starts (a count
    from /proc alone leaves it no room: bwrap fails with EAGAIN), and a fork bomb is still held."""
    hidden = subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-c",
         f"import threading, time; [threading.Thread(target=time.sleep, args=(120,), daemon=True).start() "
         f"for _ in range({THREADS})]; print('up', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert hidden.stdout is not None and hidden.stdout.readline() == b"up\n"
        inside = ["unshare", "--pid", "--fork", "--mount-proc", "setpriv", f"--reuid={uid}", f"--regid={uid}",
                  "--clear-groups", sys.executable]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(place), "PARTERRE_HOSTED_DIR": str(place / "hosted"),
               "PYTHONPATH": str(ROOT)}
        probe = subprocess.run([*inside, "-c", f"from workers.hosting.sandbox import charged_tasks, uid_tasks; "
                                f"seen = uid_tasks({uid}); print(seen, charged_tasks(seen))"],
                               capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        seen, charged = (int(x) for x in probe.stdout.split())
        assert seen < 5 and charged >= THREADS + 1 + seen, (probe.stdout, probe.stderr)
        bot = place / "bot"
        bot.mkdir(mode=0o755)
        for name, source in (("honest", "print('HONEST', flush=True)\n"),
                             ("bomb", "import os, time\nn = 0\nfor _ in range(10000):\n    try:\n"
                                      "        if os.fork() == 0:\n            time.sleep(30); os._exit(0)\n"
                                      "        n += 1\n    except OSError:\n        break\n"
                                      "print('forked', n, flush=True)\n")):
            (bot / f"{name}.py").write_text(source)
            (bot / f"{name}.py").chmod(0o644)
            status = place / f"{name}.json"
            out = subprocess.run([*inside, "-m", "workers.hosting.sandbox", "--root", str(bot),
                                  "--runtime", "python3.11", "--status-file", str(status), "--per-process-limits",
                                  "--pids", "16", "--wall-s", "20", "--",
                                  "python3.11", f"{name}.py"], stdin=subprocess.DEVNULL, capture_output=True,
                                 env=env, cwd=ROOT, timeout=60)
            verdict = json.loads(status.read_text())
            assert verdict["verdict"] == "ok", (name, verdict, out.stdout, out.stderr)
            if name == "honest":
                assert out.stdout == b"HONEST\n"
            else:
                forked = int(out.stdout.split()[1])
                assert 5 <= forked < 16, out.stdout
        assert hidden.poll() is None
    finally:
        hidden.kill()
        hidden.wait()
