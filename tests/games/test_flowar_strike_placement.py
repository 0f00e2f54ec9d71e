"""The mandatory placement after an action that calls a strike or calls it off (rules revision 3).

Rulebook: "Place a Worker (this is mandatory)"; "The moment a player cannot or decides not to
take any more actions, they pass at the beginning of their turn"; "Strikes"; "Hiring Workers":
"This may result in a strike being called off"; Kingdom Favor 19: "This could lead to a strike
or call it off". Decision 32 (docs/rules/flowar.md): before the placement an action is offered
when a Worker can still be placed in the position it leads to, the strikes it calls or calls
off included. Revision 2 judged a hire, a layoff and a Favor 19 swap with the strikes as they
were before the action.

The positions come from seeded games played through the public API (the driver below: the
greedy bot 70 %, random 30 %, the Kingdom Favors chosen at their chance nodes). The audit
that found these faults cited positions of its own random player ("4 players, seed 6, step
147"); that player is not in the repository, so these are the same situations reached by this
driver. The oracle is the rulebook's consequence: after the action, some way of answering
the strike leaves a legal placement.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from reference.flowar_play import favor_game, hungry_game

from games.api import Action
from games.flowar import actions as A
from games.registry import load_game

FAVORS = (19, 5, 13)
PASS_KEPT = (2, 10, 11)  # Favors that only change the passing steps (decision 7)


def _at(game: str, seed: int, step: int) -> Any:
    """The state of :func:`_game` with ``step`` actions in its history."""
    for st, _ in favor_game(game, seed, FAVORS):
        if len(st.history) == step:
            return st
    raise AssertionError("the game ended first")


def _places(st: Any, seat: int) -> list[A.Place]:
    return [a for a in st.legal_actions() if isinstance(a, A.Place)] if st.current_player() == seat else []


def places_later(st: Any, seat: int) -> bool:
    """Whether some legal continuation of ``st`` lets ``seat`` place a Worker in this turn.

    Every decision of the seat is tried but Loans (a Loan never forbids passing, decision 13);
    other seats' strike payments and chance take their first option (they cannot change what
    the seat can afford)."""
    while st.is_chance_node() or (not st.is_terminal() and st.current_player() != seat):
        if st.is_chance_node() or st.observation(None)["phase"] == "strike":
            st.apply_action(st.legal_actions()[0])
        else:
            return False  # the turn is over
    if st.is_terminal():
        return False
    legal = st.legal_actions()
    if st.observation(None)["phase"] == "turn" and any(isinstance(a, A.Place) for a in legal):
        return True
    for a in legal:
        if isinstance(a, (A.TakeLoan, A.Pass)):
            continue
        twin = st.clone()
        twin.apply_action(a)
        if places_later(twin, seat):
            return True
    return False


def _after(st: Any, action: Action) -> Any:
    twin = st.clone()
    twin.apply_action(action)
    return twin


# -- item 1: a hire that calls a strike off -------------------------------------------------------
def test_a_hire_that_calls_the_strike_off_is_offered_when_it_makes_a_placement_affordable() -> None:
    """2 players, seed 164, step 222: no Worker left, 11 Coins, Trentis on strike with exactly 3
    in the Strike Area. Hiring a Trenti (5 Coins) calls the strike off ("If that happens, retrieve
    the Strike Diorama"), so the Market costs its Workers + 1 and the flowers, no Diorama."""
    st = _at("flowar(players=2)", 164, 222)
    seat = st.current_player()
    obs = st.observation(seat)
    assert obs["phase"] == "turn" and "trenti" in obs["strikes"] and obs["strike_area"]["trentis"] == 3
    assert obs["players"][seat]["coins"] == 11 and not any(obs["players"][seat]["workers"].values())
    hire = [a for a in st.legal_actions() if isinstance(a, A.Hire) and a.worker == "trenti"]
    assert hire, "the hire that calls the Trenti strike off is refused"
    after = _after(st, hire[0])
    seen = after.observation(seat)
    assert "trenti" not in seen["strikes"]
    market = [a for a in _places(after, seat) if a.space == "market"]
    price = next(g["flower_price"] for g in seen["guild_tiles"] if g["guild"] == seen["players"][seat]["guild"])
    assert market and {a.coins for a in market} == {sum(seen["market_space"].values()) + 1 + price}


# -- item 2: a layoff that calls a strike ---------------------------------------------------------
def test_a_layoff_that_calls_a_strike_is_refused_when_no_payment_leaves_a_placement() -> None:
    """2 players, seed 83, step 223: two Foxes, 1 Coin, 2 Foxes in the Strike Area. Firing one
    Fox earns 3 Coins and calls the Fox strike; whether the seat pays 0 or 1 Coin for its other
    Fox, no placement is affordable, so it would have acted and then had to pass. Every layoff
    the engine offers there must leave a placement."""
    st = _at("flowar(players=2)", 83, 223)
    seat = st.current_player()
    obs = st.observation(seat)
    assert obs["phase"] == "turn" and obs["players"][seat]["workers"]["foxes"] == 2
    assert obs["strike_area"]["foxes"] == 2 and "fox" not in obs["strikes"]
    for fire in [a for a in st.legal_actions() if isinstance(a, A.Fire)]:
        assert places_later(_after(st, fire), seat), fire.label()
    fired = _fired_one_fox(load_game("flowar(players=2)").at_revision(2), 223)
    assert fired is not None and not places_later(fired, seat)  # revision 2's dead end, by its own rules


def _fired_one_fox(game: Any, step: int) -> Any:
    """Revision 2 replayed to ``step`` of seed 83, then its offered layoff of one Fox."""
    st = game.new_initial_state()
    for ref, a in favor_game("flowar(players=2)", 83, FAVORS):
        if len(ref.history) == step:
            fox = [b for b in st.legal_actions() if isinstance(b, A.Fire) and b.label() == "fire 1 fox"]
            return _after(st, fox[0]) if fox else None
        st.apply_action(a)
    return None


# -- item 3: a Kingdom Favor 19 swap -------------------------------------------------------------
def test_a_favor_19_swap_that_calls_the_strike_off_is_offered() -> None:
    """2 players, seed 184, step 110: one Trenti, 1 Coin, Foxes on strike with 3 in the Strike
    Area. Swapping the Trenti for a Fox calls the Fox strike off, and the Fox can go where it
    could not before. Favor 19 and that swap are offered, and after it a Worker is placed."""
    st = _at("flowar(players=2)", 184, 110)
    seat = st.current_player()
    obs = st.observation(seat)
    assert "fox" in obs["strikes"] and obs["strike_area"]["foxes"] == 3
    favor = [a for a in st.legal_actions() if isinstance(a, A.UseFavor) and a.favor == 19]
    assert favor, "Favor 19 is refused"
    swapping = _after(st, favor[0])
    swaps = [a for a in swapping.legal_actions() if isinstance(a, A.SwapWorker)]
    assert [(a.give, a.take) for a in swaps] == [("trenti", "fox")]
    after = _after(swapping, swaps[0])
    assert "fox" not in after.observation(seat)["strikes"] and places_later(after, seat)


# -- the class: from every action offered before the placement, a placement is reachable ---------
def _check_reachability(positions: Iterator[tuple[Any, Action]], label: str, counts: dict[str, int]) -> None:
    for st, _ in positions:
        obs = st.observation(None)
        if obs["phase"] != "turn" or obs["context"]["placed"]:
            continue
        seat = st.current_player()
        for a in st.legal_actions():
            if isinstance(a, (A.Pass, A.TakeLoan, A.Place)) or isinstance(a, A.UseFavor) and a.favor in PASS_KEPT:
                continue
            after = _after(st, a)
            counts["checked"] += 1
            counts["changed"] += after.observation(None)["strikes"] != obs["strikes"]
            assert places_later(after, seat), (label, len(st.history), a.label())


@pytest.mark.parametrize("game", ["flowar(players=2)", "flowar(players=3)", "flowar(players=4)"])
def test_every_action_offered_before_the_placement_leads_to_a_placement(game: str) -> None:
    """Placement reachability: at every turn menu before the placement, each action offered but
    a pass, a Loan and Kingdom Favors 2, 10 and 11 (after which the seat is still at the
    beginning of its turn and may pass, decision 7) has a legal continuation in which the seat
    places a Worker ("Place a Worker (this is mandatory)"). Positions of greedy-and-random play
    and of the strike-hungry player (hires, layoffs, Favors 5 and 19 before placing, short of
    Coins), which reaches the layoffs revision 2 offered into a dead end (3 players, seeds 1015
    and 1023)."""
    counts = {"checked": 0, "changed": 0}
    for seed in range(8):
        _check_reachability(favor_game(game, seed, FAVORS), f"{game} greedy seed {seed}", counts)
    for seed in range(1000, 1030):
        _check_reachability(hungry_game(game, seed), f"{game} strike-hungry seed {seed}", counts)
    print(f"\n{game}: {counts['checked']} actions before a placement checked, {counts['changed']} of them "
          "changed a strike")
    assert counts["checked"] > 1000 and counts["changed"] > 100, counts
