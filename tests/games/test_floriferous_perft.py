"""Legal-action counts (perft-like, cf. python-chess ``examples/perft``) kept as data.

``tests/playthroughs/perft/floriferous.json`` holds, for every variant, the
number of legal actions at each step of a fixed-seed random playout, and perft
counts (leaves at depth d, chance outcomes counted as branches) from positions
given by explicit histories. The shallow depths run always; every depth with
``PARTERRE_SLOW=1``.
"""

from __future__ import annotations

import json
import os

import pytest
from playthroughs import generate as G  # tests/ is on sys.path (pytest rootdir-less layout)

from games.registry import load_game

DATA = json.loads((G.PERFT_DIR / "floriferous.json").read_text(encoding="utf-8"))
SLOW = os.environ.get("PARTERRE_SLOW") == "1"
SHALLOW = 3


@pytest.mark.parametrize("playout", DATA["playouts"], ids=lambda p: p["game"])
def test_legal_counts_along_a_playout(playout: dict) -> None:
    assert G.legal_counts(playout["game"], playout["seed"]) == playout["legal_counts"]


def _position(pos: dict):
    game = load_game(pos["game"])
    state = game.new_initial_state()
    for action in pos["history"]:
        state.apply_action(game.action_from_json(action))
    return state


@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_shallow(pos: dict) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"][:SHALLOW], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="deep perft: set PARTERRE_SLOW=1")
@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_deep(pos: dict) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"


def test_four_player_round_counts_by_hand() -> None:
    """Four pawns, five spaces per column: 5, 5x4, 5x4x3, 5x4x3x2, then the next column."""
    pos = next(p for p in DATA["positions"] if p["game"].endswith("players=4)"))
    assert pos["perft"][:8] == [5, 20, 60, 120, 600, 2400, 7200, 14400]
