"""``parterre ratings rebuild``: recompute the Elo ratings from the whole match history."""

from __future__ import annotations

import argparse

from parterre.commands import common
from parterre.commands.common import Subparsers


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    """Rebuild the ratings (of ``args.game`` or every game) and print the summary as JSON."""
    from ladder.ratings import rebuild_ratings

    services = common.services()
    pool = common.pool(services)
    summary = rebuild_ratings(pool, args.game)
    common.print_json(summary)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``ratings rebuild``."""
    ra = sub.add_parser("ratings", help="ratings maintenance").add_subparsers(dest="ra_cmd", required=True)
    rr = ra.add_parser("rebuild", help="recompute ratings from the full history")
    rr.add_argument("--game", help="only this game (default: every game)")
    rr.set_defaults(func=cmd_ratings_rebuild)
