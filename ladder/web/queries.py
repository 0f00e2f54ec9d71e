"""Read queries of the public web site (DESIGN §7): one function per page section.

Every function takes an open ``psycopg_pool.ConnectionPool`` (autocommit
connections, see :mod:`ladder.db`) and returns frozen dataclasses, which the
JSON API serialises as they are and the HTML templates render. Nothing here
writes.

Where the rows come from, and the index each query is meant to use (the
bench, ``bench/bench_web.py``, prints the plans):

* leaderboard: ``ratings`` (index ``ratings_leaderboard``); with a player-count
  filter, ``bot_player_stats`` (migration 0002, kept by a trigger);
* bot page: ``rating_history_by_bot``, ``seats_by_bot`` and the seats' key;
* tournament page: ``matches_by_tournament`` (migration 0002);
* home page: ``matches_game_finished`` for the latest results.

Conventions: Elo in rating points; times in milliseconds (``*_ms``); a *win*
is a sole first place, a *draw* a shared first place, anything else a *loss*
(as in :func:`ladder.elo.seat_outcomes`); ``win_rate = wins / games``.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

import zstandard
from psycopg_pool import ConnectionPool

from games import registry
from games.api import GameError
from ladder import elo
from ladder.db import connection

MAX_PLOT_POINTS = 400
"""Rating-history points sent to a plot per game; longer histories are thinned evenly (ends kept)."""

VERDICTS: tuple[str, ...] = ("normal", "timeout", "illegal_action", "disconnect", "crash", "resigned", "no_show")
"""Per-seat verdicts of the referee (DESIGN §4), in display order."""

BT_TABLE = "ratings_bt"
"""Table of Bradley-Terry intervals written by the ratings-with-uncertainty work (not built yet).

Until it exists every ``bt_low``/``bt_high`` is ``None`` and pages show "—"; see :func:`bt_intervals`."""


class SortKey(str, Enum):
    """Leaderboard sort columns."""

    RANK = "rank"
    NAME = "name"
    ELO = "elo"
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
    SortKey.GAMES: "games",
    SortKey.WIN_RATE: "win_rate",
    SortKey.AVG_SCORE: "avg_score",
    SortKey.LAST_PLAYED: "last_played",
}

DEFAULT_ORDER: dict[SortKey, SortOrder] = {
    SortKey.RANK: SortOrder.ASC,
    SortKey.NAME: SortOrder.ASC,
    SortKey.ELO: SortOrder.DESC,
    SortKey.GAMES: SortOrder.DESC,
    SortKey.WIN_RATE: SortOrder.DESC,
    SortKey.AVG_SCORE: SortOrder.DESC,
    SortKey.LAST_PLAYED: SortOrder.DESC,
}
"""Direction a column sorts in when first clicked."""


# -- values --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameSummary:
    """A game as listed on the home page.

    Attributes:
        name / long_name: registry name and display name.
        min_players / max_players: seat counts the rulebook allows.
        player_counts: counts offered by the leaderboard's filter.
        registered: False for a game found in the database whose engine is not installed.
        rated_bots: bots with a rating in this game (revoked ones excluded).
        finished_matches: finished matches of this game.
    """

    name: str
    long_name: str
    min_players: int
    max_players: int
    player_counts: list[int]
    registered: bool
    rated_bots: int = 0
    finished_matches: int = 0


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One line of a leaderboard.

    Attributes:
        rank: position under the default order of the view (Elo, highest first;
            in a solo view, average score); ties broken by fewer games, then bot id.
        elo: the bot's Elo in this game (all player counts share one rating), or
            None if it has no rating row.
        bt_low / bt_high: Bradley-Terry 95 % interval in Elo points, or None
            until the ``ratings_bt`` table exists.
        games / wins / draws / losses: matches counted in this view.
        win_rate: wins / games (0 when no games).
        avg_score: mean game score (the game's own points) per match.
        last_played: finish time of the bot's last match in this view.
    """

    rank: int
    bot_id: int
    name: str
    version: str
    elo: float | None
    bt_low: float | None
    bt_high: float | None
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    avg_score: float
    last_played: datetime | None


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


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a match: the bot and, once finished, its result.

    Attributes:
        time_used_ms: server-measured thinking time of the whole match, milliseconds.
        decisions: decisions the seat took.
    """

    seat: int
    bot_id: int
    name: str
    version: str
    rank: int | None = None
    score: float | None = None
    verdict: str | None = None
    time_used_ms: int | None = None
    decisions: int | None = None


@dataclass(frozen=True, slots=True)
class MatchListItem:
    """A match as listed on a page (no seed, no replay).

    Attributes:
        players: seat count.
        finished_at: None unless finished.
    """

    id: int
    game: str
    game_string: str
    players: int
    tournament_id: int | None
    tournament: str | None
    status: str
    finished_at: datetime | None
    seats: list[SeatResult]


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """The bot's Elo after its ``n``-th rated match of a game (``n`` = 1 for the first)."""

    n: int
    match_id: int
    elo: float


