"""Floriferous board panel: the garden grid, the players' collections and scores.

Built from the spectator observation (``FloriferousObservation``, see
:mod:`games.floriferous.observation`) and, with "show all hands" after the
match, from the full state (which names the face-down cards and the decks'
contents). Cards are labelled chips coloured by their flower colour, with the
bug named; Arrangements, Sculptures and Desire cards have their own chip
styles. Scores during play are "if the game ended now" (Rulebook: Floriferous,
"Final Scoring"), computed with :func:`games.floriferous.scoring.final_breakdowns`.

Columns are shown in physical order, left to right: the observation numbers
them in the order the pawns visit them today (right to left on day 2,
:mod:`games.floriferous.layout`), so day 2 is drawn reversed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.floriferous.cards import BOUNTIES, BOUNTY_INDEX, CARD_INDEX, CARDS, CardType
from games.floriferous.scoring import final_breakdowns
from web.viewer import Frame

PHASE_TEXT: dict[str, str] = {
    "setup_bounties": "setup: revealing the Bounty cards",
    "setup_start_player": "setup: choosing the starting player",
    "deal": "dealing the garden",
    "turn": "players' turns",
    "tea": "Cup of Tea decision",
    "crow": "the crow",
    "crow_deal": "the crow: replacing a card",
    "pay_crow": "paying the crow",
    "discard": "discarding for the crow",
    "game_over": "game over",
}
"""Display text of the observation's ``phase`` values."""

CATEGORIES: tuple[str, ...] = ("arrangement", "sculpture", "desire", "stones", "bounty", "tea")
"""Score categories in the order the rulebook's score pad lists them."""


def chip(card_id: str, *, revealed: bool = False) -> dict[str, Any]:
    """A card chip: ``{id, kind, color, label, detail, title, revealed}``.

    Args:
        card_id: a Garden or Desire card id (``"F28"``, ``"A3"``, ``"S1"``, ``"D16"``);
            ``""`` for a face-down card.
        revealed: the card lies face down and is shown only because of "show all hands".
    """
    if not card_id:
        return {"id": "", "kind": "facedown", "color": "none", "label": "face down", "detail": "",
                "title": "face-down card", "revealed": False}
    index = CARD_INDEX.get(card_id)
    if index is None:
        return {"id": card_id, "kind": "unknown", "color": "none", "label": card_id, "detail": "",
                "title": card_id, "revealed": revealed}
    c = CARDS[index]
    if c.type is CardType.FLOWER:
        label, detail = f"{c.color} {c.flower}", c.bug or ""
    elif c.type is CardType.ARRANGEMENT:
        label, detail = f"Arrangement: {c.flower}", f"{c.color} · {c.bug}"
    elif c.type is CardType.SCULPTURE:
        label, detail = "Sculpture", ""
    else:
        assert c.category is not None
        what = c.target or c.category.value.replace("_", " ").title()
        label = f"Desire: {what}"
        detail = f"{c.per_card} per card" if c.per_card else "sets " + "/".join(str(p) for p in c.table[1:])
    return {
        "id": c.id,
        "kind": c.type.value,
        "color": (c.color or "none").lower(),
        "label": label,
        "detail": detail,
        "title": c.name,
        "revealed": revealed,
    }


def _name(seat_names: Sequence[str], seat: int) -> str:
    return seat_names[seat] if 0 <= seat < len(seat_names) else f"seat {seat}"


