"""An independent, deliberately simple model of Flowar's decision rules (tests only).

Written from the Flowar rulebook and the decisions of
``docs/rules/flowar.md`` — not from ``games/flowar`` — so that a bug in the
engine's legal-action generator is not also in this model. It reads only what a
seat sees: its observation (the public ``FlowarObservation`` dict), the printed
and stand-in component data (``games/flowar/cards.json``, read as plain JSON) and
the actions that seat took since its turn began (the rulebook's "at the
beginning of their turn" depends on them). It answers the set of legal actions
as canonical JSON strings; the engine's are compared with it at every decision.

Modelled decisions: keep_contract, choose_guild, strike, turn (the whole menu:
pass, every placement with its cost, firing, hiring, Loans, Kingdom Favors, end
of turn), take_line, take_card, discard_contract, sell, exchange_mp, spend_mp,
swap_worker, deliver (which Contract next) and basket (paying each Basket:
a flower, an exchange of three, Favor 8's wildcard). Every decision phase of the
game is modelled; ``None`` is returned only for an unknown phase.

Slow on purpose: every "can the seat still place?" question recomputes the
placements from scratch; the Basket question tries every assignment.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

CARDS = json.loads((Path(__file__).resolve().parents[2] / "games" / "flowar" / "cards.json").read_text())
TYPES = ("trenti", "human", "fox")
PLURAL = ("trentis", "humans", "foxes")
COLOURS = ("blue", "white", "green", "purple", "yellow")
FLOWER = {f["id"]: (f["colour"], f["baskets"]) for f in CARDS["flowers"]}
CONTRACT = {c["id"]: c for c in CARDS["contracts"]}
MEANS = {m["id"]: (k["id"], m["cost"]) for k in CARDS["kingdoms"] for m in k["means"]}
KINGDOM_MEANS = {k["id"]: [m["cost"] for m in k["means"]] for k in CARDS["kingdoms"]}
FAVOR = {f["id"]: f for f in CARDS["favors"]}
GUILD = {g["number"]: g for g in CARDS["guilds"]}
LAYOFF = CARDS["layoff"]["table"]
LOAN_COINS, MAX_LOANS, PAYOFF = CARDS["loans"]["coins"], CARDS["loans"]["max_per_player"], CARDS["loans"]["payoff"]
HIRE = 5  # "Pay 5 Coins to take a Worker from the Strike Area"
EXCHANGE_MAX = CARDS["exchange"]["max_mp"]
RATES = CARDS["exchange"]["coins_per_mp"]

# Where each typed Main Board space is and which Workers it takes (Rulebook: "Main Areas").
TYPED = {"contract": "human", "market": "trenti", "travel_K1": "fox", "travel_K2": "fox", "travel_K3": "fox"}
BOARD = ("maintenance", "sell", "payoff", "guild")
LINES = ({"row1": (0, 1), "row2": (2, 3), "col1": (0, 2), "col2": (1, 3)},
         {"row1": (0, 1, 2), "row2": (3, 4, 5), "row3": (6, 7, 8),
          "col1": (0, 3, 6), "col2": (1, 4, 7), "col3": (2, 5, 8)})
PASS_ONLY = (2, 10, 11)  # Favors that only change the passing steps (decision 7)
MENU = {"placement", "layoff", "hire", "payoff", "now"}  # decision 10: timings offered in the turn menu


def key(action: dict[str, Any]) -> str:
    """Canonical text of an action dict."""
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def layoff_coins(fired: Iterable[int], favor2: bool) -> int:
    """Coins for firing (Trentis, Humans, Foxes) (Rulebook: "Firing Workers"; Favor 2's table)."""
    counts = sorted((c for c in fired if c), reverse=True)
    n = sum(counts)
    table = FAVOR[2]["params"]["table"] if favor2 else LAYOFF
    if n == 1:
        name = "1"
    elif n == 2:
        name = "2_same" if len(counts) == 1 else "2_different"
    else:
        name = {1: "3_same", 2: "3_two_types", 3: "3_different"}[len(counts)]
    return int(table[name])


class View:
    """The part of a seat's situation the placement rules read (a small mutable copy)."""

    def __init__(self, obs: dict[str, Any], seat: int, mods: set[int]) -> None:
        me = obs["players"][seat]
        self.obs = obs
        self.coins: int = me["coins"]
        self.workers = [me["workers"][p] for p in PLURAL]
        self.fresh = len(me["fresh"])
        self.wilting = len(me["wilting"])
        self.loans: int = me["loans"]
        self.used = set(me["board_used"])
        self.guild: int = me["guild"]
        self.mods = set(mods)
        self.placed: int = obs["context"]["placed"]
        self.extra: bool = obs["context"]["extra_placement"]
        self.strikes = set(obs["strikes"])  # the types on strike: their Diorama is one more Worker

    def copy(self) -> View:
        other = object.__new__(View)
        other.__dict__.update(self.__dict__)
        other.workers = self.workers[:]
        other.used = set(self.used)
        other.mods = set(self.mods)
        other.strikes = set(self.strikes)
        return other


def occupancy(obs: dict[str, Any], space: str) -> int:
    """Workers on a typed space; with 2 players (and solo) all three kingdoms count ("In a
    two-player game, you should pay for all Workers in the three spaces")."""
    def on(name: str) -> int:
        if name == "contract":
            return sum(obs["contract_space"].values())
        if name == "market":
            return sum(obs["market_space"].values())
        return sum(obs["kingdoms"][int(name[-1]) - 1]["workers"].values())
    if space.startswith("travel") and obs["num_players"] <= 2:
        return sum(on(f"travel_K{k}") for k in (1, 2, 3))
    return on(space)


def placements(v: View) -> list[dict[str, Any]]:
    """Every Worker placement open to the seat now (Rulebook: "Placing a Worker (mandatory)")."""
    obs = v.obs
    out: list[dict[str, Any]] = []
    have = [t for t in range(3) if v.workers[t] > 0]
    if not have:
        return out
    first = v.placed == 0
    if not (first or (v.extra and v.placed == 1)):
        return out
    if first:
        for space, typ in TYPED.items():
            # "pay 1 Coin for each Worker occupying that space, including the one you just placed
            # (plus an additional Coin if that group of Workers is on strike)"; Favor 1: no cost.
            cost = 0 if 1 in v.mods else occupancy(obs, space) + 1 + (typ in v.strikes)
            if space == "market":
                cost += GUILD[v.guild]["flower_price"]  # "you also have to pay for the flowers"
            if cost > v.coins:
                continue
            for t in have:
                # Unqualified Practice takes two Workers of that type; Favor 9 waives it.
                if TYPES[t] == typ or 9 in v.mods or v.workers[t] >= 2:
                    out.append({"kind": "place", "space": space, "worker": TYPES[t], "coins": cost})
    if obs["fellowship_guild"] and not obs["fellowship_used"]:
        cost = 0 if 1 in v.mods else 1  # "you should pay 1 Coin"
        if cost <= v.coins:
            out += [{"kind": "place", "space": "fellowship", "worker": TYPES[t], "coins": cost} for t in have]
    for space in BOARD:
        if space in v.used:
            continue  # "can only be taken once per Round"
        if space != "guild" and not first:
            continue  # Favor 17: the second Worker goes to the Guild or the Fellowship only
        ok = {
            "maintenance": v.fresh > 0,
            "sell": v.fresh + v.wilting > 0,
            "payoff": v.loans > 0 and v.coins >= (FAVOR[7]["params"]["coins"] if 7 in v.mods else PAYOFF),
            "guild": v.guild > 0,
        }[space]
        if ok:
            out += [{"kind": "place", "space": space, "worker": TYPES[t], "coins": 0} for t in have]
    return out


def can_place(v: View) -> bool:
    return v.placed > 0 or bool(placements(v))


def _after(v: View, coins: int = 0, workers: tuple[int, int, int] = (0, 0, 0),
           mods: Iterable[int] = (), fresh: int = 0) -> View:
    w = v.copy()
    w.coins += coins
    w.workers = [w.workers[t] + workers[t] for t in range(3)]
    w.mods |= set(mods)
    w.fresh += fresh
    return w


def can_place_after(v: View, coins: int, workers: tuple[int, int, int], to_area: tuple[int, int, int],
                    favor18: bool) -> bool:
    """Can the seat place after an action that gains ``coins`` and ``workers`` and sends ``to_area``
    Workers to the Strike Area (negative: takes them from it)? Rulebook, "Strikes": "When there are
    3 Workers of the same type in the Strike Area, that group of Workers goes on strike" and each
    player pays 1 Coin per Worker of that type on their Guild Tile or places it in the Strike Area;
    hiring "may result in a strike being called off", Favor 19 "could lead to a strike or call it
    off". Every way the seat may answer the strikes its action calls is tried (and, if ``favor18``,
    Kingdom Favor 18 keeping one type's Workers): the placement is possible if one of them allows
    it (decision 32). Loans are not counted (decision 13)."""
    area = {TYPES[t]: v.obs["strike_area"][PLURAL[t]] + to_area[t] for t in range(3)}
    w = _after(v, coins=coins, workers=workers)
    called = []
    for t in range(3):
        name = TYPES[t]
        if name in w.strikes and area[name] < 3:
            w.strikes.discard(name)
        elif name not in w.strikes and area[name] >= 3 and to_area[t] > 0:
            w.strikes.add(name)
            called.append(t)
    keeps = [range(w.workers[t] + 1) for t in called]
    for keep in itertools.product(*keeps):
        for free in [None] + (called if favor18 else []):
            pay = sum(k for t, k in zip(called, keep, strict=True) if t != free)
            if pay > w.coins:
                continue
            x = w.copy()
            x.coins -= pay
            for t, k in zip(called, keep, strict=True):
                if t != free:
                    x.workers[t] = k
            if can_place(x):
                return True
    return False


def _favor18(obs: dict[str, Any], seat: int, turn: dict[str, Any]) -> bool:
    """Kingdom Favor 18 is usable at a strike the seat calls in its turn (decision 10)."""
    return seat == obs["turn_seat"] and not turn["favor_used"] and bool(favors_here(obs, seat, {"strike"}))


def _swaps(v: View, obs: dict[str, Any]) -> list[tuple[int, int]]:
    area = [obs["strike_area"][p] for p in PLURAL]
    return [(g, t) for g in range(3) for t in range(3) if g != t and v.workers[g] and area[t]]


def _delta(g: int, t: int) -> tuple[int, int, int]:
    # the type: ignore below: tuple() of a generator is tuple[int, ...]; this one has 3 items
    return tuple(-1 if i == g else 1 if i == t else 0 for i in range(3))  # type: ignore[return-value]


def favor_ok(f: int, v: View, obs: dict[str, Any], seat: int, turn: dict[str, Any]) -> bool:
    """Whether menu Favor ``f`` can be used (its effect can matter now; decisions 10 and 13)."""
    me = obs["players"][seat]
    timing = FAVOR[f]["timing"]
    if timing not in MENU:
        return False
    ok = {
        1: v.placed == 0,
        2: turn["can_fire"],
        5: not me["hired"] and not turn["fired"] and sum(obs["strike_area"].values()) > 0,
        7: v.loans > 0 and "payoff" not in v.used and v.placed == 0 and v.coins >= FAVOR[7]["params"]["coins"],
        9: v.placed == 0,
        10: (v.fresh + v.wilting) > 0 and not me["no_wither"],
        11: turn["can_fire"],
        13: v.guild > 0,
        14: obs["fellowship_guild"] > 0,
        15: me["torches"] > 0,
        16: v.loans < MAX_LOANS,
        17: not v.extra and sum(v.workers) >= (2 if v.placed == 0 else 1)
        and ("guild" not in v.used or (obs["fellowship_guild"] > 0 and not obs["fellowship_used"])),
        19: bool(_swaps(v, obs)),
        20: me["mp"] >= 1,
    }.get(f, False)
    if not ok or v.placed > 0 or f in PASS_ONLY:
        return bool(ok)
    # "You still have to place a Worker this turn (this action is mandatory)" (decision 13).
    if f in (1, 9, 7):
        return can_place(_after(v, mods=(f,)))
    if f == 5:
        area = [obs["strike_area"][p] for p in PLURAL]
        return can_place(v) or any(area[t] and can_place_after(v, 0, _delta(-1, t), _delta(t, -1), False)
                                   for t in range(3))
    if f in (13, 14):
        g = GUILD[v.guild if f == 13 else obs["fellowship_guild"]]
        gain = {"coins": g["amount"], "take_contract": 1, "take_flower": 1}.get(g["action"], 0)
        flower = int(g["action"] == "take_flower" and any(obs["market"]))
        after = _after(v, coins=gain, fresh=flower)
        if f == 13:
            after.used.add("guild")  # the round's one Guild action is taken (decision 31)
        return can_place(after)
    if f == 15:
        return can_place(_after(v, coins=FAVOR[15]["params"]["coins_per_torch"] * me["torches"]))
    if f == 16:
        return can_place(_after(v, coins=FAVOR[16]["params"]["coins"]))
    if f == 20:
        rate, top = FAVOR[20]["params"]["coins_per_mp"], FAVOR[20]["params"]["max_mp"]
        return can_place(_after(v, coins=rate * min(top, me["mp"])))
    if f == 19:  # the swap is the turn's Favor: no Favor 18 after it
        return any(can_place_after(v, 0, _delta(g, t), _delta(t, g), False) for g, t in _swaps(v, obs))
    return can_place(v)


def favors_here(obs: dict[str, Any], seat: int, timings: set[str]) -> list[tuple[int, int]]:
    """(kingdom number, Favor) usable by the seat for these timings: a Contract delivered there."""
    me = obs["players"][seat]
    return [(k + 1, kd["favor"]) for k, kd in enumerate(obs["kingdoms"])
            if me["below"][k] > 0 and kd["favor"] and FAVOR[kd["favor"]]["timing"] in timings]


def turn_facts(obs: dict[str, Any], seat: int, taken: list[dict[str, Any]]) -> dict[str, Any]:
    """What the seat did this turn, from its own actions since the turn began."""
    kinds = [a["kind"] for a in taken]
    fired = "fire" in kinds
    hired = "hire" in kinds
    # Every Favor the seat used is in its own turn ("In your turn, you may discard 1 fulfilled
    # Contract"): Favor 18 too, at a strike its own action called (rules revision 2).
    favors = [a["favor"] for a in taken if a["kind"] == "use_favor"]
    begun = any(k in ("place", "fire", "hire") for k in kinds) or any(f not in PASS_ONLY for f in favors)
    me = obs["players"][seat]
    return {"fired": fired, "hired": hired, "favor_used": bool(favors), "begun": begun,
            "can_fire": not fired and not hired and sum(me["workers"].values()) > 0}


def menu(obs: dict[str, Any], seat: int, taken: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn menu (Rulebook: "Round Overview", "Firing or Hiring", "Loans", "Using a Kingdom Favor")."""
    ctx = obs["context"]
    me = obs["players"][seat]
    turn = turn_facts(obs, seat, taken)
    v = View(obs, seat, set(ctx["active_favors"]))
    out: list[dict[str, Any]] = []
    places = placements(v)
    out += places
    w = v.workers
    if turn["can_fire"]:
        for c in itertools.product(range(4), repeat=3):
            if not 1 <= sum(c) <= 3 or any(c[t] > w[t] for t in range(3)):
                continue
            if v.placed == 0:
                if sum(w) - sum(c) < 1:
                    continue  # the placement is mandatory (decision 8)
                gain = layoff_coins(c, 2 in v.mods)
                if not can_place_after(v, gain, (-c[0], -c[1], -c[2]), (c[0], c[1], c[2]), _favor18(obs, seat, turn)):
                    continue
            out.append({"kind": "fire", "trentis": c[0], "humans": c[1], "foxes": c[2]})
    hires = []
    if not me["hired"] and not turn["fired"]:
        cost = 0 if 5 in v.mods else HIRE
        for t in range(3):
            if obs["strike_area"][PLURAL[t]] and v.coins >= cost \
                    and can_place_after(v, -cost, _delta(-1, t), _delta(t, -1), False):
                hires.append({"kind": "hire", "worker": TYPES[t]})
    out += hires
    if v.loans < MAX_LOANS:
        out.append({"kind": "take_loan"})  # "At any time during the game"
    if not turn["favor_used"]:
        for k, f in favors_here(obs, seat, MENU):
            if favor_ok(f, v, obs, seat, turn):
                out.append({"kind": "use_favor", "kingdom": k, "favor": f})
    if v.placed:
        out.append({"kind": "end_turn"})
    # "they must pass at the beginning of their turn"; unable to place -> pass (decisions 7, 13).
    if not turn["begun"] or (v.placed == 0 and not places and not (5 in v.mods and hires)):
        out.append({"kind": "pass"})
    return out


def _classes(cards: list[str]) -> list[str]:
    """One card per (colour, Baskets) class, the lowest id (decision 27)."""
    best: dict[tuple[str, int], str] = {}
    for c in cards:
        k = FLOWER[c]
        if k not in best or c < best[k]:
            best[k] = c
    return sorted(best.values())


@cache
def payable(baskets: tuple[int, ...], need: tuple[int, ...], extra: int = 0, wild: int = 0) -> bool:
    """Can Baskets (per colour) pay ``need`` (per colour) plus ``extra`` Baskets of any colour,
    with ``wild`` free Baskets of a choice (Favor 8), three any Baskets buying one of a choice
    ("Any combination of three Flower Baskets can be exchanged for a Flower Basket of your
    choice")? Tries every way (slow; independent of the engine's closed formula)."""
    if min(baskets) < 0:
        return False
    if extra:
        return any(baskets[x] and payable(_minus(baskets, (x,)), need, extra - 1, wild) for x in range(5))
    if not any(need):
        return True
    c = next(i for i in range(5) if need[i])
    rest = _minus(need, (c,))
    if wild and payable(baskets, rest, 0, wild - 1):
        return True
    if baskets[c] and payable(_minus(baskets, (c,)), rest, 0, wild):
        return True
    return any(payable(_minus(baskets, combo), rest, 0, wild)
               for combo in itertools.combinations_with_replacement(range(5), 3))


def _minus(counts: tuple[int, ...], taken: tuple[int, ...]) -> tuple[int, ...]:
    out = list(counts)
    for x in taken:
        out[x] -= 1
    return tuple(out)


def transport(contracts: list[str], kingdom: str) -> int:
    """Coins of transport for these Contracts in ``kingdom`` ("pay for transportation costs once
    ... that require the same means"; a kingdom's Contract "can use any of its means")."""
    means = {CONTRACT[c]["means"] for c in contracts if "means" in CONTRACT[c]}
    if means:
        return sum(MEANS[m][1] for m in means)
    return min(KINGDOM_MEANS[kingdom]) if contracts else 0


def _remaining(me: dict[str, Any], used: list[str]) -> tuple[dict[str, int], tuple[int, ...]]:
    """Baskets left per Flower card and per colour in this delivery."""
    left = {c: FLOWER[c][1] for c in me["fresh"] + me["wilting"]}
    for c in used:
        left[c] -= 1
    pool = [0] * 5
    for c, n in left.items():
        pool[COLOURS.index(FLOWER[c][0])] += n
    return left, tuple(pool)


def _need(flowers: Iterable[str]) -> tuple[int, ...]:
    need = [0] * 5
    for f in flowers:
        need[COLOURS.index(f)] += 1
    return tuple(need)


def delivery(obs: dict[str, Any], seat: int, taken: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Choose the next Contract to fulfil here, or stop (Rulebook: "Travel Petal"; decision 16:
    transport is paid when a Contract is chosen; at most 4 Contracts; each chosen Contract is
    paid in full before the next)."""
    ctx = obs["context"]
    me = obs["players"][seat]
    kid = ctx["kingdom"]
    chosen = ctx["delivering"]
    _, pool = _remaining(me, ctx["used_baskets"])
    out: list[dict[str, Any]] = []
    if len(chosen) < 4:
        for cid in me["contracts"]:
            card = CONTRACT[cid]
            if cid in chosen or card.get("kingdom", MEANS.get(card.get("means", ""), ("",))[0]) != kid:
                continue
            cost = 0 if 4 in ctx["active_favors"] else transport(chosen + [cid], kid) - transport(chosen, kid)
            if cost <= me["coins"] and payable(pool, _need(card["flowers"]), 0, ctx["wildcards"]):
                out.append({"kind": "deliver", "card": cid})
    out.append({"kind": "finish_delivery"})
    if me["loans"] < MAX_LOANS:
        out.append({"kind": "take_loan"})
    if not chosen and not turn_facts(obs, seat, taken)["favor_used"]:
        out += [{"kind": "use_favor", "kingdom": k, "favor": f} for k, f in favors_here(obs, seat, {"delivery"})]
    return out


def baskets(obs: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """Pay the next Basket owed: a Basket of that colour, three any Baskets (an exchange, then
    three picks), or Favor 8's Contract; only choices after which the rest stays payable."""
    ctx = obs["context"]
    me = obs["players"][seat]
    left, pool = _remaining(me, ctx["used_baskets"])
    owed = [COLOURS.index(c) for c in ctx["owed"]]
    rest = _need(COLOURS[c] for c in owed[1:])
    picks, wild = ctx["exchange_picks"], ctx["wildcards"]
    out: list[dict[str, Any]] = []
    for area in (me["fresh"], me["wilting"]):
        best: dict[tuple[str, int, int], str] = {}
        for c in area:
            k = (*FLOWER[c], left[c])
            if left[c] > 0 and (k not in best or c < best[k]):
                best[k] = c
        for (colour, _b, _l), c in sorted(best.items(), key=lambda kv: kv[1]):
            col = COLOURS.index(colour)
            if picks == 0 and col != owed[0]:
                continue
            after = _minus(pool, (col,))
            if payable(after, rest, max(picks - 1, 0), wild):
                out.append({"kind": "basket", "card": c})
    if picks == 0:
        if payable(pool, rest, 3, wild):
            out.append({"kind": "exchange"})
        if wild and payable(pool, rest, 0, wild - 1):
            out.append({"kind": "wildcard"})
    return out


def legal(obs: dict[str, Any], seat: int, taken: list[dict[str, Any]]) -> set[str] | None:
    """The legal actions of ``seat`` (canonical JSON), or None for a decision not modelled."""
    phase = obs["phase"]
    me = obs["players"][seat]
    ctx = obs["context"]
    out: list[dict[str, Any]]
    if phase == "keep_contract":
        out = [{"kind": "keep_contract", "card": c} for c in me["dealt"]]
    elif phase == "choose_guild":
        out = [{"kind": "choose_guild", "guild": g["guild"]} for g in obs["guild_tiles"] if g["owner"] < 0]
    elif phase == "strike":
        k = me["workers"][PLURAL[TYPES.index(ctx["strike_worker"])]]
        out = [{"kind": "pay_strike", "count": j} for j in range(min(k, me["coins"]) + 1)]
        if me["loans"] < MAX_LOANS:
            out.append({"kind": "take_loan"})
        # "In your turn, you may discard 1 fulfilled Contract ... to activate the Kingdom Favor"
        # ("Kingdom Favors"): Favor 18 at a strike called in the seat's own turn only
        if seat == obs["turn_seat"] and not turn_facts(obs, seat, taken)["favor_used"]:
            out += [{"kind": "use_favor", "kingdom": k, "favor": f} for k, f in favors_here(obs, seat, {"strike"})]
    elif phase == "turn":
        out = menu(obs, seat, taken)
    elif phase == "take_line":
        grid = obs["contract_grid"] if ctx["grid"] == "contract" else obs["market"]
        out = [{"kind": "take_line", "line": name}
               for name, slots in LINES[ctx["grid"] == "market"].items() if any(grid[i] for i in slots)]
        if not turn_facts(obs, seat, taken)["favor_used"]:
            out += [{"kind": "use_favor", "kingdom": k, "favor": f} for k, f in favors_here(obs, seat, {"acquire"})]
    elif phase == "take_card":
        grid = obs["contract_grid"] if ctx["grid"] == "contract" else obs["market"]
        out = [{"kind": "take_card", "slot": i + 1, "card": c} for i, c in enumerate(grid) if c]
    elif phase == "discard_contract":
        out = [{"kind": "discard_contract", "card": c} for c in me["contracts"]]
    elif phase == "sell":
        out = [{"kind": "sell", "card": c} for c in _classes(me["fresh"]) + _classes(me["wilting"])]
        out.append({"kind": "finish_selling"})
        if not turn_facts(obs, seat, taken)["favor_used"] and ctx["sold"] == 0:
            out += [{"kind": "use_favor", "kingdom": k, "favor": f} for k, f in favors_here(obs, seat, {"sell"})]
    elif phase == "exchange_mp":
        rate = RATES[obs["round"] - 1]
        out = [{"kind": "exchange_mp", "mp": m} for m in range(min(EXCHANGE_MAX, me["coins"] // rate) + 1)]
    elif phase == "spend_mp":
        v = View(obs, seat, set(ctx["active_favors"]))
        out = [{"kind": "spend_mp", "mp": m} for m in range(1, min(3, me["mp"]) + 1)
               if can_place(_after(v, coins=FAVOR[20]["params"]["coins_per_mp"] * m))]
    elif phase == "swap_worker":
        v = View(obs, seat, set(ctx["active_favors"]))
        out = [{"kind": "swap_worker", "give": TYPES[g], "take": TYPES[t]} for g, t in _swaps(v, obs)
               if can_place_after(v, 0, _delta(g, t), _delta(t, g), False)]
    elif phase == "deliver":
        out = delivery(obs, seat, taken)
    elif phase == "basket":
        out = baskets(obs, seat)
    else:
        return None
    return {key(a) for a in out}


def perft(state: Any, depth: int) -> int:
    """Leaf count ``depth`` plies below ``state`` where every modelled decision's branching
    comes from this model (chance nodes and unmodelled decisions: the engine's outcomes)."""
    if depth == 0 or state.is_terminal():
        return 1
    if state.is_chance_node():
        branches = state.legal_actions()
    else:
        seat = state.current_player()
        got = legal(state.observation(seat), seat, taken_this_turn(state, seat))
        branches = state.legal_actions()
        if got is not None:
            by_key = {key(a.to_json()): a for a in branches}
            branches = [by_key.get(k) or state.game.action_from_json(json.loads(k)) for k in sorted(got)]
    if depth == 1:
        return len(branches)
    total = 0
    for a in branches:
        child = state.clone()
        child.apply_action(a)
        total += perft(child, depth - 1)
    return total


def taken_this_turn(state: Any, seat: int) -> list[dict[str, Any]]:
    """The seat's own actions since its turn began, read from the public history."""
    out: list[dict[str, Any]] = []
    for player, action in reversed(state.history):
        j = action.to_json()
        if player == seat and j["kind"] in ("end_turn", "pass"):
            break
        if player == seat:
            out.append(j)
        if player not in (seat, -1) and obs_turn_boundary(j):
            break
    return list(reversed(out))


def obs_turn_boundary(action: dict[str, Any]) -> bool:
    """Another seat's end of turn or pass ends the search (it was not the seat's turn then)."""
    return action["kind"] in ("end_turn", "pass")
