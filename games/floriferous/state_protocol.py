"""The fields and steps of a Floriferous position that :mod:`~games.floriferous.crow` and
:mod:`~games.floriferous.summary` use: one trait, which the state class inherits.

:class:`games.floriferous.state.FloriferousState` inherits it
(``tests/test_state_traits.py`` checks that it provides every step and sets every
field), so they need not import the state module: no import cycle. Fields are the
state's private representation (see ``FloriferousState.__init__`` for what each one
means).

It is a mypyc trait, not a :class:`typing.Protocol`, and the state class inherits it
(issue 19): compiled code reads a field of a Protocol-typed ``self`` by name through
Python's generic attribute lookup, a field of a trait from its slot, which made random
playouts about 1.3-1.6x faster. A step is declared here with a body that raises
NotImplementedError; the state class comes before it in the method resolution order.
"""

from __future__ import annotations

from mypy_extensions import trait

from games.api import Action, Game
from games.floriferous.layout import Layout


@trait
class FloriferousStateProtocol:
    """What the crow's handlers and the summaries read, write and call on a position."""

    game: Game
    history: list[tuple[int, Action]]
    _legal_cache: list[Action] | None  # games.api.State's: the legal list of this position, once built
    _sampled: Action | None  # games.api.State's: what sample_chance() drew here
    _n: int
    _solo: bool
    _lay: Layout
    _nrows: int
    _ncols: int
    _desire_start: int
    _card: list[int]
    _fd: list[bool]
    _st: list[int]
    _dealt_at: list[int]
    _gdeck: list[int]
    _ddeck: list[int]
    _bpool: list[int]
    _bounties: list[int]
    _bcols: list[list[list[int]]]
    _bdone: list[int]
    _coll: list[list[int]]
    _stones: list[int]
    _supply: int
    _prow: list[int]
    _pcol: list[int]
    _day: int
    _round: int
    _order: list[int]
    _ti: int
    _qi: int
    _tea_holder: int
    _tea_tossed: bool
    _crow_deck: list[int]
    _crow_disc: list[int]
    _crow_last: int
    _crow_card: int
    _crow_target: int
    _phase: int
    _cur: int

    def _next_round(self) -> None:
        raise NotImplementedError
    def _after_day(self) -> None:
        raise NotImplementedError
