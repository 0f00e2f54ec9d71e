"""Floriferous scoring (games/floriferous/scoring.py), against the rulebook's numbers."""

from __future__ import annotations

import pytest

from games.floriferous import scoring as S
from games.floriferous.cards import CARDS, CardType

# Blue's 15 cards of the rulebook's "Scoring Example" (our reconstruction): 8 Flowers,
# Arrangement A3, five Desires, one Sculpture.
BLUE_FLOWERS = ["F06", "F28", "F02", "F04", "F35", "F42", "F21", "F43"]
BLUE = BLUE_FLOWERS + ["A3", "D20", "D17", "D13", "D01", "D08", "S1"]


def flowers(**want: str) -> str:
    """Id of the Flower card with these aspects (bug=None for no bug)."""
    for c in CARDS:
        if c.type is CardType.FLOWER and all(getattr(c, k) == v for k, v in want.items()):
            return c.id
    raise KeyError(want)


def test_scoring_example_category_by_category() -> None:
    """Rulebook: "Scoring Example": 5 + 20 + 7 + 2 + 2 + 3 = 39."""
    assert len(BLUE) == 15
    assert S.arrangement_points("A3", BLUE) == 5  # Pink, Mum and Beetle
    assert S.desire_points("D20", BLUE) == 4  # 3 Same Bugs (Bees)
    assert S.desire_points("D17", BLUE) == 3  # 4 Different Flowers
    assert S.desire_points("D13", BLUE) == 3  # 1 Butterfly
    assert S.desire_points("D01", BLUE) == 6  # 3 Daisies
    assert S.desire_points("D08", BLUE) == 4  # 2 Orange
    part = S.score_collection(BLUE)
    assert (part.arrangement, part.desire, part.sculptures) == (5, 20, 1)
    # Blue has no Lily and no Ladybug: it cannot meet B6 (the "first Bounty").
    assert not S.bounty_met("B6", BLUE)
    assert S.bounty_met("B5", BLUE) and S.bounty_met("B7", BLUE)
    # "Blue has a Flower Token on the 2nd and 3rd Bounty Cards, worth 7 points": of the
    # columns' values, only a day-1 and a day-3 token make 7 (B5 and B7 are the two Blue meets).
    days = {(d5, d7) for d5 in (1, 2, 3) for d7 in (1, 2, 3) if S.bounty_points([("B5", d5), ("B7", d7)]) == 7}
    assert days == {(1, 3), (3, 1)}
    bounty = S.bounty_points([("B5", 1), ("B7", 3)])
    # Opponents: Green 2 Sculptures and 3 Stones; Red nothing.
    parts = S.final_breakdowns([BLUE, ["S2", "S3"], []], stones=[5, 3, 0], bounty=[bounty, 0, 0],
                               tea_holder=S.tea_winner([5, 3, 0], [2, 1, 3]))
    blue = parts[0]
    assert blue.to_json() == {"arrangement": 5, "sculpture": 3, "desire": 20, "stones": 2, "bounty": 7,
                              "tea": 2, "total": 39}
    assert S.bounty_points([]) == 0
    with pytest.raises(IndexError):
        S.bounty_points([("B5", 4)])


def test_arrangement_example() -> None:
    """Rulebook: "Arrangement Cards": Yellow Lily, Pink Poppy with a Butterfly and a
    Purple Tulip meet all three aspects of A2 (Lily, Purple, Butterfly): 5 points."""
    hand = [flowers(flower="Lily", color="Yellow", bug=None), flowers(flower="Poppy", color="Pink", bug="Butterfly"),
            flowers(flower="Tulip", color="Purple", bug=None)]
    assert S.arrangement_points("A2", hand) == 5
    assert S.arrangement_points("A2", hand[:1]) == 1
    assert S.arrangement_points("A2", hand[:2]) == 3
    assert S.arrangement_points("A2", []) == 0
    # One card may count for several aspects: Orange Lily with a Butterfly = Lily + Butterfly.
    assert S.arrangement_points("A2", [flowers(flower="Lily", color="Orange", bug="Butterfly")]) == 3
    # The arrangement card's own aspects do not count.
    assert S.arrangement_points("A2", ["A2"]) == 0


def _daisies(n: int) -> list[str]:
    return [c.id for c in CARDS if c.type is CardType.FLOWER and c.flower == "Daisy"][:n]


