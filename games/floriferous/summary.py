"""A Floriferous position summarised: final scoring, the state as data, hidden-card histories.

Rulebook: Floriferous, "Final Scoring", "Scoring (Solo)", "Completing Bounty
Cards" (the Flower Tokens' points) and "Face-Down Cards" (the only hidden
information besides the decks).

Functions of a :class:`games.floriferous.state.FloriferousState` (typed by
:class:`~games.floriferous.state_protocol.FloriferousStateProtocol`); they read
its fields and change nothing (the state's hooks ``_outcome``,
``_full_state``, ``bounty_points`` and ``resample_hidden`` call them).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from games.api import Action, Outcome, ranks_from_keys
from games.floriferous import actions as A
from games.floriferous.cards import BOUNTIES, CARD_IDS, CROW_ACTIONS, FIRST_DESIRE
from games.floriferous.phases import P_DEAL, PHASE_NAMES
from games.floriferous.scoring import bounty_column_points_ix, breakdowns_json, final_breakdowns_ix, mood
from games.floriferous.termination import FloriferousTermination

if TYPE_CHECKING:
    from games.floriferous.state_protocol import FloriferousStateProtocol


def bounty_points(st: FloriferousStateProtocol) -> list[int]:
    """Bounty points per seat from the Flower Tokens placed so far (victory points)."""
    pts = [0] * st._num_players
    for pos, b in enumerate(st._bounties):
        for d, seats in enumerate(st._bounty_columns[pos]):
            for s in seats:
                pts[s] += bounty_column_points_ix(b, d)
    return pts


def score(st: FloriferousStateProtocol) -> Outcome:
    """The outcome of a finished match. Rulebook: "Final Scoring" (multiplayer) and "Scoring (Solo)".

    Multiplayer ties are broken by the pawn closest to the top at the end of
    the third day; solo, ``details`` carries the relaxation chart's mood.
    """
    parts = final_breakdowns_ix(
        st._collections, st._stones, bounty_points(st), st._tea_holder, sculptures_scored=not st._solo
    )
    scores = tuple(p.total for p in parts)
    details: dict[str, Any] = {
        "breakdown": breakdowns_json(parts),
        "tea_holder": st._tea_holder,
        "pawn_rows": [st._layout.rows[r] for r in st._pawn_row],
    }
    if st._solo:
        extended = bool(st.game.options["extended"])
        details["mood"] = mood(scores[0], extended)
        details["mood_chart"] = "extended" if extended else "standard"
        details["tea_tossed"] = st._tea_tossed
        return Outcome(scores, (1,), FloriferousTermination.THIRD_DAY_COMPLETE, (), details)
    # Tie-break: the player closest to the top position at the end of the third day.
    ranks = ranks_from_keys([(scores[s], -st._pawn_row[s]) for s in range(st._num_players)])
    tied = len(set(scores)) < len(scores)
    tie_breaks = ("pawn closest to the top at the end of day 3",) if tied else ()
    return Outcome(scores, ranks, FloriferousTermination.THIRD_DAY_COMPLETE, tie_breaks, details)


def full_state(st: FloriferousStateProtocol) -> dict[str, Any]:
    """Everything in the position, hidden cards and deck contents included, JSON-able (for state hashes)."""
    ids = CARD_IDS
    return {
        "phase": PHASE_NAMES[st._phase],
        "current_player": st._cur,
        "day": st._day,
        "round": st._round,
        "turn_order": list(st._order),
        "turn_index": st._turn_index,
        "deal_position": st._deal_index if st._phase == P_DEAL else -1,
        "cells": [
            [ids[x] if x >= 0 else "", st._face_down[i], st._cell_stones[i]] for i, x in enumerate(st._card)
        ],
        "garden_deck": [ids[x] for x in st._garden_deck],
        "desire_deck": [ids[x] for x in st._desire_deck],
        "bounty_pool": [BOUNTIES[b].id for b in st._bounty_pool],
        "bounties": [BOUNTIES[b].id for b in st._bounties],
        "bounty_columns": [[list(s) for s in cols] for cols in st._bounty_columns],
        "bounty_done": list(st._bounties_done),
        "collections": [[ids[x] for x in c] for c in st._collections],
        "stones": list(st._stones),
        "supply": st._supply,
        "pawns": [[st._pawn_row[s], st._pawn_column[s]] for s in range(st._num_players)],
        "tea_holder": st._tea_holder,
        "tea_tossed": st._tea_tossed,
        "crow_deck": [CROW_ACTIONS[c].id for c in st._crow_deck],
        "crow_discard": [CROW_ACTIONS[c].id for c in st._crow_discard],
        "crow_last": CROW_ACTIONS[st._crow_last].id if st._crow_last >= 0 else "",
        "crow_card": st._crow_card,
        "crow_target": st._crow_target,
    }


def resampled_history(st: FloriferousStateProtocol, rng: random.Random) -> list[Action] | None:
    """The history with every face-down card still in the garden swapped for another of its deck.

    Each hidden card is replaced, at the deal that placed it, by a card drawn
    with ``rng`` from its deck (cards never dealt in this match). Replaying the
    result gives a twin with the same public information (docs/faults.md F-20).

    Returns:
        The actions of the new history, or None when nothing is hidden in the garden.
    """
    hidden = [i for i, x in enumerate(st._card) if x >= 0 and st._face_down[i]]
    if not hidden:
        return None
    history = [a for _, a in st.history]
    pools = {False: list(st._garden_deck), True: list(st._desire_deck)}
    for cell in hidden:
        pool = pools[st._card[cell] >= FIRST_DESIRE]
        if not pool:
            continue
        x = pool.pop(rng.randrange(len(pool)))
        history[st._dealt_at[cell]] = A.DEAL[x]
    return history
