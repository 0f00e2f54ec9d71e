"""Celery task: recompute a game's Bradley-Terry fit after new results (ladder/README.md, "Ratings").

``parterre.recompute_bradley_terry(game)`` calls
:func:`ladder.stats.store.refresh_bradley_terry`, which does nothing (two small
queries) when the cached fit already covers every finished match, so the
task is idempotent and many requests coalesce into one computation.

It is queued, ``BT_DELAY_S`` seconds later (``PARTERRE_BT_DELAY_S``,
default 5), whenever a ``parterre.run_match`` task succeeds with
``"finished"``: the ``task_success`` signal handler below, connected when a
worker imports this module (it is in the Celery app's ``include``), looks up
the match's game and queues the task — unless this worker process queued one
for the same game less than ``BT_DELAY_S`` ago: that one has not run yet and
will see the new result (``task_success`` fires after the result is
committed). A burst of results therefore costs one fit per window and worker
process, not one per result. Calling ``run_match`` directly (tests) sends no
signal.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery.signals import task_success

from ladder.stats.store import refresh_bradley_terry
from workers.app import app
from workers.settings import settings as worker_settings

log = logging.getLogger(__name__)

BT_DELAY_S = worker_settings().bt_delay_s
"""Delay (seconds) between a finished match and the recomputation it queues."""

_queued_at: dict[str, float] = {}
_queued_lock = threading.Lock()


@app.task(name="parterre.recompute_bradley_terry")
def recompute_bradley_terry(game: str, force: bool = False) -> str:
    """Recompute and cache ``game``'s Bradley-Terry ratings unless they are current.

    Args:
        game: registry name.
        force: recompute even when the cache covers every result.

    Returns:
        ``fresh`` (nothing to do), ``computed`` or ``superseded`` (a fresher fit
        was stored meanwhile by another worker).
    """
    from workers.tasks import get_pool

    outcome = refresh_bradley_terry(get_pool(), game, force=force)
    if outcome.status != "fresh":
        log.info("Bradley-Terry %s: %s, %s finished matches, %d ms", game, outcome.status, outcome.finished,
                 outcome.elapsed_ms)
    return outcome.status


@task_success.connect
def queue_after_result(sender: Any = None, result: Any = None, **_: Any) -> None:
    """After a successful ``parterre.run_match`` that recorded a result, queue a recomputation of its game."""
    if getattr(sender, "name", None) != "parterre.run_match" or result != "finished":
        return
    try:
        from ladder.db import connection
        from workers.tasks import get_pool

        match_id = int(sender.request.args[0])
        with connection(get_pool()) as conn:
            row = conn.execute("SELECT game FROM matches WHERE id = %s", (match_id,)).fetchone()
        if row is None:
            return
        now = time.monotonic()
        with _queued_lock:
            if now - _queued_at.get(row[0], -1e18) < BT_DELAY_S:
                return  # a recomputation queued by this process has yet to run: it will see this result
            _queued_at[row[0]] = now
        recompute_bradley_terry.apply_async((row[0],), countdown=BT_DELAY_S)
    except Exception:  # never fail the match task's bookkeeping over the cache
        log.warning("could not queue a Bradley-Terry recomputation", exc_info=True)
