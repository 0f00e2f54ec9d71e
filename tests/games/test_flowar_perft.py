"""Flowar legal-action counts (perft-like, cf. python-chess ``examples/perft``) kept as data.

``tests/playthroughs/perft/flowar.json`` holds, for every variant, the number of
legal actions at each step of a fixed-seed random playout, and perft counts
(leaves at depth d, chance outcomes counted as branches) from five positions
reached by play (turn menus of rounds 1-3, solo, a delivery, a strike payment).
Depths up to :data:`SHALLOW` run always (well under a second each); every depth
with ``PARTERRE_SLOW=1``. The first depths are also counted by the independent
reference model (``tests/reference/flowar_reference.py``), so the data is not
only the engine agreeing with itself.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from playthroughs import generate as G  # tests/ is on sys.path (pytest rootdir-less layout)
from reference import flowar_reference as R

from games.api import State
from games.registry import load_game

DATA = json.loads((G.PERFT_DIR / "flowar.json").read_text(encoding="utf-8"))
SLOW = os.environ.get("PARTERRE_SLOW") == "1"
SHALLOW = 4


def _position(pos: dict[str, Any]) -> State:
    game = load_game(pos["game"])
    state = game.new_initial_state()
    for action in pos["history"]:
        state.apply_action(game.action_from_json(action))
    return state


def test_the_data_has_positions_and_playouts_of_every_variant() -> None:
    assert len(DATA["positions"]) == 5
    assert {p["game"] for p in DATA["playouts"]} == {load_game(v).game_string() for v in load_game("flowar").VARIANTS}


@pytest.mark.parametrize("playout", DATA["playouts"], ids=lambda p: p["game"])
def test_legal_counts_along_a_playout(playout: dict) -> None:
    assert G.legal_counts(playout["game"], playout["seed"]) == playout["legal_counts"]


@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_shallow(pos: dict) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"][:SHALLOW], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"


@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_first_depths_agree_with_the_reference_model(pos: dict) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"][:2], 1):
        assert R.perft(state, depth) == expected, f"depth {depth}"


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="deep perft: set PARTERRE_SLOW=1")
@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_deep(pos: dict) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"
