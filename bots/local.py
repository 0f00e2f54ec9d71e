"""Playing a bot in this process, without the wire: the request a bot reads, and the deal seeds.

Shared by ``parterre regress``'s ``direct`` backend (``parterre/regress/direct.py``)
and the hosted bots' head-to-head validation (``bots/hosted_match.py``), which
must agree on both: the same run seed gives the same deals in each.
"""

from __future__ import annotations

import hashlib
from typing import Any


def deal_seed(run_seed: str, index: int) -> str:
    """The seed of deal ``index`` of a run: sha256 hex of ``"{run_seed}:{index}"`` (64 hex characters;
    docs/regression.md, "Duplicate deals")."""
    return hashlib.sha256(f"{run_seed}:{index}".encode()).hexdigest()


class LocalRequest:
    """What ``Bot.choose`` reads from a decision request (``bots.sdk``), built without the wire.

    Attributes:
        game: the game's registry name. seat: the deciding seat.
        observation: the seat's observation dict. legal_actions: the legal actions' JSON dicts.
        match_id: always 0 (no match was planned).
    """

    __slots__ = ("game", "seat", "observation", "legal_actions", "match_id")

    def __init__(self, game: str, seat: int, observation: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        self.game, self.seat, self.observation, self.legal_actions = game, seat, observation, legal
        self.match_id = 0

    @property
    def num_actions(self) -> int:
        """How many legal actions there are (valid answers are ``0..num_actions - 1``)."""
        return len(self.legal_actions)
