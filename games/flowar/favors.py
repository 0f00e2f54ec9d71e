"""Kingdom Favors as data plus a small interpreter (Rulebook: Flowar, "Kingdom Favors").

Each Favor record (``cards.json``) names an ``effect`` and a ``timing``; this
module maps every effect to two small functions:

* ``can(state, seat) -> bool``: the Favor is worth offering now (its timing
  matches the decision point and its effect can change something);
* ``use(state, seat)``: apply it. *Modifiers* set a bit in the turn's active
  Favors (``state._turn_favors``) that later rules read (placement cost, layoff
  table, transport, ...); *immediate* effects act at once, possibly pushing
  sub-decisions.

Timings and the decision points that offer them (Rulebook: "Using a Kingdom
Favor": "Each Favor has a specific timing of activation"; one Favor per turn):

=============  ===================================================
``placement``   turn menu, before placing (1, 9) / any time (17)
``layoff``      turn menu, before firing or passing (2, 11)
``hire``        turn menu, before hiring (5)
``payoff``      turn menu, before paying off a Loan (7)
``now``         turn menu (10, 13, 14, 15, 16, 19, 20)
``acquire``     choosing a Market or Contract line (3)
``delivery``    Travel, before the first Contract (4, 6, 8)
``sell``        selling, before the first card (12)
``strike``      the strike payment decision (18)
=============  ===================================================

Using a Favor discards one of the seat's Contracts delivered in that kingdom
(the most recently delivered one) to the Contract discard pile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from games.flowar import placement as P
from games.flowar.cards import FAVORS, GUILDS, HIRE_COINS, MAX_LOANS, PAYOFF_COINS, WORKERS_PER_GUILD
from games.flowar.flags import FAVOR_ANY_WORKER, FAVOR_CHEAP_PAYOFF, FAVOR_FREE_PLACEMENT, GUILD_SPACE, PAYOFF_SPACE

if TYPE_CHECKING:
    from games.flowar.state_protocol import FlowarStateProtocol


# Phases that offer Favors, by timing (phase numbers are defined in state.py; we use names).
MENU_TIMINGS: Final = frozenset(("placement", "layoff", "hire", "payoff", "now"))
"""Timings offered in the turn menu."""
KEEPS_PASS: Final = frozenset((2, 10, 11))
"""Favors that only change the passing steps: using one still allows passing this turn."""

Can = Callable[["FlowarStateProtocol", int], bool]
Use = Callable[["FlowarStateProtocol", int], None]


def _mod(bit: int) -> Use:
    def use(st: FlowarStateProtocol, seat: int) -> None:
        st._turn_favors |= 1 << bit
    return use


def _not_placed(st: FlowarStateProtocol, seat: int) -> bool:
    return st._turn_placed == 0


def _can_fire(st: FlowarStateProtocol, seat: int) -> bool:
    return not st._turn_fired and not st._turn_hired and sum(st._workers[seat]) > 0


def _can_hire(st: FlowarStateProtocol, seat: int) -> bool:
    return not st._hired[seat] and not st._turn_fired and sum(st._strike_area) > 0


def _cheap_payoff(st: FlowarStateProtocol, seat: int) -> bool:
    return (st._loans[seat] > 0 and not st._board_used[seat] & PAYOFF_SPACE and st._turn_placed == 0
            and st._coins[seat] >= FAVORS[6].params["coins"])


def _second_worker(st: FlowarStateProtocol, seat: int) -> bool:
    return not st._turn_extra and sum(st._workers[seat]) >= (2 if st._turn_placed == 0 else 1) and (
        not st._board_used[seat] & GUILD_SPACE or (bool(st._fellowship) and not st._fellowship_used))


def _use_second(st: FlowarStateProtocol, seat: int) -> None:
    st._turn_extra = True


def _no_wither(st: FlowarStateProtocol, seat: int) -> bool:
    # Decision 14: the whole withering step is skipped, so wilting flowers alone make it useful.
    return bool(st._fresh[seat] or st._wilt[seat]) and not st._wither_exempt[seat]


def _use_no_wither(st: FlowarStateProtocol, seat: int) -> None:
    st._wither_exempt[seat] = True


def _own_guild(st: FlowarStateProtocol, seat: int) -> bool:
    return st._guild[seat] > 0


def _use_own_guild(st: FlowarStateProtocol, seat: int) -> None:
    # Rules revision 3 (decision 31): "The actions on your Player Board, including the one of the
    # Guild, can only be taken once per Round" ("Action Spaces of the Player Board"): the Guild
    # action is taken, so its Action Space is used for the round.
    if st.game.rules_revision >= 3:
        st._board_used[seat] |= GUILD_SPACE
    st._guild_action(seat, st._guild[seat])


def _fellowship(st: FlowarStateProtocol, seat: int) -> bool:
    return st._fellowship > 0


def _use_fellowship(st: FlowarStateProtocol, seat: int) -> None:
    st._guild_action(seat, st._fellowship)


def _torches(st: FlowarStateProtocol, seat: int) -> bool:
    return st._torches[seat] > 0


def _use_torches(st: FlowarStateProtocol, seat: int) -> None:
    st._coins[seat] += FAVORS[14].params["coins_per_torch"] * st._torches[seat]


def _big_loan(st: FlowarStateProtocol, seat: int) -> bool:
    return st._loans[seat] < MAX_LOANS


def _use_big_loan(st: FlowarStateProtocol, seat: int) -> None:
    st._take_loan(seat, FAVORS[15].params["coins"])


def _swap(st: FlowarStateProtocol, seat: int) -> bool:
    w, a = st._workers[seat], st._strike_area
    return any(w[g] and a[t] for g in range(3) for t in range(3) if g != t)


def _use_swap(st: FlowarStateProtocol, seat: int) -> None:
    st._push(("swap", seat))


def _spend(st: FlowarStateProtocol, seat: int) -> bool:
    return st._mp[seat] >= 1


def _use_spend(st: FlowarStateProtocol, seat: int) -> None:
    st._push(("spend", seat))


def _free_pick(st: FlowarStateProtocol, seat: int) -> None:
    st._begin_picks(seat, st._line_grid, 2 if st._line_grid == 0 else 3)


def _delivery_start(st: FlowarStateProtocol, seat: int) -> bool:
    return not st._delivery_contracts


def _use_wild(st: FlowarStateProtocol, seat: int) -> None:
    st._favor8_baskets += 1


def _sell_start(st: FlowarStateProtocol, seat: int) -> bool:
    return st._sold == 0


def _strike_free(st: FlowarStateProtocol, seat: int) -> None:
    st._strike_immune(seat)


def _always(st: FlowarStateProtocol, seat: int) -> bool:
    return True


EFFECTS: Final[dict[str, tuple[Can, Use]]] = {
    "free_placement": (_not_placed, _mod(1)),
    "layoff_table": (_can_fire, _mod(2)),
    "free_pick": (_always, _free_pick),
    "free_transport": (_delivery_start, _mod(4)),
    "free_hire": (_can_hire, _mod(5)),
    "mp_per_contract": (_delivery_start, _mod(6)),
    "cheap_payoff": (_cheap_payoff, _mod(7)),
    "contract_as_basket": (_delivery_start, _use_wild),
    "any_worker": (_not_placed, _mod(9)),
    "no_wither": (_no_wither, _use_no_wither),
    "no_torches": (_can_fire, _mod(11)),
    "double_sale": (_sell_start, _mod(12)),
    "own_guild_action": (_own_guild, _use_own_guild),
    "fellowship_action": (_fellowship, _use_fellowship),
    "coins_per_torch": (_torches, _use_torches),
    "big_loan": (_big_loan, _use_big_loan),
    "second_worker": (_second_worker, _use_second),
    "strike_immunity": (_always, _strike_free),
    "swap_worker": (_swap, _use_swap),
    "mp_for_coins": (_spend, _use_spend),
}
"""Effect name -> (can, use). Every Favor's ``effect`` is a key (checked by the tests)."""

