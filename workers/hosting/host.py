"""What the sandbox's keeper reads of the host, and what the bot is shown of it (docs/hosted.md).

* the tasks of a uid, as ``/proc`` shows them and as the kernel charges them to ``RLIMIT_NPROC``
  (:func:`charged_tasks`: in a container ``/proc`` does not show them all);
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


def proc_files(memory_mb: int) -> dict[str, bytes]:
    """``{path inside the sandbox: content}`` shown instead of the machine's: ``/proc/meminfo`` with the
    sandbox's memory limit as its total (and as free: a static view, not its use), no swap; ``/proc/loadavg``
    with no load."""
    kb = memory_mb << 10
    fields = {"MemTotal": kb, "MemFree": kb, "MemAvailable": kb, "Buffers": 0, "Cached": 0, "SwapCached": 0,
              "Active": 0, "Inactive": 0, "SwapTotal": 0, "SwapFree": 0, "Shmem": 0}
    meminfo = "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in fields.items())
    return {"/proc/meminfo": meminfo.encode(), "/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n"}
