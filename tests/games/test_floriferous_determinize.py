"""Determinization of Floriferous observations (games/floriferous/determinize.py).

Oracles: the observation and legal actions of the real state (a sampled state
must give them back exactly), and the card list of ``cards.json`` read here
independently (Rulebook: "Contents": the Garden deck is the Flower,
Arrangement and Sculpture cards, the Desire deck the Desire cards), from which
the cards a seat has not seen, and where each may lie, are worked out.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from games.api import State
from games.floriferous.determinize import DeterminizeError, determinize, game_from_observation
from games.registry import load_game

CARDS = json.loads((Path(__file__).parents[2] / "games/floriferous/cards.json").read_text())["cards"]
GARDEN_IDS = {c["id"] for c in CARDS if c["type"] in ("flower", "arrangement", "sculpture")}
DESIRE_IDS = {c["id"] for c in CARDS if c["type"] == "desire"}

CONFIGS = [
    {"players": 1}, {"players": 1, "extended": True}, {"players": 2}, {"players": 2, "extended": True},
    {"players": 2, "competitive_bounties": True}, {"players": 3}, {"players": 4},
    {"players": 4, "competitive_bounties": True},
]


def _play(state: State, rng: random.Random, decisions: int) -> None:
    """Random play (chance included) until ``decisions`` decisions were made or the game ends."""
    while not state.is_terminal() and decisions > 0:
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        state.apply_action(rng.choice(state.legal_actions()))
        decisions -= 1
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng))


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_every_sample_gives_back_its_observation(options: dict[str, Any]) -> None:
    game = load_game("floriferous", options)
    for seed in range(3):
        rng = random.Random(seed)
        state = game.new_initial_state()
        _play(state, rng, 0)
        while not state.is_terminal():
            seat = state.current_player()
            obs = state.observation(seat)
            legal = [a.canonical() for a in state.legal_actions()]
            for _ in range(2):
                twin = determinize(game, obs, rng)
                assert twin.observation(seat) == obs
                assert [a.canonical() for a in twin.legal_actions()] == legal
            _play(state, rng, 1)
        # a sampled state plays on to the end by the rules
        assert twin.history == []


def test_samples_play_to_the_end() -> None:
    game = load_game("floriferous", {"players": 3})
    rng = random.Random(7)
    state = game.new_initial_state()
    _play(state, rng, 20)
    for _ in range(20):
        twin = determinize(game, state.observation(state.current_player()), rng)
        _play(twin, rng, 10_000)
        assert twin.is_terminal()
        assert len(twin.outcome().ranks) == 3


def _mid_day(players: int, seed: int, decisions: int) -> tuple[Any, State]:
    game = load_game("floriferous", {"players": players})
    state = game.new_initial_state()
    _play(state, random.Random(seed), decisions)
    return game, state


@pytest.mark.parametrize("players", [2, 4])
def test_every_unseen_card_appears_in_every_hidden_place(players: int) -> None:
    # Day 2, a few rounds in: face-down spaces in the Garden rows and the Desire row, cards discarded at
    # the first cleanup (unseen in the snapshot), both decks partly dealt.
    game, state = _mid_day(players, seed=3, decisions=5 * players + 2 * players)
    obs = state.observation(state.current_player())
    assert obs["day"] == 2
    visible = {c["card"] for row in obs["garden"] for c in row["cells"]} | {
        x for p in obs["players"] for x in p["cards"]}
    unseen = {False: GARDEN_IDS - visible, True: DESIRE_IDS - visible}
    hidden = [(r["kind"] == "desire", ri, ci) for ri, r in enumerate(obs["garden"])
              for ci, c in enumerate(r["cells"]) if c["face_down"]]
    assert hidden
    seen_at: dict[tuple[int, int], set[str]] = defaultdict(set)
    in_deck: dict[bool, set[str]] = {False: set(), True: set()}
    rng = random.Random(11)
    ncols = obs["num_rounds"]
    for _ in range(1500):
        full = determinize(game, obs, rng).full_state()
        for _desire, ri, ci in hidden:
            seen_at[(ri, ci)].add(full["cells"][ri * ncols + ci][0])
        in_deck[False].update(full["garden_deck"])
        in_deck[True].update(full["desire_deck"])
        assert len(full["garden_deck"]) == obs["garden_deck"] and len(full["desire_deck"]) == obs["desire_deck"]
    for desire, ri, ci in hidden:
        assert seen_at[(ri, ci)] == unseen[desire], (ri, ci)
    assert in_deck[False] == unseen[False]
    assert in_deck[True] == unseen[True]


def test_hidden_cards_are_never_visible_ones() -> None:
    game, state = _mid_day(2, seed=5, decisions=3)
    obs = state.observation(0)
    visible = {c["card"] for row in obs["garden"] for c in row["cells"]} - {""}
    visible |= {x for p in obs["players"] for x in p["cards"]}
    rng = random.Random(2)
    for _ in range(200):
        full = determinize(game, obs, rng).full_state()
        dealt = [cell[0] for cell in full["cells"] if cell[1]]
        assert not (set(dealt) | set(full["garden_deck"]) | set(full["desire_deck"])) & visible
        assert len(set(dealt)) == len(dealt)


def test_game_from_observation_and_errors() -> None:
    game, state = _mid_day(2, seed=1, decisions=4)
    obs = state.observation(1)
    assert game_from_observation(obs).game_string() == game.game_string()
    with pytest.raises(DeterminizeError):
        determinize(load_game("floriferous", {"players": 3}), obs, random.Random(0))
    bad = json.loads(json.dumps(obs))
    bad["players"][0]["cards"].append("Z99")
    with pytest.raises(DeterminizeError):
        determinize(game, bad, random.Random(0))
