"""Phase numbers of a Floriferous match and the per-game counts the engine and the observation share.

Rulebook: "Gameplay" (three days), "Game Setup" step 6 (three Flower Tokens).
A leaf module: ``state.py`` runs the phases, ``observation.py`` names them.
"""

from __future__ import annotations

from typing import Final

FLOWER_TOKENS: Final = 3
"""Flower Tokens per player (Rulebook: "Game Setup", step 6)."""
DAYS: Final = 3
"""Days per game (Rulebook: "Gameplay")."""

P_BOUNTY: Final = 0
P_START: Final = 1
P_DEAL: Final = 2
P_TURN: Final = 3
P_TEA: Final = 4
P_CROW: Final = 5
P_CROW_DEAL: Final = 6
P_PAY: Final = 7
P_DISCARD: Final = 8
P_OVER: Final = 9
"""Phases: setup Bounties, setup start player, deal, turn, Cup of Tea, crow, crow deal, pay the
crow, discard (solo), game over."""
PHASE_NAMES: tuple[str, ...] = (
    "setup_bounties", "setup_start_player", "deal", "turn", "tea", "crow", "crow_deal",
    "pay_crow", "discard", "game_over",
)
"""Observation names of the phases, by phase number."""
