"""A game's leaderboard: the web site's sortable, paged, player-count views and the CLI's table.

Elo in rating points; a *win* is a sole first place, a *draw* a shared first
place (:func:`ladder.elo.seat_outcomes`); ``win_rate = wins / games``. Rows
come from ``ratings`` (index ``ratings_leaderboard``), with a player-count
filter from ``bot_player_stats`` (migration 0002), and the Bradley-Terry
intervals from ``ratings_bt`` (migration 0003).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.leagues import league_badges
from ladder.read.common import NotFound, game_exists, game_info


class SortKey(str, Enum):
    """Leaderboard sort columns."""

    RANK = "rank"
    NAME = "name"
    ELO = "elo"
    BT = "bt"
    GAMES = "games"
    WIN_RATE = "win_rate"
    AVG_SCORE = "avg_score"
    LAST_PLAYED = "last_played"


class SortOrder(str, Enum):
    """Sort direction."""

    ASC = "asc"
    DESC = "desc"


_SORT_SQL: dict[SortKey, str] = {
    SortKey.RANK: "rank",
    SortKey.NAME: "lower(name)",
    SortKey.ELO: "elo",
    SortKey.BT: "(SELECT x.elo FROM ratings_bt x WHERE x.game = %(game)s AND x.bot_id = ranked.bot_id)",
    SortKey.GAMES: "games",
    SortKey.WIN_RATE: "win_rate",
    SortKey.AVG_SCORE: "avg_score",
    SortKey.LAST_PLAYED: "last_played",
}


DEFAULT_ORDER: dict[SortKey, SortOrder] = {
    SortKey.RANK: SortOrder.ASC,
    SortKey.NAME: SortOrder.ASC,
    SortKey.ELO: SortOrder.DESC,
    SortKey.BT: SortOrder.DESC,
    SortKey.GAMES: SortOrder.DESC,
    SortKey.WIN_RATE: SortOrder.DESC,
    SortKey.AVG_SCORE: SortOrder.DESC,
    SortKey.LAST_PLAYED: SortOrder.DESC,
}
"""Direction a column sorts in when first clicked."""


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One line of a leaderboard.

    Attributes:
        rank: position under the default order of the view (Elo, highest first;
            in a solo view, average score); ties broken by fewer games, then bot id.
        elo: the bot's Elo in this game (all player counts share one rating), or
            None if it has no rating row.
        elo: online Elo (a running estimate: it has no interval of its own).
        bt_elo: Bradley-Terry maximum-likelihood estimate in Elo points (mean
            of the fit 1500), or None for a bot outside the latest fit.
        bt_low / bt_high: the bootstrap 95 % interval of ``bt_elo``, Elo points.
        bt_rank: rank under the Bradley-Terry fit (1 = best), or None.
        games / wins / draws / losses: matches counted in this view.
        win_rate: wins / games (0 when no games).
        avg_score: mean game score (the game's own points) per match.
        last_played: finish time of the bot's last match in this view.
        league: its league in this game (``wood``, ``bronze``, ``silver``, ``gold``; docs/ladder.md
            "Leagues"), None for a house bot.
    """

    rank: int
    bot_id: int
    name: str
    version: str
    elo: float | None
    bt_elo: float | None
    bt_low: float | None
    bt_high: float | None
    bt_rank: int | None
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    avg_score: float
    last_played: datetime | None
    league: str | None = None


@dataclass(frozen=True, slots=True)
class LeaderboardPage:
    """One page of a game's leaderboard (see :func:`leaderboard_page`)."""

    game: str
    long_name: str
    players: int | None
    player_counts: list[int]
    sort: SortKey
    order: SortOrder
    page: int
    per_page: int
    total: int
    pages: int
    bt_available: bool
    rows: list[LeaderboardEntry]


BtRow = tuple[float | None, float | None, float | None, int | None]
"""``(estimate, low, high, rank)`` of one bot in the Bradley-Terry fit (all None outside it)."""
NO_BT: BtRow = (None, None, None, None)