@dataclass(frozen=True, slots=True)
class BotRating:
    """A bot's rating in one game, with its history (thinned to :data:`MAX_PLOT_POINTS`).

    Attributes:
        rank: position on the game's leaderboard (None for a revoked bot).
        history: Elo after each rated match; ``history_total`` is the unthinned length.
    """

    game: str
    long_name: str
    rank: int | None
    elo: float
    bt_low: float | None
    bt_high: float | None
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    avg_score: float
    last_played: datetime | None
    history_total: int
    history: list[RatingPoint]


@dataclass(frozen=True, slots=True)
class PlayerCountStats:
    """A bot's finished matches of one game at one seat count (``bot_player_stats``)."""

    game: str
    players: int
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    avg_score: float
    last_played: datetime | None


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """The bot's record against one opponent in one game, over finished matches they shared.

    Attributes:
        wins / draws / losses: matches where the bot ranked above / equal to / below the opponent.
        score: pairwise points per match, 0..1 (wins + draws / 2) / matches.
    """

    game: str
    opponent_id: int
    name: str
    version: str
    matches: int
    wins: int
    draws: int
    losses: int
    score: float


@dataclass(frozen=True, slots=True)
class BotPage:
    """Everything the bot page shows.

    Attributes:
        revoked: the bot's token was revoked (it no longer plays; kept for history).
        verdicts: count of seats per referee verdict (every verdict listed, zeros included).
        recent: most recent matches first (by match id); ``older_before`` is the
            ``before`` value of the next page, or None at the end.
    """

    id: int
    name: str
    version: str
    created_at: datetime
    revoked: bool
    ratings: list[BotRating]
    by_players: list[PlayerCountStats]
    verdicts: dict[str, int]
    head_to_head: list[HeadToHead]
    recent: list[MatchListItem]
    older_before: int | None


@dataclass(frozen=True, slots=True)
class StandingEntry:
    """One line of a tournament's standings (see :func:`ladder.queries.tournament_standings`).

    Attributes:
        points: pairwise points (1 per opponent ranked below, 1/2 per tie).
    """

    position: int
    bot_id: int
    name: str
    points: float
    matches: int
    wins: int
    draws: int
    losses: int
    avg_score: float
    avg_rank: float


@dataclass(frozen=True, slots=True)
class CrossCell:
    """Pairwise record of the row bot against the column bot: points out of ``games`` pairings."""

    points: float
    games: int


@dataclass(frozen=True, slots=True)
class TournamentListItem:
    """A tournament as listed on the home page.

    Attributes:
        state: ``open`` (taking entries), ``not_started`` (no match yet),
            ``in_progress`` (matches planned or running), ``finished`` (none left) or ``cancelled``.
    """

    id: int
    name: str
    game: str
    format: str
    created_at: datetime
    state: str
    total: int
    finished: int


@dataclass(frozen=True, slots=True)
class TournamentPage:
    """Everything the tournament page shows.

    Attributes:
        time_control: ``{base_ms, increment_ms, cap_ms, margin_ms}`` in milliseconds.
        counts: matches by status (planned, running, finished, aborted_no_show, failed).
        crosstable: ``crosstable[i][j]`` = standings bot i against standings bot j
            (None on the diagonal), in standings order.
        matches: one page of the tournament's matches, by match id.
    """

    id: int
    name: str
    game: str
    long_name: str
    format: str
    player_counts: list[int]
    rounds: int
    time_control: dict[str, int]
    game_options: dict[str, Any]
    status: str
    state: str
    created_at: datetime
    counts: dict[str, int]
    standings: list[StandingEntry]
    crosstable: list[list[CrossCell | None]]
    matches: list[MatchListItem]
    page: int
    per_page: int
    pages: int


