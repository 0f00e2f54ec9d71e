"""What every greedy strategy does with its scores: the forced cases, then the first best action."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def forced(legal_actions: list[dict[str, Any]]) -> int | None:
    """0 when there is exactly one legal action (nothing to evaluate), None when there is a choice.

    Raises:
        ValueError: ``legal_actions`` is empty.
    """
    if not legal_actions:
        raise ValueError("no legal action to choose from")
    return 0 if len(legal_actions) == 1 else None


def first_best(values: Iterable[float]) -> int:
    """Index of the highest value, the first of equals; values are compared rounded to 9 decimals,
    so that float noise between equal estimates never decides. 0 for no values."""
    best_i, best = 0, float("-inf")
    for i, v in enumerate(values):
        v = round(v, 9)
        if v > best:
            best_i, best = i, v
    return best_i
