"""What the sandbox's keeper reads of the host, and what the bot is shown of it (docs/hosted.md).

* the tasks of a uid, as ``/proc`` shows them and as the kernel charges them to ``RLIMIT_NPROC``
  (:func:`charged_tasks`: in a container ``/proc`` does not show them all);
* the processes of the sandbox's tree and the memory they hold (:func:`tree_memory`), what the keeper watches
  when no cgroup bounds the tree;
* :func:`proc_files`: the contents put over ``/proc/meminfo`` and ``/proc/loadavg`` inside the sandbox, so
  that the bot reads its own memory limit and no load instead of the machine's (the kernel does not
  namespace these files; ``bwrap --ro-bind-data`` copies them into the sandbox's own tmpfs).
"""

from __future__ import annotations

import os
import resource


def uid_pids(uid: int) -> list[int]:
    """Pids of the live (not zombie) processes whose real uid is ``uid`` (read from ``/proc``)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in ("Z", "X"):
                out.append(int(entry))
        except (OSError, ValueError, KeyError, IndexError):
            continue
    return out


def uid_tasks(uid: int) -> int:
    """Tasks (threads included: what ``RLIMIT_NPROC`` counts) of the live processes whose real uid is ``uid``."""
    total = 0
    for pid in uid_pids(uid):
        try:
            with open(f"/proc/{pid}/status") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
        except (OSError, ValueError, StopIteration, IndexError):
            continue
    return total


def charged_tasks(floor: int = 0) -> int:
    """Tasks the kernel charges to this process's real uid against ``RLIMIT_NPROC``, this one included.

    In a container ``/proc`` shows only the container's own processes, while the kernel counts
    every task of the uid on the host (other containers run as the same uid 10001), so the count
    is measured instead: a fork succeeds exactly when the count plus the new task is within the
    soft limit. The soft limit is lowered step by step (exponential, then binary search, from
    ``floor``, the tasks seen in ``/proc``), each probe child exiting at once and reaped, then
    restored. About 2 log2(count) forks. Unlimited hard limit or no fork at all: ``floor``.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    top = hard if hard != resource.RLIM_INFINITY else 1 << 22

    def fits(limit: int) -> bool:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, hard))
        try:
            pid = os.fork()
        except BlockingIOError:
            return False
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return True

    try:
        lo, step = max(floor, 1), 16  # invariant below: fits(lo) is False or lo is the floor
        if fits(lo):
            return lo - 1
        hi = lo + step
        while not fits(hi):  # the count is at least hi
            lo, step = hi, step * 2
            hi = min(lo + step, top)
            if lo >= top:
                return top
        while hi - lo > 1:  # fits(hi) and not fits(lo)
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        return hi - 1
    except OSError:
        return floor
    finally:
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, hard))


def children_listed() -> bool:
    """Whether the kernel lists each thread's children (``/proc/<pid>/task/<tid>/children``,
    ``CONFIG_PROC_CHILDREN``), which :func:`tree_pids` reads."""
    return os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def tree_pids(root: int) -> list[int]:
    """``root`` and every process descended from it now, from each thread's ``/proc/<pid>/task/<tid>/children``
    (a process forked by a thread is listed only there). In the sandbox an orphan is adopted by the pid
    namespace's init, bwrap's child, so from bwrap every process of the sandbox is reached. A process
    that ends meanwhile is skipped; one forked meanwhile is missed until the next call."""
    out: list[int] = []
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as fh:
                    todo += [int(x) for x in fh.read().split()]
            except (OSError, ValueError):
                continue
    return out


def _field_kb(path: str, key: str) -> int | None:
    """The first number on ``path``'s line starting with ``key`` (kB), 0 when the file has no such line (a
    zombie's), None when it cannot be read (gone, or not ours to read)."""
    try:
        with open(path) as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith(key)), 0)
    except (OSError, ValueError, IndexError):
        return None


def _resident(pids: list[int]) -> dict[int, int]:
    """``{pid: bytes resident}`` (``VmRSS`` of ``/proc/<pid>/status``: a counter, cheap to read; 0 when gone)."""
    return {pid: (_field_kb(f"/proc/{pid}/status", "VmRSS:") or 0) << 10 for pid in pids}


TREE_PASSES = 3
"""Passes of :func:`tree_memory` over the tree's proportional set sizes before it settles for the least."""


def tree_memory(root: int, limit: int) -> int:
    """Bytes that ``root``'s process tree (:func:`tree_pids`) holds now, as far as it matters against ``limit``.

    First the sum of the processes' resident sets (``VmRSS``); when that is over ``limit``, the sum of their
    proportional set sizes instead (``Pss`` of ``/proc/<pid>/smaps_rollup``: each page shared by n processes
    counts 1/n to each, so children forked from one parent do not count its pages n times; the kernel walks
    the page tables for it, about 14 ms a GiB here). Pss is never above RSS, so the first sum is within
    ``limit`` only if the second is. A process whose ``smaps_rollup`` cannot be read counts its resident set
    as read then (none once it is exiting: a figure from before would count what it is freeing).

    The files are read one after the other, not at one instant: a process that exits or frees memory during a
    pass leaves the pages it shared to the others, and those read after it count them again (16 children of a
    400 MiB parent ending within 0.1 s: one pass summed up to 471 MiB of a tree of 410). So a pass counts only
    if afterwards the tree has the same processes and none holds less than before it; else it is made again,
    up to :data:`TREE_PASSES` times, and the least sum is taken (there: at most 409 MiB). What no process
    maps is in neither sum: a tmpfs's files, an unmapped ``memfd`` or SysV segment, kernel memory."""
    pids = tree_pids(root)
    resident = _resident(pids)
    least = sum(resident.values())
    for _ in range(TREE_PASSES):
        if sum(resident.values()) <= limit:
            return sum(resident.values())
        total = 0
        for pid in pids:  # an unreadable smaps_rollup: its resident set now (0 for a process gone or exiting)
            kb = _field_kb(f"/proc/{pid}/smaps_rollup", "Pss:")
            total += (kb if kb is not None else _field_kb(f"/proc/{pid}/status", "VmRSS:") or 0) << 10
        least = min(least, total)
        after = tree_pids(root)
        now = _resident(after)
        if set(after) == set(pids) and all(now[pid] >= resident[pid] for pid in pids):
            return total
        pids, resident = after, now
    return least


def proc_files(memory_mb: int) -> dict[str, bytes]:
    """``{path inside the sandbox: content}`` shown instead of the machine's: ``/proc/meminfo`` with the
    sandbox's memory limit as its total (and as free: a static view, not its use), no swap; ``/proc/loadavg``
    with no load."""
    kb = memory_mb << 10
    fields = {"MemTotal": kb, "MemFree": kb, "MemAvailable": kb, "Buffers": 0, "Cached": 0, "SwapCached": 0,
              "Active": 0, "Inactive": 0, "SwapTotal": 0, "SwapFree": 0, "Shmem": 0}
    meminfo = "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in fields.items())
    return {"/proc/meminfo": meminfo.encode(), "/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n"}
