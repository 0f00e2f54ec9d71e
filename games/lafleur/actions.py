"""La Fleur actions: small frozen values with a canonical JSON form.

Each class's JSON (``Action.to_json``) is exactly the ``parterre.v1.LaFleurAction``
protobuf message (``kind`` plus that class's fields; the message holds the
union of all fields). Card ids name cards (``games/lafleur/cards.json``);
Allure types and locations are their lower-case names
(:data:`games.lafleur.cards.ALLURE`, :data:`games.lafleur.cards.LOCATIONS`).

Chance: :class:`Draw` (any deck), :class:`FirstPlayer`. Setup decisions:
:class:`ChooseCharacter`, :class:`KeepArtisans`. A turn: :class:`Place`, then
the location's steps: :class:`BuyFlower`; :class:`RevealFeature`,
:class:`BuyFeature` and the payment steps :class:`PayArtisan`,
:class:`PayFlower`, :class:`PayPair` + 2 × :class:`PairCard`,
:class:`PayDiscount`; :class:`HireArtisan`, :class:`ReplaceArtisan`,
:class:`SwapArtisan`; :class:`Invite`. Effects: :class:`TakeFlower`,
:class:`Accept`, :class:`Choose`, :class:`DiscardFlower`. :class:`Done` ends
an optional step (buy nothing, no second purchase).

The engine uses interned instances (:func:`intern`) so that the hot path
compares actions by identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from games.action_fields import check_bool, check_int, check_str, interned
from games.api import Action
from games.lafleur.cards import ALLURE, ARTISANS, DECK_NAMES, FEATURES, FLOWERS, LOCATIONS, VISITORS, card_name

_ALLURE_OR_NONE = ("", *ALLURE)


# -- chance --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Draw(Action):
    """Chance: the next card of a deck (Rulebook: "Game Board Setup": every deck is shuffled).

    Where the card goes (a Flower space, a hand, the Visitor area, ...) is fixed
    by the state; the observation of other seats never shows a private card.

    Attributes:
        deck: ``flower``, ``feature``, ``visitor``, ``artisan``, ``character`` or ``event``.
        card: the card id drawn.
    """

    KIND: ClassVar[str] = "draw"
    deck: str
    card: str

    def __post_init__(self) -> None:
        check_str("deck", self.deck, DECK_NAMES)
        check_str("card", self.card)

    def label(self) -> str:
        return f"draw {self.deck}: {card_name(self.card)}"


@dataclass(frozen=True, slots=True)
class FirstPlayer(Action):
    """Chance: who receives the First Player pawn (Rulebook: "Player Setup", FIRST PLAYER).

    Attributes:
        seat: the first player of round 1.
    """

    KIND: ClassVar[str] = "first_player"
    seat: int

    def __post_init__(self) -> None:
        check_int("seat", self.seat, 0, 3)

    def label(self) -> str:
        return f"first player: seat {self.seat}"


# -- setup -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ChooseCharacter(Action):
    """Keep 1 of the 2 dealt Character cards (Rulebook: "Player Setup"); hidden until all chose.

    Attributes:
        card: Character id.
    """

    KIND: ClassVar[str] = "choose_character"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"choose {card_name(self.card)}"


@dataclass(frozen=True, slots=True)
class KeepArtisans(Action):
    """Keep 2 of the 3 dealt Artisan cards (Rulebook: "Player Setup"); hidden until all chose.

    Attributes:
        cards: the two Artisan ids kept, in card order.
    """

    KIND: ClassVar[str] = "keep_artisans"
    cards: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.cards, tuple) or len(self.cards) != 2:
            raise ValueError(f"cards must be two Artisan ids, not {self.cards!r}")
        for c in self.cards:
            check_str("cards", c)

    def label(self) -> str:
        return "keep " + " and ".join(card_name(c) for c in self.cards)


# -- a turn ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Place(Action):
    """Place an Artisan's pawn on a location (Rulebook: "Artisans", PLACING AN ARTISAN).

    Attributes:
        artisan: the Artisan card id.
        location: a location name.
    """

    KIND: ClassVar[str] = "place"
    artisan: str
    location: str

    def __post_init__(self) -> None:
        check_str("artisan", self.artisan)
        check_str("location", self.location, LOCATIONS)

    def label(self) -> str:
        return f"{card_name(self.artisan)} to {self.location.replace('_', ' ')}"


@dataclass(frozen=True, slots=True)
class BuyFlower(Action):
    """Buy a Flower card at the Flower Market (Rulebook: "Flower Market").

    Attributes:
        space: face-up space 1..4, or 0 for the top of the deck.
        card: the face-up card's id, ``""`` for the deck.
    """

    KIND: ClassVar[str] = "buy_flower"
    space: int
    card: str

    def __post_init__(self) -> None:
        check_int("space", self.space, 0, 4)
        check_str("card", self.card)

    def label(self) -> str:
        return f"buy {card_name(self.card)}" + (f" (space {self.space})" if self.space else " from the deck")


@dataclass(frozen=True, slots=True)
class RevealFeature(Action):
    """Pay 1 Coin to reveal a Garden Feature into an empty space (Rulebook: "Garden Features")."""

    KIND: ClassVar[str] = "reveal_feature"

    def label(self) -> str:
        return "reveal a Garden Feature"


@dataclass(frozen=True, slots=True)
class BuyFeature(Action):
    """Choose the face-up Garden Feature to buy; payment steps follow.

    Attributes:
        space: Garden Feature space 1..5.
        card: the Garden Feature's id.
    """

    KIND: ClassVar[str] = "buy_feature"
    space: int
    card: str

    def __post_init__(self) -> None:
        check_int("space", self.space, 1, 5)
        check_str("card", self.card)

    def label(self) -> str:
        return f"buy {card_name(self.card)}"


@dataclass(frozen=True, slots=True)
class PayArtisan(Action):
    """Tilt an Artisan to pay one symbol of its type (Rulebook: "Purchasing a Garden Feature", 2).

    Attributes:
        artisan: the Artisan id.
        allure: its Allure type (the symbol paid).
    """

    KIND: ClassVar[str] = "pay_artisan"
    artisan: str
    allure: str

    def __post_init__(self) -> None:
        check_str("artisan", self.artisan)
        check_str("allure", self.allure, ALLURE)

    def label(self) -> str:
        return f"pay {self.allure} with {card_name(self.artisan)}"


@dataclass(frozen=True, slots=True)
class PayFlower(Action):
    """Discard a Flower card to pay what it can (Rulebook: "Purchasing a Garden Feature", 1).

    Attributes:
        card: Flower card id from the hand.
        allure: for a Wild card the type it pays; ``""`` otherwise (the card
            pays every needed symbol it shows).
    """

    KIND: ClassVar[str] = "pay_flower"
    card: str
    allure: str

    def __post_init__(self) -> None:
        check_str("card", self.card)
        check_str("allure", self.allure, _ALLURE_OR_NONE)

    def label(self) -> str:
        return f"pay with {card_name(self.card)}" + (f" as {self.allure}" if self.allure else "")


@dataclass(frozen=True, slots=True)
class PayPair(Action):
    """Pay one symbol with any 2 Flower cards; two :class:`PairCard` steps name them.

    Attributes:
        allure: the type paid.
    """

    KIND: ClassVar[str] = "pay_pair"
    allure: str

    def __post_init__(self) -> None:
        check_str("allure", self.allure, ALLURE)

    def label(self) -> str:
        return f"pay {self.allure} with 2 Flower cards"


@dataclass(frozen=True, slots=True)
class PairCard(Action):
    """One of the two Flower cards of a :class:`PayPair`.

    Attributes:
        card: Flower card id from the hand.
    """

    KIND: ClassVar[str] = "pair_card"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"discard {card_name(self.card)} (pair)"


@dataclass(frozen=True, slots=True)
class PayDiscount(Action):
    """Use the placed Artisan's ability to pay one symbol of any type (stand-in ability).

    Attributes:
        allure: the type paid.
    """

    KIND: ClassVar[str] = "pay_discount"
    allure: str

    def __post_init__(self) -> None:
        check_str("allure", self.allure, ALLURE)

    def label(self) -> str:
        return f"pay {self.allure} with the Artisan's ability"


@dataclass(frozen=True, slots=True)
class Done(Action):
    """End an optional step: buy no (more) Flower card, buy no Garden Feature."""

    KIND: ClassVar[str] = "done"

    def label(self) -> str:
        return "done"


@dataclass(frozen=True, slots=True)
class HireArtisan(Action):
    """Pay 8 Coins and hire the top Artisan (Rulebook: "Artisan Guild", HIRING A NEW ARTISAN)."""

    KIND: ClassVar[str] = "hire_artisan"

    def label(self) -> str:
        return "hire an Artisan"


@dataclass(frozen=True, slots=True)
class ReplaceArtisan(Action):
    """Pay 4 Coins and draw an Artisan to replace one (Rulebook: "Artisan Guild", REPLACING AN ARTISAN)."""

    KIND: ClassVar[str] = "replace_artisan"

    def label(self) -> str:
        return "replace an Artisan"


@dataclass(frozen=True, slots=True)
class SwapArtisan(Action):
    """Keep the drawn Artisan in place of ``artisan``, or discard it (``""``).

    Attributes:
        artisan: the Artisan id discarded from the Château board, ``""`` to
            discard the new card instead.
    """

    KIND: ClassVar[str] = "swap_artisan"
    artisan: str

    def __post_init__(self) -> None:
        check_str("artisan", self.artisan)

    def label(self) -> str:
        return f"replace {card_name(self.artisan)}" if self.artisan else "discard the new Artisan"


@dataclass(frozen=True, slots=True)
class Invite(Action):
    """Put the pawn on a Visitor (Rulebook: "Special Invitation").

    Attributes:
        visitor: the Visitor id.
        romance: True to romance the Visitor as a Companion (5+ matching Allure).
    """

    KIND: ClassVar[str] = "invite"
    visitor: str
    romance: bool

    def __post_init__(self) -> None:
        check_str("visitor", self.visitor)
        check_bool("romance", self.romance)

    def label(self) -> str:
        return f"{'romance' if self.romance else 'invite'} {card_name(self.visitor)}"


# -- effects -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TakeFlower(Action):
    """Gain a Flower card for free: a face-up one or the top of the deck (Rulebook: "Garden Party", VISITOR EFFECTS).

    Attributes:
        space: face-up space 1..4, or 0 for the deck.
        card: the face-up card's id, ``""`` for the deck.
    """

    KIND: ClassVar[str] = "take_flower"
    space: int
    card: str

    def __post_init__(self) -> None:
        check_int("space", self.space, 0, 4)
        check_str("card", self.card)

    def label(self) -> str:
        return f"take {card_name(self.card)}" + ("" if self.space else " from the deck")


@dataclass(frozen=True, slots=True)
class Accept(Action):
    """Answer the pending yes/no prompt (a conversion offer; solo: using the Character).

    Attributes:
        accept: True to accept.
    """

    KIND: ClassVar[str] = "accept"
    accept: bool

    def __post_init__(self) -> None:
        check_bool("accept", self.accept)

    def label(self) -> str:
        return "yes" if self.accept else "no"


@dataclass(frozen=True, slots=True)
class Choose(Action):
    """Pick one option of the pending choice (e.g. Notre Dame de Paris).

    Attributes:
        option: 0-based option index (the observation's ``prompt.options``).
    """

    KIND: ClassVar[str] = "choose"
    option: int

    def __post_init__(self) -> None:
        check_int("option", self.option, 0, 31)

    def label(self) -> str:
        return f"option {self.option + 1}"


@dataclass(frozen=True, slots=True)
class DiscardFlower(Action):
    """Discard a Flower card from the hand (to pay a conversion, or when an Event says so).

    Attributes:
        card: Flower card id.
    """

    KIND: ClassVar[str] = "discard_flower"
    card: str

    def __post_init__(self) -> None:
        check_str("card", self.card)

    def label(self) -> str:
        return f"discard {card_name(self.card)}"


ALL_ACTIONS: tuple[type[Action], ...] = (
    Draw, FirstPlayer, ChooseCharacter, KeepArtisans, Place, BuyFlower, RevealFeature, BuyFeature,
    PayArtisan, PayFlower, PayPair, PairCard, PayDiscount, Done, HireArtisan, ReplaceArtisan,
    SwapArtisan, Invite, TakeFlower, Accept, Choose, DiscardFlower,
)
"""Every action class of the game (``Game.ACTIONS``)."""



DONE = Done()
REVEAL = RevealFeature()
HIRE = HireArtisan()
REPLACE = ReplaceArtisan()
YES = Accept(True)
NO = Accept(False)

_A = TypeVar("_A", bound=Action)


def intern(cls: type[_A], *fields: Any) -> _A:
    """The shared instance of ``cls(*fields)`` (:func:`games.action_fields.interned`).

    A function rather than an alias of it: mypyc cannot type a module-level alias here.
    """
    return interned(cls, *fields)


# Tables of interned instances for the hot paths (index -1 means "none": the deck, or no type).
PAY_FLOWER: tuple[tuple[PayFlower, ...], ...] = tuple(
    tuple(intern(PayFlower, c.id, t) for t in ("", *ALLURE)) for c in FLOWERS
)
"""``PAY_FLOWER[card][t + 1]`` (t = -1: a non-Wild card, ``allure == ""``)."""
BUY_FLOWER: tuple[tuple[BuyFlower, ...], ...] = tuple(
    tuple(intern(BuyFlower, sp, c.id) for c in FLOWERS) + (intern(BuyFlower, 0, ""),) for sp in range(5)
)
"""``BUY_FLOWER[space][card]``; ``BUY_FLOWER[0][-1]`` buys from the deck."""
TAKE_FLOWER: tuple[tuple[TakeFlower, ...], ...] = tuple(
    tuple(intern(TakeFlower, sp, c.id) for c in FLOWERS) + (intern(TakeFlower, 0, ""),) for sp in range(5)
)
"""``TAKE_FLOWER[space][card]``; ``TAKE_FLOWER[0][-1]`` takes from the deck."""
BUY_FEATURE: tuple[tuple[BuyFeature, ...], ...] = tuple(
    tuple(intern(BuyFeature, sp, f.id) for f in FEATURES) for sp in range(1, 6)
)
"""``BUY_FEATURE[space - 1][feature]``."""
PAIR_CARD: tuple[PairCard, ...] = tuple(intern(PairCard, c.id) for c in FLOWERS)
DISCARD_FLOWER: tuple[DiscardFlower, ...] = tuple(intern(DiscardFlower, c.id) for c in FLOWERS)
INVITE: tuple[tuple[Invite, Invite], ...] = tuple(
    (intern(Invite, v.id, False), intern(Invite, v.id, True)) for v in VISITORS
)
"""``INVITE[visitor][romance]``."""
PAY_ARTISAN: tuple[tuple[PayArtisan, ...], ...] = tuple(
    tuple(intern(PayArtisan, a.id, t) for t in ALLURE) for a in ARTISANS
)
"""``PAY_ARTISAN[artisan][t]``: the Artisan pays one symbol of Allure type ``t``."""
PAY_PAIR: tuple[PayPair, ...] = tuple(intern(PayPair, t) for t in ALLURE)
"""``PAY_PAIR[t]``."""
PAY_DISCOUNT: tuple[PayDiscount, ...] = tuple(intern(PayDiscount, t) for t in ALLURE)
"""``PAY_DISCOUNT[t]``."""
SWAP_ARTISAN: tuple[SwapArtisan, ...] = tuple(intern(SwapArtisan, a.id) for a in ARTISANS) + (intern(SwapArtisan, ""),)
"""``SWAP_ARTISAN[artisan]``; ``SWAP_ARTISAN[-1]`` swaps none."""
