"""Reference decision rules of Floriferous, written from the rulebook alone.

A deliberately simple, slow second model of "which decisions may the player to
act take now", for the differential test (tests/games/test_floriferous_differential.py).
It reads only the deciding seat's observation (the public view documented in
docs/rules/floriferous.md: rows, columns in visiting order, cells, pawns,
Stones, the Crow Card) and never imports games.floriferous. Text quoted is
the Floriferous rulebook's; where the rulebook leaves the form of a
decision open, the project's recorded decision (docs/rules/floriferous.md,
"Ambiguities and decisions", numbers given) is followed and cited.

Decisions (``kind`` + fields, as JSON dicts):

* ``take {row, card, stones}`` — "Pick any card in the column immediately to the
  right of your Gardener Pawn" / "If the card has a Stone on it, take it as well"
  / "Move your Gardener Pawn to where you took the card from". Any space of the
  next column holding a card, face-up (``card`` its id) or face-down
  (``card = ""``: "The player simply doesn't know what they are until chosen").
* ``scatter {row, stones}`` (solo) — "you may choose to move your Gardener Pawn
  to the space in the next column where the crow has placed any Stones ...
  return all Stones in that space to the supply and do not collect a card".
* ``move_empty {row}`` — decision 21: only if the next column offers no card
  and no crow Stones, the pawn may move to any empty space of it.
* ``toss_tea {toss}`` (solo) — "Once per game, you may return the Cup of Tea ...
  This decision must be made before the Crow Action Card is flipped": both
  answers, whenever the engine asks (decision 17 says when).
* ``pay_crow {stones}`` (solo, day end) — "You may return any number of Stones
  from your collection to the supply to remove an equal number of Stones from
  the Crow Card": 0 .. min(own Stones, Crow Card Stones) (decision 18).
* ``discard {card}`` (solo, day end) — "If the Crow Card has 4 or more Stones on
  it, choose and discard a card in your collection (Garden Card or Desire Card)":
  each card of the collection.
"""

from __future__ import annotations

from typing import Any


def _canon(actions: list[dict[str, Any]]) -> set[tuple[tuple[str, Any], ...]]:
    return {tuple(sorted(a.items())) for a in actions}


def legal_decisions(obs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every legal decision of the seat to act, from its observation.

    Args:
        obs: ``state.observation(seat)`` of the seat to act (``obs["current_player"]``).

    Returns:
        Decisions as JSON dicts (``{"kind": ..., <fields>}``), any order, no duplicates.

    Raises:
        ValueError: the phase is not a decision of a seat.
    """
    phase = obs["phase"]
    seat = obs["current_player"]
    me = obs["players"][seat]
    if phase == "turn":
        return _turn(obs, me)
    if phase == "tea":
        return [{"kind": "toss_tea", "toss": False}, {"kind": "toss_tea", "toss": True}]
    if phase == "pay_crow":
        most = min(me["stones"], obs["crow"]["crow_card_stones"])
        return [{"kind": "pay_crow", "stones": k} for k in range(most + 1)]
    if phase == "discard":
        return [{"kind": "discard", "card": c} for c in dict.fromkeys(me["cards"])]
    raise ValueError(f"not a decision phase: {phase!r}")


def _turn(obs: dict[str, Any], me: dict[str, Any]) -> list[dict[str, Any]]:
    column = me["pawn_column"] + 1  # "the column immediately to the right of your Gardener Pawn"
    spaces = [(row["row"], cell) for row in obs["garden"] for cell in row["cells"] if cell["column"] == column]
    out: list[dict[str, Any]] = []
    for row, cell in spaces:
        if cell["face_down"] or cell["card"]:
            out.append({"kind": "take", "row": row, "card": "" if cell["face_down"] else cell["card"],
                        "stones": cell["stones"]})
        elif obs["solo"] and cell["stones"] > 0:  # Stones the crow placed on a vacated space
            out.append({"kind": "scatter", "row": row, "stones": cell["stones"]})
    if not out:  # decision 21: nothing to take and no crow Stones
        out = [{"kind": "move_empty", "row": row} for row, cell in spaces if cell["pawn"] < 0]
    return out


def same_decisions(reference: list[dict[str, Any]], engine: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """(missing from the engine, extra in the engine), as sorted lists of items."""
    r, e = _canon(reference), _canon(engine)
    return sorted(r - e), sorted(e - r)