def board_context(frame: Frame, seat_names: Sequence[str], all_hands: bool) -> dict[str, Any]:
    """Template context of the Floriferous panel for one frame (see the module docstring)."""
    obs = frame.observation
    full = frame.full_state if all_hands else None
    ncols = int(obs.get("num_rounds", 5))
    reverse = obs.get("direction") == "right_to_left"
    n = int(obs.get("num_players", len(seat_names)))
    rows = []
    for ri, row in enumerate(obs.get("garden", [])):
        cells = []
        for ci, cell in enumerate(row.get("cells", [])):
            card_id = cell.get("card", "")
            face_down = bool(cell.get("face_down"))
            revealed = False
            if face_down and full is not None:
                hidden = full["cells"][ri * ncols + ci][0]
                card_id, revealed = hidden, bool(hidden)
            cells.append(
                {
                    "column": cell.get("column", ci + 1),
                    "chip": chip(card_id, revealed=revealed) if (card_id or face_down) else None,
                    "face_down": face_down,
                    "stones": int(cell.get("stones", 0)),
                    "crow_stones": bool(cell.get("crow_stones")),
                    "pawn": int(cell.get("pawn", -1)),
                }
            )
        if reverse:
            cells.reverse()
        start_pawns = [
            p["seat"] for p in obs.get("players", [])
            if p.get("pawn_column", 0) == 0 and p.get("pawn_row") == row.get("row")
        ]
        rows.append(
            {
                "row": row.get("row"),
                "label": "Desire row" if row.get("kind") == "desire" else f"Row {row.get('row')}",
                "desire": row.get("kind") == "desire",
                "cells": cells,
                "start_pawns": start_pawns,
            }
        )
    headers = list(range(1, ncols + 1))
    if reverse:
        headers.reverse()

    players_obs = obs.get("players", [])
    tea_holder = int(obs.get("tea_holder", -1))
    breakdowns = final_breakdowns(
        [p.get("cards", []) for p in players_obs],
        [int(p.get("stones", 0)) for p in players_obs],
        [int(p.get("bounty_points", 0)) for p in players_obs],
        tea_holder,
        sculptures_scored=not obs.get("solo", False),
    )
    current = int(obs.get("current_player", -1))
    players = []
    for p, b in zip(players_obs, breakdowns, strict=True):
        groups: dict[str, list[dict[str, Any]]] = {"flower": [], "arrangement": [], "sculpture": [], "desire": []}
        for card_id in p.get("cards", []):
            c = chip(card_id)
            groups.setdefault(c["kind"], []).append(c)
        seat = int(p.get("seat", 0))
        players.append(
            {
                "seat": seat,
                "name": _name(seat_names, seat),
                "current": seat == current,
                "pawn_row": p.get("pawn_row"),
                "pawn_column": p.get("pawn_column"),
                "groups": groups,
                "cards": len(p.get("cards", [])),
                "stones": int(p.get("stones", 0)),
                "flower_tokens": int(p.get("flower_tokens", 0)),
                "bounty_points": int(p.get("bounty_points", 0)),
                "tea": seat == tea_holder,
                "score": {k: getattr(b, k) for k in CATEGORIES},
                "total": b.total,
            }
        )
    bounties = []
    for bounty in obs.get("bounties", []):
        index = BOUNTY_INDEX.get(bounty.get("bounty", ""))
        bounties.append(
            {
                "id": bounty.get("bounty", ""),
                "name": BOUNTIES[index].name if index is not None else bounty.get("bounty", ""),
                "requirements": bounty.get("requirements", []),
                "columns": [
                    {"day": col.get("day"), "points": col.get("points"),
                     "seats": [_name(seat_names, s) for s in col.get("seats", [])]}
                    for col in bounty.get("columns", [])
                ],
            }
        )
    hidden = None
    if full is not None:
        hidden = {
            "garden_deck": [chip(c) for c in sorted(full.get("garden_deck", []))],
            "desire_deck": [chip(c) for c in sorted(full.get("desire_deck", []))],
        }
    crow = obs.get("crow") if obs.get("solo") else None
    return {
        "day": obs.get("day"),
        "round": obs.get("round"),
        "num_rounds": ncols,
        "direction": "right to left" if reverse else "left to right",
        "reverse": reverse,
        "phase": obs.get("phase", ""),
        "phase_text": PHASE_TEXT.get(obs.get("phase", ""), obs.get("phase", "")),
        "current": current,
        "current_name": _name(seat_names, current) if current >= 0 else None,
        "turn_order": [_name(seat_names, s) for s in obs.get("turn_order", [])],
        "headers": headers,
        "rows": rows,
        "players": players,
        "num_players": n,
        "bounties": bounties,
        "tea_holder": _name(seat_names, tea_holder) if tea_holder >= 0 else None,
        "tea_tossed": bool(obs.get("tea_tossed")),
        "garden_deck": obs.get("garden_deck", 0),
        "desire_deck": obs.get("desire_deck", 0),
        "stone_supply": obs.get("stone_supply", 0),
        "solo": bool(obs.get("solo")),
        "crow": crow,
        "final": frame.terminal,
        "all_hands": all_hands,
        "hidden": hidden,
        "seat_name": lambda s: _name(seat_names, s),
    }
