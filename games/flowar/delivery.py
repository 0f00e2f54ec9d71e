"""Travel Petal deliveries as a sequence of small decisions.

Rulebook: Flowar, "Travel Petal" (steps 1-6) and Kingdom Favors 4, 6 and 8.

After a Worker is placed on a kingdom, the seat repeats (phase ``deliver``):
choose a Contract to fulfil there (:class:`~games.flowar.actions.Deliver`, at
most 4), or stop (:class:`~games.flowar.actions.FinishDelivery`). Choosing a
Contract pays the transport it adds at once (each means of transport is paid
once per delivery; a kingdom-linked Contract rides on a means already paid,
or on the kingdom's cheaper one), then its Baskets are paid one by one (phase
``basket``): a Basket of the right colour from one Flower card
(:class:`~games.flowar.actions.UseBasket`; a two-Basket card may serve two
Contracts of the same delivery), any three Baskets
(:class:`~games.flowar.actions.Exchange` then three picks), or, with Favor 8,
the discarded fulfilled Contract (:class:`~games.flowar.actions.Wildcard`).
Only choices that keep the rest payable are offered, so a delivery never
dead-ends. Stopping collects, per Contract: the Efficiency Tile's MP, the
card's Coins and MP, +1 MP if only fresh flowers paid it, +2 MP with Favor 6;
then the Flower cards used are discarded and the Contracts go face down below
the Player Board under that kingdom.

Interchangeable cards (same area, colour, Baskets and Baskets left) are
offered once, by their lowest id, so a decision has at most ~30 options.
"""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import trait

from games.api import Action
from games.flowar import actions as A
from games.flowar.cards import (
    CONTRACT_IDS,
    CONTRACT_INDEX,
    CONTRACTS,
    EXCHANGE_BASKETS,
    FAVORS,
    FLOWER_BASKETS,
    FLOWER_COLOUR,
    FLOWER_IDS,
    FLOWER_INDEX,
    FRESH_BONUS_MP,
    MAX_CONTRACTS_DELIVERED,
    MAX_LOANS,
    MEANS_COST,
)
from games.flowar.flags import FAVOR_FREE_TRANSPORT, FAVOR_MP_PER_CONTRACT
from games.flowar.phases import D_BASKET, D_DELIVER
from games.flowar.state_protocol import FlowarStateProtocol
from games.flowar.turn import flower_classes

_DELIVER: Final[tuple[A.Deliver, ...]] = tuple(A.make(A.Deliver, c) for c in CONTRACT_IDS)
_USE_BASKET: Final[tuple[A.UseBasket, ...]] = tuple(A.make(A.UseBasket, x) for x in FLOWER_IDS)
"""Interned decisions by card index, built once."""

_FAVOR6_MP: Final = FAVORS[5].params["mp"]


def feasible(pool: list[int], need: list[int], extra: int = 0, wild: int = 0) -> bool:
    """Can Baskets ``pool`` pay requirements ``need`` plus ``extra`` Baskets of any colour?

    Args:
        pool: Baskets available per colour (5 counts).
        need: Baskets required per colour (5 counts).
        extra: further Baskets of any colour still owed (an exchange in progress).
        wild: Baskets of any colour available for free (Kingdom Favor 8).

    Returns:
        True when matching Baskets directly, then paying each missing one with
        three left-over Baskets (Rulebook: "Any combination of three Flower
        Baskets can be exchanged for a Flower Basket of your choice"), works.
        Direct matches first is optimal: a match costs one Basket, an exchange three.
    """
    matched = 0
    for c in range(5):
        matched += pool[c] if pool[c] < need[c] else need[c]
    left = sum(pool) - matched
    missing = sum(need) - matched - wild
    if missing < 0:
        missing = 0
    return EXCHANGE_BASKETS * missing + extra <= left


