"""La Fleur legal-action counts (perft-like, cf. python-chess ``examples/perft``) kept as data.

``tests/playthroughs/perft/lafleur.json`` holds, for every variant, the number
of legal actions at each step of a fixed-seed random playout, and perft counts
(leaves at depth d, chance outcomes counted as branches) from positions given
by explicit histories (``tests/playthroughs/perft_lafleur.py`` names them). The
shallow depths run always; every depth with ``PARTERRE_SLOW=1`` (marked slow).
Regenerate with ``.venv/bin/python -m tests.playthroughs.generate`` after an
intended rules change, and review the diff.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from playthroughs import generate as G  # tests/ is on sys.path (pytest rootdir-less layout)

from games.api import State
from games.registry import load_game

DATA = json.loads((G.PERFT_DIR / "lafleur.json").read_text(encoding="utf-8"))
SLOW = os.environ.get("PARTERRE_SLOW") == "1"
SHALLOW = 3


def test_the_file_has_positions_for_every_variant_kind() -> None:
    assert len(DATA["playouts"]) == 7 and len(DATA["positions"]) >= 5
    assert {p["game"] for p in DATA["positions"]} >= {
        "lafleur(difficulty=normal,players=1)", "lafleur(difficulty=normal,players=2)",
        "lafleur(difficulty=normal,players=3)", "lafleur(difficulty=normal,players=4)"}


@pytest.mark.parametrize("playout", DATA["playouts"], ids=lambda p: p["game"])
def test_legal_counts_along_a_playout(playout: dict[str, Any]) -> None:
    assert G.legal_counts(playout["game"], playout["seed"]) == playout["legal_counts"]


def _position(pos: dict[str, Any]) -> State:
    game = load_game(pos["game"])
    state = game.new_initial_state()
    for action in pos["history"]:
        state.apply_action(game.action_from_json(action))
    return state


@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_shallow(pos: dict[str, Any]) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"][:SHALLOW], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="deep perft: set PARTERRE_SLOW=1")
@pytest.mark.parametrize("pos", DATA["positions"], ids=lambda p: p["note"])
def test_perft_deep(pos: dict[str, Any]) -> None:
    state = _position(pos)
    for depth, expected in enumerate(pos["perft"], 1):
        assert G.perft(state, depth) == expected, f"depth {depth}"


def test_first_placement_count_by_hand() -> None:
    """Round 1, 3 Coins each: every Artisan may go to Coin, Prestige, the Flower Market (a deck
    card costs 1), Garden Features (cards face-up) and Special Invitation (Visitors without a
    pawn), not to the Artisan Guild (hire 8, replace 4), except the Well-digger, whose ability
    makes replacing cost 2 there (Rulebook: "Locations", "Artisan Guild"; stand-in Artisan)."""
    pos = next(p for p in DATA["positions"] if p["note"].startswith("4 players, round 1"))
    state = _position(pos)
    me = state.observation(state.current_player())["players"][state.current_player()]
    assert me["coins"] == 3
    expected = sum(5 + (a["card"] == "A10") for a in me["artisans"] if not a["placed"])
    assert pos["perft"][0] == expected == len(state.legal_actions())