@pytest.mark.parametrize("n", range(0, 8))
def test_per_card_desires(n: int) -> None:
    """Flowers/Colors: 2 per card; Bugs: 3 per card."""
    daisies = [c.id for c in CARDS if c.type is CardType.FLOWER and c.flower == "Daisy"][:n]
    whites = [c.id for c in CARDS if c.type is CardType.FLOWER and c.color == "White"][:n]
    bees = [c.id for c in CARDS if c.type is CardType.FLOWER and c.bug == "Bee"][: min(n, 5)]
    assert S.desire_points("D01", daisies) == 2 * n
    assert S.desire_points("D06", whites) == 2 * n
    assert S.desire_points("D11", bees) == 3 * len(bees)
    assert S.desire_points("D02", daisies) == 0  # Lily desire ignores Daisies


SAME_2_TABLE = [0, 0, 1, 2, 4, 7, 7, 7]  # 0/1/2/4/7 for 1/2/3/4/5 (5+ counts as 5)
DIFF_TABLE = [0, 0, 0, 1, 3, 5]
SAME_BUG_TABLE = [0, 0, 2, 4, 7, 10]
DIFF_BUG_TABLE = [0, 0, 1, 2, 4, 7]


@pytest.mark.parametrize("n", range(0, 8))
def test_same_flower_and_same_color(n: int) -> None:
    tulips = [c.id for c in CARDS if c.type is CardType.FLOWER and c.flower == "Tulip"][:n]
    assert S.desire_points("D16", tulips) == SAME_2_TABLE[n]
    pinks = [c.id for c in CARDS if c.type is CardType.FLOWER and c.color == "Pink"][:n]
    assert S.desire_points("D18", pinks) == SAME_2_TABLE[n]


@pytest.mark.parametrize("n", range(0, 6))
def test_same_bug(n: int) -> None:
    moths = [c.id for c in CARDS if c.type is CardType.FLOWER and c.bug == "Moth"][:n]
    assert S.desire_points("D20", moths) == SAME_BUG_TABLE[n]


@pytest.mark.parametrize("n", range(0, 6))
def test_different_kinds(n: int) -> None:
    from games.floriferous.cards import BUGS, COLORS, FLOWERS

    fl = [flowers(flower=f, color="White", bug=None) for f in FLOWERS[:n]]
    assert S.desire_points("D17", fl + fl) == DIFF_TABLE[n]  # duplicates do not count twice
    co = [flowers(flower="Mum", color=c, bug=None) for c in COLORS[:n]]
    assert S.desire_points("D19", co) == DIFF_TABLE[n]
    bu = [flowers(flower="Poppy", bug=b) for b in BUGS[:n]]
    assert S.desire_points("D21", bu) == DIFF_BUG_TABLE[n]


def test_set_desires_score_once_on_the_largest_set() -> None:
    # 3 Daisies and 2 Lilies: Same Flower scores the 3 only (2 points), not 2 + 1.
    hand = _daisies(3) + [flowers(flower="Lily", color="White", bug=None),
                          flowers(flower="Lily", color="Pink", bug=None)]
    assert S.desire_points("D16", hand) == 2


@pytest.mark.parametrize(
    "counts, expected",
    [
        ([3, 2, 1, 0], (5, 3, 1, 0)),
        ([2, 2, 1, 0], (5, 5, 3, 0)),  # friendly tie: both 5, next takes 3
        ([1, 1, 1, 1], (5, 5, 5, 5)),
        ([0, 0, 0, 0], (0, 0, 0, 0)),  # no Sculpture, no points
        ([4, 0, 0, 1], (5, 0, 0, 3)),
        ([3, 2, 2, 1], (5, 3, 3, 1)),
        ([2, 1], (5, 3)),
    ],
)
def test_sculptures_friendly_ties(counts: list[int], expected: tuple[int, ...]) -> None:
    """Rulebook: "Sculpture Cards": 5/3/1, ties are friendly, next player takes the next award."""
    assert S.sculpture_points(counts) == expected


def test_stones_round_down() -> None:
    assert [S.stone_points(n) for n in range(6)] == [0, 0, 1, 1, 2, 2]