_CAN: Final[tuple[Can, ...]] = tuple(EFFECTS[f.effect][0] for f in FAVORS)
_USE: Final[tuple[Use, ...]] = tuple(EFFECTS[f.effect][1] for f in FAVORS)
TIMING: Final[tuple[str, ...]] = tuple(f.timing for f in FAVORS)
"""``TIMING[favor - 1]``."""

assert WORKERS_PER_GUILD == 5 and HIRE_COINS == 5 and PAYOFF_COINS == 8  # printed values the effects assume


def keeps_placement(st: FlowarStateProtocol, seat: int, favor: int) -> bool:
    """Whether using menu Favor ``favor`` before the placement leaves a placement possible.

    Rulebook: "Place a Worker (this is mandatory)"; Favors 13 and 14: "You still have to
    place a Worker this turn (this action is mandatory)". Decision 13 (docs/rules/flowar.md):
    a Favor used before the placement must not be the prelude of a pass, so it is offered
    only if a Worker can still be placed after it (Favors 2, 10 and 11 only change the
    passing steps and are always offered).
    """
    if favor in KEEPS_PASS:
        return True
    eff = FAVORS[favor - 1].effect
    if eff == "free_placement":
        return st._placeable(seat, mods=FAVOR_FREE_PLACEMENT)
    if eff == "any_worker":
        return st._placeable(seat, mods=FAVOR_ANY_WORKER)
    if eff == "cheap_payoff":
        return st._placeable(seat, mods=FAVOR_CHEAP_PAYOFF)
    if eff == "free_hire":
        area = st._strike_area
        return st._placeable(seat) or any(area[t] and P.hire_keeps_placement(st, seat, 0, t) for t in range(3))
    if eff in ("own_guild_action", "fellowship_action"):
        guild = GUILDS[(st._guild[seat] if eff == "own_guild_action" else st._fellowship) - 1]
        coins = guild.amount if guild.action == "coins" else 1 if guild.action.startswith("take_") else 0
        flower = guild.action == "take_flower" and any(x >= 0 for x in st._market)
        if eff == "own_guild_action" and st.game.rules_revision >= 3:
            board = st._board_used[seat]
            st._board_used[seat] = board | GUILD_SPACE  # the Guild space is used after the Favor (decision 31)
            try:
                return st._placeable(seat, coins, flower=flower)
            finally:
                st._board_used[seat] = board
        return st._placeable(seat, coins, flower=flower)
    if eff == "coins_per_torch":
        return st._placeable(seat, FAVORS[14].params["coins_per_torch"] * st._torches[seat])
    if eff == "big_loan":
        return st._placeable(seat, FAVORS[15].params["coins"])
    if eff == "mp_for_coins":
        return st._placeable(seat, FAVORS[19].params["coins_per_mp"] * min(FAVORS[19].params["max_mp"], st._mp[seat]))
    if eff == "swap_worker":
        w, a = st._workers[seat], st._strike_area
        return any(P.swap_keeps_placement(st, seat, g, t)
                   for g in range(3) for t in range(3) if g != t and w[g] and a[t])
    return st._placeable(seat)


def can_use(state: FlowarStateProtocol, seat: int, favor: int) -> bool:
    """Whether Favor ``favor`` can usefully be used by ``seat`` at this decision point."""
    return _CAN[favor - 1](state, seat)


def use(state: FlowarStateProtocol, seat: int, favor: int) -> None:
    """Apply Favor ``favor`` for ``seat`` (the Contract discard is done by the caller)."""
    _USE[favor - 1](state, seat)


def mod_bit(favor: int) -> int:
    """The ``_turn_favors`` bit of a modifier Favor."""
    return 1 << favor
