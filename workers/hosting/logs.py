"""The worker's own hosted log files: deleted some days after their last write (docs/hosted.md, "Logs").

``$PARTERRE_HOSTED_DIR/logs/`` holds the worker's copies of hosted bots' stderr, the adapters' notes
and the validation logs (operators only; the owner's copy of a rated match's stderr is in the
database, where ``ladder.hosted_logs.save_match_log`` keeps a bot's newest
:data:`ladder.hosted_logs.MATCH_LOGS_KEPT`). Every worker process prunes its folder in a background
thread at most once an hour (:func:`prune_logs_at_times`), before a hosted match or a validation.
"""

from __future__ import annotations

import logging
import math
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PRUNE_EVERY_S = 3600.0
"""A worker process starts a prune of its log folder at most this often (:func:`prune_logs_at_times`)."""
PRUNE_MAX_DEPTH = 32
"""Folders deeper than this under the log folder are not entered (counted as failed): the walk keeps
one descriptor open per level."""
_last_prune: dict[Path, float] = {}
_pruning: dict[Path, threading.Lock] = {}
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""How a folder is opened for the walk: never through a link, never blocking (a FIFO put in its place)."""


def prune_logs(logs: Path, max_age_s: float, *, now: float | None = None) -> tuple[int, int]:
    """Delete the files under ``logs`` last written more than ``max_age_s`` seconds before ``now``
    (``time.time()``); returns (files removed, entries that could not be removed or entered).

    ``logs`` holds the worker's own copies of hosted bots' stderr, the adapters' notes and the
    validation logs (see the module docstring). Nothing is followed: ``logs`` itself
    must be a real folder (a link there is refused: nothing is removed), each folder is opened
    by its descriptor with ``O_NOFOLLOW`` and checked to be the folder just listed, and a link
    inside is removed as a link. Folders stay; none deeper than :data:`PRUNE_MAX_DEPTH` is
    entered. A file that cannot be removed (gone meanwhile, no permission) is counted and
    skipped: the walk goes on. ``max_age_s`` = inf removes nothing and walks nothing.
    """
    if math.isinf(max_age_s):
        return 0, 0
    cutoff = (time.time() if now is None else now) - max_age_s
    try:
        top = os.open(logs, _FOLDER)
    except FileNotFoundError:
        return 0, 0
    except OSError as exc:  # a link (ELOOP), not a folder, no permission
        log.warning("not pruning %s: %s (the hosted log folder must be a real folder)", logs, exc)
        return 0, 1
    try:
        stack: list[tuple[int, Iterator[str]]] = [(top, iter(os.listdir(top)))]
    except OSError as exc:
        os.close(top)
        log.warning("not pruning %s: %s", logs, exc)
        return 0, 1
    removed = failed = 0
    try:
        while stack:
            folder, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(stack.pop()[0])
                continue
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    if st.st_mtime < cutoff:
                        os.unlink(name, dir_fd=folder)
                        removed += 1
                    continue
                if len(stack) > PRUNE_MAX_DEPTH:
                    failed += 1
                    continue
                child = os.open(name, _FOLDER, dir_fd=folder)
                try:
                    if not os.path.samestat(st, os.fstat(child)):  # swapped since it was looked at
                        raise NotADirectoryError(name)
                    stack.append((child, iter(os.listdir(child))))
                except BaseException:
                    os.close(child)
                    raise
            except FileNotFoundError:
                continue
            except OSError:
                failed += 1
    finally:
        for folder, _ in stack:  # only when the walk stopped early: each open folder once
            os.close(folder)
    return removed, failed


def prune_logs_at_times(logs: Path, cfg: dict[str, Any]) -> threading.Thread | None:
    """Start :func:`prune_logs` with ``cfg["log_days"]`` in a background thread, at most once every
    :data:`PRUNE_EVERY_S` per folder and process and never two at once on one folder (a worker calls it
    before each hosted match and validation, which do not wait for it: a first prune of months of
    logs may take minutes). Returns the thread, or None when it is not time. Never raises."""
    now = time.monotonic()
    last = _last_prune.get(logs)
    if last is not None and now - last < PRUNE_EVERY_S:
        return None
    lock = _pruning.setdefault(logs, threading.Lock())
    if lock.locked():
        return None
    _last_prune[logs] = now
    days = cfg.get("log_days", 14.0)

    def run() -> None:
        if not lock.acquire(blocking=False):
            return
        try:
            removed, failed = prune_logs(logs, days * 86400.0)
            if removed or failed:
                log.info("pruned %d hosted log files older than %s days in %s (%d could not be removed or "
                         "entered)", removed, days, logs, failed)
        except Exception:  # a thread's error is otherwise only printed
            log.exception("pruning the hosted logs in %s failed", logs)
        finally:
            lock.release()

    thread = threading.Thread(target=run, name="prune-hosted-logs", daemon=True)
    thread.start()
    return thread
