"""Run one hosted bot process in a bubblewrap sandbox (docs/hosted.md, "The sandbox").

``python -m workers.hosting.sandbox --root DIR --runtime R [limits] -- COMMAND...`` is a
command line like any other, so the stdio adapter (``parterre connect
--exec``) runs a hosted bot exactly as it runs a local one, and the referee
cannot tell the two apart. This process (the *keeper*) stays outside the
sandbox, as root, and:

* starts ``bwrap`` as a fresh unprivileged uid (``UID_BASE`` + its own pid, so
  no two sandboxes share one and ``RLIMIT_NPROC`` counts only this sandbox's
  processes) in its own session, or unprivileged as the worker's own uid;
* in a cgroup of its own (memory, pids, CPU quota: ``workers.hosting.cgroups``), or
  refuses to run the bot (``start_failed``, "refused: ...") when it cannot make
  one, unless ``--per-process-limits`` accepts per-process limits;
* inside: new user, pid, network, IPC, UTS and cgroup namespaces, and no further
  user namespace (``--disable-userns``: no mount of the bot's own), host name
  :data:`HOSTNAME` (no network at all: only a loopback that nothing listens on), the system's
  ``/usr`` read-only, the bot's directory read-only at ``/bot``, a private
  ``tmpfs`` scratch at ``/scratch`` capped at ``scratch_mb``, a fresh
  ``/proc`` that shows only the sandbox's processes, an empty environment
  (``PATH``, ``HOME=/scratch``, ``LANG`` and, for Python, ``PYTHONPATH=/sdk``);
  the worker's code, ``/root``, ``/work``, ``/tmp``, other bots' directories
  and ``/etc`` (beyond the dynamic loader's cache) are simply not there;
* rlimits: CPU seconds, file size (= scratch cap), no core files, open files,
  processes/threads (run unprivileged, on the worker's own uid: its tasks at
  the start as the kernel counts them, plus the allowance), and each process's writable
  private memory (``RLIMIT_DATA``) with ``--per-process-limits``, Node.js included;
* with ``--per-process-limits`` and no cgroup, watches the memory of the whole tree itself: every
  :data:`TREE_SAMPLE_S` it sums the memory of each of the sandbox's processes (their proportional set
  sizes: ``workers.hosting.host.tree_memory``) and kills the tree past ``memory_mb`` (verdict ``memory``);
* forwards the bot's stdout to its own stdout and keeps at most ``stderr_kb``
  of its stderr in ``--stderr-file``; when stdout and stderr together pass
  ``output_mb`` the sandbox is killed;
* kills the whole tree (``SIGKILL`` to bwrap: the pid namespace's init dies and
  the kernel kills every process in it; then every process of the sandbox's
  uid and cgroup, in case) at the wall-time limit, on ``SIGTERM``/``SIGINT``/
  ``SIGHUP`` (the adapter stops a child with SIGTERM), and when its own
  parent dies;
* writes a JSON status (``--status-file``): ``verdict`` one of :data:`VERDICTS`,
  the exit code or signal, CPU seconds, peak memory, output bytes.

Exit status: the bot's own exit code, ``128 + signal`` when it was killed.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from workers.hosting.cgroups import Cgroup
from workers.hosting.host import charged_tasks as charged_tasks
from workers.hosting.host import children_listed, proc_files, tree_memory
from workers.hosting.host import uid_pids as uid_pids
from workers.hosting.host import uid_tasks as uid_tasks
from workers.hosting.runtimes import DIST_PACKAGES as DIST_PACKAGES
from workers.hosting.runtimes import JAVA_CONFIG, PYTHON_MODULES, java_options, python_module_binds, runtime_missing
from workers.hosting.runtimes import RUNTIME_PACKAGES as RUNTIME_PACKAGES
from workers.hosting.runtimes import RUNTIME_PROGRAMS as RUNTIME_PROGRAMS
from workers.hosting.runtimes import RUNTIMES as RUNTIMES

UID_BASE = 200_000
"""Sandboxes run as uid ``UID_BASE + keeper pid`` (no such user exists; owns nothing on the disk)."""

VERDICTS = ("ok", "exit", "wall_time", "cpu_time", "memory", "output_limit", "stopped", "start_failed")
"""``ok``: exit 0; ``exit``: non-zero exit or a signal of its own; ``wall_time``/``cpu_time``/
``memory``/``output_limit``: killed for that limit; ``stopped``: stopped from outside (match over);
``start_failed``: bwrap could not start the command."""

PROJECT = Path(__file__).resolve().parents[2]
SDK_PARTS = ("games", "bots/strategies", "bots/sdk.py", "bots/wire.py", "proto/__init__.py", "proto/contract.py",
             "proto/parterre")
"""The project's Python SDK offered to ``python3.11`` bots on ``PYTHONPATH=/sdk``: the rules engines
(``import games``, pure Python, with ``mypy_extensions``), the reference strategies
(``from bots.strategies import strategy_for``) and the wire SDK (``from bots.sdk import Bot``, with the
``proto`` stubs, and the worker's ``grpc``, ``google.protobuf`` and ``typing_extensions`` on ``/sdk-libs``:
:data:`SDK_LIBS`)
for gRPC bots, which reach the referee only through the relayed socket (``--grpc-dir``)."""

SDK_LIBS = ("grpc", "google.protobuf", "typing_extensions")
"""Third-party modules of the SDK: the worker's own installed ones, bound read-only under ``/sdk-libs`` (not
copied: 20 MB at every new project state), only from a CPython 3.11 worker (their compiled parts are built for
it, as Debian's ``python3.11`` in the sandbox)."""


def sdk_lib_binds() -> list[str]:
    """``bwrap`` arguments binding :data:`SDK_LIBS` at ``/sdk-libs`` (none from a worker that is not 3.11)."""
    import importlib.util

    if sys.version_info[:2] != (3, 11):
        return []
    out: list[str] = []
    for name in SDK_LIBS:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        if spec.submodule_search_locations:  # a package: its folder
            source, inside = list(spec.submodule_search_locations)[0], "/".join(name.split("."))
        elif spec.origin:
            source, inside = spec.origin, Path(spec.origin).name
        else:
            continue
        out += ["--ro-bind", str(source), f"/sdk-libs/{inside}"]
    return out


TREE_SAMPLE_S = 0.05
"""Without a cgroup, how often the keeper sums the tree's memory (:meth:`Keeper.watch_memory`): a tree that
goes past its limit for less than this between two samples is not seen (docs/hosted.md). The interval grows
to :data:`TREE_SAMPLE_SHARE` times the time a sample took, when longer."""
TREE_SAMPLE_SHARE = 10
"""The watch takes at most about 1/this of a core: a tree whose resident sets together pass the limit while
their proportional sum does not (many children sharing a large parent) costs a page-table walk a sample."""
NO_CHILDREN = ("no cgroup, and per-process limits need /proc/<pid>/task/<tid>/children to watch the tree's "
               "memory (a kernel without CONFIG_PROC_CHILDREN)")
"""Why per-process limits are refused where the keeper could not find the tree's processes."""

HOSTNAME = "parterre-bot"
"""The sandbox's host name (its own UTS namespace): the worker's is not shown."""

GRPC_MOUNT = "/run/parterre"
"""Where ``--grpc-dir`` appears inside the sandbox; the relay listens on ``referee.sock`` there."""
GRPC_SOCKET = "referee.sock"
GRPC_PLACEHOLDER_TOKEN = "hosted"
"""The ``PARTERRE_BOT_TOKEN`` a gRPC bot sees: not a credential (the relay puts the platform's in each Hello)."""


def sdk_dir() -> Path:
    """A read-only copy of the SDK (:data:`SDK_PARTS`) made once per project state; returns its path.

    Copied rather than bound so the sandbox sees no other file of the worker's code."""
    import hashlib
    import shutil

    import mypy_extensions  # the engines' @trait (a no-op at run time): the one module they need beyond the stdlib

    digest = hashlib.sha256()
    # Sources and data only: a compiled engine (.so) was built for the worker's Python and
    # needs the mypyc runtime beside the project; the sandbox's python3.11 runs the pure-Python engines.
    files = sorted(f for part in SDK_PARTS
                   for f in ([PROJECT / part] if (PROJECT / part).is_file() else (PROJECT / part).rglob("*"))
                   if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".so", ".proto"))
    extra = Path(mypy_extensions.__file__)
    for f in files:
        digest.update(str(f.relative_to(PROJECT)).encode() + b"\0" + f.read_bytes())
    digest.update(b"mypy_extensions.py\0" + extra.read_bytes())
    base = Path(os.environ.get("PARTERRE_HOSTED_DIR", "/var/tmp/parterre-hosted"))
    target = base / f"sdk-{digest.hexdigest()[:16]}"
    if target.exists():
        return target
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    tmp = base / f".sdk-{os.getpid()}-{time.monotonic_ns()}"
    for f in files:
        dest = tmp / f.relative_to(PROJECT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    (tmp / "bots" / "__init__.py").write_text("")
    shutil.copyfile(extra, tmp / "mypy_extensions.py")
    # Byte-code beside the copy (named as the sandbox sees it, /sdk): a bot's start then does not
    # compile the engines again (-25 % start-up measured; the read-only /sdk cannot cache it). Used
    # only by a python3.11 of the same version as this one; else ignored.
    import compileall

    compileall.compile_dir(str(tmp), ddir="/sdk", quiet=2, workers=1)
    for path in [tmp, *tmp.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    try:
        tmp.rename(target)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandbox.

    Attributes:
        memory_mb: resident memory (memory cgroup) or address space (rlimit) in MiB.
        pids: processes and threads.
        cpu_s: CPU seconds (SIGXCPU, then SIGKILL one second later).
        wall_s: seconds before the sandbox is killed whatever it does.
        scratch_mb: size of the private writable ``/scratch`` (tmpfs), and the largest file.
        output_mb: stdout plus stderr bytes, in MiB, before the sandbox is killed.
        stderr_kb: stderr kept in the log file (the rest is counted and dropped).
        nofile: open file descriptors.
        cpus: CPU quota of the whole tree, in cores (cgroup ``cpu.max``); 0: none.
    """

    memory_mb: int = 512
    pids: int = 64
    cpu_s: int = 900
    wall_s: float = 3600.0
    scratch_mb: int = 64
    output_mb: int = 64
    stderr_kb: int = 256
    nofile: int = 256
    cpus: float = 1.0


def bwrap_argv(root: str, runtime: str, command: Sequence[str], limits: Limits,
               grpc_dir: str | None = None, data_fds: dict[str, int] | None = None) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` (inside ``/bot``) for ``runtime``.

    ``grpc_dir``: a gRPC bot's per-match folder holding the relay's socket, bound read-only at
    :data:`GRPC_MOUNT` (connecting to a Unix socket needs no write access to its mount), with
    ``PARTERRE_REFEREE_ADDRESS=unix:///run/parterre/referee.sock`` and the placeholder token, as the SDKs
    read them. The network namespace stays empty: that socket is the bot's only way out. ``data_fds``:
    ``{path inside: readable fd}``, files copied in over the sandbox's ``/proc`` (``workers.hosting.host.proc_files``).

    Raises:
        ValueError: unknown runtime or empty command.
    """
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown runtime {runtime!r}")
    if not command:
        raise ValueError("empty command")
    argv = [
        # --unshare-user (not the "-try" of --unshare-all) so that --disable-userns applies: a bot that could
        # make a user namespace of its own could mount a tmpfs there, outside /scratch's size.
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--hostname", HOSTNAME,
        "--die-with-parent", "--new-session", "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/scratch", "--setenv", "TMPDIR", "/scratch",
        "--setenv", "LANG", "C.UTF-8",
        "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
        "--ro-bind-try", "/etc/localtime", "/etc/localtime",
        "--proc", "/proc", "--dev", "/dev",
        "--size", str(limits.scratch_mb << 20), "--tmpfs", "/scratch",
        "--ro-bind", str(root), "/bot", "--chdir", "/bot",
    ]
    if runtime in PYTHON_MODULES:
        argv += ["--ro-bind", str(sdk_dir()), "/sdk", *sdk_lib_binds(), "--setenv", "PYTHONPATH", "/sdk:/sdk-libs",
                 "--setenv", "PYTHONDONTWRITEBYTECODE", "1", *python_module_binds(PYTHON_MODULES[runtime])]
    else:  # any bot may start /usr/bin/python3.11: it finds there what a python3.11 bot finds, not the machine's
        argv += python_module_binds(())
    if runtime == "java":
        argv += [arg for etc in sorted(glob.glob(JAVA_CONFIG)) for arg in ("--ro-bind", etc, etc)]
        command = [command[0], *java_options(limits.memory_mb, limits.cpus), *command[1:]]
    if grpc_dir is not None:
        argv += ["--ro-bind", str(grpc_dir), GRPC_MOUNT,
                 "--setenv", "PARTERRE_REFEREE_ADDRESS", f"unix://{GRPC_MOUNT}/{GRPC_SOCKET}",
                 "--setenv", "PARTERRE_BOT_TOKEN", GRPC_PLACEHOLDER_TOKEN]
    # The root itself is bwrap's tmpfs: read-only too, so only /scratch can be written. So is /dev
    # (bwrap's own tmpfs of device nodes, /dev/shm included: writable, it would hold up to half the
    # machine's memory outside every limit; writing to /dev/null and reading /dev/urandom still work).
    for path, fd in (data_fds or {}).items():
        argv += ["--ro-bind-data", str(fd), path]
    return [*argv, "--remount-ro", "/dev", "--remount-ro", "/", "--", *command]


@dataclass(slots=True)
class Status:
    """What became of a sandboxed run (the ``--status-file`` JSON)."""

    verdict: str
    exit_code: int | None = None
    signal: int | None = None
    cpu_s: float = 0.0
    peak_memory_mb: float | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    wall_s: float = 0.0
    detail: str = ""
    """The cgroup's peak, every process of the sandbox together (MiB); None without a cgroup: no honest
    figure exists then (``getrusage`` misses what lies outside processes, and processes reaped inside)."""


class Keeper:
    """Starts the sandbox, pumps its output, enforces the limits, kills its tree (see the module doc)."""

    def __init__(self, root: str, runtime: str, command: Sequence[str], limits: Limits,
                 stderr_file: str | None = None, grpc_dir: str | None = None, cgroup: str | None = None,
                 per_process: bool = False) -> None:
        self.parent = os.getppid()  # read first: a parent that dies during the start-up is noticed too
        self.limits, self.runtime = limits, runtime
        # The machine's memory and load are not the bot's business: its own limit and no load are shown instead,
        # read by bwrap from pipes (copied into its tmpfs: no host path in the sandbox's mountinfo).
        self.data_fds: dict[str, int] = {}
        for path, data in proc_files(limits.memory_mb).items():
            read, write = os.pipe()
            os.write(write, data)
            os.close(write)
            self.data_fds[path] = read
        self.argv = bwrap_argv(root, runtime, command, limits, grpc_dir, self.data_fds)
        self.grpc = grpc_dir is not None  # its stdout is no protocol: kept in the log like stderr
        # As root: a uid of its own. Unprivileged (a worker image run as a user): the worker's uid,
        # bwrap's user namespace still isolates, and the uid sweep is skipped (it would kill the worker).
        self.privileged = os.geteuid() == 0
        self.uid = UID_BASE + os.getpid() if self.privileged else os.geteuid()
        self.stderr_file = stderr_file
        # The memory, pids and CPU bound of the whole tree. Without it the limits would be per process only:
        # refused unless the operator accepted that (``per_process``; docs/hosted.md), and then the keeper
        # watches the tree's memory itself (:meth:`watch_memory`), which needs the kernel's child lists.
        self.cgroup, self.refusal = Cgroup.make(f"{os.getpid()}-{int(time.time() * 1000)}", limits.memory_mb,
                                                limits.pids, limits.cpus, cgroup, self.privileged)
        if self.cgroup is None and per_process:
            self.refusal = "" if children_listed() else NO_CHILDREN
        self.refusal = runtime_missing(runtime) or self.refusal  # not the bot's fault: refused, not failed
        self.stop_reason: str | None = None
        self.stop_detail = ""
        self.next_sample = 0.0
        self.proc: subprocess.Popen[bytes] | None = None
        self.nproc_base = 0

    def _preexec(self) -> None:
        if self.cgroup is not None:
            self.cgroup.join()
        lim = self.limits
        resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim.scratch_mb << 20, lim.scratch_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (lim.nofile, lim.nofile))
        # RLIMIT_NPROC counts every task of the real uid. As root the sandbox has a uid of its own
        # (bwrap's own processes count too: a few more than the bot's allowance; the pids cgroup is
        # exact). Unprivileged it shares the worker's, so the bound is the uid's tasks counted just
        # before this fork as the kernel counts them (:func:`charged_tasks`: in a container the other
        # containers of the uid count too), plus bwrap's two (its monitor and the pid namespace's
        # init; the first is this child), plus the bot's allowance (the bot itself included).
        nproc = lim.pids + 4 if self.privileged else self.nproc_base + 2 + lim.pids
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if self.cgroup is None:
            # Without a memory cgroup: RLIMIT_DATA, the writable private memory of each process (heap,
            # anonymous mappings; Linux >= 4.7). Not RLIMIT_AS: V8 reserves gigabytes of address space
            # it never touches, so Node.js could not start under it and went unbounded.
            resource.setrlimit(resource.RLIMIT_DATA, (lim.memory_mb << 20, lim.memory_mb << 20))
        if self.privileged:
            os.setgroups([])
            os.setgid(self.uid)
            os.setuid(self.uid)

    def kill_tree(self) -> None:
        """SIGKILL the sandbox: bwrap (its pid namespace dies with it), then the uid's and cgroup's stragglers."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        for _ in range(3):
            left = (set(uid_pids(self.uid)) if self.privileged else set()) | (
                self.cgroup.pids() if self.cgroup is not None else set())
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def _stop(self, reason: str, detail: str = "") -> None:
        if self.stop_reason is None:
            self.stop_reason, self.stop_detail = reason, detail
        self.kill_tree()

    def watch_memory(self) -> bool:
        """Without a cgroup, the memory limit of the whole tree: at most every :data:`TREE_SAMPLE_S`, the memory
        its processes hold together (:func:`workers.hosting.host.tree_memory`); past ``memory_mb``, the tree is
        killed with verdict ``memory``, as a memory cgroup's OOM kill ends in. Returns whether it was."""
        now = time.monotonic()
        if self.cgroup is not None or self.proc is None or now < self.next_sample:
            return False
        held = tree_memory(self.proc.pid, self.limits.memory_mb << 20)
        self.next_sample = now + max(TREE_SAMPLE_S, TREE_SAMPLE_SHARE * (time.monotonic() - now))
        if held <= self.limits.memory_mb << 20:
            return False
        self._stop("memory", f"memory: the sandbox's processes held {held >> 20} MiB together (proportional set "
                             f"size), over the {self.limits.memory_mb} MiB limit")
        return True

    def run(self) -> Status:
        """Run the bot to its end; returns its :class:`Status` (never raises for what the bot does)."""
        started = time.monotonic()
        if self.refusal:
            if self.cgroup is not None:
                self.cgroup.remove()
            for fd in self.data_fds.values():
                os.close(fd)
            return Status(verdict="start_failed", detail=f"refused: {self.refusal}")
        self.nproc_base = 0 if self.privileged else charged_tasks(uid_tasks(self.uid))
        try:
            self.proc = subprocess.Popen(self.argv, stdin=sys.stdin.fileno(), stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, preexec_fn=self._preexec, start_new_session=True,
                                         env={"PATH": "/usr/bin:/bin"},  # bwrap's own init is visible inside
                                         pass_fds=tuple(self.data_fds.values()))
        except OSError as exc:
            if self.cgroup is not None:
                self.cgroup.remove()
            return Status(verdict="start_failed", detail=str(exc))
        finally:
            for fd in self.data_fds.values():  # bwrap has its copies
                os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: self._stop("stopped"))
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out_fd, err_fd = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        os.set_blocking(out_fd, False)
        os.set_blocking(err_fd, False)
        sel = selectors.DefaultSelector()
        sel.register(out_fd, selectors.EVENT_READ, "out")
        sel.register(err_fd, selectors.EVENT_READ, "err")
        log = open(self.stderr_file, "ab") if self.stderr_file else None  # noqa: SIM115 - closed below
        kept = 0
        status = Status(verdict="ok")
        cap_out, cap_err = self.limits.output_mb << 20, self.limits.stderr_kb << 10
        parent = self.parent
        try:
            while sel.get_map():
                if self.stop_reason is not None:
                    break
                if time.monotonic() - started > self.limits.wall_s:
                    self._stop("wall_time")
                    break
                if os.getppid() != parent:
                    self._stop("stopped")
                    break
                # RLIMIT_CPU is per process: the tree's CPU seconds come from its cgroup.
                used = self.cgroup.cpu_seconds() if self.cgroup is not None else None
                if used is not None and used > self.limits.cpu_s:
                    self._stop("cpu_time")
                    break
                if self.watch_memory():
                    break
                for key, _ in sel.select(timeout=0.2 if self.cgroup is not None else TREE_SAMPLE_S):
                    try:
                        data = os.read(key.fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not data:
                        sel.unregister(key.fd)
                        continue
                    if key.data == "out" and not self.grpc:
                        status.stdout_bytes += len(data)
                        try:
                            os.write(1, data)
                        except BrokenPipeError:
                            self._stop("stopped")
                    else:
                        if key.data == "out":
                            status.stdout_bytes += len(data)
                        else:
                            status.stderr_bytes += len(data)
                        if log is not None and kept < cap_err:  # stdout of a gRPC bot too
                            chunk = data[: cap_err - kept]
                            log.write(chunk)
                            log.flush()
                            kept += len(chunk)
                    if status.stdout_bytes + status.stderr_bytes > cap_out:
                        self._stop("output_limit")
                        break
            self._wait(started)
        finally:
            self.kill_tree()
            if log is not None:
                logged = status.stderr_bytes + (status.stdout_bytes if self.grpc else 0)
                if logged > kept:
                    log.write(f"\n[parterre: stderr truncated, {logged - kept} more bytes]\n".encode())
                log.close()
        return self._status(status, started)

    def _wait(self, started: float) -> None:
        assert self.proc is not None
        while self.proc.poll() is None:
            if self.stop_reason is not None:
                self.kill_tree()
            elif time.monotonic() - started > self.limits.wall_s:
                self._stop("wall_time")
            else:
                self.watch_memory()
            time.sleep(0.01)

    def _status(self, status: Status, started: float) -> Status:
        assert self.proc is not None
        code = self.proc.wait()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The cgroup's CPU time of the whole tree (getrusage misses the processes reaped inside the sandbox).
        tree_cpu = self.cgroup.cpu_seconds() if self.cgroup is not None else None
        status.cpu_s = round(tree_cpu if tree_cpu is not None else usage.ru_utime + usage.ru_stime, 3)
        status.wall_s = round(time.monotonic() - started, 3)
        peak = self.cgroup.peak_bytes() if self.cgroup is not None else None
        status.peak_memory_mb = round(peak / (1 << 20), 1) if peak is not None else None
        # bwrap reports the command's status as its own: an exit code, or 128 + signal.
        if code < 0:
            status.signal = -code
        elif code > 128:
            status.signal = code - 128
        else:
            status.exit_code = code
        # The memory cgroup's OOM kills (``oom_kill``, Linux >= 4.13) and limit hits; v1's failcnt stays 0 on
        # some kernels when the limit is met by the OOM killer rather than by reclaim.
        oom_kills, hits = self.cgroup.memory_hits() if self.cgroup is not None else (0, 0)
        if self.stop_reason is not None:
            status.verdict, status.detail = self.stop_reason, self.stop_detail
        elif status.signal == signal.SIGXCPU or (status.signal == signal.SIGKILL and status.cpu_s >= self.limits.cpu_s):
            status.verdict = "cpu_time"
        elif oom_kills > 0 or (hits > 0 and status.signal == signal.SIGKILL):
            # Any process of the tree killed by the OOM killer: the bot met its memory limit, even when the
            # process it started survived (8 children of 200 MiB under 256 MiB: they die, it exits 0).
            status.verdict = "memory"
        elif status.exit_code == 0:
            status.verdict = "ok"
        else:
            status.verdict = "exit"
        if self.cgroup is not None:
            self.cgroup.remove()
        self._say_why(status)
        return status

    def _say_why(self, status: Status) -> None:
        """A limit that ended the bot is written at the end of its stderr log, which its owner reads: a
        rejected version says ``[sandbox] memory: ...``, not only that its process was killed."""
        if self.stderr_file is None or status.verdict in ("ok", "exit"):
            return
        limit = {"memory": f"{self.limits.memory_mb} MiB of memory", "cpu_time": f"{self.limits.cpu_s} CPU-seconds",
                 "wall_time": f"{self.limits.wall_s} s", "output_limit": f"{self.limits.output_mb} MiB of output"}
        words = f" (its limit: {limit[status.verdict]})" if status.verdict in limit else ""
        with open(self.stderr_file, "a", encoding="utf-8") as fh:
            fh.write(f"\n[sandbox] {status.verdict}{words}{': ' + status.detail if status.detail else ''}\n")


def check(cgroup: str | None = None, per_process: bool = False) -> str:
    """Whether this process may run sandboxes with the limits of docs/hosted.md: ``""``, or why not.

    Makes (and removes) a cgroup as a keeper would; also checks that ``bwrap`` exists."""
    import shutil

    if shutil.which("bwrap") is None:
        return "bwrap (bubblewrap) is not installed"
    group, reason = Cgroup.make(f"{os.getpid()}-{int(time.time() * 1000)}-check", Limits().memory_mb,
                                Limits().pids, Limits().cpus, cgroup, os.geteuid() == 0)
    if group is not None:
        group.remove()
        return ""
    if per_process:
        return "" if children_listed() else NO_CHILDREN
    return reason


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.hosting.sandbox``: see the module doc. ``--check``: exit 0 when this process may run
    sandboxes (:func:`check`), else print why and exit 1."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--check"]:
        c = argparse.ArgumentParser(prog="python -m workers.hosting.sandbox --check")
        c.add_argument("--check", action="store_true")
        c.add_argument("--cgroup")
        c.add_argument("--per-process-limits", type=int, nargs="?", const=1, default=0)
        cns = c.parse_args(args)
        reason = check(cns.cgroup, bool(cns.per_process_limits))
        print(reason or "ok")
        return 1 if reason else 0
    p = argparse.ArgumentParser(prog="python -m workers.hosting.sandbox", description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True, help="the bot's directory (bound read-only at /bot)")
    p.add_argument("--runtime", required=True, choices=RUNTIMES)
    p.add_argument("--stderr-file")
    p.add_argument("--status-file")
    p.add_argument("--grpc-dir", help=f"a gRPC bot's folder with the relay's socket (bound at {GRPC_MOUNT})")
    p.add_argument("--cgroup", help="a cgroup delegated to this uid, as in /proc/self/cgroup (docs/hosted.md)")
    p.add_argument("--per-process-limits", type=int, nargs="?", const=1, default=0,
                   help="1: without a cgroup, run with per-process limits instead of refusing (docs/hosted.md)")
    defaults = Limits()
    for name in Limits.__slots__:
        value = getattr(defaults, name)
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    p.add_argument("command", nargs=argparse.REMAINDER)
    ns = p.parse_args(args)
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    limits = Limits(**{name: getattr(ns, name) for name in Limits.__slots__})
    try:
        keeper = Keeper(ns.root, ns.runtime, command, limits, ns.stderr_file, ns.grpc_dir, ns.cgroup,
                        bool(ns.per_process_limits))
    except ValueError as exc:
        p.error(str(exc))
    status = keeper.run()
    if status.verdict == "start_failed":
        print(f"workers.hosting.sandbox: {status.detail}", file=sys.stderr)
    if ns.status_file:
        Path(ns.status_file).write_text(json.dumps(asdict(status)))
    if status.signal is not None:
        return 128 + status.signal
    return status.exit_code if status.exit_code is not None else 125


if __name__ == "__main__":
    sys.exit(main())
