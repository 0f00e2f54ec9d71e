"""Why a Floriferous game ends (Rulebook: "Game End")."""

from __future__ import annotations

from games.api import Termination


class FloriferousTermination(Termination):
    """The one way a Floriferous game ends: after the third day (solo too)."""

    THIRD_DAY_COMPLETE = "third day complete"
    """Rulebook: "Game End": the game ends after the third day's Bounty check and cleanup."""
