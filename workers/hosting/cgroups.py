"""The sandbox's cgroup: one memory, pids and CPU bound on the bot's whole process tree (docs/hosted.md).

Without a cgroup every limit the kernel offers is per process (``RLIMIT_DATA``,
``RLIMIT_AS``): 8 children of 200 MiB each pass a 256 MiB limit, and memory
outside every process (``memfd``, SysV shared memory, a tmpfs) is not counted at
all. So the keeper (``workers.hosting.sandbox``) puts the sandbox in a cgroup of its own
and refuses to run a bot when it cannot make one, unless the operator accepted
per-process limits (:data:`PER_PROCESS_ENV`).

Where the cgroup comes from, in order:

* ``--cgroup PATH`` (the worker's ``PARTERRE_SANDBOX_CGROUP``): a cgroup the
  worker may write — delegated to its uid (``chown``) by the operator —, named
  as in ``/proc/self/cgroup`` (relative to the hierarchy's root). On cgroup v2
  (``/sys/fs/cgroup/cgroup.controllers`` exists) it is ``/sys/fs/cgroup/PATH``,
  and the ``memory``, ``pids`` and ``cpu`` controllers must be enabled for its
  children (``cgroup.subtree_control``; the keeper enables them when it may);
  on v1 it is ``PATH`` under each of ``memory``, ``pids`` and ``cpu``;
* else, as root: ``parterre-sandbox`` at the root of those hierarchies;
* else none: :func:`Cgroup.make` returns the reason.

Each sandbox gets a child ``<keeper pid>-<ms>`` there, removed by its keeper (or,
after a keeper killed with SIGKILL, by the next one: :meth:`Cgroup.sweep`).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
DEFAULT_PARENT = "parterre-sandbox"
"""The parent cgroup a root keeper makes when no ``--cgroup`` is given."""
PER_PROCESS_ENV = "PARTERRE_SANDBOX_PER_PROCESS_LIMITS"
"""Set to ``1`` by an operator who accepts per-process limits where no cgroup can be had (docs/hosted.md)."""
CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu")


def unified() -> bool:
    """Whether ``/sys/fs/cgroup`` is a cgroup v2 (unified) hierarchy."""
    return (ROOT / "cgroup.controllers").exists()


class Cgroup:
    """One sandbox's cgroup(s): v2 (one directory) or v1 (one per controller)."""

    def __init__(self, dirs: dict[str, Path], v2: bool) -> None:
        self.dirs, self.v2 = dirs, v2

    @staticmethod
    def parent(setting: str | None, privileged: bool) -> str | None:
        """The parent cgroup's path (relative to the hierarchy root), or None when there is none to use."""
        if setting:
            return setting.strip("/")
        return DEFAULT_PARENT if privileged else None

    @classmethod
    def make(cls, name: str, memory_mb: int, pids: int, cpus: float, setting: str | None,
             privileged: bool) -> tuple[Cgroup | None, str]:
        """Make the sandbox's cgroup ``name`` with its limits; returns ``(cgroup, "")`` or ``(None, reason)``.

        ``cpus``: the CPU quota in cores (``cpu.max`` / ``cpu.cfs_quota_us``); 0 for none."""
        parent = cls.parent(setting, privileged)
        if parent is None:
            return None, ("no cgroup: the keeper is not root and no delegated cgroup is set "
                          "(PARTERRE_SANDBOX_CGROUP)")
        cls.sweep(parent)
        quota = int(cpus * CPU_PERIOD_US) if cpus > 0 else 0
        try:
            if unified():
                return cls._make_v2(ROOT / parent, name, memory_mb, pids, quota), ""
            return cls._make_v1(parent, name, memory_mb, pids, quota), ""
        except OSError as exc:
            return None, f"cannot make a cgroup under {parent!r}: {exc}"

    @classmethod
    def _make_v2(cls, base: Path, name: str, memory_mb: int, pids: int, quota: int) -> Cgroup:
        base.mkdir(exist_ok=True)
        wanted = {"memory", "pids", "cpu"}
        enabled = set((base / "cgroup.subtree_control").read_text().split())
        if not wanted <= enabled:
            (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in sorted(wanted - enabled)))
        path = base / name
        path.mkdir()
        group = cls({"unified": path}, v2=True)
        try:
            (path / "memory.max").write_text(str(memory_mb << 20))
            (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(pids))
            (path / "cpu.max").write_text(f"{quota or 'max'} {CPU_PERIOD_US}")
        except OSError:
            group.remove()
            raise
        return group

    @classmethod
    def _make_v1(cls, parent: str, name: str, memory_mb: int, pids: int, quota: int) -> Cgroup:
        group = cls({}, v2=False)
        settings = {"memory": {"memory.limit_in_bytes": memory_mb << 20,
                               "memory.memsw.limit_in_bytes": memory_mb << 20},
                    "pids": {"pids.max": pids},
                    "cpu": {"cpu.cfs_period_us": CPU_PERIOD_US, "cpu.cfs_quota_us": quota or -1},
                    "cpuacct": {}}
        try:
            for ctl in V1_CONTROLLERS:
                base = ROOT / ctl / parent
                base.mkdir(parents=True, exist_ok=True)
                path = base / name
                path.mkdir()
                group.dirs[ctl] = path
                for fname, value in settings[ctl].items():
                    if (path / fname).exists():  # memsw: only with swap accounting
                        (path / fname).write_text(str(value))
        except OSError:
            group.remove()
            raise
        # The tree's CPU seconds (cpuacct.usage): in the cpu hierarchy when the two are mounted together, else
        # a cpuacct cgroup too, when one can be made (optional: without it cpu_s falls back to getrusage).
        acct = ROOT / "cpuacct"
        with contextlib.suppress(OSError):
            if acct.is_dir() and not acct.samefile(ROOT / "cpu"):
                (acct / parent).mkdir(parents=True, exist_ok=True)
                (acct / parent / name).mkdir()
                group.dirs["cpuacct"] = acct / parent / name
        return group

    def join(self) -> None:
        """Move this process into the cgroup (called in the keeper's child before it becomes bwrap)."""
        for path in self.dirs.values():
            (path / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> set[int]:
        """The processes in the cgroup now."""
        out: set[int] = set()
        for path in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                out |= {int(x) for x in (path / "cgroup.procs").read_text().split()}
        return out

    def _read(self, ctl: str, fname: str) -> int | None:
        path = self.dirs.get("unified" if self.v2 else ctl)
        try:
            return int((path / fname).read_text().split()[0]) if path is not None else None
        except (OSError, ValueError, IndexError):
            return None

    def _keyed(self, ctl: str, fname: str, key: str) -> int:
        path = self.dirs.get("unified" if self.v2 else ctl)
        with contextlib.suppress(OSError, ValueError):
            if path is not None:
                for line in (path / fname).read_text().splitlines():
                    k, _, value = line.partition(" ")
                    if k == key:
                        return int(value)
        return 0

    def peak_bytes(self) -> int | None:
        """The tree's peak memory (``memory.peak``, Linux >= 5.19 / ``memory.max_usage_in_bytes``), or None."""
        return self._read("memory", "memory.peak" if self.v2 else "memory.max_usage_in_bytes")

    def cpu_seconds(self) -> float | None:
        """CPU time of every process of the tree so far (v2 ``cpu.stat`` ``usage_usec``, v1 ``cpuacct.usage``),
        or None without that file."""
        if self.v2:
            usage = self._keyed("cpu", "cpu.stat", "usage_usec")
            return usage / 1e6 if (self.dirs["unified"] / "cpu.stat").exists() else None
        path = self.dirs.get("cpuacct") or self.dirs.get("cpu")
        try:
            return int((path / "cpuacct.usage").read_text()) / 1e9 if path is not None else None
        except (OSError, ValueError):
            return None

    def memory_hits(self) -> tuple[int, int]:
        """``(OOM kills, times the limit was met)``: ``oom_kill`` of ``memory.events`` (v2) or
        ``memory.oom_control`` (v1), and v2's ``max`` events / v1's ``failcnt``."""
        if self.v2:
            return (self._keyed("memory", "memory.events", "oom_kill"),
                    self._keyed("memory", "memory.events", "max"))
        return (self._keyed("memory", "memory.oom_control", "oom_kill"),
                self._read("memory", "memory.failcnt") or 0)

    @classmethod
    def sweep(cls, parent: str) -> None:
        """Remove the cgroups of keepers that are gone (named ``<keeper pid>-<ms>``; a keeper killed
        with SIGKILL never removes its own). A cgroup still holding a process is left alone."""
        bases = [ROOT / parent] if unified() else [ROOT / ctl / parent for ctl in V1_CONTROLLERS]
        if not unified() and (ROOT / "cpuacct").is_dir():
            bases.append(ROOT / "cpuacct" / parent)
        for base in bases:
            with contextlib.suppress(OSError):
                for path in base.iterdir():
                    pid = path.name.partition("-")[0]
                    if path.is_dir() and pid.isdigit() and pid.isascii() and not Path(f"/proc/{pid}").exists():
                        with contextlib.suppress(OSError):
                            path.rmdir()

    def remove(self) -> None:
        """Remove the cgroup (retried for a second while the kernel empties it)."""
        for path in self.dirs.values():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
