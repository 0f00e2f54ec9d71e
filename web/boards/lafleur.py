"""La Fleur board panel: the shared board, each Château, the solo opponent as a player.

Built from the observation the view shows (``LaFleurObservation``, see
:mod:`games.lafleur.observation`; the spectator's unless a seat's view is
chosen) and, with "show all hands" after the match, from every seat's own
observation (which names its hand and Character). Laid out as on the table
(Rulebook: La Fleur, "Game Board Setup", "Player Setup"): the round and the
Event, the Flower Market (4 spaces), the Garden Features display (5 spaces),
the Special Invitation's Visitors with their Allure types and pawns, the decks
and discards, then one Château per player: Character, Prestige, Coins, the
five Allure tracks, Artisans and where they stand, Garden Features, the
Garden Party (Visitors and companion) and the hand.

Every card is a chip with its name, cost and effect text rendered from the
card data (:mod:`games.lafleur.abilities`), so the page reads without the
rulebook. Cards the last step named are highlighted (``ctx.last``, set by
:func:`web.boards.board_panel`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.lafleur.abilities import render, render_artisan, render_visitor
from games.lafleur.cards import ALLURE, DECK_NAMES, DECKS, INDEX, LOCATIONS
from web.viewer import Frame

ALLURE_TEXT = {"architecture": "Architecture", "paths": "Paths", "water": "Water", "flowers": "Flowers",
               "vistas": "Vistas", "wild": "Wild"}
"""Display names of the Allure types (Rulebook: "Allure Types")."""

PHASE_TEXT = {"place": "placing Artisans", "chance": "dealing", "game_over": "game over"}


def _allure_list(types: Sequence[str]) -> str:
    return " + ".join(ALLURE_TEXT.get(t, t) for t in types)


def card(card_id: str) -> dict[str, Any]:
    """A card chip: ``{id, kind, name, cost, text, allure}`` (cost and text as the card prints them)."""
    where = INDEX.get(card_id)
    if where is None:
        return {"id": card_id, "kind": "unknown", "name": card_id or "face-down card", "cost": "", "text": "",
                "allure": ""}
    kind = DECK_NAMES[where[0]]
    c = DECKS[kind][where[1]]
    name, cost, text, allure = getattr(c, "name", ""), "", "", ""
    if kind == "flower":
        allure = c.allure[0] if len(set(c.allure)) == 1 else "mixed"
        cost = f"{c.cost} Coin{'s' if c.cost != 1 else ''}"
        text = "Allure: " + _allure_list(c.allure)
    elif kind == "feature":
        cost = "costs " + _allure_list([ALLURE[t] for t in c.cost])
        text = render(c.ability)
        allure = ALLURE[c.cost[0]] if c.cost else ""
    elif kind == "visitor":
        allure = ALLURE[c.allure] if c.allure >= 0 else "none"
        cost = f"visits {ALLURE_TEXT[allure]}" if c.allure >= 0 else "no Allure type"
        text = render_visitor(c.effect, c.visits)
    elif kind == "artisan":
        name = c.occupation
        allure = ALLURE[c.allure]
        cost = f"+1 {ALLURE_TEXT[allure]} Allure"
        text = render_artisan(LOCATIONS[c.location], c.ability)
    elif kind == "character":
        text = " ".join(render(a) for a in c.abilities)
    else:  # event
        text = render(c.ability)
    return {"id": c.id, "kind": kind, "name": name, "cost": cost, "text": text, "allure": allure}


def _name(seat_names: Sequence[str], p: dict[str, Any]) -> str:
    if p.get("automaton"):
        return "Solo opponent"
    seat = int(p.get("seat", 0))
    return seat_names[seat] if 0 <= seat < len(seat_names) else f"seat {seat + 1}"


def board_context(frame: Frame, seat_names: Sequence[str], all_hands: bool) -> dict[str, Any]:
    """Template context of the La Fleur panel for one frame (see the module docstring)."""
    obs = frame.observation
    views = frame.seat_views if all_hands and frame.seat_views else None
    current = int(obs.get("current_player", -1))
    players = []
    for i, p in enumerate(obs.get("players", [])):
        own = p
        if views is not None and not p.get("automaton") and i < len(views):
            own = views[i]["players"][i]  # the seat's own view of its Château: hand and Character
        hand = [card(h) for h in own.get("hand", [])]
        players.append({
            "seat": int(p.get("seat", i)),
            "index": i,
            "name": _name(seat_names, p),
            "automaton": bool(p.get("automaton")),
            "current": i == current,
            "first": i == obs.get("first_player"),
            "character": card(own["character"]) if own.get("character") else None,
            "chosen": bool(p.get("chosen")),
            "prestige": p.get("prestige", 0),
            "coins": p.get("coins", 0),
            "allure": [{"type": t, "name": ALLURE_TEXT[t], "value": p.get("allure", {}).get(t, 0)} for t in ALLURE],
            "total_allure": p.get("total_allure", 0),
            "artisans": [
                {**card(a["card"]), "placed": a.get("placed"), "tilted": a.get("tilted"),
                 "location": a.get("location", "").replace("_", " ")}
                for a in p.get("artisans", [])
            ],
            "features": [card(g) for g in p.get("garden_features", [])],
            "visitors": [card(v) for v in p.get("visitors", [])],
            "companion": card(p["companion"]) if p.get("companion") else None,
            "hand": hand,
            "hand_count": int(own.get("cards_in_hand", 0)),
            "hand_hidden": max(0, int(own.get("cards_in_hand", 0)) - len(hand)),
            "used_prestige": bool(p.get("used_prestige")),
            "romancing": bool(p.get("romancing")),
        })
    visitors = []
    for v in obs.get("visitors", []):
        pawn = int(v.get("pawn", -1))
        who = players[pawn]["name"] if 0 <= pawn < len(players) else ""
        visitors.append({**card(v["card"]), "pawn": pawn, "pawn_name": who, "romance": bool(v.get("romance")),
                         "overflow": bool(v.get("overflow"))})
    decks = [
        {"key": key, "name": name, "left": obs.get(f"{key}_deck", 0),
         "discard": [card(c) for c in obs.get(f"{key}_discard", [])]}
        for key, name in (("flower", "Flower"), ("feature", "Garden Feature"), ("visitor", "Visitor"),
                          ("artisan", "Artisan"), ("event", "Event"))
    ]
    purchase = obs.get("purchase") or {}
    prompt = obs.get("prompt") or {}
    return {
        "round": obs.get("round"),
        "max_rounds": obs.get("max_rounds"),
        "grande_soiree": bool(obs.get("grande_soiree")),
        "phase": str(obs.get("phase", "")).replace("_", " "),
        "solo": bool(obs.get("solo")),
        "difficulty": obs.get("difficulty", ""),
        "current_name": players[current]["name"] if 0 <= current < len(players) else None,
        "current": current,
        "turn_order": [players[s]["name"] for s in obs.get("turn_order", []) if 0 <= s < len(players)],
        "event": card(obs["event"]) if obs.get("event") else None,
        "market": [{"space": m["space"], "card": card(m["card"]) if m.get("card") else None}
                   for m in obs.get("market", [])],
        "display": [{"space": m["space"], "card": card(m["card"]) if m.get("card") else None}
                    for m in obs.get("garden_features", [])],
        "visitors": visitors,
        "visitor_deck_bottom": [card(v) for v in obs.get("visitor_deck_bottom", [])],
        "decks": decks,
        "last_discards": {d["name"]: d["discard"][-1] for d in decks if d["discard"]},
        "players": players,
        "purchase": card(purchase["feature"]) if purchase.get("feature") else None,
        "purchase_remaining": {k: v for k, v in (purchase.get("remaining") or {}).items() if v},
        "prompt": prompt if prompt.get("kind") else None,
        "final": frame.terminal,
        "all_hands": all_hands,
    }
