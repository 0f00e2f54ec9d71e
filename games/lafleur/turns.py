"""Placing Artisans and the six locations (a mixin of :class:`LaFleurState`).

Rulebook: La Fleur, "Artisans" (placing, abilities), "Locations", "Flower
Market", "Garden Features" and "Purchasing a Garden Feature", "Artisan
Guild", "Special Invitation", "Prestige and Coin".

A placement is one decision (:class:`~games.lafleur.actions.Place`: which
Artisan, which location); the location's choices follow as small decisions.
A location is offered only when its action can be carried out with what the
player has (Coin always can), except Garden Features, offered whenever a
Garden Feature is face-up or can be revealed; there :class:`Done` (buy
nothing) is always legal. Payment steps are offered only when the rest of the
cost stays payable (:func:`games.lafleur.payment.payable`).

An Artisan placed on its ability location uses its ability (all stand-in
abilities only help, so they apply without asking).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any, Final

from mypy_extensions import trait

from games.api import Action
from games.lafleur import actions as A
from games.lafleur.cards import (
    ALLURE,
    ARTISAN_ALLURE,
    ARTISANS,
    D_ARTISAN,
    D_FEATURE,
    D_FLOWER,
    FEATURE_COUNTS,
    FEATURES,
    FLOWER_COST,
    FLOWER_LAYOUT,
    INDEX,
    L_WILD,
    LOC_COIN,
    LOC_FEATURES,
    LOC_GUILD,
    LOC_INVITE,
    LOC_MARKET,
    LOC_PRESTIGE,
    LOCATION_INDEX,
    LOCATIONS,
    VISITOR_ALLURE,
)
from games.lafleur.constants import (
    COIN_GAIN,
    DECK_PRICE,
    HIRE_COST,
    MAX_ARTISANS,
    P_FEATURE,
    P_GUILD,
    P_INVITE,
    P_MARKET,
    P_PAIR,
    P_PAY,
    P_PLACE,
    P_SWAP,
    REPLACE_COST,
    REVEAL_COST,
    ROMANCE_ALLURE,
)
from games.lafleur.payment import pay_with_card, payable
from games.lafleur.state_protocol import LaFleurStateProtocol


def _minus(need: tuple[int, ...], t: int) -> tuple[int, ...]:
    return tuple(n - 1 if i == t else n for i, n in enumerate(need))


def _slack(need: tuple[int, ...], lays: list[int], arts: tuple[int, ...], free: int, drop: int) -> bool:
    """True when ``need`` stays payable by Wilds, ``free`` and pairs alone whichever
    ``drop`` cards leave the hand (a cheap sufficient test before a search)."""
    owed = sum(n - a if n > a else 0 for n, a in zip(need, arts, strict=False))
    wild = lays.count(L_WILD) - drop
    wild = wild if wild > 0 else 0
    left = len(lays) - drop
    return owed <= free + wild + (left - wild) // 2


def _without(ordered: list[int], x: int) -> tuple[int, ...]:
    """``ordered`` (sorted) without one occurrence of ``x``, as a tuple."""
    i = ordered.index(x)
    return tuple(ordered[:i] + ordered[i + 1:])


_PLACE: Final[tuple[tuple[A.Place, ...], ...]] = tuple(
    tuple(A.Place(a.id, loc) for loc in LOCATIONS) for a in ARTISANS
)
"""Interned placements, ``_PLACE[artisan_index][location_index]``."""
_OWN_LEGALITY: Final[tuple[int, ...]] = tuple(
    a.location if set(a.ability) & {"hire_cost", "replace_cost", "market_discount", "free_reveals"} else -1
    for a in ARTISANS
)
"""Per Artisan: its ability location when the ability can make that location playable, else -1."""


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class TurnsMixin(LaFleurStateProtocol):
    """Placements, locations and Garden Feature payments."""

    _active_ability: dict[str, Any] | None  # the Artisan ability in use (set in LaFleurState.__init__)

    # -- modifiers ------------------------------------------------------------------------
    @staticmethod
    def _ab(key: str, default: int, ab: dict[str, Any] | None) -> int:
        """Value of ``key`` in an Artisan ability ``ab`` (None: no ability in use)."""
        return int(ab.get(key, default)) if ab else default

    def _ev(self: LaFleurStateProtocol, key: str, default: int = 0) -> int:
        """Value of ``key`` in this round's Event modifiers."""
        return int(self._event_modifiers.get(key, default))

    def _hire_cost(self: LaFleurStateProtocol, ab: dict[str, Any] | None) -> int:
        return min(HIRE_COST, self._ab("hire_cost", HIRE_COST, ab), self._ev("hire_cost", HIRE_COST))

    def _replace_cost(self: LaFleurStateProtocol, ab: dict[str, Any] | None) -> int:
        return min(REPLACE_COST, self._ab("replace_cost", REPLACE_COST, ab), self._ev("replace_cost", REPLACE_COST))

    def _reveal_cost(self: LaFleurStateProtocol, ab: dict[str, Any] | None) -> int:
        return 0 if self._ab("free_reveals", 0, ab) or self._ev("free_reveals") else REVEAL_COST

    def romance_threshold(self: LaFleurStateProtocol, p: int, t: int) -> int:
        """Matching Allure player ``p`` needs to romance a Visitor of type ``t``.

        5 (Rulebook: "Special Invitation"), 4 with the Open Gates Event or a
        Garden Feature whose When Visited ability lowers it for ``t``.
        """
        best = self._ev("romance_threshold", ROMANCE_ALLURE)
        name = ALLURE[t]
        for f in self._features[p]:
            eff = FEATURES[f].ability.effect
            rt = eff.get("romance_threshold")
            if rt and rt["allure"] == name:
                best = min(best, rt["value"])
        return best

    # -- what a player can do ---------------------------------------------------------------
    def _untilted(self: LaFleurStateProtocol, p: int) -> tuple[int, ...]:
        arts = [0] * 5
        tilted = self._tilted[p]
        for i, a in enumerate(self._artisans[p]):
            if not tilted[i]:
                arts[ARTISAN_ALLURE[a]] += 1
        return tuple(arts)

    def _layouts(self: LaFleurStateProtocol, p: int) -> tuple[int, ...]:
        return tuple(sorted(FLOWER_LAYOUT[c] for c in self._hand[p]))

    def affordable(self: LaFleurStateProtocol, p: int, x: int, free: int = 0) -> bool:
        """True when player ``p`` can pay Garden Feature ``x`` now (hand, untilted Artisans, ``free``)."""
        return payable(FEATURE_COUNTS[x], self._layouts(p), self._untilted(p), free)

    def _market_options(self: LaFleurStateProtocol, p: int, ab: dict[str, Any] | None) -> list[tuple[int, int, int]]:
        """(space 1..4 or 0 for the deck, card or -1, price) the player can pay."""
        coins = self._coins[p]
        disc = self._ab("market_discount", 0, ab) + self._ev("market_discount")
        out = []
        for i, x in enumerate(self._market):
            if x >= 0:
                price = max(0, FLOWER_COST[x] - disc)
                if price <= coins:
                    out.append((i + 1, x, price))
        price = self._ev("deck_price", DECK_PRICE)
        if price <= coins and self._available(D_FLOWER):
            out.append((0, -1, price))
        return out

    def _can_reveal(self: LaFleurStateProtocol, p: int, ab: dict[str, Any] | None) -> bool:
        return -1 in self._display and self._available(D_FEATURE) and self._coins[p] >= self._reveal_cost(ab)

    def _can_place(self: LaFleurStateProtocol, p: int, loc: int, ab: dict[str, Any] | None) -> bool:
        if loc == LOC_COIN:
            return True
        if loc == LOC_PRESTIGE:
            return not self._used_prestige[p]
        if loc == LOC_MARKET:
            coins = self._coins[p]
            if coins >= self._ev("deck_price", DECK_PRICE) and self._available(D_FLOWER):
                return True
            disc = self._ab("market_discount", 0, ab) + self._ev("market_discount")
            return any(x >= 0 and FLOWER_COST[x] - disc <= coins for x in self._market)
        if loc == LOC_FEATURES:
            return any(x >= 0 for x in self._display) or self._can_reveal(p, ab)
        if loc == LOC_GUILD:
            if not self._available(D_ARTISAN):
                return False
            coins = self._coins[p]
            return coins >= self._replace_cost(ab) or (
                len(self._artisans[p]) < MAX_ARTISANS and coins >= self._hire_cost(ab))
        return -1 in self._visitor_pawn  # special invitation

    # -- placing -----------------------------------------------------------------------------
    def _legal_place(self: LaFleurStateProtocol) -> list[Action]:
        p = self._cur
        out: list[Action] = []
        base = [self._can_place(p, loc, None) for loc in range(6)]
        placed = self._placed[p]
        for i, a in enumerate(self._artisans[p]):
            if placed[i]:
                continue
            row = _PLACE[a]
            own = _OWN_LEGALITY[a]  # the location whose legality this Artisan's ability changes, or -1
            for loc in range(6):
                if base[loc] if loc != own else self._can_place(p, loc, ARTISANS[a].ability):
                    out.append(row[loc])
        return out

    def _do_place(self: LaFleurStateProtocol, a: A.Place) -> None:
        p = self._cur
        x = INDEX[a.artisan][1]
        slot = next(i for i, y in enumerate(self._artisans[p]) if y == x and not self._placed[p][i])
        loc = LOCATION_INDEX[a.location]
        self._placed[p][slot] = True
        self._artisan_locations[p][slot] = loc
        art = ARTISANS[x]
        ab = art.ability if art.location == loc else None
        self._ability_player, self._ability_slot, self._active_ability = p, slot, ab
        if ab and "gain" in ab:  # runs once the location's action is done
            g = ab["gain"]
            self._tasks.append(("_t_step", p, ("gain", 0, g.get("coins", 0), g.get("flowers", 0), art.id)))
        if loc == LOC_MARKET:
            self._buys = 1 + self._ab("second_purchase", 0, ab) + self._ev("second_purchase")
            self._optional = False
            self._ask(P_MARKET, p)
        elif loc == LOC_FEATURES:
            self._ask(P_FEATURE, p)
        elif loc == LOC_GUILD:
            self._ask(P_GUILD, p)
        elif loc == LOC_INVITE:
            self._ask(P_INVITE, p)
        elif loc == LOC_PRESTIGE:
            self._prestige[p] += 1
            self._coins[p] += self._ev("prestige_coins")
            self._used_prestige[p] = True
        else:
            self._coins[p] += self._ev("coin_location", COIN_GAIN)

    # -- Flower Market -------------------------------------------------------------------------
    def _legal_market(self: LaFleurStateProtocol) -> list[Action]:
        out: list[Action] = [
            A.BUY_FLOWER[space][x]
            for space, x, _ in self._market_options(self._ability_player, self._active_ability)
        ]
        if self._optional:
            out.append(A.DONE)
        return out

    def _do_buy_flower(self: LaFleurStateProtocol, a: A.BuyFlower) -> None:
        p = self._ability_player
        opts = {space: price for space, _, price in self._market_options(p, self._active_ability)}
        self._coins[p] -= opts[a.space]
        self._buys -= 1
        if self._buys > 0:
            self._tasks.append(("_t_market_again",))
        self._flower_to_hand(p, a.space)

    def _flower_to_hand(self: LaFleurStateProtocol, p: int, space: int) -> None:
        """The Flower card of Market space ``space`` (1..5) goes face up to ``p``'s hand; space 0 is a
        draw from the deck (a chance node). Rulebook: La Fleur, "Flower Market"."""
        if space:
            x = self._market[space - 1]
            self._market[space - 1] = -1
            self._to_hand(p, x, face_up=True)
        else:
            self._draw(D_FLOWER, ("hand", p))

    def _t_market_again(self: LaFleurStateProtocol) -> None:
        if self._market_options(self._ability_player, self._active_ability):
            self._optional = True
            self._ask(P_MARKET, self._ability_player)

    # -- Garden Features -----------------------------------------------------------------------
    def _legal_feature(self: LaFleurStateProtocol) -> list[Action]:
        p = self._ability_player
        out: list[Action] = []
        if self._can_reveal(p, self._active_ability):
            out.append(A.REVEAL)
        free = self._ab("free_allure", 0, self._active_ability)
        lays = self._layouts(p)
        arts = self._untilted(p)
        for i, x in enumerate(self._display):
            if x >= 0 and payable(FEATURE_COUNTS[x], lays, arts, free):
                out.append(A.BUY_FEATURE[i][x])
        out.append(A.DONE)
        return out

    def _do_reveal(self: LaFleurStateProtocol, a: A.RevealFeature) -> None:
        p = self._ability_player
        self._coins[p] -= self._reveal_cost(self._active_ability)
        self._tasks.append(("_t_feature_again",))
        self._draw(D_FEATURE, ("display", self._display.index(-1)))

    def _t_feature_again(self: LaFleurStateProtocol) -> None:
        self._ask(P_FEATURE, self._ability_player)

    def _do_buy_feature(self: LaFleurStateProtocol, a: A.BuyFeature) -> None:
        self._pay_space = a.space - 1
        self._pay_feature = self._display[self._pay_space]
        self._pay_need = FEATURE_COUNTS[self._pay_feature]
        self._pay_free = self._ab("free_allure", 0, self._active_ability)
        self._ask(P_PAY, self._ability_player)

    def _legal_pay(self: LaFleurStateProtocol) -> list[Action]:
        p = self._ability_player
        need = self._pay_need
        hand = self._hand[p]
        lays = [FLOWER_LAYOUT[c] for c in hand]
        arts = self._untilted(p)
        free = self._pay_free
        out: list[Action] = []
        ordered = sorted(lays)
        # Plenty of cards: every step that pays something leaves the rest payable.
        easy = _slack(need, lays, arts, free, 2)
        tilted = self._tilted[p]
        # Rules revision 3 (decision 10): a newly drawn Artisan arrives untilted, so which of two alike
        # Artisans tilts matters (the one about to be replaced at the Guild, say): each is offered. Before
        # it, one option per Allure type ("The player may simply declare that they are contributing the
        # Artisan's Allure type").
        each = self.game.rules_revision >= 3
        seen: set[int] = set()
        for i, x in enumerate(self._artisans[p]):
            t = ARTISAN_ALLURE[x]
            if tilted[i] or not need[t] or (t in seen and not each):
                continue
            seen.add(t)
            if easy or payable(_minus(need, t), tuple(ordered), _minus(arts, t), free):
                out.append(A.PAY_ARTISAN[x][t])
        ok_wild: list[int] | None = None  # feasible types for a Wild card (all Wilds alike)
        ok_plain: dict[int, bool] = {}  # by layout
        for j, c in enumerate(hand):
            lay = lays[j]
            if lay == L_WILD:
                if ok_wild is None:
                    rest = _without(ordered, lay)
                    ok_wild = [t for t in range(5) if need[t] and (easy or payable(_minus(need, t), rest, arts, free))]
                out.extend(A.PAY_FLOWER[c][t + 1] for t in ok_wild)
                continue
            ok = ok_plain.get(lay)
            if ok is None:
                after = pay_with_card(need, lay)
                ok = ok_plain[lay] = after != need and (easy or payable(after, _without(ordered, lay), arts, free))
            if ok:
                out.append(A.PAY_FLOWER[c][0])
        if len(hand) >= 2:
            for t in range(5):
                if need[t] and (easy or self._pair_ok(_minus(need, t), lays, arts, free)):
                    out.append(A.PAY_PAIR[t])
        if free:
            for t in range(5):
                if need[t] and payable(_minus(need, t), tuple(ordered), arts, 0):
                    out.append(A.PAY_DISCOUNT[t])
        return out

    @staticmethod
    def _pair_ok(need: tuple[int, ...], lays: list[int], arts: tuple[int, ...], free: int,
                 pairs_of: int = 2) -> bool:
        """Can some ``pairs_of`` (2, or 1 when the pair's first card is chosen) of ``lays`` be
        discarded with ``need`` still payable by the rest?"""
        if _slack(need, lays, arts, free, pairs_of):
            return True
        ordered = sorted(lays)
        tried: set[tuple[int, ...]] = set()
        for combo in combinations(range(len(ordered)), pairs_of):
            key = tuple(ordered[i] for i in combo)
            if key in tried:
                continue
            tried.add(key)
            rest = tuple(x for i, x in enumerate(ordered) if i not in combo)
            if payable(need, rest, arts, free):
                return True
        return False

    def _do_pay_artisan(self: LaFleurStateProtocol, a: A.PayArtisan) -> None:
        p = self._ability_player
        x = INDEX[a.artisan][1]
        slot = next(i for i, y in enumerate(self._artisans[p]) if y == x and not self._tilted[p][i])
        self._tilted[p][slot] = True
        self._pay_need = _minus(self._pay_need, ARTISAN_ALLURE[x])
        self._after_pay()

    def _discard_flower(self: LaFleurStateProtocol, p: int, x: int) -> None:
        self._from_hand(p, x)
        self._discards[D_FLOWER].append(x)

    def _do_pay_flower(self: LaFleurStateProtocol, a: A.PayFlower) -> None:
        x = INDEX[a.card][1]
        self._discard_flower(self._ability_player, x)
        if a.allure:
            self._pay_need = _minus(self._pay_need, ALLURE.index(a.allure))
        else:
            self._pay_need = pay_with_card(self._pay_need, FLOWER_LAYOUT[x])
        self._after_pay()

    def _do_pay_pair(self: LaFleurStateProtocol, a: A.PayPair) -> None:
        self._pair_allure = ALLURE.index(a.allure)
        self._pair_first = -1
        self._ask(P_PAIR, self._ability_player)

    def _legal_pair(self: LaFleurStateProtocol) -> list[Action]:
        p = self._ability_player
        need = _minus(self._pay_need, self._pair_allure)
        hand = self._hand[p]
        lays = [FLOWER_LAYOUT[c] for c in hand]
        arts = self._untilted(p)
        free = self._pay_free
        out: list[Action] = []
        verdict: dict[int, bool] = {}  # by layout: cards alike are alike here
        for j, c in enumerate(hand):
            lay = lays[j]
            ok = verdict.get(lay)
            if ok is None:
                rest = lays[:j] + lays[j + 1:]
                if self._pair_first >= 0:
                    ok = payable(need, tuple(sorted(rest)), arts, free)
                else:
                    ok = self._pair_ok(need, rest, arts, free, pairs_of=1)
                verdict[lay] = ok
            if ok:
                out.append(A.PAIR_CARD[c])
        return out

    def _do_pair_card(self: LaFleurStateProtocol, a: A.PairCard) -> None:
        x = INDEX[a.card][1]
        self._discard_flower(self._ability_player, x)
        if self._pair_first < 0:
            self._pair_first = x
            self._ask(P_PAIR, self._ability_player)
            return
        self._pay_need = _minus(self._pay_need, self._pair_allure)
        self._pair_allure = self._pair_first = -1
        self._after_pay()

    def _do_pay_discount(self: LaFleurStateProtocol, a: A.PayDiscount) -> None:
        self._pay_free = 0
        self._pay_need = _minus(self._pay_need, ALLURE.index(a.allure))
        self._after_pay()

    def _after_pay(self: LaFleurStateProtocol) -> None:
        if any(self._pay_need):
            self._ask(P_PAY, self._ability_player)
            return
        self._acquire(self._ability_player, self._pay_feature)
        self._display[self._pay_space] = -1
        self._pay_feature = self._pay_space = -1

    def _acquire(self: LaFleurStateProtocol, p: int, x: int) -> None:
        """Rulebook: "Purchasing a Garden Feature", UPDATE ALLURE TRACKER; then When Acquired."""
        self._features[p].append(x)
        counts = FEATURE_COUNTS[x]
        for t in range(5):
            self._allure[p][t] += counts[t]
            self._feature_allure[p][t] += counts[t]
        ab = FEATURES[x].ability
        if ab.timing == "when_acquired":
            self._apply_ability(p, ab, FEATURES[x].id)

    def _do_done(self: LaFleurStateProtocol, a: A.Done) -> None:
        """Buy nothing (more): the placement ends."""

    # -- Artisan Guild -------------------------------------------------------------------------
    def _legal_guild(self: LaFleurStateProtocol) -> list[Action]:
        p = self._ability_player
        out: list[Action] = []
        coins = self._coins[p]
        if len(self._artisans[p]) < MAX_ARTISANS and coins >= self._hire_cost(self._active_ability):
            out.append(A.HIRE)
        if coins >= self._replace_cost(self._active_ability):
            out.append(A.REPLACE)
        return out

    def _do_hire(self: LaFleurStateProtocol, a: A.HireArtisan) -> None:
        p = self._ability_player
        self._coins[p] -= self._hire_cost(self._active_ability)
        self._draw(D_ARTISAN, ("hire", p))

    def _do_replace(self: LaFleurStateProtocol, a: A.ReplaceArtisan) -> None:
        p = self._ability_player
        self._coins[p] -= self._replace_cost(self._active_ability)
        self._draw(D_ARTISAN, ("replace", p))

    def _legal_swap(self: LaFleurStateProtocol) -> list[Action]:
        out: list[Action] = [A.SWAP_ARTISAN[x] for x in self._artisans[self._cur]]
        out.append(A.SWAP_ARTISAN[-1])
        return out

    def _do_swap(self: LaFleurStateProtocol, a: A.SwapArtisan) -> None:
        """Rulebook: "Artisan Guild", REPLACING: keep the new card in the old one's space, or discard it.

        The space keeps its pawn: a replaced Artisan that was already placed this
        round leaves a newcomer who has been placed too. The newcomer arrives untilted
        (Rulebook: "Purchasing a Garden Feature", ARTISAN CARDS: "Each of a player's
        Artisans may contribute their Allure type toward the purchase of a Garden Feature
        once per round"; the tilt records that *that* Artisan contributed). Rules revision
        3; revisions 1 and 2 kept the replaced card's tilt (``LaFleurGame.RULES_REVISIONS``).
        """
        p = self._cur
        new = self._swap_new
        self._swap_new = -1
        if not a.artisan:
            self._discards[D_ARTISAN].append(new)
            return
        x = INDEX[a.artisan][1]
        slot = self._artisans[p].index(x)
        self._artisans[p][slot] = new
        if self.game.rules_revision >= 3:
            self._tilted[p][slot] = False
        self._discards[D_ARTISAN].append(x)

    # -- Special Invitation --------------------------------------------------------------------
    def _legal_invite(self: LaFleurStateProtocol) -> list[Action]:
        p = self._ability_player
        out: list[Action] = []
        # "Each player may only have 1 Companion": no limit on romancing pawns (rules revision 2;
        # revision 1 allowed one a round, LaFleurGame.RULES_REVISIONS)
        can_romance = self._companion[p] < 0 and (self.game.rules_revision >= 2 or not self._romancing[p])
        for i, v in enumerate(self._visitors):
            if self._visitor_pawn[i] >= 0:
                continue
            out.append(A.INVITE[v][0])
            t = VISITOR_ALLURE[v]
            if can_romance and t >= 0 and self._allure[p][t] >= self.romance_threshold(p, t):
                out.append(A.INVITE[v][1])
        return out

    def _do_invite(self: LaFleurStateProtocol, a: A.Invite) -> None:
        p = self._ability_player
        i = self._visitors.index(INDEX[a.visitor][1])
        self._visitor_pawn[i] = p
        self._visitor_romance[i] = a.romance
        if a.romance:
            self._romancing[p] = True


