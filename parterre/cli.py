"""``parterre``: the one command-line entry point (docs/settings.md).

Every subcommand reads its settings from the environment (``parterre.settings``)
and flags; with no database or Redis URL configured it uses the embedded
default in ``$PARTERRE_HOME``. Errors are printed as one clear line and the
command exits with status 2 (bad input) or 1 (a failure at run time).

The subcommands live in ``parterre/commands/``, one module per command group,
each registering its own subparser (see ``parterre.commands``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence

from parterre.commands import MODULES
from parterre.commands.common import CliError, Parser

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``parterre`` (all subcommands); every option's ``--help`` line shows its
    default (:class:`parterre.commands.common.HelpFormatter`)."""
    p = Parser(prog="parterre", description="Parterre: a bot ladder for flower games")
    sub = p.add_subparsers(dest="command", required=True)
    for module in MODULES:
        module.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``parterre``; returns the exit status."""
    args = build_parser().parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        # SIGTERM exits through SystemExit so that atexit handlers run (they release
        # the embedded PostgreSQL handle and stop the embedded Redis).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"parterre: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
