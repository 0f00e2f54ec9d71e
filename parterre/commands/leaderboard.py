"""``parterre leaderboard GAME``: a game's Elo leaderboard as a table or JSON."""

from __future__ import annotations

import argparse

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def check_game(name: str) -> None:
    """Raise :class:`CliError` when ``name`` is no registered game (before anything is started)."""
    from games.api import UnknownGameError
    from games.registry import game_class

    try:
        game_class(name)
    except UnknownGameError as exc:
        raise CliError(str(exc)) from None


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """Print the leaderboard of ``args.game``.

    ``--json``: one object per bot, best Elo first: ``bot_id, name, version,
    rank, elo`` (online Elo), ``bt_elo, bt_low, bt_high, bt_rank`` (the
    Bradley-Terry estimate, its bootstrap 95 % interval and rank; null outside
    the fit), ``games, wins, draws, losses, win_rate, avg_score, last_played``.
    The fit is recomputed first when results arrived since the stored one.
    """
    from ladder import read
    from parterre.render import leaderboard_table, load_bradley_terry

    check_game(args.game)
    services = common.services()
    pool = common.pool(services)
    if args.json:
        load_bradley_terry(args.game)  # refresh the stored fit the rows read
        rows = read.leaderboard(pool, args.game)
        common.print_json([common.row_dict(r) for r in rows])
        return 0
    leaderboard_table(args.game, read.leaderboard(pool, args.game))
    return 0


def register(sub: Subparsers) -> None:
    """Add ``leaderboard``."""
    lb = sub.add_parser("leaderboard", help="print a game's leaderboard")
    lb.add_argument("game", help="game name, e.g. floriferous")
    lb.add_argument("--json", action="store_true",
                    help="print JSON (fields in the command's docstring) instead of a table")
    lb.set_defaults(func=cmd_leaderboard)