def bt_intervals(conn: Any, game: str, bot_ids: Sequence[int]) -> dict[int, BtRow]:
    """Bradley-Terry ratings ``{bot_id: (estimate, low, high, rank)}`` in Elo points from the cached fit.

    ``low``/``high`` bound the bootstrap 95 % interval of the estimate.

    Reads ``ratings_bt`` (migration 0003, written only by
    :func:`ladder.stats.store.refresh_bradley_terry`); a bot outside the fit,
    or a game without one, is absent from the result and its pages show "—".
    Nothing is estimated here.
    """
    if not bot_ids:
        return {}
    rows = conn.execute(
        "SELECT bot_id, elo, elo_low, elo_high, rank FROM ratings_bt WHERE game = %s AND bot_id = ANY(%s::bigint[])",
        (game, list(bot_ids)),
    ).fetchall()
    return {int(b): (float(e), float(lo), float(hi), int(rk)) for b, e, lo, hi, rk in rows}


def bt_available(conn: Any, game: str) -> bool:
    """True once a Bradley-Terry fit of ``game`` was stored (``ratings_bt_fits``)."""
    return conn.execute("SELECT 1 FROM ratings_bt_fits WHERE game = %s", (game,)).fetchone() is not None


_RATING_COLUMNS = (
    "r.bot_id, b.name, b.version, r.elo, r.games, r.wins, r.draws, r.losses, "
    "CASE WHEN r.games > 0 THEN r.wins::float8 / r.games ELSE 0 END AS win_rate, "
    "CASE WHEN r.games > 0 THEN r.score_sum / r.games ELSE 0 END AS avg_score, r.last_played"
)


_TOTAL_ALL = (
    "((SELECT count(*) FROM ratings r2 WHERE r2.game = %(game)s) - (SELECT count(*) FROM ratings r2 "
    "JOIN bots b2 ON b2.id = r2.bot_id WHERE r2.game = %(game)s AND b2.revoked_at IS NOT NULL))"
)
"""Rated bots of the game that are not revoked: all of them less the revoked ones (index ``bots_revoked``,
migration 0020), not a join of every rating with its bot (10^4 bots: docs/benchmarks.md)."""


_TOTAL_PLAYERS = (
    "((SELECT count(*) FROM bot_player_stats p2 WHERE p2.game = %(game)s AND p2.players = %(players)s "
    "AND p2.games > 0) - (SELECT count(*) FROM bot_player_stats p2 JOIN bots b2 ON b2.id = p2.bot_id "
    "WHERE p2.game = %(game)s AND p2.players = %(players)s AND p2.games > 0 AND b2.revoked_at IS NOT NULL))"
)


_LEADERBOARD_TOP = f"""
SELECT {_RATING_COLUMNS}, NULL AS rank, {_TOTAL_ALL} AS total
FROM ratings r JOIN bots b ON b.id = r.bot_id
WHERE r.game = %(game)s AND b.revoked_at IS NULL
ORDER BY {{order}} LIMIT %(limit)s OFFSET %(offset)s
"""
"""Rank order (either direction): read in index order (``ratings_leaderboard``), the rank is the position."""


_LEADERBOARD_ALL = f"""
WITH ranked AS (
    SELECT {_RATING_COLUMNS},
           row_number() OVER (ORDER BY r.elo DESC, r.games ASC, r.bot_id ASC) AS rank
    FROM ratings r JOIN bots b ON b.id = r.bot_id
    WHERE r.game = %(game)s AND b.revoked_at IS NULL
)
SELECT bot_id, name, version, elo, games, wins, draws, losses, win_rate, avg_score, last_played, rank,
       {_TOTAL_ALL} AS total
FROM ranked ORDER BY {{order}} LIMIT %(limit)s OFFSET %(offset)s
"""
"""Any other order: rank every rated bot of the game (a thousand rows), then sort and cut the page."""


