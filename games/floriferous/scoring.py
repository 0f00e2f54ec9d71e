"""Floriferous scoring, as pure functions of collections of card ids.

Rulebook: Floriferous, "Final Scoring", "Scoring Guide", "Desire Cards",
"Completing Bounty Cards", "Award the Cup of Tea" and "Scoring (Solo)".

Used by the engine (:mod:`games.floriferous.state`) and by the greedy bot
(:mod:`bots.strategies.floriferous`). Two layers:

* functions taking card **ids** (``"F28"``, ``"A3"``, ``"D16"``), for bots,
  tests and tools: :func:`score_collection`, :func:`arrangement_points`,
  :func:`desire_points`, :func:`bounty_met`, :func:`bounty_points`,
  :func:`final_breakdowns`;
* the same on card **indexes** (suffix ``_ix``), for the engine's hot path.

Only Flower cards count toward Arrangements, Desires and Bounties; an
Arrangement card's own flower/color/bug is not a Flower card.
All points are victory points (integers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from games.floriferous.cards import (
    BOUNTIES,
    BOUNTY_INDEX,
    BOUNTY_MATCH,
    BUG_OF,
    CARD_INDEX,
    CARDS,
    COLOR_OF,
    FIRST_DESIRE,
    FLOWER_OF,
    K_ARRANGEMENT,
    K_DESIRE,
    K_FLOWER,
    K_SCULPTURE,
    KIND_OF,
    DesireCategory,
)

ARRANGEMENT_POINTS: Final[tuple[int, int, int, int]] = (0, 1, 3, 5)
"""Points of an Arrangement card for 0/1/2/3 matched aspects (Rulebook: "Scoring Guide")."""
SCULPTURE_AWARDS: Final[tuple[int, int, int]] = (5, 3, 1)
"""Points for the most / second most / third most Sculptures (friendly ties)."""
TEA_POINTS: Final = 2
"""Points of the Cup of Tea (Rulebook: "Final Scoring")."""
STONES_PER_POINT: Final = 2
"""Stones per victory point, rounding down."""

MOOD_NAMES: Final[tuple[str, ...]] = (
    "Anxious", "Chill", "Cool as a Cucumber", "Really Relaxed", "Utter Zen", "Nirvana",
)
"""The solo relaxation chart's moods, worst first (Rulebook: "Scoring (Solo)")."""
MOOD_THRESHOLDS: Final[dict[bool, tuple[int, ...]]] = {
    False: (21, 27, 33, 39, 45),
    True: (49, 53, 57, 61, 65),
}
"""Minimum solo score of each mood after the first, standard (False) and extended (True)."""

# -- Desire specifications on aspect counts -----------------------------------
# mode: 0 per-card, 1 largest set, 2 distinct kinds; aspect: 0 flower, 1 color, 2 bug
_MODE_ASPECT: Final = {
    DesireCategory.FLOWER: (0, 0), DesireCategory.COLOR: (0, 1), DesireCategory.BUG: (0, 2),
    DesireCategory.SAME_FLOWER: (1, 0), DesireCategory.SAME_COLOR: (1, 1), DesireCategory.SAME_BUG: (1, 2),
    DesireCategory.DIFFERENT_FLOWERS: (2, 0), DesireCategory.DIFFERENT_COLORS: (2, 1),
    DesireCategory.DIFFERENT_BUGS: (2, 2),
}
_ASPECT_NAMES: Final = (
    ("Daisy", "Lily", "Mum", "Poppy", "Tulip"),
    ("White", "Yellow", "Orange", "Pink", "Purple"),
    ("Bee", "Beetle", "Butterfly", "Ladybug", "Moth"),
)


def _desire_spec(index: int) -> tuple[int, int, int, int, tuple[int, ...]]:
    c = CARDS[index]
    assert c.category is not None
    mode, aspect = _MODE_ASPECT[c.category]
    target = _ASPECT_NAMES[aspect].index(c.target) if mode == 0 and c.target else -1
    return mode, aspect, target, c.per_card, c.table