@dataclass(frozen=True, slots=True)
class AttemptInfo:
    """One attempt of a match (worker names and error texts are not published)."""

    attempt: int
    status: str
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One replay step as listed beside the viewer.

    Attributes:
        i: step index, 0-based.
        player: seat, or -1 for a chance outcome.
        label: the action's short human label.
        time_ms: server-measured decision time (None for chance and fallback moves).
        fallback: the referee played it for a retired seat.
    """

    i: int
    player: int
    label: str
    time_ms: float | None
    fallback: bool


@dataclass(frozen=True, slots=True)
class MatchPage:
    """Everything the match page shows, replay steps included (no board states).

    Attributes:
        seed_commitment: sha256 hex of the seed, public from the start.
        seed: the seed, only once the match is finished (DESIGN §6).
        seed_verified: sha256(seed) equals the commitment (None before the seed is public).
        outcome: the rules' own result from the replay (scores, ranks, reason,
            tie_breaks, details), or None.
        steps: the replay's steps; empty without a replay.
        has_replay: a replay is stored.
    """

    id: int
    game: str
    long_name: str
    game_string: str
    players: int
    tournament_id: int | None
    tournament: str | None
    status: str
    attempt: int
    time_control: dict[str, int]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    seed_commitment: str
    seed: str | None
    seed_verified: bool | None
    seats: list[SeatResult]
    attempts: list[AttemptInfo]
    outcome: dict[str, Any] | None
    has_replay: bool
    replay_bytes: int | None
    steps: list[StepInfo] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class HomePage:
    """The home page: games, their latest results and top bots, and tournaments."""

    games: list[GameSummary]
    leaders: dict[str, list[LeaderboardEntry]]
    latest: dict[str, list[MatchListItem]]
    tournaments: list[TournamentListItem]


class NotFound(LookupError):
    """The requested bot, tournament, match, game or page does not exist."""


# -- games -----------------------------------------------------------------------------------


def _game_info(name: str) -> tuple[str, int, int, bool]:
    """(long_name, min_players, max_players, registered) of a game name."""
    try:
        info = registry.game_class(name).INFO
    except (GameError, KeyError, ImportError):
        return name, 1, 8, False
    return info.long_name, info.min_players, info.max_players, True


def player_counts(name: str) -> list[int]:
    """Player counts the leaderboard filter offers for a game (its rulebook range)."""
    _, lo, hi, _ = _game_info(name)
    return list(range(lo, hi + 1))


def known_games(pool: ConnectionPool) -> list[str]:
    """Registered games plus any game that has ratings in the database, sorted."""
    with connection(pool) as conn:
        rows = conn.execute(
            "WITH RECURSIVE g AS ("
            " (SELECT game FROM ratings ORDER BY game LIMIT 1)"
            " UNION ALL SELECT (SELECT r.game FROM ratings r WHERE r.game > g.game ORDER BY r.game LIMIT 1)"
            " FROM g WHERE g.game IS NOT NULL) SELECT game FROM g WHERE game IS NOT NULL"
        ).fetchall()
    return sorted(set(registry.game_names()) | {r[0] for r in rows})


def game_exists(pool: ConnectionPool, name: str) -> bool:
    """True when ``name`` is a registered game or has ratings in the database."""
    if name in registry.game_names():
        return True
    with connection(pool) as conn:
        return conn.execute("SELECT 1 FROM ratings WHERE game = %s LIMIT 1", (name,)).fetchone() is not None


# -- Bradley-Terry (not built yet) -----------------------------------------------------------


BT_LOW_COLUMNS = ("ci_low", "low", "elo_low", "lo")
BT_HIGH_COLUMNS = ("ci_high", "high", "elo_high", "hi")
"""Column names accepted for the interval's ends in ``ratings_bt`` (the first present is used)."""


