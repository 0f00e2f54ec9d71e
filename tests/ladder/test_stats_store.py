"""The Bradley-Terry cache (ladder.stats.store), its worker task, and the CLI leaderboard's BT columns."""

from __future__ import annotations

import io
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from fixtures.ladder_helpers import GAME, make_bots
from rich.console import Console

from ladder import read
from ladder.bots import revoke_bot
from ladder.stats import store
from ladder.tournaments import create_tournament, plan_round_robin
from parterre.embedded import celery_url

pytestmark = pytest.mark.usefixtures("games")


def _play_round_robin(pool: Any, bots: list[int], rounds: int, strong: int, weak: int) -> None:
    """Every 2-player match: ``strong`` always beats everyone, ``weak`` always loses, others alternate."""
    tid = create_tournament(pool, name="t", game=GAME, bot_ids=bots, player_counts=(2,), rounds=rounds)
    for i, mid in enumerate(plan_round_robin(pool, tid)):
        with pool.connection() as conn:
            seats = [r[0] for r in conn.execute("SELECT bot_id FROM seats WHERE match_id = %s ORDER BY seat", (mid,))]
        order = sorted(seats, key=lambda b: (b != strong, b == weak, (b + i) % 3))
        h.play(pool, mid, [order.index(b) + 1 for b in seats])


def test_refresh_stores_a_fit_and_is_idempotent(pool):
    bots = make_bots(pool, 4)
    strong, weak = bots[0], bots[3]
    _play_round_robin(pool, bots, rounds=2, strong=strong, weak=weak)
    assert store.bt_leaderboard(pool, GAME) is None
    first = store.refresh_bradley_terry(pool, GAME, bootstrap=60)
    assert first.status == "computed" and first.fit is not None
    again = store.refresh_bradley_terry(pool, GAME, bootstrap=60)
    assert again.status == "fresh" and again.fit is None
    board = store.bt_leaderboard(pool, GAME)
    assert board is not None and not board.stale
    assert board.rows[0].bot_id == strong and board.rows[-1].bot_id == weak
    assert [r.rank for r in board.rows] == [1, 2, 3, 4]
    assert board.matches == first.fit.matches and board.bootstrap == 60
    assert sum(r.elo for r in board.rows) / 4 == pytest.approx(1500)
    top, second = board.rows[0], board.rows[1]
    assert top.low > second.high and top.p_above_next is not None and top.p_above_next > 0.95
    assert board.rows[-1].p_above_next is None
    assert "Bradley-Terry" in board.model


def test_new_results_make_the_fit_stale_until_refreshed(pool):
    bots = make_bots(pool, 3)
    _play_round_robin(pool, bots, rounds=1, strong=bots[0], weak=bots[2])
    store.refresh_bradley_terry(pool, GAME, bootstrap=10)
    _play_round_robin(pool, bots, rounds=1, strong=bots[0], weak=bots[2])
    board = store.bt_leaderboard(pool, GAME)
    assert board is not None and board.stale
    assert store.refresh_bradley_terry(pool, GAME, bootstrap=10).status == "computed"
    assert not store.bt_leaderboard(pool, GAME).stale
    assert store.refresh_bradley_terry(pool, GAME, bootstrap=10, force=True).status == "computed"


def test_revoked_bots_stay_in_the_fit_but_can_be_hidden(pool):
    bots = make_bots(pool, 3)
    _play_round_robin(pool, bots, rounds=2, strong=bots[0], weak=bots[2])
    store.refresh_bradley_terry(pool, GAME, bootstrap=0)
    revoke_bot(pool, bots[1])
    assert [r.bot_id for r in store.bt_leaderboard(pool, GAME).rows] == [bots[0], bots[2]]
    assert len(store.bt_leaderboard(pool, GAME, include_revoked=True).rows) == 3


def test_the_worker_task_runs_twice_safely(pool, ladder_db, monkeypatch):
    """Celery habit: the task function called directly, twice (idempotent)."""
    import workers.tasks as tasks
    from workers.ratings_tasks import recompute_bradley_terry

    monkeypatch.setattr(tasks, "_pool", pool)
    bots = make_bots(pool, 3)
    _play_round_robin(pool, bots, rounds=1, strong=bots[0], weak=bots[2])
    assert recompute_bradley_terry(GAME) == "computed"
    assert recompute_bradley_terry(GAME) == "fresh"
    assert store.bt_leaderboard(pool, GAME).rows[0].bot_id == bots[0]


def test_a_finished_match_queues_a_recomputation_of_its_game(pool, monkeypatch):
    import workers.tasks as tasks
    from workers import ratings_tasks

    monkeypatch.setattr(tasks, "_pool", pool)
    queued: list[tuple[Any, float]] = []
    monkeypatch.setattr(ratings_tasks.recompute_bradley_terry, "apply_async",
                        lambda args, countdown=0, **_: queued.append((args, countdown)))
    bots = make_bots(pool, 2)
    tid = create_tournament(pool, name="t", game=GAME, bot_ids=bots)
    mid = plan_round_robin(pool, tid)[0]

    class Sender:
        name = "parterre.run_match"

        class request:  # mimics celery's Task.request
            args = (mid,)

    monkeypatch.setattr(ratings_tasks, "_queued_at", {})
    ratings_tasks.queue_after_result(sender=Sender, result="finished")
    ratings_tasks.queue_after_result(sender=Sender, result="skipped")
    assert queued == [((GAME,), ratings_tasks.BT_DELAY_S)]
    ratings_tasks.queue_after_result(sender=Sender, result="finished")  # within the window: already queued
    assert len(queued) == 1
    monkeypatch.setattr(ratings_tasks, "_queued_at", {GAME: -1e9})  # the queued one has run long ago
    ratings_tasks.queue_after_result(sender=Sender, result="finished")
    assert len(queued) == 2


