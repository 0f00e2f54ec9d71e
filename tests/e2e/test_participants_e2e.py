"""Challenges, gauntlet and duplicate tournaments with entry windows, run end to end (docs/participants.md).

Given a referee publishing presence in Redis with the house bots
(``parterre.house``) and participants' bots connected, a real Celery worker
and a real ``parterre beat`` process, when tournaments are created with an
entry window and entered, and challenges are created (the web process's only
act: nothing is queued by hand), then the beat closes the windows, the worker
plans each tournament in its own format and plays it, challenges against a
house bot finish, a challenge whose bot never connects expires with its
reason, and casual matches leave the ratings (online and rebuilt) unchanged.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from ladder import bots as ladder_bots
from ladder import db as ladder_db
from ladder import ratings, read

GAME = "toy"
TC = {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 200}


def _count(pool: Any, sql: str, *params: Any) -> int:
    with pool.connection() as conn:
        return int(conn.execute(sql, params).fetchone()[0])


def test_challenges_and_entry_window_tournaments_run_on_the_workers(database_url, redis_base_url, monkeypatch,
                                                                    tmp_path):
    from celery.contrib.testing.worker import start_worker
    from fixtures.toy_game import register_toy

    import workers.tasks as tasks
    from bots.reference import RandomBot
    from ladder.challenges import challenge_status, create_challenge
    from ladder.entries import enter_tournament
    from ladder.house import list_house_bots
    from ladder.tournament_tables import final_table, list_tournaments
    from ladder.tournaments import create_tournament, tournament_status
    from parterre.house import start_house_bots
    from referee.cluster import ClusterConfig
    from referee.testing import SERVICE_TOKEN, ThreadedReferee
    from workers.app import app

    register_toy()
    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=4)
    ns = f"parterre-test-{secrets.token_hex(4)}"
    queue = f"parterre-test-{secrets.token_hex(4)}"
    house = start_house_bots(pool, None, ["random", "greedy"], max_matches=4)
    house_ids = {b.name: bot_id for b, _, bot_id in house}
    participants = {name: ladder_bots.register_bot(pool, name) for name in ("cand", "p1", "p2")}
    ghost_id, _ = ladder_bots.register_bot(pool, "ghost")  # registered, never connects
    tokens = {tok: bot_id for bot_id, tok in participants.values()} | {tok: bot_id for _, tok, bot_id in house}
    assert {h.name for h in list_house_bots(pool, game=GAME)} == {"house-random"}  # greedy has no toy strategy

    referee_bots: dict[str, Any] = {
        tok: RandomBot(seed=i, games=(GAME,), max_concurrent_matches=4)
        for i, (_, tok) in enumerate(participants.values())
    } | {tok: bot for bot, tok, _ in house}
    referee = ThreadedReferee(tokens, bots=referee_bots, start_timeout_s=30,
                              cluster=ClusterConfig(redis_base_url, namespace=ns, presence_interval_ms=300),
                              referee_id="participants-ref").start()
    # Celery's form of the URL (the embedded Redis is a Unix socket: redis+socket://)
    broker = ("redis+socket://" + redis_base_url[len("unix://"):]
              if redis_base_url.startswith("unix://") else redis_base_url)
    env = {
        **os.environ,
        "PARTERRE_DATABASE_URL": database_url,
        "PARTERRE_REDIS_URL": broker,
        "PARTERRE_SERVICE_TOKEN": SERVICE_TOKEN,
        "PARTERRE_QUEUE": queue,
        "PARTERRE_CLUSTER_NAMESPACE": ns,
        "PARTERRE_LADDER_GAMES": "",  # no continuous ladder: only what this test asks for
        "PARTERRE_CHALLENGE_PERIOD_S": "0.5",
        "PARTERRE_TOURNAMENT_PERIOD_S": "0.5",
        "PARTERRE_HOME": str(tmp_path),
        "PARTERRE_REFEREE_ADDRESS": referee.address,
        "PARTERRE_NO_SHOW_TIMEOUT_MS": "5000",
    }
    for k, v in env.items():
        if k.startswith("PARTERRE_"):
            monkeypatch.setenv(k, v)
    monkeypatch.setattr(tasks, "_pool", None)
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.broker_url = broker
    app.conf.task_default_queue = queue
    cand, p1, p2 = (participants[n][0] for n in ("cand", "p1", "p2"))
    hr_id = house_ids["house-random"]
    beat = None
    try:
        deadline_at = datetime.now(UTC) + timedelta(seconds=4)
        gauntlet = create_tournament(pool, name="open gauntlet", game=GAME, game_options={"turns": 3},
                                     format="gauntlet", candidate_bot_id=cand, entry_deadline=deadline_at,
                                     time_control=TC, organiser_id=1)
        duplicate = create_tournament(pool, name="open duplicate", game=GAME, game_options={"turns": 3},
                                      format="duplicate", entry_deadline=deadline_at, time_control=TC, rounds=2)
        lonely = create_tournament(pool, name="lonely", game=GAME, entry_deadline=deadline_at, time_control=TC)
        for bot in (p1, p2, hr_id):
            enter_tournament(pool, gauntlet, bot)
        for bot in (cand, p1, hr_id):
            enter_tournament(pool, duplicate, bot)
        enter_tournament(pool, lonely, p2)
        gs = f"{GAME}(players=2,turns=3)"
        rated = create_challenge(pool, game_string=gs, bot_ids=[cand, hr_id], rated=True, time_control=TC,
                                 challenger_id=9)
        casual = [create_challenge(pool, game_string=gs, bot_ids=[hr_id, cand], rated=False, time_control=TC)
                  for _ in range(3)]
        expiring = create_challenge(pool, game_string=gs, bot_ids=[cand, ghost_id], rated=True, time_control=TC,
                                    expires_after_s=2)
        assert _count(pool, "SELECT count(*) FROM matches WHERE status <> 'waiting'") == 0  # nothing planned yet

        with start_worker(app, pool="threads", concurrency=3, perform_ping_check=False,
                          queues=[queue, f"{queue}.periodic"],
                          shutdown_timeout=20):
            with open(tmp_path / "beat.log", "wb") as beat_log:
                beat = subprocess.Popen(
                    [sys.executable, "-m", "parterre.cli", "beat", "--ladder-period", "60", "--reap-period", "30",
                     "--loglevel", "WARNING"],
                    env=env, stdout=subprocess.DEVNULL, stderr=beat_log,
                )
            limit = time.monotonic() + 150
            while time.monotonic() < limit:
                done = all(tournament_status(pool, t)["complete"] for t in (gauntlet, duplicate))
                done = done and all(challenge_status(pool, m).status in ("finished", "expired")
                                    for m in (rated, expiring, *casual))
                if done:
                    break
                time.sleep(0.3)
            beat.send_signal(signal.SIGTERM)
            beat.wait(20)
        log = (tmp_path / "beat.log").read_text()[-2000:]

        # -- challenges ------------------------------------------------------------------------
        info = challenge_status(pool, rated)
        assert (info.status, info.rated, info.challenger_id) == ("finished", True, 9), log
        assert sorted(info.ranks or ()) in ([1, 1], [1, 2])
        assert all(challenge_status(pool, m).status == "finished" for m in casual)
        gone = challenge_status(pool, expiring)
        assert gone.status == "expired"
        assert gone.reason == f"bot ghost (id {ghost_id}) was not connected within 2 s"
        assert _count(pool, "SELECT count(*) FROM match_attempts WHERE match_id = %s", expiring) == 0  # never ran
        assert _count(pool, "SELECT count(*) FROM rating_history WHERE match_id = ANY(%s)", casual) == 0
        assert _count(pool, "SELECT count(*) FROM replays WHERE match_id = ANY(%s)", casual) == 3

        # -- the gauntlet: candidate against each pool bot, both seats ------------------------------
        g = final_table(pool, gauntlet)
        assert g.complete and g.counts == {"finished": 6}
        assert g.gauntlet is not None and g.gauntlet.candidate_id == cand
        rows = {r.bot_id: r for r in g.gauntlet.rows}
        assert set(rows) == {p1, p2, hr_id}
        standings = {s["bot_id"]: s for s in g.standings}
        for bot, row in rows.items():
            assert row.pairings == 2 and row.wins + row.draws + row.losses == 2
            # 2-player gauntlet: the pool bot's own points are exactly what the candidate did not take
            assert standings[bot]["points"] == row.pairings - row.points
        assert standings[cand]["points"] == g.gauntlet.points
        with pool.connection() as conn:
            seated = conn.execute(
                "SELECT array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s ON s.match_id = m.id "
                "WHERE m.tournament_id = %s GROUP BY m.id", (gauntlet,)).fetchall()
        assert all(cand in r[0] for r in seated)  # pool bots never meet each other
        assert sorted(r[0].index(cand) for r in seated) == [0, 0, 0, 1, 1, 1]  # the candidate in both seats

        # -- the duplicate: one deal per round, every pairing in both seats on it -------------------
        d = final_table(pool, duplicate)
        assert d.complete and d.counts == {"finished": 2 * 3 * 2}
        assert d.duplicate is not None and [x.key for x in d.duplicate.deals] == ["r1:n2", "r2:n2"]
        for deal in d.duplicate.deals:
            assert (deal.matches, deal.finished) == (6, 6) and deal.seed is not None
            assert sum(deal.points.values()) == 6  # one point per 2-player match
            assert set(deal.points) == {cand, p1, hr_id}
        with pool.connection() as conn:
            seeds = conn.execute("SELECT substring(plan_key from '^r[0-9]+'), count(DISTINCT seed) FROM matches "
                                 "WHERE tournament_id = %s GROUP BY 1", (duplicate,)).fetchall()
        assert sorted(seeds) == [("r1", 1), ("r2", 1)]
        assert d.duplicate.totals == {s["bot_id"]: s["points"] for s in d.standings}

        # -- too few entrants ------------------------------------------------------------------------
        lone = final_table(pool, lonely)
        assert lone.status == "cancelled" and lone.outcome == "too few entrants: 1 bot entered, at least 2 needed"
        listed = {t.id: t.state for t in list_tournaments(pool)}
        assert listed == {gauntlet: "finished", duplicate: "finished", lonely: "cancelled"}

        # -- ratings: rated matches only, and a rebuild agrees ----------------------------------------
        rated_seats = _count(pool, "SELECT count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                                   "WHERE m.status = 'finished' AND m.rated")
        assert rated_seats == 2 * (1 + 6 + 12)
        assert _count(pool, "SELECT sum(games) FROM ratings") == rated_seats
        before = {r.bot_id: r.elo for r in read.leaderboard(pool, GAME)}
        summary = ratings.rebuild_ratings(pool, GAME)
        assert summary["matches"] == 1 + 6 + 12 and summary["changed"] == 0
        assert {r.bot_id: r.elo for r in read.leaderboard(pool, GAME)} == before
    finally:
        if beat is not None and beat.poll() is None:
            beat.kill()
        app.conf.broker_url, app.conf.task_default_queue = old
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
        referee.stop(10)
        pool.close()
