"""Floriferous card data: counts, structure and provenance (games/floriferous/cards.json)."""

from __future__ import annotations

import json
from collections import Counter

from games.floriferous import cards as C
from games.floriferous.cards import CardType, DesireCategory


def _by_type(kind: CardType) -> list[C.Card]:
    return [c for c in C.CARDS if c.type is kind]


def test_counts_match_the_rulebook_contents() -> None:
    # Rulebook: "Contents": 60 Garden Cards (50 Flower, 5 Arrangement, 5 Sculpture),
    # 21 Desire, 9 Bounty, 9 Crow Action cards.
    assert len(_by_type(CardType.FLOWER)) == 50
    assert len(_by_type(CardType.ARRANGEMENT)) == 5
    assert len(_by_type(CardType.SCULPTURE)) == 5
    assert len(_by_type(CardType.DESIRE)) == 21
    assert len(C.BOUNTIES) == 9
    assert len(C.CROW_ACTIONS) == 9
    assert len(C.GARDEN_CARDS) == 60
    assert len(C.SOLO_GARDEN_CARDS) == 55
    assert len(C.DESIRE_CARDS) == 21


def test_flowers_form_a_latin_square() -> None:
    flowers = _by_type(CardType.FLOWER)
    pairs = Counter((c.flower, c.color) for c in flowers)
    assert set(pairs.values()) == {2} and len(pairs) == 25  # each (flower, color) twice
    buggy = [c for c in flowers if c.bug]
    assert len(buggy) == 25
    for f in C.FLOWERS:  # each bug once per flower row ...
        assert sorted(c.bug for c in buggy if c.flower == f) == sorted(C.BUGS)
    for col in C.COLORS:  # ... and once per color column
        assert sorted(c.bug for c in buggy if c.color == col) == sorted(C.BUGS)
    for (f, col), _ in pairs.items():  # one plain, one with a bug
        assert sorted(bool(c.bug) for c in flowers if c.flower == f and c.color == col) == [False, True]
    assert Counter(c.flower for c in flowers) == {f: 10 for f in C.FLOWERS}
    assert Counter(c.color for c in flowers) == {c: 10 for c in C.COLORS}


def test_known_cards() -> None:
    assert C.card("F28").name == "Pink Mum (Bee)"
    assert C.card("F01").name == "White Daisy"
    assert (C.card("A2").flower, C.card("A2").color, C.card("A2").bug) == ("Lily", "Purple", "Butterfly")
    assert (C.card("A3").flower, C.card("A3").color, C.card("A3").bug) == ("Mum", "Pink", "Beetle")
    assert C.BOUNTIES[C.BOUNTY_INDEX["B8"]].requirements == ("Lily", "Poppy", "Moth")
    c4 = C.CROW_ACTIONS[C.CROW_INDEX["C4"]]
    assert (c4.row, c4.replacement) == (C.CrowRow.MIDDLE, "card")


def test_arrangements_use_every_aspect_once_and_no_card_meets_all_three() -> None:
    arrs = _by_type(CardType.ARRANGEMENT)
    assert sorted(a.flower for a in arrs) == sorted(C.FLOWERS)
    assert sorted(a.color for a in arrs) == sorted(C.COLORS)
    assert sorted(a.bug for a in arrs) == sorted(C.BUGS)
    for a in arrs:
        assert a.table == (0, 1, 3, 5)
        for f in _by_type(CardType.FLOWER):
            assert not (f.flower == a.flower and f.color == a.color and f.bug == a.bug)


def test_desires_one_per_aspect_plus_six_set_desires() -> None:
    desires = _by_type(CardType.DESIRE)
    cats = Counter(d.category for d in desires)
    assert cats[DesireCategory.FLOWER] == cats[DesireCategory.COLOR] == cats[DesireCategory.BUG] == 5
    for cat in (DesireCategory.SAME_FLOWER, DesireCategory.DIFFERENT_FLOWERS, DesireCategory.SAME_COLOR,
                DesireCategory.DIFFERENT_COLORS, DesireCategory.SAME_BUG, DesireCategory.DIFFERENT_BUGS):
        assert cats[cat] == 1
    for d in desires:
        if d.category in (DesireCategory.FLOWER, DesireCategory.COLOR):
            assert d.per_card == 2
        elif d.category is DesireCategory.BUG:
            assert d.per_card == 3
        else:
            assert len(d.table) == 6 and d.table[0] == 0


def test_bounties_and_crow_grid() -> None:
    for b in C.BOUNTIES:
        assert len(b.requirements) == 3 and b.points == (5, 3, 2)
        assert all(r in C.FLOWERS or r in C.BUGS for r in b.requirements)
    grid = {(c.row, c.replacement, c.stones) for c in C.CROW_ACTIONS}
    expected = {(r, "card", 0) for r in C.CrowRow} | {(r, "stones", k) for r in C.CrowRow for k in (1, 2)}
    assert grid == expected


def test_every_record_has_a_provenance_and_ids_are_unique() -> None:
    raw = json.loads(C.DATA_FILE.read_text(encoding="utf-8"))
    ids = [r["id"] for r in raw["cards"]]
    assert len(ids) == len(set(ids)) == 99
    for r in raw["cards"]:
        assert r["provenance"] in ("rulebook", "public-transcription"), r
    assert {r["provenance"] for r in raw["cards"] if r["type"] == "sculpture"} == {"rulebook"}


def test_indexes_are_dense() -> None:
    assert [c.index for c in C.CARDS] == list(range(81))
    assert C.FIRST_DESIRE == 60
    assert all(C.CARDS[i].type is CardType.DESIRE for i in range(60, 81))
