"""The home page: every known game with its counts, leaders and latest results; the newest tournaments."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.read.common import game_info, known_games
from ladder.read.leaderboards import LeaderboardEntry, leaderboard_page
from ladder.read.matches import MatchListItem, latest_results
from ladder.read.tournaments import TournamentListItem, tournaments_list


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
class HomePage:
    """The home page: games, their latest results and top bots, and tournaments."""

    games: list[GameSummary]
    leaders: dict[str, list[LeaderboardEntry]]
    latest: dict[str, list[MatchListItem]]
    tournaments: list[TournamentListItem]


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
        long_name, lo, hi, reg = game_info(g)
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
