"""Greedy Flowar strategy: the action with the best estimated immediate value, in MP.

Uses visible information only: the seat's observation dict
(``FlowarObservation``), the legal actions' JSON and the public component data
(:mod:`games.flowar.cards`). Values are rough MP equivalents:

* a Coin is worth :data:`COIN` MP (the Coin→MP rates run 5:1 to 2:1, and Coins
  also buy actions);
* a Torch costs its marginal step on the Torch table, plus the lost +3 bonus
  for the first one; an unpaid Loan costs 3 MP;
* a Contract is worth what delivering it pays (Efficiency Tile, its Coins and
  MP, the fresh bonus) minus transport; held Contracts count fully when the
  seat's Baskets can pay them (3-for-1 exchanges included, at a cost), else at a
  discount less 1.2 MP per Basket still missing (:meth:`Evaluator.plan_value`);
* a Market line or a Contract line is worth how much it raises that plan.

Turn menu: place the Worker where the estimate is highest (a delivery, a
Contract line, a Market line, a Guild action, selling, paying off a Loan...),
pass when nothing is worth a Worker, end the turn once placed. Sub-decisions
(which Contracts to deliver, which Baskets pay them, strikes, exchanges) follow
the same estimates. Ties go to the first action in the referee's order, so the
choice is deterministic.
"""

from __future__ import annotations

from typing import Any

from bots.strategies.choice import first_best, forced
from games.flowar.cards import (
    COLOUR_INDEX,
    CONTRACT_INDEX,
    CONTRACTS,
    FLOWER_BASKETS,
    FLOWER_COLOUR,
    FLOWER_INDEX,
    GUILDS,
    KINGDOM_INDEX,
    MEANS_COST,
    WORKER_INDEX,
    layoff_coins,
    torch_penalty,
)
from games.flowar.delivery import feasible
from games.flowar.turn import LINE_SLOTS

__all__ = ["greedy_choice", "Evaluator"]

COIN = 0.35
"""MP value of one Coin."""
EXCHANGE_COST = 1.2
"""MP value of the two extra Baskets a 3-for-1 exchange spends."""
DISCARD_FAVOR_COST = 0.6
"""MP value of a fulfilled Contract below the board (tie-break, Achievements)."""
SPACE_TYPE = {"contract": 1, "market": 0, "travel_K1": 2, "travel_K2": 2, "travel_K3": 2}
W_KEYS = ("trentis", "humans", "foxes")


