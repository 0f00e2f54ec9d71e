"""La Fleur card-knowledge model, from the La Fleur rulebook.

Rulebook lines used:

* Setup: every deck is shuffled and "place[d] ... face-down on the game board";
  the board has "4 spaces for face-up Flower cards", "5 spaces for face-up
  Garden Feature cards", "6 spaces for face-up Visitor cards", "face-up Event
  cards" and discard spaces (a discard pile is face-up, oldest first).
* Player Setup: "Deal 2 Character cards to each player ... 3 Artisan cards"; each
  player selects; "Once all players have chosen ... return the remaining unused
  Character cards to the game box, and shuffle the remaining unused Artisan
  cards back into the Artisan deck." Dealt cards are seen by their owner only.
* "Deal 3 random Flower cards to each player ... Do not show these cards to the
  other players." A hand is seen by its owner; "a player may pay 1 Coin to
  purchase a face-down Flower card from the top of the Flower deck".
* Solo: "Your opponent will keep all Flower cards earned through Visitor and
  Character rewards face-down" (the automaton's hand is seen by nobody).

Tracked card types: Flowers, Garden Features, Artisans, Characters (Visitors and
Events are only ever drawn face-up, so they are replayed as drawn). Zones are
read from ``full_state()`` (ground truth); the engine's ``public_flowers`` mark
is never read.
"""

from __future__ import annotations

from typing import Any

from games.lafleur.cards import ARTISANS, CHARACTERS, FEATURES, FLOWERS

from . import HIDDEN, OWNER, PUBLIC, GameModel, Zone

F = [c.id for c in FLOWERS]
G = [c.id for c in FEATURES]
A = [c.id for c in ARTISANS]
C = [c.id for c in CHARACTERS]
TRACKED_DECKS = {"flower": 0, "feature": 1, "artisan": 3, "character": 4}
PLAYER_PUBLIC = ("coins", "prestige", "allure", "feature_allure", "placed", "tilted", "locations",
                 "used_prestige", "romancing", "party", "companion")


def _ix(ids: list[str], xs: list[int]) -> tuple[str, ...]:
    return tuple(ids[x] for x in xs if x >= 0)


class LaFleurModel(GameModel):
    game_name = "lafleur"

    def zones(self, fs: dict[str, Any]) -> list[Zone]:
        z: list[Zone] = []
        for d in TRACKED_DECKS.values():
            z.append(Zone(f"deck.{d}", tuple(fs["decks"][d]), HIDDEN, shuffled=True))
            z.append(Zone(f"discard.{d}", tuple(fs["discards"][d]), PUBLIC, ordered=True))
        z.append(Zone("market", _ix(F, fs["market"]), PUBLIC))
        z.append(Zone("display", _ix(G, fs["display"]), PUBLIC))
        z.append(Zone("box", tuple(fs["box"]), HIDDEN))
        # "draw a new Artisan card to replace an existing Artisan": the drawn card, before the
        # swap is chosen (full_state context[10]); it goes face-up on the board, no secret.
        z.append(Zone("new_artisan", _ix(A, [fs["context"][10]]), PUBLIC))
        revealed = bool(fs["revealed"])
        for p, pl in enumerate(fs["players"]):
            z.append(Zone(f"hand.{p}", tuple(pl["hand"]), OWNER, owner=p))
            z.append(Zone(f"features.{p}", tuple(pl["features"]), PUBLIC))
            z.append(Zone(f"artisans.{p}", _ix(A, pl["artisans"]), PUBLIC))
            dealt_a = () if revealed else _ix(A, [x for x in pl["dealt_artisans"] if x not in pl["artisans"]])
            z.append(Zone(f"dealt_artisans.{p}", dealt_a, OWNER, owner=p))
            ch = _ix(C, [pl["character"]])
            dealt_c = () if revealed else _ix(C, [x for x in pl["dealt_characters"] if x != pl["character"]])
            # Solo: the opponent's Character is drawn at random to play against (public).
            z.append(Zone(f"character.{p}", ch, PUBLIC if revealed or p >= self.num_players else OWNER, owner=p))
            z.append(Zone(f"dealt_characters.{p}", dealt_c, OWNER, owner=p))
        return z

    def public(self, fs: dict[str, Any], observer: int | None) -> Any:
        out: dict[str, Any] = {k: fs[k] for k in ("phase", "current_player", "round", "first", "order",
                                                   "turn_index", "final", "trigger", "event", "visitors",
                                                   "visitor_bottom", "visitor_search", "event_modifiers",
                                                   "revealed")}
        out["players"] = [{k: pl[k] for k in PLAYER_PUBLIC} for pl in fs["players"]]
        if observer is not None:
            pl = fs["players"][observer]
            out["own"] = [pl["chose_character"], pl["kept_artisans"]]
        return out

    def drawn_card(self, action: dict[str, Any]) -> str | None:
        if action.get("kind") == "draw" and action.get("deck") in TRACKED_DECKS:
            return str(action["card"])
        return None

    def automaton_turn(self, action: dict[str, Any], after: list[Zone]) -> bool:
        """Solo: a card drawn face-down into the opponent's hand (its Visitor/Character rewards)."""
        if self.num_players > 1 or self.drawn_card(action) is None:
            return False
        return any(z.name == "hand.1" and action["card"] in z.cards for z in after)

    def card_ids(self) -> frozenset[str]:
        return frozenset(F + G + A + C)
