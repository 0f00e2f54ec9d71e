"""La Fleur perft positions (written into ``perft/lafleur.json`` by :mod:`.generate`).

Each position is reached by a fixed-seed random walk (:data:`generate.PERFT_SEED`)
stopped at a named point of the rules; its perft counts are leaf nodes at depth
d, chance outcomes counted as branches. Points are chosen where the next plies
are mostly decisions (placements, a purchase, a Garden Party order), since one
Flower draw alone has up to 88 outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.api import State

Walk = Callable[[str, int, Callable[[State], bool]], State]
Position = Callable[[State, str, int], dict[str, Any]]


def positions(walk: Walk, position: Position, seed: int) -> list[dict[str, Any]]:
    """The La Fleur perft positions, with ``walk``/``position`` from :mod:`.generate`."""
    def obs(s: State) -> dict[str, Any]:
        return s.observation(None)

    def placing(rnd: int) -> Callable[[State], bool]:
        return lambda s: obs(s)["round"] == rnd and obs(s)["phase"] == "place"

    return [
        position(walk("lafleur(players=4)", seed, placing(1)), "4 players, round 1, first placement", 6),
        position(walk("lafleur(players=2)", seed, placing(2)), "2 players, round 2, first placement", 6),
        position(walk("lafleur(players=3)", seed, lambda s: obs(s)["phase"] == "pay"),
                 "3 players, paying a Garden Feature", 7),
        position(walk("lafleur(players=2)", seed, lambda s: obs(s)["prompt"]["kind"] == "order"),
                 "2 players, a Garden Party order decision", 6),
        position(walk("lafleur(players=1,difficulty=normal)", seed, placing(2)),
                 "solo normal, round 2, first placement (the player places all Artisans)", 5),
    ]