class _BtProbe:
    """Caches whether ``ratings_bt`` exists and which columns hold the interval (re-checked every 60 s)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked = 0.0
        self._columns: tuple[str, str] | None = None

    def reset(self) -> None:
        """Forget the cached answer (tests; a deployment just waits 60 s)."""
        with self._lock:
            self._checked = 0.0

    def columns(self, conn: Any) -> tuple[str, str] | None:
        """``(low column, high column)`` of ``ratings_bt``, or None when it (or such columns) does not exist."""
        import time

        now = time.monotonic()
        with self._lock:
            if self._checked and now - self._checked < 60.0:
                return self._columns
        names = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                "AND table_schema = current_schema()",
                (BT_TABLE,),
            )
        }
        low = next((c for c in BT_LOW_COLUMNS if c in names), None)
        high = next((c for c in BT_HIGH_COLUMNS if c in names), None)
        found = (low, high) if low and high and {"bot_id", "game"} <= names else None
        with self._lock:
            self._columns, self._checked = found, now
        return found


_bt_probe = _BtProbe()


def bt_intervals(conn: Any, game: str, bot_ids: Sequence[int]) -> dict[int, tuple[float, float]]:
    """Bradley-Terry 95 % intervals ``{bot_id: (low, high)}`` in Elo points, or ``{}``.

    The ratings-with-uncertainty work (another issue) has not landed: until a
    ``ratings_bt`` table with ``bot_id``, ``game`` and interval columns (see
    :data:`BT_LOW_COLUMNS`, :data:`BT_HIGH_COLUMNS`) exists, this returns
    ``{}`` and every page shows "—". Nothing is ever estimated here.
    """
    if not bot_ids:
        return {}
    cols = _bt_probe.columns(conn)
    if cols is None:
        return {}
    low, high = cols
    try:
        with conn.transaction():
            rows = conn.execute(
                f"SELECT bot_id, {low}, {high} FROM {BT_TABLE} WHERE game = %s AND bot_id = ANY(%s::bigint[])",
                (game, list(bot_ids)),
            ).fetchall()
    except Exception:  # an unexpected layout: show "—" rather than a wrong number or an error page
        return {}
    return {int(b): (float(lo), float(hi)) for b, lo, hi in rows if lo is not None and hi is not None}


def bt_available(conn: Any) -> bool:
    """True once a ``ratings_bt`` table with interval columns exists."""
    return _bt_probe.columns(conn) is not None


# -- leaderboard ---------------------------------------------------------------------------


_RATING_COLUMNS = (
    "r.bot_id, b.name, b.version, r.elo, r.games, r.wins, r.draws, r.losses, "
    "CASE WHEN r.games > 0 THEN r.wins::float8 / r.games ELSE 0 END AS win_rate, "
    "CASE WHEN r.games > 0 THEN r.score_sum / r.games ELSE 0 END AS avg_score, r.last_played"
)

_TOTAL_ALL = (
    "(SELECT count(*) FROM ratings r2 JOIN bots b2 ON b2.id = r2.bot_id "
    "WHERE r2.game = %(game)s AND b2.revoked_at IS NULL)"
)
_TOTAL_PLAYERS = (
    "(SELECT count(*) FROM bot_player_stats p2 JOIN bots b2 ON b2.id = p2.bot_id "
    "WHERE p2.game = %(game)s AND p2.players = %(players)s AND p2.games > 0 AND b2.revoked_at IS NULL)"
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
    long_name, lo, hi, _ = _game_info(game)
    order = order or DEFAULT_ORDER[sort]
    with connection(pool) as conn:
        sql, params, rank_of = leaderboard_query(game, players, sort, order, page, per_page)
        rows = conn.execute(sql, params).fetchall()
        total = int(rows[0][12]) if rows else leaderboard_total(conn, game, players)
        bt = bt_intervals(conn, game, [r[0] for r in rows])
        has_bt = bt_available(conn)
    entries = []
    for i, (bid, name, ver, e, g, w, d, lo_, wr, avg, lp, rank, _) in enumerate(rows):
        low, high = bt.get(bid, (None, None))
        entries.append(
            LeaderboardEntry(
                rank=int(rank) if rank is not None else rank_of(i, total), bot_id=int(bid), name=name, version=ver,
                elo=None if e is None else float(e), bt_low=low, bt_high=high, games=int(g), wins=int(w),
                draws=int(d), losses=int(lo_), win_rate=float(wr), avg_score=float(avg), last_played=lp,
            )
        )
    return LeaderboardPage(
        game=game, long_name=long_name, players=players, player_counts=list(range(lo, hi + 1)), sort=sort,
        order=order, page=page, per_page=per_page, total=total, pages=max(1, -(-total // per_page)),
        bt_available=has_bt, rows=entries,
    )


def leaderboard_query(
    game: str, players: int | None, sort: SortKey, order: SortOrder, page: int, per_page: int
) -> tuple[str, dict[str, Any], Any]:
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
    if players is None:
        sql = "SELECT count(*) FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = %s AND b.revoked_at IS NULL"
        return int(conn.execute(sql, (game,)).fetchone()[0])
    sql = (
        "SELECT count(*) FROM bot_player_stats p JOIN bots b ON b.id = p.bot_id "
        "WHERE p.game = %s AND p.players = %s AND p.games > 0 AND b.revoked_at IS NULL"
    )
    return int(conn.execute(sql, (game, players)).fetchone()[0])


# -- matches -----------------------------------------------------------------------------------


def _seats_of(conn: Any, match_ids: Sequence[int]) -> dict[int, list[SeatResult]]:
    out: dict[int, list[SeatResult]] = defaultdict(list)
    if not match_ids:
        return out
    rows = conn.execute(
        "SELECT s.match_id, s.seat, s.bot_id, b.name, b.version, s.rank, s.score, s.verdict, s.time_used_ms, "
        "s.decisions FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.match_id = ANY(%s::bigint[]) "
        "ORDER BY s.match_id, s.seat",
        (list(match_ids),),
    ).fetchall()
    for mid, seat, bid, name, ver, rank, score, verdict, used, dec in rows:
        out[mid].append(SeatResult(seat, bid, name, ver, rank, score, verdict, used, dec))
    return out


_MATCH_COLUMNS = (
    "m.id, m.game, m.game_string, m.tournament_id, t.name, m.status, m.finished_at"
)


def _match_items(conn: Any, rows: Sequence[tuple[Any, ...]]) -> list[MatchListItem]:
    seats = _seats_of(conn, [r[0] for r in rows])
    return [
        MatchListItem(
            id=mid, game=g, game_string=gs, players=len(seats.get(mid, [])), tournament_id=tid,
            tournament=tname, status=st, finished_at=fin, seats=seats.get(mid, []),
        )
        for mid, g, gs, tid, tname, st, fin in rows
    ]


def latest_results(pool: ConnectionPool, game: str, limit: int = 10) -> list[MatchListItem]:
    """The most recently finished matches of ``game`` (index ``matches_game_finished``)."""
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE m.game = %s AND m.finished_at IS NOT NULL ORDER BY m.finished_at DESC LIMIT %s",
            (game, limit),
        ).fetchall()
        return _match_items(conn, rows)


# -- home ------------------------------------------------------------------------------------------


def _tournament_state(status: str, total: int, open_: int) -> str:
    if status in ("cancelled", "open"):  # "open": taking entries (ladder.entries)
        return status
    if total == 0:
        return "not_started"
    return "in_progress" if open_ else "finished"


def tournaments_list(pool: ConnectionPool, limit: int = 20) -> list[TournamentListItem]:
    """The newest tournaments with their progress (index ``matches_by_tournament``)."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT t.id, t.name, t.game, t.format, t.created_at, t.status, c.total, c.finished, c.open "
            "FROM (SELECT * FROM tournaments ORDER BY id DESC LIMIT %s) t "
            "CROSS JOIN LATERAL (SELECT count(*) AS total, count(*) FILTER (WHERE m.status = 'finished') AS finished, "
            "count(*) FILTER (WHERE m.status IN ('planned', 'running')) AS open "
            "FROM matches m WHERE m.tournament_id = t.id) c ORDER BY t.id DESC",
            (limit,),
        ).fetchall()
    return [
        TournamentListItem(
            id=tid, name=name, game=game, format=fmt, created_at=created,
            state=_tournament_state(status, int(total), int(open_)), total=int(total), finished=int(fin),
        )
        for tid, name, game, fmt, created, status, total, fin, open_ in rows
    ]


