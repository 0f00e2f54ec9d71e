"""Flowar component data, loaded from ``cards.json`` at import.

Rulebook: Flowar, "Components", "Guilds", "Kingdom Favors", "Firing or Hiring
Workers", "Loans", "End of the Game" and "Do You Dare to Face Taxus Alone?".
No public component list exists: values the rulebook prints have provenance
``rulebook``; the rest (transport costs, Flower and Contract cards, Guild
numbers, the Torch table up to five, Coin→MP rates, Favor 2's table, the 16
Taxus cards) are ``stand-in`` records designed from the publicly known Flowar card list.

Every card has a string id (``F01``..``F50`` Flower, ``C01``..``C46`` Contract,
``T01``..``T16`` Taxus; Favors 1..20 and Guild Tiles 1..5 are numbers) and a
dense integer index (position in its list) used by the engine's hot path.

Small integer codes used everywhere:

* colours 0..4 (:data:`COLOURS`), worker types 0..2 (:data:`WORKERS`: Trenti,
  Human, Fox), kingdoms 0..2 (:data:`KINGDOMS`), means of transport 0..5
  (:data:`MEANS`, two per kingdom: ``2 * kingdom`` and ``2 * kingdom + 1``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

DATA_FILE = Path(__file__).with_name("cards.json")
"""The component data file shipped inside the package."""
PROVENANCES = ("rulebook", "public-transcription", "stand-in")
"""Allowed ``provenance`` values of a record (docs/rules/flowar.md)."""

COLOURS: tuple[str, ...] = ("blue", "white", "green", "purple", "yellow")
"""The five flower colours (Rulebook: "Game Setup", step 5), by colour code."""
COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
WORKERS: tuple[str, ...] = ("trenti", "human", "fox")
"""Worker types by code: Trentis (green, Market), Humans (purple, Contracts), Foxes (orange, Travel)."""
WORKER_INDEX = {w: i for i, w in enumerate(WORKERS)}
TRENTI, HUMAN, FOX = 0, 1, 2

_RAW: dict[str, Any] = json.loads(DATA_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Means:
    """A means of transport of a kingdom (Rulebook: "Travel Petal", step 1).

    Attributes:
        id: ``"K1a"`` .. ``"K3b"``.  index: 0..5.  kingdom: 0..2.
        name: display name (stand-in).  cost: Coins paid once per delivery.
    """

    id: str
    index: int
    kingdom: int
    name: str
    cost: int


@dataclass(frozen=True, slots=True)
class Kingdom:
    """A kingdom of the Travel Petal (Rulebook: "Travel Petal").

    Attributes:
        id: ``"K1"``..``"K3"``.  index: 0..2.  name: ``"Graceful Rain"`` for K1.
        means: its two means of transport, cheaper first.
        provenance: of the name.
    """

    id: str
    index: int
    name: str
    means: tuple[Means, Means]
    provenance: str


@dataclass(frozen=True, slots=True)
class FlowerCard:
    """A Flower card: one or two Baskets of one colour (Rulebook: "Components")."""

    id: str
    index: int
    colour: int
    baskets: int
    provenance: str


@dataclass(frozen=True, slots=True)
class Contract:
    """A Contract card (Rulebook: "Travel Petal").

    Attributes:
        flowers: colour codes of the Baskets required, sorted.
        need: Baskets required per colour (5 counts).
        means: means index the Contract is linked to, or -1 when linked to a kingdom.
        kingdom: the kingdom where it can be delivered (0..2).
        coins / mp: reward printed on the card (MP may be negative).
    """

    id: str
    index: int
    flowers: tuple[int, ...]
    need: tuple[int, int, int, int, int]
    means: int
    kingdom: int
    coins: int
    mp: int
    provenance: str

    @property
    def link(self) -> str:
        """The means id (``"K2a"``) or kingdom id (``"K2"``) the Contract names."""
        return MEANS[self.means].id if self.means >= 0 else KINGDOMS[self.kingdom].id


@dataclass(frozen=True, slots=True)
class Favor:
    """A Kingdom Favor card (Rulebook: "Kingdom Favors").

    Attributes:
        id: 1..20 as numbered in the rulebook.
        timing: when it may be activated: ``placement``, ``layoff``,
            ``acquire``, ``delivery``, ``hire``, ``payoff``, ``sell``,
            ``strike`` or ``now`` (at once, in the turn menu).
        effect: the interpreter's effect name (see :mod:`games.flowar.favors`).
        params: effect parameters (e.g. Favor 2's layoff table).
        text: the rulebook's wording.
        first_game: one of the recommended first-game Favors 1-6.
    """

    id: int
    timing: str
    effect: str
    params: dict[str, Any]
    text: str
    first_game: bool
    provenance: str


@dataclass(frozen=True, slots=True)
class Guild:
    """A Guild Tile (Rulebook: "Guilds"); the number is a stand-in.

    Attributes:
        number: 1..5, turn order (lowest first) and tie-break.
        action: ``coins``, ``take_contract``, ``return_torch``, ``take_flower`` or ``mp``.
        amount: Coins or MP of the action (``take_*`` also give 1 Coin).
        flower_price: Coins for a Market row or column.
    """

    number: int
    action: str
    amount: int
    flower_price: int
    provenance: str


@dataclass(frozen=True, slots=True)
class TaxusCard:
    """A Taxus card (Rulebook: "Taxus Cards"); the mix of 16 is a stand-in.

    Attributes:
        kind: ``market``, ``travel``, ``contracts``, ``torch_and_reveal``,
            ``loan`` or ``torches``.
        workers: Workers per type (3 counts) taken from the bag.
        space: ``market``, ``contract``, ``travel_K1``.. or ``every_kingdom``.
        line: grid line of ``market``/``contracts`` cards (``row1``, ``col2``...).
        kingdom: 0..2 for ``travel`` cards, else -1.
        torches: Torches taken by ``torches`` cards.
    """

    id: str
    index: int
    kind: str
    workers: tuple[int, int, int]
    space: str
    line: str
    kingdom: int
    torches: int
    provenance: str


def _kingdoms() -> tuple[Kingdom, ...]:
    out = []
    for k, rec in enumerate(_RAW["kingdoms"]):
        means = tuple(
            Means(m["id"], 2 * k + j, k, m["name"], int(m["cost"])) for j, m in enumerate(rec["means"])
        )
        # the type: ignore below: tuple() of a generator is tuple[Means, ...]; a kingdom has exactly 2 means
        out.append(Kingdom(rec["id"], k, rec["name"], means, rec["provenance"]))  # type: ignore[arg-type]
    return tuple(out)


KINGDOMS: tuple[Kingdom, ...] = _kingdoms()
"""The three kingdoms, K1 (Graceful Rain) first."""
KINGDOM_INDEX = {k.id: k.index for k in KINGDOMS}
MEANS: tuple[Means, ...] = tuple(m for k in KINGDOMS for m in k.means)
"""The six means of transport by index."""
MEANS_INDEX = {m.id: m.index for m in MEANS}
MEANS_COST: tuple[int, ...] = tuple(m.cost for m in MEANS)

FLOWERS: tuple[FlowerCard, ...] = tuple(
    FlowerCard(r["id"], i, COLOUR_INDEX[r["colour"]], int(r["baskets"]), r["provenance"])
    for i, r in enumerate(_RAW["flowers"])
)
"""The 50 Flower cards by index."""
FLOWER_INDEX = {f.id: f.index for f in FLOWERS}
FLOWER_IDS: tuple[str, ...] = tuple(f.id for f in FLOWERS)
FLOWER_COLOUR: tuple[int, ...] = tuple(f.colour for f in FLOWERS)
FLOWER_BASKETS: tuple[int, ...] = tuple(f.baskets for f in FLOWERS)


def _contract(i: int, r: dict[str, Any]) -> Contract:
    flowers = tuple(sorted(COLOUR_INDEX[c] for c in r["flowers"]))
    need = [0] * 5
    for c in flowers:
        need[c] += 1
    if "means" in r:
        means = MEANS_INDEX[r["means"]]
        kingdom = MEANS[means].kingdom
    else:
        means, kingdom = -1, KINGDOM_INDEX[r["kingdom"]]
    # the type: ignore below: tuple(need) is tuple[int, ...]; need has exactly 5 counts
    return Contract(r["id"], i, flowers, tuple(need), means, kingdom,  # type: ignore[arg-type]
                    int(r["coins"]), int(r["mp"]), r["provenance"])


CONTRACTS: tuple[Contract, ...] = tuple(_contract(i, r) for i, r in enumerate(_RAW["contracts"]))
"""The 46 Contract cards by index."""
CONTRACT_INDEX = {c.id: c.index for c in CONTRACTS}
CONTRACT_IDS: tuple[str, ...] = tuple(c.id for c in CONTRACTS)

FAVORS: tuple[Favor, ...] = tuple(
    Favor(int(r["id"]), r["timing"], r["effect"], dict(r["params"]), r["text"], bool(r["first_game"]),
          r["provenance"])
    for r in _RAW["favors"]
)
"""The 20 Kingdom Favors; ``FAVORS[n - 1]`` is Favor n."""
FIRST_GAME_FAVORS: tuple[int, ...] = tuple(f.id for f in FAVORS if f.first_game)
"""The recommended first-game Favors 1-6 (Rulebook: "Game Setup", step 3)."""

GUILDS: tuple[Guild, ...] = tuple(
    Guild(int(r["number"]), r["action"], int(r["amount"]), int(r["flower_price"]), r["provenance"])
    for r in _RAW["guilds"]
)
"""The five Guild Tiles; ``GUILDS[n - 1]`` is tile n."""


def _taxus(i: int, r: dict[str, Any]) -> TaxusCard:
    w = r["workers"]
    return TaxusCard(
        r["id"], i, r["kind"], (int(w.get("trenti", 0)), int(w.get("human", 0)), int(w.get("fox", 0))),
        r["space"], r.get("line", ""), KINGDOM_INDEX[r["kingdom"]] if "kingdom" in r else -1,
        int(r.get("torches", 0)), r["provenance"],
    )


TAXUS_CARDS: tuple[TaxusCard, ...] = tuple(_taxus(i, r) for i, r in enumerate(_RAW["taxus"]))
"""The 16 Taxus cards by index."""
TAXUS_INDEX = {t.id: t.index for t in TAXUS_CARDS}

EFFICIENCY_TILES: dict[int, int] = {int(k): int(v) for k, v in _RAW["efficiency_tiles"]["values"].items()}
"""Efficiency Tile value -> how many tiles (Rulebook: "Components": 4 each of 3, 4, 5)."""
EFFICIENCY_VALUES: tuple[int, ...] = tuple(sorted(EFFICIENCY_TILES))

_LOANS = _RAW["loans"]
LOAN_CARDS: int = int(_LOANS["cards"])
LOAN_COINS: int = int(_LOANS["coins"])
MAX_LOANS: int = int(_LOANS["max_per_player"])
PAYOFF_COINS: int = int(_LOANS["payoff"])
UNPAID_LOAN_MP: int = -int(_LOANS["unpaid_mp"])
"""MP lost per Loan not paid back (Rulebook: "End of the Game", step 4)."""

LAYOFF_TABLE: dict[str, int] = {k: int(v) for k, v in _RAW["layoff"]["table"].items()}
"""Rulebook: "Firing or Hiring Workers"."""
LAYOFF_TABLE_FAVOR2: dict[str, int] = {k: int(v) for k, v in FAVORS[1].params["table"].items()}
"""Kingdom Favor 2's table (stand-in; the rulebook does not print it)."""

_TORCHES = _RAW["torches"]
TORCH_TABLE: tuple[int, ...] = tuple(int(x) for x in _TORCHES["cumulative_mp_lost"])
"""Cumulative MP lost for 0..5 Torches (stand-in)."""
TORCH_AFTER_FIFTH: int = int(_TORCHES["after_fifth"])
NO_TORCH_BONUS: int = int(_TORCHES["none_bonus"])
TORCH_COUNT: int = int(_TORCHES["count"])

EXCHANGE_RATES: tuple[int, ...] = tuple(int(x) for x in _RAW["exchange"]["coins_per_mp"])
"""Coins per MP in rounds 1..4 (stand-in)."""
EXCHANGE_MAX_MP: int = int(_RAW["exchange"]["max_mp"])

WORKERS_PER_TYPE: int = int(_RAW["workers"]["per_type"])
WORKERS_REMOVED: dict[int, int] = {int(k): int(v) for k, v in _RAW["workers"]["removed_per_type"].items()}
WORKERS_PER_GUILD: int = int(_RAW["workers"]["per_guild"])
STARTING_COINS: tuple[int, ...] = tuple(int(x) for x in _RAW["starting_coins"]["by_turn_position"])

HIRE_COINS: Final = 5
"""Rulebook: "Hiring Workers": pay 5 Coins."""
FRESH_BONUS_MP: Final = 1
"""Rulebook: "Travel Petal", step 5."""
MAX_CONTRACTS_HELD: Final = 4
MAX_CONTRACTS_DELIVERED: Final = 4
EXCHANGE_BASKETS: Final = 3
"""Any three Baskets can stand in for one (Rulebook: "Travel Petal", step 2)."""
ROUNDS: Final = 4


def layoff_coins(counts: tuple[int, int, int] | list[int], table: dict[str, int] | None = None) -> int:
    """Coins for firing Workers of the given types (Rulebook: "Firing or Hiring Workers").

    Only up to 3 Workers earn Coins; with more (when passing), the 3 that earn
    the most are counted.

    Args:
        counts: Workers fired per type (Trenti, Human, Fox).
        table: :data:`LAYOFF_TABLE` (default) or :data:`LAYOFF_TABLE_FAVOR2`.

    Returns:
        Coins earned, e.g. 10 for two Trentis and a Fox, 12 for one of each, 6 for two Trentis.
    """
    t = LAYOFF_TABLE if table is None else table
    present = [c for c in counts if c > 0]
    total = sum(counts)
    if total <= 0:
        return 0
    if total == 1:
        return t["1"]
    kinds = len(present)
    if total == 2:
        return t["2_different"] if kinds == 2 else t["2_same"]
    if kinds == 3:
        return t["3_different"]
    return t["3_two_types"] if kinds == 2 else t["3_same"]


def torch_penalty(torches: int) -> int:
    """MP lost for ``torches`` Torches of Discontent (Rulebook: "End of the Game", step 3).

    Stand-in table up to five, then 3 MP per Torch after the fifth (printed).
    """
    if torches <= 5:
        return TORCH_TABLE[max(torches, 0)]
    return TORCH_TABLE[5] + TORCH_AFTER_FIFTH * (torches - 5)


def exchange_rate(round_number: int) -> int:
    """Coins per MP at the end of round ``round_number`` (1..4) (stand-in)."""
    return EXCHANGE_RATES[round_number - 1]


def flower(card: str) -> FlowerCard:
    """The Flower card with id ``card``. Raises KeyError for an unknown id."""
    return FLOWERS[FLOWER_INDEX[card]]


def contract(card: str) -> Contract:
    """The Contract card with id ``card``. Raises KeyError for an unknown id."""
    return CONTRACTS[CONTRACT_INDEX[card]]


def records() -> dict[str, Any]:
    """The raw data file (for the provenance tests and the docs)."""
    return _RAW
