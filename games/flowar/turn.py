"""A Flowar turn: the menu, Worker placement, board actions, firing and hiring.

Rulebook: Flowar, "Round Overview", "Placing a Worker (mandatory)",
"Unqualified Practice", "Contract Petal", "Market Petal", "Fellowship Petal",
"Action Spaces of the Player Board", "Firing or Hiring Workers (optional)",
"Using a Kingdom Favor", "Loans", "Guilds".

The turn is a *menu* (phase ``turn``) the seat returns to after each thing it
does: pass (only at the beginning), place a Worker (exactly once; twice with
Kingdom Favor 17), fire or hire (not both), take a Loan, use a Kingdom Favor
(once), and end the turn once a Worker is placed. A placement with a
follow-up choice (a grid line, cards, a delivery, sales) pushes those small
decisions before the menu comes back.

Mixed into :class:`games.flowar.state.FlowarState`; it reads and writes that
class's fields.
"""

from __future__ import annotations

from typing import Any, Final, cast

from mypy_extensions import trait

from games.api import Action
from games.flowar import actions as A
from games.flowar import favors as F
from games.flowar import placement as P
from games.flowar.cards import (
    CONTRACT_IDS,
    CONTRACT_INDEX,
    FAVORS,
    FLOWER_BASKETS,
    FLOWER_COLOUR,
    FLOWER_IDS,
    FLOWER_INDEX,
    FOX,
    GUILDS,
    HIRE_COINS,
    HUMAN,
    LAYOFF_TABLE,
    LAYOFF_TABLE_FAVOR2,
    LOAN_COINS,
    MAX_LOANS,
    PAYOFF_COINS,
    TRENTI,
    WORKER_INDEX,
    WORKERS,
    layoff_coins,
)
from games.flowar.flags import (
    FAVOR_ANY_WORKER,
    FAVOR_CHEAP_PAYOFF,
    FAVOR_DOUBLE_SALE,
    FAVOR_FREE_HIRE,
    FAVOR_FREE_PLACEMENT,
    FAVOR_LAYOFF_TABLE,
    GUILD_SPACE,
    MAINTENANCE_SPACE,
    PAYOFF_SPACE,
    SELL_SPACE,
)
from games.flowar.phases import D_DISCARD, D_LINE, D_PICK, D_SELL, D_SPEND, D_STRIKE, D_SWAP, D_TURN, LOOPS
from games.flowar.state_protocol import FlowarStateProtocol

SPACE_TYPE: Final[tuple[int, ...]] = (HUMAN, TRENTI, FOX, FOX, FOX)
"""Worker type of the typed Main Board spaces (contract, market, travel K1..K3)."""
S_CONTRACT: Final = 0
S_MARKET: Final = 1
S_FELLOWSHIP: Final = 5
S_MAINTENANCE: Final = 6
S_SELL: Final = 7
S_PAYOFF: Final = 8
S_GUILD: Final = 9
BOARD_BIT: Final = {S_MAINTENANCE: MAINTENANCE_SPACE, S_SELL: SELL_SPACE, S_PAYOFF: PAYOFF_SPACE, S_GUILD: GUILD_SPACE}
"""Player Board spaces, each usable once per round."""
LINE_SLOTS: Final[tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]] = (
    {"row1": (0, 1), "row2": (2, 3), "col1": (0, 2), "col2": (1, 3)},
    {"row1": (0, 1, 2), "row2": (3, 4, 5), "row3": (6, 7, 8),
     "col1": (0, 3, 6), "col2": (1, 4, 7), "col3": (2, 5, 8)},
)
"""Grid slots of each line: ``LINE_SLOTS[0]`` the 2x2 Contract grid, ``[1]`` the 3x3 Market."""
FIRE_COMBOS: Final[tuple[tuple[int, int, int], ...]] = tuple(
    (t, h, f) for t in range(4) for h in range(4) for f in range(4) if 1 <= t + h + f <= 3
)
_FIRE: Final = {c: A.make(A.Fire, *c) for c in FIRE_COMBOS}
_FIRE_PROBE: Final[dict[A.Fire, tuple[tuple[int, int], tuple[int, int, int]]]] = {
    a: ((layoff_coins(c, LAYOFF_TABLE), layoff_coins(c, LAYOFF_TABLE_FAVOR2)), (-c[0], -c[1], -c[2]))
    for c, a in _FIRE.items()
}
"""Per layoff: (coins it earns by the layoff table and with Kingdom Favor 2, the Workers it removes)."""
_MAX_TABLE_COST: Final = 40
_PLACE: Final[tuple[tuple[tuple[A.Place, ...], ...], ...]] = tuple(
    tuple(tuple(A.make(A.Place, A.SPACES[sp], WORKERS[t], c) for c in range(_MAX_TABLE_COST)) for t in range(3))
    for sp in range(len(A.SPACES))
)
"""Interned placements: ``_PLACE[space][worker][coins]``."""