def games_summary(pool: ConnectionPool) -> list[GameSummary]:
    """Every known game with its rated (non-revoked) bots and finished matches."""
    names = known_games(pool)
    with connection(pool) as conn:
        rated = dict(
            conn.execute(
                "SELECT r.game, count(*) FROM ratings r JOIN bots b ON b.id = r.bot_id "
                "WHERE b.revoked_at IS NULL GROUP BY r.game"
            ).fetchall()
        )
        # Each finished match adds one row-game per seat at its seat count, so games / players counts matches.
        finished = dict(
            conn.execute(
                "SELECT game, sum(n)::bigint FROM (SELECT game, sum(games) / players AS n FROM bot_player_stats "
                "GROUP BY game, players) t GROUP BY game"
            ).fetchall()
        )
    games = []
    for g in names:
        long_name, lo, hi, reg = _game_info(g)
        games.append(
            GameSummary(g, long_name, lo, hi, list(range(lo, hi + 1)), reg, int(rated.get(g, 0)),
                        int(finished.get(g, 0)))
        )
    return games


def home_page(pool: ConnectionPool, *, latest: int = 8, leaders: int = 5) -> HomePage:
    """The home page: every known game with counts, its leaders and latest results; tournaments."""
    games = games_summary(pool)
    return HomePage(
        games=games,
        leaders={g.name: leaderboard_page(pool, g.name, per_page=leaders).rows for g in games if g.rated_bots},
        latest={g.name: latest_results(pool, g.name, latest) for g in games if g.finished_matches},
        tournaments=tournaments_list(pool),
    )


# -- bot page ------------------------------------------------------------------------------------


def _thin(points: list[RatingPoint], most: int) -> list[RatingPoint]:
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