DESIRE_SPECS: Final[tuple[tuple[int, int, int, int, tuple[int, ...]], ...]] = tuple(
    _desire_spec(i) for i in range(FIRST_DESIRE, len(CARDS))
)
"""Per Desire card (index - FIRST_DESIRE): (mode, aspect, target, per_card, table)."""

_ARR_ASPECTS: Final[dict[int, tuple[int, int, int]]] = {
    i: (FLOWER_OF[i], COLOR_OF[i], BUG_OF[i]) for i in range(len(CARDS)) if KIND_OF[i] == K_ARRANGEMENT
}


@dataclass(frozen=True, slots=True)
class CollectionScore:
    """What a collection scores on its own (no rivals involved).

    Attributes:
        arrangement: points of its Arrangement cards.
        desire: points of its Desire cards.
        sculptures: number of Sculpture cards (scored against rivals).
    """

    arrangement: int
    desire: int
    sculptures: int


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Final score of one seat by category (Rulebook: "Final Scoring").

    Attributes: points of each category; :attr:`total` sums them.
    """

    arrangement: int = 0
    sculpture: int = 0
    desire: int = 0
    stones: int = 0
    bounty: int = 0
    tea: int = 0

    @property
    def total(self) -> int:
        """Sum of all categories."""
        return self.arrangement + self.sculpture + self.desire + self.stones + self.bounty + self.tea

    def to_json(self) -> dict[str, int]:
        """JSON-able dict of every category plus ``total``."""
        return {
            "arrangement": self.arrangement, "sculpture": self.sculpture, "desire": self.desire,
            "stones": self.stones, "bounty": self.bounty, "tea": self.tea, "total": self.total,
        }


# -- index layer (engine) -------------------------------------------------------
def aspect_counts_ix(cards: Iterable[int]) -> tuple[list[int], list[int], list[int]]:
    """Counts of Flower cards per flower, color and bug (5 each).

    Args:
        cards: card indexes; non-Flower cards are ignored.
    """
    fl = [0, 0, 0, 0, 0]
    co = [0, 0, 0, 0, 0]
    bu = [0, 0, 0, 0, 0]
    for x in cards:
        if KIND_OF[x] == K_FLOWER:
            fl[FLOWER_OF[x]] += 1
            co[COLOR_OF[x]] += 1
            b = BUG_OF[x]
            if b >= 0:
                bu[b] += 1
    return fl, co, bu


def arrangement_points_ix(arrangement: int, fl: Sequence[int], co: Sequence[int], bu: Sequence[int]) -> int:
    """Points of one Arrangement card given aspect counts: 1/3/5 for 1/2/3 aspects met.

    A single Flower card may meet several aspects (Rulebook: "Arrangement Cards").
    """
    f, c, b = _ARR_ASPECTS[arrangement]
    return ARRANGEMENT_POINTS[(fl[f] > 0) + (co[c] > 0) + (bu[b] > 0)]


def desire_points_ix(desire: int, fl: Sequence[int], co: Sequence[int], bu: Sequence[int]) -> int:
    """Points of one Desire card given aspect counts (Rulebook: "Desire Cards").

    Per-card Desires score per matching Flower card; set Desires score once on
    the largest set (Same ...) or the number of kinds (Different ...), five or
    more counting as five.
    """
    mode, aspect, target, per_card, table = DESIRE_SPECS[desire - FIRST_DESIRE]
    counts = fl if aspect == 0 else co if aspect == 1 else bu
    if mode == 0:
        return per_card * counts[target]
    if mode == 1:
        return table[min(max(counts), 5)]
    return table[sum(1 for n in counts if n)]


def score_collection_ix(cards: Iterable[int]) -> CollectionScore:
    """Arrangement and Desire points and the Sculpture count of a collection of indexes."""
    cards = list(cards)
    fl, co, bu = aspect_counts_ix(cards)
    arr = des = scu = 0
    for x in cards:
        k = KIND_OF[x]
        if k == K_ARRANGEMENT:
            arr += arrangement_points_ix(x, fl, co, bu)
        elif k == K_DESIRE:
            des += desire_points_ix(x, fl, co, bu)
        elif k == K_SCULPTURE:
            scu += 1
    return CollectionScore(arr, des, scu)


def bounty_met_ix(bounty: int, cards: Iterable[int]) -> bool:
    """True when three *different* Flower cards meet the bounty's three requirements.

    A bipartite matching of requirements to cards; with three requirements
    Hall's condition is checked directly on the counts of cards per subset of
    requirements they can fill (Rulebook: "Completing Bounty Cards": "must be
    met using three unique cards").
    """
    m = BOUNTY_MATCH[bounty]
    cnt = [0, 0, 0, 0, 0, 0, 0, 0]
    for x in cards:
        cnt[m[x]] += 1
    a, b, ab, c, ac, bc, abc = cnt[1], cnt[2], cnt[3], cnt[4], cnt[5], cnt[6], cnt[7]
    n1 = a + ab + ac + abc
    n2 = b + ab + bc + abc
    n3 = c + ac + bc + abc
    if not (n1 and n2 and n3):
        return False
    return (
        n1 + b + bc >= 2 and n1 + c + bc >= 2 and n2 + c + ac >= 2
        and a + b + c + ab + ac + bc + abc >= 3
    )


def sculpture_points(counts: Sequence[int]) -> tuple[int, ...]:
    """5/3/1 points for the most / second / third most Sculptures, friendly ties.

    Tied seats all take the higher award and the next distinct count takes the
    next award; a seat with no Sculpture scores nothing (Rulebook: "Sculpture
    Cards").

    Args:
        counts: Sculpture cards per seat.

    Returns:
        Points per seat.
    """
    distinct = sorted({n for n in counts if n > 0}, reverse=True)
    award = {n: SCULPTURE_AWARDS[i] for i, n in enumerate(distinct[: len(SCULPTURE_AWARDS)])}
    return tuple(award.get(n, 0) for n in counts)


def stone_points(stones: int) -> int:
    """One point per two Stones, rounding down (Rulebook: "Final Scoring")."""
    return stones // STONES_PER_POINT


def tea_winner(stones: Sequence[int], pawn_rows: Sequence[int]) -> int:
    """Seat awarded the Cup of Tea: most Stones; a tie goes to the tied seat whose
    Gardener Pawn is lowest in the garden (Rulebook: "Award the Cup of Tea").

    Args:
        stones: Stones per seat.
        pawn_rows: each seat's pawn row at the end of the game (larger = lower);
            rows are distinct.

    Returns:
        The seat that takes the Cup of Tea (always one, even when nobody has a Stone).
    """
    best = max(stones)
    tied = [s for s, n in enumerate(stones) if n == best]
    return max(tied, key=lambda s: pawn_rows[s])


def mood(score: int, extended: bool) -> str:
    """Solo relaxation chart (Rulebook: "Scoring (Solo)").

    Args:
        score: solo victory points.
        extended: use the Extended Game column.

    Returns:
        One of :data:`MOOD_NAMES`.
    """
    level = sum(1 for t in MOOD_THRESHOLDS[bool(extended)] if score >= t)
    return MOOD_NAMES[level]


def bounty_column_points_ix(bounty: int, column: int) -> int:
    """Points of a Flower Token in column ``column`` (0 = day 1) of Bounty card index ``bounty``."""
    return BOUNTIES[bounty].points[column]


def final_breakdowns_ix(
    collections: Sequence[Sequence[int]],
    stones: Sequence[int],
    bounty: Sequence[int],
    tea_holder: int,
    *,
    sculptures_scored: bool = True,
) -> list[Breakdown]:
    """Final score breakdown of every seat (index layer of :func:`final_breakdowns`)."""
    parts = [score_collection_ix(c) for c in collections]
    scu = sculpture_points([p.sculptures for p in parts]) if sculptures_scored else (0,) * len(parts)
    return [
        Breakdown(
            arrangement=p.arrangement, sculpture=scu[s], desire=p.desire,
            stones=stone_points(stones[s]), bounty=bounty[s], tea=TEA_POINTS if s == tea_holder else 0,
        )
        for s, p in enumerate(parts)
    ]


# -- id layer (bots, tools, tests) ------------------------------------------------
def _ix(card_ids: Iterable[str]) -> list[int]:
    try:
        return [CARD_INDEX[c] for c in card_ids]
    except KeyError as exc:
        raise KeyError(f"unknown Floriferous card id {exc.args[0]!r}") from None


def score_collection(card_ids: Iterable[str]) -> CollectionScore:
    """Arrangement points, Desire points and Sculpture count of a collection.

    Args:
        card_ids: Garden/Desire card ids, e.g. ``["F28", "A3", "D16"]``.

    Raises:
        KeyError: an unknown card id.
    """
    return score_collection_ix(_ix(card_ids))


def arrangement_points(arrangement_id: str, card_ids: Iterable[str]) -> int:
    """Points one Arrangement card scores with these Flower cards (0/1/3/5)."""
    fl, co, bu = aspect_counts_ix(_ix(card_ids))
    return arrangement_points_ix(CARD_INDEX[arrangement_id], fl, co, bu)


def desire_points(desire_id: str, card_ids: Iterable[str]) -> int:
    """Points one Desire card scores with these Flower cards."""
    fl, co, bu = aspect_counts_ix(_ix(card_ids))
    return desire_points_ix(CARD_INDEX[desire_id], fl, co, bu)


def bounty_met(bounty_id: str, card_ids: Iterable[str]) -> bool:
    """Whether three different Flower cards of the collection meet the Bounty.

    Raises:
        KeyError: unknown bounty or card id.
    """
    return bounty_met_ix(BOUNTY_INDEX[bounty_id], _ix(card_ids))


def bounty_points(tokens: Iterable[tuple[str, int]]) -> int:
    """Points of a seat's Flower Tokens on Bounty cards (Rulebook: "Completing Bounty Cards").

    Args:
        tokens: ``(bounty id, day)`` per token, ``day`` 1..3: the column the
            token went in (the day the Bounty was completed).

    Raises:
        KeyError: unknown bounty id.
        IndexError: a day outside 1..3.
    """
    total = 0
    for bounty_id, day in tokens:
        if not 1 <= day <= 3:
            raise IndexError(f"day {day} is not 1..3")
        total += bounty_column_points_ix(BOUNTY_INDEX[bounty_id], day - 1)
    return total


def final_breakdowns(
    collections: Sequence[Iterable[str]],
    stones: Sequence[int],
    bounty: Sequence[int],
    tea_holder: int,
    *,
    sculptures_scored: bool = True,
) -> list[Breakdown]:
    """Final score of every seat by category (Rulebook: "Final Scoring").

    Args:
        collections: card ids per seat.
        stones: Stones per seat.
        bounty: Bounty points per seat (sum of its Flower Tokens' columns).
        tea_holder: seat holding the Cup of Tea, -1 for none (tossed in solo).
        sculptures_scored: False in solo (no Sculptures).

    Returns:
        One :class:`Breakdown` per seat.
    """
    return final_breakdowns_ix(
        [_ix(c) for c in collections], stones, bounty, tea_holder, sculptures_scored=sculptures_scored
    )


def breakdowns_json(breakdowns: Sequence[Breakdown]) -> list[dict[str, Any]]:
    """``[{"seat": s, "arrangement": .., ..., "total": ..}]`` for Outcome details."""
    return [{"seat": s, **b.to_json()} for s, b in enumerate(breakdowns)]
