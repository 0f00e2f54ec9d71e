"""The continuous ladder: pairing online bots, idempotent rounds, `parterre beat`.

See ladder/README.md; docs/faults.md F-12.

Given online bots (presence published by referees in Redis), when beat sends
`parterre.ladder_tick`, then each round pairs the bots with the fewest games
first, skips bots at their cap of pending matches, and two schedulers planning
the same round make one set of matches.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest
from fixtures.ladder_helpers import GAME, count, make_bots, play

from ladder import bots as ladder_bots
from ladder import ratings, read
from ladder.tournaments import ladder_round_prefix, plan_ladder_round, plan_match
from parterre.embedded import celery_url
from workers import directory

pytestmark = pytest.mark.usefixtures("games")


GS = f"{GAME}(players=2)"


def _round(pool: Any, round_no: int, game_string: str = GS) -> list[tuple[int, ...]]:
    prefix = ladder_round_prefix(game_string, round_no)
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE m.tournament_id IS NULL AND starts_with(m.plan_key, %s) GROUP BY m.id ORDER BY m.id",
            (prefix,),
        ).fetchall()
    return [tuple(r[1]) for r in rows]


def test_a_round_pairs_fewest_games_first_and_each_bot_once(pool):
    bots = make_bots(pool, 6)
    # bots 0 and 1 have played twice already: they are paired last
    for _ in range(2):
        mid = plan_match(pool, game_string=GS, bot_ids=bots[:2], plan_key=secrets.token_hex(4))
        play(pool, mid, [1, 2])
    ids = plan_ladder_round(pool, game_string=GS, round_no=1, bot_ids=bots[2:] + bots[:1])
    tables = _round(pool, 1)
    assert len(ids) == len(tables) == 2
    seated = [b for t in tables for b in t]
    assert sorted(seated) == sorted(bots[2:6])  # the four with 0 games; bot 0 (2 games) waits
    assert all(len(set(t)) == 2 for t in tables)


def test_planning_a_round_again_returns_the_same_set(pool):
    bots = make_bots(pool, 4)
    first = plan_ladder_round(pool, game_string=GS, round_no=7, bot_ids=bots)
    # a second scheduler, seeing other bots online, plans the same round: nothing new
    again = plan_ladder_round(pool, game_string=GS, round_no=7, bot_ids=bots[:2] + make_bots(pool, 2, "late"))
    assert first == again and len(first) == 2
    assert count(pool, "SELECT count(*) FROM matches") == 2


def test_f12_two_schedulers_plan_one_round_at_once(pool):
    """F-12: two beats plan round 42 at the same moment: one set of matches."""
    bots = make_bots(pool, 8)
    results: list[list[int]] = []
    barrier = threading.Barrier(4)

    def beat(order: list[int]) -> None:
        barrier.wait()
        results.append(plan_ladder_round(pool, game_string=GS, round_no=42, bot_ids=order))

    threads = [threading.Thread(target=beat, args=(list(reversed(bots)) if i % 2 else bots,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 4 and all(r == results[0] for r in results)
    tables = _round(pool, 42)
    assert len(tables) == 4
    assert sorted(b for t in tables for b in t) == sorted(bots)  # each bot in exactly one match


def test_the_cap_on_pending_matches_and_revoked_bots(pool):
    bots = make_bots(pool, 5)
    # bot 0 already has two planned matches (the cap), bot 4 is revoked
    for key in ("x1", "x2"):
        plan_match(pool, game_string=GS, bot_ids=[bots[0], bots[1]] if key == "x1" else [bots[0], bots[2]],
                   plan_key=key)
    ladder_bots.revoke_bot(pool, bots[4])
    plan_ladder_round(pool, game_string=GS, round_no=3, bot_ids=bots, max_pending=2)
    tables = _round(pool, 3)
    seated = sorted(b for t in tables for b in t)
    assert bots[0] not in seated and bots[4] not in seated
    assert seated == sorted([bots[1], bots[2]]) or seated == sorted([bots[1], bots[3]]) or \
        seated == sorted([bots[2], bots[3]])
    # with a cap of 1 nobody is free now (every live bot has a pending match): no table
    assert plan_ladder_round(pool, game_string=GS, round_no=4, bot_ids=bots, max_pending=1) == []


def test_a_bot_registered_for_other_games_is_not_paired_in_this_one(pool):
    """``bots.games`` (what its owner registered it for; empty: every game) limits the ladder: a bot
    registered for another game only is never seated here, whatever its Hello announced (a new
    user's Floriferous bot was handed La Fleur and Flowar matches)."""
    bots = make_bots(pool, 4)
    with pool.connection() as conn:
        conn.execute("UPDATE bots SET games = %s WHERE id = %s", (["floriferous"], bots[0]))
        conn.execute("UPDATE bots SET games = %s WHERE id = %s", ([GAME, "floriferous"], bots[1]))
    plan_ladder_round(pool, game_string=GS, round_no=11, bot_ids=bots)
    seated = sorted(b for t in _round(pool, 11) for b in t)
    assert seated == sorted(bots[1:3]) or seated == sorted([bots[1], bots[3]]) or seated == sorted(bots[2:])
    assert bots[0] not in seated and len(seated) == 2


def test_multiplayer_rounds_and_a_lone_bot(pool):
    bots = make_bots(pool, 7)
    ids = plan_ladder_round(pool, game_string=f"{GAME}(players=3)", round_no=1, bot_ids=bots)
    tables = _round(pool, 1, f"{GAME}(players=3)")
    assert len(ids) == 2 and all(len(t) == 3 for t in tables)
    assert plan_ladder_round(pool, game_string=GS, round_no=9, bot_ids=bots[:1]) == []


def test_ladder_tick_pairs_the_online_bots_of_each_game(pool, ladder_db, monkeypatch):
    """The beat task reads presence (which bots are online, which games they play) and queues the round."""
    import workers.periodic as periodic
    import workers.tasks as tasks

    bots = make_bots(pool, 5)
    refs = [
        directory.RefereeInfo("r1", "a:1", "a:1", 0, {bots[0]: directory.BotPresence(1, 1),
                                                     bots[1]: directory.BotPresence(1, 1, (GAME,))}),
        directory.RefereeInfo("r2", "b:1", "b:1", 0, {bots[2]: directory.BotPresence(2, 2, (GAME,)),
                                                     bots[3]: directory.BotPresence(1, 1, ("other",))}),
    ]
    monkeypatch.setenv("PARTERRE_DATABASE_URL", ladder_db)
    monkeypatch.setenv("PARTERRE_REDIS_URL", "redis://unused")
    monkeypatch.setenv("PARTERRE_LADDER_GAMES", GS)
    monkeypatch.setenv("PARTERRE_LADDER_PERIOD_S", "10")
    monkeypatch.setattr(tasks, "_pool", None)
    monkeypatch.setattr(directory, "read_referees", lambda *a, **k: refs)
    queued: list[int] = []
    monkeypatch.setattr(periodic, "queue_matches", queued.extend)  # what the tick queues, in one batch
    try:
        assert periodic.ladder_tick(now=1000.0) == {GS: 1}  # bots 0, 1, 2 play it; bot 3 plays "other" only
        assert periodic.ladder_tick(now=1009.9) == {GS: 1}  # same period: the same round, queued again
        (table,) = _round(pool, 100)
        assert set(table) <= {bots[0], bots[1], bots[2]}
        assert len(set(queued)) == 1
        periodic.ladder_tick(now=1010.0)  # next round: the bot that waited goes first
        (nxt,) = _round(pool, 101)
        waited = ({bots[0], bots[1], bots[2]} - set(table)).pop()
        assert waited in nxt
    finally:
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None


def test_beat_schedule():
    from workers.app import app, configure_beat

    old = app.conf.beat_schedule
    try:
        schedule = configure_beat(2.0, 3.0)
        assert schedule["parterre-ladder-tick"]["task"] == "parterre.ladder_tick"
        assert schedule["parterre-ladder-tick"]["schedule"] == 2.0
        assert schedule["parterre-ladder-tick"]["kwargs"] == {"period_s": 2.0}  # rounds by the beat's clock
        assert schedule["parterre-reap"]["task"] == "parterre.reap"
        assert schedule["parterre-reap"]["schedule"] == 3.0
        assert app.conf.beat_schedule == schedule
    finally:
        app.conf.beat_schedule = old


# -- the whole chain: referee presence, two `parterre beat` processes, a real Celery worker -----------


def test_two_beat_processes_and_a_worker_run_the_continuous_ladder(database_url, redis_base_url, monkeypatch,
                                                                   tmp_path):
    """Two `parterre beat` processes, one Celery worker and a referee publishing presence:
    rounds are planned once each, fewest games first, and every match is played once."""
    from celery.contrib.testing.worker import start_worker
    from fixtures.toy_game import register_toy

    import workers.tasks as tasks
    from bots.reference import RandomBot
    from ladder import db as ladder_db
    from referee.cluster import ClusterConfig
    from referee.testing import SERVICE_TOKEN, ThreadedReferee
    from workers.app import app

    register_toy()
    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=4)
    ns = f"parterre-test-{secrets.token_hex(4)}"
    queue = f"parterre-test-{secrets.token_hex(4)}"
    registered = [ladder_bots.register_bot(pool, f"lb-{i}") for i in range(5)]
    tokens = {tok: bot_id for bot_id, tok in registered}

    referee = ThreadedReferee(
        tokens, bots={tok: RandomBot(seed=i, games=("toy",)) for i, (_, tok) in enumerate(registered)},
        cluster=ClusterConfig(redis_base_url, namespace=ns, presence_interval_ms=500), referee_id="ladder-ref",
    ).start()
    env = {
        **os.environ,
        "PARTERRE_DATABASE_URL": database_url,
        "PARTERRE_REDIS_URL": redis_base_url,
        "PARTERRE_SERVICE_TOKEN": SERVICE_TOKEN,
        "PARTERRE_QUEUE": queue,
        "PARTERRE_CLUSTER_NAMESPACE": ns,
        "PARTERRE_LADDER_GAMES": "toy(players=2,turns=3)",
        "PARTERRE_HOME": str(tmp_path),
    }
    for k, v in env.items():
        if k.startswith("PARTERRE_"):
            monkeypatch.setenv(k, v)
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", referee.address)
    monkeypatch.setattr(tasks, "_pool", None)
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.update(broker_url=celery_url(redis_base_url))
    app.conf.task_default_queue = queue
    beats = []
    try:
        with start_worker(app, pool="threads", concurrency=3, perform_ping_check=False,
                          queues=[queue, f"{queue}.periodic"],
                          shutdown_timeout=20):
            for i in range(2):
                with open(tmp_path / f"beat-{i}.log", "wb") as log_file:
                    beats.append(subprocess.Popen(
                        [sys.executable, "-m", "parterre.cli", "beat", "--ladder-period", "1.5", "--reap-period",
                         "5", "--loglevel", "WARNING"],
                        env=env, stdout=subprocess.DEVNULL, stderr=log_file,
                    ))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if count(pool, "SELECT count(*) FROM matches WHERE status = 'finished'") >= 12:
                    break
                time.sleep(0.3)
            for b in beats:
                b.send_signal(signal.SIGTERM)
            for b in beats:
                b.wait(20)
            deadline = time.monotonic() + 30
            while count(pool, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')") and \
                    time.monotonic() < deadline:
                time.sleep(0.3)
        with pool.connection() as conn:
            rows = conn.execute(
                "SELECT m.plan_key, m.status, array_agg(s.bot_id) FROM matches m JOIN seats s ON s.match_id = m.id "
                "GROUP BY m.id ORDER BY m.id").fetchall()
        assert len(rows) >= 12, (tmp_path / "beat-0.log").read_text()[-2000:]
        assert all(status == "finished" for _, status, _ in rows)
        by_round: dict[str, list[list[int]]] = {}
        for key, _, seats in rows:
            by_round.setdefault(key.rsplit(":", 1)[0], []).append(seats)
        for round_key, tables in by_round.items():
            seated = [b for t in tables for b in t]
            assert len(seated) == len(set(seated)), f"{round_key}: a bot seated twice: {tables}"  # one set (F-12)
            assert len(tables) <= 2  # 5 bots, 2 seats: at most 2 tables
        games = Counter(b for _, _, seats in rows for b in seats)
        assert max(games.values()) - min(games.values()) <= 2, games  # fewest games first
        assert count(pool, "SELECT count(*) FROM match_attempts WHERE status = 'finished'") == len(rows)
        before = {r.bot_id: r.elo for r in read.leaderboard(pool, "toy")}
        ratings.rebuild_ratings(pool, "toy")
        assert before == {r.bot_id: r.elo for r in read.leaderboard(pool, "toy")}
    finally:
        for b in beats:
            if b.poll() is None:
                b.kill()
        app.conf.broker_url, app.conf.task_default_queue = old
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
        referee.stop()
        pool.close()