def test_tea_goes_to_most_stones_and_ties_to_the_bottom_pawn() -> None:
    """Rulebook: "Award the Cup of Tea"."""
    assert S.tea_winner([4, 2, 1], [0, 1, 2]) == 0
    assert S.tea_winner([3, 3, 1], [0, 1, 2]) == 1  # tie between 0 and 1: 1 is lower
    assert S.tea_winner([3, 3, 1], [3, 0, 1]) == 0  # seat 0 is lower
    assert S.tea_winner([2, 1, 2, 2], [0, 3, 1, 2]) == 3  # bottom among the tied, not overall
    assert S.tea_winner([0, 0], [0, 1]) == 1


def test_bounty_needs_three_unique_cards() -> None:
    """Rulebook: "Completing Bounty Cards": three unique cards. B6 = Lily, Lily, Ladybug:
    a Yellow Lily with a Ladybug counts once only."""
    yellow_lily_ladybug = flowers(flower="Lily", color="Yellow", bug="Ladybug")
    white_lily = flowers(flower="Lily", color="White", bug=None)
    daisy_ladybug = flowers(flower="Daisy", bug="Ladybug")
    assert not S.bounty_met("B6", [yellow_lily_ladybug])
    assert not S.bounty_met("B6", [yellow_lily_ladybug, white_lily])
    assert S.bounty_met("B6", [yellow_lily_ladybug, white_lily, daisy_ladybug])
    assert S.bounty_met("B6", [yellow_lily_ladybug, white_lily, flowers(flower="Lily", color="Pink", bug=None)])
    # Only Flower cards count: Arrangement A5 shows a Ladybug but is not a Flower card.
    assert not S.bounty_met("B6", [yellow_lily_ladybug, white_lily, "A5"])
    # B3 = Beetle, Ladybug, Bee needs three different bugs on three cards.
    beetle, ladybug, bee = flowers(bug="Beetle"), flowers(bug="Ladybug"), flowers(bug="Bee")
    assert S.bounty_met("B3", [beetle, ladybug, bee])
    assert not S.bounty_met("B3", [beetle, ladybug, ladybug])


def test_bounty_matching_agrees_with_brute_force() -> None:
    import itertools
    import random

    from games.floriferous.cards import BOUNTIES, BUGS, FLOWERS

    rng = random.Random(7)
    flower_ids = [c.id for c in CARDS if c.type is CardType.FLOWER]

    def brute(b: str, hand: list[str]) -> bool:
        req = next(x for x in BOUNTIES if x.id == b).requirements
        by_id = {c.id: c for c in CARDS}
        for trio in itertools.permutations(range(len(hand)), 3):
            ok = True
            for r, i in zip(req, trio, strict=True):
                c = by_id[hand[i]]
                if not ((r in FLOWERS and c.flower == r) or (r in BUGS and c.bug == r)):
                    ok = False
                    break
            if ok:
                return True
        return False

    for _ in range(1500):
        hand = rng.sample(flower_ids, rng.randint(0, 7))
        b = rng.choice(BOUNTIES).id
        assert S.bounty_met(b, hand) == brute(b, hand), (b, hand)


@pytest.mark.parametrize(
    "score, extended, expected",
    [
        (0, False, "Anxious"), (20, False, "Anxious"), (21, False, "Chill"), (26, False, "Chill"),
        (27, False, "Cool as a Cucumber"), (32, False, "Cool as a Cucumber"), (33, False, "Really Relaxed"),
        (38, False, "Really Relaxed"), (39, False, "Utter Zen"), (44, False, "Utter Zen"), (45, False, "Nirvana"),
        (80, False, "Nirvana"),
        (48, True, "Anxious"), (49, True, "Chill"), (52, True, "Chill"), (53, True, "Cool as a Cucumber"),
        (56, True, "Cool as a Cucumber"), (57, True, "Really Relaxed"), (60, True, "Really Relaxed"),
        (61, True, "Utter Zen"), (64, True, "Utter Zen"), (65, True, "Nirvana"),
    ],
)
def test_relaxation_chart(score: int, extended: bool, expected: str) -> None:
    """Rulebook: "Scoring (Solo)", the chart, standard and extended columns."""
    assert S.mood(score, extended) == expected


def test_unknown_card_id_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="unknown Floriferous card id"):
        S.score_collection(["F99"])
