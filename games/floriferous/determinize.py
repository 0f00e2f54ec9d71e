"""Determinization: an observation -> a random full state consistent with it.

Rulebook: Floriferous, "Face-Down Cards" — the face-down spaces of the garden
and the two decks are the only hidden information (every collected card,
Stone, Flower Token, the Cup of Tea and the solo Crow discard are public; see
:mod:`games.floriferous.observation`). The observation is a snapshot, so the
cards discarded at earlier cleanups are not in it: every card of the game that
the observation does not show is *unseen*, and a determinization deals the
unseen cards of each deck, uniformly at random, to the face-down spaces of its
rows and to the deck (as many as the observation's deck size says); the rest
are out of the game. The solo Crow deck is the Crow Action cards not in the
discard pile (or empty when the observation shows 0 cards left).

Method: determinized search for imperfect-information games (Cowling, Powley
& Whitehouse 2012, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2)).
"""

from __future__ import annotations

import random
from typing import Any

from games.api import Game
from games.floriferous.cards import (
    BOUNTY_INDEX,
    CARD_INDEX,
    CROW_ACTIONS,
    CROW_INDEX,
    DESIRE_CARDS,
    GARDEN_CARDS,
    NUM_CARDS,
    SOLO_GARDEN_CARDS,
)
from games.floriferous.phases import P_CROW, P_CROW_DEAL, P_TEA, P_TURN, PHASE_NAMES
from games.floriferous.state import FloriferousState
from games.native import set_fields

_PHASE = {name: i for i, name in enumerate(PHASE_NAMES)}


class DeterminizeError(ValueError):
    """The observation is not one this game can produce (wrong shape or counts)."""


