"""Determinization: a Flowar observation -> a random full state consistent with it.

Rulebook: Flowar. Once every player has kept a Contract ("Game Setup", step
7), the table hides (see :mod:`games.flowar.observation`): the order and
content of the Flower and Contract decks, the Contracts below the *other*
Player Boards (only counts), the Contracts not chosen at setup, the Kingdom
Favors and Efficiency Tiles left in their face-down supplies, and the other
players' MP tokens ("always kept facedown", "Travel Petal"). The discard
piles (Flower cards, Contracts, Efficiency Tiles) are face up and the seat's
own Contracts below its board are its own doing; the observation lists them
and they are copied as they are. The observation is a snapshot, so the cards
of the game that it does not show anywhere are *unseen*; a determinization
deals them uniformly at random to the hidden places, as many as each count says:

* unseen Flower cards (not in the market, on a Player Board nor in the
  discard pile) to the Flower deck;
* unseen Contracts (not in the grid, held, discarded nor below the seat's own
  board) below the other Player Boards, to the Contract deck and the
  unchosen Contracts;
* unseen Kingdom Favors (of the game's set, not on a kingdom) to the pool;
  unseen Efficiency Tiles (the rulebook's set less those on the kingdoms and
  those discarded at the ends of earlier rounds) to the supply.

**The other players' MP.** Nothing a seat sees fixes them (MP come from
Guilds, deliveries, exchanges and Favors over the whole game, and a snapshot
has no history), so they are not drawn. Decision (the issue is silent): each other player is given
the observing seat's own MP, so the search plays to gain more than its rivals
from here on rather than against a guessed lead.

**Which positions.** The state carries an agenda of pending rule steps that a
snapshot does not show. It is empty, and the turn's flags all clear, at the
*start of a seat's turn* (phase ``turn``, nothing placed, fired, hired, no
Favor used) in a game of 2-4 players; that is the decision rebuilt here.
Every other decision (setup, Guild choice, strikes, the steps inside a turn,
a delivery, the solo game) raises :class:`UnsupportedPosition`; the search bot
plays those by the greedy strategy (decision recorded in ``docs/search.md``).
The searched tree still goes through every step, inside the determinized
states.

Method: determinized search for imperfect-information games (Cowling, Powley
& Whitehouse 2012, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2)).
"""

from __future__ import annotations

import random
from typing import Any

from games.api import Game
from games.flowar.cards import (
    CONTRACT_IDS,
    CONTRACT_INDEX,
    EFFICIENCY_TILES,
    FIRST_GAME_FAVORS,
    FLOWER_IDS,
    FLOWER_INDEX,
    GUILDS,
)
from games.flowar.observation import BOARD_SPACES
from games.flowar.phases import D_TURN, PHASE_NAMES
from games.flowar.state import FlowarState
from games.native import set_fields

_W = ("trentis", "humans", "foxes")


class DeterminizeError(ValueError):
    """The observation is not one this game can produce (wrong shape, unknown cards, counts)."""


class UnsupportedPosition(DeterminizeError):
    """A position whose pending rule steps a snapshot does not fix (see the module docstring)."""


def supported(observation: dict[str, Any]) -> bool:
    """True when :func:`determinize` can rebuild ``observation``'s position (start of a turn, 2-4 players)."""
    ctx = observation.get("context", {})
    return (not observation.get("solo", False) and int(observation.get("num_players", 0)) >= 2
            and observation.get("phase") == PHASE_NAMES[D_TURN]
            and int(observation.get("current_player", -1)) == int(observation.get("seat", -2))
            and int(observation.get("turn_seat", -1)) == int(observation.get("seat", -2))
            and not ctx.get("placed") and not ctx.get("fired") and not ctx.get("hired")
            and not ctx.get("favor_used") and not ctx.get("active_favors") and not ctx.get("extra_placement")
            and not any(p.get("hidden_contracts") for p in observation.get("players", [])))


def _w(rec: dict[str, Any]) -> list[int]:
    return [int(rec.get(k, 0)) for k in _W]


