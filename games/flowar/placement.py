"""The mandatory placement after an action that calls a strike or calls it off (rules revision 3).

Rulebook: Flowar, "Place a Worker (this is mandatory)", "Strikes", "Hiring Workers" ("This may
result in a strike being called off. If that happens, retrieve the Strike Diorama"), Kingdom
Favor 19 ("This could lead to a strike or call it off"). Decisions 13 and 32 in
docs/rules/flowar.md: before the placement, an action is offered only if a Worker can still be
placed in the position it leads to, the strikes it calls or calls off included.

Functions of the state (:class:`games.flowar.state_protocol.FlowarStateProtocol`), as
:mod:`games.flowar.favors`; the turn menu (:mod:`games.flowar.turn`) and Favors 5 and 19 call
them. Revisions 1 and 2 judged these actions with the strikes as they were
(``state._placeable`` alone); these functions keep that behaviour at those revisions. The
successor position is evaluated only where a strike can change, off the common path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from games.flowar import actions as A

if TYPE_CHECKING:
    from games.flowar.state_protocol import FlowarStateProtocol

_ONE: Final[tuple[tuple[int, int, int], ...]] = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
_OUT: Final[tuple[tuple[int, int, int], ...]] = ((-1, 0, 0), (0, -1, 0), (0, 0, -1))
"""A Worker of each type joining the seat (a hire) / leaving the Strike Area."""
_SWAP_DELTA: Final[tuple[tuple[tuple[int, int, int], ...], ...]] = tuple(
    tuple((-1 if g == 0 else 1 if t == 0 else 0, -1 if g == 1 else 1 if t == 1 else 0,
           -1 if g == 2 else 1 if t == 2 else 0) for t in range(3)) for g in range(3))
"""The seat's Worker changes of a Kingdom Favor 19 swap: ``_SWAP_DELTA[give][take]``."""

Probe = tuple[A.Fire, tuple[tuple[int, int], tuple[int, int, int]]]
"""A layoff and (its Coins by the layoff table and by Favor 2's, the Workers it removes)."""


def strike_change(st: FlowarStateProtocol, to_area: tuple[int, int, int]) -> tuple[int, int]:
    """The strikes ``(called off, called)``, bit masks of Worker types, when ``to_area`` Workers
    join the Strike Area (negative: leave it). Rulebook, "Strikes": a strike is called when 3
    Workers of a type are there and called off below 3 (decision 4)."""
    area, strike = st._strike_area, st._strike
    off = called = 0
    for t in range(3):
        d = to_area[t]
        if d < 0 and strike[t] and area[t] + d < 3:
            off |= 1 << t
        elif d > 0 and not strike[t] and area[t] + d >= 3:
            called |= 1 << t
    return off, called


def placeable_after(st: FlowarStateProtocol, seat: int, coins: int, workers: tuple[int, int, int],
                    to_area: tuple[int, int, int], immune: bool) -> bool:
    """Whether ``seat`` can place after an action that gains ``coins`` and ``workers`` (negative:
    loses them) and moves ``to_area`` Workers into the Strike Area (negative: out of it).

    A strike called off takes its Diorama's +1 Coin away; a strike called asks the seat to pay 1
    Coin for each of its Workers of that type or place them in the Strike Area ("Strikes"):
    some answer of the seat's must leave a placement possible. With ``immune``, Kingdom Favor 18
    may keep one striking type's Workers for free (the seat has its turn's Favor still). Loans
    are not counted (a Loan never forbids passing, decision 13).
    """
    off, called = strike_change(st, to_area)
    if not off and not called:
        return st._placeable(seat, coins, workers)
    return placeable_struck(st, seat, coins, workers, off, called, immune)


def placeable_struck(st: FlowarStateProtocol, seat: int, coins: int, workers: tuple[int, int, int],
                     off: int, called: int, immune: bool) -> bool:
    """:func:`placeable_after` with the strikes called off (``off``) and called (``called``) given
    as bit masks of Worker types. The state is unchanged afterwards."""
    strike = st._strike
    saved = strike[:]
    for t in range(3):
        if off >> t & 1:
            strike[t] = False
        elif called >> t & 1:
            strike[t] = True
    try:
        return _pay_then_place(st, seat, coins, [workers[0], workers[1], workers[2]], called, immune)
    finally:
        strike[:] = saved


