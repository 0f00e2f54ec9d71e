"""The web process's C heap after an upload: what a refused archive held is freed at once, few malloc
arenas, free memory given back (docs/faults.md W-7).

A refused upload's :class:`ladder.submissions.SubmissionError` carries a traceback whose frames hold
the archive's bytes (up to 8 MiB) in their locals, and often a chained exception with more such
frames; exception, traceback and frame form a reference cycle, which only the garbage collector frees,
whenever it next runs: 40 parallel refused 7 MiB uploads kept 280 MiB resident. So the web process

* drops those frames before it answers (:func:`without_frames`): the archive is freed when the
  inspection ends, and at most :data:`web.submissions.UPLOADS_AT_ONCE` archives are alive;
* limits glibc to :data:`ARENAS` malloc arenas (``mallopt(M_ARENA_MAX, 2)``) at its start, before
  any thread (:func:`limit_arenas`). Uploads are read in the threadpool's threads (up to 40), and
  glibc gives a thread that allocates while another holds the heap lock an arena of its own (up to 8
  per core); memory freed in an arena stays with it for that arena's next allocations, so freed
  archives spread over many arenas can stay resident together although few are alive at once;
* gives the arenas' free memory back to the system after each upload (``malloc_trim(0)``,
  :func:`trim`), so an upload burst leaves the RSS where it was.

Elsewhere than glibc (musl, macOS) ``mallopt`` and ``malloc_trim`` do not exist and those two steps
are skipped.
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
