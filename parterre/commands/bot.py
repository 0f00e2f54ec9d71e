"""``parterre bot register|revoke|run|list``: bots on the ladder, and the reference bots."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_bot_register(args: argparse.Namespace) -> int:
    """Register a bot and print its token once."""
    from ladder import bots

    services = common.services(need_redis=True)
    pool = common.pool(services)
    try:
        bot_id, token = bots.register_bot(
            pool, args.name, version=args.version, owner=args.owner, redis=common.redis_client(services)
        )
    except ValueError as exc:  # bots.BotExistsError among them
        raise CliError(str(exc)) from None
    print(f"registered bot {args.name!r} with id {bot_id}")
    print(f"token (shown once, keep it secret): {token}")
    return 0


def cmd_bot_revoke(args: argparse.Namespace) -> int:
    """Revoke a bot's token (its live sessions are closed through Redis)."""
    from ladder import bots

    services = common.services(need_redis=True)
    pool = common.pool(services)
    try:
        bots.revoke_bot(pool, args.bot, redis=common.redis_client(services))
    except LookupError as exc:
        raise CliError(str(exc)) from None
    print(f"revoked {args.bot}")
    return 0


def cmd_bot_run(args: argparse.Namespace) -> int:
    """Run a reference (or misbehaving) bot against a referee."""
    from bots.cli import run_bot
    from bots.sdk import AuthenticationError, HelloRefusedError

    address, token = common.bot_connection(args)

    def announce(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    extra = {} if args.think_ms is None else {"think_ms": args.think_ms}
    try:
        run_bot(args.kind, address, token, name=args.name, max_matches=args.max_matches, seed=args.seed,
                announce=announce, **extra)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except AuthenticationError as exc:
        raise CliError(f"the referee at {address} refused the token (wrong or revoked): {exc}") from None
    except HelloRefusedError as exc:
        raise CliError(f"the referee at {address} refused this bot's Hello: {exc}") from None
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_bot_list(args: argparse.Namespace) -> int:
    """Print the bots: id, name, version, owner, house kind, revoked."""
    from ladder import bots
    from ladder.house import list_house_bots

    pool = common.pool(common.services())
    house = {h.bot_id: h for h in list_house_bots(pool)}
    rows: list[dict[str, Any]] = []
    for b in bots.list_bots(pool, include_revoked=args.all):
        h = house.get(b.id)
        rows.append({"id": b.id, "name": b.name, "version": b.version, "owner": b.owner,
                     "house": h.kind if h else None, "games": list(h.games) if h else None,
                     "revoked_at": b.revoked_at.isoformat() if b.revoked_at else None})
    if args.house:
        rows = [r for r in rows if r["house"]]
    if args.json:
        common.print_json(rows)
        return 0
    for r in rows:
        tags = [f"house bot ({', '.join(r['games'])})" if r["house"] else "", "revoked" if r["revoked_at"] else ""]
        print(f"{r['id']}\t{r['name']}\t{r['version']}\t{r['owner'] or ''}\t{' '.join(t for t in tags if t)}".rstrip())
    return 0


def register(sub: Subparsers) -> None:
    """Add ``bot register``, ``bot revoke``, ``bot run`` and ``bot list``."""
    b = sub.add_parser("bot", help="register, revoke, run and list bots").add_subparsers(dest="bot_cmd", required=True)
    br = b.add_parser("register", help="register a bot and print its token once")
    br.add_argument("name", help="the bot's name on the ladder (unique)")
    br.add_argument("--version", default="1", help="version shown on the ladder")
    br.add_argument("--owner", help="owner's name (default: none)")
    br.set_defaults(func=cmd_bot_register)
    bv = b.add_parser("revoke", help="revoke a bot's token")
    bv.add_argument("bot", help="bot name or id")
    bv.set_defaults(func=cmd_bot_revoke)
    bn = b.add_parser("run", help="run a reference bot against a referee")
    bn.add_argument("kind", help="random, greedy, search, or a misbehaving kind (slow, illegal, drop, garbage, silent)")
    bn.add_argument("--token", help="the bot's token; --token=T also works (default: $PARTERRE_BOT_TOKEN)")
    bn.add_argument("--address", help="referee HOST:PORT (default: $PARTERRE_REFEREE_ADDRESS or 127.0.0.1:50051)")
    bn.add_argument("--name", help="name sent in Hello, for the referee's logs (default: the kind)")
    bn.add_argument("--max-matches", type=int, default=4, help="matches played at once")
    bn.add_argument("--seed", type=int, default=None, help="random seed of the bot (default: random)")
    bn.add_argument("--think-ms", type=float, default=None,
                    help="search: thinking time per decision, ms (default: 450; the deadline still bounds it)")
    bn.set_defaults(func=cmd_bot_run)
    bl = b.add_parser("list", help="list the bots (house bots marked)")
    bl.add_argument("--all", action="store_true", help="revoked bots too")
    bl.add_argument("--house", action="store_true", help="house bots only")
    bl.add_argument("--json", action="store_true", help="print JSON instead of text")
    bl.set_defaults(func=cmd_bot_list)
    from parterre.commands import upload

    upload.register(b)
