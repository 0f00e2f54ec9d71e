"""How many argon2 computations one process runs at once, sized from its memory.

Every argon2id verification or hash (``argon2-cffi``'s default parameters) allocates
``memory_cost`` KiB, 64 MiB, and the web runs sync routes in a pool of 40 threads: unbounded, a
flood of logins would take 40 × 64 MiB. :func:`slot` admits at
most :func:`slots` computations per process; a caller that cannot get a slot within
:data:`WAIT_S` seconds, or finds :data:`MAX_WAITING` callers waiting already, gets
:class:`PasswordCheckBusyError` (the web answers 503 with ``Retry-After``) instead of queueing
without end.

The number of slots is ``PARTERRE_ARGON2_SLOTS`` when set, else a quarter of the memory this
process may use (the smallest of the machine's memory, the cgroup's ``memory.max`` /
``memory.limit_in_bytes`` and ``RLIMIT_AS``) divided by one computation's memory, at least 1
and at most the number of CPUs (argon2 is CPU-bound: more at once only makes each slower).
The web's 512 MiB (docker-compose.yml, deploy/k8s) gives 2.
"""

from __future__ import annotations

import os
import resource
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ladder.errors import LadderError

SLOTS_ENV = "PARTERRE_ARGON2_SLOTS"
WAIT_S = 2.0
"""Seconds a password check waits for a slot before it is refused as busy."""
RETRY_AFTER_S = 2
"""What ``Retry-After`` says to a caller refused as busy."""
MEMORY_SHARE = 4
"""At most 1/MEMORY_SHARE of the process's memory goes to argon2 at once."""
MAX_WAITING = 8
"""Checks that may wait for a slot at once; one more is refused at once. Each waiter holds one of the
web's worker threads, so a flood of logins for many accounts cannot take them all from other pages."""

_CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


class PasswordCheckBusyError(LadderError):
    """Every argon2 slot of this process stayed taken for :data:`WAIT_S`; try again in ``retry_after_s``."""

    def __init__(self, message: str, retry_after_s: int = RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def memory_limit_bytes() -> int:
    """Bytes this process may use: the least of physical memory, the cgroup's limit and ``RLIMIT_AS``."""
    limits = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            limits.append(int(text))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits.append(soft)
    return min(limits)


def slots(env: dict[str, str] | None = None, *, memory_cost_kib: int | None = None) -> int:
    """The number of argon2 computations one process runs at once (see the module's docstring).

    Args:
        env: the environment (default ``os.environ``).
        memory_cost_kib: memory of one computation (default: ``argon2-cffi``'s default profile).

    Raises:
        ValueError: ``PARTERRE_ARGON2_SLOTS`` is set but not a whole number >= 1.
    """
    env = dict(os.environ if env is None else env)
    raw = (env.get(SLOTS_ENV) or "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ValueError(f"{SLOTS_ENV}={raw!r}: expected a whole number >= 1")
        return int(raw)
    if memory_cost_kib is None:
        from argon2 import PasswordHasher

        memory_cost_kib = PasswordHasher().memory_cost
    by_memory = memory_limit_bytes() // MEMORY_SHARE // (memory_cost_kib * 1024)
    return max(1, min(os.cpu_count() or 1, by_memory))


_lock = threading.Lock()
_semaphore: threading.BoundedSemaphore | None = None
_waiting = 0


def _gate() -> threading.BoundedSemaphore:
    global _semaphore
    with _lock:
        if _semaphore is None:
            _semaphore = threading.BoundedSemaphore(slots())
        return _semaphore


@contextmanager
def slot(wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold one argon2 slot of this process for the body of the ``with``.

    Raises:
        PasswordCheckBusyError: no slot came free within ``wait_s`` seconds, or :data:`MAX_WAITING`
            checks were waiting already (nothing was computed).
    """
    global _waiting
    gate = _gate()
    if not gate.acquire(blocking=False):
        with _lock:
            queued = _waiting < MAX_WAITING
            if queued:
                _waiting += 1
        got = False
        if queued:
            try:
                got = gate.acquire(timeout=wait_s)
            finally:
                with _lock:
                    _waiting -= 1
        if not got:
            raise PasswordCheckBusyError(f"the server is busy checking passwords; try again in {RETRY_AFTER_S} s")
    try:
        yield
    finally:
        gate.release()
