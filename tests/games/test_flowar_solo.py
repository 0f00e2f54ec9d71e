"""Flowar solo mode against Taxus (Rulebook: Flowar, "Do You Dare to Face Taxus Alone?")."""

from __future__ import annotations

import random

from games.flowar import actions as A
from games.flowar.phases import C_TAXUS, D_TURN
from games.flowar.scoring import breakdown
from games.flowar.script import arrange, arrange_board, first_turn, play_random, settle
from games.flowar.state import FlowarState
from games.registry import load_game

TX = 1  # Taxus's number in turn orders


def to_taxus_turn(st: FlowarState) -> None:
    """Play the player's turns (Guild action or end) until Taxus reveals a card."""
    while st._phase != C_TAXUS:
        settle(st) if st.is_chance_node() and st._phase != C_TAXUS else None
        if st._phase == C_TAXUS:
            return
        if st._phase == D_TURN:
            if st._turn_placed:
                st.apply_action(A.END_TURN)
            else:
                places = [a for a in st.legal_actions() if isinstance(a, A.Place) and a.coins == 0]
                st.apply_action(places[0] if places else A.PASS)
        else:
            st.apply_action(st.legal_actions()[0])


def test_solo_setup() -> None:
    """Solo "Setup": as two players, but all 27 Workers; your marker first, Taxus second."""
    st = first_turn("flowar(players=1)", seed=1)
    assert st._bag_full == 9 and st._track == [0, TX]
    assert st._coins[0] <= 10 and len(st._guilds) == 2
    assert sum(st._bag) == 27 - 10
    assert st._taxus_pile == 5 and len(st._taxus_deck) == 16
    assert st._fellowship == st._taxus_guild and st._taxus_mp == st._taxus_guild
    assert sorted(st._order, key=lambda s: st._taxus_guild if s == TX else st._guild[0]) == st._order
    obs = st.observation(0)
    assert obs["solo"] and obs["taxus_seat"] == 1 and obs["taxus"]["guild"] == st._taxus_guild


def test_taxus_reveals_five_cards_then_passes() -> None:
    """Solo "Round Overview": five cards from his draw pile, then (pile empty) Taxus passes."""
    st = first_turn("flowar(players=1)", seed=2)
    rng = random.Random(0)
    pile_reveals = 0
    while st._round == 1:
        if st._phase == C_TAXUS:
            pile_reveals += not st._taxus_extra
            st.apply_action(st.sample_chance(rng))
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        elif st._phase == D_TURN:
            st.apply_action(A.END_TURN if st._turn_placed else A.PASS)
        else:
            st.apply_action(st.legal_actions()[0])
    assert pile_reveals == 5
    assert sorted(st._track) == [0, TX]


def test_taxus_torch_and_reveal() -> None:
    """Taxus Cards: return a Torch, reveal a card beyond the five and take its action (no Workers)."""
    st = first_turn("flowar(players=1)", seed=3)
    to_taxus_turn(st)
    st._taxus_torches = 2
    arrange_board(st, efficiency=(5, 3, 3))
    pile, trentis, foxes = st._taxus_pile, st._spaces[1][0], st._spaces[2][2]
    st.apply_action(A.RevealTaxus("T11"))
    assert st._taxus_torches == 1 and st._phase == C_TAXUS and st._taxus_pile == pile
    assert st._spaces[1][0] == trentis + 1
    mp = st._taxus_mp
    st.apply_action(A.RevealTaxus("T05"))  # Fox on K1: its action only
    assert st._taxus_mp == mp + 10 and st._spaces[2][2] == foxes


def test_taxus_loan_and_torches_cards() -> None:
    st = first_turn("flowar(players=1)", seed=4)
    to_taxus_turn(st)
    coins, humans = st._taxus_coins, st._spaces[0][1]
    st.apply_action(A.RevealTaxus("T12"))
    assert (st._taxus_coins - coins, st._taxus_loans, st._taxus_torches) == (5, 1, 1)
    assert st._spaces[0][1] == humans + 2
    to_taxus_turn(st)
    foxes = [st._spaces[2 + k][2] for k in range(3)]
    st.apply_action(A.RevealTaxus("T14"))
    assert st._taxus_torches == 3 and [st._spaces[2 + k][2] for k in range(3)] == [f + 1 for f in foxes]


def test_taxus_takes_workers_from_the_strike_area_when_the_bag_lacks_them() -> None:
    st = first_turn("flowar(players=1)", seed=5)
    to_taxus_turn(st)
    st._bag = [0, 0, 0]
    st._strike_area = [3, 0, 0]
    st._strike = [True, False, False]
    st.apply_action(A.RevealTaxus("T01"))
    assert st._strike_area[0] == 2 and not st._strike[0]


def test_solo_travel_pays_for_all_three_spaces() -> None:
    """Solo "Round Overview": Travel costs the Workers of all three kingdoms, as with two players."""
    st = first_turn("flowar(players=1)", seed=6)
    while not (st._phase == D_TURN and st.current_player() == 0):
        st.apply_action(st.legal_actions()[0])
    arrange(st, 0, coins=20, workers=(0, 0, 1))
    arrange_board(st, spaces={"travel_K1": (0, 0, 2), "travel_K2": (0, 0, 1), "travel_K3": (0, 0, 0)}, strikes=())
    assert {a.coins for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "travel_K3"} == {4}


