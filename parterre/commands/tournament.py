"""``parterre tournament create|run``: round-robin tournaments on the workers (DESIGN §5)."""

from __future__ import annotations

import argparse
import os

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_tournament_create(args: argparse.Namespace) -> int:
    """Create a round-robin tournament and print its id."""
    from games.api import GameError
    from ladder import bots, tournaments

    services = common.services()
    pool = common.pool(services)
    bot_ids = []
    for ref in args.bots.split(","):
        bot = bots.find_bot(pool, ref.strip())
        if bot is None:
            raise CliError(f"no bot named or numbered {ref.strip()!r}")
        bot_ids.append(bot.id)
    options = common.game_options(args.option)
    try:
        tid = tournaments.create_tournament(
            pool,
            name=args.name or f"{args.game} round-robin",
            game=args.game,
            bot_ids=bot_ids,
            player_counts=tuple(common.int_list("--players", args.players)),
            rounds=args.rounds,
            time_control=common.parse_time_control(args.time_control),
            game_options=options,
        )
    except (GameError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(tid)
    return 0


def cmd_tournament_run(args: argparse.Namespace) -> int:
    """Queue the planning of a tournament's matches; with ``--wait``, show progress to the end."""
    from parterre.demo import wait_for_tournament

    services = common.services(need_redis=True)
    os.environ["PARTERRE_REDIS_URL"] = services.redis_url
    pool = common.pool(services)
    from workers.app import app
    from workers.tasks import plan_round_robin

    app.conf.broker_url = services.redis_url
    plan_round_robin.delay(args.tournament_id)
    print(f"tournament {args.tournament_id}: planning queued")
    if args.wait:
        wait_for_tournament(pool, args.tournament_id, timeout_s=args.timeout)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``tournament create`` and ``tournament run``."""
    t = sub.add_parser("tournament", help="create and run tournaments").add_subparsers(dest="t_cmd", required=True)
    tc = t.add_parser("create", help="create a round-robin tournament; prints its id")
    tc.add_argument("--game", required=True)
    tc.add_argument("--bots", required=True, help="comma-separated bot names or ids")
    tc.add_argument("--players", default="2", help="player counts, e.g. 2,3,4")
    tc.add_argument("--rounds", type=int, default=1)
    tc.add_argument("--time-control", default="1000+100", help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    tc.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    tc.add_argument("--name")
    tc.set_defaults(func=cmd_tournament_create)
    tr = t.add_parser("run", help="plan and queue a tournament's matches on the workers")
    tr.add_argument("tournament_id", type=int)
    tr.add_argument("--wait", action="store_true", help="show progress until every match is done")
    tr.add_argument("--timeout", type=float, default=3600)
    tr.set_defaults(func=cmd_tournament_run)
