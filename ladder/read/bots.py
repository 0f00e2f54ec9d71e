"""The bot page: ratings with their history, leagues, per-seat-count statistics, verdicts, head-to-head, recent
matches.

Indexes: ``rating_history_by_bot``, ``seats_by_bot``, ``bot_player_stats_by_bot``
(migration 0002), the ``bot_head_to_head`` table's key (migration 0017); the benches (``bench/bench_web.py``,
``bench/bench_ten_million.py``) print the plans.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.leagues import BotLeague, bot_leagues
from ladder.read.common import NotFound, game_info
from ladder.read.leaderboards import NO_BT
from ladder.read.matches import MATCH_COLUMNS, SEAT_COLUMNS, MatchListItem, match_items, seat_map

MAX_PLOT_POINTS = 400
"""Rating-history points sent to a plot per game; longer histories are thinned evenly (ends kept). Even: the
server's thinning (:data:`BOT_HISTORY_SQL`) relies on ``MAX_PLOT_POINTS - 1`` being odd."""


VERDICTS: tuple[str, ...] = ("normal", "timeout", "illegal_action", "disconnect", "crash", "resigned", "no_show")
"""Per-seat verdicts of the referee (docs/architecture.md "Verdicts"), in display order."""


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
        elo: online Elo (a running estimate, no interval).
        bt_elo / bt_low / bt_high / bt_rank: the Bradley-Terry estimate, its bootstrap
            95 % interval (Elo points) and rank; None outside the latest fit.
        history: Elo after each rated match; ``history_total`` is the unthinned length.
    """

    game: str
    long_name: str
    rank: int | None
    elo: float
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
        leagues: its league in each game it is rated in (docs/ladder.md "Leagues"): the gates
            passed, with date and evidence, and the next gate with the evidence so far; empty
            for a house bot.
        head_to_head / opponents: the record against each opponent by game, most-played first (the
            ``opponents`` first of each game when :func:`bot_page` was asked for so many), and how many
            opponents it met in each game.
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
    leagues: list[BotLeague]
    opponents: dict[str, int]


_ABOVE = ("o.game = r.game AND (o.elo > r.elo OR (o.elo = r.elo AND (o.games < r.games "
          "OR (o.games = r.games AND o.bot_id < r.bot_id))))")

BOT_RATINGS_SQL = (
    "SELECT r.game, r.elo, r.games, r.wins, r.draws, r.losses, r.score_sum, r.last_played, "
    f"(SELECT count(*) + 1 FROM ratings o WHERE {_ABOVE}) "
    f"- (SELECT count(*) FROM ratings o JOIN bots ob ON ob.id = o.bot_id WHERE ob.revoked_at IS NOT NULL AND {_ABOVE}) "
    "FROM ratings r WHERE r.bot_id = %s ORDER BY r.game"
)
"""A bot's rating rows with its leaderboard rank: one plus the ratings above it (index ``ratings_leaderboard``)
less the revoked bots' among them (index ``bots_revoked``, migration 0020)."""


BOT_HISTORY_SQL = (
    "SELECT h.game, h.n, h.match_id, h.elo_after, h.total FROM ("
    "SELECT game, match_id, elo_after, row_number() OVER (PARTITION BY game ORDER BY result_seq) AS n, "
    "count(*) OVER (PARTITION BY game) AS total FROM rating_history WHERE bot_id = %(bot)s) h "
    "WHERE h.total <= %(most)s OR 2 * ((2 * (h.n - 1) * (%(most)s - 1) + %(most)s - 2) / (2 * (h.total - 1))) "
    "* (h.total - 1) > 2 * (h.n - 1) * (%(most)s - 1) - (%(most)s - 1) ORDER BY h.game, h.n"
)
"""A bot's Elo after its ``n``-th rated match of each game, and the number of them, thinned by the server to
``%(most)s`` points per game evenly (index ``rating_history_by_bot``): the points at the indexes
``j = round(i * S / D)``, ``i = 0 .. D``, with ``S = total - 1`` and ``D = most - 1``, both ends kept. At 10^7
matches a busy bot has tens of thousands of them, and reading them all took most of its page's time
(docs/benchmarks.md). In integers: ``j`` is kept when the one ``i`` that can round to it, the largest with
``2 i S <= 2 j D + D - 1``, has ``2 i S > 2 j D - D`` (``D`` is odd, so ``i S / D`` is never half way; ``S > D``
when thinning, so at most one ``i`` rounds to ``j``)."""


