"""The Bradley-Terry cache in PostgreSQL: the only module of :mod:`ladder.stats` with database code.

Tables ``ratings_bt_fits`` and ``ratings_bt`` (migration ``0003``). A fit
covers all finished matches of one game; it is **stale** when the game's
finished matches are no longer the ones it saw (their count or largest
``result_seq`` changed). :func:`refresh_bradley_terry` recomputes a stale fit
(the worker task ``parterre.recompute_bradley_terry`` and the CLI leaderboard
call it) and :func:`bt_leaderboard` reads the cache (the web site's and the
CLI's read path; it never computes).

Reading the results and writing the fit are two short transactions; the fit
itself runs in between, holding no lock. The write replaces the cached fit
only when it is at least as fresh, so two workers refreshing at once leave the
newer fit in place.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import connection, run_transaction
from ladder.stats.bradley_terry import BOOTSTRAP, BTFit, MatchRecord, fit_bradley_terry

__all__ = [
    "BTLeaderboard",
    "BTLeaderboardRow",
    "RefreshOutcome",
    "bt_leaderboard",
    "finished_state",
    "load_match_records",
    "refresh_bradley_terry",
]


@dataclass(frozen=True, slots=True)
class BTLeaderboardRow:
    """One bot's cached Bradley-Terry line.

    Attributes:
        rank: position in the fit (1 = highest rating; revoked bots keep their place).
        bot_id / name / version: the bot.
        elo: maximum-likelihood rating (logistic Elo points; the fit's mean is 1500).
        low / high: bootstrap 95 % interval (points).
        games: matches of two or more seats it played in this game.
        p_above_next: bootstrap probability that it is stronger than the bot
            ranked just below it in the fit (None for the last one).
        revoked: its token was revoked.
    """

    rank: int
    bot_id: int
    name: str
    version: str
    elo: float
    low: float
    high: float
    games: int
    p_above_next: float | None
    revoked: bool


@dataclass(frozen=True, slots=True)
class BTLeaderboard:
    """A game's cached fit.

    Attributes:
        game: registry name.
        rows: best first.
        computed_at: when the fit was stored.
        matches: matches used (two or more seats).
        bootstrap: bootstrap replicates.
        confidence: interval coverage (0.95).
        model: one-line model description (:data:`ladder.stats.bradley_terry.MODEL`).
        stale: results were recorded since (a recomputation is due).
    """

    game: str
    rows: tuple[BTLeaderboardRow, ...]
    computed_at: datetime
    matches: int
    bootstrap: int
    confidence: float
    model: str
    stale: bool

    def by_bot(self) -> dict[int, BTLeaderboardRow]:
        """Rows keyed by bot id."""
        return {r.bot_id: r for r in self.rows}


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    """What :func:`refresh_bradley_terry` did.

    Attributes:
        status: ``"fresh"`` (the cache already covered every result; nothing
            computed), ``"computed"`` (stored a new fit) or ``"superseded"``
            (computed, but a fresher fit was stored meanwhile and kept).
        finished / result_seq: the results covered.
        fit: the new fit (None when ``fresh``).
        elapsed_ms: time spent fitting.
    """

    status: str
    finished: int
    result_seq: int | None
    fit: BTFit | None
    elapsed_ms: int


def finished_state(conn: Any, game: str) -> tuple[int, int | None]:
    """``(count, largest result_seq)`` of the game's finished matches, on an open connection."""
    row = conn.execute(
        "SELECT count(*), max(result_seq) FROM matches WHERE game = %s AND status = 'finished'", (game,)
    ).fetchone()
    return int(row[0]), (None if row[1] is None else int(row[1]))


def _cached_state(conn: Any, game: str) -> tuple[int, int | None] | None:
    row = conn.execute("SELECT finished, result_seq FROM ratings_bt_fits WHERE game = %s", (game,)).fetchone()
    return None if row is None else (int(row[0]), None if row[1] is None else int(row[1]))


def load_match_records(pool: ConnectionPool, game: str) -> tuple[list[MatchRecord], int, int | None]:
    """Every finished match of ``game`` as a :class:`MatchRecord`, read in one snapshot.

    Returns:
        ``(records in result_seq order, finished count, largest result_seq)``.
    """
    with connection(pool) as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        finished, seq = finished_state(conn, game)
        rows = conn.execute(
            "SELECT m.id, s.bot_id, s.rank FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE m.game = %s AND m.status = 'finished' AND m.rated ORDER BY m.result_seq, s.seat",
            (game,),
        ).fetchall()
    records: list[MatchRecord] = []
    current: int | None = None
    bots: list[int] = []
    ranks: list[int] = []
    for mid, bot_id, rank in rows:
        if mid != current:
            if current is not None:
                records.append(MatchRecord(tuple(bots), tuple(ranks)))
            current, bots, ranks = mid, [], []
        bots.append(int(bot_id))
        ranks.append(int(rank))
    if current is not None:
        records.append(MatchRecord(tuple(bots), tuple(ranks)))
    return records, finished, seq


def refresh_bradley_terry(
    pool: ConnectionPool, game: str, *, force: bool = False, bootstrap: int = BOOTSTRAP, seed: int | None = 0
) -> RefreshOutcome:
    """Recompute and store a game's Bradley-Terry fit unless the cache already covers every result.

    Idempotent: a second call with no new result returns ``fresh`` at the cost
    of two small queries (the worker task relies on this to coalesce requests).

    Args:
        pool: ladder connection pool.
        game: registry name.
        force: recompute even when fresh.
        bootstrap: replicates for the intervals.
        seed: resampling seed (the default makes a fit reproducible from the data).

    Returns:
        What happened (see :class:`RefreshOutcome`).
    """
    if not force:
        with connection(pool) as conn:
            now = finished_state(conn, game)
            if _cached_state(conn, game) == now:
                return RefreshOutcome("fresh", now[0], now[1], None, 0)
    records, finished, seq = load_match_records(pool, game)
    started = time.perf_counter()
    fit = fit_bradley_terry(records, bootstrap=bootstrap, seed=seed)
    elapsed_ms = int((time.perf_counter() - started) * 1000)

    def write(conn: Any) -> str:
        conn.execute(
            "INSERT INTO ratings_bt_fits (game, result_seq, finished, matches, bootstrap, confidence, seed, model) "
            "VALUES (%s, NULL, 0, 0, 0, 0.95, NULL, '') ON CONFLICT (game) DO NOTHING",
            (game,),
        )
        row = conn.execute(
            "SELECT finished, result_seq, model FROM ratings_bt_fits WHERE game = %s FOR UPDATE", (game,)
        ).fetchone()
        old_state = (int(row[0]), row[1])
        if row[2]:  # a fit is stored (the placeholder row has no model)
            if old_state == (finished, seq) and not force:
                return "superseded"
            if old_state != (finished, seq) and old_state[0] >= finished and (old_state[1] or 0) >= (seq or 0):
                return "superseded"
        conn.execute("DELETE FROM ratings_bt WHERE game = %s", (game,))
        with conn.cursor().copy(
            "COPY ratings_bt (game, bot_id, rank, elo, elo_low, elo_high, games, p_above_next) FROM STDIN"
        ) as copy:
            for r in fit.ratings:
                copy.write_row((game, r.bot, r.rank, r.elo, r.low, r.high, r.games, r.p_above_next))
        conn.execute(
            "UPDATE ratings_bt_fits SET result_seq = %s, finished = %s, matches = %s, bootstrap = %s, "
            "confidence = %s, seed = %s, model = %s, elapsed_ms = %s, computed_at = now() WHERE game = %s",
            (seq, finished, fit.matches, fit.bootstrap, fit.confidence, seed, fit.model, elapsed_ms, game),
        )
        return "computed"

    status = run_transaction(pool, write)
    return RefreshOutcome(status, finished, seq, fit, elapsed_ms)


def bt_leaderboard(pool: ConnectionPool, game: str, *, include_revoked: bool = False) -> BTLeaderboard | None:
    """The cached Bradley-Terry fit of ``game``, best first; None when none was computed yet.

    Never computes (call :func:`refresh_bradley_terry` for that); ``stale``
    says whether results arrived since. This is the query for the web site's
    leaderboard.

    Args:
        pool: ladder connection pool.
        game: registry name.
        include_revoked: also list bots whose token was revoked (they are in
            the fit either way: their results inform everyone else's rating).
    """
    with connection(pool) as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        fit = conn.execute(
            "SELECT finished, result_seq, matches, bootstrap, confidence, model, computed_at "
            "FROM ratings_bt_fits WHERE game = %s",
            (game,),
        ).fetchone()
        if fit is None:
            return None
        now = finished_state(conn, game)
        where = "" if include_revoked else "AND b.revoked_at IS NULL"
        rows = conn.execute(
            "SELECT r.rank, r.bot_id, b.name, b.version, r.elo, r.elo_low, r.elo_high, r.games, r.p_above_next, "
            f"b.revoked_at IS NOT NULL FROM ratings_bt r JOIN bots b ON b.id = r.bot_id WHERE r.game = %s {where} "
            "ORDER BY r.rank",
            (game,),
        ).fetchall()
    finished, seq, matches, bootstrap, confidence, model, computed_at = fit
    return BTLeaderboard(
        game=game,
        rows=tuple(BTLeaderboardRow(*r) for r in rows),
        computed_at=computed_at,
        matches=int(matches),
        bootstrap=int(bootstrap),
        confidence=float(confidence),
        model=model,
        stale=(int(finished), None if seq is None else int(seq)) != now,
    )