def _place(sp: int, t: int, coins: int) -> A.Place:
    if coins < _MAX_TABLE_COST:
        return _PLACE[sp][t][coins]
    return A.make(A.Place, A.SPACES[sp], WORKERS[t], coins)
_HIRE: Final = tuple(A.make(A.Hire, w) for w in WORKERS)
_SELL: Final[tuple[A.Sell, ...]] = tuple(A.make(A.Sell, x) for x in FLOWER_IDS)
_USE_FAVOR: Final[tuple[tuple[A.UseFavor, ...], ...]] = tuple(
    tuple(A.make(A.UseFavor, k, f) for f in range(1, 21)) for k in (1, 2, 3))
"""Interned decisions by index (Flower card; kingdom slot and Favor), built once."""
_ONE: Final[tuple[tuple[int, int, int], ...]] = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
_FIRES: Final[dict[tuple[int, int, int, bool], list[A.Fire]]] = {}


_FIRE_PROBES: Final[dict[tuple[int, int, int], list[tuple[A.Fire, tuple[tuple[int, int], tuple[int, int, int]]]]]] = {}


def _fire_probes(t: int, h: int, f: int) -> list[tuple[A.Fire, tuple[tuple[int, int], tuple[int, int, int]]]]:
    """The layoffs possible before the placement (one Worker kept), each with its :data:`_FIRE_PROBE` entry."""
    key = (t, h, f)
    got = _FIRE_PROBES.get(key)
    if got is None:
        got = _FIRE_PROBES[key] = [(a, _FIRE_PROBE[a]) for a in _fires(t, h, f, True)]
    return got


def _fires(t: int, h: int, f: int, keep_one: bool) -> list[A.Fire]:
    """The layoffs possible with these Workers (at least one kept before the placement)."""
    key = (t, h, f, keep_one)
    got = _FIRES.get(key)
    if got is None:
        total = t + h + f
        got = _FIRES[key] = [_FIRE[c] for c in FIRE_COMBOS
                             if c[0] <= t and c[1] <= h and c[2] <= f and total - sum(c) >= keep_one]
    return got
_PAYOFF_CHEAP: Final = FAVORS[6].params["coins"]
_SALE_DOUBLE: Final = FAVORS[11].params["coins_per_basket"]
_SPEND_RATE: Final = FAVORS[19].params["coins_per_mp"]


