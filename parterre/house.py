"""``parterre house``: keep the house bots connected to the referee.

The house bots (``house-random``, ``house-greedy``, ``house-search``; :mod:`ladder.house`) are
always there to be challenged and to fill gauntlets. At start this process
registers each missing house bot, or rotates its token (it has database
access, so the token lives only in this process's memory), then plays
through the bot SDK with reconnection (exponential backoff), so a referee
restart only pauses them. ``parterre up`` and ``parterre demo`` start it.

Adding a tier (a search bot, say) is one line in :data:`HOUSE_KINDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bots.reference import GreedyBot, RandomBot, strategy_for
from bots.sdk import Bot
from bots.search import SearchBot, determinizer_for

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HouseKind:
    """One tier of house bot.

    Attributes:
        make: builds the bot (keyword arguments of :class:`bots.sdk.Bot`).
        strategy: the games it plays are those with a strategy of this kind in
            ``bots.strategies``; None = every registered game.
        plays: further restricts the games to those for which it is true.
    """

    make: Callable[..., Bot]
    strategy: str | None = None
    plays: Callable[[str], bool] | None = None


HOUSE_KINDS: dict[str, HouseKind] = {
    "random": HouseKind(RandomBot),
    "greedy": HouseKind(GreedyBot, strategy="greedy"),
    "search": HouseKind(SearchBot, plays=lambda game: determinizer_for(game) is not None),
}
"""House tiers by kind; the bot of kind K is named ``house-K``."""


def house_games(kind: str) -> list[str]:
    """Registry names of the games the house bot of ``kind`` plays."""
    from games.registry import game_names

    spec = HOUSE_KINDS[kind]
    names = list(game_names())
    if spec.strategy is not None:
        names = [g for g in names if strategy_for(spec.strategy, g) is not None]
    if spec.plays is not None:
        names = [g for g in names if spec.plays(g)]
    return names


def start_house_bots(pool: ConnectionPool, redis: Any, kinds: Sequence[str] = tuple(HOUSE_KINDS), *,
                     max_matches: int = 8) -> list[tuple[Bot, str, int]]:
    """Register or re-token the house bots of ``kinds``; returns ``(bot, token, bot id)`` per kind.

    Raises:
        ValueError: an unknown kind, or a kind that plays no game.
        ladder.errors.BotRevokedError: a house bot was revoked.
        ladder.errors.BotExistsError: a bot that is not a house bot holds a house name (never adopted).
    """
    from ladder.house import ensure_house_bot, house_name

    out = []
    for kind in kinds:
        if kind not in HOUSE_KINDS:
            raise ValueError(f"unknown house bot kind {kind!r}; choose from {', '.join(HOUSE_KINDS)}")
        games = house_games(kind)
        bot_id, token = ensure_house_bot(pool, kind, games, redis=redis)
        bot = HOUSE_KINDS[kind].make(name=house_name(kind), games=games, max_concurrent_matches=max_matches)
        out.append((bot, token, bot_id))
    return out


async def play_house_bots(address: str, bots: Sequence[tuple[Bot, str, int]]) -> None:
    """Play with every house bot until SIGINT/SIGTERM (reconnecting whenever a stream ends)."""
    loop = asyncio.get_running_loop()

    def stop_all() -> None:
        for b, _, _ in bots:
            b.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(sig, stop_all)
    await asyncio.gather(*(b.arun(address, token, reconnect=True, max_backoff_s=5.0) for b, token, _ in bots))


def run_house(pool: ConnectionPool, redis: Any, address: str, kinds: Sequence[str] = tuple(HOUSE_KINDS), *,
              max_matches: int = 8, out: Callable[[str], None] = print) -> int:
    """The body of ``parterre house``: start the bots, print them, play until stopped; returns 0."""
    bots = start_house_bots(pool, redis, kinds, max_matches=max_matches)
    for bot, _, bot_id in bots:
        out(f"house bot {bot.name} (id {bot_id}) plays {', '.join(bot.games)}; connecting to {address}")
    asyncio.run(play_house_bots(address, bots))
    return 0
