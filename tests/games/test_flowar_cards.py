"""Flowar component data: counts, provenance, and the constraints of the worked examples
(games/flowar/cards.json; games/flowar/standins.py)."""

from __future__ import annotations

from collections import Counter

from games.flowar import cards as C
from games.flowar import favors as F


def test_counts_match_the_rulebook_components() -> None:
    # Rulebook: "Components".
    assert len(C.FLOWERS) == 50
    assert len(C.CONTRACTS) == 46
    assert len(C.FAVORS) == 20 and [f.id for f in C.FAVORS] == list(range(1, 21))
    assert len(C.TAXUS_CARDS) == 16
    assert len(C.GUILDS) == 5 and [g.number for g in C.GUILDS] == [1, 2, 3, 4, 5]
    assert sum(C.EFFICIENCY_TILES.values()) == 12 and C.EFFICIENCY_TILES == {3: 4, 4: 4, 5: 4}
    assert C.LOAN_CARDS == 8 and C.TORCH_COUNT == 20
    assert C.WORKERS_PER_TYPE * 3 == 27
    assert {p: 27 - 3 * C.WORKERS_REMOVED[p] for p in (2, 3, 4)} == {2: 18, 3: 21, 4: 27}
    assert C.STARTING_COINS == (10, 11, 12, 13)
    assert C.FIRST_GAME_FAVORS == (1, 2, 3, 4, 5, 6)


def test_every_record_has_a_provenance() -> None:
    raw = C.records()
    for section in ("kingdoms", "flowers", "contracts", "favors", "guilds", "taxus"):
        for rec in raw[section]:
            assert rec["provenance"] in C.PROVENANCES, (section, rec)
    for section in ("efficiency_tiles", "loans", "layoff", "torches", "exchange", "workers", "starting_coins"):
        assert raw[section]["provenance"] in C.PROVENANCES
    # Printed values are "rulebook"; designed ones are "stand-in" (games/flowar/standins.py).
    assert {r["provenance"] for r in raw["flowers"] + raw["contracts"] + raw["taxus"]} == {"stand-in"}
    assert {r["provenance"] for r in raw["favors"]} == {"rulebook"}
    assert raw["favors"][1]["params"]["table_provenance"] == "stand-in"
    assert all(r["number_provenance"] == "stand-in" and r["provenance"] == "rulebook" for r in raw["guilds"])
    assert raw["kingdoms"][0]["name"] == "Graceful Rain" and raw["kingdoms"][0]["provenance"] == "rulebook"
    assert raw["torches"]["provenance"] == "stand-in" and raw["torches"]["after_fifth_provenance"] == "rulebook"
    assert raw["layoff"]["provenance"] == "rulebook" and raw["loans"]["provenance"] == "rulebook"


def test_flower_cards() -> None:
    # Stand-in: 10 per colour, 6 with one Basket and 4 with two (70 Baskets).
    assert Counter(f.colour for f in C.FLOWERS) == {c: 10 for c in range(5)}
    assert sum(f.baskets for f in C.FLOWERS) == 70
    for c in range(5):
        assert sorted(f.baskets for f in C.FLOWERS if f.colour == c) == [1] * 6 + [2] * 4


def test_contract_cards() -> None:
    sizes = Counter(len(c.flowers) for c in C.CONTRACTS)
    assert sizes == {1: 8, 2: 14, 3: 14, 4: 10}
    assert sum(len(c.flowers) for c in C.CONTRACTS) == 118
    colours = Counter(x for c in C.CONTRACTS for x in c.flowers)
    assert all(23 <= colours[x] <= 25 for x in range(5))
    assert all(len(set(c.flowers)) >= 2 for c in C.CONTRACTS if len(c.flowers) >= 3)
    links = Counter(c.link for c in C.CONTRACTS)
    assert all(links[m.id] == 6 for m in C.MEANS)
    assert (links["K1"], links["K2"], links["K3"]) == (4, 3, 3)
    for c in C.CONTRACTS:
        b = len(c.flowers)
        if c.means >= 0:
            assert c.coins == 2 * b + C.MEANS_COST[c.means] - 1
        else:
            assert c.coins == 2 * b + C.MEANS_COST[2 * c.kingdom + 1] - 2
        assert -2 <= c.mp <= 3
    assert 0 <= sum(c.mp for c in C.CONTRACTS) / 46 <= 0.5


def test_transport_fits_the_examples() -> None:
    # A 1-Coin means; Graceful Rain's dearest is 2; a 3-Coin means; Jan's 5 in the second kingdom.
    assert C.KINGDOMS[0].name == "Graceful Rain"
    assert [m.cost for m in C.KINGDOMS[0].means] == [1, 2]
    assert 3 in C.MEANS_COST
    assert sum(m.cost for m in C.KINGDOMS[1].means) == 5


def test_jan_contracts() -> None:
    # Rulebook: "Turn Example": two Contracts in the second kingdom pay 13 Coins and 0 MP.
    c15, c22 = C.contract("C15"), C.contract("C22")
    assert (c15.link, c22.link) == ("K2a", "K2b")
    assert c15.coins + c22.coins == 13 and c15.mp + c22.mp == 0


def test_layoff_tables() -> None:
    assert [C.layoff_coins(c) for c in ((1, 0, 0), (2, 0, 0), (1, 1, 0), (3, 0, 0), (2, 1, 0), (1, 1, 1))] == [
        3, 6, 7, 9, 10, 12]
    t2 = C.LAYOFF_TABLE_FAVOR2
    assert [C.layoff_coins(c, t2) for c in ((1, 0, 0), (2, 0, 0), (1, 1, 0), (3, 0, 0), (2, 1, 0), (1, 1, 1))] == [
        4, 8, 10, 12, 13, 15]
    # Passing with more than 3 Workers: only 3 earn Coins, the best 3.
    assert C.layoff_coins((2, 2, 1)) == 12 and C.layoff_coins((4, 0, 0)) == 9


def test_torch_table() -> None:
    assert [C.torch_penalty(t) for t in range(9)] == [0, 1, 2, 4, 6, 9, 12, 15, 18]


def test_exchange_rates() -> None:
    assert [C.exchange_rate(r) for r in (1, 2, 3, 4)] == [5, 4, 3, 2]
    assert C.EXCHANGE_MAX_MP == 10


def test_taxus_cards() -> None:
    kinds = Counter(t.kind for t in C.TAXUS_CARDS)
    # The six kinds of the rulebook; the mix is a stand-in balanced by simulation (docs/rules/flowar.md).
    assert kinds == {"market": 4, "travel": 3, "contracts": 3, "torch_and_reveal": 1, "loan": 2, "torches": 3}
    assert sorted(t.kingdom for t in C.TAXUS_CARDS if t.kind == "travel") == [0, 1, 2]
    assert all(t.workers == (0, 2, 0) for t in C.TAXUS_CARDS if t.kind == "loan")
    assert all(t.workers == (0, 0, 3) and t.torches == 2 for t in C.TAXUS_CARDS if t.kind == "torches")


def test_every_favor_effect_is_interpreted() -> None:
    assert {f.effect for f in C.FAVORS} == set(F.EFFECTS)
    assert {f.timing for f in C.FAVORS} <= F.MENU_TIMINGS | {"acquire", "delivery", "sell", "strike"}


def test_cards_json_is_what_the_stand_in_rules_write() -> None:
    """games/flowar/standins.py documents and reproduces cards.json (python -m games.flowar.standins)."""
    from games.flowar import standins

    assert standins.render(standins.build()) == C.DATA_FILE.read_text(encoding="utf-8")