def determinize(game: Game, observation: dict[str, Any], rng: random.Random) -> FloriferousState:
    """A full state drawn uniformly among those consistent with ``observation``.

    Args:
        game: the :class:`~games.floriferous.game.FloriferousGame` of the match
            (its options must be the observation's).
        observation: an observation of any seat (``State.observation(seat)``);
            every seat sees the same thing in Floriferous.
        rng: source of the random choices.

    Returns:
        A state whose ``observation(seat)`` equals ``observation`` and whose
        legal actions are those of the observed position. Its history is empty
        (the state is a position, not a replay).

    Raises:
        DeterminizeError: the observation does not fit ``game`` (seat count,
            unknown cards, more hidden places than unseen cards).
    """
    obs = observation
    n = game.num_players
    if int(obs.get("num_players", 0)) != n:
        raise DeterminizeError(f"observation has {obs.get('num_players')} players, the game {n}")
    st = game.new_initial_state()
    assert isinstance(st, FloriferousState)
    lay = st._layout
    ncols = st._num_columns
    solo = st._solo
    cells = lay.cells

    card = [-1] * cells
    fd = [False] * cells
    stones = [0] * cells
    prow = list(st._pawn_row)
    pcol = [-1] * n
    seen: set[int] = set()
    hidden_cells: list[int] = []
    for ri, row in enumerate(obs.get("garden", [])):
        for c, cell in enumerate(row.get("cells", [])):
            i = ri * ncols + c
            stones[i] = int(cell.get("stones", 0))
            if cell.get("face_down", False):
                fd[i] = True
                hidden_cells.append(i)
            elif cell.get("card"):
                x = _card(cell["card"])
                card[i] = x
                seen.add(x)
    coll: list[list[int]] = []
    for s, p in enumerate(obs.get("players", [])):
        xs = [_card(cid) for cid in p.get("cards", [])]
        coll.append(xs)
        seen.update(xs)
        prow[s] = lay.row_index[int(p.get("pawn_row", 0))]
        pcol[s] = int(p.get("pawn_column", 0)) - 1

    # Unseen cards per deck, dealt to the hidden places at random.
    garden_all = SOLO_GARDEN_CARDS if solo else GARDEN_CARDS
    pools = {False: [x for x in garden_all if x not in seen], True: [x for x in DESIRE_CARDS if x not in seen]}
    for pool in pools.values():
        rng.shuffle(pool)
    desire_start = st._desire_start
    for i in hidden_cells:
        pool = pools[i >= desire_start]
        if not pool:
            raise DeterminizeError("more face-down spaces than unseen cards")
        card[i] = pool.pop()
    gsize, dsize = int(obs.get("garden_deck", 0)), int(obs.get("desire_deck", 0))
    if len(pools[False]) < gsize or len(pools[True]) < dsize:
        raise DeterminizeError("deck sizes exceed the unseen cards")
    gdeck = sorted(pools[False][:gsize])
    ddeck = sorted(pools[True][:dsize])
    indeck = bytearray(NUM_CARDS)
    for x in gdeck + ddeck:
        indeck[x] = 1

    bounties = [BOUNTY_INDEX[b.get("bounty", "")] for b in obs.get("bounties", [])]
    bcols = [[list(col.get("seats", [])) for col in b.get("columns", [])] for b in obs.get("bounties", [])]
    bdone = [0] * n
    for pos, cols in enumerate(bcols):
        for seats in cols:
            for s in seats:
                bdone[s] |= 1 << pos

    phase = _PHASE[obs.get("phase", "")]
    cur = int(obs.get("current_player", 0))
    order = [int(s) for s in obs.get("turn_order", [])]
    during = phase in (P_TURN, P_TEA, P_CROW, P_CROW_DEAL)
    rnd = int(obs.get("round", 0)) - 1 if during else (ncols if int(obs.get("round", 0)) >= ncols else 0)

    crow = obs.get("crow", {})
    crow_disc = [CROW_INDEX[c] for c in crow.get("discard", [])]
    crow_deck = sorted(set(range(len(CROW_ACTIONS))) - set(crow_disc)) if crow.get("deck", 0) else []
    if len(crow_deck) != int(crow.get("deck", 0)):
        raise DeterminizeError("crow deck size does not match its discard pile")

    set_fields(st, dict(
        _card=card, _face_down=fd, _cell_stones=stones, _dealt_at=[-1] * cells,
        _garden_deck=gdeck, _desire_deck=ddeck, _in_deck=indeck,
        _bounty_pool=[b for b in range(len(st._bounty_pool)) if b not in bounties] if bounties else st._bounty_pool,
        _bounties=bounties, _bounty_columns=bcols, _bounties_done=bdone,
        _collections=coll, _stones=[int(p.get("stones", 0)) for p in obs.get("players", [])],
        _supply=int(obs.get("stone_supply", 0)),
        _pawn_row=prow, _pawn_column=pcol,
        _day=int(obs.get("day", 0)) - 1, _round=rnd, _order=order,
        _turn_index=order.index(cur) if phase == P_TURN and cur in order else 0,
        _queue=[], _deal_index=0,
        _tea_holder=int(obs.get("tea_holder", 0)), _tea_tossed=bool(obs.get("tea_tossed", False)),
        _crow_deck=crow_deck, _crow_discard=crow_disc,
        _crow_last=CROW_INDEX[crow.get("last_card", "")] if crow.get("last_card", "") else -1,
        _crow_card=int(crow.get("crow_card_stones", 0)), _crow_target=-1,
        _result=None, _phase=phase, _cur=cur,
    ))  # through games.native: a compiled state keeps these outside __dict__
    st.history = []
    st._legal_cache = None
    st._sampled = None
    return st


def _card(card_id: str) -> int:
    x = CARD_INDEX.get(card_id)
    if x is None:
        raise DeterminizeError(f"unknown card {card_id!r}")
    return x


def game_from_observation(observation: dict[str, Any]) -> Game:
    """The game of an observation (players, extended and competitive bounties are in it)."""
    from games.registry import load_game

    return load_game("floriferous", {
        "players": int(observation.get("num_players", 0)),
        "extended": bool(observation.get("extended", False)),
        "competitive_bounties": bool(observation.get("competitive_bounties", False)),
    })
