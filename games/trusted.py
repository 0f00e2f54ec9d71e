"""The engines' trusted fast path, shared by :mod:`games.api` and the states (issue 19).

Compiled with the engines where a C compiler is present (setup.py ``COMPILED``),
so the identity scan runs natively from compiled states.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def holds(actions: Sequence[Any] | None, action: object) -> bool:
    """Whether ``action`` is one of the very objects in ``actions`` (identity, not equality; None: no).

    An object taken from the legal list of this very position needs no second
    legality check.
    """
    if actions is None:
        return False
    for a in actions:  # noqa: SIM110 - a plain loop: mypyc compiles it to a native scan, any() to a generator
        if a is action:
            return True
    return False
