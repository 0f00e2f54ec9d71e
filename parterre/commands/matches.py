"""``parterre matches``: the most recent matches, one line each or JSON."""

from __future__ import annotations

import argparse

from parterre.commands import common
from parterre.commands.common import Subparsers
from parterre.commands.leaderboard import check_game


def cmd_matches(args: argparse.Namespace) -> int:
    """Print the ``args.limit`` most recent matches (of ``args.game`` when given)."""
    from ladder import read

    if args.game is not None:
        check_game(args.game)
    services = common.services()
    pool = common.pool(services)
    rows = [common.row_dict(r) for r in read.recent_matches(pool, game=args.game, limit=args.limit)]
    if args.json:
        common.print_json(rows)
    else:
        print("id\tgame\tstatus\tseats (bot#rank(score))")
        for r in rows:
            seats = ", ".join(
                f"{s.get('name', s.get('bot_id'))}#{s.get('rank')}({s.get('score')})" for s in r.get("seats", [])
            )
            print(f"{r.get('id')}\t{r.get('game_string')}\t{r.get('status')}\t{seats}")
    return 0


def register(sub: Subparsers) -> None:
    """Add ``matches``."""
    m = sub.add_parser("matches", help="recent matches")
    m.add_argument("--game", help="only this game (default: every game)")
    m.add_argument("--limit", type=int, default=20, help="how many, newest first")
    m.add_argument("--json", action="store_true", help="print JSON instead of text")
    m.set_defaults(func=cmd_matches)