BOT_RATINGS_SQL = (
    "SELECT r.game, r.elo, r.games, r.wins, r.draws, r.losses, r.score_sum, r.last_played, "
    "(SELECT count(*) + 1 FROM ratings o JOIN bots ob ON ob.id = o.bot_id WHERE o.game = r.game "
    " AND ob.revoked_at IS NULL AND (o.elo > r.elo OR (o.elo = r.elo AND (o.games < r.games "
    " OR (o.games = r.games AND o.bot_id < r.bot_id))))) "
    "FROM ratings r WHERE r.bot_id = %s ORDER BY r.game"
)
"""A bot's rating rows with its leaderboard rank (index ``ratings_leaderboard`` for the rank count)."""
BOT_HISTORY_SQL = "SELECT game, match_id, elo_after FROM rating_history WHERE bot_id = %s ORDER BY game, result_seq"
"""A bot's Elo after each rated match (index ``rating_history_by_bot``)."""
BOT_PLAYER_COUNTS_SQL = (
    "SELECT game, players, games, wins, draws, losses, score_sum, last_played FROM bot_player_stats "
    "WHERE bot_id = %s ORDER BY game, players"
)
"""A bot's matches per game and seat count (index ``bot_player_stats_by_bot``)."""
BOT_VERDICTS_SQL = "SELECT verdict, count(*) FROM seats WHERE bot_id = %s AND verdict IS NOT NULL GROUP BY verdict"
"""Seats per verdict (index ``seats_by_bot``)."""
BOT_HEAD_TO_HEAD_SQL = (
    "SELECT m.game, o.bot_id, b.name, b.version, count(*), "
    "count(*) FILTER (WHERE me.rank < o.rank), count(*) FILTER (WHERE me.rank = o.rank), "
    "count(*) FILTER (WHERE me.rank > o.rank) "
    "FROM seats me JOIN matches m ON m.id = me.match_id "
    "JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id "
    "JOIN bots b ON b.id = o.bot_id "
    "WHERE me.bot_id = %s AND me.rank IS NOT NULL AND o.rank IS NOT NULL "
    "GROUP BY m.game, o.bot_id, b.name, b.version ORDER BY m.game, count(*) DESC, o.bot_id"
)
"""Head-to-head per game and opponent (``seats_by_bot``, then the seats' and matches' keys)."""
BOT_RECENT_SQL = "SELECT match_id FROM seats WHERE bot_id = %s AND match_id < %s ORDER BY match_id DESC LIMIT %s"
"""Ids of a bot's matches, newest first (index ``seats_by_bot``)."""
MATCHES_BY_ID_SQL = (
    f"SELECT {_MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
    "WHERE m.id = ANY(%s::bigint[]) ORDER BY m.id DESC"
)


def bot_page(pool: ConnectionPool, bot_id: int, *, before: int | None = None, recent: int = 20) -> BotPage:
    """The bot page: ratings with history per game, verdict counts, head-to-head, recent matches.

    Args:
        pool: ladder connection pool.
        bot_id: the bot.
        before: list recent matches with ids below this (the "older" link), or the newest.
        recent: matches per page of the recent list.

    Raises:
        NotFound: no such bot.
    """
    with connection(pool) as conn:
        bot = conn.execute(
            "SELECT id, name, version, created_at, revoked_at FROM bots WHERE id = %s", (bot_id,)
        ).fetchone()
        if bot is None:
            raise NotFound(f"no bot with id {bot_id}")
        revoked = bot[4] is not None
        rating_rows = conn.execute(BOT_RATINGS_SQL, (bot_id,)).fetchall()
        history: dict[str, list[RatingPoint]] = defaultdict(list)
        for game, mid, after in conn.execute(BOT_HISTORY_SQL, (bot_id,)):
            pts = history[game]
            pts.append(RatingPoint(len(pts) + 1, mid, after))
        ratings = []
        for game, e, g, w, d, lo, ss, lp, rank in rating_rows:
            bt = bt_intervals(conn, game, [bot_id]).get(bot_id, (None, None))
            pts = history.get(game, [])
            ratings.append(
                BotRating(
                    game=game, long_name=_game_info(game)[0], rank=None if revoked else int(rank), elo=e,
                    bt_low=bt[0], bt_high=bt[1], games=g, wins=w, draws=d, losses=lo,
                    win_rate=(w / g) if g else 0.0, avg_score=(ss / g) if g else 0.0, last_played=lp,
                    history_total=len(pts), history=_thin(pts, MAX_PLOT_POINTS),
                )
            )
        by_players = [
            PlayerCountStats(game, n, g, w, d, lo, (w / g) if g else 0.0, (ss / g) if g else 0.0, lp)
            for game, n, g, w, d, lo, ss, lp in conn.execute(BOT_PLAYER_COUNTS_SQL, (bot_id,))
        ]
        verdicts = {v: 0 for v in VERDICTS}
        for verdict, n in conn.execute(BOT_VERDICTS_SQL, (bot_id,)):
            verdicts[verdict] = int(n)
        h2h = [
            HeadToHead(game, oid, name, ver, int(n), int(w), int(d), int(lo), (w + d / 2) / n)
            for game, oid, name, ver, n, w, d, lo in conn.execute(BOT_HEAD_TO_HEAD_SQL, (bot_id,))
        ]
        ids = [
            r[0]
            for r in conn.execute(BOT_RECENT_SQL, (bot_id, before if before is not None else 2**63 - 1, recent + 1))
        ]
        more = len(ids) > recent
        ids = ids[:recent]
        rows = conn.execute(MATCHES_BY_ID_SQL, (ids,)).fetchall()
        matches = _match_items(conn, rows)
    return BotPage(
        id=bot[0], name=bot[1], version=bot[2], created_at=bot[3], revoked=revoked, ratings=ratings,
        by_players=by_players, verdicts=verdicts, head_to_head=h2h, recent=matches, older_before=ids[-1] if more and ids else None,
    )


