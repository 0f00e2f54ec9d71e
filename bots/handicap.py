"""A greedy bot with a tunable handicap, to plant a known strength difference (``parterre regress`` tests).

``HandicapBot(p)`` plays the game's greedy strategy (:class:`bots.reference.GreedyBot`)
but, before each decision, with probability ``p`` plays a legal action chosen
uniformly at random instead. ``p = 0`` is the greedy bot, ``p = 1`` the random
bot; in between the strength falls steadily with ``p``, so a value of ``p`` can
be calibrated to a wanted Elo gap (``bench/bench_regress.py`` measures it per
game; ``docs/regression.md`` lists the values).

The coin and the random choice come from the bot's own ``random.Random(seed)``,
one draw of each per decision, so two handicap bots with the same ``p`` and
different seeds are equally strong but play differently.
"""

from __future__ import annotations

from typing import Any

from bots.reference import GreedyBot
from bots.sdk import DecisionRequest

__all__ = ["HandicapBot"]


class HandicapBot(GreedyBot):
    """Greedy, except that each decision is uniformly random with probability ``p``.

    Args:
        p: probability of a random decision, in [0, 1] (default 0.25).
        seed: seed of the bot's ``random.Random`` (None: from the OS).
        **kwargs: see :class:`bots.sdk.Bot`.

    Raises:
        ValueError: ``p`` outside [0, 1].
    """

    name = "handicap"

    def __init__(self, p: float = 0.25, seed: int | str | None = None, **kwargs: Any) -> None:
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"handicap p must be in [0, 1], got {p}")
        super().__init__(seed, **kwargs)
        self.p = p

    def choose(self, request: DecisionRequest) -> int:
        """A uniform index with probability ``p``, else the greedy choice."""
        if self.rng.random() < self.p:
            return self.rng.randrange(request.num_actions)
        return super().choose(request)
