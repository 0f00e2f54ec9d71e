"""Determinization of Flowar observations (games/flowar/determinize.py, issue 20).

Oracles: the observation and legal actions of the real state (a sampled state
must give them back exactly, in the same order), and the component lists of
``cards.json`` read here independently (Rulebook: "Components": 50 Flower
cards, the Contracts, 20 Kingdom Favors, the Efficiency Tiles), from which
the cards a seat has not seen, and where each may lie, are worked out.
Positions are reached by random play through the public API.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from games.api import State
from games.flowar.determinize import UnsupportedPosition, determinize, game_from_observation, supported
from games.registry import load_game

RAW = json.loads((Path(__file__).parents[1] / "games/flowar/cards.json").read_text())
FLOWERS = [f["id"] for f in RAW["flowers"]]
CONTRACTS = [c["id"] for c in RAW["contracts"]]
TILES = Counter({int(v): int(c) for v, c in RAW["efficiency_tiles"]["values"].items()})


def _step(state: State, rng: random.Random) -> None:
    if state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def _start_of_turn(obs: dict[str, Any]) -> bool:
    ctx = obs["context"]
    return obs["phase"] == "turn" and not (ctx["placed"] or ctx["fired"] or ctx["hired"] or ctx["favor_used"]
                                           or ctx["active_favors"] or ctx["extra_placement"])


def _positions(players: int, seed: int, options: dict[str, Any] | None = None
               ) -> list[tuple[int, dict[str, Any], list[str]]]:
    """Every start of a turn in a random game: (seat, observation, canonical legal actions)."""
    state = load_game("flowar", {"players": players, **(options or {})}).new_initial_state()
    rng = random.Random(seed)
    out = []
    while not state.is_terminal():
        if not state.is_chance_node():
            seat = state.current_player()
            obs = state.observation(seat)
            if _start_of_turn(obs):
                out.append((seat, obs, [a.canonical() for a in state.legal_actions()]))
        _step(state, rng)
    return out


@pytest.mark.parametrize("options", [{"players": 2}, {"players": 3}, {"players": 4},
                                     {"players": 2, "first_game_favors": True}], ids=str)
def test_every_sample_gives_back_its_observation(options: dict[str, Any]) -> None:
    game = load_game("flowar", options)
    players = options["players"]
    rng = random.Random(players)
    checked = 0
    for seed in range(2):
        for seat, obs, legal in _positions(players, seed, options):
            assert supported(obs)
            for _ in range(2):
                twin = determinize(game, obs, rng)
                assert twin.observation(seat) == obs
                assert [a.canonical() for a in twin.legal_actions()] == legal
                assert twin.history == []
            checked += 1
    assert checked > 50


def test_samples_play_to_the_end_by_the_rules() -> None:
    game = load_game("flowar", {"players": 4})
    rng = random.Random(5)
    positions = _positions(4, 9)
    for _seat, obs, _ in positions[:: max(1, len(positions) // 15)]:
        twin = determinize(game, obs, rng)
        while not twin.is_terminal():
            _step(twin, rng)
        assert len(twin.outcome().ranks) == 4
    assert game_from_observation(positions[0][1]).num_players == 4


def _late(players: int) -> tuple[int, dict[str, Any]]:
    """A start of a turn with Flower cards in the discard pile and Contracts below a Player Board."""
    for seed in range(80):
        for seat, obs, _ in _positions(players, seed):
            if obs["flower_discard"] and obs["flower_deck"] and obs["contract_discard"] \
                    and sum(sum(p["below"]) for p in obs["players"]):
                return seat, obs
    raise AssertionError("no such position in 80 random games")


@pytest.mark.parametrize("players", [2, 3])
def test_every_unseen_card_appears_in_every_hidden_place(players: int) -> None:
    seat, obs = _late(players)
    game = load_game("flowar", {"players": players})
    shown_f = {x for x in obs["market"] if x} | {x for p in obs["players"] for x in p["fresh"] + p["wilting"]}
    unseen_f = set(FLOWERS) - shown_f
    shown_c = {x for x in obs["contract_grid"] if x} | {x for p in obs["players"] for x in p["contracts"]}
    unseen_c = set(CONTRACTS) - shown_c
    slots = {k["favor"] for k in obs["kingdoms"]} | {k["next_favor"] for k in obs["kingdoms"]}
    unseen_fav = set(range(1, 21)) - slots
    unseen_tiles = TILES - Counter(k["efficiency"] for k in obs["kingdoms"] if k["efficiency"])
    places: dict[str, set[Any]] = defaultdict(set)
    below = [(s, k) for s, p in enumerate(obs["players"]) for k, c in enumerate(p["below"]) if c]
    rng = random.Random(23)
    for _ in range(1500):
        full = determinize(game, obs, rng).full_state()
        assert len(full["fdeck"]) == obs["flower_deck"] and len(full["fdisc"]) == obs["flower_discard"]
        places["fdeck"].update(full["fdeck"])
        places["fdisc"].update(full["fdisc"])
        places["cdeck"].update(full["cdeck"])
        places["cdisc"].update(full["cdisc"])
        for s, k in below:
            places[f"below{s}{k}"].update(full["below"][s][k])
        places["favors"].update(full["fav_pool"])
        supply = Counter({v: c for v, c in full["eff_supply"]})
        assert sum(supply.values()) == obs["efficiency_supply"] and not supply - unseen_tiles
        places["tiles"].update(v for v, c in supply.items() if c)
        # the other players' MP: the observing seat's own (see the module docstring)
        assert all(m == obs["players"][seat]["mp"] for m in full["mp"])
    flower_index = {f: i for i, f in enumerate(FLOWERS)}
    contract_index = {c: i for i, c in enumerate(CONTRACTS)}
    uf = {flower_index[x] for x in unseen_f}
    uc = {contract_index[x] for x in unseen_c}
    assert places["fdeck"] == uf and places["fdisc"] == uf
    if obs["contract_deck"]:
        assert places["cdeck"] == uc
    assert places["cdisc"] == uc
    for s, k in below:
        assert places[f"below{s}{k}"] == uc
    if obs["favor_pool"]:
        assert places["favors"] == unseen_fav
    if obs["efficiency_supply"]:
        assert places["tiles"] == {v for v, c in unseen_tiles.items() if c}


def test_other_positions_are_refused() -> None:
    game = load_game("flowar", {"players": 2})
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    obs = state.observation(state.current_player())
    assert obs["phase"] == "keep_contract" and not supported(obs)
    with pytest.raises(UnsupportedPosition):
        determinize(game, obs, rng)
    # the menu after a placement (the turn's pending steps are not in a snapshot)
    while not state.is_terminal():
        if not state.is_chance_node():
            o = state.observation(state.current_player())
            if o["phase"] == "turn" and o["context"]["placed"]:
                assert not supported(o)
                break
        _step(state, rng)
    else:
        raise AssertionError("no placement in a whole game")


def test_malformed_observations_raise_determinize_error() -> None:
    from games.flowar.determinize import DeterminizeError

    game = load_game("flowar", {"players": 2})
    _seat, obs, _ = _positions(2, 3)[5]
    rng = random.Random(1)
    bad_card = json.loads(json.dumps(obs))
    bad_card["market"][0] = "C01"  # a Contract where a Flower card lies
    deck = json.loads(json.dumps(obs))
    deck["flower_deck"] = 10_000
    below = json.loads(json.dumps(obs))
    below["players"][0]["below"] = [500, 0, 0]
    favors = json.loads(json.dumps(obs))
    favors["favor_pool"] = 30
    for o in (bad_card, deck, below, favors):
        with pytest.raises(DeterminizeError):
            determinize(game, o, rng)
    with pytest.raises(DeterminizeError):
        determinize(load_game("flowar", {"players": 3}), obs, rng)