# -- tournament page --------------------------------------------------------------------------------


TOURNAMENT_BOTS_SQL = (
    "SELECT tb.bot_id, b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
    "WHERE tb.tournament_id = %s ORDER BY tb.position"
)
TOURNAMENT_SEATS_SQL = (
    "SELECT s.match_id, s.bot_id, s.rank, s.score FROM seats s "
    "WHERE s.match_id = ANY(ARRAY(SELECT id FROM matches WHERE tournament_id = %s AND status = 'finished')) "
    "AND s.rank IS NOT NULL ORDER BY s.match_id, s.seat"
)
"""Seats of a tournament's finished matches: the match ids from ``matches_by_tournament``, then the
seats by their key (a join would have the planner scan every seat of the ladder)."""


def standings_and_crosstable(
    bots: Sequence[tuple[int, str]], seat_rows: Sequence[tuple[int, int, int, float | None]]
) -> tuple[list[StandingEntry], list[list[CrossCell | None]]]:
    """Standings and crosstable from the seats of finished matches, in one pass.

    Same rules as :func:`ladder.queries.tournament_standings` (pairwise points:
    1 per opponent ranked below, 1/2 per tie; order by points, then wins, then
    bot id; every registered bot listed), which a test checks.

    Args:
        bots: ``(bot_id, name)`` of the tournament, in position order.
        seat_rows: ``(match_id, bot_id, rank, score)`` ordered by match.
    """
    names = dict(bots)
    ids = [b for b, _ in bots]
    index = {b: i for i, b in enumerate(ids)}
    for _, bid, _, _ in seat_rows:  # a seated bot missing from tournament_bots still counts
        if bid not in index:
            index[bid] = len(ids)
            ids.append(bid)
    n = len(ids)
    points = [0.0] * n
    played, wins, draws, losses, rank_sum = [0] * n, [0] * n, [0] * n, [0] * n, [0] * n
    score_sum = [0.0] * n
    pair_points = [[0.0] * n for _ in range(n)]
    pair_games = [[0] * n for _ in range(n)]
    by_match: dict[int, list[tuple[int, int, float | None]]] = defaultdict(list)
    for mid, bid, rank, score in seat_rows:
        by_match[mid].append((index[bid], rank, score))
    for seats in by_match.values():
        firsts = sum(1 for _, r, _ in seats if r == 1)  # as ladder.elo.seat_outcomes
        for i, rank, score in seats:
            played[i] += 1
            if rank != 1:
                losses[i] += 1
            elif firsts == 1:
                wins[i] += 1
            else:
                draws[i] += 1
            score_sum[i] += score or 0.0
            rank_sum[i] += rank
            row_p, row_g = pair_points[i], pair_games[i]
            for j, other_rank, _ in seats:
                if j != i:
                    p = elo.pair_score(rank, other_rank)
                    points[i] += p
                    row_p[j] += p
                    row_g[j] += 1
    order = sorted(range(n), key=lambda i: (-points[i], -wins[i], ids[i]))
    standings = [
        StandingEntry(
            position=pos, bot_id=ids[i], name=names.get(ids[i], str(ids[i])), points=points[i],
            matches=played[i], wins=wins[i], draws=draws[i], losses=losses[i],
            avg_score=(score_sum[i] / played[i]) if played[i] else 0.0,
            avg_rank=(rank_sum[i] / played[i]) if played[i] else 0.0,
        )
        for pos, i in enumerate(order, start=1)
    ]
    cross: list[list[CrossCell | None]] = [
        [None if a == b else CrossCell(pair_points[a][b], pair_games[a][b]) for b in order] for a in order
    ]
    return standings, cross


