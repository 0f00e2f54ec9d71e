"""Flowar card-knowledge model, from the Flowar rulebook.

Rulebook lines used:

* Setup 7: "deal two cards to each player. Each player must choose one Contract
  to place in the Contract Area of their Player Board (face-up). Shuffle the
  Contracts that were not chosen, and randomly place them face-up to fill the
  2x2 grid". The two dealt cards are seen by their owner only; the kept one is
  face-up once every seat has chosen (the choice is simultaneous); the one a
  seat did not keep stays known to it.
* "Place the Contract Deck facedown"; the Flower deck likewise; "If at any time
  the Contract Deck runs out, shuffle the discard Cards to form a new deck"
  (the same for the Flower deck).
* The Market and Contract grids, the Fresh/Wilting flower areas, and the
  discard piles lie face-up.
* Delivered Contracts go "facedown ... in the space below your Player Board":
  nobody sees them there, but everybody saw them go (they stay known).
* MP tokens are "always kept facedown" ("Travel Petal"): a seat's MP is its own.
* Taxus (solo): its cards are revealed face-up one by one.

Tracked card types: Flower and Contract cards. Favors, Efficiency Tiles, Guild
Tiles and Taxus cards are drawn face-up, so they are replayed as drawn; the
size of their face-down supplies is public.
"""

from __future__ import annotations

from typing import Any

from games.flowar.cards import CONTRACT_IDS, FLOWER_IDS

from . import HIDDEN, OWNER, PUBLIC, GameModel, Zone

ZONE_FIELDS = frozenset({"fdeck", "fdisc", "aside", "market", "fresh", "wilt", "cdeck", "cdisc", "cgrid",
                         "unchosen", "contracts", "dealt", "below", "gave", "dsel"})
COUNT_ONLY = frozenset({"eff_supply", "fav_pool", "guild_pool", "tx_deck"})
# Engine bookkeeping: per-card "in deck" flags, the agenda and the decision in progress;
# none is shown as such at the table (the decision in progress is the actor's own).
INTERNAL = frozenset({"fin", "cin", "agenda", "loop", "dfl", "dreq", "dused", "dx", "dwild", "dk", "dfresh",
                      "mp"})


def _f(xs: list[int]) -> tuple[str, ...]:
    return tuple(FLOWER_IDS[x] for x in xs if x >= 0)


def _c(xs: list[int]) -> tuple[str, ...]:
    return tuple(CONTRACT_IDS[x] for x in xs if x >= 0)


class FlowarModel(GameModel):
    game_name = "flowar"

    def zones(self, fs: dict[str, Any]) -> list[Zone]:
        z = [
            Zone("fdeck", _f(fs["fdeck"]), HIDDEN, shuffled=True),
            Zone("fdisc", _f(fs["fdisc"]), PUBLIC, ordered=True),
            Zone("aside", _f(fs["aside"]), PUBLIC),
            Zone("market", _f(fs["market"]), PUBLIC),
            Zone("cdeck", _c(fs["cdeck"]), HIDDEN, shuffled=True),
            Zone("cdisc", _c(fs["cdisc"]), PUBLIC, ordered=True),
            Zone("cgrid", _c(fs["cgrid"]), PUBLIC),
            Zone("unchosen", _c(fs["unchosen"]), HIDDEN),
        ]
        hidden_choice = bool(fs["kept_hidden"])
        for p in range(len(fs["fresh"])):
            z.append(Zone(f"fresh.{p}", _f(fs["fresh"][p]), PUBLIC))
            z.append(Zone(f"wilt.{p}", _f(fs["wilt"][p]), PUBLIC))
            z.append(Zone(f"contracts.{p}", _c(fs["contracts"][p]), OWNER if hidden_choice else PUBLIC, owner=p))
            z.append(Zone(f"dealt.{p}", _c(fs["dealt"][p]), OWNER, owner=p))
            for k, below in enumerate(fs["below"][p]):
                z.append(Zone(f"below.{p}.{k}", _c(below), HIDDEN))
        return z

    def public(self, fs: dict[str, Any], observer: int | None) -> Any:
        out: dict[str, Any] = {}
        for k, v in fs.items():
            if k in ZONE_FIELDS or k in INTERNAL:
                continue
            out[k] = len(v) if k in COUNT_ONLY else v
        if observer is not None and observer < len(fs["mp"]):
            out["own_mp"] = fs["mp"][observer]
        return out

    def drawn_card(self, action: dict[str, Any]) -> str | None:
        if action.get("kind") in ("draw_flower", "draw_contract"):
            return str(action["card"])
        return None

    def automaton_turn(self, action: dict[str, Any], after: list[Zone]) -> bool:
        return action.get("kind") == "reveal_taxus"

    def card_ids(self) -> frozenset[str]:
        return frozenset(FLOWER_IDS + CONTRACT_IDS)