def test_the_celery_app_includes_the_task():
    from workers.app import app

    assert "workers.ratings_tasks" in app.conf.include
    import workers.ratings_tasks  # noqa: F401 - the import itself is the check

    assert "parterre.recompute_bradley_terry" in app.tasks


def test_cli_leaderboard_shows_both_models(pool):
    from parterre.render import leaderboard_table

    bots = make_bots(pool, 3)
    _play_round_robin(pool, bots, rounds=2, strong=bots[0], weak=bots[2])
    store.refresh_bradley_terry(pool, GAME, bootstrap=20)
    out = io.StringIO()
    leaderboard_table(GAME, read.leaderboard(pool, GAME), Console(file=out, width=200),
                      bt=store.bt_leaderboard(pool, GAME, include_revoked=True))
    text = out.getvalue()
    for needle in ("Elo", "BT 95 %", "online logistic Elo, K=32", "Bradley-Terry", "bootstrap",
                   "Likelihood of being the stronger"):
        assert needle in text, needle
    names = [r.name for r in store.bt_leaderboard(pool, GAME).rows]
    assert f"{names[0]} > {names[1]}" in text
    out = io.StringIO()
    leaderboard_table(GAME, read.leaderboard(pool, GAME), Console(file=out, width=200), bt=None)
    assert "BT 95 %" not in out.getvalue() and "online logistic Elo" in out.getvalue()


def test_migrations_have_a_single_head():
    """``alembic heads`` must stay single: 0003 chains after the web indexes (0002)."""
    from alembic.script import ScriptDirectory

    from ladder.db import alembic_config

    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    assert script.get_revision("0003").down_revision == "0002"


def test_a_real_celery_worker_runs_the_task(pool, ladder_db, redis_base_url, monkeypatch):
    """The app includes workers.ratings_tasks: a worker started from it knows and runs the task."""
    import secrets
    import time

    from celery.contrib.testing.worker import start_worker

    import workers.tasks as tasks
    from workers.app import app
    from workers.ratings_tasks import recompute_bradley_terry

    bots = make_bots(pool, 3)
    _play_round_robin(pool, bots, rounds=1, strong=bots[0], weak=bots[2])
    monkeypatch.setenv("PARTERRE_DATABASE_URL", ladder_db)
    monkeypatch.setattr(tasks, "_pool", None)
    queue = f"parterre-test-{secrets.token_hex(4)}"
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.update(broker_url=celery_url(redis_base_url), task_default_queue=queue)
    try:
        with start_worker(app, pool="threads", concurrency=1, perform_ping_check=False, queues=[queue],
                          shutdown_timeout=10):
            recompute_bradley_terry.delay(GAME)
            deadline = time.monotonic() + 30
            while store.bt_leaderboard(pool, GAME) is None and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        app.conf.broker_url, app.conf.task_default_queue = old
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
    board = store.bt_leaderboard(pool, GAME)
    assert board is not None and board.rows[0].bot_id == bots[0]


def _bt_row(rank: int, bot_id: int, name: str, elo: float, p: float | None) -> store.BTLeaderboardRow:
    return store.BTLeaderboardRow(rank=rank, bot_id=bot_id, name=name, version="1", elo=elo, low=elo - 50,
                                  high=elo + 50, games=10, p_above_next=p, revoked=False)


def _footer(rows: list[dict], bt_rows: list[store.BTLeaderboardRow]) -> str:
    from datetime import UTC, datetime

    from parterre.render import leaderboard_table

    bt = store.BTLeaderboard(game=GAME, rows=tuple(bt_rows), computed_at=datetime.now(UTC), matches=30,
                             bootstrap=20, confidence=0.95, model="m", stale=False)
    out = io.StringIO()
    leaderboard_table(GAME, rows, Console(file=out, width=300), bt=bt)
    (line,) = [x for x in out.getvalue().splitlines() if x.startswith("Likelihood")]
    return line


def test_leaderboard_footer_says_which_order_its_neighbours_follow():
    """The footer's neighbours follow the Bradley-Terry order while the table is sorted by Elo."""
    table = [{"bot_id": b, "name": n, "version": "1", "elo": e, "games": 10, "wins": 5, "avg_score": 1.0}
             for b, n, e in ((1, "ann", 1600.0), (2, "bob", 1550.0), (3, "cy", 1500.0))]
    agree = _footer(table, [_bt_row(1, 1, "ann", 1580, 0.7), _bt_row(2, 2, "bob", 1520, 0.6),
                            _bt_row(3, 3, "cy", 1400, None)])
    assert "next one in the table" in agree and "ann > bob 70%, bob > cy 60%" in agree, agree
    differ = _footer(table, [_bt_row(1, 2, "bob", 1580, 0.55), _bt_row(2, 1, "ann", 1560, 0.8),
                             _bt_row(3, 3, "cy", 1400, None)])
    assert "Bradley-Terry order" in differ and "not the table's Elo order" in differ, differ
    assert "bob > ann 55%, ann > cy 80%" in differ and "next one in the table" not in differ, differ
