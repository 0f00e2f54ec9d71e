"""Workers: planning and running matches through a real referee and PostgreSQL.

Given a migrated database, registered bots connected to an in-process referee
(real gRPC over loopback, in a background thread), when the Celery task
functions run (directly, and through a real Celery worker on Redis), then every
match is recorded exactly once (docs/faults.md F-11), infrastructure errors are never
charged to a bot (F-08), and no-shows abort the attempt unrated (F-07).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bots.reference import GreedyBot, RandomBot
from ladder import bots as ladder_bots
from ladder import ratings, read, tournaments
from parterre.embedded import celery_url
from referee.testing import SERVICE_TOKEN, ThreadedReferee

TC = {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 200}


@pytest.fixture
def registered(pool: Any) -> dict[str, tuple[int, str]]:
    out = {}
    for name in ("greedy-a", "random-b", "random-c"):
        out[name] = ladder_bots.register_bot(pool, name)
    return out


@pytest.fixture
def worker_env(monkeypatch: pytest.MonkeyPatch, migrated_url: str) -> Iterator[list[tuple[int, float]]]:
    """Point the task module at the test database; capture re-queues instead of sending them."""
    import workers.tasks as tasks

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_NO_SHOW_TIMEOUT_MS", "400")
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "0")
    monkeypatch.setattr(tasks, "_pool", None)
    queued: list[tuple[int, float]] = []
    monkeypatch.setattr(tasks.run_match, "apply_async",
                        lambda args, countdown=0, **_: queued.append((args[0], countdown)))
    monkeypatch.setattr(tasks.run_match, "delay", lambda match_id: queued.append((match_id, 0)))
    yield queued
    if tasks._pool is not None:
        tasks._pool.close()
        tasks._pool = None


@pytest.fixture
def live(registered: dict[str, tuple[int, str]], monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedReferee]:
    tokens = {token: bot_id for bot_id, token in registered.values()}
    bots = {
        registered["greedy-a"][1]: GreedyBot(seed=1),
        registered["random-b"][1]: RandomBot(seed=2),
        registered["random-c"][1]: RandomBot(seed=3),
    }
    ref = ThreadedReferee(tokens, bots=bots).start()
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
    yield ref
    ref.stop()


def _tournament(pool: Any, registered: dict[str, tuple[int, str]], counts: tuple[int, ...] = (2,)) -> int:
    ids = [bot_id for bot_id, _ in registered.values()]
    return tournaments.create_tournament(
        pool, name="t", game="floriferous", bot_ids=ids, player_counts=counts, rounds=1, time_control=TC
    )


def _count(pool: Any, sql: str, *params: Any) -> int:
    with pool.connection() as conn:
        return int(conn.execute(sql, params).fetchone()[0])


def test_run_match_twice_records_once(pool, registered, worker_env, live):
    """F-11: a second delivery of run_match finds the match claimed and does nothing."""
    from workers.tasks import plan_round_robin, run_match

    tid = _tournament(pool, registered)
    assert plan_round_robin(tid) == 6  # C(3,2) pairs x 2 rotations
    assert plan_round_robin(tid) == 6  # idempotent: the same matches again (F-12)
    match_ids = sorted({m for m, _ in worker_env})
    assert len(match_ids) == 6
    assert run_match(match_ids[0]) == "finished"
    assert run_match(match_ids[0]) == "skipped"
    assert _count(pool, "SELECT count(*) FROM replays WHERE match_id = %s", match_ids[0]) == 1
    assert _count(pool, "SELECT count(*) FROM rating_history WHERE match_id = %s", match_ids[0]) == 2
    assert _count(pool, "SELECT sum(games) FROM ratings") == 2
    replay = read.export_replay(pool, match_ids[0])
    from games.replay import verify_replay

    report = verify_replay(replay["replay"])
    assert report.ok, report.problems
    assert report.hashes_checked >= 2


def test_unreachable_referee_is_not_an_attempt_and_not_a_loss(pool, registered, worker_env, monkeypatch):
    """docs/faults.md F-08 (b), F-22: no referee reachable -> not an attempt (attempt stays 0, no attempt
    row), unrated, no verdict, queued again after a backoff; at the operator's deadline it is failed."""
    from workers.tasks import run_match

    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:1")
    monkeypatch.setenv("PARTERRE_MATCH_ATTEMPTS", "1")
    monkeypatch.setenv("PARTERRE_REFEREE_WAIT_S", "1")
    tid = _tournament(pool, registered)
    match_id = tournaments.plan_round_robin(pool, tid)[0]
    assert [run_match(match_id) for _ in range(3)] == ["waiting_for_referee"] * 3  # more tries than attempts
    assert [m for m, _ in worker_env] == [match_id] * 3 and all(0.5 <= c <= 4.0 for _, c in worker_env)
    assert _count(pool, "SELECT count(*) FROM match_attempts WHERE match_id = %s", match_id) == 0
    assert _count(pool, "SELECT attempt FROM matches WHERE id = %s", match_id) == 0
    with pool.connection() as conn:  # the operator's 1 s deadline passes: the wait began 2 s earlier
        conn.execute("UPDATE matches SET referee_wait_since = referee_wait_since - interval '2 seconds' "
                     "WHERE id = %s", (match_id,))
    assert run_match(match_id) == "failed"
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT status, error FROM match_attempts WHERE match_id = %s ORDER BY attempt", (match_id,)
        ).fetchall()
    assert len(rows) == 1 and rows[0][0] == "infra_error" and "no referee reachable for" in rows[0][1]
    assert _count(pool, "SELECT count(*) FROM ratings") == 0
    assert _count(pool, "SELECT count(*) FROM seats WHERE match_id = %s AND verdict IS NOT NULL", match_id) == 0


