"""Turn order, strikes, layoffs, Loans, passing and the end of a round.

Rulebook: Flowar, "Round Overview", "Strikes", "Firing Workers" (the layoff
itself), "Loans", "Passing Your Turn", "End of the Round", "End of the Game".
Mixed into :class:`games.flowar.state.FlowarState`.
"""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import trait

from games.api import TERMINAL, Action
from games.flowar import actions as A
from games.flowar.cards import (
    EXCHANGE_MAX_MP,
    LAYOFF_TABLE,
    LAYOFF_TABLE_FAVOR2,
    TORCH_COUNT,
    exchange_rate,
    layoff_coins,
)
from games.flowar.flags import FAVOR_LAYOFF_TABLE, FAVOR_NO_TORCHES, MAINTENANCE_SPACE
from games.flowar.phases import D_EXCH, D_STRIKE, P_OVER
from games.flowar.state_protocol import FlowarStateProtocol


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class RoundsMixin(FlowarStateProtocol):
    """Turns in Guild order, strikes, passing, end of round and game."""

    def _t_turns(self: FlowarStateProtocol) -> bool:
        self._turn_index = -1
        self._new_track: list[int] = []
        self._push(("next_turn",))
        return False

    def _t_next_turn(self: FlowarStateProtocol) -> bool:
        order = self._order
        k = len(order)
        for step in range(1, k + 1):
            i = (self._turn_index + step) % k
            s = order[i]
            if (self._taxus_passed if s == self._taxus_seat else self._passed[s]):
                continue
            self._turn_index = i
            if s == self._taxus_seat:
                self._turn_seat = -1
                self._push(("taxus_turn",))
                return False
            self._turn_seat = s
            self._reset_turn()
            self._push(("menu", s))
            return False
        self._turn_seat = -1
        self._push(("round_end",))
        return False

    # -- strikes (Rulebook: "Strikes") -------------------------------------------------------
    def _t_strike_check(self: FlowarStateProtocol, t: int, cause: int, layoff: bool) -> bool:
        if self._strike[t] or self._strike_area[t] < 3:
            return False
        self._strike[t] = True
        if layoff and cause >= 0:
            self._layoff_strikes[cause] |= 1 << t
        order = self._order if self._order else self._track
        self._push(*[("strike_pay", s, t) for s in order if s != self._taxus_seat])
        return False

    def _t_strike_pay(self: FlowarStateProtocol, seat: int, t: int) -> bool:
        if not self._workers[seat][t]:
            return False
        self._strike_type = t
        self._turn_loop: tuple[Any, ...] = ("strike_pay", seat, t)
        return self._wait(D_STRIKE, seat)

    def _strike_actions(self: FlowarStateProtocol, seat: int) -> list[Action]:
        k = self._workers[seat][self._strike_type]
        out: list[Action] = list(_PAY_STRIKE[: min(k, self._coins[seat]) + 1])
        if self._loans[seat] < 2:
            out.append(A.TAKE_LOAN)
        # Favor 18 "In your turn" only ("Kingdom Favors"); rules revision 1 also offered it at a
        # strike called in another seat's turn (FlowarGame.RULES_REVISIONS)
        in_turn = seat == self._turn_seat
        if (in_turn and not self._turn_favor_used) or (not in_turn and self.game.rules_revision < 2):
            out.extend(self._favor_actions(seat, ("strike",)))
        return out

    def _do_pay_strike(self: FlowarStateProtocol, a: A.PayStrike) -> None:
        seat, t = self._cur, self._strike_type
        unpaid = self._workers[seat][t] - a.count
        self._coins[seat] -= a.count
        self._workers[seat][t] -= unpaid
        self._strike_area[t] += unpaid
        self._strike_type = -1

    def _strike_immune(self: FlowarStateProtocol, seat: int) -> None:
        """Kingdom Favor 18: keep every Worker of the striking type without paying."""
        self._strike_type = -1

    def _strike_off(self: FlowarStateProtocol, t: int, seat: int) -> bool:
        """Call off the strike of type ``t`` if fewer than 3 remain; True when called off."""
        if self._strike[t] and self._strike_area[t] < 3:
            self._strike[t] = False
            if seat >= 0:
                self._strikes_off[seat] += 1
            return True
        return False

    # -- loans, layoffs (shared by turn, passing and Favors) -------------------------------
    def _take_loan(self: FlowarStateProtocol, seat: int, coins: int) -> None:
        # Rulebook: "Loans": +5 Coins and 1 Torch; at most 2 at a time.
        self._loans[seat] += 1
        self._loans_taken[seat] += 1
        self._coins[seat] += coins
        self._torches[seat] += self._torches_from_supply(1)

    def _torch_supply(self: FlowarStateProtocol) -> int:
        """Torches of Discontent left in the Main Supply (Components: "20 Torches of Discontent")."""
        return TORCH_COUNT - sum(self._torches) - self._taxus_torches

    def _torches_from_supply(self: FlowarStateProtocol, wanted: int) -> int:
        """How many of ``wanted`` Torches can be taken now: at most what the supply holds.

        Decision (docs/rules/flowar.md, "Supplies"): the 20 Torches are a limit;
        a Torch to take from an empty supply is not taken, the action still happens.
        """
        return min(wanted, self._torch_supply())

    def _lay_off(self: FlowarStateProtocol, seat: int, counts: list[int] | tuple[int, int, int]) -> None:
        """Fire Workers to the Strike Area (Rulebook: "Firing Workers"); strikes are checked next."""
        mods = self._turn_favors if seat == self._turn_seat else 0
        table = LAYOFF_TABLE_FAVOR2 if mods & FAVOR_LAYOFF_TABLE else LAYOFF_TABLE
        self._coins[seat] += layoff_coins(counts, table)
        total = sum(counts)
        if not mods & FAVOR_NO_TORCHES:
            self._torches[seat] += self._torches_from_supply(total)
        self._fired[seat] += total
        w = self._workers[seat]
        for t in range(3):
            w[t] -= counts[t]
            self._strike_area[t] += counts[t]
        self._push(*[("strike_check", t, seat, True) for t in range(3) if counts[t]])

    # -- passing (Rulebook: "Passing Your Turn") --------------------------------------------
    def _do_pass(self: FlowarStateProtocol, a: A.Pass) -> None:
        seat = self._cur
        self._passed[seat] = True
        self._push(("pass_fire", seat), ("pass_track", seat), ("pass_wither", seat), ("pass_exchange", seat),
                   ("next_turn",))

    def _t_pass_fire(self: FlowarStateProtocol, seat: int) -> bool:
        w = self._workers[seat]
        if sum(w):
            self._lay_off(seat, w[:])
        return False

    def _t_pass_track(self: FlowarStateProtocol, seat: int) -> bool:
        self._new_track.append(seat)
        return False

    def _t_pass_wither(self: FlowarStateProtocol, seat: int) -> bool:
        if self._board_used[seat] & MAINTENANCE_SPACE or self._wither_exempt[seat]:
            return False  # Maintenance or Kingdom Favor 10: no withering this round
        self._flower_discard.extend(self._wilt[seat])
        self._wilt[seat] = self._fresh[seat]
        self._fresh[seat] = []
        return False

    def _exchange_max(self: FlowarStateProtocol, seat: int) -> int:
        return min(EXCHANGE_MAX_MP, self._coins[seat] // exchange_rate(self._round))

    def _t_pass_exchange(self: FlowarStateProtocol, seat: int) -> bool:
        top = self._exchange_max(seat)
        if top <= 0:
            return False
        if self._round == 4:  # mandatory in the final round
            self._exchange(seat, top)
            return False
        return self._wait(D_EXCH, seat)

    def _exchange(self: FlowarStateProtocol, seat: int, mp: int) -> None:
        self._coins[seat] -= mp * exchange_rate(self._round)
        self._mp[seat] += mp
        if mp:
            self._exchanged[seat] |= 1 << (self._round - 1)

    def _do_exchange_mp(self: FlowarStateProtocol, a: A.ExchangeMP) -> None:
        self._exchange(self._cur, a.mp)

    # -- end of the round / game (Rulebook: "End of the Round", "End of the Game") ---------
    def _t_round_end(self: FlowarStateProtocol) -> bool:
        # Rules revision 3 (decision 22): "The game ends after Round 4. Do not perform the end of
        # Round steps after Round 4" ("End of the Game"); Taxus's exchange is one of them.
        if self._solo and (self._round < 4 or self.game.rules_revision < 3):
            self._taxus_exchange()
        if self._round == 4:
            self._push(("game_end",))
            return False
        for g in self._guilds:
            self._guild_owner[g] = -1
        if self._solo:
            self._guild_pool = sorted(self._guild_pool + self._guilds)
            self._guilds: list[int] = []
            self._taxus_guild = 0
            self._taxus_passed = False
        self._fellowship = 0
        self._fellowship_used = False
        # Rulebook: "End of the Round", step 2: "Discard the Efficiency Tiles used during this Round" (face up)
        self._efficiency_discard.extend(v for v in self._efficiency if v)
        self._efficiency = [0, 0, 0]
        self._bag = [self._bag_full] * 3
        self._strike_area = [0, 0, 0]
        self._strike = [False, False, False]
        self._spaces = [[0, 0, 0] for _ in range(5)]
        self._parked = [0, 0, 0]
        n = self._num_players
        self._guild = [0] * n
        self._workers = [[0, 0, 0] for _ in range(n)]
        self._board_used = [0] * n
        self._hired = [False] * n
        self._wither_exempt = [False] * n
        self._passed = [False] * n
        self._track = self._new_track
        self._new_track = []
        self._order: list[int] = []
        self._push(("round",))
        return False

    def _t_game_end(self: FlowarStateProtocol) -> bool:
        self._phase = P_OVER
        self._cur = TERMINAL
        return True


_PAY_STRIKE: Final[tuple[A.PayStrike, ...]] = tuple(A.make(A.PayStrike, j) for j in range(31))
"""Interned strike payments, by the number of Workers paid for (0..30)."""