BOT_PLAYER_COUNTS_SQL = (
    "SELECT game, players, games, wins, draws, losses, score_sum, last_played FROM bot_player_stats "
    "WHERE bot_id = %s ORDER BY game, players"
)
"""A bot's matches per game and seat count (index ``bot_player_stats_by_bot``)."""


BOT_VERDICTS_SQL = "SELECT verdict, count(*) FROM seats WHERE bot_id = %s AND verdict IS NOT NULL GROUP BY verdict"
"""Seats per verdict (index ``seats_by_bot``)."""


BOT_HEAD_TO_HEAD_SQL = (
    "SELECT x.game, x.opponent_id, b.name, b.version, x.matches, x.wins, x.draws, x.losses, x.opponents FROM ("
    "SELECT h.*, row_number() OVER (PARTITION BY h.game ORDER BY h.matches DESC, h.opponent_id) AS k, "
    "count(*) OVER (PARTITION BY h.game) AS opponents FROM bot_head_to_head h WHERE h.bot_id = %(bot)s) x "
    "CROSS JOIN LATERAL (SELECT name, version FROM bots WHERE id = x.opponent_id LIMIT 1) b "  # a look-up each
    "WHERE %(most)s::int IS NULL OR x.k <= %(most)s ORDER BY x.game, x.k"
)
"""Head-to-head per game and opponent, most-played first, the ``%(most)s`` first of each game (all when NULL),
with the opponents of each game (``bot_head_to_head``, migration 0017: one row per opponent, not two index
entries per match of the bot)."""


BOT_BT_SQL = "SELECT game, elo, elo_low, elo_high, rank FROM ratings_bt WHERE bot_id = %s"
"""The bot's cached Bradley-Terry estimate per game (as ``leaderboards.bt_intervals``, every game at once)."""


BOT_RECENT_SQL = "SELECT match_id FROM seats WHERE bot_id = %s AND match_id < %s ORDER BY match_id DESC LIMIT %s"
"""Ids of a bot's matches, newest first (index ``seats_by_bot``)."""


BOT_RECENT_MATCHES_SQL = (
    f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
    f"WHERE m.id IN ({BOT_RECENT_SQL}) ORDER BY m.id DESC"
)
"""The rows of :data:`BOT_RECENT_SQL`'s matches, newest first (same parameters)."""

BOT_RECENT_SEATS_SQL = (
    f"SELECT {SEAT_COLUMNS} FROM seats s JOIN bots b ON b.id = s.bot_id "
    f"WHERE s.match_id IN ({BOT_RECENT_SQL}) ORDER BY s.match_id, s.seat"
)
"""The seats of :data:`BOT_RECENT_SQL`'s matches (same parameters), for :func:`seat_map`."""

MATCHES_BY_ID_SQL = (
    f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
    "WHERE m.id = ANY(%s::bigint[]) ORDER BY m.id DESC"
)


