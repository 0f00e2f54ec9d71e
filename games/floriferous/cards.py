"""Floriferous card data, loaded from ``cards.json`` at import.

Rulebook: Floriferous, "Contents", "Flower Cards", "Scoring Guide", "Desire
Cards", "Completing Bounty Cards" and "The Pesky Guest". The card faces come
from the publicly known Floriferous card list (provenance
``public-transcription``); the five Sculpture cards carry no data beyond what
the rulebook prints (provenance ``rulebook``).

Every Garden and Desire card has a string id (``F01``..``F50`` Flowers,
``A1``..``A5`` Arrangements, ``S1``..``S5`` Sculptures, ``D01``..``D21``
Desires) and a dense integer index used by the engine's hot path:
Garden cards are 0..59, Desire cards 60..80. Bounty cards (``B1``..``B9``) and
Crow Action cards (``C1``..``C9``) have their own indexes 0..8.

Module constants (all immutable, indexed by card index):

* :data:`CARDS`, :data:`CARD_INDEX` — records and ``id -> index``.
* :data:`FLOWER_OF`, :data:`COLOR_OF`, :data:`BUG_OF` — aspect numbers
  (0..4, see :data:`FLOWERS` / :data:`COLORS` / :data:`BUGS`) of Flower and
  Arrangement cards, ``-1`` where absent (no bug, or not such a card).
* :data:`KIND_OF` — one of :data:`K_FLOWER`, :data:`K_ARRANGEMENT`,
  :data:`K_SCULPTURE`, :data:`K_DESIRE`.
* :data:`BOUNTIES`, :data:`BOUNTY_INDEX`, :data:`BOUNTY_MATCH`,
  :data:`CROW_ACTIONS`, :data:`CROW_INDEX`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

FLOWERS: tuple[str, ...] = ("Daisy", "Lily", "Mum", "Poppy", "Tulip")
"""The five flowers (Rulebook: "Flower Cards"), in aspect-number order."""
COLORS: tuple[str, ...] = ("White", "Yellow", "Orange", "Pink", "Purple")
"""The five colors, in aspect-number order."""
BUGS: tuple[str, ...] = ("Bee", "Beetle", "Butterfly", "Ladybug", "Moth")
"""The five bugs, in aspect-number order."""

K_FLOWER, K_ARRANGEMENT, K_SCULPTURE, K_DESIRE = 0, 1, 2, 3
"""Integer card kinds used in :data:`KIND_OF`."""

DATA_FILE = Path(__file__).with_name("cards.json")
"""The card data file shipped inside the package."""

PROVENANCES = ("rulebook", "public-transcription", "stand-in")
"""Allowed ``provenance`` values of a card record (docs/rules/floriferous.md)."""


class CardType(str, Enum):
    """Kind of a Floriferous card (Rulebook: "Contents")."""

    FLOWER = "flower"
    ARRANGEMENT = "arrangement"
    SCULPTURE = "sculpture"
    DESIRE = "desire"
    BOUNTY = "bounty"
    CROW = "crow"


class DesireCategory(str, Enum):
    """The nine kinds of Desire card (Rulebook: "Desire Cards")."""

    FLOWER = "flower"
    COLOR = "color"
    BUG = "bug"
    SAME_FLOWER = "same_flower"
    DIFFERENT_FLOWERS = "different_flowers"
    SAME_COLOR = "same_color"
    DIFFERENT_COLORS = "different_colors"
    SAME_BUG = "same_bug"
    DIFFERENT_BUGS = "different_bugs"


class CrowRow(str, Enum):
    """The garden row a Crow Action card names (Rulebook: "The Pesky Guest")."""

    TOP = "top"
    MIDDLE = "middle"
    DESIRE = "desire"


@dataclass(frozen=True, slots=True)
class Card:
    """A Garden card (Flower, Arrangement, Sculpture) or a Desire card.

    Attributes:
        id: our id, e.g. ``"F28"``, ``"A3"``, ``"S1"``, ``"D16"``.
        index: dense index, 0..59 for Garden cards, 60..80 for Desire cards.
        type: the card type.
        flower / color / bug: aspects of Flower and Arrangement cards
            (``bug`` is None on Flower cards without a bug).
        category / target: Desire cards only; ``target`` names the flower,
            color or bug of a per-card Desire, None for set Desires.
        per_card: points per matching card (per-card Desires), else 0.
        table: points for a largest set of 0..5 cards (set Desires), or the
            1/3/5 ladder indexed by matched aspects (Arrangements), else ().
        provenance: ``rulebook``, ``public-transcription`` or ``stand-in``.
    """

    id: str
    index: int
    type: CardType
    flower: str | None = None
    color: str | None = None
    bug: str | None = None
    category: DesireCategory | None = None
    target: str | None = None
    per_card: int = 0
    table: tuple[int, ...] = ()
    provenance: str = "public-transcription"

    @property
    def name(self) -> str:
        """Short human name, e.g. ``"Pink Mum (Bee)"`` or ``"Desire D16 (Same Flower)"``."""
        if self.type is CardType.FLOWER:
            base = f"{self.color} {self.flower}"
            return f"{base} ({self.bug})" if self.bug else base
        if self.type is CardType.ARRANGEMENT:
            return f"Arrangement {self.id} ({self.flower}, {self.color}, {self.bug})"
        if self.type is CardType.SCULPTURE:
            return f"Sculpture {self.id}"
        assert self.category is not None
        what = self.target or self.category.value.replace("_", " ").title()
        return f"Desire {self.id} ({what})"


@dataclass(frozen=True, slots=True)
class Bounty:
    """A Bounty card (Rulebook: "Completing Bounty Cards").

    Attributes:
        id: ``"B1"``..``"B9"``.
        index: 0..8.
        requirements: three flower or bug names; each must be met by a
            different Flower card.
        points: points of the day-1, day-2 and day-3 columns.
        provenance: see :class:`Card`.
    """

    id: str
    index: int
    requirements: tuple[str, str, str]
    points: tuple[int, int, int]
    provenance: str

    @property
    def name(self) -> str:
        """E.g. ``"Bounty B6 (Lily, Lily, Ladybug)"``."""
        return f"Bounty {self.id} ({', '.join(self.requirements)})"


@dataclass(frozen=True, slots=True)
class CrowAction:
    """A Crow Action card of the solo mode (Rulebook: "The Pesky Guest").

    Attributes:
        id: ``"C1"``..``"C9"``.
        index: 0..8.
        row: the garden row it names.
        replacement: ``"card"`` (a face-down card from the matching deck) or
            ``"stones"``.
        stones: crow stones placed (1 or 2) when ``replacement == "stones"``.
        provenance: see :class:`Card`.
    """

    id: str
    index: int
    row: CrowRow
    replacement: str
    stones: int
    provenance: str

    @property
    def name(self) -> str:
        """E.g. ``"Crow C4 (middle row: face-down card)"``."""
        what = "face-down card" if self.replacement == "card" else f"{self.stones} stone" + (
            "s" if self.stones > 1 else ""
        )
        return f"Crow {self.id} ({self.row.value} row: {what})"


class CardDataError(ValueError):
    """``cards.json`` is malformed (raised at import)."""


def _load(path: Path) -> tuple[list[Card], list[Bounty], list[CrowAction]]:
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if raw.get("format") != "parterre-cards/1" or raw.get("game") != "floriferous":
        raise CardDataError(f"{path}: not a Floriferous card file")
    garden: list[Card] = []
    desires: list[Card] = []
    bounties: list[Bounty] = []
    crows: list[CrowAction] = []
    for rec in raw["cards"]:
        prov = rec.get("provenance")
        if prov not in PROVENANCES:
            raise CardDataError(f"{rec.get('id')}: bad provenance {prov!r}")
        kind = CardType(rec["type"])
        if kind in (CardType.FLOWER, CardType.ARRANGEMENT):
            if rec["flower"] not in FLOWERS or rec["color"] not in COLORS:
                raise CardDataError(f"{rec['id']}: bad aspects")
            if rec.get("bug") is not None and rec["bug"] not in BUGS:
                raise CardDataError(f"{rec['id']}: bad bug")
            garden.append(
                Card(
                    rec["id"], len(garden), kind, rec["flower"], rec["color"], rec.get("bug"),
                    table=tuple(rec.get("points", ())), provenance=prov,
                )
            )
        elif kind is CardType.SCULPTURE:
            garden.append(Card(rec["id"], len(garden), kind, provenance=prov))
        elif kind is CardType.DESIRE:
            desires.append(
                Card(
                    rec["id"], 0, kind, category=DesireCategory(rec["category"]),
                    target=rec.get("target"), per_card=int(rec.get("per_card", 0)),
                    table=tuple(rec.get("table", ())), provenance=prov,
                )
            )
        elif kind is CardType.BOUNTY:
            req = tuple(rec["requirements"])
            if len(req) != 3 or any(r not in FLOWERS and r not in BUGS for r in req):
                raise CardDataError(f"{rec['id']}: bad requirements")
            bounties.append(Bounty(rec["id"], len(bounties), req, tuple(rec["points"]), prov))
        else:
            crows.append(
                CrowAction(rec["id"], len(crows), CrowRow(rec["row"]), rec["replacement"], int(rec["stones"]), prov)
            )
    offset = len(garden)
    desires = [
        Card(d.id, offset + i, d.type, category=d.category, target=d.target, per_card=d.per_card,
             table=d.table, provenance=d.provenance)
        for i, d in enumerate(desires)
    ]
    return garden + desires, bounties, crows


_cards, _bounties, _crows = _load(DATA_FILE)

CARDS: tuple[Card, ...] = tuple(_cards)
"""Every Garden card then every Desire card, indexed by :attr:`Card.index`."""
CARD_IDS: tuple[str, ...] = tuple(c.id for c in CARDS)
"""Card id by index."""
CARD_INDEX: dict[str, int] = {c.id: c.index for c in CARDS}
"""Card index by id."""
GARDEN_CARDS: tuple[int, ...] = tuple(c.index for c in CARDS if c.type is not CardType.DESIRE)
"""Indexes of the 60 Garden cards (the Garden deck of a multiplayer game)."""
SOLO_GARDEN_CARDS: tuple[int, ...] = tuple(c.index for c in CARDS if c.type in (CardType.FLOWER, CardType.ARRANGEMENT))
"""The solo Garden deck: Sculptures removed (Rulebook: "Solo Setup", step 1)."""
DESIRE_CARDS: tuple[int, ...] = tuple(c.index for c in CARDS if c.type is CardType.DESIRE)
"""Indexes of the 21 Desire cards."""
FIRST_DESIRE: int = DESIRE_CARDS[0]
"""Index of the first Desire card; every index >= this is a Desire card."""
NUM_CARDS: int = len(CARDS)
"""Number of Garden + Desire cards (81)."""

_KIND = {CardType.FLOWER: K_FLOWER, CardType.ARRANGEMENT: K_ARRANGEMENT,
         CardType.SCULPTURE: K_SCULPTURE, CardType.DESIRE: K_DESIRE}
KIND_OF: tuple[int, ...] = tuple(_KIND[c.type] for c in CARDS)
FLOWER_OF: tuple[int, ...] = tuple(FLOWERS.index(c.flower) if c.flower else -1 for c in CARDS)
COLOR_OF: tuple[int, ...] = tuple(COLORS.index(c.color) if c.color else -1 for c in CARDS)
BUG_OF: tuple[int, ...] = tuple(BUGS.index(c.bug) if c.bug else -1 for c in CARDS)

BOUNTIES: tuple[Bounty, ...] = tuple(_bounties)
"""The nine Bounty cards by index."""
BOUNTY_INDEX: dict[str, int] = {b.id: b.index for b in BOUNTIES}


def _requirement_matches(req: str, card: Card) -> bool:
    if card.type is not CardType.FLOWER:
        return False
    return card.flower == req or card.bug == req


BOUNTY_MATCH: tuple[bytes, ...] = tuple(
    bytes(
        sum(1 << k for k, req in enumerate(b.requirements) if _requirement_matches(req, c)) for c in CARDS
    )
    for b in BOUNTIES
)
"""``BOUNTY_MATCH[bounty][card]``: bit k set when the card can fill requirement k.

Only Flower cards fill requirements (Rulebook: "Completing Bounty Cards":
"has Flower Cards with flowers and/or bugs that match the requirements")."""

CROW_ACTIONS: tuple[CrowAction, ...] = tuple(_crows)
"""The nine Crow Action cards by index."""
CROW_INDEX: dict[str, int] = {c.id: c.index for c in CROW_ACTIONS}


def card(card_id: str) -> Card:
    """The Garden or Desire card with this id.

    Raises:
        KeyError: unknown id.
    """
    return CARDS[CARD_INDEX[card_id]]


def card_name(card_id: str) -> str:
    """Human name of a Garden/Desire card id; ``"face-down card"`` for ``""``."""
    if not card_id:
        return "face-down card"
    index = CARD_INDEX.get(card_id)
    return CARDS[index].name if index is not None else card_id
