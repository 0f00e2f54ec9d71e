"""Observations: what a seat (or the spectator) may know, as a plain dict.

Rulebook: Flowar. Almost everything lies face up: the grids, every Player
Board (Coins, Torches, Loans, Workers, Contracts, flowers), the Guild Tiles,
Workers on spaces and in the Strike Area, and the discard piles: every Flower
card and Contract reaches its discard pile face up (withered, paid for a
Contract, sold, cleared from the grids, a 5th Contract, a Contract spent on a
Kingdom Favor), and the Efficiency Tiles of a round are discarded from the
kingdoms in view ("End of the Round", step 2), so these three piles are sent
card by card, oldest first (``flower_discard_cards``, ``contract_discard_cards``,
``efficiency_discard``; the older count fields stay). A seat also knows the
Contracts it slid face down below its own Player Board (``below_contracts``,
by kingdom, oldest first; empty for the other seats). Hidden are: the deck
contents and orders, the Kingdom Favors and Efficiency Tiles left in their
face-down supplies, the Contracts below the other players' boards, the two
Contracts dealt to each player and the one kept until everybody has chosen
("Game Setup", step 7: the choice is simultaneous at the table), and MP
tokens, "always kept facedown" ("Travel Petal"): a seat sees only its own MP,
the spectator none, until the game ends.

Filling the Market ("Game Setup", step 5, and again at the refresh before round
3): "If you place the last Flower Card and there is not at least one flower of
each type, discard any of the repeated ones and draw Cards until all 5 different
flowers are present ... If you had to discard any Cards, shuffle them to form a
deck". Those cards were face up at the table before going back into the deck, so
every observation lists them, in the order they were put back, for the whole
game (``market_redraws``: the round, 0 at setup; the Market slot it left, 1..9 in
reading order; the card).

The dict is built field by field from public parts of the state (never copied
from the full state and then trimmed). Its shape is exactly the protobuf
message ``parterre.v1.FlowarObservation`` (``proto/parterre/v1/flowar.proto``)::

    {
      "num_players": 4, "seat": 2, "solo": false, "first_game_favors": false,
      "round": 1,                      # 0 during setup, then 1..4
      "phase": "turn",                 # see games.flowar.phases.PHASE_NAMES
      "current_player": 2,             # seat; -1 chance; -2 game over
      "start_player": 0, "taxus_seat": -1,   # solo: Taxus appears as seat 1 in orders
      "turn_track": [0, 1, 2, 3],      # Guild choice order of this round
      "passing_order": [3],            # next round's Turn Track so far
      "turn_order": [1, 3, 0, 2],      # seats by Guild Tile number
      "turn_seat": 2,                  # whose turn it is, -1 outside turns
      "exchange_rate": 5,              # Coins per MP at this round's end
      "kingdoms": [{"kingdom": "K1", "name": "Graceful Rain",
                    "means": [{"means": "K1a", "name": "Cart", "cost": 1}, ...],
                    "efficiency": 4, "favor": 6, "next_favor": 2,
                    "workers": {"trentis": 0, "humans": 0, "foxes": 1}}, ...],
      "contract_space": {...}, "market_space": {...},   # Workers by type
      "fellowship_guild": 3, "fellowship_used": false,
      "strike_area": {...}, "strikes": ["human"],        # types on strike
      "bag": {...},
      "market": ["F12", "", ...],      # 9 slots, reading order; "" empty
      "contract_grid": ["C07", ...],   # 4 slots
      "flower_deck": 20, "flower_discard": 3, "contract_deck": 30, "contract_discard": 0,
      "unchosen_contracts": 0, "efficiency_supply": 9, "favor_pool": 14,
      "flower_discard_cards": ["F33", "F02", "F17"],   # face up, oldest first
      "contract_discard_cards": [], "efficiency_discard": [],  # tile values, oldest first
      "guild_tiles": [{"guild": 1, "action": "coins", "amount": 3, "flower_price": 5,
                       "workers": {...}, "owner": 0}, ...],
      "players": [{"seat": 0, "coins": 10, "mp": -1, "torches": 0, "loans": 0, "loans_paid": 0,
                   "guild": 1, "workers": {...}, "contracts": ["C07"], "hidden_contracts": 0,
                   "dealt": [], "fresh": ["F01"], "wilting": [], "below": [0, 1, 0],
                   "below_contracts": [{"contracts": []}, {"contracts": ["C12"]}, {"contracts": []}],
                   # ^ own seat only, [] for the others
                   "delivered": [0, 0, 0], "board_used": ["guild"], "hired": false,
                   "no_wither": false, "passed": false}, ...],
      "context": {...},                # the decision in progress, see _context
      "taxus": {...},                  # solo: Taxus's public area (zeros otherwise)
      "torch_supply": 20,              # Torches of Discontent left in the Main Supply
      "market_redraws": [{"round": 0, "slot": 9, "card": "F41"}, ...]  # put back while filling
    }
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from games.flowar.cards import (
    COLOURS,
    CONTRACT_IDS,
    FLOWER_IDS,
    GUILDS,
    KINGDOMS,
    TAXUS_CARDS,
    WORKERS,
    exchange_rate,
)
from games.flowar.flags import GUILD_SPACE, MAINTENANCE_SPACE, PAYOFF_SPACE, SELL_SPACE
from games.flowar.phases import P_OVER, PHASE_NAMES
from games.native import fields_of

if TYPE_CHECKING:
    from games.flowar.state_protocol import FlowarStateProtocol

BOARD_SPACES: Final = (
    ("maintenance", MAINTENANCE_SPACE), ("sell", SELL_SPACE), ("payoff", PAYOFF_SPACE), ("guild", GUILD_SPACE),
)


def workers(counts: list[int] | tuple[int, ...]) -> dict[str, int]:
    """``{"trentis": .., "humans": .., "foxes": ..}`` from 3 counts."""
    return {"trentis": counts[0], "humans": counts[1], "foxes": counts[2]}


def _ids(ids: tuple[str, ...], xs: list[int]) -> list[str]:
    return [ids[x] if x >= 0 else "" for x in xs]


def _player(st: FlowarStateProtocol, s: int, seat: int | None) -> dict[str, Any]:
    own = seat == s
    over = st._phase == P_OVER
    hide = st._kept_hidden and not own
    return {
        "seat": s,
        "coins": st._coins[s],
        "mp": st._mp[s] if own or over else -1,
        "torches": st._torches[s],
        "loans": st._loans[s],
        "loans_paid": st._loans_paid[s],
        "guild": st._guild[s],
        "workers": workers(st._workers[s]),
        "contracts": [] if hide else _ids(CONTRACT_IDS, sorted(st._contracts[s])),
        "hidden_contracts": len(st._contracts[s]) if hide else 0,
        "dealt": _ids(CONTRACT_IDS, sorted(st._dealt[s])) if own else [],
        "fresh": _ids(FLOWER_IDS, sorted(st._fresh[s])),
        "wilting": _ids(FLOWER_IDS, sorted(st._wilt[s])),
        "below": [len(b) for b in st._below[s]],
        "below_contracts": [{"contracts": _ids(CONTRACT_IDS, b)} for b in st._below[s]] if own else [],
        "delivered": list(st._delivered[s]),
        "board_used": [name for name, bit in BOARD_SPACES if st._board_used[s] & bit],
        "hired": st._hired[s],
        "no_wither": st._wither_exempt[s],
        "passed": st._passed[s],
    }


def _context(st: FlowarStateProtocol) -> dict[str, Any]:
    """The decision in progress: the turn's flags, a strike, a grid choice, a delivery."""
    cur = st._cur
    used: list[str] = []
    for x in sorted(st._delivery_baskets_used):
        used.extend([FLOWER_IDS[x]] * st._delivery_baskets_used[x])
    return {
        "placed": st._turn_placed,
        "fired": st._turn_fired,
        "hired": st._turn_hired,
        "favor_used": st._turn_favor_used,
        "active_favors": [f for f in range(1, 21) if st._turn_favors >> f & 1],
        "extra_placement": st._turn_extra,
        "strike_worker": WORKERS[st._strike_type] if st._strike_type >= 0 else "",
        "grid": ("contract", "market")[st._line_grid] if st._phase in _GRID_PHASES else "",
        "picks": st._picks,
        "kingdom": KINGDOMS[st._delivery_kingdom].id if st._delivery_kingdom >= 0 else "",
        "delivering": _ids(CONTRACT_IDS, st._delivery_contracts),
        "owed": [COLOURS[c] for c in st._delivery_owed],
        "exchange_picks": st._exchange_picks,
        "wildcards": st._favor8_baskets,
        "used_baskets": used,
        "exchange_max": (st._exchange_max(cur)
                         if 0 <= cur < st._num_players and PHASE_NAMES[st._phase] == "exchange_mp" else 0),
        "sold": st._sold,
    }


