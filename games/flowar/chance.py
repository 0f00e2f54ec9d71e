"""Chance nodes of Flowar: their outcomes, probabilities, fast sampling and effects.

docs/architecture.md, "games: the rules engines": every draw is a chance node whose outcomes are what remains. Decks
are sorted lists (sets), so a draw is uniform over the cards left; the Worker
bag and the Efficiency Tile supply are counts, so their draws are weighted
(a Guild Tile's five Workers: the multivariate hypergeometric law). An empty
Flower or Contract deck is rebuilt from its discard pile when a card is needed
(Rulebook: "If at any time the ... Deck runs out, shuffle the discard Cards").
Mixed into :class:`games.flowar.state.FlowarState`.
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb
from typing import Final

from mypy_extensions import trait

from games.api import Action
from games.flowar import actions as A
from games.flowar.cards import (
    CONTRACT_IDS,
    CONTRACT_INDEX,
    EFFICIENCY_VALUES,
    FLOWER_IDS,
    FLOWER_INDEX,
    TAXUS_CARDS,
    WORKERS_PER_GUILD,
)
from games.flowar.phases import C_CONTRACT, C_EFF, C_FAVOR, C_FLOWER, C_GUILD, C_START, C_WORKER
from games.flowar.setup import TO_SEAT
from games.flowar.state_protocol import FlowarStateProtocol
from games.trusted import below


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class ChanceMixin(FlowarStateProtocol):
    """Outcomes, sampling and application of the chance actions."""

    # -- decks ----------------------------------------------------------------------------
    def _flowers_left(self: FlowarStateProtocol) -> bool:
        if not self._flower_deck and self._flower_discard:  # "shuffle the discard Cards to create a new deck"
            self._flower_deck = sorted(self._flower_discard)
            for x in self._flower_deck:
                self._flower_in_deck[x] = 1
            self._flower_discard: list[int] = []
        return bool(self._flower_deck)

    def _contracts_left(self: FlowarStateProtocol) -> bool:
        self._contract_deck_out()
        return bool(self._contract_deck)

    def _contract_deck_out(self: FlowarStateProtocol) -> None:
        """Rulebook, "Contract Petal": "If at any time the Contract Deck runs out, shuffle the discard
        Cards to form a new deck" — at once, not when a card is next needed (the Flower deck's rule,
        "Market Petal", says "when you need to draw from it"). Called after every draw from the deck
        and every discard (after the last of cards discarded together), so an empty deck never sits
        beside a discard pile. The deck is a set whose draws are chance outcomes: shuffling is moving."""
        if not self._contract_deck and self._contract_discard:
            self._contract_deck = sorted(self._contract_discard)
            for x in self._contract_deck:
                self._contract_in_deck[x] = 1
            self._contract_discard: list[int] = []

    def _weighted(self: FlowarStateProtocol) -> tuple[tuple[Action, ...], list[int]]:
        """Outcomes and integer weights of the weighted chance nodes (Workers, tiles)."""
        if self._phase == C_WORKER:
            return _worker_outcomes(tuple(self._bag))
        return _DRAW_EFF, [self._efficiency_supply[v] for v in EFFICIENCY_VALUES]

    def _uniform(self: FlowarStateProtocol) -> list[Action]:
        ph = self._phase
        if ph == C_FLOWER:
            return [_DRAW_FLOWER[x] for x in self._flower_deck]
        if ph == C_CONTRACT:
            pool = self._unchosen if (self._unchosen and self._chance_target < TO_SEAT) else self._contract_deck
            return [_DRAW_CONTRACT[x] for x in pool]
        if ph == C_FAVOR:
            return [_DEAL_FAVOR[f] for f in self._favor_pool]
        if ph == C_GUILD:
            return [_DRAW_GUILD[g] for g in self._guild_pool]
        if ph == C_START:
            return list(_START[: self._num_players])
        return [_REVEAL_TAXUS[x] for x in self._taxus_deck]

    def _chance_outcomes(self: FlowarStateProtocol) -> list[tuple[Action, Fraction]]:
        if self._phase in (C_WORKER, C_EFF):
            acts, weights = self._weighted()
            total = sum(weights)
            return [(acts[i], Fraction(w, total)) for i, w in enumerate(weights) if w]
        outcomes = self._uniform()
        p = Fraction(1, len(outcomes))
        return [(a, p) for a in outcomes]

    def _sample_chance(self: FlowarStateProtocol, rng: random.Random) -> Action:
        ph = self._phase
        if ph == C_FLOWER:
            deck = self._flower_deck
            return _DRAW_FLOWER[deck[below(rng, len(deck))]]
        if ph == C_WORKER:  # five draws without replacement: the hypergeometric law of _weighted
            bag = self._bag[:]
            got = [0, 0, 0]
            left = bag[0] + bag[1] + bag[2]
            for _ in range(min(WORKERS_PER_GUILD, left)):
                r = below(rng, left)
                t = 0 if r < bag[0] else 1 if r < bag[0] + bag[1] else 2
                bag[t] -= 1
                got[t] += 1
                left -= 1
            key = (got[0], got[1], got[2])
            action = _DRAW_WORKERS.get(key)
            if action is None:
                action = _DRAW_WORKERS[key] = A.make(A.DrawWorkers, *got)
            return action
        if ph == C_EFF:
            acts, weights = self._weighted()
            r = below(rng, sum(weights))
            for i, w in enumerate(weights):
                if r < w:
                    return acts[i]
                r -= w
        outcomes = self._uniform()
        return outcomes[below(rng, len(outcomes))]

    def _chance_legal(self: FlowarStateProtocol, action: Action) -> bool:
        ph, t = self._phase, type(action)
        if t is A.DrawFlower:
            x = FLOWER_INDEX.get(action.card, -1)  # type: ignore[attr-defined]  # t is A.DrawFlower: not narrowed
            return ph == C_FLOWER and x >= 0 and bool(self._flower_in_deck[x])
        if t is A.DrawContract:
            x = CONTRACT_INDEX.get(action.card, -1)  # type: ignore[attr-defined]  # t is A.DrawContract: not narrowed
            if ph != C_CONTRACT or x < 0:
                return False
            if self._unchosen and self._chance_target < TO_SEAT:
                return x in self._unchosen
            return bool(self._contract_in_deck[x])
        if t is A.DrawWorkers:
            # the type: ignore below: Action union: t is A.DrawWorkers, which mypy does not narrow
            got = (action.trentis, action.humans, action.foxes)  # type: ignore[attr-defined]
            bag = self._bag
            return (ph == C_WORKER and all(got[i] <= bag[i] for i in range(3))
                    and sum(got) == min(WORKERS_PER_GUILD, sum(bag)))
        if t is A.DrawEfficiency:
            # the type: ignore below: Action union: t is A.DrawEfficiency, which mypy does not narrow
            return ph == C_EFF and self._efficiency_supply.get(action.value, 0) > 0  # type: ignore[attr-defined]
        return action in self._uniform() if ph not in (C_WORKER, C_EFF, C_FLOWER, C_CONTRACT) else False

    def _do_deal_favor(self: FlowarStateProtocol, a: A.DealFavor) -> None:
        self._favor_pool.remove(a.favor)
        self._favor_slots[self._favors_dealt] = a.favor
        self._favors_dealt += 1

    def _do_draw_efficiency(self: FlowarStateProtocol, a: A.DrawEfficiency) -> None:
        self._efficiency_supply[a.value] -= 1
        self._efficiency[self._chance_target] = a.value

    def _do_draw_flower(self: FlowarStateProtocol, a: A.DrawFlower) -> None:
        x = FLOWER_INDEX[a.card]
        self._flower_deck.remove(x)
        self._flower_in_deck[x] = 0
        if self._chance_target >= TO_SEAT:
            self._fresh[self._chance_target - TO_SEAT].append(x)
        else:
            self._market[self._chance_target] = x

    def _do_draw_contract(self: FlowarStateProtocol, a: A.DrawContract) -> None:
        x = CONTRACT_INDEX[a.card]
        if self._unchosen and self._chance_target < TO_SEAT:
            self._unchosen.remove(x)
        else:
            self._contract_deck.remove(x)
            self._contract_in_deck[x] = 0
            self._contract_deck_out()
        if self._chance_target >= TO_SEAT:
            self._dealt[self._chance_target - TO_SEAT].append(x)
        else:
            self._contract_grid[self._chance_target] = x

    def _do_draw_guild(self: FlowarStateProtocol, a: A.DrawGuild) -> None:
        self._guild_pool.remove(a.guild)
        self._guilds.append(a.guild)
        self._guilds.sort()

    def _do_draw_workers(self: FlowarStateProtocol, a: A.DrawWorkers) -> None:
        got = (a.trentis, a.humans, a.foxes)
        for t in range(3):
            self._bag[t] -= got[t]
            self._guild_workers[self._chance_target][t] += got[t]

    def _do_start(self: FlowarStateProtocol, a: A.ChooseStartPlayer) -> None:
        self._set_start(a.seat)


_DRAW_FLOWER: Final[tuple[A.DrawFlower, ...]] = tuple(A.make(A.DrawFlower, c) for c in FLOWER_IDS)
_DRAW_CONTRACT: Final[tuple[A.DrawContract, ...]] = tuple(A.make(A.DrawContract, c) for c in CONTRACT_IDS)


def _worker_outcomes(bag: tuple[int, ...]) -> tuple[tuple[Action, ...], list[int]]:
    """Compositions of the next Guild Tile's Workers and their integer weights
    (products of binomials: the multivariate hypergeometric law)."""
    got = _WORKER_CACHE.get(bag)
    if got is None:
        k = min(WORKERS_PER_GUILD, sum(bag))
        acts: list[Action] = []
        weights: list[int] = []
        for a in range(min(k, bag[0]) + 1):
            for b in range(min(k - a, bag[1]) + 1):
                c = k - a - b
                if c <= bag[2]:
                    acts.append(A.make(A.DrawWorkers, a, b, c))
                    weights.append(comb(bag[0], a) * comb(bag[1], b) * comb(bag[2], c))
        got = _WORKER_CACHE[bag] = (tuple(acts), weights)
    return got


_DRAW_WORKERS: Final[dict[tuple[int, int, int], A.DrawWorkers]] = {}
"""Interned Worker draws by counts (filled as drawn)."""
_WORKER_CACHE: Final[dict[tuple[int, ...], tuple[tuple[Action, ...], list[int]]]] = {}
_DRAW_EFF: Final[tuple[A.DrawEfficiency, ...]] = tuple(A.make(A.DrawEfficiency, v) for v in EFFICIENCY_VALUES)
_REVEAL_TAXUS: Final[tuple[A.RevealTaxus, ...]] = tuple(A.make(A.RevealTaxus, t.id) for t in TAXUS_CARDS)
_DEAL_FAVOR: Final[dict[int, A.DealFavor]] = {f: A.make(A.DealFavor, f) for f in range(1, 21)}
_DRAW_GUILD: Final[dict[int, A.DrawGuild]] = {g: A.make(A.DrawGuild, g) for g in range(1, 6)}
_START: Final[tuple[A.ChooseStartPlayer, ...]] = tuple(A.make(A.ChooseStartPlayer, s) for s in range(4))
"""Interned chance outcomes by number (Kingdom Favors 1..20, Guild tiles 1..5, seats 0..3)."""
