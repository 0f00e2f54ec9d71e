"""The web process's C heap: few malloc arenas, freed archives given back (docs/faults.md W-7).

An upload is read and inspected in a thread of the threadpool (up to 40 threads). glibc gives each
thread that allocates while another holds the heap lock an arena of its own (up to 8 per core), and a
freed 8 MiB archive stays in its arena for the next allocation of that thread rather than going back
to the system: 40 threads that each once held an archive keep 40 archives resident although at most
:data:`ladder.web.submissions.UPLOADS_AT_ONCE` are alive at any moment. So the web process

* limits glibc to :data:`ARENAS` arenas (``mallopt(M_ARENA_MAX, 2)``) at its start, before uvicorn
  starts any thread (:func:`limit_arenas`): threads share them, and a freed archive is reused by the
  next upload whichever thread reads it;
* drops the frames of a refused upload's exception and of the exceptions it chained (each holds the
  archive's bytes in a local; exception, traceback and frame form a cycle that only the garbage
  collector would free, whenever it next runs) before it answers (:func:`without_frames`);
* gives free memory at the top of the arenas back to the system after each upload
  (``malloc_trim(0)``, :func:`trim`), so an upload burst leaves the RSS where it was.

Elsewhere than glibc (musl, macOS) both are no-ops: ``mallopt`` and ``malloc_trim`` are glibc's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import traceback
from typing import TypeVar

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the most arenas (``<malloc.h>``)."""
ARENAS = 2
"""Arenas the web process's threads share (the main thread's and one more)."""
E = TypeVar("E", bound=BaseException)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not hasattr(libc, "mallopt") or not hasattr(libc, "malloc_trim"):
        return None
    return libc


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Set glibc's ``M_ARENA_MAX`` to ``arenas``; True when glibc accepted it (False elsewhere).
    Call it before the process starts threads: an arena made already stays."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)) == 1)


def trim() -> bool:
    """``malloc_trim(0)``: give the free memory of every arena back to the system; True when some was."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(ctypes.c_size_t(0)) == 1)


def without_frames(exc: E) -> E:
    """``exc`` with no traceback and no chained exceptions, the locals of every frame they held cleared
    (``traceback.clear_frames``; a frame still running keeps its own): raise it again from a frame that
    holds nothing large, and what those frames held (an archive) is freed at once."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        traceback.clear_frames(link.__traceback__)
        link = link.__cause__ or link.__context__
    exc.__cause__ = exc.__context__ = None
    return exc.with_traceback(None)