def test_taxus_exchange_and_carry_over() -> None:
    """Solo "End of the Round": as many MP as the Coins buy; the rest is saved."""
    st = first_turn("flowar(players=1)", seed=7)
    st._taxus_coins = 13
    st._taxus_exchange()
    assert (st._taxus_mp - st._taxus_guild, st._taxus_coins) == (2, 3)


def test_taxus_picks_the_highest_tile_when_first_and_deck_reshuffles_before_round_3() -> None:
    st = first_turn("flowar(players=1)", seed=8)
    rng = random.Random(1)
    checked = 0
    while not (st._round == 3 and st._phase == D_TURN):
        if st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        elif st._phase == D_TURN:
            # Keep placing until Taxus has passed, so that he is first next round.
            if st._turn_placed:
                st.apply_action(A.END_TURN)
            elif not st._taxus_passed:
                arrange(st, 0, coins=100, workers=(3, 3, 3))
                st.apply_action(next(a for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "market"))
            else:
                st.apply_action(A.PASS)
        else:
            st.apply_action(st.legal_actions()[0])
        if st._phase == D_TURN and st._round == 2 and st._track[0] == TX:
            assert st._taxus_guild == max(st._guilds)
            checked += 1
    assert checked
    assert len(st._taxus_deck) + len(st._taxus_discard) == 16 and len(st._taxus_discard) <= 7


def test_solo_outcome() -> None:
    """Solo "End of the Game": Taxus scores like a player; the player defeats him with more MP."""
    st = play_random(load_game("flowar(players=1)").new_initial_state(), random.Random(3))
    out = st.outcome()
    assert len(out.scores) == 1
    assert out.ranks == ((1,) if out.details["defeated_taxus"] else (2,))
    tx = out.details["taxus"]
    b = breakdown(st._taxus_mp, st._taxus_torches, st._taxus_loans, st._taxus_coins, 0, 0, st._taxus_guild)
    assert tx["total"] == b.total
    me = out.details["breakdown"][0]
    # "If there is a tie, it is broken according to this order": Contracts left below, Baskets left, Coins
    # left (the most wins each), then the lowest Guild number. (Random play never ties with him.)
    mine = (out.scores[0], me["contracts_below"], me["baskets"], me["coins"], -me["guild"])
    his = (tx["total"], tx["contracts_below"], tx["baskets"], tx["coins"], -tx["guild"])
    assert out.details["defeated_taxus"] == (mine > his)
    assert out.details["breakdown"][0]["achievements"]["defeated_taxus"] == out.details["defeated_taxus"]


def test_a_solo_game_taxus_wins_is_ranked_second() -> None:
    """ "Have you managed to defeat Taxus?": random play usually does not; such a game ranks 2, not 1.

    The oracle is the scores (the player's MP total against Taxus's, with the tie-break
    steps only on equal totals), not the engine's ``defeated_taxus`` flag.
    """
    seen = {1: 0, 2: 0}
    for seed in range(12):
        out = play_random(load_game("flowar(players=1)").new_initial_state(), random.Random(seed)).outcome()
        mine, his = out.scores[0], out.details["taxus"]["total"]
        if mine != his:
            assert out.ranks == ((1,) if mine > his else (2,)), (seed, mine, his)
        seen[out.ranks[0]] += 1
    assert seen[2] > 0  # the losing case is exercised


def test_taxus_exchanges_no_coins_after_round_4() -> None:
    """Rules revision 3 (decision 22): "The game ends after Round 4. Do not perform the end of
    Round steps after Round 4" ("End of the Game"), and Taxus's exchange is one of his "End of
    the Round" steps, so the Coins he holds after Round 4 stay Coins (they count only for the
    third tie-break). By play: the game's last step is not one of Taxus's reveals (a player's
    pass, or a card drawn to refill a grid after his last card), and it leaves his Coins and MP
    as they were. Revision 2 turned them into MP there (seed 1: 23 Coins to 3)."""
    checked = with_coins = 0
    for seed in range(30):
        st = load_game("flowar(players=1)").new_initial_state()
        rng = random.Random(seed)
        before: dict[str, int] = {}
        last = None
        while not st.is_terminal():
            before = st.observation(None)["taxus"]
            last = st.sample_chance(rng) if st.is_chance_node() else rng.choice(st.legal_actions())
            st.apply_action(last)
        if isinstance(last, A.RevealTaxus):
            continue  # his last card's own Coins or MP come with the step
        checked += 1
        after = st.observation(None)["taxus"]
        assert (after["coins"], after["mp"]) == (before["coins"], before["mp"]), seed
        with_coins += after["coins"] >= 2  # Round 4's rate: revision 2 bought MP with them
    assert checked >= 10 and with_coins >= 5, (checked, with_coins)


def test_taxus_keeps_his_coins_after_round_4_in_the_audited_seed() -> None:
    """The audit's solo game, seed 1 (chance and uniform decisions from ``random.Random(1)``):
    Taxus ends with 23 Coins and 58 MP; revision 2 exchanged them at Round 4's rate, 20 Coins
    for 10 MP (23 to 3, MP 58 to 68)."""
    ends = {}
    for revision in (2, 3):
        st = load_game("flowar(players=1)").at_revision(revision).new_initial_state()
        rng = random.Random(1)
        while not st.is_terminal():
            st.apply_action(st.sample_chance(rng) if st.is_chance_node() else rng.choice(st.legal_actions()))
        tx = st.observation(None)["taxus"]
        ends[revision] = (tx["coins"], tx["mp"])
    assert ends == {3: (23, 58), 2: (3, 68)}