def determinize(game: Game, observation: dict[str, Any], rng: random.Random) -> FlowarState:
    """A full state drawn uniformly among those consistent with ``observation`` (not the MP: see the module docs).

    Args:
        game: the :class:`~games.flowar.game.FlowarGame` of the match (2-4 players).
        observation: the observation of the seat to act (``State.observation(seat)``)
            at the start of its turn.
        rng: source of the random choices.

    Returns:
        A state whose ``observation(seat)`` equals ``observation`` and whose legal
        actions are those of the observed position, in the same order. Its history
        is empty (a position, not a replay).

    Raises:
        UnsupportedPosition: not the start of the observing seat's turn, or solo.
        DeterminizeError: the observation does not fit ``game`` (player count,
            unknown cards, more hidden places than unseen cards).
    """
    obs = observation
    n = game.num_players
    if int(obs.get("num_players", 0)) != n:
        raise DeterminizeError(f"observation has {obs.get('num_players')} players, the game {n}")
    if not supported(obs):
        raise UnsupportedPosition(f"no determinization at phase {obs.get('phase')!r} (solo: {obs.get('solo')})")
    seat = int(obs["seat"])
    st = game.new_initial_state()
    assert isinstance(st, FlowarState)

    def flower(fid: str) -> int:
        if fid not in FLOWER_INDEX:
            raise DeterminizeError(f"unknown Flower card {fid!r}")
        return FLOWER_INDEX[fid]

    def contract(cid: str) -> int:
        if cid not in CONTRACT_INDEX:
            raise DeterminizeError(f"unknown Contract {cid!r}")
        return CONTRACT_INDEX[cid]

    players = obs.get("players", [])
    if len(players) != n:
        raise DeterminizeError("one record per player expected")
    market = [flower(x) if x else -1 for x in obs.get("market", [])]
    cgrid = [contract(x) if x else -1 for x in obs.get("contract_grid", [])]
    fresh = [[flower(x) for x in p.get("fresh", [])] for p in players]
    wilt = [[flower(x) for x in p.get("wilting", [])] for p in players]
    held = [[contract(x) for x in p.get("contracts", [])] for p in players]
    dealt = [[contract(x) for x in p.get("dealt", [])] for p in players]

    fdisc = [flower(x) for x in obs.get("flower_discard_cards", [])]
    cdisc = [contract(x) for x in obs.get("contract_discard_cards", [])]
    if len(fdisc) != int(obs.get("flower_discard", 0)) or len(cdisc) != int(obs.get("contract_discard", 0)):
        raise DeterminizeError("discard piles: the cards listed do not match the counts")
    own_below: list[list[int]] = [[contract(x) for x in b.get("contracts", [])]
                                  for b in players[seat].get("below_contracts", [])]
    if [len(b) for b in own_below] != [int(c) for c in players[seat].get("below", [0, 0, 0])]:
        raise DeterminizeError("below_contracts of the observing seat do not match its below counts")

    # Flower cards: the deck holds those neither shown nor in the (face-up) discard pile.
    seen_f = {x for x in market if x >= 0} | {x for pile in fresh + wilt + [fdisc] for x in pile}
    fpool = [x for x in range(len(FLOWER_IDS)) if x not in seen_f]
    nfd = int(obs.get("flower_deck", 0))
    if nfd > len(fpool):
        raise DeterminizeError("more hidden Flower cards than unseen ones")
    rng.shuffle(fpool)
    fdeck = sorted(fpool[:nfd])

    # Contracts: below the other Player Boards, deck, unchosen (the discard pile and
    # the seat's own Contracts below its board are known).
    seen_c = {x for x in cgrid if x >= 0} | {x for pile in held + dealt + own_below + [cdisc] for x in pile}
    cpool = [x for x in range(len(CONTRACT_IDS)) if x not in seen_c]
    rng.shuffle(cpool)

    def take(k: int, what: str) -> list[int]:
        if k < 0 or k > len(cpool):
            raise DeterminizeError(f"{what}: {k} Contracts, {len(cpool)} unseen")
        out = cpool[:k]
        del cpool[:k]
        return out

    below = [own_below if s == seat else [take(int(c), "below") for c in p.get("below", [0, 0, 0])]
             for s, p in enumerate(players)]
    cdeck = sorted(take(int(obs.get("contract_deck", 0)), "deck"))
    unchosen = sorted(take(int(obs.get("unchosen_contracts", 0)), "unchosen"))

    # Kingdom Favors and Efficiency Tiles left in their supplies.
    kingdoms = obs.get("kingdoms", [])
    slots = [int(k.get("favor", 0)) for k in kingdoms] + [int(k.get("next_favor", 0)) for k in kingdoms]
    favors = list(FIRST_GAME_FAVORS if game.options["first_game_favors"] else range(1, 21))
    unseen_fav = [f for f in favors if f not in slots]
    rng.shuffle(unseen_fav)
    nfav = int(obs.get("favor_pool", 0))
    if nfav > len(unseen_fav):
        raise DeterminizeError("more Favors in the pool than unseen ones")
    fav_pool = sorted(unseen_fav[:nfav])
    eff = [int(k.get("efficiency", 0)) for k in kingdoms]
    eff_disc = [int(v) for v in obs.get("efficiency_discard", [])]
    tiles = [v for v, c in EFFICIENCY_TILES.items() for _ in range(c)]
    for v in [v for v in eff if v] + eff_disc:  # face up on the kingdoms, or discarded in view
        if v not in tiles:
            raise DeterminizeError(f"Efficiency Tile {v} shown more often than the game has it")
        tiles.remove(v)
    rng.shuffle(tiles)
    neff = int(obs.get("efficiency_supply", 0))
    if neff > len(tiles):
        raise DeterminizeError("more Efficiency Tiles in the supply than unseen ones")
    eff_supply = dict.fromkeys(EFFICIENCY_TILES, 0)
    for v in tiles[:neff]:
        eff_supply[v] += 1

    guilds = [int(g["guild"]) for g in obs.get("guild_tiles", [])]
    gworkers = [[0, 0, 0] for _ in range(6)]
    gowner = [-1] * 6
    for g in obs.get("guild_tiles", []):
        gworkers[int(g["guild"])] = _w(g.get("workers", {}))
        gowner[int(g["guild"])] = int(g.get("owner", -1))
    spaces = [_w(obs.get("contract_space", {})), _w(obs.get("market_space", {}))] + [
        _w(k.get("workers", {})) for k in kingdoms]
    strikes = set(obs.get("strikes", []))
    bits = dict(BOARD_SPACES)
    own_mp = int(players[seat].get("mp", 0))
    order = [int(s) for s in obs.get("turn_order", [])]

    set_fields(st, dict(  # through games.native: a compiled state keeps these outside __dict__
        _favor_pool=fav_pool, _favor_slots=slots, _favors_dealt=6,
        _efficiency_supply=eff_supply, _efficiency=eff, _efficiency_discard=eff_disc,
        _flower_deck=fdeck, _flower_in_deck=bytearray(1 if x in set(fdeck) else 0 for x in range(len(FLOWER_IDS))),
        _flower_discard=fdisc, _aside=[], _market=market,
        _redraws=[[int(r["round"]), int(r["slot"]) - 1, flower(str(r["card"]))] for r in obs.get("market_redraws", [])],
        _contract_deck=cdeck,
        _contract_in_deck=bytearray(1 if x in set(cdeck) else 0 for x in range(len(CONTRACT_IDS))),
        _contract_discard=cdisc, _contract_grid=cgrid, _unchosen=unchosen, _kept_hidden=False,
        _guild_pool=[g.number for g in GUILDS if g.number not in guilds], _guilds=guilds,
        _guild_workers=gworkers, _guild_owner=gowner,
        _fellowship=int(obs.get("fellowship_guild", 0)), _fellowship_used=bool(obs.get("fellowship_used", False)),
        _bag=_w(obs.get("bag", {})), _strike_area=_w(obs.get("strike_area", {})),
        _strike=[w in strikes for w in ("trenti", "human", "fox")], _spaces=spaces,
        _parked=[0, 0, 0],  # no rule reads it (Workers parked on Player Boards; reset each round)
        _round=int(obs.get("round", 0)), _track=[int(s) for s in obs.get("turn_track", [])],
        _new_track=[int(s) for s in obs.get("passing_order", [])], _order=order,
        _turn_index=order.index(seat), _start=int(obs.get("start_player", -1)),
        _coins=[int(p.get("coins", 0)) for p in players],
        _mp=[int(p["mp"]) if s == seat else own_mp for s, p in enumerate(players)],
        _torches=[int(p.get("torches", 0)) for p in players],
        _loans=[int(p.get("loans", 0)) for p in players],
        _loans_taken=[int(p.get("loans", 0)) + int(p.get("loans_paid", 0)) for p in players],
        _loans_paid=[int(p.get("loans_paid", 0)) for p in players],
        _guild=[int(p.get("guild", 0)) for p in players],
        _workers=[_w(p.get("workers", {})) for p in players],
        _contracts=held, _dealt=dealt, _gave=[[] for _ in range(n)],
        _fresh=fresh, _wilt=wilt, _below=below,
        _board_used=[sum(bits[b] for b in p.get("board_used", [])) for p in players],
        _hired=[bool(p.get("hired", False)) for p in players],
        _wither_exempt=[bool(p.get("no_wither", False)) for p in players],
        _passed=[bool(p.get("passed", False)) for p in players],
        _delivered=[[int(x) for x in p.get("delivered", [0, 0, 0])] for p in players],
        _turn_seat=seat, _turn_loop=("menu", seat), _chance_target=0,
        _phase=D_TURN, _cur=seat, _result=None, _agenda=[],
    ))
    st._reset_turn()
    st._turn_loop = ("menu", seat)
    st._reset_delivery()
    st._line_grid = st._picks = 0
    st._sold = int(obs.get("context", {}).get("sold", 0))  # shown; kept from the last sale
    st._strike_type = -1
    st.history = []
    st._legal_cache = None
    st._sampled = None
    return st


def game_from_observation(observation: dict[str, Any]) -> Game:
    """The game of an observation (its player count and Favor set)."""
    from games.registry import load_game

    return load_game("flowar", {"players": int(observation.get("num_players", 0)),
                                "first_game_favors": bool(observation.get("first_game_favors", False))})
