"""Rebuilding the Elo ratings from the stored results (docs/faults.md F-14, F-26).

:func:`rebuild_ratings` recomputes every rating from the seats of finished
matches in ``rating_seq`` order (the order the online updates were applied
in: plan order per bot, :mod:`ladder.rating_order`) and gives the same
numbers as the online updates of :func:`ladder.matches.record_result`.
Results still held (an earlier match of one of their bots is pending) are
left out, as online.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import elo
from ladder.db import run_transaction


def rebuild_ratings(pool: ConnectionPool, game: str | None = None, *, k: float = elo.DEFAULT_K) -> dict[str, Any]:
    """Recompute ratings and rating history from the seats of finished matches, in ``rating_seq`` order.

    Casual matches (``matches.rated`` false) are skipped, as online. Runs in
    one transaction holding ``EXCLUSIVE`` locks on ``ratings`` and
    ``rating_history`` (results being recorded meanwhile wait, then apply on
    top of the rebuilt numbers). Uses the same arithmetic as
    :func:`ladder.matches.record_result`, so the numbers are identical to the
    online ones; a rebuild also repairs ratings after a change of K
    or a deleted match.

    Args:
        pool: ladder connection pool.
        game: rebuild only this game, or every game.
        k: Elo K-factor.

    Returns:
        ``{"games": {game: {"matches": n, "bots": m}}, "matches": total, "changed": rows whose
        elo differed from the stored value}``.
    """

    def rebuild(conn: Any) -> dict[str, Any]:
        conn.execute("LOCK TABLE ratings, rating_history IN EXCLUSIVE MODE")
        cond, params = ("AND m.game = %s", [game]) if game is not None else ("", [])
        old = {
            (b, g): e
            for b, g, e in conn.execute(
                "SELECT bot_id, game, elo FROM ratings" + (" WHERE game = %s" if game else ""), params
            ).fetchall()
        }
        rows = conn.execute(
            "SELECT m.id, m.game, m.rating_seq, m.finished_at, s.bot_id, s.rank, s.score FROM matches m "
            f"JOIN seats s ON s.match_id = m.id WHERE m.status = 'finished' AND m.rated "
            f"AND m.rating_seq IS NOT NULL {cond} ORDER BY m.rating_seq, s.seat",
            params,
        ).fetchall()
        matches: list[tuple[int, str, int, Any, list[tuple[int, int, float | None]]]] = []
        for mid, g, seq, fin, bid, rank, score in rows:
            if not matches or matches[-1][0] != mid:
                matches.append((mid, g, seq, fin, []))
            matches[-1][4].append((bid, rank, score))
        ratings: dict[tuple[int, str], dict[str, Any]] = {}
        history = []
        per_game: dict[str, dict[str, Any]] = defaultdict(lambda: {"matches": 0, "bots": set()})
        for mid, g, seq, fin, seats in matches:
            states = [
                ratings.setdefault(
                    (bid, g),
                    {"elo": elo.INITIAL_RATING, "games": 0, "win": 0, "draw": 0, "loss": 0, "score": 0.0, "last": None},
                )
                for bid, _, _ in seats
            ]
            before = [st["elo"] for st in states]
            ranks = [r for _, r, _ in seats]
            deltas = elo.pairwise_deltas(before, ranks, k)
            outcomes = elo.seat_outcomes(ranks)
            for (bid, _, score), st, b, d, outcome in zip(seats, states, before, deltas, outcomes, strict=True):
                st["elo"] = b + d
                st["games"] += 1
                st[outcome] += 1
                st["score"] += score or 0.0
                st["last"] = fin if st["last"] is None or fin > st["last"] else st["last"]
                history.append((mid, bid, g, seq, b, b + d, d))
                per_game[g]["bots"].add(bid)
            per_game[g]["matches"] += 1
        where = " WHERE game = %s" if game is not None else ""
        conn.execute("DELETE FROM rating_history" + where, params)
        conn.execute("DELETE FROM ratings" + where, params)
        with conn.cursor().copy(
            "COPY ratings (bot_id, game, elo, games, wins, draws, losses, score_sum, last_played) FROM STDIN"
        ) as copy:
            for (bid, g), st in sorted(ratings.items()):
                copy.write_row(
                    (bid, g, st["elo"], st["games"], st["win"], st["draw"], st["loss"], st["score"], st["last"])
                )
        with conn.cursor().copy(
            "COPY rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) FROM STDIN"
        ) as copy:
            for row in history:
                copy.write_row(row)
        changed = sum(1 for key, st in ratings.items() if old.get(key) != st["elo"]) + sum(
            1 for key in old if key not in ratings
        )
        return {
            "games": {g: {"matches": v["matches"], "bots": len(v["bots"])} for g, v in sorted(per_game.items())},
            "matches": len(matches),
            "changed": changed,
        }

    return run_transaction(pool, rebuild)
