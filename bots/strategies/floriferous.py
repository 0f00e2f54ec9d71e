"""Greedy Floriferous strategy: the action with the best immediate score gain.

"Score" is the final score this seat would have if the game ended right after
the action (Rulebook: Floriferous, "Final Scoring"), computed with the shared
pure module :mod:`games.floriferous.scoring` from visible information only: the
observation dict and the legal actions' JSON. Bounties count at today's column
(competitive: the first free column from today's on); Sculptures and the Cup of
Tea are judged against the rivals' current counts. A face-down card is valued
at its expected gain over the Garden (or Desire) cards nobody can see.
Ties go to the first action in the referee's order, so the choice is
deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bots.strategies.choice import first_best, forced
from games.floriferous.cards import (
    BOUNTY_INDEX,
    CARD_IDS,
    CARD_INDEX,
    DESIRE_CARDS,
    GARDEN_CARDS,
    SOLO_GARDEN_CARDS,
)
from games.floriferous.scoring import (
    TEA_POINTS,
    bounty_met_ix,
    score_collection_ix,
    sculpture_points,
    stone_points,
    tea_winner,
)

__all__ = ["greedy_choice", "Evaluator"]


def _player(p: dict[str, Any]) -> dict[str, Any]:
    """A player entry with proto3 defaults filled in (typed messages omit zero values)."""
    return {
        "seat": int(p.get("seat", 0)),
        "cards": list(p.get("cards", [])),
        "stones": int(p.get("stones", 0)),
        "pawn_row": int(p.get("pawn_row", 0)),
        "bounty_points": int(p.get("bounty_points", 0)),
    }


class Evaluator:
    """Score-if-the-game-ended-now of one seat, from its observation.

    Args:
        observation: the seat's ``FloriferousObservation`` dict.
        seat: the seat to evaluate.
    """

    def __init__(self, observation: dict[str, Any], seat: int) -> None:
        self.obs = observation
        self.seat = seat
        self.solo = bool(observation.get("solo", False))
        players = [_player(p) for p in observation.get("players", [])]
        me = next(p for p in players if p["seat"] == seat)
        self.cards = [CARD_INDEX[c] for c in me["cards"]]
        self.stones = me["stones"]
        self.pawn_row = me["pawn_row"]
        self.bounty_now = me["bounty_points"]
        self.rivals = [p for p in players if p["seat"] != seat]
        self.rival_sculptures = [sum(1 for c in p["cards"] if c.startswith("S")) for p in self.rivals]
        day = max(int(observation.get("day", 1)) - 1, 0)
        competitive = bool(observation.get("competitive_bounties", False))
        self.tea_mine = observation.get("tea_holder", 0) == seat if self.solo else False  # proto3 default 0
        self.crow_stones = int(observation.get("crow", {}).get("crow_card_stones", 0))
        self.garden_cards = {
            c.get("card", "") for row in observation.get("garden", []) for c in row.get("cells", [])
        } - {""}
        # Bounties this seat may still complete, with the points a completion now earns.
        self.open_bounties: list[tuple[int, int]] = []
        for b in observation.get("bounties", []):
            cols = b.get("columns", [])
            if any(seat in c.get("seats", []) for c in cols):
                continue
            if competitive:
                free = [c.get("points", 0) for c in cols[day:] if not c.get("seats")]
                if free:
                    self.open_bounties.append((BOUNTY_INDEX[b["bounty"]], free[0]))
            else:
                self.open_bounties.append((BOUNTY_INDEX[b["bounty"]], cols[day].get("points", 0)))
        self.base = self.value(self.cards, self.stones, self.pawn_row)

    def value(self, cards: Sequence[int], stones: int, pawn_row: int) -> float:
        """Final score if the game ended now with this collection, Stones and pawn row."""
        part = score_collection_ix(cards)
        total = part.arrangement + part.desire + stone_points(stones) + self.bounty_now
        for b, pts in self.open_bounties:
            if bounty_met_ix(b, cards):
                total += pts
        if self.solo:
            return float(total + (TEA_POINTS if self.tea_mine else 0))
        counts = [part.sculptures, *self.rival_sculptures]
        total += sculpture_points(counts)[0]
        all_stones = [stones, *(p["stones"] for p in self.rivals)]
        rows = [pawn_row, *(p["pawn_row"] for p in self.rivals)]
        if tea_winner(all_stones, rows) == 0:
            total += TEA_POINTS
        return float(total)

    def unseen(self, desire: bool) -> list[int]:
        """Cards of the Garden (or Desire) deck that are visible nowhere."""
        seen = set(self.garden_cards)
        for p in (*self.rivals, {"cards": [CARD_IDS[x] for x in self.cards]}):
            seen.update(p["cards"])
        pool = DESIRE_CARDS if desire else (SOLO_GARDEN_CARDS if self.solo else GARDEN_CARDS)
        return [x for x in pool if CARD_IDS[x] not in seen]

    def gain_of_card(self, card: str, row: int, stones: int) -> float:
        """Gain of taking ``card`` ("" = face-down) from ``row`` with ``stones``."""
        new_stones = self.stones + stones
        if card:
            return self.value([*self.cards, CARD_INDEX[card]], new_stones, row) - self.base
        pool = self.unseen(desire=row == 5)
        if not pool:
            return self.value(self.cards, new_stones, row) - self.base
        total = sum(self.value([*self.cards, x], new_stones, row) for x in pool)
        return total / len(pool) - self.base

    def best_after_discard(self, stones: int) -> float:
        """Value after discarding the card whose loss hurts least."""
        if not self.cards:
            return self.value(self.cards, stones, self.pawn_row)
        return max(
            self.value(self.cards[:i] + self.cards[i + 1:], stones, self.pawn_row) for i in range(len(self.cards))
        )

    def gain(self, action: dict[str, Any]) -> float:
        """Immediate score gain of one legal action (its JSON form)."""
        kind = action.get("kind", "")
        row = int(action.get("row", 0))
        if kind == "take":
            return self.gain_of_card(action.get("card", ""), row, int(action.get("stones", 0)))
        if kind in ("scatter", "move_empty"):
            return self.value(self.cards, self.stones, row) - self.base
        if kind == "toss_tea":
            return -float(TEA_POINTS) if action.get("toss", False) else 0.0
        if kind == "pay_crow":
            paid = int(action.get("stones", 0))
            left = self.stones - paid
            if self.crow_stones - paid >= 4:
                return self.best_after_discard(left) - self.base
            return self.value(self.cards, left, self.pawn_row) - self.base
        if kind == "discard":
            rest = list(self.cards)
            rest.remove(CARD_INDEX[action.get("card", "")])
            return self.value(rest, self.stones, self.pawn_row) - self.base
        return 0.0


def greedy_choice(observation: dict[str, Any], legal_actions: list[dict[str, Any]], seat: int) -> int:
    """Index of the legal action with the best immediate score gain for ``seat``.

    Args:
        observation: the seat's observation (``FloriferousObservation`` dict).
        legal_actions: the legal actions' JSON dicts, in the referee's order.
        seat: the deciding seat.

    Returns:
        An index into ``legal_actions``; the first of equally good actions.

    Raises:
        ValueError: ``legal_actions`` is empty.
    """
    only = forced(legal_actions)
    if only is not None:
        return only
    ev = Evaluator(observation, seat)
    return first_best(ev.gain(action) for action in legal_actions)

