"""Floriferous card-knowledge model, from the Floriferous rulebook.

Rulebook lines used:

* Setup 1: "Shuffle the 60 Garden Cards and the smaller 21 Desire Cards into two
  decks"; "For the first row, deal the 2nd and 4th cards face-down" (2-3 players:
  "Row 1 is Garden Cards face-down"). Every other garden card is face-up.
* "Face-Down Cards are picked up like any other in the garden. The player simply
  doesn't know what they are until chosen"; "Place the card face-up in front of
  you (even if it was face-down in the garden)": collections are public.
* Solo, the crow: "discard the Garden Card in the middle row, and ... replace it
  with a new face-down Garden Card". A discarded card leaves play unseen if it
  lay face-down; a card the crow places face-down is seen by nobody.
* Bounty and Crow Action cards are revealed face-up (replayed as drawn).

Zones: the two decks and the Crow Actions deck (shuffled), the crow discard
pile, face-up garden cells, face-down garden cells, collections, and "gone"
(cards that left play: crow discards, the garden cleared at a day's end),
seen by nobody but remembered by whoever saw them.
"""

from __future__ import annotations

from typing import Any

from games.floriferous.cards import CARD_IDS

from . import HIDDEN, PUBLIC, GameModel, Zone

ZONE_FIELDS = frozenset({"cells", "garden_deck", "desire_deck", "collections", "crow_deck", "crow_discard"})
COUNT_ONLY = frozenset({"bounty_pool"})


class FloriferousModel(GameModel):
    game_name = "floriferous"

    def zones(self, fs: dict[str, Any]) -> list[Zone]:
        up = tuple(c for c, fd, _ in fs["cells"] if c and not fd)
        down = tuple(c for c, fd, _ in fs["cells"] if c and fd)
        z = [
            Zone("garden_deck", tuple(fs["garden_deck"]), HIDDEN, shuffled=True),
            Zone("desire_deck", tuple(fs["desire_deck"]), HIDDEN, shuffled=True),
            Zone("garden_up", up, PUBLIC),
            Zone("garden_down", down, HIDDEN),
        ]
        z += [Zone(f"collection.{p}", tuple(c), PUBLIC, ordered=True) for p, c in enumerate(fs["collections"])]
        z += [Zone("crow_deck", tuple(fs["crow_deck"]), HIDDEN, shuffled=True),
              Zone("crow_discard", tuple(fs["crow_discard"]), PUBLIC, ordered=True)]
        placed = {c for zone in z for c in zone.cards}
        z.append(Zone("gone", tuple(c for c in CARD_IDS if c not in placed), HIDDEN))
        return z

    def public(self, fs: dict[str, Any], observer: int | None) -> Any:
        out = {k: (len(v) if k in COUNT_ONLY else v) for k, v in fs.items() if k not in ZONE_FIELDS}
        out["cells"] = [[bool(c), fd, stones] for c, fd, stones in fs["cells"]]  # where cards lie, Stones
        return out

    def drawn_card(self, action: dict[str, Any]) -> str | None:
        return str(action["card"]) if action.get("kind") == "deal" else None

    def card_ids(self) -> frozenset[str]:
        return frozenset(CARD_IDS)

    def automaton_turn(self, action: dict[str, Any], after: list[Zone]) -> bool:
        return action.get("kind") == "reveal_crow"