def _pay_then_place(st: FlowarStateProtocol, seat: int, coins: int, workers: list[int], called: int,
                    immune: bool) -> bool:
    """Every payment of the seat's for the strikes in ``called``, until one leaves a placement."""
    have = st._workers[seat]
    t = 0
    while t < 3 and not (called >> t & 1 and have[t] + workers[t] > 0):
        t += 1
    if t == 3:
        return st._placeable(seat, coins, (workers[0], workers[1], workers[2]))
    rest = called & ~(1 << t)
    if immune and _pay_then_place(st, seat, coins, workers, rest, False):
        return True  # Kingdom Favor 18 keeps them all
    k = have[t] + workers[t]
    for keep in range(min(k, st._coins[seat] + coins) + 1):
        workers[t] -= k - keep
        ok = _pay_then_place(st, seat, coins - keep, workers, rest, immune)
        workers[t] += k - keep
        if ok:
            return True
    return False


def immune_open(st: FlowarStateProtocol, seat: int) -> bool:
    """Whether Kingdom Favor 18 could be used at a strike ``seat`` calls now, in its own turn
    (decision 10: "In your turn"; one Favor a turn)."""
    return seat == st._turn_seat and not st._turn_favor_used and bool(st._favor_actions(seat, ("strike",)))


def hire_keeps_placement(st: FlowarStateProtocol, seat: int, cost: int, t: int) -> bool:
    """Whether a placement stays possible after hiring a Worker of type ``t`` for ``cost`` Coins
    (decision 13; from rules revision 3 with the strike the hire calls off, decision 32)."""
    if st._strike[t] and st._strike_area[t] <= 3 and st.game.rules_revision >= 3:
        return placeable_after(st, seat, -cost, _ONE[t], _OUT[t], False)
    return st._placeable(seat, -cost, _ONE[t])


def swap_keeps_placement(st: FlowarStateProtocol, seat: int, g: int, t: int) -> bool:
    """Whether a placement stays possible after Kingdom Favor 19 swaps a Worker of type ``g`` for
    one of type ``t`` from the Strike Area (from rules revision 3 with the strikes the swap calls
    or calls off, decision 32). The swap is the turn's Favor: no Favor 18 at a strike it calls."""
    workers = _SWAP_DELTA[g][t]
    if st.game.rules_revision >= 3:
        return placeable_after(st, seat, 0, workers, (-workers[0], -workers[1], -workers[2]), False)
    return st._placeable(seat, 0, workers)


def fires_keeping_placement(st: FlowarStateProtocol, seat: int, probes: list[Probe], k: int) -> list[A.Fire]:
    """Rules revision 3: the layoffs before the placement after which a placement stays possible,
    a strike the layoff calls included (decision 32), for a seat whose Guild space is used (a
    free one takes a Worker the layoff's Coins keep). ``probes``: the layoffs with their Coins
    and the Workers they remove; ``k``: 1 with Kingdom Favor 2's layoff table, else 0."""
    area, strike = st._strike_area, st._strike
    # how many Workers of each type a layoff must send to call its strike (none while it is on)
    n0 = 9 if strike[0] else 3 - area[0]
    n1 = 9 if strike[1] else 3 - area[1]
    n2 = 9 if strike[2] else 3 - area[2]
    immune = -1  # Favor 18 at the strike: asked once, when a layoff calls one
    out: list[A.Fire] = []
    for a, (coins, lost) in probes:
        called = (1 if -lost[0] >= n0 else 0) | (2 if -lost[1] >= n1 else 0) | (4 if -lost[2] >= n2 else 0)
        if called:
            if immune < 0:
                immune = 1 if immune_open(st, seat) else 0
            if placeable_struck(st, seat, coins[k], lost, 0, called, immune > 0):
                out.append(a)
        elif st._placeable(seat, coins[k], lost):
            out.append(a)
    return out
