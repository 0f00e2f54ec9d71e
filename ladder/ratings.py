"""Rebuilding the Elo ratings from the stored results (docs/faults.md F-14, F-26).

:func:`rebuild_ratings` recomputes every rating from the seats of finished
matches in ``rating_seq`` order (the order the online updates were applied
in: plan order per bot, :mod:`ladder.rating_order`) and gives the same
numbers as the online updates of :func:`ladder.matches.record_result`.
Results still held (an earlier match of one of their bots is pending) are
left out, as online.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import elo
from ladder.db import connect, connection, run_transaction

REBUILD_BATCH = 20_000
"""Rows the rebuild's reading connection receives at a time (psycopg's chunked results)."""

_REBUILT = "rating_history_rebuilt"
"""The table the rebuilt history is written into before it replaces ``rating_history`` (same transaction)."""

_RESULTS_SQL = (
    "SELECT m.id, m.game, m.rating_seq, m.finished_at, s.bot_id, s.rank, s.score FROM matches m "
    "JOIN seats s ON s.match_id = m.id WHERE m.status = 'finished' AND m.rated "
    "AND m.rating_seq IS NOT NULL {cond} ORDER BY m.rating_seq, s.seat"
)
"""Every applied rated result, seat by seat, in the order the online updates applied them."""

_INDEX_DEF = re.compile(r"^(CREATE (?:UNIQUE )?INDEX )(\S+)( ON (?:ONLY )?)(\S+)( .*)$", re.S)


def _swap_history(conn: Any) -> list[str]:
    """Index :data:`_REBUILT` as ``rating_history`` is indexed, then put it in its place; returns the foreign keys
    added ``NOT VALID`` (the caller validates them after the commit).

    Every index and key is made from its own definition in the catalog (``pg_get_indexdef``,
    ``pg_get_constraintdef``) and keeps its name, so the schema stays the migrations' one. The old table is
    dropped under an ``ACCESS EXCLUSIVE`` lock taken only now: readers go on reading the old history
    until the swap, writers wait for the rebuild as before (its ``EXCLUSIVE`` lock).
    """
    t = "'rating_history'::regclass"
    keys = conn.execute(
        f"SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = {t} "
        "AND contype IN ('p', 'u') ORDER BY conname").fetchall()
    fks = conn.execute(
        f"SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = {t} AND contype = 'f' "
        "ORDER BY conname").fetchall()
    indexes = conn.execute(
        f"SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        f"WHERE i.indrelid = {t} AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) "
        "ORDER BY c.relname").fetchall()
    conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
    for name, definition in keys:
        conn.execute(f'ALTER TABLE {_REBUILT} ADD CONSTRAINT "{name}_rebuilt" {definition}')
    for name, definition in indexes:
        m = _INDEX_DEF.match(definition)
        if m is None:
            raise RuntimeError(f"unexpected index definition: {definition}")
        conn.execute(f'{m.group(1)}"{name}_rebuilt"{m.group(3)}{_REBUILT}{m.group(5)}')
    conn.execute("LOCK TABLE rating_history IN ACCESS EXCLUSIVE MODE")
    conn.execute("DROP TABLE rating_history")
    conn.execute(f"ALTER TABLE {_REBUILT} RENAME TO rating_history")
    for name, _ in keys:
        conn.execute(f'ALTER TABLE rating_history RENAME CONSTRAINT "{name}_rebuilt" TO "{name}"')
    for name, _ in indexes:
        conn.execute(f'ALTER INDEX "{name}_rebuilt" RENAME TO "{name}"')
    for name, definition in fks:
        conn.execute(f'ALTER TABLE rating_history ADD CONSTRAINT "{name}" {definition} NOT VALID')
    return [str(name) for name, _ in fks]


def rebuild_ratings(pool: ConnectionPool, game: str | None = None, *, k: float = elo.DEFAULT_K) -> dict[str, Any]:
    """Recompute ratings and rating history from the seats of finished matches, in ``rating_seq`` order.

    Casual matches (``matches.rated`` false) are skipped, as online. Runs in
    one transaction holding ``EXCLUSIVE`` locks on ``ratings`` and
    ``rating_history`` (results being recorded meanwhile wait, then apply on
    top of the rebuilt numbers; pages go on reading the old numbers). Uses the same arithmetic as
    :func:`ladder.matches.record_result`, so the numbers are identical to the
    online ones; a rebuild also repairs ratings after a change of K
    or a deleted match.

    At ten million matches (docs/benchmarks.md) it runs in constant memory: a second connection
    streams the results (read after the locks are held, so it sees every applied result and no
    other), and the history goes by binary ``COPY ... FREEZE`` into a new table (its rows frozen and
    its pages all-visible at once: the bot page's index-only scans need no ``VACUUM``), indexed once full and swapped
    in for the old one (:func:`_swap_history`); its foreign keys are validated after the commit,
    while reads and writes go on.

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
        where = " WHERE game = %s" if game is not None else ""
        old = {
            (b, g): e
            for b, g, e in conn.execute("SELECT bot_id, game, elo FROM ratings" + where, params).fetchall()
        }
        conn.execute(f"CREATE TABLE {_REBUILT} (LIKE rating_history INCLUDING ALL EXCLUDING INDEXES)")
        if game is not None:
            conn.execute(f"INSERT INTO {_REBUILT} SELECT * FROM rating_history WHERE game <> %s", params)
        conn.execute("DELETE FROM ratings" + where, params)
        # (elo, games, wins, draws, losses, score sum, last played) per (bot, game)
        ratings: dict[tuple[int, str], list[Any]] = {}
        per_game: dict[str, dict[str, Any]] = defaultdict(lambda: {"matches": 0, "bots": set()})
        slot = {"win": 2, "draw": 3, "loss": 4}
        matches = 0

        def apply(copy: Any, mid: int, g: str, seq: int, fin: Any, seats: list[tuple[int, int, float | None]]) -> None:
            states = []
            for bid, _, _ in seats:
                st = ratings.get((bid, g))
                if st is None:
                    st = ratings[bid, g] = [elo.INITIAL_RATING, 0, 0, 0, 0, 0.0, None]
                states.append(st)
            before = [st[0] for st in states]
            ranks = [r for _, r, _ in seats]
            deltas = elo.pairwise_deltas(before, ranks, k)
            outcomes = elo.seat_outcomes(ranks)
            bots = per_game[g]["bots"]
            for (bid, _, score), st, b, d, outcome in zip(seats, states, before, deltas, outcomes, strict=True):
                st[0] = b + d
                st[1] += 1
                st[slot[outcome]] += 1
                st[5] += score or 0.0
                if st[6] is None or fin > st[6]:
                    st[6] = fin
                copy.write_row((mid, bid, g, seq, b, b + d, d))
                bots.add(bid)
            per_game[g]["matches"] += 1

        with (
            connect(pool.conninfo if isinstance(pool.conninfo, str) else pool.conninfo()) as reader,
            reader.cursor() as cur,
            conn.cursor().copy(f"COPY {_REBUILT} (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) "
                               "FROM STDIN WITH (FORMAT BINARY, FREEZE)") as copy,
        ):
            # Read after the locks are held: every applied result has committed, no other can be applied.
            copy.set_types(["int8", "int8", "text", "int8", "float8", "float8", "float8"])
            current: tuple[int, str, int, Any] | None = None
            seats: list[tuple[int, int, float | None]] = []
            for mid, g, seq, fin, bid, rank, score in cur.stream(_RESULTS_SQL.format(cond=cond), params,
                                                               size=REBUILD_BATCH):
                if current is None or current[0] != mid:
                    if current is not None:
                        apply(copy, *current, seats)
                        matches += 1
                    current, seats = (mid, g, seq, fin), []
                seats.append((bid, rank, score))
            if current is not None:
                apply(copy, *current, seats)
                matches += 1
        foreign_keys = _swap_history(conn)
        with conn.cursor().copy(
            "COPY ratings (bot_id, game, elo, games, wins, draws, losses, score_sum, last_played) FROM STDIN"
        ) as copy:
            for (bid, g), st in sorted(ratings.items()):
                copy.write_row((bid, g, *st))
        changed = sum(1 for key, st in ratings.items() if old.get(key) != st[0]) + sum(
            1 for key in old if key not in ratings
        )
        return {
            "games": {g: {"matches": v["matches"], "bots": len(v["bots"])} for g, v in sorted(per_game.items())},
            "matches": matches,
            "changed": changed,
            "foreign_keys": foreign_keys,
        }

    summary = run_transaction(pool, rebuild)
    with connection(pool) as conn:
        for name in summary.pop("foreign_keys"):  # checked while reads and writes go on
            conn.execute(f'ALTER TABLE rating_history VALIDATE CONSTRAINT "{name}"')
        conn.execute("ANALYZE rating_history")  # a new table: the planner knows nothing of it yet
        conn.execute("VACUUM (ANALYZE) ratings")  # every row was deleted and written again
    return summary
