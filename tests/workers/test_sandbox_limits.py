"""The sandbox's limits hold for the bot's whole process tree, tried as a hostile submitter would.

Each bot runs under the keeper (``python -m workers.hosting.sandbox``, what the workers
run) three ways: as root (the keeper's own cgroup), as an unprivileged uid
given a delegated cgroup (``--cgroup``, ``PARTERRE_SANDBOX_CGROUP``: made here
by root and handed to the uid with ``chown``, as an operator would), and as an
unprivileged uid with none (the keeper must refuse and say why; with
``--per-process-limits``, the compose and k8s workers' mode, it watches the tree's
memory itself). The
unprivileged keeper is started with ``setpriv --reuid U --regid U
--clear-groups``, as in ``tests/workers/test_sandbox_unprivileged.py``. Oracles: the
kernel (a nested ``unshare`` that fails or not, the OOM killer's victims as the
bot sees them, the CPU time ``getrusage`` reports, the processes left) and the
limits passed against the memory the bot allocates.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.waiting import wait_until

from workers.hosting.host import uid_pids

ROOT = Path(__file__).resolve().parents[2]
CGROUP_ROOT = Path("/sys/fs/cgroup")


def _userns_ok() -> bool:
    try:
        return int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    except (OSError, ValueError):
        return False


pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("setpriv") is None
                                or shutil.which("unshare") is None or os.geteuid() != 0 or not _userns_ok(),
                                reason="needs bubblewrap, setpriv, unshare, root and user namespaces")

MODES = ("root", "unprivileged+cgroup")
PER_PROCESS = "unprivileged+per-process"
"""The compose and k8s worker: no cgroup, ``--per-process-limits`` (the operator's acceptance)."""


@pytest.fixture
def uid() -> int:
    """A uid of no user, unique to this test process."""
    return 57000 + os.getpid() % 4000


@pytest.fixture
def place(uid: int) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="parterre-limits-", dir="/var/tmp"))
    base.chmod(0o755)
    os.chown(base, uid, uid)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def delegated(uid: int) -> Iterator[str]:
    """A cgroup delegated to ``uid`` (what an operator sets as PARTERRE_SANDBOX_CGROUP); removed afterwards."""
    name = f"parterre-test-{os.getpid()}"
    unified = (CGROUP_ROOT / "cgroup.controllers").exists()
    dirs = [CGROUP_ROOT / name] if unified else [CGROUP_ROOT / c / name for c in ("memory", "pids", "cpu", "cpuacct")
                                                 if (CGROUP_ROOT / c).is_dir()]
    for d in dirs:
        d.mkdir(exist_ok=True)
        for path in [d, *d.iterdir()]:
            os.chown(path, uid, uid)
    yield name
    for d in dirs:
        for child in d.iterdir():
            if child.is_dir():
                child.rmdir()
        d.rmdir()


def run(place: Path, uid: int, mode: str, source: str, *limits: str, cgroup: str = "",
        timeout: float = 120, stderr_file: Path | None = None) -> tuple[dict[str, Any], str]:
    """Run ``source`` as ``bot.py`` under a keeper in ``mode``; returns (status, stdout). With ``stderr_file``
    the bot's stderr goes there (as the workers keep it for the owner)."""
    bot = place / "bot"
    bot.mkdir(mode=0o755, exist_ok=True)
    (bot / "bot.py").write_text(textwrap.dedent(source))
    (bot / "bot.py").chmod(0o644)
    status = place / "status.json"
    status.unlink(missing_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(place), "PARTERRE_HOSTED_DIR": str(place / "hosted"),
           "PYTHONPATH": str(ROOT)}
    drop = [] if mode == "root" else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    extra = ["--cgroup", cgroup] if cgroup else []
    if mode == PER_PROCESS:
        extra.append("--per-process-limits")
    if stderr_file is not None:
        stderr_file.touch(mode=0o666)
        stderr_file.chmod(0o666)  # the keeper may run as the unprivileged uid
        extra += ["--stderr-file", str(stderr_file)]
    out = subprocess.run([*drop, sys.executable, "-m", "workers.hosting.sandbox", "--root", str(bot),
                          "--runtime", "python3.11", "--status-file", str(status), *extra, *limits, "--",
                          "python3.11", "bot.py"],
                         stdin=subprocess.DEVNULL, capture_output=True, cwd=ROOT, env=env, timeout=timeout)
    return json.loads(status.read_text()), out.stdout.decode(errors="replace") + out.stderr.decode(errors="replace")


