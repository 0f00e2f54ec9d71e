"""Scripted play: reach exact Flowar positions (tests, puzzles for bots, tools).

Because chance is explicit (docs/architecture.md, "games: the rules engines"), a script can choose chance outcomes and
decisions. Flowar's setup is long, so the rulebook-example tests start from a
real position (the first turn of round 1, reached by :func:`first_turn`) and
then :func:`arrange` the few things the example needs, moving cards out of
wherever they are so that every card stays in exactly one place.

Example::

    state = first_turn("flowar(players=4)", seed=1)
    seat = state.current_player()
    arrange(state, seat, coins=2, workers=(0, 0, 2), contracts=["C15", "C22"])
    act(state, kind="place", space="travel_K2", worker="fox")

:func:`arrange` writes the state directly (white box): states built with it
have a history that does not replay to them, so use them for rule checks only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from games.api import Action, GameError
from games.flowar.cards import CONTRACT_INDEX, FLOWER_INDEX, KINGDOM_INDEX, WORKER_INDEX
from games.flowar.phases import D_TURN
from games.flowar.state import FlowarState
from games.registry import load_game


def settle(state: FlowarState, rng: random.Random | None = None) -> None:
    """Resolve chance nodes (with ``rng``, else the first outcome) until a decision or the end."""
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng) if rng else state.legal_actions()[0])


def first_turn(game: str, seed: int = 0, policy: Callable[[FlowarState], Action] | None = None) -> FlowarState:
    """A state at the first turn menu of round 1.

    Chance is drawn from ``random.Random(seed)``; setup decisions (keep a
    Contract, choose a Guild Tile, strike payments) take the first legal
    action unless ``policy`` is given.
    """
    rng = random.Random(seed)
    state = load_game(game).new_initial_state()
    assert isinstance(state, FlowarState)
    while True:
        settle(state, rng)
        if state._phase == D_TURN or state.is_terminal():
            return state
        state.apply_action(policy(state) if policy else state.legal_actions()[0])


def find(state: FlowarState, **fields: Any) -> Action:
    """The one legal action whose JSON has all ``fields`` (``kind`` included).

    Raises:
        GameError: no legal action matches, or several do.
    """
    hits = [a for a in state.legal_actions() if all(a.to_json().get(k) == v for k, v in fields.items())]
    if len(hits) != 1:
        labels = [a.label() for a in state.legal_actions()]
        raise GameError(f"{len(hits)} legal actions match {fields}; legal: {labels}")
    return hits[0]


def act(state: FlowarState, **fields: Any) -> Action:
    """Apply :func:`find` ``(state, **fields)`` and return it (chance nodes are left to the caller)."""
    a = find(state, **fields)
    state.apply_action(a)
    return a


def _take_flower(st: FlowarState, x: int) -> None:
    """Remove Flower card ``x`` from wherever it is."""
    if st._flower_in_deck[x]:
        st._flower_deck.remove(x)
        st._flower_in_deck[x] = 0
        return
    for pile in (st._flower_discard, st._aside, *st._fresh, *st._wilt):
        if x in pile:
            pile.remove(x)
            return
    if x in st._market:
        st._market[st._market.index(x)] = -1
        return
    raise GameError(f"flower {x} is nowhere")


def _take_contract(st: FlowarState, x: int) -> None:
    """Remove Contract ``x`` from wherever it is."""
    if st._contract_in_deck[x]:
        st._contract_deck.remove(x)
        st._contract_in_deck[x] = 0
        return
    for pile in (st._contract_discard, st._unchosen, *st._contracts, *st._dealt, *(b for s in st._below for b in s)):
        if x in pile:
            pile.remove(x)
            return
    if x in st._contract_grid:
        st._contract_grid[st._contract_grid.index(x)] = -1
        return
    raise GameError(f"contract {x} is nowhere")


def _discard_flowers(st: FlowarState, pile: list[int]) -> None:
    st._flower_discard.extend(pile)
    pile.clear()


def arrange(
    state: FlowarState,
    seat: int,
    *,
    coins: int | None = None,
    mp: int | None = None,
    torches: int | None = None,
    loans: int | None = None,
    workers: Iterable[int] | None = None,
    contracts: Iterable[str] | None = None,
    fresh: Iterable[str] | None = None,
    wilting: Iterable[str] | None = None,
    below: Mapping[str, Iterable[str]] | None = None,
) -> None:
    """Set parts of ``seat``'s board. Cards are moved from wherever they are;
    cards a replaced area held go to the discard piles. Workers are (Trentis,
    Humans, Foxes) on the Guild Tile; ``below`` maps a kingdom id to the
    fulfilled Contracts below the board there."""
    st = state
    for name, value in (("_coins", coins), ("_mp", mp), ("_torches", torches), ("_loans", loans)):
        if value is not None:
            getattr(st, name)[seat] = value
    if workers is not None:
        st._workers[seat] = list(workers)
    if contracts is not None:
        st._contract_discard.extend(st._contracts[seat])
        st._contracts[seat] = []
        for c in contracts:
            x = CONTRACT_INDEX[c]
            _take_contract(st, x)
            st._contracts[seat].append(x)
    for area, cards in ((st._fresh[seat], fresh), (st._wilt[seat], wilting)):
        if cards is not None:
            _discard_flowers(st, area)
            for f in cards:
                x = FLOWER_INDEX[f]
                _take_flower(st, x)
                area.append(x)
    if below is not None:
        for k, cards in below.items():
            pile = st._below[seat][KINGDOM_INDEX[k]]
            st._contract_discard.extend(pile)
            pile.clear()
            for c in cards:
                x = CONTRACT_INDEX[c]
                _take_contract(st, x)
                pile.append(x)
    st._legal_cache = None


def arrange_board(
    state: FlowarState,
    *,
    market: Iterable[str] | None = None,
    contract_grid: Iterable[str] | None = None,
    efficiency: Iterable[int] | None = None,
    favors: Iterable[int] | None = None,
    spaces: Mapping[str, Iterable[int]] | None = None,
    strike_area: Iterable[int] | None = None,
    strikes: Iterable[str] | None = None,
) -> None:
    """Set parts of the Main Board (grids in reading order, "" for empty;
    ``spaces`` maps ``contract``/``market``/``travel_K1``.. to Workers per type;
    ``favors`` are the Favors on K1..K3; ``strikes`` the types on strike)."""
    st = state
    if market is not None:
        for slot, f in enumerate(market):
            if st._market[slot] >= 0:
                st._flower_discard.append(st._market[slot])
                st._market[slot] = -1
            if f:
                x = FLOWER_INDEX[f]
                _take_flower(st, x)
                st._market[slot] = x
    if contract_grid is not None:
        for slot, c in enumerate(contract_grid):
            if st._contract_grid[slot] >= 0:
                st._contract_discard.append(st._contract_grid[slot])
                st._contract_grid[slot] = -1
            if c:
                x = CONTRACT_INDEX[c]
                _take_contract(st, x)
                st._contract_grid[slot] = x
    if efficiency is not None:
        st._efficiency = list(efficiency)
    if favors is not None:
        st._favor_slots[0:3] = list(favors)
    if spaces is not None:
        names = ("contract", "market", "travel_K1", "travel_K2", "travel_K3")
        for name, counts in spaces.items():
            st._spaces[names.index(name)] = list(counts)
    if strike_area is not None:
        st._strike_area = list(strike_area)
    if strikes is not None:
        st._strike = [False, False, False]
        for w in strikes:
            st._strike[WORKER_INDEX[w]] = True
    st._legal_cache = None


def play_random(state: FlowarState, rng: random.Random) -> FlowarState:
    """Play ``state`` to the end with uniformly random decisions and chance from ``rng``."""
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


__all__ = ["act", "arrange", "arrange_board", "find", "first_turn", "play_random", "settle"]