def test_no_show_aborts_unrated(pool, registered, worker_env, monkeypatch):
    """F-07: a bot that never connects makes the attempt aborted_no_show, unrated, rescheduled."""
    from workers.tasks import run_match

    # only greedy-a and random-b connect; random-c never shows up
    tokens = {token: bot_id for bot_id, token in registered.values()}
    bots = {registered["greedy-a"][1]: RandomBot(seed=1), registered["random-b"][1]: RandomBot(seed=2)}
    ref = ThreadedReferee(tokens, bots=bots).start()
    try:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        ids = [registered[n][0] for n in ("greedy-a", "random-c")]
        match_id = tournaments.plan_match(
            pool, game_string="floriferous(players=2)", bot_ids=ids, plan_key=secrets.token_hex(4), time_control=TC
        )
        assert run_match(match_id) == "requeued"
        with pool.connection() as conn:
            status, attempt = conn.execute("SELECT status, attempt FROM matches WHERE id = %s", (match_id,)).fetchone()
            att = conn.execute("SELECT status FROM match_attempts WHERE match_id = %s", (match_id,)).fetchone()[0]
        assert (status, attempt, att) == ("planned", 1, "aborted_no_show")
        assert _count(pool, "SELECT count(*) FROM ratings") == 0
    finally:
        ref.stop()


def test_visibility_timeout_exceeds_longest_match():
    """F-11 configuration: Redis redelivers only tasks older than any match can run."""
    from workers.app import MAX_MATCH_DURATION_S, app

    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.broker_transport_options["visibility_timeout"] > MAX_MATCH_DURATION_S


def test_round_robin_through_a_real_celery_worker(pool, registered, live, migrated_url, redis_base_url, monkeypatch):
    """The whole chain: Celery (Redis broker) plans and runs a 2/3-player round-robin."""
    from celery.contrib.testing.worker import start_worker

    import workers.tasks as tasks
    from workers.app import app

    queue = f"parterre-test-{secrets.token_hex(4)}"
    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setattr(tasks, "_pool", None)
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.update(broker_url=celery_url(redis_base_url))
    app.conf.task_default_queue = queue
    try:
        tid = _tournament(pool, registered, counts=(2, 3))
        with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False, queues=[queue],
                          shutdown_timeout=20):
            tasks.plan_round_robin.delay(tid)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                st = tournaments.tournament_status(pool, tid)
                if st["complete"]:
                    break
                time.sleep(0.2)
        st = tournaments.tournament_status(pool, tid)
        assert st["finished"] == st["total"] == 6 + 3  # pairs x 2 rotations + one triple x 3 rotations
        assert _count(pool, "SELECT count(*) FROM replays") == 9
        # each seat's rating moves in every match: 6 two-player + 3 three-player matches
        assert _count(pool, "SELECT sum(games) FROM ratings") == 6 * 2 + 3 * 3
        before = {r.bot_id: r.elo for r in read.leaderboard(pool, "floriferous")}
        ratings.rebuild_ratings(pool, "floriferous")
        after = {r.bot_id: r.elo for r in read.leaderboard(pool, "floriferous")}
        assert before == after
    finally:
        app.conf.update(broker_url=old[0], task_default_queue=old[1])
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
