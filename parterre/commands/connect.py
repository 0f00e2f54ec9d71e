"""``parterre connect --exec CMD``: the stdio adapter (bots/stdio.py, docs/bots.md)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import shlex
import signal
import sys

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_connect(args: argparse.Namespace) -> int:
    """Run the program as a bot over the stdio line protocol; 1 when the adapter fails at run time."""
    from bots.sdk import AuthenticationError, HelloRefusedError
    from bots.stdio import StdioBot, StdioError

    st = common.settings()
    address, token = common.bot_connection(args)
    try:
        command = shlex.split(args.exec)
    except ValueError as exc:
        raise CliError(f"--exec {args.exec!r}: {exc}") from None
    if not command:
        raise CliError("--exec needs a command, e.g. --exec \"python3 my_bot.py\"")
    if args.max_matches < 1:
        raise CliError("--max-matches must be at least 1")
    log_dir = args.log_dir or str(st.home / "logs" / "bots")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    bot = StdioBot(command, log_dir=log_dir, name=args.name, version=args.version,
                   max_concurrent_matches=args.max_matches)
    print(f"connecting {' '.join(command)!r} to {address} as {args.name!r}, up to {args.max_matches} "
          f"match(es) at once; the children's stderr goes to {log_dir}", file=sys.stderr)
    bot.announce = lambda line: print(line, file=sys.stderr, flush=True)  # "connected as ...", reconnects

    async def play() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # stop the children before leaving
            loop.add_signal_handler(sig, bot.stop)
        await bot.arun(address, token, stop_after_matches=args.stop_after or None)

    try:
        asyncio.run(play())
    except StdioError as exc:
        print(f"parterre: error: {exc}", file=sys.stderr)
        return 1
    except AuthenticationError as exc:
        raise CliError(f"the referee refused the token: {exc}") from None
    except HelloRefusedError as exc:
        raise CliError(f"the referee refused this bot's Hello: {exc}") from None
    print(f"{len(bot.stats.results)} match(es) played", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``connect``."""
    cn = sub.add_parser("connect", help="run any program as a bot over the stdio line protocol (docs/bots.md)")
    cn.add_argument("--exec", required=True, metavar="COMMAND",
                    help='the bot program and its arguments, e.g. "python3 my_bot.py" '
                         '(split like a shell, not run by one)')
    cn.add_argument("--token", help="the bot's token (default $PARTERRE_BOT_TOKEN)")
    cn.add_argument("--address", help="referee host:port (default $PARTERRE_REFEREE_ADDRESS or 127.0.0.1:50051)")
    cn.add_argument("--max-matches", type=int, default=1, help="matches at once, one child process each")
    cn.add_argument("--log-dir", help="folder for the children's stderr (default $PARTERRE_HOME/logs/bots)")
    cn.add_argument("--name", default="stdio-bot", help="name sent in Hello, shown to opponents (any script, at most "
                    "100 characters, no control or formatting characters)")
    cn.add_argument("--version", default="1", help="version sent in Hello")
    cn.add_argument("--stop-after", type=int, default=0, help="exit after this many matches; 0 = never")
    cn.set_defaults(func=cmd_connect)