_LEADERBOARD_PLAYERS = f"""
WITH ranked AS (
    SELECT p.bot_id, b.name, b.version, r.elo, p.games, p.wins, p.draws, p.losses,
           p.wins::float8 / p.games AS win_rate, p.score_sum / p.games AS avg_score, p.last_played,
           row_number() OVER (ORDER BY {{rank_order}}) AS rank
    FROM bot_player_stats p JOIN bots b ON b.id = p.bot_id
    LEFT JOIN ratings r ON r.bot_id = p.bot_id AND r.game = p.game
    WHERE p.game = %(game)s AND p.players = %(players)s AND p.games > 0 AND b.revoked_at IS NULL
)
SELECT bot_id, name, version, elo, games, wins, draws, losses, win_rate, avg_score, last_played, rank,
       {_TOTAL_PLAYERS} AS total
FROM ranked ORDER BY {{order}} LIMIT %(limit)s OFFSET %(offset)s
"""
"""A player-count view, from ``bot_player_stats`` (migration 0002; primary key prefix ``(game, players)``)."""


def _entry(rank: int, row: tuple[Any, ...], bt: dict[int, BtRow], leagues: dict[int, str | None]) -> LeaderboardEntry:
    """A :class:`LeaderboardEntry` from the first eleven columns of :data:`_RATING_COLUMNS` order."""
    bid, name, ver, e, g, w, d, lo, wr, avg, lp = row[:11]
    bt_elo, low, high, bt_rank = bt.get(bid, NO_BT)
    return LeaderboardEntry(
        rank=rank, bot_id=int(bid), name=name, version=ver, elo=None if e is None else float(e), bt_elo=bt_elo,
        bt_low=low, bt_high=high, bt_rank=bt_rank, games=int(g), wins=int(w), draws=int(d), losses=int(lo),
        win_rate=float(wr), avg_score=float(avg), last_played=lp, league=leagues.get(int(bid)),
    )


def leaderboard(
    pool: ConnectionPool, game: str, *, limit: int | None = None, include_revoked: bool = False
) -> list[LeaderboardEntry]:
    """Rated bots of ``game`` ordered by Elo, highest first (index ``ratings_leaderboard``): the CLI's table.

    The same rows, in the same order, as the first pages of :func:`leaderboard_page`
    with the default sort.

    Args:
        pool: ladder connection pool.
        game: registry name.
        limit: most rows, or all when ``None``.
        include_revoked: also list bots whose token was revoked.
    """
    where = "" if include_revoked else "AND b.revoked_at IS NULL"
    sql = (
        f"SELECT {_RATING_COLUMNS} FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = %s {where} "
        "ORDER BY r.elo DESC, r.games ASC, r.bot_id ASC"
    )
    params: list[Any] = [game]
    if limit is not None:
        sql += " LIMIT %s"
        params.append(limit)
    with connection(pool) as conn:
        rows = conn.execute(sql, params).fetchall()
        bt = bt_intervals(conn, game, [r[0] for r in rows])
        leagues = league_badges(conn, game, [r[0] for r in rows])
    return [_entry(i, row, bt, leagues) for i, row in enumerate(rows, start=1)]