def tournament_page(pool: ConnectionPool, tournament_id: int, *, page: int = 1, per_page: int = 50) -> TournamentPage:
    """The tournament page: settings, progress, standings, crosstable, one page of matches.

    Raises:
        NotFound: no such tournament.
        ValueError: ``page`` < 1 or ``per_page`` out of 1..500.
    """
    if page < 1 or not 1 <= per_page <= 500:
        raise ValueError("page must be >= 1 and per_page in 1..500")
    with connection(pool) as conn:
        t = conn.execute(
            "SELECT id, name, game, format, player_counts, rounds, time_control, game_options, status, created_at "
            "FROM tournaments WHERE id = %s",
            (tournament_id,),
        ).fetchone()
        if t is None:
            raise NotFound(f"no tournament with id {tournament_id}")
        counts = {s: 0 for s in ("planned", "running", "finished", "aborted_no_show", "failed")}
        for status, n in conn.execute(
            "SELECT status, count(*) FROM matches WHERE tournament_id = %s GROUP BY status", (tournament_id,)
        ):
            counts[status] = int(n)
        bots = conn.execute(TOURNAMENT_BOTS_SQL, (tournament_id,)).fetchall()
        seat_rows = conn.execute(TOURNAMENT_SEATS_SQL, (tournament_id,)).fetchall()
        rows = conn.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE m.tournament_id = %s ORDER BY m.id LIMIT %s OFFSET %s",
            (tournament_id, per_page, (page - 1) * per_page),
        ).fetchall()
        matches = _match_items(conn, rows)
    standings, cross = standings_and_crosstable(bots, seat_rows)
    total = sum(counts.values())
    open_ = counts["planned"] + counts["running"]
    return TournamentPage(
        id=t[0], name=t[1], game=t[2], long_name=_game_info(t[2])[0], format=t[3], player_counts=list(t[4]),
        rounds=t[5], time_control=dict(t[6]), game_options=dict(t[7]), status=t[8],
        state=_tournament_state(t[8], total, open_), created_at=t[9], counts=counts, standings=standings,
        crosstable=cross, matches=matches, page=page, per_page=per_page, pages=max(1, -(-total // per_page)),
    )


# -- match page ---------------------------------------------------------------------------------------


class ReplayCache:
    """A small thread-safe LRU of decoded replays, by match id.

    A replay is written once, in the transaction that finishes its match
    (``ladder.matches.record_result``), and never changed, so caching the
    decoded JSON is safe. Only replays are cached, never match rows.
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[int, tuple[dict[str, Any], str, int]] = OrderedDict()

    def get(self, pool: ConnectionPool, match_id: int) -> tuple[dict[str, Any], str, int] | None:
        """``(replay dict, replay JSON text, raw bytes)`` of a match, or None when it has no replay."""
        with self._lock:
            hit = self._items.get(match_id)
            if hit is not None:
                self._items.move_to_end(match_id)
                return hit
        with connection(pool) as conn:
            row = conn.execute("SELECT data, raw_bytes FROM replays WHERE match_id = %s", (match_id,)).fetchone()
        if row is None:
            return None
        text = zstandard.ZstdDecompressor().decompress(bytes(row[0])).decode("utf-8")
        item = (json.loads(text), text, int(row[1]))
        with self._lock:
            self._items[match_id] = item
            self._items.move_to_end(match_id)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return item


def match_page(pool: ConnectionPool, match_id: int, replays: ReplayCache) -> MatchPage:
    """The match page: seats and results, seed, attempts, outcome and the replay's step list.

    Raises:
        NotFound: no such match.
    """
    import hashlib

    with connection(pool) as conn:
        m = conn.execute(
            "SELECT m.id, m.game, m.game_string, m.tournament_id, t.name, m.status, m.attempt, m.time_control, "
            "m.created_at, m.started_at, m.finished_at, m.seed_commitment, m.seed "
            "FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id WHERE m.id = %s",
            (match_id,),
        ).fetchone()
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        seats = _seats_of(conn, [match_id]).get(match_id, [])
        attempts = [
            AttemptInfo(a, s, st, en)
            for a, s, st, en in conn.execute(
                "SELECT attempt, status, started_at, ended_at FROM match_attempts WHERE match_id = %s ORDER BY attempt",
                (match_id,),
            )
        ]
    (mid, game, gs, tid, tname, status, attempt, tc, created, started, finished, commitment, seed) = m
    if status != "finished":
        seed = None  # secret until the match ends (DESIGN §6)
    verified = None if seed is None else hashlib.sha256(seed.encode("ascii")).hexdigest() == commitment
    cached = replays.get(pool, match_id) if status == "finished" else None
    replay, raw = (cached[0], cached[2]) if cached else (None, None)
    steps: list[StepInfo] = []
    outcome = None
    if replay is not None:
        for i, st in enumerate(replay.get("steps", [])):
            steps.append(
                StepInfo(
                    i=i, player=int(st.get("player", -1)), label=str(st.get("label", "")),
                    time_ms=st.get("time_ms"), fallback=bool(st.get("fallback", False)),
                )
            )
        outcome = replay.get("outcome")
    return MatchPage(
        id=mid, game=game, long_name=_game_info(game)[0], game_string=gs, players=len(seats), tournament_id=tid,
        tournament=tname, status=status, attempt=attempt, time_control=dict(tc), created_at=created,
        started_at=started, finished_at=finished, seed_commitment=commitment, seed=seed, seed_verified=verified,
        seats=seats, attempts=attempts, outcome=outcome, has_replay=replay is not None, replay_bytes=raw,
        steps=steps,
    )
