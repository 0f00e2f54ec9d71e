"""The greedy Flowar strategy: visible information only, and clearly stronger than random."""

from __future__ import annotations

import random

import pytest

from bots.strategies import STRATEGIES
from bots.strategies.flowar import greedy_choice
from games.flowar.phases import D_KEEP
from games.flowar.state import FlowarState
from games.registry import load_game


def play(game: str, seed: int, greedy_seats: set[int]) -> FlowarState:
    state = load_game(game).new_initial_state()
    assert isinstance(state, FlowarState)
    rng = random.Random(seed)
    bot_rng = random.Random(seed + 1)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        seat = state.current_player()
        legal = state.legal_actions()
        if seat in greedy_seats:
            i = greedy_choice(state.observation(seat), [a.to_json() for a in legal], seat)
            assert 0 <= i < len(legal)
        else:
            i = bot_rng.randrange(len(legal))
        state.apply_action(legal[i])
    return state


def test_registered_for_the_greedy_bot() -> None:
    assert STRATEGIES[("greedy", "flowar")] is greedy_choice


@pytest.mark.parametrize("players", [2, 4])
def test_greedy_beats_random(players: int) -> None:
    games = 8 if players == 2 else 6
    wins = 0
    margin = 0.0
    for seed in range(games):
        seat = seed % players
        out = play(f"flowar(players={players})", 100 + seed, {seat}).outcome()
        wins += out.ranks[seat] == 1
        margin += out.scores[seat] - max(s for i, s in enumerate(out.scores) if i != seat)
    assert wins == games
    assert margin / games > 20


def test_greedy_solo_scores_far_above_random() -> None:
    greedy = [play("flowar(players=1)", s, {0}).outcome().scores[0] for s in range(4)]
    rand = [play("flowar(players=1)", s, set()).outcome().scores[0] for s in range(4)]
    assert min(greedy) > max(rand)


def test_greedy_uses_visible_information_only() -> None:
    """The choice depends on the observation alone: resampling what the seat cannot see changes nothing."""
    for seed in range(4):
        state = load_game("flowar(players=3)").new_initial_state()
        rng = random.Random(seed)
        while state._phase != D_KEEP:
            state.apply_action(state.sample_chance(rng))
        state.apply_action(state.legal_actions()[0])  # seat 0 keeps; seat 1 decides next
        seat = state.current_player()
        twin = state.resample_hidden(random.Random(seed + 9), seat)
        assert twin.state_hash() != state.state_hash()
        choices = [greedy_choice(s.observation(seat), [a.to_json() for a in s.legal_actions()], seat)
                   for s in (state, twin)]
        assert choices[0] == choices[1]


def test_greedy_rejects_an_empty_action_list() -> None:
    with pytest.raises(ValueError):
        greedy_choice({}, [], 0)
