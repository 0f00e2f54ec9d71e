"""Phase numbers of a Floriferous match and the per-game counts the engine and the observation share.

Rulebook: "Gameplay" (three days), "Game Setup" step 6 (three Flower Tokens).
A leaf module: ``state.py`` runs the phases, ``observation.py`` names them.
"""

from __future__ import annotations

FLOWER_TOKENS = 3
"""Flower Tokens per player (Rulebook: "Game Setup", step 6)."""
DAYS = 3
"""Days per game (Rulebook: "Gameplay")."""

P_BOUNTY, P_START, P_DEAL, P_TURN, P_TEA, P_CROW, P_CROW_DEAL, P_PAY, P_DISCARD, P_OVER = range(10)
"""Phases: setup Bounties, setup start player, deal, turn, Cup of Tea, crow, crow deal, pay the
crow, discard (solo), game over."""
PHASE_NAMES: tuple[str, ...] = (
    "setup_bounties", "setup_start_player", "deal", "turn", "tea", "crow", "crow_deal",
    "pay_crow", "discard", "game_over",
)
"""Observation names of the phases, by phase number."""
