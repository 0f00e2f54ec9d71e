"""Determinization of Flowar observations (games/flowar/determinize.py).

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

RAW = json.loads((Path(__file__).parents[2] / "games/flowar/cards.json").read_text())
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
    # the discard piles lie face up and the seat placed its own Contracts below its board: all seen
    shown_f = {x for x in obs["market"] if x} | {x for p in obs["players"] for x in p["fresh"] + p["wilting"]}
    unseen_f = set(FLOWERS) - shown_f - set(obs["flower_discard_cards"])
    own_below = [c for b in obs["players"][seat]["below_contracts"] for c in b["contracts"]]
    shown_c = {x for x in obs["contract_grid"] if x} | {x for p in obs["players"] for x in p["contracts"]}
    unseen_c = set(CONTRACTS) - shown_c - set(obs["contract_discard_cards"]) - set(own_below)
    slots = {k["favor"] for k in obs["kingdoms"]} | {k["next_favor"] for k in obs["kingdoms"]}
    unseen_fav = set(range(1, 21)) - slots
    places: dict[str, set[Any]] = defaultdict(set)
    below = [(s, k) for s, p in enumerate(obs["players"]) for k, c in enumerate(p["below"]) if c and s != seat]
    rng = random.Random(23)
    for _ in range(1500):
        full = determinize(game, obs, rng).full_state()
        assert len(full["fdeck"]) == obs["flower_deck"] and len(full["fdisc"]) == obs["flower_discard"]
        places["fdeck"].update(full["fdeck"])
        places["cdeck"].update(full["cdeck"])
        assert [FLOWERS[x] for x in full["fdisc"]] == obs["flower_discard_cards"]
        assert [CONTRACTS[x] for x in full["cdisc"]] == obs["contract_discard_cards"]
        assert [[CONTRACTS[x] for x in b] for b in full["below"][seat]] == [
            b["contracts"] for b in obs["players"][seat]["below_contracts"]]
        for s, k in below:
            places[f"below{s}{k}"].update(full["below"][s][k])
        places["favors"].update(full["fav_pool"])
        # the other players' MP: the observing seat's own (see the module docstring)
        assert all(m == obs["players"][seat]["mp"] for m in full["mp"])
    flower_index = {f: i for i, f in enumerate(FLOWERS)}
    contract_index = {c: i for i, c in enumerate(CONTRACTS)}
    uf = {flower_index[x] for x in unseen_f}
    uc = {contract_index[x] for x in unseen_c}
    assert places["fdeck"] == uf
    if obs["contract_deck"]:
        assert places["cdeck"] == uc
    for s, k in below:
        assert places[f"below{s}{k}"] == uc
    if obs["favor_pool"]:
        assert places["favors"] == unseen_fav


BOX_TILES = Counter({3: 4, 4: 4, 5: 4})
"""Rulebook "Components": "12 Efficiency Tiles: 4 of value 3, 4 of 4, and 4 of 5"."""


@pytest.mark.parametrize("players", [2, 3, 4])
def test_samples_keep_the_true_hidden_multisets(players: int) -> None:
    """Random games through the public API; an oracle that remembers what was shown.

    The Efficiency Tiles seen on the kingdoms are recorded from the observations
    of every step (one per kingdom and round: "Round Setup"), so the supply of
    every sample must be the box less all of them ("End of the Round", step 2:
    used tiles are discarded, never returned). The discard piles are face up:
    each sample's must equal the real state's, as multisets; so must the deck
    contents, being what is left.
    """
    assert Counter({int(v): c for v, c in TILES.items()}) == BOX_TILES
    game = load_game("flowar", {"players": players})
    rng = random.Random(100 + players)
    checked = later_rounds = 0
    for seed in range(2):
        state = game.new_initial_state()
        play = random.Random(seed)
        seen: list[int] = []  # every tile placed on a kingdom so far, in view
        shown = [0, 0, 0]  # what each kingdom shows (0: no tile)
        while not state.is_terminal():
            now = [rec["efficiency"] for rec in state.observation(None)["kingdoms"]]
            for k in range(3):
                if now[k] and now[k] != shown[k]:  # a new tile (a kingdom holds one per round)
                    assert not shown[k]
                    seen.append(now[k])
            shown = now
            if not state.is_chance_node():
                seat = state.current_player()
                obs = state.observation(seat)
                if supported(obs):
                    assert Counter(obs["efficiency_discard"]) == Counter(seen) - Counter(v for v in shown if v)
                    true = state.full_state()
                    for _ in range(3):
                        full = determinize(game, obs, rng).full_state()
                        supply = Counter({v: c for v, c in full["eff_supply"] if c})
                        assert supply == BOX_TILES - Counter(seen)
                        assert Counter(full["fdisc"]) == Counter(true["fdisc"])
                        assert Counter(full["cdisc"]) == Counter(true["cdisc"])
                        assert Counter(full["fdeck"]) == Counter(true["fdeck"])
                        assert full["below"][seat] == true["below"][seat]
                        # the Contracts in hidden places, all together, are the true ones
                        hidden = [x for s in range(players) if s != seat for b in full["below"][s] for x in b]
                        true_hidden = [x for s in range(players) if s != seat for b in true["below"][s] for x in b]
                        assert Counter(hidden + full["cdeck"] + full["unchosen"]) == \
                            Counter(true_hidden + true["cdeck"] + true["unchosen"])
                    checked += 1
                    later_rounds += obs["round"] > 1
            _step(state, play)
    assert checked > 20 and later_rounds > 10


def test_observation_lists_public_piles_and_only_the_own_below() -> None:
    """The new fields against the real state: piles in order for everybody, ``below_contracts`` for its owner."""
    shown_below = 0
    for seed in range(12):
        shown_below += _check_piles(random.Random(seed))
    assert shown_below > 0


def _check_piles(rng: random.Random) -> int:
    """One random 3-player game checked at every decision; returns how many own Contracts below were shown."""
    state = load_game("flowar", {"players": 3}).new_initial_state()
    shown_below = 0
    while not state.is_terminal():
        if not state.is_chance_node():
            true = state.full_state()
            for seat in (None, 0, 1, 2):
                obs = state.observation(seat)
                assert obs["flower_discard_cards"] == [FLOWERS[x] for x in true["fdisc"]]
                assert obs["contract_discard_cards"] == [CONTRACTS[x] for x in true["cdisc"]]
                assert len(obs["efficiency_discard"]) + obs["efficiency_supply"] + \
                    sum(1 for k in obs["kingdoms"] if k["efficiency"]) == sum(BOX_TILES.values())
                for s, p in enumerate(obs["players"]):
                    if s == seat:
                        assert [b["contracts"] for b in p["below_contracts"]] == [
                            [CONTRACTS[x] for x in b] for b in true["below"][s]]
                        shown_below += sum(p["below"])
                    else:
                        assert p["below_contracts"] == []
        _step(state, rng)
    return shown_below


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
    tiles = json.loads(json.dumps(obs))
    tiles["efficiency_discard"] = [3] * 5  # more 3s than the box has
    pile = json.loads(json.dumps(obs))
    pile["flower_discard_cards"] = pile["flower_discard_cards"] + [pile["market"][0] or "F01"]
    for o in (bad_card, deck, below, favors, tiles, pile):
        with pytest.raises(DeterminizeError):
            determinize(game, o, rng)
    with pytest.raises(DeterminizeError):
        determinize(load_game("flowar", {"players": 3}), obs, rng)
