"""S-22: the periodic ticks never wait behind matches (``/tmp/attack/slotdos``).

The attack: challenges at the longest clock a challenge allows (60 s per decision) against a bot that answers
after 55 s held every slot of the worker pool; ``parterre.ladder_tick``, ``reap``, ``challenge_tick`` and
``tournament_tick`` sat in the queue behind them for minutes. Now they are routed to ``QUEUE.periodic``, which
``parterre worker`` consumes from a dedicated one-slot consumer. The end-to-end test holds the only match
slot of a real ``parterre worker --concurrency 1`` with a match whose bot never answers, then sends
``parterre.reap`` the way ``parterre beat`` does (by name, through the routes) and expects it to run at once.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bots.reference import RandomBot
from workers.app import PERIODIC_TASKS, app, periodic_queue


def _queue_of(name: str) -> str:
    route = app.amqp.router.route({}, name, (), {})
    q = route.get("queue")
    return str(getattr(q, "name", q))


def test_s22_the_ticks_are_routed_to_their_own_queue() -> None:
    main = app.conf.task_default_queue
    assert periodic_queue() == f"{main}.periodic"
    for name in ("parterre.ladder_tick", "parterre.reap", "parterre.challenge_tick", "parterre.tournament_tick"):
        assert name in PERIODIC_TASKS and _queue_of(name) == f"{main}.periodic", name
    # matches, planning and validations (minutes long) stay on the main queue
    for name in ("parterre.run_match", "parterre.plan_tournament", "parterre.hosted_tick"):
        assert _queue_of(name) == main, name


class SilentBot(RandomBot):
    """Never answers: every decision of its seat takes the whole clock."""

    # the type: ignore below: the async form of Bot.choose, which the SDK runs as a task
    async def choose(self, request: Any) -> int:  # type: ignore[override]
        await asyncio.sleep(3600)
        return 0


def test_s22_a_tick_runs_while_every_match_slot_is_held(migrated_url: str, redis_base_url: str,
                                                        tmp_path: Path) -> None:
    from ladder import bots as ladder_bots
    from ladder import db as ladder_db
    from ladder.matches import claim_match
    from ladder.tournaments import plan_match
    from parterre.embedded import celery_url
    from referee.testing import SERVICE_TOKEN, ThreadedReferee

    pool = ladder_db.make_pool(migrated_url, min_size=1, max_size=2)
    queue = f"parterre-ticks-{secrets.token_hex(4)}"
    (a, tok_a), (b, tok_b) = ladder_bots.register_bot(pool, "tick-a"), ladder_bots.register_bot(pool, "tick-b")
    referee = ThreadedReferee({tok_a: a, tok_b: b}, bots={tok_a: SilentBot(seed=1), tok_b: RandomBot(seed=2)})
    referee.start()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
        "PARTERRE_HOME": str(tmp_path), "PARTERRE_DATABASE_URL": migrated_url, "PARTERRE_REDIS_URL": redis_base_url,
        "PARTERRE_SERVICE_TOKEN": SERVICE_TOKEN, "PARTERRE_QUEUE": queue, "PARTERRE_REFEREE_ADDRESS": referee.address,
        "PARTERRE_WORKER_REAP_S": "0",  # only the reap task sent below may reap
        "PYTHONUNBUFFERED": "1",
    }
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - closed in finally
    worker = subprocess.Popen([sys.executable, "-m", "parterre.cli", "worker", "--concurrency", "1", "--loglevel",
                               "INFO", "--hostname", f"{queue}@%h"], env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.update(broker_url=celery_url(redis_base_url))
    app.conf.task_default_queue = queue
    try:
        slow = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[a, b], plan_key="ticks:slow",
                          time_control={"base_ms": 0, "increment_ms": 30000, "cap_ms": 30000, "margin_ms": 1000})
        app.send_task("parterre.run_match", args=(slow,))
        deadline = time.monotonic() + 60
        while _status(pool, slow) != "running" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _status(pool, slow) == "running", (tmp_path / "worker.log").read_text()[-3000:]
        # a match whose worker vanished: its lease ran out; only the reaper brings it back
        lost = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[b, a], plan_key="ticks:lost")
        assert claim_match(pool, lost, "vanished-worker") is not None
        with pool.connection() as conn:
            conn.execute("UPDATE matches SET lease_until = now() - interval '1 minute' WHERE id = %s", (lost,))
        sent = time.monotonic()
        app.send_task("parterre.reap")  # as parterre beat sends it: by name, through the routes
        while time.monotonic() - sent < 20 and _attempt_status(pool, lost) == "running":
            time.sleep(0.2)
        took = time.monotonic() - sent
        assert _attempt_status(pool, lost) == "infra_error", (tmp_path / "worker.log").read_text()[-3000:]
        assert _status(pool, slow) == "running"  # the only match slot was held all along
        assert took < 10, took
    finally:
        app.conf.broker_url, app.conf.task_default_queue = old
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(10)
        log.close()
        referee.stop()
        pool.close()


def _status(pool: Any, match_id: int) -> str:
    with pool.connection() as conn:
        return str(conn.execute("SELECT status FROM matches WHERE id = %s", (match_id,)).fetchone()[0])


def _attempt_status(pool: Any, match_id: int) -> str:
    with pool.connection() as conn:
        row = conn.execute("SELECT status FROM match_attempts WHERE match_id = %s AND attempt = 1",
                           (match_id,)).fetchone()
    return str(row[0]) if row else "none"
