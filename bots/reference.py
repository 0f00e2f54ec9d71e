"""Reference bots: uniform random and greedy.

``GreedyBot`` uses ``bots.strategies.STRATEGIES[("greedy", game)]`` when the
game has one (a function ``(observation: dict, legal_actions: list[dict],
seat: int) -> int``), and plays like :class:`RandomBot` for a game without
one. The strategies need the full ``parterre`` package (they use ``games``):
with only the ``parterre-bot`` SDK wheel, making a ``GreedyBot`` raises
``ImportError`` instead of quietly playing random.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from bots.sdk import Bot, DecisionRequest

log = logging.getLogger(__name__)

Strategy = Callable[[dict[str, Any], list[dict[str, Any]], int], int]


class RandomBot(Bot):
    """Picks a legal action uniformly at random.

    Args:
        seed: seed of the bot's own ``random.Random`` (None: from the OS).
        **kwargs: see :class:`bots.sdk.Bot`.
    """

    name = "random"

    def __init__(self, seed: int | str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rng = random.Random(seed)

    def choose(self, request: DecisionRequest) -> int:
        """A uniform index in ``range(request.num_actions)``."""
        return self.rng.randrange(request.num_actions)


def strategy_for(kind: str, game: str) -> Strategy | None:
    """``bots.strategies.STRATEGIES[(kind, game)]``, or None when that game has none.

    Raises:
        ImportError: ``bots.strategies`` (or the ``games`` package it uses) cannot
            be imported, e.g. with only the ``parterre-bot`` SDK wheel installed.
    """
    from bots.strategies import STRATEGIES  # imported here: the SDK wheel has RandomBot without it

    found: Strategy | None = STRATEGIES.get((kind, game))
    return found


class GreedyBot(RandomBot):
    """Plays the game's greedy strategy; random for games without one.

    Args:
        seed: seed of the random fallback.
        **kwargs: see :class:`bots.sdk.Bot`.

    Raises:
        ImportError: the strategies cannot be imported (see the module docstring).
    """

    name = "greedy"

    def __init__(self, seed: int | str | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        strategy_for("greedy", "")  # a broken or missing bots.strategies fails here, loudly
        self._strategies: dict[str, Strategy | None] = {}

    def choose(self, request: DecisionRequest) -> int:
        """The strategy's index (checked to be in range), else a random one."""
        game = request.game
        if game not in self._strategies:
            self._strategies[game] = strategy_for("greedy", game)
            if self._strategies[game] is None:
                log.info("greedy: no strategy for %s, playing random", game)
        strategy = self._strategies[game]
        if strategy is not None:
            index = strategy(request.observation, request.legal_actions, request.seat)
            if isinstance(index, int) and 0 <= index < request.num_actions:
                return index
            log.warning("greedy strategy for %s returned %r; playing random", game, index)
        return super().choose(request)
