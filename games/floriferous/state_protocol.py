"""The fields and steps of a Floriferous position that :mod:`~games.floriferous.crow` and
:mod:`~games.floriferous.summary` use: one trait, which the state class inherits.

:class:`games.floriferous.state.FloriferousState` inherits it
(``tests/games/test_state_traits.py`` checks that it provides every step and sets every
field), so they need not import the state module: no import cycle. Fields are the
state's private representation (see ``FloriferousState.__init__`` for what each one
means).

It is a mypyc trait, not a :class:`typing.Protocol`, and the state class inherits it
(docs/architecture.md, "Engines: trusted actions and the compiled build"):
compiled code reads a field of a Protocol-typed ``self`` by name through
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
    _num_players: int
    _solo: bool
    _layout: Layout
    _num_rows: int
    _num_columns: int
    _desire_start: int
    _card: list[int]
    _face_down: list[bool]
    _cell_stones: list[int]
    _dealt_at: list[int]
    _garden_deck: list[int]
    _desire_deck: list[int]
    _bounty_pool: list[int]
    _bounties: list[int]
    _bounty_columns: list[list[list[int]]]
    _bounties_done: list[int]
    _collections: list[list[int]]
    _stones: list[int]
    _supply: int
    _pawn_row: list[int]
    _pawn_column: list[int]
    _day: int
    _round: int
    _order: list[int]
    _turn_index: int
    _deal_index: int
    _tea_holder: int
    _tea_tossed: bool
    _crow_deck: list[int]
    _crow_discard: list[int]
    _crow_last: int
    _crow_card: int
    _crow_target: int
    _phase: int
    _cur: int

    def _next_round(self) -> None:
        raise NotImplementedError
    def _after_day(self) -> None:
        raise NotImplementedError
