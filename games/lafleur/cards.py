"""La Fleur card data, loaded from ``cards.json`` at import.

Rulebook: La Fleur, "Game Components" (88 Flower, 55 Garden Feature, 35
Visitor, 20 Artisan, 10 Character and 30 Event cards), "Allure Types",
"Flower Market" (Flower card costs) and "Purchasing a Garden Feature".

No public card list exists: every card the
rulebook names carries its printed data with provenance ``rulebook`` (its
``stand_in_fields`` name what we designed), every other card is a
``stand-in``. Abilities are plain data (``timing``, ``condition``,
``effect``) run by :mod:`games.lafleur.abilities`, which also renders their
text.

Every card has a string id (``F01`` Flower, ``G01`` Garden Feature, ``V01``
Visitor, ``A01`` Artisan, ``C01`` Character, ``E01`` Event) and a dense index
within its type (0-based) used by the engine's hot path.

Allure types are numbered 0..4 in :data:`ALLURE` order. A Flower card's
*layout* (:data:`FLOWER_LAYOUT`) is one integer: ``t`` single, ``5 + t``
double of the same type, ``10 + k`` the k-th unordered pair of distinct
types (:data:`PAIRS`), ``20`` Wild.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Final

ALLURE: tuple[str, ...] = ("architecture", "paths", "water", "flowers", "vistas")
"""The five tracked Allure types (Rulebook: "Allure Types"); Wild exists only on Flower cards."""
ALLURE_INDEX: dict[str, int] = {t: i for i, t in enumerate(ALLURE)}
WILD: Final = "wild"

LOCATIONS: tuple[str, ...] = (
    "flower_market", "garden_features", "artisan_guild", "special_invitation", "prestige", "coin",
)
"""The six board locations (Rulebook: "Locations"), in board order."""
LOC_MARKET: Final = 0
LOC_FEATURES: Final = 1
LOC_GUILD: Final = 2
LOC_INVITE: Final = 3
LOC_PRESTIGE: Final = 4
LOC_COIN: Final = 5
LOCATION_INDEX: dict[str, int] = {name: i for i, name in enumerate(LOCATIONS)}

TIMINGS = ("when_acquired", "when_visited", "end_of_round", "game_end")
"""Garden Feature ability timings (Rulebook: "Garden Feature Ability Types")."""
EVENT_TIMINGS = ("immediate", "round", "end_of_round")
"""Event timings (Rulebook: "Start of Round", step 4)."""
PROVENANCES = ("rulebook", "stand-in")
"""Allowed ``provenance`` values (docs/rules/la-fleur.md; no public transcription exists)."""

PAIRS: tuple[tuple[int, int], ...] = tuple(combinations(range(5), 2))
"""Unordered pairs of distinct Allure types, indexed by ``layout - 10``."""
L_WILD: Final = 20
NUM_LAYOUTS: Final = 21

DATA_FILE = Path(__file__).with_name("cards.json")
"""The card data file shipped inside the package."""

COMPONENT_COUNTS: dict[str, int] = {
    "flower": 88, "feature": 55, "visitor": 35, "artisan": 20, "character": 10, "event": 30,
}
"""Card counts of the rulebook's component list."""


class CardDataError(ValueError):
    """``cards.json`` is malformed (raised at import)."""


@dataclass(frozen=True, slots=True)
class Ability:
    """One ability as data (run by :mod:`games.lafleur.abilities`).

    Attributes:
        timing: a Garden Feature timing (:data:`TIMINGS`), ``end_of_round``
            for Characters, an :data:`EVENT_TIMINGS` value for Events.
        condition: ``None`` or a condition mapping (see abilities module).
        effect: the effect mapping.
    """

    timing: str
    condition: Any
    effect: Any


@dataclass(frozen=True, slots=True)
class FlowerCard:
    """A Flower card (Rulebook: "Flower Market", FLOWER CARD).

    Attributes:
        id / index: ``"F01"`` / 0-based index.
        name / scientific: common and scientific names.
        allure: Allure type names (one or two), or ``("wild",)``.
        cost: Coins at the Flower Market (0, 1 or 2).
        layout: the layout code (module docstring).
        symbols: Allure type indexes on the card (empty for Wild).
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    name: str
    scientific: str
    allure: tuple[str, ...]
    cost: int
    layout: int
    symbols: tuple[int, ...]
    provenance: str


@dataclass(frozen=True, slots=True)
class Feature:
    """A Garden Feature card (Rulebook: "Garden Features", GARDEN FEATURE CARD).

    Attributes:
        id / index: ``"G01"`` / 0-based index.
        name / name_fr: English and French names.
        cost: Allure type indexes of the symbols (price and Château Allure).
        counts: symbols per Allure type (5 integers).
        ability: its one ability.
        solo_excluded: removed in solo (Pergola).
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    name: str
    name_fr: str
    cost: tuple[int, ...]
    counts: tuple[int, ...]
    ability: Ability
    solo_excluded: bool
    provenance: str