NESTED_TMPFS = """
    import subprocess
    # A user namespace of its own, where it is "root" and may mount a tmpfs: 1500 MiB, 60 MiB a file
    # (each under the file-size limit), under a 256 MiB memory limit.
    r = subprocess.run(["unshare", "-U", "-m", "-r", "sh", "-c",
                        "mkdir -p /scratch/t && mount -t tmpfs -o size=2g none /scratch/t && "
                        "for i in $(seq 1 25); do head -c 60M /dev/zero > /scratch/t/f$i || exit 9; done; echo FILLED"],
                        capture_output=True, text=True)
    print("nested", r.returncode, r.stdout.strip(), r.stderr.strip()[-120:], flush=True)
    if "FILLED" not in r.stdout:
        print("NESTED-REFUSED", flush=True)
    # Then what is left: the process's own memory, past the limit.
    chunks = []
    for _ in range(64):
        chunks.append(bytearray(16 << 20))
    print("ALLOCATED", flush=True)
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_nested_user_namespace_cannot_mount_a_tmpfs_past_the_memory_limit(place: Path, uid: int, delegated: str,
                                                                            mode: str) -> None:
    """Before: bwrap ran without --disable-userns, so the bot's nested ``unshare -U -m`` mounted a tmpfs and
    held 1500 MiB under 256 MiB, verdict ``ok``, reported peak 12 MiB (unprivileged)."""
    status, out = run(place, uid, mode, NESTED_TMPFS, "--memory-mb", "256",
                      cgroup=delegated if mode != "root" else "")
    assert "NESTED-REFUSED" in out and "FILLED" not in out, out
    assert status["verdict"] == "memory" and "ALLOCATED" not in out, (status, out)
    assert 200 <= status["peak_memory_mb"] <= 256, status  # the cgroup's peak of the tree: honest


def forks(mib: int) -> str:
    """A bot that forks 8 children holding ``mib`` MiB each (every page written) for a second, then prints
    their exit codes."""
    return f"""
    import os, time
    kids = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            block = bytearray({mib} << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(1)
            os._exit(0)
        kids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids]
    print("children", codes, flush=True)
"""


FORKS = forks(200)


@pytest.mark.parametrize("mode", [*MODES, PER_PROCESS])
def test_eight_children_of_200_mib_meet_one_256_mib_limit(place: Path, uid: int, delegated: str, mode: str) -> None:
    """Before: unprivileged, the limit was per process (RLIMIT_DATA): 8 x 200 MiB = 1600 MiB, verdict ``ok``; as
    root the cgroup killed children but the bot exited 0 and the verdict was ``ok`` too. With per-process limits
    (no cgroup) it was still ``ok`` at 1,600 MiB: now the keeper's watch of the tree's memory kills the tree."""
    log = place / "bot-stderr.log"
    status, out = run(place, uid, mode, FORKS, "--memory-mb", "256",
                      cgroup=delegated if mode == "unprivileged+cgroup" else "", stderr_file=log)
    assert status["verdict"] == "memory", (status, out)
    # the owner's log says which limit ended the bot, not only that its process was killed
    assert log.read_text().rstrip().splitlines()[-1].startswith("[sandbox] memory (its limit: 256 MiB of memory)")
    if mode == PER_PROCESS:
        # The whole tree killed while the children held their memory: the bot never saw them end.
        assert "children" not in out and status["signal"] == 9, (status, out)
        assert status["peak_memory_mb"] is None and "MiB" in status["detail"], status  # a sample, not a peak
        wait_until(lambda: not uid_pids(uid), 10, what="the sandbox's processes gone")  # SIGKILLed: exiting
        return
    codes = json.loads(out.split("children ")[1].splitlines()[0])
    assert sum(1 for c in codes if c == 0) * 200 <= 256, out  # at most one child held its 200 MiB to the end
    assert 200 <= status["peak_memory_mb"] <= 256, status


@pytest.mark.parametrize("mode", [*MODES, PER_PROCESS])
def test_eight_children_of_20_mib_stay_within_a_256_mib_limit(place: Path, uid: int, delegated: str,
                                                             mode: str) -> None:
    """The honest counterpart: 8 x 20 MiB (168 MiB with the interpreter the children share) under 256 MiB runs
    to its end in every mode: the keeper's watch does not kill a tree within its limit."""
    status, out = run(place, uid, mode, forks(20), "--memory-mb", "256",
                      cgroup=delegated if mode == "unprivileged+cgroup" else "")
    assert status["verdict"] == "ok", (status, out)
    assert "children [0, 0, 0, 0, 0, 0, 0, 0]" in out, out