class Evaluator:
    """Estimates of one seat, from its observation.

    Args:
        obs: the seat's ``FlowarObservation`` dict.
        seat: the deciding seat.
    """

    def __init__(self, obs: dict[str, Any], seat: int) -> None:
        self.obs = obs
        self.seat = seat
        me = obs["players"][seat]
        self.me = me
        self.coins = int(me["coins"])
        self.round = max(1, int(obs["round"]))
        self.workers = [int(me["workers"][k]) for k in W_KEYS]
        self.contracts = [CONTRACT_INDEX[c] for c in me["contracts"]]
        ctx = obs["context"]
        used: dict[int, int] = {}
        for f in ctx["used_baskets"]:
            used[FLOWER_INDEX[f]] = used.get(FLOWER_INDEX[f], 0) + 1
        self.used = used
        self.fresh = [FLOWER_INDEX[f] for f in me["fresh"]]
        self.wilt = [FLOWER_INDEX[f] for f in me["wilting"]]
        self.pool = [0] * 5
        self.fresh_pool = [0] * 5
        for x in self.fresh + self.wilt:
            left = FLOWER_BASKETS[x] - used.get(x, 0)
            self.pool[FLOWER_COLOUR[x]] += left
            if x in self.fresh:
                self.fresh_pool[FLOWER_COLOUR[x]] += left
        self.need = [0] * 5
        for c in self.contracts:
            for col in CONTRACTS[c].flowers:
                self.need[col] += 1
        self.eff = [int(k["efficiency"]) for k in obs["kingdoms"]]
        self.torches = int(me["torches"])
        self._plans: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}
        self._delivers: dict[int, float] = {}
        self._potentials: dict[int, float] = {}

    # -- basic values ---------------------------------------------------------------------------
    def torch_cost(self, n: int = 1) -> float:
        """MP lost by taking ``n`` more Torches."""
        t = self.torches
        cost = torch_penalty(t + n) - torch_penalty(t)
        return cost + (3.0 if t == 0 else 0.0)

    def missing(self, c: int, pool: list[int] | None = None) -> int:
        """Baskets of Contract ``c`` the seat cannot pay from its flowers now."""
        pool = self.pool if pool is None else pool
        return sum(max(0, n - pool[col]) for col, n in enumerate(CONTRACTS[c].need))

    def payable(self, pool: list[int], contracts: list[int]) -> tuple[float, list[int]]:
        """Contracts the Baskets ``pool`` can pay one after another (best first), and their value."""
        pool = pool[:]
        chosen: list[int] = []
        value = 0.0
        for c in sorted(contracts, key=lambda c: -self.deliver_value(c)):
            need = list(CONTRACTS[c].need)
            if not feasible(pool, need):
                continue
            chosen.append(c)
            short = sum(max(0, n - pool[col]) for col, n in enumerate(need))
            value += self.deliver_value(c) - EXCHANGE_COST * short
            self._consume(pool, need)
        return value, chosen

    def plan_value(self, pool: list[int], contracts: list[int]) -> float:
        """Value of holding ``contracts`` with Baskets ``pool``: payable ones count most (memoized: the
        estimates are fixed once the Evaluator is built, and the strategy asks the same plans many times)."""
        key = (tuple(pool), tuple(contracts))
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        value, chosen = self.payable(pool, contracts)
        rest = [c for c in contracts if c not in chosen]
        late = {1: 0.8, 2: 0.7, 3: 0.5, 4: 0.0}[self.round]
        out = (0.85 if self.round < 4 else 0.5) * value + late * sum(max(0.0, self.potential(c)) for c in rest) * 0.5
        self._plans[key] = out
        return out

    def deliver_value(self, c: int, eff: int | None = None) -> float:
        """Value of delivering Contract ``c`` now (transport excluded)."""
        if eff is None and c in self._delivers:
            return self._delivers[c]
        con = CONTRACTS[c]
        tile = self.eff[con.kingdom] if eff is None else eff
        fresh = 1.0 if all(self.fresh_pool[col] >= n for col, n in enumerate(con.need)) else 0.0
        value = tile + con.mp + COIN * con.coins + fresh
        if eff is None:
            self._delivers[c] = value
        return value

    def potential(self, c: int) -> float:
        """Value of holding Contract ``c`` (to deliver later)."""
        cached = self._potentials.get(c)
        if cached is not None:
            return cached
        con = CONTRACTS[c]
        transport = MEANS_COST[con.means] if con.means >= 0 else MEANS_COST[2 * con.kingdom]
        tile = self.eff[con.kingdom] if self.round == 4 else 4
        late = {1: 1.0, 2: 0.9, 3: 0.7, 4: 0.35}[self.round]
        value = late * (tile + con.mp + COIN * (con.coins - transport - 2)) - 1.2 * self.missing(c)
        self._potentials[c] = value
        return value

    def guild_value(self, g: int) -> float:
        """Value of taking Guild Tile ``g``'s action."""
        guild = GUILDS[g - 1]
        if guild.action == "coins":
            return COIN * guild.amount
        if guild.action == "mp":
            return float(guild.amount)
        if guild.action == "return_torch":
            return self.torch_cost_back()
        if guild.action == "take_contract":
            grid = [CONTRACT_INDEX[c] for c in self.obs["contract_grid"] if c]
            return COIN + max((self.gain_contracts([c]) for c in grid), default=0.0)
        grid = [FLOWER_INDEX[f] for f in self.obs["market"] if f]
        return COIN + max((self.gain_flowers([x]) for x in grid), default=0.0)

    def spend(self, coins: int) -> float:
        """MP cost of spending ``coins`` now (dearer when few Coins would be left)."""
        left = self.coins - coins
        return COIN * coins + 0.25 * max(0, 3 - left) - 0.25 * max(0, 3 - self.coins)

    def torch_cost_back(self) -> float:
        if self.torches == 0:
            return 0.0
        t = self.torches
        return torch_penalty(t) - torch_penalty(t - 1) + (3.0 if t == 1 else 0.0)

    # -- deliveries --------------------------------------------------------------------------------
    def plan(self, kingdom: int, coins: int) -> tuple[float, list[int]]:
        """Greedy delivery plan in ``kingdom``: (value net of transport, Contracts)."""
        chosen: list[int] = []
        pool = self.pool[:]
        means: set[int] = set()
        spent = 0
        value = 0.0
        cands = sorted((c for c in self.contracts if CONTRACTS[c].kingdom == kingdom),
                       key=lambda c: -self.deliver_value(c))
        for c in cands:
            if len(chosen) == 4:
                break
            con = CONTRACTS[c]
            if not feasible(pool, list(con.need)):
                continue
            new = set(means)
            if con.means >= 0:
                new.add(con.means)
            cost = sum(MEANS_COST[m] for m in new) if new else MEANS_COST[2 * kingdom]
            inc = cost - (sum(MEANS_COST[m] for m in means) if means else (MEANS_COST[2 * kingdom] if chosen else 0))
            if spent + inc > coins:
                continue
            short = sum(max(0, n - pool[col]) for col, n in enumerate(con.need))
            gain = self.deliver_value(c) - COIN * inc - EXCHANGE_COST * short
            if gain <= 0:
                continue
            spent += inc
            means = new
            value += gain
            chosen.append(c)
            self._consume(pool, con.need)
        return value, chosen

    @staticmethod
    def _consume(pool: list[int], need: tuple[int, ...] | list[int]) -> None:
        """Take ``need`` out of ``pool``: matching Baskets first, then 3 per missing one."""
        short = 0
        for col in range(5):
            used = min(pool[col], need[col])
            pool[col] -= used
            short += need[col] - used
        for _ in range(3 * short):
            col = max(range(5), key=lambda i: pool[i])
            pool[col] -= 1

    # -- one legal action ------------------------------------------------------------------------
    def place_value(self, a: dict[str, Any]) -> float:
        space, coins = a["space"], int(a["coins"])
        w = WORKER_INDEX[a["worker"]]
        unqualified = space in SPACE_TYPE and SPACE_TYPE[space] != w
        penalty = 1.5 if unqualified else 0.0
        left = self.coins - coins
        if space.startswith("travel_"):
            value, chosen = self.plan(KINGDOM_INDEX[space[-2:]], left)
            return value - self.spend(coins) - penalty if chosen else -9.0
        if space == "contract":
            grid = [CONTRACT_INDEX[c] if c else -1 for c in self.obs["contract_grid"]]
            best = max(self.gain_contracts([grid[i] for i in ln if grid[i] >= 0]) for ln in LINE_SLOTS[0].values())
            return best - self.spend(coins) - penalty
        if space == "market":
            grid = [FLOWER_INDEX[f] if f else -1 for f in self.obs["market"]]
            best = max(self.line_flowers(grid, ln) for ln in LINE_SLOTS[1].values())
            return best - self.spend(coins) - penalty
        if space == "fellowship":
            return self.guild_value(int(self.obs["fellowship_guild"])) - self.spend(coins)
        if space == "guild":
            return self.guild_value(int(self.me["guild"]))
        if space == "maintenance":
            if self.round == 4:
                return 0.05
            return 0.5 * sum(min(self.need[c], self.fresh_pool[c]) for c in range(5)) + 0.05
        if space == "sell":
            spare = self.spare_baskets()
            return COIN * spare if spare else -1.0
        if space == "payoff":
            return 3.0 - COIN * 8 + (0.5 if self.round >= 3 else 0.0)
        return 0.0

    def line_flowers(self, grid: list[int], line: tuple[int, ...]) -> float:
        """Value of taking the Flower cards of ``line``: growth of the payable plan."""
        cards = [grid[i] for i in line if grid[i] >= 0]
        return self.gain_flowers(cards)

    def gain_flowers(self, cards: list[int]) -> float:
        pool = self.pool[:]
        for x in cards:
            pool[FLOWER_COLOUR[x]] += FLOWER_BASKETS[x]
        before = self.plan_value(self.pool, self.contracts)
        after = self.plan_value(pool, self.contracts)
        return after - before + 0.1 * sum(FLOWER_BASKETS[x] for x in cards)

    def gain_contracts(self, cards: list[int]) -> float:
        """Value of adding Contracts ``cards`` (the worst held ones dropped beyond 4)."""
        held = self.contracts + cards
        if len(held) > 4:
            held = sorted(held, key=lambda c: -self.potential(c))[:4]
        return self.plan_value(self.pool, held) - self.plan_value(self.pool, self.contracts)

    def spare_baskets(self) -> int:
        spare = 0
        for col in range(5):
            spare += max(0, self.pool[col] - self.need[col])
        return spare if self.round >= 3 or not self.contracts else spare // 2

    def menu_value(self, a: dict[str, Any]) -> float:
        kind = a["kind"]
        if kind == "place":
            return self.place_value(a)
        if kind == "end_turn":
            return 0.0
        if kind == "pass":
            return 0.01
        if kind == "hire":
            area = self.obs["strike_area"][W_KEYS[WORKER_INDEX[a["worker"]]]]
            calls_off = a["worker"] in self.obs["strikes"] and area == 3
            return 1.0 - COIN * 5 + (self.torch_cost_back() if calls_off else 0.0)
        if kind == "fire":
            n = a["trentis"] + a["humans"] + a["foxes"]
            return float(COIN * layoff_coins((a["trentis"], a["humans"], a["foxes"])) - self.torch_cost(n) - 1.0 * n)
        if kind == "use_favor":
            return self.favor_value(int(a["favor"])) - DISCARD_FAVOR_COST
        return -5.0  # loans in the menu

    def favor_value(self, favor: int) -> float:
        if favor == 15:
            return COIN * 2 * self.torches
        if favor == 13:
            return self.guild_value(int(self.me["guild"]))
        if favor == 14 and self.obs["fellowship_guild"]:
            return self.guild_value(int(self.obs["fellowship_guild"]))
        return -1.0


