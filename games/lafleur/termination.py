"""Why a La Fleur game ends (Rulebook: "Ending the Game")."""

from __future__ import annotations

from games.api import Termination
from games.lafleur.constants import MAX_ROUNDS


class LaFleurTermination(Termination):
    """How a La Fleur game ends."""

    GRANDE_SOIREE_COMPLETE = "Grande Soirée complete"
    """The Grande Soirée (the round after a player reached the Soirée Prestige) is over."""
    ROUND_LIMIT = f"round limit ({MAX_ROUNDS})"
    """No Grande Soirée after :data:`~games.lafleur.constants.MAX_ROUNDS` rounds: the engine's
    watchdog (not a rule), so that random play always ends."""