def _taxus(st: FlowarStateProtocol) -> dict[str, Any]:
    return {
        "mp": st._taxus_mp,
        "coins": st._taxus_coins,
        "torches": st._taxus_torches,
        "loans": st._taxus_loans,
        "guild": st._taxus_guild,
        "pile": st._taxus_pile,
        "deck": len(st._taxus_deck),
        "discard": [TAXUS_CARDS[x].id for x in st._taxus_discard],
        "last_card": TAXUS_CARDS[st._taxus_last].id if st._taxus_last >= 0 else "",
        "passed": st._taxus_passed,
    }


def build_observation(st: FlowarStateProtocol, seat: int | None) -> dict[str, Any]:
    """The observation of ``seat`` (None = spectator); see the module docstring.

    Returns:
        A JSON-able dict shaped like ``parterre.v1.FlowarObservation``.
    """
    spaces = st._spaces
    kingdoms = [
        {
            "kingdom": k.id,
            "name": k.name,
            "means": [{"means": m.id, "name": m.name, "cost": m.cost} for m in k.means],
            "efficiency": st._efficiency[i],
            "favor": st._favor_slots[i],
            "next_favor": st._favor_slots[3 + i],
            "workers": workers(spaces[2 + i]),
        }
        for i, k in enumerate(KINGDOMS)
    ]
    guilds = []
    for g in st._guilds:
        rec = GUILDS[g - 1]
        guilds.append({
            "guild": g, "action": rec.action, "amount": rec.amount, "flower_price": rec.flower_price,
            "workers": workers(st._guild_workers[g]), "owner": st._guild_owner[g],
        })
    r = st._round
    return {
        "num_players": st._num_players,
        "seat": -1 if seat is None else seat,
        "solo": st._solo,
        "first_game_favors": bool(st.game.options["first_game_favors"]),
        "round": r,
        "phase": PHASE_NAMES[st._phase],
        "current_player": st._cur,
        "start_player": st._start,
        "taxus_seat": st._taxus_seat,
        "turn_track": list(st._track),
        "passing_order": list(st._new_track),
        "turn_order": list(st._order),
        "turn_seat": st._turn_seat,
        "exchange_rate": exchange_rate(r) if r else 0,
        "kingdoms": kingdoms,
        "contract_space": workers(spaces[0]),
        "market_space": workers(spaces[1]),
        "fellowship_guild": st._fellowship,
        "fellowship_used": st._fellowship_used,
        "strike_area": workers(st._strike_area),
        "strikes": [WORKERS[t] for t in range(3) if st._strike[t]],
        "bag": workers(st._bag),
        "market": _ids(FLOWER_IDS, st._market),
        "contract_grid": _ids(CONTRACT_IDS, st._contract_grid),
        "flower_deck": len(st._flower_deck),
        "flower_discard": len(st._flower_discard),
        "contract_deck": len(st._contract_deck),
        "contract_discard": len(st._contract_discard),
        "unchosen_contracts": len(st._unchosen),
        "efficiency_supply": sum(st._efficiency_supply.values()),
        "flower_discard_cards": _ids(FLOWER_IDS, st._flower_discard),
        "contract_discard_cards": _ids(CONTRACT_IDS, st._contract_discard),
        "efficiency_discard": list(st._efficiency_discard),
        "favor_pool": len(st._favor_pool),
        "guild_tiles": guilds,
        "players": [_player(st, s, seat) for s in range(st._num_players)],
        "context": _context(st),
        "taxus": _taxus(st),
        "torch_supply": st._torch_supply(),
        "market_redraws": market_redraw_records(st),
    }


