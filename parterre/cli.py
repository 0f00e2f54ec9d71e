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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

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


@contextmanager
def _sigterm_exits() -> Iterator[None]:
    """While the command runs, SIGTERM exits through ``SystemExit(143)`` so that atexit handlers
    run (they release the embedded PostgreSQL handle and stop the embedded Redis); the previous
    handler is put back when the command returns, so a caller of :func:`main` (a test, a
    program embedding the CLI) keeps its own. Off the main thread signals cannot be handled:
    nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``parterre``; returns the exit status (0; 1 a failure at run time; 2 bad input; 130 on
    Ctrl-C). A SIGTERM while the command runs raises ``SystemExit(143)``."""
    args = build_parser().parse_args(argv)
    with _sigterm_exits():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
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