SHARED = """
    import os, time
    block = bytearray(200 << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    kids = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            total = sum(block[i] for i in range(0, len(block), 4096))  # reads every page: shared, not copied
            time.sleep(1)
            os._exit(0 if total == len(block) // 4096 else 3)
        kids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids]
    print("children", codes, flush=True)
"""


@pytest.mark.parametrize("mode", [*MODES, PER_PROCESS])
def test_children_sharing_their_parents_memory_count_it_once(place: Path, uid: int, delegated: str,
                                                            mode: str) -> None:
    """A 200 MiB parent whose 8 children read all of it: 9 resident sets of 200 MiB (1,800 MiB summed), 200 MiB
    of memory (the kernel's, as a cgroup charges each page once). Under 256 MiB it runs to its end in every
    mode: without a cgroup the keeper counts each process's proportional share, not its resident set."""
    status, out = run(place, uid, mode, SHARED, "--memory-mb", "256",
                      cgroup=delegated if mode == "unprivileged+cgroup" else "")
    assert status["verdict"] == "ok", (status, out)
    assert "children [0, 0, 0, 0, 0, 0, 0, 0]" in out, out


def test_unprivileged_without_a_cgroup_is_refused_with_the_reason(place: Path, uid: int) -> None:
    """No cgroup, no sound bound on the tree: the keeper refuses (it ran the bot with per-process limits before),
    and ``--check`` (what the worker runs at its start) says why; ``--per-process-limits`` is the operator's
    explicit acceptance, and then no peak figure is claimed."""
    status, out = run(place, uid, "unprivileged", FORKS, "--memory-mb", "256")
    assert status["verdict"] == "start_failed" and "PARTERRE_SANDBOX_CGROUP" in status["detail"], status
    assert "children" not in out
    check = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-m",
                            "workers.hosting.sandbox", "--check"], capture_output=True, text=True, cwd=ROOT,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, timeout=60)
    assert check.returncode == 1 and "PARTERRE_SANDBOX_CGROUP" in check.stdout, check
    status, out = run(place, uid, "unprivileged", "print('RAN')", "--per-process-limits")
    assert status["verdict"] == "ok" and "RAN" in out and status["peak_memory_mb"] is None, (status, out)


@pytest.mark.parametrize("mode", MODES)
def test_the_cpu_quota_holds_for_the_tree(place: Path, uid: int, delegated: str, mode: str) -> None:
    """4 busy processes for 3 s under a quota of a quarter core get about 0.75 CPU-s (before: no quota, as much
    as the machine had)."""
    status, out = run(place, uid, mode, """
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                break
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
    """, "--cpus", "0.25", cgroup=delegated if mode != "root" else "")
    assert status["verdict"] == "ok", (status, out)
    # cpu_s is the tree's (the cgroup's): it used to be the keeper's getrusage, which saw 0.005 s of this.
    assert 0.1 * status["wall_s"] <= status["cpu_s"] <= 0.25 * status["wall_s"] * 1.2 + 0.1, status


