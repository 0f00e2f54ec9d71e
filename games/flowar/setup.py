"""Game Setup and Round Setup of Flowar, as agenda tasks.

Rulebook: Flowar, "Game Setup" (steps 1-12) and "Round Setup"; solo: "Setup"
and Taxus's "Round Setup" (his own steps are in :mod:`games.flowar.taxus`).

Each ``_t_*`` task either finishes at once (returns False) or waits for a
chance outcome or a decision (returns True after setting the phase), pushing
itself back first when it has more to do (e.g. one card per empty Market space).
Mixed into :class:`games.flowar.state.FlowarState`.
"""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import trait

from games.api import CHANCE
from games.flowar import actions as A
from games.flowar.cards import (
    CONTRACT_INDEX,
    FLOWER_BASKETS,
    FLOWER_COLOUR,
    STARTING_COINS,
    TAXUS_CARDS,
)
from games.flowar.phases import C_CONTRACT, C_EFF, C_FAVOR, C_FLOWER, C_GUILD, C_START, C_WORKER, D_GUILD, D_KEEP
from games.flowar.state_protocol import FlowarStateProtocol

TO_SEAT: Final = 100
"""Chance target of a card dealt to a player: ``TO_SEAT + seat`` (else a grid slot)."""
MARKET_SLOTS: Final = 9
CONTRACT_SLOTS: Final = 4


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class SetupMixin(FlowarStateProtocol):
    """Setup and round-setup tasks."""

    # -- setup (Rulebook: "Game Setup") ----------------------------------------------------
    def _setup_tasks(self: FlowarStateProtocol) -> list[tuple[Any, ...]]:
        n = self._num_players
        tasks: list[tuple[Any, ...]] = [("favors",), ("eff", 0), ("eff", 1), ("eff", 2), ("market", True)]
        tasks += [("baskets", s) for s in range(n)]
        tasks += [("deal_contracts", s) for s in range(n)]
        tasks += [("keep", s) for s in range(n)]
        tasks += [("reveal_kept",), ("contracts_fill",)]
        if not self._solo:
            tasks += [("draw_guilds", n + 1), ("guild_workers",)]
        tasks += [("start_player",), ("round",)]
        return tasks

    def _t_favors(self: FlowarStateProtocol) -> bool:
        if self._favors_dealt < 6:
            self._agenda.append(("favors",))
            return self._wait(C_FAVOR, CHANCE)
        return False

    def _t_eff(self: FlowarStateProtocol, k: int) -> bool:
        self._chance_target = k
        return self._wait(C_EFF, CHANCE)

    def _t_market(self: FlowarStateProtocol, setup: bool) -> bool:
        """Fill empty Market spaces; at setup (and round 3) all five colours must show."""
        market = self._market
        for slot in range(MARKET_SLOTS):
            if market[slot] < 0 and self._flowers_left():
                self._agenda.append(("market", setup))
                self._chance_target = slot
                return self._wait(C_FLOWER, CHANCE)
        if setup:
            slot = self._redraw_slot()
            if slot >= 0:
                # Rulebook: "Game Setup", step 5: discard a repeated one and draw again. The table
                # saw it: it is recorded, in order, for every observation (``market_redraws``).
                self._aside.append(market[slot])
                self._redraws.append([self._round, slot, market[slot]])
                market[slot] = -1
                self._flowers_left()  # rebuild an empty deck from the discard pile
                self._agenda.append(("market", True))
                self._chance_target = slot
                return self._wait(C_FLOWER, CHANCE)
            for x in self._aside:  # "shuffle them to form a deck"
                self._flower_deck.append(x)
                self._flower_in_deck[x] = 1
            self._flower_deck.sort()
            self._aside: list[int] = []
        return False

    def _redraw_slot(self: FlowarStateProtocol) -> int:
        """The Market slot to redraw at setup, or -1 (all colours present, or none left to find)."""
        counts = [0] * 5
        for x in self._market:
            if x >= 0:
                counts[FLOWER_COLOUR[x]] += 1
        missing = {c for c in range(5) if counts[c] == 0}
        # "draw Cards until all 5 different flowers are present"; an empty deck is rebuilt
        # from the discard pile ("If at any time the Flower Deck runs out..."), so both count.
        if not missing or not any(FLOWER_COLOUR[x] in missing
                                  for pile in (self._flower_deck, self._flower_discard) for x in pile):
            return -1
        top = max(counts)
        # Decision (docs/rules/flowar.md): discard a card of the most repeated colour, last slot first.
        for slot in range(MARKET_SLOTS - 1, -1, -1):
            x = self._market[slot]
            if x >= 0 and counts[FLOWER_COLOUR[x]] == top:
                return slot
        return -1

    def _t_baskets(self: FlowarStateProtocol, seat: int) -> bool:
        # Rulebook: "Game Setup", step 6: deal Flower cards until 3 or 4 Baskets.
        if sum(FLOWER_BASKETS[x] for x in self._fresh[seat]) < 3 and self._flowers_left():
            self._agenda.append(("baskets", seat))
            self._chance_target = TO_SEAT + seat
            return self._wait(C_FLOWER, CHANCE)
        return False

    def _t_deal_contracts(self: FlowarStateProtocol, seat: int) -> bool:
        if len(self._dealt[seat]) < 2 and self._contracts_left():
            self._agenda.append(("deal_contracts", seat))
            self._chance_target = TO_SEAT + seat
            return self._wait(C_CONTRACT, CHANCE)
        return False

    def _t_keep(self: FlowarStateProtocol, seat: int) -> bool:
        if not self._dealt[seat]:
            return False
        return self._wait(D_KEEP, seat)

    def _t_reveal_kept(self: FlowarStateProtocol) -> bool:
        self._kept_hidden = False
        return False

    def _t_contracts_fill(self: FlowarStateProtocol) -> bool:
        """Fill empty Contract grid spaces: setup leftovers first, then the deck."""
        for slot in range(CONTRACT_SLOTS):
            if self._contract_grid[slot] < 0 and (self._unchosen or self._contracts_left()):
                self._agenda.append(("contracts_fill",))
                self._chance_target = slot
                return self._wait(C_CONTRACT, CHANCE)
        return False

    def _t_draw_guilds(self: FlowarStateProtocol, count: int) -> bool:
        if len(self._guilds) < count:
            if len(self._guild_pool) == count - len(self._guilds):  # all of them: no chance involved
                self._guilds = sorted(self._guilds + self._guild_pool)
                self._guild_pool: list[int] = []
                return False
            self._agenda.append(("draw_guilds", count))
            return self._wait(C_GUILD, CHANCE)
        return False

    def _t_guild_workers(self: FlowarStateProtocol) -> bool:
        # Rulebook: "Game Setup", step 10 / "Round Setup": 5 Workers from the bag on each Guild Tile.
        for g in self._guilds:
            if not any(self._guild_workers[g]) and any(self._bag):
                self._agenda.append(("guild_workers",))
                self._chance_target = g
                return self._wait(C_WORKER, CHANCE)
        return False

    def _t_start_player(self: FlowarStateProtocol) -> bool:
        if self._solo:  # Rulebook: solo "Setup": your marker first, Taxus second
            self._set_start(0)
            return False
        return self._wait(C_START, CHANCE)

    def _set_start(self: FlowarStateProtocol, seat: int) -> None:
        self._start = seat
        n = self._num_players
        self._track = [(seat + k) % n for k in range(n)]
        for pos, s in enumerate(self._track):
            self._coins[s] = STARTING_COINS[pos]
        if self._solo:
            # Rulebook: solo "Setup": "Set up the game as in a two-player game"; Taxus holds the
            # second marker, so he starts with the second seat's Coins (decision 29).
            self._track.append(self._taxus_seat)
            self._taxus_coins = STARTING_COINS[1]

    # -- rounds (Rulebook: "Round Setup") --------------------------------------------------
    def _t_round(self: FlowarStateProtocol) -> bool:
        self._round += 1
        r = self._round
        tasks: list[tuple[Any, ...]] = []
        if r > 1:
            tasks += [("eff", 0), ("eff", 1), ("eff", 2)]
        if self._solo:
            tasks += [("draw_guilds", 2), ("guild_workers",)]
        elif r > 1:
            tasks += [("guild_workers",)]
        if r == 3:
            tasks += [("refresh",), ("contracts_fill",), ("market", True)]
        tasks += [("choose_guild", s) for s in self._track]
        tasks += [("taxus_setup",)] if self._solo else [("fellowship",)]
        tasks += [("turns",)]
        self._push(*tasks)
        return False

    def _t_refresh(self: FlowarStateProtocol) -> bool:
        # Rulebook: "Round Setup": before round 3, new Favors, fresh Contract and Flower grids.
        self._favor_slots[0:3] = self._favor_slots[3:6]
        self._favor_slots[3:6] = [0, 0, 0]
        for slot, x in enumerate(self._contract_grid):
            if x >= 0:
                self._contract_discard.append(x)
                self._contract_grid[slot] = -1
        self._contract_deck_out()
        for slot, x in enumerate(self._market):
            if x >= 0:
                self._flower_discard.append(x)
                self._market[slot] = -1
        if self._solo:  # Rulebook: Taxus "End of the Round": reshuffle all Taxus cards before round 3
            self._taxus_deck = list(range(len(TAXUS_CARDS)))
            self._taxus_discard: list[int] = []
        return False

    def _t_choose_guild(self: FlowarStateProtocol, seat: int) -> bool:
        free = [g for g in self._guilds if self._guild_owner[g] < 0]
        if not free:
            return False
        if seat == self._taxus_seat:
            # Rulebook: solo "Round Setup": Taxus first takes the highest number; else the one left.
            self._take_guild(seat, max(free))
            return False
        if len(free) == 1:
            self._take_guild(seat, free[0])
            return False
        return self._wait(D_GUILD, seat)

    def _take_guild(self: FlowarStateProtocol, seat: int, g: int) -> None:
        self._guild_owner[g] = seat
        if seat == self._taxus_seat:
            self._taxus_guild = g
            self._taxus_worker_supply = self._guild_workers[g][:]
        else:
            self._guild[seat] = g
            self._workers[seat] = self._guild_workers[g][:]
        self._guild_workers[g] = [0, 0, 0]

    def _t_fellowship(self: FlowarStateProtocol) -> bool:
        # Rulebook: "Round Setup": the remaining Guild Tile goes to the Fellowship Petal,
        # its 5 Workers to the Strike Area (this may start the round with a strike).
        free = [g for g in self._guilds if self._guild_owner[g] < 0]
        self._order = sorted(range(self._num_players), key=lambda s: self._guild[s])
        if not free:
            return False
        g = free[0]
        self._fellowship = g
        for t in range(3):
            self._strike_area[t] += self._guild_workers[g][t]
        self._guild_workers[g] = [0, 0, 0]
        self._push(*[("strike_check", t, -1, False) for t in range(3)])
        return False

    # -- setup decisions ---------------------------------------------------------------------
    def _do_keep(self: FlowarStateProtocol, a: A.KeepContract) -> None:
        seat = self._cur
        x = CONTRACT_INDEX[a.card]
        dealt = self._dealt[seat]
        self._contracts[seat].append(x)
        self._unchosen.extend(c for c in dealt if c != x)
        self._gave[seat] = [c for c in dealt if c != x]
        self._unchosen.sort()
        self._dealt[seat] = []

    def _do_choose_guild(self: FlowarStateProtocol, a: A.ChooseGuild) -> None:
        self._take_guild(self._cur, a.guild)
