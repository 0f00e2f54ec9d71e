"""Reference bot strategies as pure functions of what a seat is sent.

A strategy is ``choose(observation: dict, legal_actions: list[dict], seat: int) -> int``:
it gets the seat's observation dict, the legal actions' JSON (``Action.to_json()``)
in the referee's order, and returns the index of its choice. Strategies use only
visible information, so they run unchanged behind the referee's wire protocol.

:data:`STRATEGIES` maps ``(strategy name, game name)`` to the function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bots.strategies import floriferous, flowar, lafleur

Strategy = Callable[[dict[str, Any], list[dict[str, Any]], int], int]
"""``(observation, legal_actions, seat) -> index into legal_actions``."""

STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("greedy", "floriferous"): floriferous.greedy_choice,
    ("greedy", "flowar"): flowar.greedy_choice,
    ("greedy", "lafleur"): lafleur.greedy_choice,
}
"""``(strategy, game) -> function``."""

__all__ = ["STRATEGIES", "Strategy"]
