"""Why a Flowar game ends (Rulebook: "End of the Game")."""

from __future__ import annotations

from games.api import Termination


class FlowarTermination(Termination):
    """The one way a Flowar game ends: after the fourth round (solo against Taxus too)."""

    ROUND_4_COMPLETE = "round 4 complete"
    """The fourth and last round is over; final scoring follows."""
