"""Keep the referees' token hash whole: Redis is a cache, PostgreSQL the source of truth.

Redis may come back empty at any time (a restart without persistence, ``FLUSHALL``). The ladder
writes ``parterre:bot_tokens`` together with its marker ``parterre:bot_tokens:published``
(``ladder.bots.publish_tokens``); while the marker is missing the referees revoke no one
(``referee.tokens.RedisTokenStore``) and push to ``parterre:bot_tokens:wanted``. Three things
publish the whole set again from PostgreSQL (``ladder.bots.ensure_published``):

* every worker node when it is ready, and its token watch thread (:func:`start_token_watch`): it
  blocks on the ``:wanted`` list (a referee's nudge wakes it at once) and checks the marker at least
  every ``PARTERRE_TOKENS_WATCH_S`` seconds (default 5);
* ``parterre.tokens_tick``, which ``parterre beat`` sends every ``PARTERRE_TOKENS_PERIOD_S`` (5 s);
* ``parterre web`` when it starts (``parterre/commands/web.py``).

Publishing is idempotent, so several workers doing it at once is harmless.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import bots as ladder_bots
from ladder import db as ladder_db
from workers.app import app
from workers.directory import _redis_client
from workers.settings import settings as worker_settings

log = logging.getLogger(__name__)

_watch_thread: threading.Thread | None = None
_tick_pool: tuple[int, ConnectionPool] | None = None
"""(process id, pool) of :func:`tokens_tick`."""


def watch_period_s() -> float:
    """``PARTERRE_TOKENS_WATCH_S`` (default 5): the longest the token watch waits between two checks;
    0 turns the watch off."""
    return worker_settings().tokens_watch_s


def republish_if_lost(pool: ConnectionPool, redis_client: Any, key: str = ladder_bots.TOKENS_KEY) -> int | None:
    """:func:`ladder.bots.ensure_published`, logged when it had to publish.

    Returns:
        The number of tokens published, or None when the hash was whole.
    """
    count = ladder_bots.ensure_published(pool, redis_client, key)
    if count is not None:
        log.warning("token hash %s was lost (Redis emptied): published %d live tokens again from PostgreSQL",
                    key, count)
    return count


@app.task(name="parterre.tokens_tick")
def tokens_tick() -> int | None:
    """Publish the whole token hash again when Redis lost it (the beat's check; see the module doc).

    Returns:
        The number of tokens published, or None when the hash was whole or no Redis is configured.
    """
    global _tick_pool
    cfg = worker_settings()
    url, db_url = cfg.redis_url, cfg.database_url
    if not url or not db_url:
        return None
    if _tick_pool is None or _tick_pool[0] != os.getpid():  # a pool of this process, never a forked parent's
        _tick_pool = (os.getpid(), ladder_db.make_pool(db_url, min_size=1, max_size=1))
    client = _redis_client(url)
    try:
        return republish_if_lost(_tick_pool[1], client)
    finally:
        client.close()


def start_token_watch(period_s: float | None = None, *, key: str = ladder_bots.TOKENS_KEY) -> threading.Thread | None:
    """Start the token watch of this process (a daemon thread with its own pool and Redis client).

    It waits on ``<key>:wanted`` with ``BLPOP`` for at most ``period_s`` seconds, then publishes the
    whole set when the marker is missing; a Redis or PostgreSQL outage is logged and retried after a
    second.

    Returns:
        The thread, or None when off (period 0), no database or Redis is configured, or already started.
    """
    global _watch_thread
    period = watch_period_s() if period_s is None else float(period_s)
    cfg = worker_settings()
    db_url, redis_url = cfg.database_url, cfg.redis_url
    if period <= 0 or not db_url or not redis_url or _watch_thread is not None:
        return None
    wait_s = max(1, round(period))  # BLPOP takes whole seconds on every Redis version

    def loop() -> None:
        pool: ConnectionPool | None = None
        client = _redis_client(redis_url, socket_timeout_s=wait_s + 5.0)  # longer than the BLPOP
        while True:
            try:
                if pool is None:
                    pool = ladder_db.make_pool(db_url, min_size=1, max_size=1)
                republish_if_lost(pool, client, key)
                client.blpop([key + ladder_bots.WANTED_SUFFIX], timeout=wait_s)
            except Exception as exc:  # Redis or the database is down: try again shortly
                log.warning("token watch: %s", exc)
                time.sleep(1.0)

    _watch_thread = threading.Thread(target=loop, name="parterre-token-watch", daemon=True)
    _watch_thread.start()
    return _watch_thread