@dataclass(frozen=True, slots=True)
class Visitor:
    """A Visitor card (Rulebook: "Special Invitation", VISITOR CARD).

    Attributes:
        id / index: ``"V01"`` / 0-based index.
        name: the Visitor's name.
        allure: Allure type index, -1 for a type-less Visitor.
        visits: for type-less Visitors, whom they visit (``least_prestige``,
            ``most_features``, ``most_artisans``, ``most_total_allure``,
            ``most_hand``); None otherwise.
        effect: effect resolved at the Garden Party.
        solo_excluded: removed in solo (Kai, Catherine).
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    name: str
    allure: int
    visits: str | None
    effect: Any
    solo_excluded: bool
    provenance: str


@dataclass(frozen=True, slots=True)
class Artisan:
    """An Artisan card (Rulebook: "Artisans", ARTISAN CARD).

    Attributes:
        id / index: ``"A01"`` / 0-based index.
        occupation: the Artisan's specialty.
        allure: Allure type index it contributes once per round.
        location: index of its ability location (:data:`LOCATIONS`).
        ability: the ability mapping used at that location.
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    occupation: str
    allure: int
    location: int
    ability: Any
    provenance: str


@dataclass(frozen=True, slots=True)
class Character:
    """A Character card: three End of Round abilities (Rulebook: "End of Round", CHARACTER CARD).

    Attributes:
        id / index: ``"C01"`` / 0-based index.
        name: the Character's name.
        abilities: its abilities, resolved in order.
        solo_opponent: one of the four solo opponents (Rulebook: "Solo Mode").
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    name: str
    abilities: tuple[Ability, ...]
    solo_opponent: bool
    provenance: str


@dataclass(frozen=True, slots=True)
class Event:
    """An Event card (Rulebook: "Start of Round", step 4, EVENT CARD).

    Attributes:
        id / index: ``"E01"`` / 0-based index.
        name: the title.
        ability: timing ``immediate``, ``round`` or ``end_of_round``.
        solo_excluded: removed in solo (five named Events).
        provenance: ``rulebook`` or ``stand-in``.
    """

    id: str
    index: int
    name: str
    ability: Ability
    solo_excluded: bool
    provenance: str


def _layout(allure: list[str]) -> tuple[int, tuple[int, ...]]:
    if allure == [WILD]:
        return L_WILD, ()
    idx = [ALLURE_INDEX[a] for a in allure]
    if len(idx) == 1:
        return idx[0], (idx[0],)
    if len(idx) == 2 and idx[0] == idx[1]:
        return 5 + idx[0], (idx[0], idx[0])
    if len(idx) == 2:
        return 10 + PAIRS.index(tuple(sorted(idx))), tuple(idx)
    raise CardDataError(f"bad flower allure {allure!r}")


def flower_cost(allure: list[str] | tuple[str, ...]) -> int:
    """Flower Market price of a card with these Allure symbols.

    Rulebook: La Fleur, "Flower Market": 2 Allure cost 2 Coins, Wild 1, 1 Allure 0.
    """
    if list(allure) == [WILD]:
        return 1
    return 2 if len(allure) == 2 else 0


def _ability(rec: dict[str, Any]) -> Ability:
    return Ability(rec["timing"], rec.get("condition"), rec["effect"])


def _load(path: Path) -> dict[str, list[Any]]:
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if raw.get("format") != "parterre-cards/1" or raw.get("game") != "lafleur":
        raise CardDataError(f"{path}: not a La Fleur card file")
    out: dict[str, list[Any]] = {k: [] for k in COMPONENT_COUNTS}
    for rec in raw["cards"]:
        prov = rec.get("provenance")
        if prov not in PROVENANCES:
            raise CardDataError(f"{rec.get('id')}: bad provenance {prov!r}")
        kind = rec["type"]
        group = out[kind]
        i = len(group)
        excl = bool(rec.get("solo_excluded", False))
        if kind == "flower":
            layout, symbols = _layout(rec["allure"])
            if rec["cost"] != flower_cost(rec["allure"]):
                raise CardDataError(f"{rec['id']}: cost {rec['cost']} does not follow the Flower Market rule")
            group.append(FlowerCard(rec["id"], i, rec["name"], rec["scientific"], tuple(rec["allure"]),
                                    rec["cost"], layout, symbols, prov))
        elif kind == "feature":
            cost = tuple(ALLURE_INDEX[a] for a in rec["cost"])
            counts = tuple(cost.count(t) for t in range(5))
            ab = _ability(rec["ability"])
            if ab.timing not in TIMINGS:
                raise CardDataError(f"{rec['id']}: bad timing {ab.timing!r}")
            group.append(Feature(rec["id"], i, rec["name"], rec["name_fr"], cost, counts, ab, excl, prov))
        elif kind == "visitor":
            allure = ALLURE_INDEX[rec["allure"]] if rec["allure"] else -1
            if (allure < 0) != bool(rec.get("visits")):
                raise CardDataError(f"{rec['id']}: a Visitor has an Allure type or a 'visits' rule, not both")
            group.append(Visitor(rec["id"], i, rec["name"], allure, rec.get("visits"), rec["effect"], excl, prov))
        elif kind == "artisan":
            group.append(Artisan(rec["id"], i, rec["occupation"], ALLURE_INDEX[rec["allure"]],
                                 LOCATION_INDEX[rec["ability_location"]], rec["ability"], prov))
        elif kind == "character":
            abilities = tuple(_ability(a) for a in rec["abilities"])
            group.append(Character(rec["id"], i, rec["name"], abilities, bool(rec.get("solo_opponent")), prov))
        elif kind == "event":
            ab = Ability(rec["timing"], rec.get("condition"), rec["effect"])
            if ab.timing not in EVENT_TIMINGS:
                raise CardDataError(f"{rec['id']}: bad event timing {ab.timing!r}")
            group.append(Event(rec["id"], i, rec["name"], ab, excl, prov))
        else:
            raise CardDataError(f"{rec.get('id')}: unknown card type {kind!r}")
    for kind, n in COMPONENT_COUNTS.items():
        if len(out[kind]) != n:
            raise CardDataError(f"{len(out[kind])} {kind} cards; the rulebook's component list has {n}")
    return out


_data = _load(DATA_FILE)

FLOWERS: tuple[FlowerCard, ...] = tuple(_data["flower"])
FEATURES: tuple[Feature, ...] = tuple(_data["feature"])
VISITORS: tuple[Visitor, ...] = tuple(_data["visitor"])
ARTISANS: tuple[Artisan, ...] = tuple(_data["artisan"])
CHARACTERS: tuple[Character, ...] = tuple(_data["character"])
EVENTS: tuple[Event, ...] = tuple(_data["event"])

DECKS: dict[str, tuple[Any, ...]] = {
    "flower": FLOWERS, "feature": FEATURES, "visitor": VISITORS,
    "artisan": ARTISANS, "character": CHARACTERS, "event": EVENTS,
}
"""Deck name (as in a ``draw`` action) -> its cards by index."""
DECK_NAMES: tuple[str, ...] = ("flower", "feature", "visitor", "artisan", "character", "event")
D_FLOWER: Final = 0
D_FEATURE: Final = 1
D_VISITOR: Final = 2
D_ARTISAN: Final = 3
D_CHARACTER: Final = 4
D_EVENT: Final = 5
INDEX: dict[str, tuple[int, int]] = {
    c.id: (d, c.index) for d, name in enumerate(DECK_NAMES) for c in DECKS[name]
}
"""Card id -> (deck number, index)."""

FLOWER_LAYOUT: tuple[int, ...] = tuple(c.layout for c in FLOWERS)
FLOWER_COST: tuple[int, ...] = tuple(c.cost for c in FLOWERS)
FEATURE_COUNTS: tuple[tuple[int, ...], ...] = tuple(f.counts for f in FEATURES)
ARTISAN_ALLURE: tuple[int, ...] = tuple(a.allure for a in ARTISANS)
VISITOR_ALLURE: tuple[int, ...] = tuple(v.allure for v in VISITORS)

SOLO_OPPONENTS: tuple[int, ...] = tuple(c.index for c in CHARACTERS if c.solo_opponent)
"""Mademoiselle Niwa, Marie-Amélie, Louise-Marie, Captain George (Rulebook: "Solo Mode")."""


def layout_symbols(layout: int) -> tuple[int, ...]:
    """Allure type indexes paid by a Flower layout (empty for Wild)."""
    if layout < 5:
        return (layout,)
    if layout < 10:
        return (layout - 5, layout - 5)
    if layout < L_WILD:
        return PAIRS[layout - 10]
    return ()


def card_name(card_id: str) -> str:
    """Human name of any card id (``"F51"`` -> ``"Common Ivy"``); ``""`` -> ``"face-down card"``.

    Unknown ids are returned unchanged.
    """
    if not card_id:
        return "face-down card"
    where = INDEX.get(card_id)
    if where is None:
        return card_id
    c = DECKS[DECK_NAMES[where[0]]][where[1]]
    if isinstance(c, Artisan):
        return f"{c.occupation} ({ALLURE[c.allure]})"
    return str(c.name)
