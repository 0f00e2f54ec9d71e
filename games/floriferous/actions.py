"""Floriferous actions: small frozen values with a canonical JSON form.

Each class's JSON (``Action.to_json``) is exactly the ``parterre.v1.FloriferousAction``
protobuf message (``kind`` plus that class's fields; the message holds the union
of all fields). Chance actions: :class:`RevealBounty`, :class:`ChooseStartPlayer`,
:class:`DealCard`, :class:`RevealCrow`. Decisions: :class:`TakeCard`,
:class:`ScatterStones`, :class:`MoveToEmpty`, :class:`TossTea`, :class:`PayCrow`,
:class:`DiscardCard`.

Rows are rulebook row numbers (1..5). A face-down card is named ``""`` in a
:class:`TakeCard` so that an action never reveals a hidden identity.

The engine uses interned instances (:func:`take`, :func:`deal`, ...) so that the
hot path neither builds dataclasses nor compares them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from games.action_fields import check_int, check_str
from games.api import Action
from games.floriferous.cards import (
    BOUNTIES,
    BOUNTY_INDEX,
    CARD_IDS,
    CROW_ACTIONS,
    CROW_INDEX,
    NUM_CARDS,
    card_name,
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# -- chance -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RevealBounty(Action):
    """Chance: the next of the three Bounty cards picked at random (Rulebook: "Game Setup", step 4).

    Attributes:
        bounty: Bounty card id, ``"B1"``..``"B9"``.
    """

    KIND: ClassVar[str] = "reveal_bounty"
    bounty: str

    def __post_init__(self) -> None:
        check_str("bounty", self.bounty)

    def label(self) -> str:
        b = BOUNTY_INDEX.get(self.bounty)
        return f"reveal {BOUNTIES[b].name}" if b is not None else f"reveal bounty {self.bounty}"


@dataclass(frozen=True, slots=True)
class ChooseStartPlayer(Action):
    """Chance: the random starting player (Rulebook: "Game Setup", step 7).

    Attributes:
        seat: the starting seat; its pawn goes to the top Garden row.
    """

    KIND: ClassVar[str] = "start_player"
    seat: int

    def __post_init__(self) -> None:
        check_int("seat", self.seat, 0, 3)

    def label(self) -> str:
        return f"start player: seat {self.seat}"


@dataclass(frozen=True, slots=True)
class DealCard(Action):
    """Chance: the next garden space receives this card from its deck.

    The space is fixed by the state (spaces are dealt row by row, top first,
    each row in visiting order; then the space a Crow card vacated).

    Attributes:
        card: Garden or Desire card id.
    """

    KIND: ClassVar[str] = "deal"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"deal {card_name(self.card)}"


@dataclass(frozen=True, slots=True)
class RevealCrow(Action):
    """Chance (solo): the top Crow Action card is revealed (Rulebook: "Playing the Solo Game").

    Attributes:
        crow: Crow Action card id, ``"C1"``..``"C9"``.
    """

    KIND: ClassVar[str] = "reveal_crow"
    crow: str

    def __post_init__(self) -> None:
        check_str("crow", self.crow)

    def label(self) -> str:
        c = CROW_INDEX.get(self.crow)
        return f"reveal {CROW_ACTIONS[c].name}" if c is not None else f"reveal crow {self.crow}"


# -- decisions ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TakeCard(Action):
    """Pick the card in ``row`` of the next column and move the pawn there.

    Rulebook: "Taking Turns" (Action 1: Pick a card; Action 2: Move your
    Gardener Pawn). Any Stone on the card is taken too.

    Attributes:
        row: rulebook row number (1..5).
        card: the card's id, ``""`` when it lies face-down.
        stones: Stones lying on the card.
    """

    KIND: ClassVar[str] = "take"
    row: int
    card: str
    stones: int

    def __post_init__(self) -> None:
        check_int("row", self.row, 1, 5)
        check_str("card", self.card)
        check_int("stones", self.stones, 0, 24)

    def label(self) -> str:
        extra = f" +{_plural(self.stones, 'stone')}" if self.stones else ""
        return f"take row {self.row}: {card_name(self.card)}{extra}"


@dataclass(frozen=True, slots=True)
class ScatterStones(Action):
    """Solo: move onto the crow's Stones in ``row`` of the next column; they go
    back to the supply and no card is taken (Rulebook: "Scattering Stones").

    Attributes:
        row: rulebook row number.
        stones: crow Stones scattered.
    """

    KIND: ClassVar[str] = "scatter"
    row: int
    stones: int

    def __post_init__(self) -> None:
        check_int("row", self.row, 1, 5)
        check_int("stones", self.stones, 1, 24)

    def label(self) -> str:
        return f"scatter {_plural(self.stones, 'crow stone')} in row {self.row}"


@dataclass(frozen=True, slots=True)
class MoveToEmpty(Action):
    """Move the pawn to an empty space of the next column, taking nothing.

    Only legal when the next column offers no card and no crow Stones (possible
    only when a deck ran dry; see docs/rules/floriferous.md).

    Attributes:
        row: rulebook row number.
    """

    KIND: ClassVar[str] = "move_empty"
    row: int

    def __post_init__(self) -> None:
        check_int("row", self.row, 1, 5)

    def label(self) -> str:
        return f"move to the empty space in row {self.row}"


@dataclass(frozen=True, slots=True)
class TossTea(Action):
    """Solo: decide, before the Crow Action card is revealed, whether to toss the
    Cup of Tea to skip this round's crow (Rulebook: "Tossing Tea").

    Attributes:
        toss: True tosses the Cup of Tea (no crow this round, no 2 points at the end).
    """

    KIND: ClassVar[str] = "toss_tea"
    toss: bool

    def __post_init__(self) -> None:
        if not isinstance(self.toss, bool):
            raise TypeError(f"toss must be a boolean, not {self.toss!r}")

    def label(self) -> str:
        return "toss the Cup of Tea (skip the crow)" if self.toss else "keep the Cup of Tea"


@dataclass(frozen=True, slots=True)
class PayCrow(Action):
    """Solo, end of day: return Stones to remove as many from the Crow Card
    (Rulebook: "Resolving the Crow", step 2).

    Attributes:
        stones: Stones returned (0 = pay nothing).
    """

    KIND: ClassVar[str] = "pay_crow"
    stones: int

    def __post_init__(self) -> None:
        check_int("stones", self.stones, 0, 24)

    def label(self) -> str:
        return f"pay {_plural(self.stones, 'stone')} to the crow" if self.stones else "pay the crow nothing"


@dataclass(frozen=True, slots=True)
class DiscardCard(Action):
    """Solo, end of day: discard a card of your collection because the Crow Card
    holds 4 or more Stones (Rulebook: "Resolving the Crow", step 3).

    Attributes:
        card: id of a card in the collection.
    """

    KIND: ClassVar[str] = "discard"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"discard {card_name(self.card)}"


ALL_ACTIONS: tuple[type[Action], ...] = (
    RevealBounty, ChooseStartPlayer, DealCard, RevealCrow,
    TakeCard, ScatterStones, MoveToEmpty, TossTea, PayCrow, DiscardCard,
)
"""Every action class of the game (``Game.ACTIONS``)."""

# -- interned instances ----------------------------------------------------------------
DEAL: tuple[DealCard, ...] = tuple(DealCard(c) for c in CARD_IDS)
"""``DEAL[card_index]``."""
REVEAL_BOUNTY: tuple[RevealBounty, ...] = tuple(RevealBounty(b.id) for b in BOUNTIES)
"""``REVEAL_BOUNTY[bounty_index]``."""
REVEAL_CROW: tuple[RevealCrow, ...] = tuple(RevealCrow(c.id) for c in CROW_ACTIONS)
"""``REVEAL_CROW[crow_index]``."""
START: tuple[ChooseStartPlayer, ...] = tuple(ChooseStartPlayer(s) for s in range(4))
"""``START[seat]``."""
TOSS: TossTea = TossTea(True)
KEEP: TossTea = TossTea(False)

# TAKE[(row * (NUM_CARDS + 1) + card_index + 1) * 2 + stones]; card_index -1 = face-down.
TAKE_STRIDE = NUM_CARDS + 1


def _build_take() -> list[TakeCard | None]:
    table: list[TakeCard | None] = [None] * (6 * TAKE_STRIDE * 2)
    for row in range(1, 6):
        for ci in range(-1, NUM_CARDS):
            for st in (0, 1):
                table[(row * TAKE_STRIDE + ci + 1) * 2 + st] = TakeCard(row, CARD_IDS[ci] if ci >= 0 else "", st)
    return table


TAKE_TABLE = _build_take()
"""Interned TakeCard by ``(row * TAKE_STRIDE + card_index + 1) * 2 + stones`` (stones 0 or 1)."""
_TAKES: dict[tuple[int, int, int], TakeCard] = {}
_SCATTERS: dict[tuple[int, int], ScatterStones] = {}


def take(row: int, card_index: int, stones: int) -> TakeCard:
    """Interned :class:`TakeCard` (``card_index`` -1 for a face-down card)."""
    if stones <= 1:
        a = TAKE_TABLE[(row * TAKE_STRIDE + card_index + 1) * 2 + stones]
        assert a is not None
        return a
    key = (row, card_index, stones)
    got = _TAKES.get(key)
    if got is None:
        got = _TAKES[key] = TakeCard(row, CARD_IDS[card_index] if card_index >= 0 else "", stones)
    return got


def scatter(row: int, stones: int) -> ScatterStones:
    """Interned :class:`ScatterStones`."""
    key = (row, stones)
    got = _SCATTERS.get(key)
    if got is None:
        got = _SCATTERS[key] = ScatterStones(row, stones)
    return got


MOVE_EMPTY: tuple[MoveToEmpty | None, ...] = (None,) + tuple(MoveToEmpty(r) for r in range(1, 6))
"""``MOVE_EMPTY[row]``."""
PAY: tuple[PayCrow, ...] = tuple(PayCrow(n) for n in range(25))
"""``PAY[stones]``."""
DISCARD: tuple[DiscardCard, ...] = tuple(DiscardCard(c) for c in CARD_IDS)
"""``DISCARD[card_index]``."""