def market_redraw_records(st: FlowarStateProtocol) -> list[dict[str, Any]]:
    """The Flower cards put back while filling the Market, in order (public: ``market_redraws``).

    Each record is ``{"round": r, "slot": 1..9, "card": "F46"}`` (Rulebook: "Game Setup", step 5).
    """
    return [{"round": r, "slot": slot + 1, "card": FLOWER_IDS[x]} for r, slot, x in st._redraws]


def market_redraw_count(st: FlowarStateProtocol) -> int:
    """How many Flower cards were put back while filling the Market so far (cheap: the live feed's mark)."""
    return len(st._redraws)


def full_state(st: FlowarStateProtocol) -> dict[str, Any]:
    """Every field of the state, hidden information included (hashes, the referee, tests).

    Field names are the state's attribute names without the leading underscore (or, for an
    attribute renamed since hashes were first recorded, its earlier name: :data:`_HASHED_KEYS`);
    the agenda (pending tasks) is included so that equal hashes mean equal futures.
    Left out, besides the game, the history and caches: the log of the cards put
    back while filling the Market (``market_redraws`` of the observation), a record
    of what the table saw that no rule reads, so that the hashes recorded in
    replays before the observation showed it still match.
    """
    out: dict[str, Any] = {}
    for k, v in fields_of(st).items():
        if k in _NOT_HASHED:
            continue
        if isinstance(v, bytearray):
            v = list(v)
        elif isinstance(v, dict):
            v = sorted(v.items())
        out[_HASHED_KEYS.get(k) or k.lstrip("_")] = v
    return out