def _turn(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    values = [ev.menu_value(a) for a in legal]
    i = first_best(values)
    kinds = [a["kind"] for a in legal]
    if kinds[i] == "pass" and "place" in kinds:
        # Pass only when no placement is worth its Worker.
        places = [v for v, k in zip(values, kinds, strict=True) if k == "place"]
        if max(places) > -0.5:
            i = max((j for j, k in enumerate(kinds) if k == "place"), key=lambda j: (values[j], -j))
    return i


def _deliver(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    k = KINGDOM_INDEX[ev.obs["context"]["kingdom"]]
    delivering = [CONTRACT_INDEX[c] for c in ev.obs["context"]["delivering"]]
    values: list[float] = []
    deliverable = [a for a in legal if a["kind"] == "deliver"]
    for a in legal:
        kind = a["kind"]
        if kind == "deliver":
            c = CONTRACT_INDEX[a["card"]]
            con = CONTRACTS[c]
            means = {CONTRACTS[x].means for x in delivering if CONTRACTS[x].means >= 0}
            if con.means >= 0 and con.means not in means:
                inc = MEANS_COST[con.means] - (MEANS_COST[2 * k] if delivering and not means else 0)
            elif con.means < 0 and not delivering:
                inc = MEANS_COST[2 * k]
            else:
                inc = 0
            values.append(ev.deliver_value(c) - COIN * max(0, inc))
        elif kind == "finish_delivery":
            values.append(0.0)
        elif kind == "use_favor":
            favor = int(a["favor"])
            n = len(deliverable)
            gain = {6: 2.0 * n, 4: COIN * 3 * min(n, 2)}.get(favor, -1.0)
            values.append(gain - DISCARD_FAVOR_COST - 0.5)
        else:  # take_loan: worth it when a valuable Contract is blocked only by transport
            blocked = [c for c in ev.contracts if CONTRACTS[c].kingdom == k and c not in delivering
                       and not any(a2.get("card") == CONTRACTS[c].id for a2 in deliverable)
                       and feasible(ev.pool, list(CONTRACTS[c].need))]
            best = max((ev.deliver_value(c) for c in blocked), default=0.0)
            loan_cost = 3.0 + ev.torch_cost() - COIN * 5
            values.append(best - loan_cost - 1.0 if best and ev.me["loans"] < 2 else -5.0)
    return first_best(values)


def _basket(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    owed = [COLOUR_INDEX[c] for c in ev.obs["context"]["owed"]]
    picks = int(ev.obs["context"]["exchange_picks"])
    fresh_ok = all(ev.fresh_pool[col] >= owed.count(col) for col in set(owed))
    values = []
    for a in legal:
        kind = a["kind"]
        if kind == "wildcard":
            values.append(0.5)
        elif kind == "exchange":
            values.append(-3.0)
        else:
            x = FLOWER_INDEX[a["card"]]
            is_fresh = x in ev.fresh
            half = ev.used.get(x, 0) > 0
            v = 1.0 if half else (0.6 if FLOWER_BASKETS[x] == 1 else 0.3)
            if picks:
                col = FLOWER_COLOUR[x]
                v += 1.0 if ev.pool[col] > ev.need[col] else 0.0
                v += 0.0 if is_fresh else 0.5
            else:
                v += (1.0 if is_fresh else 0.0) if fresh_ok else (0.0 if is_fresh else 1.0)
            values.append(v)
    return first_best(values)


def _line(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    grid_name = ev.obs["context"]["grid"]
    values = []
    for a in legal:
        if a["kind"] == "use_favor":
            values.append(-1.0)
            continue
        if grid_name == "market":
            grid = [FLOWER_INDEX[f] if f else -1 for f in ev.obs["market"]]
            values.append(ev.line_flowers(grid, LINE_SLOTS[1][a["line"]]))
        else:
            grid = [CONTRACT_INDEX[c] if c else -1 for c in ev.obs["contract_grid"]]
            values.append(ev.gain_contracts([grid[i] for i in LINE_SLOTS[0][a["line"]] if grid[i] >= 0]))
    return first_best(values)


def _card(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    if ev.obs["context"]["grid"] == "market":
        return first_best([ev.gain_flowers([FLOWER_INDEX[a["card"]]]) for a in legal])
    return first_best([ev.gain_contracts([CONTRACT_INDEX[a["card"]]]) for a in legal])


def _sell(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    values = []
    for a in legal:
        if a["kind"] == "sell":
            x = FLOWER_INDEX[a["card"]]
            col = FLOWER_COLOUR[x]
            spare = ev.pool[col] - ev.need[col]
            values.append(COIN * FLOWER_BASKETS[x] - (0.0 if spare >= FLOWER_BASKETS[x] else 1.5))
        elif a["kind"] == "use_favor":
            values.append(COIN * ev.spare_baskets() - DISCARD_FAVOR_COST)
        else:
            values.append(0.0)
    return first_best(values)


def _exchange(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    rate = int(ev.obs["exchange_rate"])
    reserve = {1: 25, 2: 18, 3: 8}.get(ev.round, 0)
    want = max(0, (ev.coins - reserve) // max(rate, 1))
    return first_best([-abs(int(a["mp"]) - want) for a in legal])


def _guild(ev: Evaluator, legal: list[dict[str, Any]]) -> int:
    tiles = {t["guild"]: t for t in ev.obs["guild_tiles"]}
    values = []
    wants = (0.7 + 0.2 * any(ev.need[c] > ev.pool[c] for c in range(5)), 0.8 + 0.3 * (len(ev.contracts) < 2), 1.2)
    for a in legal:
        tile = tiles[a["guild"]]
        w = tile["workers"]
        v = sum(wants[i] * int(w[k]) for i, k in enumerate(W_KEYS))
        v += ev.guild_value(int(a["guild"])) - 0.1 * int(tile["flower_price"])
        values.append(v)
    return first_best(values)


def greedy_choice(observation: dict[str, Any], legal_actions: list[dict[str, Any]], seat: int) -> int:
    """Index of the legal action with the best estimated value for ``seat``.

    Args:
        observation: the seat's observation (``FlowarObservation`` dict).
        legal_actions: the legal actions' JSON dicts, in the referee's order.
        seat: the deciding seat.

    Returns:
        An index into ``legal_actions``; the first of equally good actions.

    Raises:
        ValueError: ``legal_actions`` is empty.
    """
    only = forced(legal_actions)
    if only is not None:
        return only
    ev = Evaluator(observation, seat)
    phase = observation["phase"]
    if phase == "turn":
        return _turn(ev, legal_actions)
    if phase == "deliver":
        return _deliver(ev, legal_actions)
    if phase == "basket":
        return _basket(ev, legal_actions)
    if phase == "take_line":
        return _line(ev, legal_actions)
    if phase == "take_card":
        return _card(ev, legal_actions)
    if phase == "sell":
        return _sell(ev, legal_actions)
    if phase == "exchange_mp":
        return _exchange(ev, legal_actions)
    if phase == "choose_guild":
        return _guild(ev, legal_actions)
    if phase == "keep_contract":
        return first_best([ev.potential(CONTRACT_INDEX[a["card"]]) for a in legal_actions])
    if phase == "discard_contract":
        return first_best([-ev.potential(CONTRACT_INDEX[a["card"]]) for a in legal_actions])
    if phase == "strike":
        return first_best([float(a["count"]) if a["kind"] == "pay_strike" else -1.0 for a in legal_actions])
    return 0  # spend_mp, swap_worker: the first option
