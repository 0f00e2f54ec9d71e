"""A long rating history on the bot page: thinned in the database to MAX_PLOT_POINTS points per game.

A house bot meets everyone, and its history runs to hundreds of thousands of rated matches; the page
plots at most :data:`ladder.read.MAX_PLOT_POINTS` of them. Oracle: the ``rating_history`` rows read in
order by the test, each plotted point equal to the row at its ordinal, the first and the last match
always plotted, the others evenly spread.
"""

from __future__ import annotations

import json
from typing import Any

from ladder import bots
from ladder.read import MAX_PLOT_POINTS, bot_page


def _history(pool: Any, bot_id: int, game: str, n: int, first_match: int) -> None:
    """``n`` finished matches of ``game`` for ``bot_id`` with an Elo after each, written as SQL rows."""
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO matches (id, plan_key, game, game_string, seed, seed_commitment, time_control, status, "
            "attempt, finished_at, result_seq) "
            "SELECT i, 'history:' || i, %s, %s, md5(i::text), md5(i::text), %s, 'finished', 1, now(), i "
            "FROM generate_series(%s, %s) i",
            (game, f"{game}(players=2)", json.dumps({"base_ms": 0, "increment_ms": 1000, "cap_ms": 1000,
                                                     "margin_ms": 100}), first_match, first_match + n - 1))
        conn.execute(
            "INSERT INTO rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) "
            "SELECT i, %s, %s, i, 1500 + (i %% 97), 1500 + (i %% 89), 1 FROM generate_series(%s, %s) i",
            (bot_id, game, first_match, first_match + n - 1))
        conn.execute("INSERT INTO ratings (bot_id, game, elo, games) VALUES (%s, %s, 1500, %s)", (bot_id, game, n))


def test_a_long_history_is_thinned_evenly_and_keeps_its_ends(pool: Any) -> None:
    bot_id, _ = bots.register_bot(pool, "long-history")
    _history(pool, bot_id, "floriferous", 3 * MAX_PLOT_POINTS + 17, 1_000_000)
    _history(pool, bot_id, "flowar", MAX_PLOT_POINTS, 2_000_000)  # exactly the cap: every point
    page = bot_page(pool, bot_id)
    with pool.connection() as conn:
        rows = {g: conn.execute("SELECT match_id, elo_after FROM rating_history WHERE bot_id = %s AND game = %s "
                                "ORDER BY result_seq", (bot_id, g)).fetchall() for g in ("floriferous", "flowar")}
    by_game = {r.game: r for r in page.ratings}
    for game, expected in rows.items():
        rating = by_game[game]
        assert rating.history_total == len(expected)
        assert len(rating.history) == min(MAX_PLOT_POINTS, len(expected))
        assert [(p.match_id, p.elo) for p in rating.history] == [expected[p.n - 1] for p in rating.history]
        ordinals = [p.n for p in rating.history]
        assert ordinals[0] == 1 and ordinals[-1] == len(expected)
        gaps = {b - a for a, b in zip(ordinals, ordinals[1:], strict=False)}
        assert max(gaps) - min(gaps) <= 1  # evenly spread