_HASHED_KEYS: Final[dict[str, str]] = {
    "_contract_deck": "cdeck",
    "_contract_discard": "cdisc",
    "_contract_grid": "cgrid",
    "_contract_in_deck": "cin",
    "_flower_deck": "fdeck",
    "_flower_discard": "fdisc",
    "_flower_in_deck": "fin",
    "_chance_target": "ct",
    "_delivery_kingdom": "dk",
    "_delivery_contracts": "dsel",
    "_delivery_fresh_only": "dfl",
    "_delivery_owed": "dreq",
    "_delivery_fresh": "dfresh",
    "_delivery_baskets_used": "dused",
    "_exchange_picks": "dx",
    "_favor8_baskets": "dwild",
    "_efficiency": "eff",
    "_efficiency_supply": "eff_supply",
    "_efficiency_discard": "eff_disc",
    "_favor_pool": "fav_pool",
    "_favor_slots": "fav_slots",
    "_favors_dealt": "nfav",
    "_guild_owner": "gowner",
    "_guild_workers": "gworkers",
    "_wither_exempt": "nowither",
    "_fellowship_used": "fellow_used",
    "_turn_placed": "t_placed",
    "_turn_fired": "t_fired",
    "_turn_hired": "t_hired",
    "_turn_favor_used": "t_favor",
    "_turn_favors": "t_mods",
    "_turn_acted": "t_acted",
    "_turn_extra": "t_extra",
    "_turn_loop": "loop",
    "_turn_index": "ti",
    "_turn_seat": "tseat",
    "_taxus_seat": "tx",
    "_taxus_deck": "tx_deck",
    "_taxus_discard": "tx_disc",
    "_taxus_pile": "tx_pile",
    "_taxus_last": "tx_last",
    "_taxus_extra": "tx_extra",
    "_taxus_mp": "tx_mp",
    "_taxus_coins": "tx_coins",
    "_taxus_torches": "tx_torches",
    "_taxus_loans": "tx_loans",
    "_taxus_guild": "tx_guild",
    "_taxus_worker_supply": "tx_workers",
    "_taxus_passed": "tx_passed",
    "_board_used": "board",
    "_num_players": "n",
}
"""State attribute -> its key in :func:`full_state`, for attributes whose key is not their own name: the
key is part of every recorded state hash (replays check them), so a renamed attribute keeps its key."""

_NOT_HASHED: Final = frozenset({"game", "history", "_legal_cache", "_sampled", "_result", "_redraws"})
"""Fields :func:`full_state` leaves out: caches, the game, the history and the Market redraw log."""

_GRID_PHASES: Final = frozenset(PHASE_NAMES.index(p) for p in ("take_line", "take_card"))
