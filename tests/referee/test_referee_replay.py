"""Replay JSON: the fast text assembly equals the canonical encoding; verification.

See docs/architecture.md, "Replay JSON".
"""

from __future__ import annotations

import json

import pytest
from fixtures.toy_game import register_toy

from games.api import canonical_json
from games.registry import load_game
from referee.replay import (
    FORMAT,
    ReplayError,
    assemble,
    seed_commitment,
    step_json,
    step_text,
    verify,
    wants_hash,
)

register_toy()


@pytest.mark.parametrize("time_ms", [None, 0.0, 0.123, 12.5, 1234.567, 1e-05, 3])
@pytest.mark.parametrize("h", [None, "ab" * 32])
@pytest.mark.parametrize("fallback", [True, False])
def test_step_text_is_the_canonical_encoding(time_ms, h, fallback):
    action = {"kind": "play", "card": "K07", "note": "é\"\\\n"}
    label = 'play "K07" — ünïcode\t'
    fast = step_text(12, 1, canonical_json(action), canonical_json(label), time_ms, fallback, h)
    assert fast == canonical_json(step_json(12, 1, action, label, time_ms, fallback, h))


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_assemble_is_the_canonical_encoding(steps):
    header = {"format": FORMAT, "seed": "s", "players": [{"name": "x\u2028y", "seat": 0}], "verdicts": ["normal"],
              "outcome": None, "a": 1, "zz": {"b": [1, 2]}}
    texts = [step_text(i, -1, '{"card":"K01","kind":"draw"}', '"draw K01"', None, False, None) for i in range(steps)]
    full = {**header, "steps": [json.loads(t) for t in texts]}
    assert assemble(header, texts) == canonical_json(full)
    assert assemble({}, texts) == canonical_json({"steps": [json.loads(t) for t in texts]})
    assert assemble({"a": 1}, []) == '{"a":1,"steps":[]}'
    assert assemble({"z": 1}, []) == '{"steps":[],"z":1}'


def test_hash_schedule():
    assert [i for i in range(25) if wants_hash(i)] == [9, 19]


def _replay_by_hand(seed: str = "abc") -> dict:
    game = load_game("toy(players=2,turns=2)")
    state = game.new_initial_state()
    import random

    rng = random.Random(seed)
    steps = []
    while not state.is_terminal():
        player = state.current_player()
        action = state.sample_chance(rng) if state.is_chance_node() else state.legal_actions()[0]
        state.apply_action(action)
        steps.append(step_json(len(steps), player, action.to_json(), action.label(), None, False,
                               state.state_hash() if wants_hash(len(steps)) else None))
    return {
        "format": FORMAT, "game_string": game.game_string(), "seed": seed, "seed_commitment": seed_commitment(seed),
        "steps": steps, "final_hash": state.state_hash(), "outcome": state.outcome().to_json(),
    }


def test_verify_accepts_a_good_replay_and_names_the_first_problem():
    good = _replay_by_hand()
    verify(good)
    verify(json.dumps(good))
    cases = [
        (lambda r: r.update(format="x"), "format"),
        (lambda r: r.update(seed="other"), "seed"),
        (lambda r: r["steps"][3].update(player=1 - r["steps"][3]["player"] if r["steps"][3]["player"] >= 0 else 0),
         "step 3"),
        (lambda r: r["steps"][9].update(hash="0" * 64), "step 9: state hash"),
        (lambda r: r.update(final_hash="0" * 64), "final hash"),
        (lambda r: r["outcome"].update(scores=[0, 0]), "outcome"),
        (lambda r: r["steps"][7].update(action={"kind": "play", "card": "K99"}), "step 7"),
        (lambda r: r.update(game_string="nosuch"), "cannot load game"),
    ]
    for change, words in cases:
        bad = json.loads(json.dumps(good))
        change(bad)
        with pytest.raises(ReplayError, match=words):
            verify(bad)
