"""The subcommands of ``parterre``: one module per command group.

Each module exposes ``register(subparsers) -> None``, which adds its
subparser(s) and sets ``func`` on each (``func(args) -> int`` returns the exit
status, or raises :class:`parterre.commands.common.CliError`). The order of
:data:`MODULES` is the order of ``parterre --help``.
"""

from __future__ import annotations

from types import ModuleType

from parterre.commands import (
    admin,
    beat,
    bot,
    challenge,
    competition,
    connect,
    db,
    demo,
    house,
    leaderboard,
    matches,
    play,
    ratings,
    referee,
    regress,
    remote,
    replay,
    tournament,
    up,
    view,
    web,
    worker,
)

MODULES: tuple[ModuleType, ...] = (
    demo, play, view, referee, beat, worker, house, bot, connect, challenge, tournament, competition, leaderboard,
    matches, replay, ratings, regress, up, web, db, admin, remote,
)
"""The command modules, in ``--help`` order."""
