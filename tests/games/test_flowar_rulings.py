"""Flowar rulings: the mandatory placement, Favor 10, the Torch supply, the round-3 Market and
Taxus's Coins (Rulebook: Flowar; decisions in docs/rules/flowar.md).

Positions come from seeded random games (play through the public API) or, for the
Favor checks, from :mod:`games.flowar.script` (a real first turn whose player board is
arranged); the expected values are the rulebook's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from reference.flowar_play import favor_game as _favor_game  # tests/ is on sys.path

from games.api import Action
from games.flowar import actions as A
from games.flowar.cards import FLOWER_COLOUR, TORCH_COUNT
from games.flowar.favors import KEEPS_PASS
from games.flowar.phases import D_GUILD, D_STRIKE, D_TURN
from games.flowar.script import act, arrange, arrange_board, first_turn
from games.flowar.state import FlowarState
from games.registry import load_game

MENU_FAVORS = (13, 14, 15, 16, 19, 20)


def _random_game(game: str, seed: int) -> Iterator[tuple[Any, Action]]:
    """Yield (state, action) at every step of a seeded random game, before the action is applied."""
    st = load_game(game).new_initial_state()
    rng = random.Random(seed)
    while not st.is_terminal():
        a = st.sample_chance(rng) if st.is_chance_node() else rng.choice(st.legal_actions())
        yield st, a
        st.apply_action(a)


def _kinds(st: FlowarState) -> set[str]:
    return {a.to_json()["kind"] for a in st.legal_actions()}


# -- item 5: "You still have to place a Worker this turn (this action is mandatory)" -----------
@pytest.mark.parametrize("favor", MENU_FAVORS)
def test_menu_favors_are_refused_to_a_seat_that_cannot_place(favor: int) -> None:
    st = first_turn("flowar(players=4)", seed=30)
    seat = st.current_player()
    arrange(st, seat, coins=10, torches=2, mp=5, loans=0, workers=(0, 0, 0), below={"K1": ["C37"]})
    arrange_board(st, favors=(favor, 1, 2), strike_area=(1, 1, 1), strikes=())
    assert not any(isinstance(a, A.Place) for a in st.legal_actions())
    assert not any(isinstance(a, A.UseFavor) for a in st.legal_actions())
    assert "pass" in _kinds(st)


@pytest.mark.parametrize("favor", MENU_FAVORS)
def test_menu_favors_are_offered_when_a_placement_stays_possible(favor: int) -> None:
    st = first_turn("flowar(players=4)", seed=30)
    seat = st.current_player()
    arrange(st, seat, coins=10, torches=2, mp=5, loans=0, workers=(1, 1, 1), below={"K1": ["C37"]})
    arrange_board(st, favors=(favor, 1, 2), strike_area=(1, 1, 1), strikes=())
    assert any(isinstance(a, A.UseFavor) and a.favor == favor for a in st.legal_actions())


def test_no_seat_acts_and_then_passes_in_random_games() -> None:
    """Passing is "at the beginning of their turn": a seat that fired, hired or used a Favor
    other than 2, 10 or 11 has begun its turn and must place (decisions 7 and 13). The one
    way out is a strike its own layoff called, where it chose not to pay ("unwilling or
    unable to pay") and so has no Worker left to place."""
    games = passes = 0
    for seed in range(40):
        for n in (2, 4):
            games += 1
            refused, turn = False, -1
            for st, a in _random_game(f"flowar(players={n})", seed):
                if st._turn_seat != turn:
                    refused, turn = False, st._turn_seat
                if isinstance(a, A.PayStrike) and st._cur == st._turn_seat \
                        and a.count < st._workers[st._cur][st._strike_type]:
                    refused = True
                if isinstance(a, A.Pass) and st._phase == D_TURN:
                    passes += 1
                    assert not st._turn_acted or (refused and not any(st._workers[st._cur])), (n, seed, st._round)
    assert games == 80 and passes > 500


def _mixed_game(game: str, seed: int) -> Iterator[tuple[Any, Action]]:
    """Like :func:`_random_game`, but decisions follow the greedy bot half of the time (it delivers)."""
    from bots.strategies.flowar import greedy_choice

    st = load_game(game).new_initial_state()
    rng = random.Random(seed)
    while not st.is_terminal():
        if st.is_chance_node():
            a = st.sample_chance(rng)
        else:
            legal = st.legal_actions()
            seat = st.current_player()
            if rng.random() < 0.7:
                a = legal[greedy_choice(st.observation(seat), [b.to_json() for b in legal], seat)]
            else:
                a = rng.choice(legal)
        yield st, a
        st.apply_action(a)


def test_favor_before_the_placement_keeps_a_placement_possible_in_played_games() -> None:
    """After a menu Favor (not 2, 10, 11) used before placing, the seat can still place."""
    checked = 0
    for seed in range(40):
        for st, a in _mixed_game("flowar(players=3)", seed):
            if isinstance(a, A.UseFavor) and st._phase == D_TURN and st._turn_placed == 0 \
                    and a.favor not in KEEPS_PASS:
                twin = st.clone()
                twin.apply_action(a)
                while twin.current_player() == st.current_player() and twin._phase != D_TURN:
                    twin.apply_action(twin.legal_actions()[-1])
                if twin._phase == D_TURN and twin.current_player() == st.current_player():
                    checked += 1
                    assert _can_place(twin, st.current_player()), (seed, a.label())
    assert checked >= 10


def _can_place(st: Any, seat: int) -> bool:
    """True when ``seat`` can place now, or, having no Worker (Favor 5's free hire used before
    placing), right after the hire it is then offered: hiring is all it may do first."""
    legal = st.legal_actions()
    if any(isinstance(b, A.Place) for b in legal):
        return True
    if not all(isinstance(b, A.Hire) for b in legal) or sum(st._workers[seat]):
        return False
    twin = st.clone()
    twin.apply_action(legal[0])
    while twin.is_chance_node():
        twin.apply_action(twin.legal_actions()[0])
    return twin.current_player() == seat and any(isinstance(b, A.Place) for b in twin.legal_actions())


# -- item 6: Favor 10 with wilting flowers only ------------------------------------------------
def test_favor_10_is_offered_with_wilting_flowers_only_and_keeps_them() -> None:
    st = first_turn("flowar(players=4)", seed=30)
    seat = st.current_player()
    arrange(st, seat, coins=10, workers=(0, 0, 0), fresh=[], wilting=["F11", "F12"], below={"K1": ["C37"]})
    arrange_board(st, favors=(10, 1, 2), strikes=())
    act(st, kind="use_favor", kingdom=1, favor=10)
    act(st, kind="pass")
    assert sorted(st.observation(seat)["players"][seat]["wilting"]) == ["F11", "F12"]  # decision 14


# -- item 7: 20 Torches of Discontent ----------------------------------------------------------
def test_torches_in_play_never_exceed_the_box_in_random_games() -> None:
    most, shown = 0, True
    for seed in range(30):
        for n in (1, 4):
            for st, _ in _random_game(f"flowar(players={n})", seed):
                obs = st.observation(None)
                held = sum(p["torches"] for p in obs["players"]) + obs["taxus"]["torches"]
                most = max(most, held)
                shown = shown and held + obs.get("torch_supply", -1) == TORCH_COUNT
    assert most == TORCH_COUNT == 20  # reached, never exceeded (random games had 24-50 before)
    assert shown  # the observation's supply is what is not held


def test_an_empty_torch_supply_gives_no_torch_but_the_action_happens() -> None:
    st = first_turn("flowar(players=4)", seed=30)
    seat = st.current_player()
    arrange(st, seat, coins=0, torches=19, loans=0, workers=(2, 1, 1))
    act(st, kind="fire", trentis=2, humans=0, foxes=0)  # 2 Torches wanted, 1 left
    assert (st._coins[seat], st._torches[seat]) == (6, 20)
    act(st, kind="take_loan")
    assert (st._coins[seat], st._loans[seat], st._torches[seat]) == (11, 1, 20)
    assert st.observation(None)["torch_supply"] == 0


# -- item 8: the round-3 Market shows all five colours -----------------------------------------
def _round3_market_colours(game: str, seed: int) -> tuple[set[int], set[int]]:
    """Colours in the Market and in deck + discard pile when round 3's first Guild choice comes."""
    for st, _ in _random_game(game, seed):
        if st._round == 3 and st._phase == D_GUILD:
            left = {FLOWER_COLOUR[x] for x in st._flower_deck + st._flower_discard}
            return {FLOWER_COLOUR[x] for x in st._market if x >= 0}, left
    raise AssertionError("no round 3")


def test_round_three_market_seed_82_has_five_colours() -> None:
    shown, _ = _round3_market_colours("flowar(players=4)", 82)
    assert shown == {0, 1, 2, 3, 4}


def test_round_three_market_has_five_colours_unless_none_is_left() -> None:
    for seed in range(120, 150):
        shown, left = _round3_market_colours("flowar(players=4)", seed)
        assert shown == {0, 1, 2, 3, 4} or not (left - shown), seed


# -- item 9: Taxus starts with the second seat's 11 Coins -------------------------------------
def test_taxus_starts_with_the_second_seats_coins() -> None:
    for st, _ in _random_game("flowar(players=1)", 3):
        if st._phase == D_GUILD:
            obs = st.observation(0)
            assert obs["players"][0]["coins"] == 10 and obs["taxus"]["coins"] == 11
            return
    raise AssertionError("no Guild choice")


def _back_to_menu(st: FlowarState, seat: int) -> FlowarState:
    while not (st.current_player() == seat and st.observation(None)["phase"] == "turn"):
        st.apply_action(st.legal_actions()[0])
    return st


@pytest.mark.parametrize("favors", [(13, 14, 15, 16, 19, 20), (20, 19, 16, 15, 14, 13)])
def test_menu_favors_of_a_seat_that_cannot_place_lead_to_a_placement_in_played_games(favors: tuple[int, ...]) -> None:
    """By play only (the Favors are chosen at their chance nodes): a seat at its turn menu that
    cannot place and holds a Contract delivered under Favor 13-16, 19 or 20 is offered that Favor
    only if, after it (every sub-choice tried), a Worker can be placed. Before the fix, 13 and
    14 were offered to seats without Workers, who then passed."""
    refused = offered = 0
    for seed in range(30):
        for st, _ in _favor_game("flowar(players=2)", seed, favors):
            if st.is_chance_node() or st.observation(None)["phase"] != "turn":
                continue
            seat = st.current_player()
            obs = st.observation(seat)
            legal = st.legal_actions()
            if obs["context"]["placed"] or obs["context"]["favor_used"] or any(isinstance(a, A.Place) for a in legal):
                continue
            held = [kd["favor"] for k, kd in enumerate(obs["kingdoms"]) if obs["players"][seat]["below"][k]]
            if not any(f in MENU_FAVORS for f in held):
                continue
            uses = [a for a in legal if isinstance(a, A.UseFavor) and a.favor in MENU_FAVORS]
            refused += len([f for f in held if f in MENU_FAVORS]) - len(uses)
            for use in uses:
                offered += 1
                twin = st.clone()
                twin.apply_action(use)
                subs = [None] if twin.observation(None)["phase"] == "turn" else twin.legal_actions()
                for sub in subs:
                    child = twin.clone()
                    if sub is not None:
                        child.apply_action(sub)
                    child = _back_to_menu(child, seat)
                    assert any(isinstance(a, A.Place) for a in child.legal_actions()), (seed, use.label(), sub)
    assert refused >= 5 and offered >= 1


# -- Kingdom Favor 18 "In your turn" (rules revision 2) ---------------------------------------
def test_favor_18_is_offered_only_at_strikes_of_the_payers_own_turn_in_played_games() -> None:
    """Rulebook, "Kingdom Favors": "In your turn, you may discard 1 fulfilled Contract ... to
    activate the Kingdom Favor". Over played games, at every strike payment where the payer
    holds a Contract delivered in the kingdom where Favor 18 lies (read off its observation),
    Favor 18 is offered in the payer's own turn only: never at a strike called in another
    seat's turn, nor at the Round Setup (nobody's turn)."""
    seen = {"round setup": 0, "another seat's turn": 0, "own turn, offered": 0}
    for seed in range(30):
        for st, _ in _mixed_game("flowar(players=4)", seed):
            if st._phase != D_STRIKE or st.is_chance_node():
                continue
            payer = st.current_player()
            obs = st.observation(payer)
            where = [k for k, kingdom in enumerate(obs["kingdoms"]) if kingdom["favor"] == 18]
            if not where or not obs["players"][payer]["below"][where[0]]:
                continue
            offered = any(isinstance(b, A.UseFavor) and b.favor == 18 for b in st.legal_actions())
            if obs["turn_seat"] == payer:
                seen["own turn, offered"] += offered
            else:
                assert not offered, (seed, obs["turn_seat"], payer)
                seen["round setup" if obs["turn_seat"] < 0 else "another seat's turn"] += 1
    assert min(seen.values()) >= 1, seen