def bot_page(pool: ConnectionPool, bot_id: int, *, before: int | None = None, recent: int = 20,
             opponents: int | None = None) -> BotPage:
    """The bot page: ratings with history per game, verdict counts, head-to-head, recent matches.

    Args:
        pool: ladder connection pool.
        bot_id: the bot.
        before: list recent matches with ids below this (the "older" link), or the newest.
        recent: matches per page of the recent list.
        opponents: head-to-head rows per game, the most-played first (None: every opponent).

    Raises:
        NotFound: no such bot.
    """
    with connection(pool) as conn:
        # One round trip for every independent query (psycopg pipeline mode): on a loaded
        # machine each round trip waits for the server process to be scheduled (docs/benchmarks.md).
        with conn.pipeline():
            cur_bot = conn.execute(
                "SELECT id, name, version, created_at, revoked_at FROM bots WHERE id = %s", (bot_id,))
            cur_ratings = conn.execute(BOT_RATINGS_SQL, (bot_id,))
            cur_history = conn.execute(BOT_HISTORY_SQL, {"bot": bot_id, "most": MAX_PLOT_POINTS})
            cur_bt = conn.execute(BOT_BT_SQL, (bot_id,))
            cur_counts = conn.execute(BOT_PLAYER_COUNTS_SQL, (bot_id,))
            cur_verdicts = conn.execute(BOT_VERDICTS_SQL, (bot_id,))
            cur_h2h = conn.execute(BOT_HEAD_TO_HEAD_SQL, {"bot": bot_id, "most": opponents})
            page_of = (bot_id, before if before is not None else 2**63 - 1, recent + 1)
            cur_recent = conn.execute(BOT_RECENT_MATCHES_SQL, page_of)
            cur_seats = conn.execute(BOT_RECENT_SEATS_SQL, page_of)
            bot = cur_bot.fetchone()
            rating_rows = cur_ratings.fetchall()
            history_rows = cur_history.fetchall()
            bt_rows = {g: (float(e), float(lo), float(hi), int(rk)) for g, e, lo, hi, rk in cur_bt.fetchall()}
            count_rows = cur_counts.fetchall()
            verdict_rows = cur_verdicts.fetchall()
            h2h_rows = cur_h2h.fetchall()
            recent_rows = cur_recent.fetchall()
            seats = seat_map(cur_seats.fetchall())
        if bot is None:
            raise NotFound(f"no bot with id {bot_id}")
        revoked = bot[4] is not None
        history: dict[str, list[RatingPoint]] = defaultdict(list)
        history_total: dict[str, int] = {}
        for game, n, mid, after, total in history_rows:
            history[game].append(RatingPoint(int(n), mid, after))
            history_total[game] = int(total)
        ratings = []
        for game, e, g, w, d, lo, ss, lp, rank in rating_rows:
            bt = bt_rows.get(game, NO_BT)
            pts = history.get(game, [])
            ratings.append(
                BotRating(
                    game=game, long_name=game_info(game)[0], rank=None if revoked else int(rank), elo=e,
                    bt_elo=bt[0], bt_low=bt[1], bt_high=bt[2], bt_rank=bt[3], games=g, wins=w, draws=d, losses=lo,
                    win_rate=(w / g) if g else 0.0, avg_score=(ss / g) if g else 0.0, last_played=lp,
                    history_total=history_total.get(game, 0), history=pts,
                )
            )
        by_players = [
            PlayerCountStats(game, n, g, w, d, lo, (w / g) if g else 0.0, (ss / g) if g else 0.0, lp)
            for game, n, g, w, d, lo, ss, lp in count_rows
        ]
        verdicts = {v: 0 for v in VERDICTS}
        for verdict, n in verdict_rows:
            verdicts[verdict] = int(n)
        h2h = [
            HeadToHead(game, oid, name, ver, int(n), int(w), int(d), int(lo), (w + d / 2) / n)
            for game, oid, name, ver, n, w, d, lo, _ in h2h_rows
        ]
        met = {str(row[0]): int(row[8]) for row in h2h_rows}
        leagues = bot_leagues(conn, bot_id, [r.game for r in ratings])
        more = len(recent_rows) > recent
        matches = match_items(conn, recent_rows[:recent], seats)
        ids = [m.id for m in matches]
    return BotPage(
        id=bot[0], name=bot[1], version=bot[2], created_at=bot[3], revoked=revoked, ratings=ratings,
        by_players=by_players, verdicts=verdicts, head_to_head=h2h, recent=matches,
        older_before=ids[-1] if more and ids else None, leagues=leagues, opponents=met,
    )
