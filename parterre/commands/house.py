"""``parterre house``: keep the house bots (house-random, house-greedy, house-search) connected."""

from __future__ import annotations

import argparse

from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_house(args: argparse.Namespace) -> int:
    """Register or re-token the house bots and play with them until interrupted."""
    import logging

    from parterre.house import HOUSE_KINDS, run_house

    common.observe(args, "house")
    st = common.settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address.split(",")[0])
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] if args.kinds else list(HOUSE_KINDS)
    if args.max_matches < 1:
        raise CliError("--max-matches must be at least 1")
    services = common.services(need_redis=True)
    pool = common.pool(services)
    logging.getLogger("bots").setLevel(logging.WARNING)
    try:
        return run_house(pool, common.redis_client(services), address, kinds, max_matches=args.max_matches,
                         out=lambda line: print(line, flush=True))
    except ValueError as exc:  # an unknown kind, a revoked house bot
        raise CliError(str(exc)) from None


def register(sub: Subparsers) -> None:
    """Add ``house``."""
    h = sub.add_parser("house", help="keep the house bots (house-random, -greedy, -search) connected to the referee")
    h.add_argument("--address", help="referee host:port (default the first of $PARTERRE_REFEREE_ADDRESS)")
    h.add_argument("--kinds", help="comma-separated house bot kinds (default: all)")
    h.add_argument("--max-matches", type=int, default=8, help="matches at once per house bot")
    h.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    h.add_argument("--loglevel", default="INFO", help="log level: DEBUG, INFO, WARNING, ERROR")
    h.set_defaults(func=cmd_house)
