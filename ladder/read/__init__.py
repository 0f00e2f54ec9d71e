"""The read model of the ladder: one implementation of every page, table and export.

Shared by the web site (``web/``: routing and templates only) and the
command line (``parterre leaderboard``, ``matches``, ``replay export``).
Every function takes an open ``psycopg_pool.ConnectionPool`` (autocommit
connections, :mod:`ladder.db`) and returns frozen dataclasses, which the JSON
API serialises as they are and the templates render. Nothing here writes.

Modules:
    :mod:`~ladder.read.common`        games, ``NotFound``, replay decoding
    :mod:`~ladder.read.leaderboards`  ``leaderboard_page`` (web), ``leaderboard`` (CLI), Bradley-Terry intervals
    :mod:`~ladder.read.matches`       ``recent_matches``, ``latest_results``: matches as listed
    :mod:`~ladder.read.standings`     ``tournament_standings``, ``standings_and_crosstable``
    :mod:`~ladder.read.tournaments`   ``tournaments_list``, ``tournament_page``
    :mod:`~ladder.read.bots`          ``bot_page``
    :mod:`~ladder.read.replays`       ``match_page``, ``ReplayCache``, ``export_replay``, ``twins_open``,
                                      ``replay_json``, ``replay_file_page`` (a replay file, no database),
                                      ``example_replays`` (the rules pages' replays)
    :mod:`~ladder.read.home`          ``games_summary``, ``home_page``

Conventions: Elo in rating points; times in milliseconds (``*_ms``); a *win*
is a sole first place, a *draw* a shared first place, anything else a *loss*
(:func:`ladder.elo.seat_outcomes`); ``win_rate = wins / games``.
"""

from __future__ import annotations

from ladder.read.bots import (
    BOT_HEAD_TO_HEAD_SQL,
    BOT_HISTORY_SQL,
    BOT_PLAYER_COUNTS_SQL,
    BOT_RATINGS_SQL,
    BOT_RECENT_SQL,
    BOT_VERDICTS_SQL,
    MATCHES_BY_ID_SQL,
    MAX_PLOT_POINTS,
    VERDICTS,
    BotPage,
    BotRating,
    HeadToHead,
    PlayerCountStats,
    RatingPoint,
    bot_page,
)
from ladder.read.common import (
    NotFound,
    decompress_replay,
    game_exists,
    game_info,
    known_games,
    player_counts,
)
from ladder.read.home import (
    GameSummary,
    HomePage,
    games_summary,
    home_page,
)
from ladder.read.leaderboards import (
    DEFAULT_ORDER,
    LeaderboardEntry,
    LeaderboardPage,
    SortKey,
    SortOrder,
    bt_available,
    bt_intervals,
    leaderboard,
    leaderboard_page,
    leaderboard_query,
    leaderboard_total,
)
from ladder.read.matches import (
    MATCH_COLUMNS,
    MatchListItem,
    SeatResult,
    latest_results,
    match_items,
    recent_matches,
    seats_of,
)
from ladder.read.replays import (
    AttemptInfo,
    MatchPage,
    ReplayCache,
    StepInfo,
    example_replays,
    export_replay,
    match_page,
    replay_file_page,
    replay_json,
    replay_steps,
    twins_open,
)
from ladder.read.standings import (
    TOURNAMENT_BOTS_SQL,
    TOURNAMENT_SEATS_SQL,
    CrossCell,
    StandingEntry,
    standings_and_crosstable,
    tournament_standings,
)
from ladder.read.tournaments import (
    TournamentListItem,
    TournamentPage,
    tournament_page,
    tournament_state,
    tournaments_list,
)

__all__ = [
    "AttemptInfo",
    "BOT_HEAD_TO_HEAD_SQL",
    "BOT_HISTORY_SQL",
    "BOT_PLAYER_COUNTS_SQL",
    "BOT_RATINGS_SQL",
    "BOT_RECENT_SQL",
    "BOT_VERDICTS_SQL",
    "BotPage",
    "BotRating",
    "CrossCell",
    "DEFAULT_ORDER",
    "GameSummary",
    "HeadToHead",
    "HomePage",
    "LeaderboardEntry",
    "LeaderboardPage",
    "MATCHES_BY_ID_SQL",
    "MATCH_COLUMNS",
    "MAX_PLOT_POINTS",
    "MatchListItem",
    "MatchPage",
    "NotFound",
    "PlayerCountStats",
    "RatingPoint",
    "ReplayCache",
    "SeatResult",
    "SortKey",
    "SortOrder",
    "StandingEntry",
    "StepInfo",
    "TOURNAMENT_BOTS_SQL",
    "TOURNAMENT_SEATS_SQL",
    "TournamentListItem",
    "TournamentPage",
    "VERDICTS",
    "bot_page",
    "bt_available",
    "bt_intervals",
    "decompress_replay",
    "export_replay",
    "game_exists",
    "example_replays",
    "game_info",
    "games_summary",
    "home_page",
    "known_games",
    "latest_results",
    "leaderboard",
    "leaderboard_page",
    "leaderboard_query",
    "leaderboard_total",
    "match_items",
    "match_page",
    "player_counts",
    "recent_matches",
    "replay_file_page",
    "replay_json",
    "replay_steps",
    "seats_of",
    "standings_and_crosstable",
    "tournament_page",
    "tournament_standings",
    "tournament_state",
    "tournaments_list",
    "twins_open",
]