LEGAL_BUILDERS: Final = {
    P_PLACE: TurnsMixin._legal_place,
    P_MARKET: TurnsMixin._legal_market,
    P_FEATURE: TurnsMixin._legal_feature,
    P_PAY: TurnsMixin._legal_pay,
    P_PAIR: TurnsMixin._legal_pair,
    P_GUILD: TurnsMixin._legal_guild,
    P_SWAP: TurnsMixin._legal_swap,
    P_INVITE: TurnsMixin._legal_invite,
}
"""Legal-action builders of the phases handled here."""

TURN_DISPATCH: Final[dict[type[Action], Callable[[LaFleurStateProtocol, Any], None]]] = {
    A.Place: TurnsMixin._do_place,
    A.BuyFlower: TurnsMixin._do_buy_flower,
    A.RevealFeature: TurnsMixin._do_reveal,
    A.BuyFeature: TurnsMixin._do_buy_feature,
    A.PayArtisan: TurnsMixin._do_pay_artisan,
    A.PayFlower: TurnsMixin._do_pay_flower,
    A.PayPair: TurnsMixin._do_pay_pair,
    A.PairCard: TurnsMixin._do_pair_card,
    A.PayDiscount: TurnsMixin._do_pay_discount,
    A.HireArtisan: TurnsMixin._do_hire,
    A.ReplaceArtisan: TurnsMixin._do_replace,
    A.SwapArtisan: TurnsMixin._do_swap,
    A.Invite: TurnsMixin._do_invite,
    A.Done: TurnsMixin._do_done,
}
"""Handlers of the actions handled here."""
