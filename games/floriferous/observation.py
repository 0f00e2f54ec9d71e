"""Observations: what a seat (or the spectator) may know, as a plain dict.

Rulebook: Floriferous, "Face-Down Cards" ("The player simply doesn't know what
they are until chosen") — the only hidden information in the game besides the
decks. Every collected card, Stone, Flower Token, the Cup of Tea and the solo
Crow discard pile are public, so every seat sees the same thing; ``seat`` only
says who is looking (-1 = spectator).

The dict is built field by field from public parts of the state (never copied
from the full state and then trimmed): a face-down space contributes
``card = ""`` and ``face_down = true``; decks contribute only their sizes.

Its shape is exactly the protobuf message ``parterre.v1.FloriferousObservation``
(``proto/parterre/v1/floriferous.proto``)::

    {
      "num_players": 4, "seat": -1, "solo": false, "extended": false,
      "competitive_bounties": false,
      "day": 1,                 # 1..3
      "round": 2,               # 1..num_rounds; 0 while the day's garden is dealt
      "num_rounds": 5,          # columns per day (7 extended)
      "direction": "left_to_right",   # or "right_to_left" (day 2)
      "phase": "turn",          # see PHASE_NAMES in games.floriferous.state
      "current_player": 2,      # seat, -1 chance, -2 game over
      "turn_order": [2, 0, 3, 1],     # seats in this round's order ([] between rounds)
      "garden": [{"row": 1, "kind": "garden", "cells": [
          {"column": 1, "card": "F12", "face_down": false, "stones": 0,
           "crow_stones": false, "pawn": -1}, ...]}, ...],
      "players": [{"seat": 0, "pawn_row": 1, "pawn_column": 0, "cards": ["F12"],
                   "stones": 1, "flower_tokens": 3, "bounty_points": 0}, ...],
      "bounties": [{"bounty": "B6", "requirements": ["Lily", "Lily", "Ladybug"],
                    "columns": [{"day": 1, "points": 5, "seats": [0]}, ...]}, ...],
      "tea_holder": -1, "tea_tossed": false,
      "garden_deck": 35, "desire_deck": 16, "stone_supply": 16,
      "crow": {"deck": 9, "discard": [], "last_card": "", "crow_card_stones": 0}
    }

Columns are numbered in the order the pawns visit them today (see
:mod:`games.floriferous.layout`); ``pawn_column`` 0 means "beside the garden,
before column 1".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from games.floriferous.cards import BOUNTIES, CARD_IDS, CROW_ACTIONS
from games.floriferous.phases import FLOWER_TOKENS, P_CROW, P_CROW_DEAL, P_TEA, P_TURN, PHASE_NAMES
from games.floriferous.summary import bounty_points

if TYPE_CHECKING:
    # a mypyc trait the state inherits: compiled code reads its fields from their slots (a
    # typing.Protocol-typed state was read by name through the generic attribute lookup)
    from games.floriferous.state_protocol import FloriferousStateProtocol


_DURING_ROUND: Final = (P_TURN, P_TEA, P_CROW, P_CROW_DEAL)


def _display_round(state: FloriferousStateProtocol) -> int:
    ph = state._phase
    if ph in _DURING_ROUND:
        return state._round + 1
    if state._round >= state._num_columns:  # day over (paying the crow, discarding, game over)
        return state._num_columns
    return 0


def build_observation(state: FloriferousStateProtocol, seat: int | None) -> dict[str, Any]:
    """The observation of ``seat`` (None = spectator); see the module docstring.

    Args:
        state: the state to observe.
        seat: a seat number, or None.

    Returns:
        A JSON-able dict shaped like ``parterre.v1.FloriferousObservation``.
    """
    lay = state._layout
    ncols = state._num_columns
    n = state._num_players
    pawn_at = {(state._pawn_row[s], state._pawn_column[s]): s for s in range(n) if state._pawn_column[s] >= 0}
    garden = []
    for ri, row in enumerate(lay.rows):
        cells = []
        for c in range(ncols):
            i = ri * ncols + c
            x = state._card[i]
            face_down = x >= 0 and state._face_down[i]
            stones = state._cell_stones[i]
            cells.append(
                {
                    "column": c + 1,
                    "card": CARD_IDS[x] if x >= 0 and not face_down else "",
                    "face_down": face_down,
                    "stones": stones,
                    "crow_stones": x < 0 and stones > 0,
                    "pawn": pawn_at.get((ri, c), -1),
                }
            )
        garden.append({"row": row, "kind": "desire" if ri == lay.desire_index else "garden", "cells": cells})

    points = bounty_points(state)
    placed = [0] * n
    bounties = []
    for pos, b in enumerate(state._bounties):
        card = BOUNTIES[b]
        columns = []
        for d, seats in enumerate(state._bounty_columns[pos]):
            for s in seats:
                placed[s] += 1
            columns.append({"day": d + 1, "points": card.points[d], "seats": list(seats)})
        bounties.append({"bounty": card.id, "requirements": list(card.requirements), "columns": columns})

    players = [
        {
            "seat": s,
            "pawn_row": lay.rows[state._pawn_row[s]],
            "pawn_column": state._pawn_column[s] + 1,
            "cards": [CARD_IDS[x] for x in state._collections[s]],
            "stones": state._stones[s],
            "flower_tokens": FLOWER_TOKENS - placed[s],
            "bounty_points": points[s],
        }
        for s in range(n)
    ]
    crow = {
        # An exhausted deck is reshuffled from the discard pile only when the
        # next card is needed; until then it shows 0 cards.
        "deck": len(state._crow_deck),
        "discard": [CROW_ACTIONS[c].id for c in state._crow_discard],
        "last_card": CROW_ACTIONS[state._crow_last].id if state._crow_last >= 0 else "",
        "crow_card_stones": state._crow_card,
    }
    options = state.game.options
    return {
        "num_players": n,
        "seat": -1 if seat is None else seat,
        "solo": state._solo,
        "extended": bool(options["extended"]),
        "competitive_bounties": bool(options["competitive_bounties"]),
        "day": state._day + 1,
        "round": _display_round(state),
        "num_rounds": ncols,
        "direction": "right_to_left" if state._day == 1 else "left_to_right",
        "phase": PHASE_NAMES[state._phase],
        "current_player": state._cur,
        "turn_order": list(state._order) if state._phase in _DURING_ROUND else [],
        "garden": garden,
        "players": players,
        "bounties": bounties,
        "tea_holder": state._tea_holder,
        "tea_tossed": state._tea_tossed,
        "garden_deck": len(state._garden_deck),
        "desire_deck": len(state._desire_deck),
        "stone_supply": state._supply,
        "crow": crow,
    }
