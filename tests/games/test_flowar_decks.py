"""The Contract deck is reshuffled the moment it runs out (Rulebook, "Contract Petal": "If at any
time the Contract Deck runs out, shuffle the discard Cards to form a new deck"), unlike the Flower
deck, whose rule waits until a card is needed ("Market Petal": "when you need to draw from it").

Positions are reached by play (a random policy that favours the Contract space, so the deck runs
out within a game); the oracle is the rule read off each public observation: never an empty
Contract deck beside a non-empty discard pile, and a reshuffle (discard pile emptied, deck grown)
seen at least once, so the rule was exercised."""

from __future__ import annotations

import random

import pytest

from games.registry import load_game


def _contract_heavy_game(players: int, seed: int) -> tuple[int, int]:
    """Play one game; assert the rule at every decision. Returns (decisions, reshuffles seen)."""
    rng = random.Random(seed)
    st = load_game(f"flowar(players={players})").new_initial_state()
    before = None
    decisions = reshuffles = 0
    while not st.is_terminal():
        if st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
            continue
        o = st.observation(None)
        deck, disc = o["contract_deck"], o["contract_discard"]
        assert not (deck == 0 and disc > 0), (f"round {o['round']}: the Contract deck is empty beside a discard "
                                              f"pile of {disc} (the rulebook reshuffles at once)")
        assert disc == len(o["contract_discard_cards"])
        if before is not None and before[1] > 0 and disc == 0 and deck > before[0]:
            reshuffles += 1
        before = (deck, disc)
        legal = st.legal_actions()
        pref = [a for a in legal if a.to_json().get("kind") == "place" and a.to_json().get("space") == "contract"]
        st.apply_action(rng.choice(pref) if pref and rng.random() < 0.7 else rng.choice(legal))
        decisions += 1
    return decisions, reshuffles


@pytest.mark.parametrize("seed", [13, 14, 15, 16])
def test_the_contract_deck_is_reshuffled_as_soon_as_it_runs_out(seed: int) -> None:
    decisions, _ = _contract_heavy_game(4, seed)
    assert decisions > 0


def test_the_contract_deck_ran_out_and_was_reshuffled_in_these_games() -> None:
    """Without a reshuffle the test above would pass vacuously: seed 13 (found by a rules audit)
    runs the deck out in round 4."""
    total = sum(_contract_heavy_game(4, seed)[1] for seed in (13, 14, 15, 16))
    assert total >= 1
