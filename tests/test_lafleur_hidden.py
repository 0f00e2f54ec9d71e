"""Hidden information in La Fleur: hands, setup choices and decks never leak (DESIGN §2).

Complements tests/test_conformance.py (which resamples what no seat may see) with
per-seat resampling: a seat's observation and legal actions are the same whatever
the cards it cannot see.
"""

from __future__ import annotations

import random

import pytest

from games.api import canonical_json
from games.lafleur.cards import FLOWERS
from games.lafleur.game import LaFleurGame
from games.registry import load_game


@pytest.mark.parametrize("variant", ["lafleur(players=4)", "lafleur(players=2)", "lafleur(players=1)"])
def test_per_seat_resampling_keeps_that_seats_view(variant: str) -> None:
    game = load_game(variant)
    moved = 0
    for seed in (0,) if game.num_players > 2 else (0, 1):
        rng = random.Random(seed)
        state = game.new_initial_state()
        step = 0
        while not state.is_terminal():
            if step % 23 == 3:
                for seat in range(game.num_players):
                    twin = state.resample_hidden(random.Random(step * 7 + seat), seat)
                    assert twin.observation(seat) == state.observation(seat)
                    if state.current_player() == seat:
                        assert [a.to_json() for a in twin.legal_actions()] == [
                            a.to_json() for a in state.legal_actions()]
                    moved += twin.state_hash() != state.state_hash()
            state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
            step += 1
    assert moved


def test_no_private_card_in_another_seats_view() -> None:
    """A hand card never seen face-up appears only in its owner's observation; decks show sizes only."""
    game = load_game("lafleur(players=3)")
    rng = random.Random(9)
    state = game.new_initial_state()
    step = 0
    while not state.is_terminal():
        if step % 5 == 0:
            for owner in range(3):
                private = [FLOWERS[x].id for x in state._hand[owner] if not state._public_f[x]]
                for seat in (None, *(s for s in range(3) if s != owner)):
                    text = canonical_json(state.observation(seat))
                    assert not any(f'"{c}"' in text for c in private)
            deck_ids = [FLOWERS[x].id for x in state._deck[0]]
            spectator = canonical_json(state.observation(None))
            assert not any(f'"{c}"' in spectator for c in deck_ids if not state._public_f[FLOWERS.index(
                next(f for f in FLOWERS if f.id == c))])
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
        step += 1


def test_solo_opponent_hand_is_face_down() -> None:
    state = load_game("lafleur(players=1)").new_initial_state()
    rng = random.Random(2)
    while not state.is_terminal():
        opp = state.observation(0)["players"][1]
        assert opp["hand"] == [] and opp["hand_size"] == len(state._hand[1])
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions()))


def test_decisions_stay_small() -> None:
    """DESIGN §2: no decision offers more than a few hundred options."""
    worst = 0
    for variant in LaFleurGame.VARIANTS:
        game = load_game(variant)
        for seed in (0, 1, 2):
            rng = random.Random(seed)
            state = game.new_initial_state()
            while not state.is_terminal():
                legal = state.legal_actions()
                if not state.is_chance_node():
                    worst = max(worst, len(legal))
                state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal))
    assert worst <= 200