def flower_classes(cards: list[int], used: dict[int, int] | None = None) -> dict[tuple[int, int, int], int]:
    """Interchangeable Flower cards of one area: ``(colour, baskets, left) -> lowest index``.

    Cards of the same colour and Basket count (and, during a delivery, the
    same Baskets left) are interchangeable, so a decision offers one of each.
    """
    out: dict[tuple[int, int, int], int] = {}
    for x in cards:
        left = FLOWER_BASKETS[x] - (used.get(x, 0) if used else 0)
        if left > 0:
            key = (FLOWER_COLOUR[x], FLOWER_BASKETS[x], left)
            if key not in out or x < out[key]:
                out[key] = x
    return out


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class TurnMixin(FlowarStateProtocol):
    """The turn menu and everything reachable from it but deliveries."""

    _fellowship_used: bool  # declared here too: mypyc must know its type in this base class (compiled build)

    # -- turn state --------------------------------------------------------------------------
    def _reset_turn(self: FlowarStateProtocol) -> None:
        self._turn_placed = 0
        self._turn_fired = False
        self._turn_hired = False
        self._turn_favor_used = False
        self._turn_favors = 0
        self._turn_acted = False
        self._turn_extra = False
        self._turn_loop: tuple[Any, ...] = ()

    def _t_menu(self: FlowarStateProtocol, seat: int) -> bool:
        self._turn_loop = ("menu", seat)
        return self._wait(D_TURN, seat)

    def _menu_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        out: list[Action] = []
        placed = self._turn_placed
        places = self._placements(seat) if placed == 0 or (self._turn_extra and placed == 1) else []
        out.extend(places)
        w = self._workers[seat]
        if not self._turn_fired and not self._turn_hired and (w[0] or w[1] or w[2]):
            fires = _fires(w[0], w[1], w[2], placed == 0)
            if placed == 0:  # the placement stays possible (decision 13)
                probes = _fire_probes(w[0], w[1], w[2])
                k = 1 if self._turn_favors & FAVOR_LAYOFF_TABLE else 0
                if not self._board_used[seat] & GUILD_SPACE and self._guild[seat]:
                    # a Worker is kept and the Guild space takes it (_placeable); if the layoff calls
                    # its type's strike, the Coins it earns (3 at least) keep one
                    fires = [a for a, _ in probes]
                elif self.game.rules_revision >= 3:  # a layoff that calls a strike (decision 32)
                    fires = P.fires_keeping_placement(self, seat, probes, k)
                else:
                    fires = [a for a, (coins, lost) in probes if self._placeable(seat, coins[k], lost)]
            out.extend(fires)
        if not self._hired[seat] and not self._turn_fired:
            cost = 0 if self._turn_favors & FAVOR_FREE_HIRE else HIRE_COINS
            if self._coins[seat] >= cost:
                area = self._strike_area
                out.extend(_HIRE[t] for t in range(3) if area[t] and P.hire_keeps_placement(self, seat, cost, t))
        # Pass: at the beginning of the turn, or when unable to place (decisions 7 and 13); after
        # Favor 5 (free hire) the hire that makes a placement possible is not skipped.
        if not self._turn_acted or (placed == 0 and not places and not (
                self._turn_favors & FAVOR_FREE_HIRE and any(isinstance(a, A.Hire) for a in out))):
            out.insert(0, A.PASS)
        if self._loans[seat] < MAX_LOANS:
            out.append(A.TAKE_LOAN)
        if not self._turn_favor_used:
            favors = self._favor_actions(seat, F.MENU_TIMINGS)
            if placed == 0:
                favors = [a for a in favors if F.keeps_placement(self, seat, cast(A.UseFavor, a).favor)]
            out.extend(favors)
        if placed:
            out.append(A.END_TURN)
        return out

    def _placeable(self: FlowarStateProtocol, seat: int, coins: int = 0, workers: tuple[int, int, int] = (0, 0, 0),
                   mods: int = 0, flower: bool = False) -> bool:
        """Whether ``seat`` could place a Worker after gaining ``coins`` and ``workers`` (negative: losing),
        with the modifier bits ``mods`` and, if ``flower``, one more fresh flower.

        Rulebook: "Place a Worker (this is mandatory)"; Favors 13 and 14: "You still have to place
        a Worker this turn". Before the placement, an action is only offered if the placement stays
        possible after it (decision 13). True once a Worker is placed.
        """
        if self._turn_placed:
            return True
        w = self._workers[seat]
        left = w[0] + w[1] + w[2] + workers[0] + workers[1] + workers[2]
        if left <= 0:
            return False
        if not self._board_used[seat] & GUILD_SPACE and self._guild[seat]:
            return True  # the Guild space is free and takes any Worker
        saved = (self._coins[seat], w[:], self._turn_favors)
        self._coins[seat] += coins
        for t in range(3):
            w[t] += workers[t]
        self._turn_favors |= mods
        if flower:
            self._fresh[seat].append(-1)
        try:
            return self._can_place(seat)
        finally:
            if flower:
                self._fresh[seat].pop()
            self._coins[seat], self._turn_favors = saved[0], saved[2]
            w[:] = saved[1]

    def _place_cost(self: FlowarStateProtocol, seat: int, sp: int) -> int:
        """Coins to place on space ``sp`` now (Rulebook: "Placing a Worker"; Market adds the flower price)."""
        if sp >= S_MAINTENANCE:
            return 0
        free = self._turn_favors & FAVOR_FREE_PLACEMENT  # Kingdom Favor 1
        if sp == S_FELLOWSHIP:
            return 0 if free else 1
        cost = 0
        if not free:
            if sp >= 2 and self._two_travel:
                sp_ = self._spaces
                occupied = sum(sp_[2]) + sum(sp_[3]) + sum(sp_[4])
            else:
                occupied = sum(self._spaces[sp])
            cost = occupied + 1 + (1 if self._strike[SPACE_TYPE[sp]] else 0)
        if sp == S_MARKET:
            cost += GUILDS[self._guild[seat] - 1].flower_price
        return cost

    def _can_place(self: FlowarStateProtocol, seat: int) -> bool:
        """``bool(self._placements(seat))`` without building the list (the cheap spaces first)."""
        w = self._workers[seat]
        if not (w[0] or w[1] or w[2]):
            return False
        board = self._board_used[seat]
        if not board & GUILD_SPACE and self._guild[seat]:
            return True
        coins = self._coins[seat]
        if self._turn_placed == 0:
            if not board & MAINTENANCE_SPACE and self._fresh[seat]:
                return True
            if not board & SELL_SPACE and (self._fresh[seat] or self._wilt[seat]):
                return True
            if not board & PAYOFF_SPACE and self._loans[seat] > 0 and coins >= (
                    _PAYOFF_CHEAP if self._turn_favors & FAVOR_CHEAP_PAYOFF else PAYOFF_COINS):
                return True
        if self._fellowship and not self._fellowship_used and coins >= self._place_cost(seat, S_FELLOWSHIP):
            return True
        if self._turn_placed == 0:
            mods = self._turn_favors
            any_type = mods & FAVOR_ANY_WORKER  # Kingdom Favor 9
            spaces, strike = self._spaces, self._strike
            counts = [sp[0] + sp[1] + sp[2] for sp in spaces]
            if self._two_travel:
                counts[2] = counts[3] = counts[4] = counts[2] + counts[3] + counts[4]
            for sp in range(5):
                st = SPACE_TYPE[sp]
                cost = 0 if mods & FAVOR_FREE_PLACEMENT else counts[sp] + 1 + strike[st]
                if sp == S_MARKET:
                    cost += GUILDS[self._guild[seat] - 1].flower_price
                if coins < cost:
                    continue
                if any_type or w[st] or w[0] >= 2 or w[1] >= 2 or w[2] >= 2:
                    return True
        return False

    def _placements(self: FlowarStateProtocol, seat: int) -> list[Action]:
        w = self._workers[seat]
        types = [t for t in range(3) if w[t]]
        if not types:
            return []
        coins = self._coins[seat]
        board = self._board_used[seat]
        out: list[Action] = []
        if self._turn_placed == 0:
            mods = self._turn_favors
            any_type = mods & FAVOR_ANY_WORKER  # Kingdom Favor 9
            spaces, strike = self._spaces, self._strike
            counts = [sp[0] + sp[1] + sp[2] for sp in spaces]
            if self._two_travel:
                counts[2] = counts[3] = counts[4] = counts[2] + counts[3] + counts[4]
            for sp in range(5):
                st = SPACE_TYPE[sp]
                cost = 0 if mods & FAVOR_FREE_PLACEMENT else counts[sp] + 1 + strike[st]  # Favor 1: free
                if sp == S_MARKET:
                    cost += GUILDS[self._guild[seat] - 1].flower_price
                if coins < cost:
                    continue
                for t in types:
                    if t == st or any_type or w[t] >= 2:
                        out.append(_place(sp, t, cost))
        if self._fellowship and not self._fellowship_used:
            cost = self._place_cost(seat, S_FELLOWSHIP)
            if coins >= cost:
                out.extend(_place(S_FELLOWSHIP, t, cost) for t in types)
        if self._turn_placed == 0:
            fresh, wilt = self._fresh[seat], self._wilt[seat]
            payoff = _PAYOFF_CHEAP if self._turn_favors & FAVOR_CHEAP_PAYOFF else PAYOFF_COINS
            open_ = (
                (S_MAINTENANCE, not board & MAINTENANCE_SPACE and bool(fresh)),
                (S_SELL, not board & SELL_SPACE and bool(fresh or wilt)),
                (S_PAYOFF, not board & PAYOFF_SPACE and self._loans[seat] > 0 and coins >= payoff),
            )
            for sp, ok in open_:
                if ok:
                    out.extend(_place(sp, t, 0) for t in types)
        if not board & GUILD_SPACE and self._guild[seat]:
            out.extend(_place(S_GUILD, t, 0) for t in types)
        return out

    def _favor_actions(self: FlowarStateProtocol, seat: int, timings: Any) -> list[Action]:
        out: list[Action] = []
        below = self._below[seat]
        for k in range(3):
            f = self._favor_slots[k]
            if below[k] and f and F.TIMING[f - 1] in timings and F.can_use(self, seat, f):
                out.append(_USE_FAVOR[k][f - 1])
        return out

    # -- menu actions ------------------------------------------------------------------------
    def _do_place(self: FlowarStateProtocol, a: A.Place) -> None:
        seat = self._cur
        sp = A.SPACE_INDEX[a.space]
        t = WORKER_INDEX[a.worker]
        w = self._workers[seat]
        w[t] -= 1
        tasks: list[tuple[Any, ...]] = []
        if sp < 5 and t != SPACE_TYPE[sp] and not self._turn_favors & FAVOR_ANY_WORKER:
            # Rulebook: "Unqualified Practice": a second Worker of that type goes to the Strike Area.
            w[t] -= 1
            self._strike_area[t] += 1
            tasks.append(("strike_check", t, seat, False))
        self._coins[seat] -= a.coins
        if sp < 5:
            self._spaces[sp][t] += 1
        else:
            self._parked[t] += 1
            if sp == S_FELLOWSHIP:
                self._fellowship_used = True
            else:
                self._board_used[seat] |= BOARD_BIT[sp]
        self._turn_favors &= ~(FAVOR_FREE_PLACEMENT | FAVOR_ANY_WORKER)  # Favors 1 and 9 apply to one placement
        self._turn_placed += 1
        self._turn_acted = True
        self._push(*tasks, ("space_action", seat, sp), ("menu", seat))

    def _t_space_action(self: FlowarStateProtocol, seat: int, sp: int) -> bool:
        if sp == S_CONTRACT:
            self._line_grid = 0
            self._push(("line", seat), ("discard_over", seat), ("contracts_fill",))
        elif sp == S_MARKET:
            self._line_grid = 1
            self._push(("line", seat), ("market", False))
        elif sp < 5:
            self._delivery_kingdom = sp - 2
            self._push(("deliver_menu",))
        elif sp == S_FELLOWSHIP:
            self._guild_action(seat, self._fellowship)
        elif sp == S_SELL:
            self._sold = 0
            self._push(("sell", seat))
        elif sp == S_PAYOFF:
            cost = _PAYOFF_CHEAP if self._turn_favors & FAVOR_CHEAP_PAYOFF else PAYOFF_COINS
            self._turn_favors &= ~FAVOR_CHEAP_PAYOFF
            self._coins[seat] -= cost
            self._loans[seat] -= 1
            self._loans_paid[seat] += 1
        elif sp == S_GUILD:
            self._guild_action(seat, self._guild[seat])
        return False  # maintenance: the board bit is the whole effect

    def _guild_action(self: FlowarStateProtocol, seat: int, g: int) -> None:
        """Take the action of Guild Tile ``g`` (Rulebook: "Guilds")."""
        guild = GUILDS[g - 1]
        kind = guild.action
        if kind == "coins":
            self._coins[seat] += guild.amount
        elif kind == "mp":
            self._mp[seat] += guild.amount
        elif kind == "return_torch":
            if self._torches[seat]:
                self._torches[seat] -= 1
        elif kind == "take_contract":
            self._coins[seat] += 1
            self._begin_picks(seat, 0, 1)
        else:  # take_flower
            self._coins[seat] += 1
            self._begin_picks(seat, 1, 1)

    def _do_end_turn(self: FlowarStateProtocol, a: A.EndTurn) -> None:
        self._push(("next_turn",))

    def _do_fire(self: FlowarStateProtocol, a: A.Fire) -> None:
        seat = self._cur
        self._turn_fired = True
        self._turn_acted = True
        self._push(("menu", seat))
        self._lay_off(seat, (a.trentis, a.humans, a.foxes))

    def _do_hire(self: FlowarStateProtocol, a: A.Hire) -> None:
        # Rulebook: "Hiring Workers": 5 Coins (0 with Favor 5), once per round; a strike
        # called off lets you return 1 Torch.
        seat = self._cur
        t = WORKER_INDEX[a.worker]
        self._coins[seat] -= 0 if self._turn_favors & FAVOR_FREE_HIRE else HIRE_COINS
        self._turn_favors &= ~FAVOR_FREE_HIRE
        self._strike_area[t] -= 1
        self._workers[seat][t] += 1
        self._hired[seat] = True
        self._turn_hired = True
        self._turn_acted = True
        if self._strike_off(t, seat) and self._torches[seat]:
            self._torches[seat] -= 1
        self._push(("menu", seat))

    def _do_take_loan(self: FlowarStateProtocol, a: A.TakeLoan) -> None:
        self._push(self._turn_loop)
        self._take_loan(self._cur, LOAN_COINS)

    def _do_use_favor(self: FlowarStateProtocol, a: A.UseFavor) -> None:
        # Rulebook: "Using a Kingdom Favor": discard a Contract delivered in that kingdom.
        seat = self._cur
        self._contract_discard.append(self._below[seat][a.kingdom - 1].pop())
        self._contract_deck_out()
        if seat == self._turn_seat:
            self._turn_favor_used = True
            if a.favor not in F.KEEPS_PASS:
                self._turn_acted = True
        if self._phase != D_STRIKE and self._phase in LOOPS:
            self._push(self._turn_loop)
        F.use(self, seat, a.favor)

    # -- grids: lines, picks, discards -------------------------------------------------------
    def _grid(self: FlowarStateProtocol) -> list[int]:
        return self._contract_grid if self._line_grid == 0 else self._market

    def _t_line(self: FlowarStateProtocol, seat: int) -> bool:
        if not any(x >= 0 for x in self._grid()):
            return False
        return self._wait(D_LINE, seat)

    def _line_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        grid = self._grid()
        out: list[Action] = [
            A.make(A.TakeLine, line) for line, slots in LINE_SLOTS[self._line_grid].items()
            if any(grid[i] >= 0 for i in slots)
        ]
        if not self._turn_favor_used:
            out.extend(self._favor_actions(seat, ("acquire",)))
        return out

    def _take_slot(self: FlowarStateProtocol, seat: int, slot: int) -> None:
        grid = self._grid()
        x = grid[slot]
        grid[slot] = -1
        if self._line_grid == 0:
            self._contracts[seat].append(x)
        else:
            self._fresh[seat].append(x)  # Rulebook: "Market Petal": to the Fresh Flower Area

    def _do_take_line(self: FlowarStateProtocol, a: A.TakeLine) -> None:
        seat = self._cur
        grid = self._grid()
        for slot in LINE_SLOTS[self._line_grid][a.line]:
            if grid[slot] >= 0:
                self._take_slot(seat, slot)

    def _begin_picks(self: FlowarStateProtocol, seat: int, grid: int, count: int) -> None:
        """Pick ``count`` single cards of a grid (Guild actions, Kingdom Favor 3), then refill."""
        self._line_grid = grid
        self._picks = count
        if grid == 0:
            self._push(("pick", seat), ("discard_over", seat), ("contracts_fill",))
        else:
            self._push(("pick", seat), ("market", False))

    def _t_pick(self: FlowarStateProtocol, seat: int) -> bool:
        if self._picks <= 0 or not any(x >= 0 for x in self._grid()):
            self._picks = 0
            return False
        return self._wait(D_PICK, seat)

    def _pick_actions(self: FlowarStateProtocol) -> list[Action]:
        grid = self._grid()
        ids = CONTRACT_IDS if self._line_grid == 0 else FLOWER_IDS
        return [A.make(A.TakeCard, i + 1, ids[x]) for i, x in enumerate(grid) if x >= 0]

    def _do_take_card(self: FlowarStateProtocol, a: A.TakeCard) -> None:
        seat = self._cur
        self._take_slot(seat, a.slot - 1)
        self._picks -= 1
        self._push(("pick", seat))

    def _t_discard_over(self: FlowarStateProtocol, seat: int) -> bool:
        # Rulebook: "Contract Petal": at most 4 Contracts; choose which one to discard.
        if len(self._contracts[seat]) <= 4:
            return False
        self._agenda.append(("discard_over", seat))
        return self._wait(D_DISCARD, seat)

    def _do_discard_contract(self: FlowarStateProtocol, a: A.DiscardContract) -> None:
        x = CONTRACT_INDEX[a.card]
        self._contracts[self._cur].remove(x)
        self._contract_discard.append(x)
        self._contract_deck_out()

    # -- selling flowers (Rulebook: "Action Spaces of the Player Board") ----------------------
    def _t_sell(self: FlowarStateProtocol, seat: int) -> bool:
        if not self._fresh[seat] and not self._wilt[seat]:
            return False
        self._turn_loop = ("sell", seat)
        return self._wait(D_SELL, seat)

    def _sell_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        out: list[Action] = []
        for area in (self._fresh[seat], self._wilt[seat]):
            out.extend(_SELL[x] for x in sorted(flower_classes(area).values()))
        out.append(A.FINISH_SELLING)
        if not self._turn_favor_used and seat == self._turn_seat:
            out.extend(self._favor_actions(seat, ("sell",)))
        return out

    def _do_sell(self: FlowarStateProtocol, a: A.Sell) -> None:
        seat = self._cur
        x = FLOWER_INDEX[a.card]
        area = self._fresh[seat] if x in self._fresh[seat] else self._wilt[seat]
        area.remove(x)
        self._flower_discard.append(x)
        self._coins[seat] += FLOWER_BASKETS[x] * (_SALE_DOUBLE if self._turn_favors & FAVOR_DOUBLE_SALE else 1)
        self._sold += 1
        self._push(("sell", seat))

    def _do_finish_selling(self: FlowarStateProtocol, a: A.FinishSelling) -> None:
        self._sold = 0

    # -- Kingdom Favors 19 and 20 --------------------------------------------------------------
    def _t_swap(self: FlowarStateProtocol, seat: int) -> bool:
        return self._wait(D_SWAP, seat)

    def _swap_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        w, area = self._workers[seat], self._strike_area
        return [A.make(A.SwapWorker, WORKERS[g], WORKERS[t])
                for g in range(3) for t in range(3) if g != t and w[g] and area[t]
                and P.swap_keeps_placement(self, seat, g, t)]

    def _do_swap(self: FlowarStateProtocol, a: A.SwapWorker) -> None:
        seat = self._cur
        g, t = WORKER_INDEX[a.give], WORKER_INDEX[a.take]
        self._workers[seat][g] -= 1
        self._strike_area[g] += 1
        self._strike_area[t] -= 1
        self._workers[seat][t] += 1
        self._strike_off(t, seat)
        self._push(("strike_check", g, seat, False))

    def _t_spend(self: FlowarStateProtocol, seat: int) -> bool:
        return self._wait(D_SPEND, seat)

    def _do_spend(self: FlowarStateProtocol, a: A.SpendMP) -> None:
        seat = self._cur
        self._mp[seat] -= a.mp
        self._coins[seat] += _SPEND_RATE * a.mp
