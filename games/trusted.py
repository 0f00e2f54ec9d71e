"""The engines' trusted fast path, shared by :mod:`games.api` and the states.

See docs/architecture.md, "Engines: trusted actions and the compiled build". Compiled
with the engines where a C compiler is present (setup.py ``COMPILED``), so the identity
scan runs natively from compiled states.
"""

from __future__ import annotations

import random
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


def below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for ``n >= 1``, the very same draw, without its Python frames.

    For :class:`random.Random` itself this is CPython's ``Random._randbelow_with_getrandbits``
    (``Lib/random.py``): ``k = n.bit_length()`` bits from ``getrandbits`` until the value is
    below ``n``, which is what ``randrange(n)`` returns. Any other class (a subclass may
    override ``random()`` or ``randrange()``) gets ``rng.randrange(n)``.
    ``tests/games/test_engine_fastpaths.py`` checks the equality draw by draw.

    Raises:
        ValueError: ``n < 1`` (as ``randrange``).
    """
    if type(rng) is not random.Random or n < 1:
        return rng.randrange(n)
    k = n.bit_length()
    r: int = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r
