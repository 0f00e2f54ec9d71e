"""Flowar board panel: the flower board's petals, the grids, Guild Tiles, player boards and Taxus.

Built from the observation the view shows (``FlowarObservation``, see
:mod:`games.flowar.observation`) and, with "show all hands" after the match,
every seat's own observation (its dealt and kept Contracts, its MP). Laid out
as on the table (Rulebook: Flowar, "Game Setup", "Main Board"): the round
track with this round's exchange rate; the Travel Petal's three kingdoms (means
of transport and their Coin costs, Efficiency Tile, Kingdom Favor with its
text, Workers placed); the Contract and Market spaces, the Fellowship, the
Strike Area and the strikes, the bag; the 3×3 Flower Market and the 2×2
Contract grid; the Guild Tiles; one player board per seat (Coins, MP —
"always kept facedown", so hidden until the end —, Torches, loans, Workers,
Contracts, fresh and wilting flowers, deliveries); and Taxus, the solo
automaton, as a player with its own area.

Flower cards are shown by colour and Baskets, Contracts by the Baskets they
need, where they are delivered and what they pay, Taxus cards by what they do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.flowar.cards import (
    COLOURS,
    CONTRACT_INDEX,
    CONTRACTS,
    FAVORS,
    FLOWER_INDEX,
    FLOWERS,
    KINGDOMS,
    MEANS,
    TAXUS_CARDS,
    TAXUS_INDEX,
)
from web.viewer import Frame

GUILD_ACTION = {
    "coins": "gain {n} Coins", "take_contract": "take a Contract (+1 Coin)", "return_torch": "return {n} Torch",
    "take_flower": "take a Flower card (+1 Coin)", "mp": "gain {n} MP",
}
"""Guild Tile actions as text (Rulebook: "Guilds")."""

ROUNDS = 4


def flower(card_id: str) -> dict[str, Any]:
    """A Flower card chip: ``{id, colour, baskets, label}``."""
    i = FLOWER_INDEX.get(card_id)
    if i is None:
        return {"id": card_id, "colour": "none", "baskets": 0, "label": card_id or "empty"}
    f = FLOWERS[i]
    colour = COLOURS[f.colour]
    return {"id": f.id, "colour": colour, "baskets": f.baskets,
            "label": f"{colour} ×{f.baskets}" if f.baskets > 1 else colour}


def contract(card_id: str) -> dict[str, Any]:
    """A Contract chip: the Baskets it needs, where it is delivered, its reward."""
    i = CONTRACT_INDEX.get(card_id)
    if i is None:
        return {"id": card_id, "needs": [], "where": "", "reward": "", "label": card_id}
    c = CONTRACTS[i]
    k = KINGDOMS[c.kingdom]
    where = f"{k.name} by {MEANS[c.means].name}" if c.means >= 0 else f"{k.name}, any means"
    reward = f"{c.coins} Coins, {c.mp:+d} MP"
    return {"id": c.id, "needs": [COLOURS[x] for x in c.flowers], "where": where, "reward": reward,
            "label": f"Contract {c.id}"}


def taxus_card(card_id: str) -> dict[str, Any]:
    """A Taxus card chip: what it does (Rulebook: "Taxus Cards")."""
    i = TAXUS_INDEX.get(card_id)
    if i is None:
        return {"id": card_id, "text": card_id}
    t = TAXUS_CARDS[i]
    w = ", ".join(f"{n} {name}" for n, name in zip(t.workers, ("trenti", "human", "fox"), strict=True) if n)
    parts = [t.kind.replace("_", " ")]
    if w:
        parts.append(f"takes {w} from the bag to {t.space.replace('_', ' ')}")
    if t.line:
        parts.append(f"line {t.line}")
    if t.torches:
        parts.append(f"takes {t.torches} Torch{'es' if t.torches != 1 else ''}")
    return {"id": t.id, "text": "; ".join(parts)}


def favor(n: int) -> dict[str, Any] | None:
    """A Kingdom Favor: number and text, or None for 0 (none)."""
    if not 1 <= n <= len(FAVORS):
        return None
    f = FAVORS[n - 1]
    return {"id": f.id, "timing": f.timing, "text": f.text}


def _workers(w: dict[str, int]) -> list[dict[str, Any]]:
    return [{"type": t, "n": int(w.get(key, 0))} for t, key in (("trenti", "trentis"), ("human", "humans"),
                                                                 ("fox", "foxes")) if w.get(key, 0)]


def board_context(frame: Frame, seat_names: Sequence[str], all_hands: bool) -> dict[str, Any]:
    """Template context of the Flowar panel for one frame (see the module docstring)."""
    obs = frame.observation
    views = frame.seat_views if all_hands and frame.seat_views else None
    n = int(obs.get("num_players", len(seat_names)))
    taxus_seat = int(obs.get("taxus_seat", -1))

    def name(s: int) -> str:
        if s == taxus_seat and s >= n:
            return "Taxus"
        return seat_names[s] if 0 <= s < len(seat_names) else f"seat {s + 1}"

    current = int(obs.get("current_player", -1))
    players = []
    for s, p in enumerate(obs.get("players", [])):
        own = views[s]["players"][s] if views is not None and s < len(views) else p
        players.append({
            "seat": s, "name": name(s), "current": s == current or s == obs.get("turn_seat"),
            "coins": p.get("coins", 0), "mp": own.get("mp", -1), "torches": p.get("torches", 0),
            "loans": p.get("loans", 0), "loans_paid": p.get("loans_paid", 0), "guild": p.get("guild", 0),
            "workers": _workers(p.get("workers", {})),
            "contracts": [contract(c) for c in own.get("contracts", [])],
            "hidden_contracts": 0 if own is not p else p.get("hidden_contracts", 0),
            "dealt": [contract(c) for c in own.get("dealt", [])],
            "fresh": [flower(f) for f in p.get("fresh", [])],
            "wilting": [flower(f) for f in p.get("wilting", [])],
            "delivered": [{"kingdom": KINGDOMS[k].name, "n": d} for k, d in enumerate(p.get("delivered", []))],
            "below": sum(p.get("below", [])),
            "below_contracts": [contract(c) for k in p.get("below_contracts", []) for c in k.get("contracts", [])],
            "board_used": p.get("board_used", []), "hired": bool(p.get("hired")), "passed": bool(p.get("passed")),
        })
    tx = obs.get("taxus") or {}
    taxus = None
    if obs.get("solo"):
        taxus = {
            "mp": tx.get("mp", 0), "coins": tx.get("coins", 0), "torches": tx.get("torches", 0),
            "loans": tx.get("loans", 0), "guild": tx.get("guild", 0), "pile": tx.get("pile", 0),
            "deck": tx.get("deck", 0), "passed": bool(tx.get("passed")),
            "last_card": taxus_card(tx["last_card"]) if tx.get("last_card") else None,
            "discard": [taxus_card(c) for c in tx.get("discard", [])], "seat": taxus_seat,
        }
    kingdoms = [
        {
            "id": k["kingdom"], "name": k["name"],
            "means": [{"id": m["means"], "name": m["name"], "cost": m["cost"]} for m in k.get("means", [])],
            "efficiency": k.get("efficiency", 0), "favor": favor(int(k.get("favor", 0))),
            "next_favor": favor(int(k.get("next_favor", 0))), "workers": _workers(k.get("workers", {})),
        }
        for k in obs.get("kingdoms", [])
    ]
    market = [flower(f) if f else None for f in obs.get("market", [])]
    guilds = [
        {"guild": g["guild"], "action": GUILD_ACTION.get(g["action"], g["action"]).format(n=g.get("amount", 0)),
         "price": g.get("flower_price", 0), "workers": _workers(g.get("workers", {})),
         "owner": name(g["owner"]) if g.get("owner", -1) >= 0 else ""}
        for g in obs.get("guild_tiles", [])
    ]
    rnd = int(obs.get("round", 0))
    return {
        "round": rnd,
        "rounds": [{"n": r, "current": r == rnd, "past": r < rnd} for r in range(1, ROUNDS + 1)],
        "exchange_rate": obs.get("exchange_rate", 0),
        "phase": str(obs.get("phase", "")).replace("_", " "),
        "current": current,
        "current_name": name(current) if current >= 0 else None,
        "turn_order": [name(s) for s in obs.get("turn_order", [])],
        "turn_track": [name(s) for s in obs.get("turn_track", [])],
        "kingdoms": kingdoms,
        "contract_space": _workers(obs.get("contract_space", {})),
        "market_space": _workers(obs.get("market_space", {})),
        "fellowship": obs.get("fellowship_guild", 0), "fellowship_used": bool(obs.get("fellowship_used")),
        "strike_area": _workers(obs.get("strike_area", {})),
        "strikes": obs.get("strikes", []),
        "bag": _workers(obs.get("bag", {})),
        "market_rows": [market[i:i + 3] for i in range(0, len(market), 3)],
        "contract_rows": [[contract(c) if c else None for c in obs.get("contract_grid", [])[i:i + 2]]
                          for i in range(0, len(obs.get("contract_grid", [])), 2)],
        "decks": {k: obs.get(k, 0) for k in ("flower_deck", "flower_discard", "contract_deck", "contract_discard",
                                              "unchosen_contracts", "efficiency_supply", "favor_pool",
                                              "torch_supply")},
        "discards": {"flowers": [flower(f) for f in obs.get("flower_discard_cards", [])],
                     "contracts": [contract(c) for c in obs.get("contract_discard_cards", [])]},
        "redraws": [{**flower(r["card"]), "round": r.get("round", 0), "slot": r.get("slot", 0)}
                    for r in obs.get("market_redraws", [])],
        "guilds": guilds,
        "players": players,
        "taxus": taxus,
        "final": frame.terminal,
        "all_hands": all_hands,
    }
