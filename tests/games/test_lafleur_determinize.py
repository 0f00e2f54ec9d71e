"""Determinization of La Fleur observations (games/lafleur/determinize.py).

Oracles: the observation and legal actions of the real state (a sampled state
must give them back exactly, in the same order), and the card list of
``cards.json`` read here independently (Rulebook: "Contents": one deck per
card type), from which the cards a seat has not seen, and where each may lie,
are worked out. Positions are reached by random play through the public API.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from games.api import State
from games.lafleur.determinize import UnsupportedPosition, determinize, game_from_observation, supported
from games.registry import load_game

CARDS = json.loads((Path(__file__).parents[2] / "games/lafleur/cards.json").read_text())["cards"]
IDS: dict[str, set[str]] = defaultdict(set)
for _c in CARDS:
    IDS[_c["type"]].add(_c["id"])


def _step(state: State, rng: random.Random) -> None:
    if state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def _positions(players: int, seed: int) -> list[tuple[int, dict[str, Any], list[str]]]:
    """Every ``place`` decision of a random game: (seat, observation, canonical legal actions)."""
    state = load_game("lafleur", {"players": players}).new_initial_state()
    rng = random.Random(seed)
    out = []
    while not state.is_terminal():
        if not state.is_chance_node() and state.observation(state.current_player())["phase"] == "place":
            seat = state.current_player()
            out.append((seat, state.observation(seat), [a.canonical() for a in state.legal_actions()]))
        _step(state, rng)
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_sample_gives_back_its_observation(players: int) -> None:
    game = load_game("lafleur", {"players": players})
    rng = random.Random(players)
    checked = 0
    for seed in range(2):
        for seat, obs, legal in _positions(players, seed):
            assert supported(obs)
            for _ in range(2):
                twin = determinize(game, obs, rng)
                assert twin.observation(seat) == obs
                assert [a.canonical() for a in twin.legal_actions()] == legal
                assert twin.history == []
            checked += 1
    assert checked > 50


def test_samples_play_to_the_end_by_the_rules() -> None:
    game = load_game("lafleur", {"players": 3})
    rng = random.Random(5)
    positions = _positions(3, 9)
    for _seat, obs, _ in positions[:: max(1, len(positions) // 15)]:
        twin = determinize(game, obs, rng)
        while not twin.is_terminal():
            _step(twin, rng)
        assert len(twin.outcome().ranks) == 3


def test_game_from_observation() -> None:
    _, obs, _ = _positions(4, 1)[0]
    assert game_from_observation(obs).num_players == 4


def _mid_game(players: int) -> tuple[int, dict[str, Any]]:
    """A ``place`` decision from round 3 on where every other player holds hidden Flower cards."""
    for seed in range(50):
        for seat, obs, _ in _positions(players, seed):
            others = [p for p in obs["players"] if p["seat"] != seat]
            if obs["round"] >= 3 and all(p["cards_in_hand"] > len(p["hand"]) for p in others) \
                    and obs["feature_discard"] + obs["flower_discard"]:
                return seat, obs
    raise AssertionError("no such position in 50 random games")


@pytest.mark.parametrize("players", [2, 4])
def test_every_unseen_card_appears_in_every_hidden_place(players: int) -> None:
    seat, obs = _mid_game(players)
    game = load_game("lafleur", {"players": players})
    me = obs["players"][seat]
    visible = {
        "flower": {m["card"] for m in obs["market"]} | set(obs["flower_discard"])
        | {x for p in obs["players"] for x in p["hand"]},
        "feature": {g["card"] for g in obs["garden_features"]} | set(obs["feature_discard"])
        | {x for p in obs["players"] for x in p["garden_features"]},
        "visitor": {v["card"] for v in obs["visitors"]} | set(obs["visitor_discard"])
        | {x for p in obs["players"] for x in p["visitors"] + [p["companion"]]},
        "artisan": set(obs["artisan_discard"]) | {a["card"] for p in obs["players"] for a in p["artisans"]},
        "event": set(obs["event_discard"]),
    }
    unseen = {k: IDS[k] - v for k, v in visible.items()}
    assert me["cards_in_hand"] == len(me["hand"])
    others = [p["seat"] for p in obs["players"] if p["seat"] != seat]
    in_hand: dict[int, set[str]] = defaultdict(set)
    in_deck: dict[str, set[str]] = defaultdict(set)
    decks = {"flower": 0, "feature": 1, "visitor": 2, "artisan": 3, "event": 5}
    sizes = {k: obs[f"{k}_deck"] for k in decks}
    rng = random.Random(17)
    for _ in range(1500):
        full = determinize(game, obs, rng).full_state()
        for s in others:
            hidden = full["players"][s]["hand"][len(obs["players"][s]["hand"]):]
            assert len(hidden) == obs["players"][s]["cards_in_hand"] - len(obs["players"][s]["hand"])
            assert set(hidden) <= unseen["flower"]
            in_hand[s].update(hidden)
        for k, d in decks.items():
            assert len(full["decks"][d]) == sizes[k]
            in_deck[k].update(full["decks"][d])
    for s in others:
        assert in_hand[s] == unseen["flower"], s
    for k in decks:
        if sizes[k]:
            assert in_deck[k] == unseen[k], k


def test_other_positions_are_refused() -> None:
    game = load_game("lafleur", {"players": 2})
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    obs = state.observation(state.current_player())
    assert obs["phase"] == "choose_character" and not supported(obs)
    with pytest.raises(UnsupportedPosition):
        determinize(game, obs, rng)
    # a place decision seen by a seat that is not to act is refused too
    seat, obs, _ = _positions(2, 0)[0]
    other = load_game("lafleur", {"players": 2})
    spectator = dict(obs, seat=1 - seat)
    with pytest.raises(UnsupportedPosition):
        determinize(other, spectator, rng)
    solo = load_game("lafleur", {"players": 1}).new_initial_state()
    while not solo.is_terminal() and (solo.is_chance_node() or solo.observation(0)["phase"] != "place"):
        _step(solo, rng)
    assert not supported(solo.observation(0))


def test_malformed_observations_raise_determinize_error() -> None:
    from games.lafleur.determinize import DeterminizeError

    game = load_game("lafleur", {"players": 2})
    seat, obs, _ = _positions(2, 3)[5]
    rng = random.Random(1)
    other = 1 - seat
    bad_card = json.loads(json.dumps(obs))
    bad_card["market"][0]["card"] = "V01"  # a Visitor where a Flower card lies
    too_many = json.loads(json.dumps(obs))
    too_many["players"][other]["cards_in_hand"] = 500  # more hidden cards than exist
    shown = json.loads(json.dumps(obs))
    shown["players"][other]["cards_in_hand"] = len(shown["players"][other]["hand"]) - 1
    deck = json.loads(json.dumps(obs))
    deck["flower_deck"] = 10_000
    for o in (bad_card, too_many, deck):
        with pytest.raises(DeterminizeError):
            determinize(game, o, rng)
    if obs["players"][other]["hand"]:
        with pytest.raises(DeterminizeError):
            determinize(game, shown, rng)
    with pytest.raises(DeterminizeError):
        determinize(load_game("lafleur", {"players": 3}), obs, rng)