@pytest.mark.parametrize("mode", MODES)
def test_the_cpu_seconds_hold_for_the_tree(place: Path, uid: int, delegated: str, mode: str) -> None:
    """RLIMIT_CPU is per process: 4 busy processes of 1 s each passed a 2 CPU-s limit. Now the keeper reads
    the cgroup's CPU time: verdict ``cpu_time``."""
    status, out = run(place, uid, mode, """
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                break
        end = time.process_time() + 1.5
        while time.process_time() < end:
            pass
        print("DONE", os.getpid(), flush=True)
        time.sleep(5)
    """, "--cpu-s", "2", "--cpus", "0", cgroup=delegated if mode != "root" else "")
    assert status["verdict"] == "cpu_time", (status, out)
    assert 2 <= status["cpu_s"] <= 3, status


@pytest.mark.parametrize("mode", MODES)
def test_the_host_is_not_named(place: Path, uid: int, delegated: str, mode: str) -> None:
    """The host name is the sandbox's own, /proc/meminfo shows the sandbox's limit and /proc/loadavg no load
    (before: the worker's host name, the machine's memory and load)."""
    status, out = run(place, uid, mode, """
        import os, socket
        print("host", socket.gethostname(), flush=True)
        print("meminfo", open("/proc/meminfo").read().split("\\n")[0].split(), flush=True)
        print("loadavg", open("/proc/loadavg").read().split()[:3], os.getloadavg(), flush=True)
        print("mounted", [line.split()[3:5] for line in open("/proc/self/mountinfo")
                          if line.split()[4] in ("/proc/meminfo", "/proc/loadavg")], flush=True)
    """, "--memory-mb", "300", cgroup=delegated if mode != "root" else "")
    assert status["verdict"] == "ok", (status, out)
    assert f"host {socket.gethostname()}\n" not in out and "host parterre-bot" in out, out
    assert "meminfo ['MemTotal:', '307200', 'kB']" in out, out
    host_total = Path("/proc/meminfo").read_text().split("\n")[0].split()[1]
    assert host_total != "307200"
    assert "loadavg ['0.00', '0.00', '0.00']" in out, out
    mounted = out.split("mounted ")[1].splitlines()[0]
    assert "/proc/meminfo" in mounted and str(place) not in mounted and "/tmp" not in mounted, out


WORKER_CHECK = """
import json, sys
from workers.hosting import seats as hosted_seats
from workers.hosting import validation as hosted
# The worker runs the check with its own interpreter; this machine's lies under a home the uid cannot reach,
# so the system's one (the check needs the standard library only).
sys.executable = "/usr/bin/python3.11"
cfg = {**hosted.hosted_settings(), "per_slot": 2}
cfg["limits"] = json.loads(sys.argv[1])
out = {"refusal": hosted.sandbox_refusal(cfg)}
try:
    with hosted_seats.HostedSeats(None, {1: None}, match_id=7, attempt=1, address="", secret="", cfg=cfg):
        out["seats"] = "started"
except hosted.SandboxCapacityError as exc:
    out["seats"] = str(exc)
except Exception as exc:  # past the check: it went on to start the seats
    out["seats"] = "started: " + type(exc).__name__
print(json.dumps(out))
"""


def test_a_worker_that_cannot_hold_the_limits_refuses_hosted_bots(place: Path, uid: int, delegated: str) -> None:
    """The worker's side, as an unprivileged process: without a cgroup it refuses (the reason), a match seating
    a hosted bot is refused before any seat starts; with a delegated cgroup or the operator's acceptance of
    per-process limits it goes on."""
    def as_worker(limits: dict[str, str]) -> dict[str, str]:
        done = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-c",
                               WORKER_CHECK, json.dumps(limits)], capture_output=True, text=True, cwd=ROOT,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                                   "PARTERRE_HOSTED_DIR": str(place / "hosted")}, timeout=60)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.splitlines()[-1]))

    refused = as_worker({})
    assert "PARTERRE_SANDBOX_CGROUP" in refused["refusal"], refused
    assert "refuses hosted bots" in refused["seats"] and "PARTERRE_SANDBOX_CGROUP" in refused["seats"], refused
    for limits in ({"cgroup": delegated}, {"per_process_limits": "1"}):
        allowed = as_worker(limits)
        assert allowed["refusal"] == "" and allowed["seats"].startswith("started"), (limits, allowed)