def leaderboard_page(
    pool: ConnectionPool,
    game: str,
    *,
    players: int | None = None,
    sort: SortKey = SortKey.RANK,
    order: SortOrder | None = None,
    page: int = 1,
    per_page: int = 50,
) -> LeaderboardPage:
    """One page of a game's leaderboard.

    Without ``players``, every rated, non-revoked bot with its Elo and
    counters from ``ratings`` (all player counts together). With ``players``,
    only bots that finished matches with that many seats, with games, win
    rate, average score and last played counted over those matches only
    (``bot_player_stats``); Elo is still the game's single rating (ratings are
    per game, ``ladder/README.md``). In a solo view (``players == 1``) the rank
    follows the average score, since solo matches change no rating.

    Args:
        pool: ladder connection pool.
        game: registry name (or a game with ratings in the database).
        players: player-count filter, or None for all.
        sort / order: column and direction (``order`` None = the column's natural direction).
        page: 1-based page number; a page past the end gives an empty ``rows``.
        per_page: rows per page (1..500).

    Raises:
        NotFound: unknown game.
        ValueError: ``page`` < 1 or ``per_page`` out of range.
    """
    if page < 1 or not 1 <= per_page <= 500:
        raise ValueError("page must be >= 1 and per_page in 1..500")
    if not game_exists(pool, game):
        raise NotFound(f"no game {game!r}")
    long_name, lo, hi, _ = game_info(game)
    order = order or DEFAULT_ORDER[sort]
    with connection(pool) as conn:
        sql, params, rank_of = leaderboard_query(game, players, sort, order, page, per_page)
        rows = conn.execute(sql, params).fetchall()
        total = int(rows[0][12]) if rows else leaderboard_total(conn, game, players)
        bt = bt_intervals(conn, game, [r[0] for r in rows])
        has_bt = bt_available(conn, game)
        leagues = league_badges(conn, game, [r[0] for r in rows])

    def rank_at(i: int, row: tuple[Any, ...]) -> int:
        if row[11] is not None:
            return int(row[11])
        assert rank_of is not None, "only rank-ordered queries leave the rank to rank_of"
        return rank_of(i, total)

    entries = [_entry(rank_at(i, row), row, bt, leagues) for i, row in enumerate(rows)]
    return LeaderboardPage(
        game=game, long_name=long_name, players=players, player_counts=list(range(lo, hi + 1)), sort=sort,
        order=order, page=page, per_page=per_page, total=total, pages=max(1, -(-total // per_page)),
        bt_available=has_bt, rows=entries,
    )


def leaderboard_query(
    game: str, players: int | None, sort: SortKey, order: SortOrder, page: int, per_page: int
) -> tuple[str, dict[str, Any], Callable[[int, int], int] | None]:
    """The SQL and parameters of one leaderboard page (see :func:`leaderboard_page`; the bench EXPLAINs it).

    Returns:
        ``(sql, params, rank_of)``. Each row: bot_id, name, version, elo, games,
        wins, draws, losses, win_rate, avg_score, last_played, rank (NULL when
        the rows come in rank order: then ``rank_of(row_index, total)`` gives
        it), total (rows of the whole view).
    """
    direction = "ASC" if order is SortOrder.ASC else "DESC"
    offset = (page - 1) * per_page
    params: dict[str, Any] = {"game": game, "limit": per_page, "offset": offset}
    if players is None and sort in (SortKey.RANK, SortKey.ELO):
        if (sort is SortKey.RANK) == (order is SortOrder.ASC):  # best first
            sql = _LEADERBOARD_TOP.format(order="r.elo DESC, r.games ASC, r.bot_id ASC")
            return sql, params, lambda i, total: offset + i + 1
        sql = _LEADERBOARD_TOP.format(order="r.elo ASC, r.games DESC, r.bot_id DESC")
        return sql, params, lambda i, total: total - offset - i
    order_sql = f"{_SORT_SQL[sort]} {direction} NULLS LAST, rank ASC"
    if players is None:
        return _LEADERBOARD_ALL.format(order=order_sql), params, None
    params["players"] = players
    rank_order = (
        "p.score_sum / p.games DESC, p.games ASC, p.bot_id ASC"
        if players == 1
        else "r.elo DESC NULLS LAST, p.games ASC, p.bot_id ASC"
    )
    return _LEADERBOARD_PLAYERS.format(rank_order=rank_order, order=order_sql), params, None


def leaderboard_total(conn: Any, game: str, players: int | None) -> int:
    """Rows of a leaderboard view: rated non-revoked bots, or those with matches at ``players`` seats."""
    sql = f"SELECT {_TOTAL_ALL if players is None else _TOTAL_PLAYERS}"
    return int(conn.execute(sql, {"game": game, "players": players}).fetchone()[0])
