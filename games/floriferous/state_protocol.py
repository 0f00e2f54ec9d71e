"""The fields and steps of a Floriferous position that :mod:`~games.floriferous.crow` and
:mod:`~games.floriferous.summary` use: one :class:`typing.Protocol`.

:class:`games.floriferous.state.FloriferousState` implements it (mypy checks
that wherever the state passes itself to those modules), so they need not
import the state module: no import cycle. Fields are the state's private
representation (see ``FloriferousState.__init__`` for what each one means).
"""

from __future__ import annotations

from typing import Protocol

from games.api import Action, Game
from games.floriferous.layout import Layout


class FloriferousStateProtocol(Protocol):
    """What the crow's handlers and the summaries read, write and call on a position."""

    game: Game
    history: list[tuple[int, Action]]
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

    def _next_round(self) -> None: ...
    def _after_day(self) -> None: ...
