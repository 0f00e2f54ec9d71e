"""``parterre demo``: everything embedded, a round-robin per game, then the leaderboards."""

from __future__ import annotations

import argparse

from parterre.commands.common import CliError, Subparsers


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo (``parterre/demo.py``); a bad ``--games`` is a :class:`CliError`."""
    from parterre.demo import run_demo

    try:
        return run_demo(rounds=args.rounds, games=args.games, web_port=args.web_port, serve=args.serve,
                        increment_ms=args.increment_ms, margin_ms=args.margin_ms,
                        search_think_ms=args.search_think_ms)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def register(sub: Subparsers) -> None:
    """Add ``demo``."""
    d = sub.add_parser("demo", help="run everything embedded: referee, worker, bots, tournaments")
    d.add_argument("--rounds", type=int, default=3, help="round-robin cycles per game")
    d.add_argument(
        "--games", default="floriferous,lafleur,flowar", help="comma-separated games"
    )
    d.add_argument("--increment-ms", type=int, default=2000,
                   help="time per decision, ms (the cap is the same)")
    d.add_argument("--margin-ms", type=int, default=250, help="the referee's margin, ms")
    d.add_argument("--search-think-ms", type=float, default=450.0,
                   help="thinking time per decision of the search bot, ms (less: a quicker, weaker search)")
    d.add_argument("--web-port", type=int, default=0, help="port of the web site; 0 = a free port")
    d.add_argument("--serve", action="store_true",
                   help="keep the web site running after the tournaments (Ctrl-C stops)")
    d.set_defaults(func=cmd_demo)