def transport_total(contracts: list[int], kingdom: int) -> int:
    """Transport Coins for delivering ``contracts`` in ``kingdom`` (Rulebook: "Travel Petal", step 1).

    Each means of transport is paid once; Contracts linked to the kingdom use
    a means already paid, else the kingdom's cheaper one. E.g. three Contracts
    on Graceful Rain's 1-Coin means cost 1; a fourth on its other means, 2 more.
    """
    means = {CONTRACTS[c].means for c in contracts if CONTRACTS[c].means >= 0}
    total = sum(MEANS_COST[m] for m in means)
    if not means and contracts:
        total = MEANS_COST[2 * kingdom]
    return total


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class DeliveryMixin(FlowarStateProtocol):
    """Travel Petal deliveries; mixed into :class:`games.flowar.state.FlowarState`."""

    def _reset_delivery(self: FlowarStateProtocol) -> None:
        self._delivery_kingdom = -1  # kingdom
        self._delivery_contracts: list[int] = []  # Contracts chosen (paid or being paid), in order
        self._delivery_fresh_only: list[bool] = []  # fresh-only flag of each fully paid Contract
        self._delivery_owed: list[int] = []  # colours still owed for the Contract being paid
        self._delivery_fresh = True
        self._delivery_baskets_used: dict[int, int] = {}  # Flower card -> Baskets used in this delivery
        self._exchange_picks = 0  # picks left of an exchange in progress
        self._favor8_baskets = 0  # Favor 8 Baskets available

    def _pool(self: FlowarStateProtocol, seat: int) -> list[int]:
        pool = [0, 0, 0, 0, 0]
        used = self._delivery_baskets_used
        for area in (self._fresh[seat], self._wilt[seat]):
            for x in area:
                pool[FLOWER_COLOUR[x]] += FLOWER_BASKETS[x] - used.get(x, 0)
        return pool

    def _t_deliver_menu(self: FlowarStateProtocol) -> bool:
        self._turn_loop: tuple[Any, ...] = ("deliver_menu",)
        return self._wait(D_DELIVER, self._turn_seat)

    def _deliver_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        out: list[Action] = []
        sel = self._delivery_contracts
        if len(sel) < MAX_CONTRACTS_DELIVERED:
            k = self._delivery_kingdom
            pool = self._pool(seat)
            coins = self._coins[seat]
            free = self._turn_favors & FAVOR_FREE_TRANSPORT  # Kingdom Favor 4
            base = 0 if free else transport_total(sel, k)
            for c in sorted(self._contracts[seat]):
                con = CONTRACTS[c]
                if con.kingdom != k or c in sel:
                    continue
                if not free and transport_total(sel + [c], k) - base > coins:
                    continue
                if feasible(pool, list(con.need), 0, self._favor8_baskets):
                    out.append(_DELIVER[c])
        out.append(A.FINISH_DELIVERY)
        if self._loans[seat] < MAX_LOANS:
            out.append(A.TAKE_LOAN)
        if not self._turn_favor_used and not sel:
            out.extend(self._favor_actions(seat, ("delivery",)))
        return out

    def _do_deliver(self: FlowarStateProtocol, a: A.Deliver) -> None:
        seat = self._cur
        c = CONTRACT_INDEX[a.card]
        if not self._turn_favors & FAVOR_FREE_TRANSPORT:
            self._coins[seat] -= (transport_total(self._delivery_contracts + [c], self._delivery_kingdom)
                                   - transport_total(self._delivery_contracts, self._delivery_kingdom))
        self._delivery_contracts.append(c)
        self._delivery_owed = list(CONTRACTS[c].flowers)
        self._delivery_fresh = True
        self._push(("basket",))

    def _t_basket(self: FlowarStateProtocol) -> bool:
        if self._delivery_owed:
            return self._wait(D_BASKET, self._turn_seat)
        self._delivery_fresh_only.append(self._delivery_fresh)
        self._push(("deliver_menu",))
        return False

    def _rest(self: FlowarStateProtocol) -> list[int]:
        need = [0, 0, 0, 0, 0]
        for c in self._delivery_owed[1:]:
            need[c] += 1
        return need

    def _basket_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        pool = self._pool(seat)
        rest = self._rest()
        wild = self._favor8_baskets
        used = self._delivery_baskets_used
        out: list[Action] = []
        picks = self._exchange_picks
        colour = self._delivery_owed[0]
        for area in (self._fresh[seat], self._wilt[seat]):
            for (col, _b, _left), x in sorted(flower_classes(area, used).items(), key=lambda kv: kv[1]):
                if picks == 0 and col != colour:
                    continue
                pool[col] -= 1
                ok = feasible(pool, rest, picks - 1 if picks else 0, wild)
                pool[col] += 1
                if ok:
                    out.append(_USE_BASKET[x])
        if picks == 0:
            if feasible(pool, rest, EXCHANGE_BASKETS, wild):
                out.append(A.EXCHANGE)
            if wild and feasible(pool, rest, 0, wild - 1):
                out.append(A.WILDCARD)
        return out

    def _do_basket(self: FlowarStateProtocol, a: A.UseBasket) -> None:
        seat = self._cur
        x = FLOWER_INDEX[a.card]
        self._delivery_baskets_used[x] = self._delivery_baskets_used.get(x, 0) + 1
        if x not in self._fresh[seat]:
            self._delivery_fresh = False
        if self._exchange_picks:
            self._exchange_picks -= 1
            if not self._exchange_picks:
                self._delivery_owed.pop(0)
        else:
            self._delivery_owed.pop(0)
        self._push(("basket",))

    def _do_exchange(self: FlowarStateProtocol, a: A.Exchange) -> None:
        self._exchange_picks = EXCHANGE_BASKETS
        self._push(("basket",))

    def _do_wildcard(self: FlowarStateProtocol, a: A.Wildcard) -> None:
        self._favor8_baskets -= 1
        self._delivery_fresh = False  # a Contract is not a fresh flower
        self._delivery_owed.pop(0)
        self._push(("basket",))

    def _do_finish_delivery(self: FlowarStateProtocol, a: A.FinishDelivery) -> None:
        seat = self._cur
        k = self._delivery_kingdom
        bonus = _FAVOR6_MP if self._turn_favors & FAVOR_MP_PER_CONTRACT else 0
        for c, fresh in zip(self._delivery_contracts, self._delivery_fresh_only, strict=True):
            con = CONTRACTS[c]
            self._mp[seat] += self._efficiency[k] + con.mp + bonus + (FRESH_BONUS_MP if fresh else 0)
            self._coins[seat] += con.coins
            self._contracts[seat].remove(c)
            self._below[seat][k].append(c)
            self._delivered[seat][k] += 1
            self._fresh_deliveries[seat] += fresh
        fresh_area, wilt = self._fresh[seat], self._wilt[seat]
        for x in sorted(self._delivery_baskets_used):
            (fresh_area if x in fresh_area else wilt).remove(x)
            self._flower_discard.append(x)
        if len(self._delivery_contracts) > self._at_once[seat]:
            self._at_once[seat] = len(self._delivery_contracts)
        self._reset_delivery()
