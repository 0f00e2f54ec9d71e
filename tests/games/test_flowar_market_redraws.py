"""Flowar: the Flower cards put back while filling the Market are shown to everybody.

Rulebook: Flowar, "Game Setup", step 5: "draw face-up Cards to fill the 3x3 grid of
the Market Petal. At least one flower of each type must be present in the grid. If
you place the last Flower Card and there is not at least one flower of each type,
discard any of the repeated ones and draw Cards until all 5 different flowers are
present ... If you had to discard any Cards, shuffle them to form a deck". The same
fill follows the refresh before round 3 (docs/rules/flowar.md, decision 17, which
also says which repeated card is discarded: one of the most repeated colour, last
slot first). Those cards lie face up at the table before they go back into the deck,
so every seat and the spectator see them: ``market_redraws`` in each observation
(and in the typed ``FlowarObservation``), in order; the viewer's step list says
which card a step put back.

The oracle is a small model of that text run over a replay's chance outcomes alone
(``draw_flower`` cards and the ``draw_efficiency`` steps that open each round, with
the card colours from ``games/flowar/cards.json``): it never reads the engine's state.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from games.flowar.determinize import determinize
from games.registry import load_game
from games.replay import iter_states
from proto.parterre.v1 import flowar_pb2
from referee.codec import to_typed
from web.labels import ALL, SPECTATOR, step_labels

_CARDS = json.loads((Path(__file__).parents[2] / "games" / "flowar" / "cards.json").read_text(encoding="utf-8"))
COLOUR = {f["id"]: f["colour"] for f in _CARDS["flowers"]}
SLOTS = 9
EFFICIENCY_DRAWS_BEFORE_ROUND_3 = 6
"""Efficiency Tiles drawn at setup (one per kingdom) and at the start of round 2; the next three open round 3."""


def _replay(game_string: str, seed: int) -> dict[str, Any]:
    """A replay (``parterre-replay/1`` steps) of a random game: chance by ``random.Random(seed)``,
    decisions uniform among the legal actions."""
    game = load_game(game_string)
    state = game.new_initial_state()
    rng = random.Random(seed)
    steps: list[dict[str, Any]] = []
    while not state.is_terminal():
        player = state.current_player()
        action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        steps.append({"i": len(steps), "player": player, "action": action.to_json(), "label": action.label()})
        state.apply_action(action)
    return {"format": "parterre-replay/1", "game": "flowar", "game_string": game.game_string(),
            "rules_revision": game.rules_revision, "steps": steps}


def oracle(steps: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(step index, ``{"round", "slot", "card"}``) of every card put back while filling the Market.

    A fill starts at the first ``draw_flower`` of the game (round 0) and at the first one after
    the Efficiency Tiles of round 3: nine cards fill the empty grid in reading order; then, while a
    colour is missing, a card of the most repeated colour is put back (the last such slot) and the
    next card drawn takes its slot. A missing colour is assumed to be still findable in the deck or
    the discard pile (true in the games below: the engine agrees with every list)."""
    out: list[tuple[int, dict[str, Any]]] = []
    efficiency = 0
    grid: list[str] = []
    filling = False
    fills = [0, 3]  # rounds whose fill has not started yet
    hole = -1
    for i, step in enumerate(steps):
        action = step["action"]
        if action["kind"] == "draw_efficiency":
            efficiency += 1
            continue
        if action["kind"] != "draw_flower":
            continue
        if not filling and fills and (fills[0] == 0 or efficiency > EFFICIENCY_DRAWS_BEFORE_ROUND_3):
            filling, grid, hole, round_ = True, [], -1, fills.pop(0)
        if not filling:
            continue
        if hole >= 0:
            grid[hole] = action["card"]
        else:
            grid.append(action["card"])
        if len(grid) < SLOTS:
            continue
        counts = {c: sum(COLOUR[x] == c for x in grid) for c in set(COLOUR.values())}
        if all(counts.values()):
            filling = False
            continue
        top = max(counts.values())
        hole = max(s for s in range(SLOTS) if counts[COLOUR[grid[s]]] == top)
        out.append((i, {"round": round_, "slot": hole + 1, "card": grid[hole]}))
    return out


GAMES = [("flowar(players=3)", 3), ("flowar(players=3)", 5), ("flowar(players=2)", 7),
         ("flowar(players=4,first_game_favors=true)", 11), ("flowar(players=1)", 3)]


@pytest.fixture(scope="module", params=GAMES, ids=[f"{g}-{s}" for g, s in GAMES])
def replay(request: Any) -> dict[str, Any]:
    return _replay(*request.param)


def test_the_games_put_cards_back() -> None:
    """The chosen games exercise the rule: redraws at setup and at the round-3 refresh."""
    rounds = {r["round"] for g, s in GAMES for _, r in oracle(_replay(g, s)["steps"])}
    assert rounds == {0, 3}


def test_every_seat_and_the_spectator_see_the_cards_put_back_in_order(replay: dict[str, Any]) -> None:
    expected = oracle(replay["steps"])
    n = load_game(replay["game_string"]).num_players
    for i, state in iter_states(replay):
        shown = [r for at, r in expected if at <= i]
        for seat in [None, *range(n)]:
            obs = state.observation(seat)
            assert obs["market_redraws"] == shown, (i, seat)
    assert expected == [] or obs["market_redraws"] == [r for _, r in expected]


def test_the_typed_observation_carries_them(replay: dict[str, Any]) -> None:
    """``FlowarObservation.market_redraws`` (proto/parterre/v1/flowar.proto), as bots receive it."""
    *_, (_, state) = iter_states(replay)
    for seat in (None, 0):
        msg = to_typed("flowar", "observation", state.observation(seat))
        assert isinstance(msg, flowar_pb2.FlowarObservation)
        got = [{"round": r.round, "slot": r.slot, "card": r.card} for r in msg.market_redraws]
        assert got == [r for _, r in oracle(replay["steps"])]


def test_the_viewer_step_list_names_the_cards_put_back(replay: dict[str, Any]) -> None:
    """Every view's step list: the step that put a card back says so, with its Market slot; the
    draw of a card that was put back is not hidden (the card was face up at the table)."""
    expected = oracle(replay["steps"])
    for view in (SPECTATOR, 0, ALL):
        labels = step_labels(replay, view)
        notes = [(i, label.split(" · put back ", 1)[1]) for i, label in enumerate(labels) if " · put back " in label]
        assert notes == [(i, f"{r['card']} (Market slot {r['slot']})") for i, r in expected], view
        drawn = {r["card"] for _, r in expected}
        for i, step in enumerate(replay["steps"]):
            if step["action"]["kind"] == "draw_flower" and step["action"]["card"] in drawn:
                assert labels[i].startswith(f"draw {step['action']['card']}"), (view, i, labels[i])


def test_a_bot_determinization_keeps_them() -> None:
    """games.flowar.determinize builds a state from a seat's observation: it shows the same list."""
    rp = _replay("flowar(players=3)", 3)
    game = load_game(rp["game_string"])
    for i, state in iter_states(rp):
        if i > 0 and not state.is_chance_node() and state.observation(None)["phase"] == "turn":
            seat = state.current_player()
            obs = state.observation(seat)
            assert obs["market_redraws"]
            twin = determinize(game, obs, random.Random(1))
            assert twin.observation(seat)["market_redraws"] == obs["market_redraws"]
            return
    raise AssertionError("no turn decision")
