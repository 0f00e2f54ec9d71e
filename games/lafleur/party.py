"""Effects, Events, the Garden Party, End of Round and game end (a mixin of :class:`LaFleurState`).

Rulebook: La Fleur, "Start of Round" (4. EVENTS), "Garden Party" (and its
VISITORS, VISITOR EFFECTS, "WHEN VISITED" ABILITIES, AU REVOIR), "End of
Round", "Ending the Game" and "End-of-Game Scoring".

Effects reach the state as *steps* (:func:`games.lafleur.abilities.steps`),
each run by :meth:`PartyMixin._t_step`. A gained Flower card is a decision:
a face-up card or the top of the deck, at no cost (Rulebook: "Garden
Party", VISITOR EFFECTS; we apply it to every "gain a Flower card").
Optional conversions and choices are decisions; the solo opponent always
converts when able and always takes the first option ("Solo Mode", NOTE FOR
EVENTS AND VISITORS).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mypy_extensions import trait

from games.api import TERMINAL, Action
from games.lafleur import actions as A
from games.lafleur.abilities import automaton_scores, holds, is_static, order_free, steps
from games.lafleur.cards import (
    CHARACTERS,
    D_EVENT,
    D_FEATURE,
    D_FLOWER,
    D_VISITOR,
    EVENTS,
    FEATURES,
    INDEX,
    VISITORS,
    Ability,
    Visitor,
)
from games.lafleur.constants import (
    COINS_PER_PRESTIGE,
    FLOWERS_PER_PRESTIGE,
    MAX_ROUNDS,
    P_ACCEPT,
    P_CHOOSE,
    P_DISCARD,
    P_OVER,
    P_TAKE,
    SOIREE,
)
from games.lafleur.state_protocol import LaFleurStateProtocol
from games.lafleur.termination import LaFleurTermination


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class PartyMixin(LaFleurStateProtocol):
    """Effects, Events, Garden Party, End of Round and end of game."""

    _end_reason: LaFleurTermination | None  # None until the game ends (set in LaFleurState.__init__)
    _prompt: tuple[Any, ...]  # the pending prompt (set in LaFleurState.__init__)
    _after_discard: tuple[Any, ...]  # the task resumed after discards (set in LaFleurState.__init__)

    # -- effects -----------------------------------------------------------------------------
    def _apply_ability(self: LaFleurStateProtocol, p: int, ability: Ability, source: str) -> None:
        """Schedule one player's ability if its condition holds (solo opponent: if it may score)."""
        if p == self._automaton and not automaton_scores(ability):
            return
        if holds(self, p, ability.condition):
            self._push([("_t_step", p, st) for st in steps(self, p, ability.effect, source)])

    def _apply_to_all(self: LaFleurStateProtocol, ability: Ability, source: str) -> None:
        """An Event for every player in turn order; conditions are judged before anything changes."""
        eff = ability.effect
        if "refresh" in eff or "extra_visitors" in eff:
            self._push([("_t_step", -1, st) for st in steps(self, 0, eff, source)])
            return
        who = [p for p in self._order
               if (p != self._automaton or automaton_scores(ability)) and holds(self, p, ability.condition)]
        self._push([("_t_step", p, st) for p in who for st in steps(self, p, eff, source)])

    def _t_char_ability(self: LaFleurStateProtocol, p: int, k: int) -> None:
        """Resolve ability ``k`` of player ``p``'s Character, its condition judged now.

        Rulebook: "End of Round", CHARACTER ABILITY EXAMPLE: "Aurora checks each
        of her Character's abilities" and resolves them in the card's order, so a
        later ability sees what an earlier one gave (decision 28).
        """
        c = self._character[p]
        self._apply_ability(p, CHARACTERS[c].abilities[k], CHARACTERS[c].id)

    def _t_feature_ability(self: LaFleurStateProtocol, p: int, f: int) -> None:
        """Resolve the ability of Garden Feature ``f`` of player ``p``, its condition judged now.

        Rulebook: "End-of-Game Scoring": "resolves them one at a time" (also End of Round).
        """
        self._apply_ability(p, FEATURES[f].ability, FEATURES[f].id)

    def _t_step(self: LaFleurStateProtocol, p: int, st: tuple[Any, ...]) -> None:
        kind = st[0]
        if kind == "gain":
            self._prestige[p] += st[1]
            self._coins[p] += st[2]
            if st[3]:
                self._push([("_t_gain_flower", p, st[4])] * st[3])
        elif kind == "offer":
            pay_c, pay_f = st[1], st[2]
            if self._coins[p] < pay_c or len(self._hand[p]) < pay_f:
                return
            if p == self._automaton:
                self._coins[p] -= pay_c
                for _ in range(pay_f):
                    self._discard_flower(p, self._hand[p][0])  # oldest first
                self._t_step(p, ("gain", *st[3], st[4]))
            else:
                self._prompt = ("offer", st)
                self._ask(P_ACCEPT, p)
        elif kind == "choice":
            if p == self._automaton:
                self._push([("_t_step", p, s) for s in steps(self, p, st[1][0], st[2])])
            else:
                self._prompt = ("choice", st)
                self._ask(P_CHOOSE, p)
        elif kind == "discard":
            n = min(st[1], len(self._hand[p]))
            if n and p == self._automaton:
                for _ in range(n):
                    self._discard_flower(p, self._hand[p][0])
            elif n:
                self._discard_left = n
                self._after_discard = ()
                self._prompt = ("discard", n, st[2])
                self._ask(P_DISCARD, p)
        elif kind == "refresh":
            if st[1] == "market":
                self._discards[D_FLOWER].extend(x for x in self._market if x >= 0)
                self._market = [-1] * len(self._market)
                self._tasks.append(("_t_fill_market",))
            else:
                self._discards[D_FEATURE].extend(x for x in self._display if x >= 0)
                self._display = [-1] * len(self._display)
                self._tasks.append(("_t_fill_display",))
        elif kind == "extra_visitors":
            self._push([("_t_draw", D_VISITOR, ("visitor",))] * st[1])

    def _t_gain_flower(self: LaFleurStateProtocol, p: int, source: str) -> None:
        if p == self._automaton:  # the opponent keeps its Flower cards face-down: from the deck
            self._draw(D_FLOWER, ("hand", p))
        elif any(x >= 0 for x in self._market) or self._available(D_FLOWER):
            self._prompt = ("take", source)
            self._ask(P_TAKE, p)

    def _legal_take(self: LaFleurStateProtocol) -> list[Action]:
        out: list[Action] = [
            A.TAKE_FLOWER[i + 1][x] for i, x in enumerate(self._market) if x >= 0
        ]
        if self._available(D_FLOWER):
            out.append(A.TAKE_FLOWER[0][-1])
        return out

    def _do_take(self: LaFleurStateProtocol, a: A.TakeFlower) -> None:
        self._prompt = ()
        self._flower_to_hand(self._cur, a.space)

    def _legal_accept(self: LaFleurStateProtocol) -> list[Action]:
        return [A.YES, A.NO]

    def _do_accept(self: LaFleurStateProtocol, a: A.Accept) -> None:
        p = self._cur
        prompt = self._prompt
        self._prompt = ()
        if not a.accept:
            return
        if prompt[0] == "character":
            self._character_used = True
            self._push([("_t_char_ability", p, k) for k in range(len(CHARACTERS[self._character[p]].abilities))])
            return
        _, pay_c, pay_f, gain, src = prompt[1]
        self._coins[p] -= pay_c
        g = ("gain", *gain, src)
        if pay_f:
            self._discard_left = pay_f
            self._after_discard = g
            self._prompt = ("discard", pay_f, src)
            self._ask(P_DISCARD, p)
        else:
            self._tasks.append(("_t_step", p, g))

    def _legal_choose(self: LaFleurStateProtocol) -> list[Action]:
        pr = self._prompt
        n = len(pr[1]) if pr[0] == "order" else len(pr[1][1])
        return [A.intern(A.Choose, i) for i in range(n)]

    def _do_choose(self: LaFleurStateProtocol, a: A.Choose) -> None:
        p = self._cur
        st = self._prompt[1]
        kind = self._prompt[0]
        self._prompt = ()
        if kind == "order":  # resolve the chosen item, then choose among the rest
            rest = st[:a.option] + st[a.option + 1:]
            self._tasks.append(("_t_order", p, rest))
            self._tasks.append(("_t_item", p, st[a.option]))
            return
        self._push([("_t_step", p, s) for s in steps(self, p, st[1][a.option], st[2])])

    def _legal_discard(self: LaFleurStateProtocol) -> list[Action]:
        return [A.DISCARD_FLOWER[x] for x in self._hand[self._cur]]

    def _do_discard(self: LaFleurStateProtocol, a: A.DiscardFlower) -> None:
        p = self._cur
        self._discard_flower(p, INDEX[a.card][1])
        self._discard_left -= 1
        if self._discard_left > 0 and self._hand[p]:
            self._ask(P_DISCARD, p)
            return
        self._prompt = ()
        if self._after_discard:
            self._tasks.append(("_t_step", p, self._after_discard))
            self._after_discard = ()

    # -- Events ---------------------------------------------------------------------------------
    def _event_drawn(self: LaFleurStateProtocol, x: int) -> None:
        """Rulebook: "Start of Round", 4: the Event goes face-up on the Event discard pile."""
        self._event = x
        self._discards[D_EVENT].append(x)
        ab = EVENTS[x].ability
        if ab.timing == "immediate":
            self._tasks.append(("_t_event", x))
        elif ab.timing == "round":
            self._event_modifiers = dict(ab.effect.get("modify", {}))

    def _t_event(self: LaFleurStateProtocol, x: int) -> None:
        self._apply_to_all(EVENTS[x].ability, EVENTS[x].id)

    # -- Garden Party ---------------------------------------------------------------------------
    def _visit_value(self: LaFleurStateProtocol, p: int, vis: Visitor) -> int:
        """What makes ``vis`` visit: matching Allure, or a type-less Visitor's rule (higher wins)."""
        if vis.allure >= 0:
            return self._allure[p][vis.allure]
        rule = vis.visits
        if rule == "least_prestige":
            return -self._prestige[p]
        if rule == "most_features":
            return len(self._features[p])
        if rule == "most_artisans":
            return len(self._artisans[p])
        if rule == "most_total_allure":
            return sum(self._allure[p])
        return len(self._hand[p])  # most_hand

    def destinations(self: LaFleurStateProtocol) -> list[int]:
        """Where each face-up Visitor goes now (player index, -1 = no one).

        Rulebook: "Garden Party": the highest matching Allure; a tie visits no
        one unless a tied player put a pawn on the Visitor ("Special
        Invitation"); an invitation from a player not tied for the highest is
        ignored. With the On the Terrace Event a tie goes to the tied player
        first in turn order.
        """
        np = self._num_players
        out = []
        for i, v in enumerate(self._visitors):
            vis = VISITORS[v]
            vals = [self._visit_value(p, vis) for p in range(np)]
            best = max(vals)
            cands = [p for p in range(np) if vals[p] == best]
            if len(cands) == 1:
                out.append(cands[0])
            elif self._visitor_pawn[i] in cands:
                out.append(self._visitor_pawn[i])
            elif self._event_modifiers.get("ties_to_first"):
                out.append(next(p for p in self._order if p in cands))
            else:
                out.append(-1)
        return out

    def _t_party(self: LaFleurStateProtocol) -> None:
        np = self._num_players
        dest = self.destinations()
        received: list[list[int]] = [[] for _ in range(np)]
        stay = []
        for i, v in enumerate(self._visitors):
            d = dest[i]
            if d < 0:
                stay.append(i)
                continue
            received[d].append(v)
            if (self._visitor_romance[i] and self._visitor_pawn[i] == d and self._companion[d] < 0
                    and VISITORS[v].allure >= 0):
                self._companion[d] = v  # Rulebook: "Special Invitation", ROMANCING A COMPANION
        for p in range(np):
            old = self._companion[p]
            self._party[p] = received[p] + ([old] if old >= 0 and old not in received[p] else [])
        self._visitors = [self._visitors[i] for i in stay]
        self._visitor_pawn = [self._visitor_pawn[i] for i in stay]
        self._visitor_romance = [self._visitor_romance[i] for i in stay]
        t: list[tuple[Any, ...]] = [("_t_visits", p) for p in self._order]
        t.append(("_t_au_revoir",))
        self._push(t)

    # -- resolving one's Garden Party, in the order the player chooses -----------------------------
    def _party_items(self: LaFleurStateProtocol, p: int) -> list[tuple[str, int]]:
        """What player ``p`` resolves at this Garden Party: ``("visitor", v)`` per Visitor
        (Companion included), ``("bonus", coins)`` for the Generous Guests Event, and
        ``("feature", f)`` per When Visited Garden Feature with an effect to resolve."""
        items: list[tuple[str, int]] = [("visitor", v) for v in self._party[p]]
        bonus = int(self._event_modifiers.get("visitor_coins", 0))
        if bonus and self._party[p]:
            items.append(("bonus", bonus * len(self._party[p])))
        for f in self._features[p]:
            ab = FEATURES[f].ability
            if ab.timing == "when_visited" and not is_static(ab.effect) \
                    and (p != self._automaton or automaton_scores(ab)):
                items.append(("feature", f))
        return items

    def _order_free(self: LaFleurStateProtocol, it: tuple[str, int]) -> bool:
        """True when resolving ``it`` gives the same whatever was resolved before it."""
        kind, x = it
        if kind == "bonus":
            return True
        if kind == "visitor":
            return order_free(VISITORS[x].effect, None)
        ab = FEATURES[x].ability
        return order_free(ab.effect, ab.condition)

    def _t_visits(self: LaFleurStateProtocol, p: int) -> None:
        """Rulebook: "Garden Party", VISITORS: each player "resolves the text on each of the
        Visitor cards in their play area ... in any order they choose" (and, "WHEN VISITED"
        ABILITIES, the When Visited abilities "at this time")."""
        items = self._party_items(p)
        if p == self._automaton:
            # Solo: the opponent takes every conversion "if they are able to": everything
            # else first, the conversions last (decision 4).
            last = [it for it in items if it[0] == "visitor" and "pay" in VISITORS[it[1]].effect]
            self._push([("_t_item", p, it) for it in items if it not in last] +
                       [("_t_item", p, it) for it in last])
            return
        self._t_order(p, tuple(items))

    def _t_order(self: LaFleurStateProtocol, p: int, items: tuple[tuple[str, int], ...]) -> None:
        """Ask which of ``items`` to resolve next (one small decision, docs/architecture.md); when every
        order gives the same (at most one item, or only fixed gains) resolve them as listed."""
        if len(items) <= 1 or all(self._order_free(it) for it in items):
            self._push([("_t_item", p, it) for it in items])
            return
        self._prompt = ("order", items)
        self._ask(P_CHOOSE, p)

    def _t_item(self: LaFleurStateProtocol, p: int, it: tuple[str, int]) -> None:
        """Resolve one Visitor's text, the Event bonus or one When Visited ability (judged now)."""
        kind, x = it
        if kind == "visitor":
            self._push([("_t_step", p, st) for st in steps(self, p, VISITORS[x].effect, VISITORS[x].id)])
        elif kind == "bonus":
            self._tasks.append(("_t_step", p, ("gain", 0, x, 0, EVENTS[self._event].id)))
        else:
            self._apply_ability(p, FEATURES[x].ability, FEATURES[x].id)

    def _t_au_revoir(self: LaFleurStateProtocol) -> None:
        """Every Visitor but Companions goes to the Visitor discard pile; pawns come back."""
        for p in range(self._num_players):
            self._discards[D_VISITOR].extend(v for v in self._party[p] if v != self._companion[p])
            self._party[p] = []
        self._discards[D_VISITOR].extend(self._visitors)
        self._visitors, self._visitor_pawn, self._visitor_romance = [], [], []
        self._romancing = [False] * self._num_players

    # -- End of Round ---------------------------------------------------------------------------
    def _t_end_round(self: LaFleurStateProtocol) -> None:
        """Rulebook: "End of Round", in its order (an end-of-round Event first; our decision)."""
        if self._event >= 0 and EVENTS[self._event].ability.timing == "end_of_round":
            self._tasks.append(("_t_return",))
            self._apply_to_all(EVENTS[self._event].ability, EVENTS[self._event].id)
            return
        self._t_return()

    def _t_return(self: LaFleurStateProtocol) -> None:
        np = self._num_players
        for p in range(np):
            self._placed[p] = [False] * len(self._artisans[p])
            self._artisan_locations[p] = [-1] * len(self._artisans[p])
        self._used_prestige = [False] * np
        self._first_player = (self._first_player + 1) % np
        self._order = [(self._first_player + k) % np for k in range(np)]
        t: list[tuple[Any, ...]] = [("_t_eor_features", p) for p in self._order]
        t += [("_t_character", p) for p in self._order]
        t.append(("_t_reset_check",))
        self._push(t)

    def _t_eor_features(self: LaFleurStateProtocol, p: int) -> None:
        self._push([("_t_feature_ability", p, f) for f in self._features[p]
                    if FEATURES[f].ability.timing == "end_of_round"])

    def _t_character(self: LaFleurStateProtocol, p: int) -> None:
        """Rulebook: "End of Round", CHARACTER ABILITIES (solo: the player may decline, for challenge 10)."""
        c = self._character[p]
        if c < 0:
            return
        todo: list[tuple[Any, ...]] = []
        for ab in CHARACTERS[c].abilities:
            if (p != self._automaton or automaton_scores(ab)) and holds(self, p, ab.condition):
                todo += steps(self, p, ab.effect, CHARACTERS[c].id)
        if not todo:
            return
        if self._solo and p == 0:
            self._prompt = ("character", tuple(todo), CHARACTERS[c].id)
            self._ask(P_ACCEPT, p)
            return
        # Resolved one at a time in the card's order, each condition judged when reached.
        self._push([("_t_char_ability", p, k) for k in range(len(CHARACTERS[c].abilities))])

    def _t_reset_check(self: LaFleurStateProtocol) -> None:
        """Reset tilted Artisans, then CHECK FOR THE GRANDE SOIRÉE."""
        for p in range(self._num_players):
            self._tilted[p] = [False] * len(self._artisans[p])
        if self._final or self._round >= MAX_ROUNDS:
            self._end_reason = (LaFleurTermination.GRANDE_SOIREE_COMPLETE if self._final
                                else LaFleurTermination.ROUND_LIMIT)
            self._tasks.append(("_t_game_end",))
            return
        if max(self._prestige) >= SOIREE:
            self._final = True
            self._trigger = [p for p in range(self._num_players) if self._prestige[p] >= SOIREE]
        self._tasks.append(("_t_start_round",))

    # -- game end --------------------------------------------------------------------------------
    def _t_game_end(self: LaFleurStateProtocol) -> None:
        """Rulebook: "End-of-Game Scoring": Game End abilities in turn order, then Coins and Flower cards."""
        self._end = {"before": list(self._prestige)}
        t: list[tuple[Any, ...]] = [
            ("_t_feature_ability", p, f) for p in self._order for f in self._features[p]
            if FEATURES[f].ability.timing == "game_end"]
        t.append(("_t_bonus",))
        self._push(t)

    def _t_bonus(self: LaFleurStateProtocol) -> None:
        np = self._num_players
        before = self._end["before"]
        self._end["game_end_features"] = [self._prestige[p] - before[p] for p in range(np)]
        self._end["coins"] = [self._coins[p] // COINS_PER_PRESTIGE for p in range(np)]
        self._end["flowers"] = [len(self._hand[p]) // FLOWERS_PER_PRESTIGE for p in range(np)]
        for p in range(np):
            self._prestige[p] += self._end["coins"][p] + self._end["flowers"][p]
        self._phase = P_OVER
        self._cur = TERMINAL
        self._waiting = True


PARTY_LEGAL: Final = {
    P_TAKE: PartyMixin._legal_take,
    P_ACCEPT: PartyMixin._legal_accept,
    P_CHOOSE: PartyMixin._legal_choose,
    P_DISCARD: PartyMixin._legal_discard,
}
"""Legal-action builders of the phases handled here."""

PARTY_DISPATCH: Final[dict[type[Action], Callable[[LaFleurStateProtocol, Any], None]]] = {
    A.TakeFlower: PartyMixin._do_take,
    A.Accept: PartyMixin._do_accept,
    A.Choose: PartyMixin._do_choose,
    A.DiscardFlower: PartyMixin._do_discard,
}
"""Handlers of the actions handled here."""
