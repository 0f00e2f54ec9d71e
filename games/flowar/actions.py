"""Flowar actions: small frozen values with a canonical JSON form.

Each class's JSON (``Action.to_json``) is exactly the ``parterre.v1.FlowarAction``
protobuf message: ``kind`` plus that class's fields (the message holds the
union of all fields). Names of things are the rulebook's: worker types
``trenti``/``human``/``fox``, spaces ``contract``, ``market``, ``travel_K1``..
``travel_K3``, ``fellowship`` (Main Board) and ``maintenance``, ``sell``,
``payoff``, ``guild`` (Player Board), grid lines ``row1``..``col3``.

Chance actions (the referee samples them; Rulebook: "Game Setup", "Round
Setup"): :class:`DealFavor`, :class:`DrawEfficiency`, :class:`DrawFlower`,
:class:`DrawContract`, :class:`DrawGuild`, :class:`DrawWorkers`,
:class:`ChooseStartPlayer`, :class:`RevealTaxus`. Every other class is a
decision of a seat. Combinatorial choices are sequences of small decisions
(docs/architecture.md, "games: the rules engines"): a delivery is :class:`Deliver` per Contract, then
:class:`UseBasket`/:class:`Exchange`/:class:`Wildcard` per Basket.

The engine uses interned instances (:func:`make`), so the hot path neither
builds dataclasses nor compares them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from games.action_fields import check_int, check_str, interned
from games.api import Action
from games.flowar.cards import WORKERS

SPACES: tuple[str, ...] = (
    "contract", "market", "travel_K1", "travel_K2", "travel_K3", "fellowship",
    "maintenance", "sell", "payoff", "guild",
)
"""Action Spaces by space code (0..4 typed Main Board spaces, 5 Fellowship, 6..9 Player Board)."""
SPACE_INDEX = {s: i for i, s in enumerate(SPACES)}
LINES: tuple[str, ...] = ("row1", "row2", "row3", "col1", "col2", "col3")
"""Grid lines (the Contract grid is 2x2: rows 1-2, columns 1-2)."""


# -- chance ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DealFavor(Action):
    """Chance: the next Kingdom Favor slot gets Favor ``favor`` (Rulebook: "Game Setup", step 3).

    Slots are filled kingdom by kingdom: the three on the Travel Petal, then
    the three beside it (used from round 3).
    """

    KIND: ClassVar[str] = "deal_favor"
    favor: int

    def __post_init__(self) -> None:
        check_int("favor", self.favor, 1, 20)

    def label(self) -> str:
        return f"Kingdom Favor {self.favor}"


@dataclass(frozen=True, slots=True)
class DrawEfficiency(Action):
    """Chance: the next kingdom gets an Efficiency Tile worth ``value`` MP (3, 4 or 5)."""

    KIND: ClassVar[str] = "draw_efficiency"
    value: int

    def __post_init__(self) -> None:
        check_int("value", self.value, 3, 5)

    def label(self) -> str:
        return f"Efficiency Tile {self.value}"


@dataclass(frozen=True, slots=True)
class DrawFlower(Action):
    """Chance: a Flower card from the deck (to the Market grid or a player's Baskets)."""

    KIND: ClassVar[str] = "draw_flower"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"draw {self.card}"


@dataclass(frozen=True, slots=True)
class DrawContract(Action):
    """Chance: a Contract card (dealt to a player, or to a Contract grid space)."""

    KIND: ClassVar[str] = "draw_contract"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"draw {self.card}"


@dataclass(frozen=True, slots=True)
class DrawGuild(Action):
    """Chance: Guild Tile ``guild`` is drawn (Rulebook: "Game Setup", step 8; solo: each round)."""

    KIND: ClassVar[str] = "draw_guild"
    guild: int

    def __post_init__(self) -> None:
        check_int("guild", self.guild, 1, 5)

    def label(self) -> str:
        return f"Guild Tile {self.guild}"


@dataclass(frozen=True, slots=True)
class DrawWorkers(Action):
    """Chance: the Workers drawn from the bag onto the next Guild Tile (Rulebook:
    "Game Setup", step 10; "Round Setup"): five, or all that remain.

    One chance node per tile; its outcomes are the possible compositions, with
    the multivariate hypergeometric probabilities of drawing them one by one.

    Attributes:
        trentis / humans / foxes: Workers of each type drawn.
    """

    KIND: ClassVar[str] = "draw_workers"
    trentis: int
    humans: int
    foxes: int

    def __post_init__(self) -> None:
        for name in ("trentis", "humans", "foxes"):
            check_int(name, getattr(self, name), 0, 5)
        if self.trentis + self.humans + self.foxes > 5:
            raise ValueError("at most 5 workers per Guild Tile")

    def label(self) -> str:
        return f"Workers from the bag: {self.trentis} trenti, {self.humans} human, {self.foxes} fox"


@dataclass(frozen=True, slots=True)
class ChooseStartPlayer(Action):
    """Chance: the first player (Rulebook: "Game Setup", step 11: "at random")."""

    KIND: ClassVar[str] = "start_player"
    seat: int

    def __post_init__(self) -> None:
        check_int("seat", self.seat, 0, 3)

    def label(self) -> str:
        return f"first player: seat {self.seat}"


@dataclass(frozen=True, slots=True)
class RevealTaxus(Action):
    """Chance (solo): Taxus reveals card ``taxus`` (Rulebook: "Taxus Cards")."""

    KIND: ClassVar[str] = "reveal_taxus"
    taxus: str

    def __post_init__(self) -> None:
        check_str("taxus", self.taxus)

    def label(self) -> str:
        return f"Taxus reveals {self.taxus}"


# -- decisions -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class KeepContract(Action):
    """Setup: keep Contract ``card`` of the two dealt (Rulebook: "Game Setup", step 7)."""

    KIND: ClassVar[str] = "keep_contract"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"keep {self.card}"


@dataclass(frozen=True, slots=True)
class ChooseGuild(Action):
    """Take Guild Tile ``guild`` and its five Workers for this round (Rulebook: "Round Setup")."""

    KIND: ClassVar[str] = "choose_guild"
    guild: int

    def __post_init__(self) -> None:
        check_int("guild", self.guild, 1, 5)

    def label(self) -> str:
        return f"choose Guild Tile {self.guild}"


@dataclass(frozen=True, slots=True)
class PayStrike(Action):
    """Pay 1 Coin each to keep ``count`` Workers of the striking type; the rest
    join the Strike Area (Rulebook: "Strikes")."""

    KIND: ClassVar[str] = "pay_strike"
    count: int

    def __post_init__(self) -> None:
        check_int("count", self.count, 0, 30)

    def label(self) -> str:
        return f"pay {self.count} to keep {self.count} worker(s)"


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass at the beginning of the turn (Rulebook: "Passing Your Turn")."""

    KIND: ClassVar[str] = "pass"

    def label(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Place(Action):
    """Place a ``worker`` on ``space`` paying ``coins`` (Rulebook: "Placing a Worker").

    ``coins`` is what the placement costs now: Workers on the space including
    this one, +1 when its type is on strike (all three Travel spaces in a
    2-player or solo game), plus the Guild's flower price on the Market; 0 on
    the Player Board. A Worker of another type than the space's is Unqualified
    Practice (a second Worker of its type goes to the Strike Area).
    """

    KIND: ClassVar[str] = "place"
    space: str
    worker: str
    coins: int

    def __post_init__(self) -> None:
        check_str("space", self.space, SPACES)
        check_str("worker", self.worker, WORKERS)
        check_int("coins", self.coins, 0, 99)

    def label(self) -> str:
        return f"place {self.worker} on {self.space} ({self.coins} coins)"


@dataclass(frozen=True, slots=True)
class EndTurn(Action):
    """End the turn (after the mandatory Worker placement)."""

    KIND: ClassVar[str] = "end_turn"

    def label(self) -> str:
        return "end turn"


@dataclass(frozen=True, slots=True)
class Fire(Action):
    """Fire up to 3 Workers of your Guild Tile (Rulebook: "Firing Workers").

    Attributes:
        trentis / humans / foxes: Workers fired per type (1 to 3 in all).
    """

    KIND: ClassVar[str] = "fire"
    trentis: int
    humans: int
    foxes: int

    def __post_init__(self) -> None:
        for name in ("trentis", "humans", "foxes"):
            check_int(name, getattr(self, name), 0, 3)
        if not 1 <= self.trentis + self.humans + self.foxes <= 3:
            raise ValueError("fire 1 to 3 workers")

    def label(self) -> str:
        parts = [f"{n} {w}" for n, w in zip((self.trentis, self.humans, self.foxes), WORKERS, strict=True) if n]
        return "fire " + ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Hire(Action):
    """Hire a ``worker`` from the Strike Area (Rulebook: "Hiring Workers")."""

    KIND: ClassVar[str] = "hire"
    worker: str

    def __post_init__(self) -> None:
        check_str("worker", self.worker, WORKERS)

    def label(self) -> str:
        return f"hire a {self.worker}"


@dataclass(frozen=True, slots=True)
class TakeLoan(Action):
    """Take out a Loan: +5 Coins, +1 Torch (Rulebook: "Loans")."""

    KIND: ClassVar[str] = "take_loan"

    def label(self) -> str:
        return "take out a loan"


@dataclass(frozen=True, slots=True)
class UseFavor(Action):
    """Discard a Contract delivered in ``kingdom`` (1..3) to use its Favor ``favor``
    (Rulebook: "Using a Kingdom Favor")."""

    KIND: ClassVar[str] = "use_favor"
    kingdom: int
    favor: int

    def __post_init__(self) -> None:
        check_int("kingdom", self.kingdom, 1, 3)
        check_int("favor", self.favor, 1, 20)

    def label(self) -> str:
        return f"use Kingdom Favor {self.favor} of K{self.kingdom}"


@dataclass(frozen=True, slots=True)
class TakeLine(Action):
    """Take a row or column of the Market (3x3) or Contract (2x2) grid."""

    KIND: ClassVar[str] = "take_line"
    line: str

    def __post_init__(self) -> None:
        check_str("line", self.line, LINES)

    def label(self) -> str:
        return f"take {self.line}"


@dataclass(frozen=True, slots=True)
class TakeCard(Action):
    """Take the card in grid ``slot`` (1-based, reading order): Guild actions
    and Kingdom Favor 3's free picks."""

    KIND: ClassVar[str] = "take_card"
    slot: int
    card: str

    def __post_init__(self) -> None:
        check_int("slot", self.slot, 1, 9)
        check_str("card", self.card)

    def label(self) -> str:
        return f"take {self.card} (slot {self.slot})"


@dataclass(frozen=True, slots=True)
class DiscardContract(Action):
    """Discard Contract ``card`` from the Contract Area (more than 4 held)."""

    KIND: ClassVar[str] = "discard_contract"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"discard {self.card}"


@dataclass(frozen=True, slots=True)
class Deliver(Action):
    """Travel: fulfil Contract ``card``; pays any new transport now (Rulebook: "Travel Petal")."""

    KIND: ClassVar[str] = "deliver"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"deliver {self.card}"


@dataclass(frozen=True, slots=True)
class FinishDelivery(Action):
    """Travel: stop choosing Contracts and collect the rewards."""

    KIND: ClassVar[str] = "finish_delivery"

    def label(self) -> str:
        return "finish delivery"


@dataclass(frozen=True, slots=True)
class UseBasket(Action):
    """Use one Basket of Flower card ``card`` (for the current requirement, or as
    one of the three Baskets of an exchange)."""

    KIND: ClassVar[str] = "basket"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"use a basket of {self.card}"


@dataclass(frozen=True, slots=True)
class Exchange(Action):
    """Pay the current requirement with any three Baskets (three picks follow)."""

    KIND: ClassVar[str] = "exchange"

    def label(self) -> str:
        return "exchange 3 baskets for 1"


@dataclass(frozen=True, slots=True)
class Wildcard(Action):
    """Kingdom Favor 8: the discarded fulfilled Contract is the current Basket."""

    KIND: ClassVar[str] = "wildcard"

    def label(self) -> str:
        return "use the fulfilled contract as a basket"


@dataclass(frozen=True, slots=True)
class Sell(Action):
    """Sell Flower card ``card`` for 1 Coin per Basket (Rulebook: "Selling flowers")."""

    KIND: ClassVar[str] = "sell"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"sell {self.card}"


@dataclass(frozen=True, slots=True)
class FinishSelling(Action):
    """Stop selling flowers."""

    KIND: ClassVar[str] = "finish_selling"

    def label(self) -> str:
        return "finish selling"


@dataclass(frozen=True, slots=True)
class ExchangeMP(Action):
    """Passing: buy ``mp`` MP with Coins at the round's rate (Rulebook: "Passing Your Turn", step 4)."""

    KIND: ClassVar[str] = "exchange_mp"
    mp: int

    def __post_init__(self) -> None:
        check_int("mp", self.mp, 0, 10)

    def label(self) -> str:
        return f"exchange coins for {self.mp} MP"


@dataclass(frozen=True, slots=True)
class SpendMP(Action):
    """Kingdom Favor 20: spend ``mp`` MP (1..3) for 3 Coins each."""

    KIND: ClassVar[str] = "spend_mp"
    mp: int

    def __post_init__(self) -> None:
        check_int("mp", self.mp, 1, 3)

    def label(self) -> str:
        return f"spend {self.mp} MP for {3 * self.mp} coins"


@dataclass(frozen=True, slots=True)
class SwapWorker(Action):
    """Kingdom Favor 19: ``give`` a Worker of your Guild Tile for a ``take`` Worker of the Strike Area."""

    KIND: ClassVar[str] = "swap_worker"
    give: str
    take: str

    def __post_init__(self) -> None:
        check_str("give", self.give, WORKERS)
        check_str("take", self.take, WORKERS)

    def label(self) -> str:
        return f"swap a {self.give} for a striking {self.take}"


CHANCE_ACTIONS: tuple[type[Action], ...] = (
    DealFavor, DrawEfficiency, DrawFlower, DrawContract, DrawGuild, DrawWorkers, ChooseStartPlayer, RevealTaxus,
)
DECISION_ACTIONS: tuple[type[Action], ...] = (
    KeepContract, ChooseGuild, PayStrike, Pass, Place, EndTurn, Fire, Hire, TakeLoan, UseFavor, TakeLine,
    TakeCard, DiscardContract, Deliver, FinishDelivery, UseBasket, Exchange, Wildcard, Sell, FinishSelling,
    ExchangeMP, SpendMP, SwapWorker,
)
ALL_ACTIONS: tuple[type[Action], ...] = CHANCE_ACTIONS + DECISION_ACTIONS
"""Every action class of the game (``Game.ACTIONS``)."""



PASS = Pass()
END_TURN = EndTurn()
TAKE_LOAN = TakeLoan()
FINISH_DELIVERY = FinishDelivery()
EXCHANGE = Exchange()
WILDCARD = Wildcard()
FINISH_SELLING = FinishSelling()


_A = TypeVar("_A", bound=Action)


def make(cls: type[_A], *fields: Any) -> _A:
    """The interned instance ``cls(*fields)`` (:func:`games.action_fields.interned`).

    A function rather than an alias of it: mypyc cannot type a module-level alias here.
    """
    return interned(cls, *fields)
