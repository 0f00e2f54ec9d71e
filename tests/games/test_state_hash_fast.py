"""State hashes through orjson are the hashes of the reference canonical JSON.

Oracle: ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
(``games.api.canonical_json``) of the same full state, and a walk of that
state's types: a game that sets ``Game.PLAIN_FULL_STATE`` must hold no float
and no non-str key anywhere, over random playthroughs of every shipped
player count.
"""

from __future__ import annotations

import hashlib
import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from games.api import State
from games.registry import load_game

PLAIN = {bool, int, str, type(None)}


def _plain(value: Any) -> bool:
    t = type(value)
    if t in PLAIN:
        return t is not int or -(2**63) <= value < 2**64
    if t is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if t in (list, tuple):
        return all(_plain(v) for v in value)
    return False


def _reference_hash(full: object) -> str:
    text = json.dumps(full, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("game_string", [f"{g}(players={n})" for g in ("floriferous", "lafleur", "flowar")
                                         for n in (1, 2, 4)])
def test_fast_hash_equals_the_reference_hash_over_random_playthroughs(game_string):
    game = load_game(game_string)
    assert game.PLAIN_FULL_STATE
    for seed in range(2):
        rng = random.Random(seed)
        state = game.new_initial_state()
        steps = 0
        while True:
            full = state._full_state()
            assert _plain(full), f"step {steps}: a value the fast hash does not cover"
            assert state.state_hash() == _reference_hash(full)
            if state.is_terminal():
                break
            chance = state.is_chance_node()
            state.apply_action(state.sample_chance(rng) if chance else rng.choice(state.legal_actions()))
            steps += 1
        assert steps > 20


def test_a_value_orjson_refuses_falls_back_to_the_reference_encoder():
    full = load_game("floriferous(players=2)").new_initial_state()._full_state()
    full["huge"] = 2**70  # orjson refuses ints beyond 64 bits; json writes them
    stub = SimpleNamespace(game=SimpleNamespace(PLAIN_FULL_STATE=True), _full_state=lambda: full)
    # the type: ignore below: a SimpleNamespace stub in place of a State
    assert State.state_hash(stub) == _reference_hash(full)  # type: ignore[arg-type]
