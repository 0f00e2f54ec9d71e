"""Paying for a Garden Feature: can this cost still be paid with these resources?

Rulebook: La Fleur, "Purchasing a Garden Feature". Resources:

* an untilted Artisan pays one symbol of its Allure type (once per round);
* a Flower card pays every symbol of its types that is still needed (a double
  card pays both when both are needed; an unneeded symbol is lost);
* a Wild card pays one symbol of any type;
* any two Flower cards together pay one symbol of any type;
* an Artisan ability may pay one symbol of any type (``free``; stand-in).

The engine offers a payment step only when the rest of the cost stays
payable, so a purchase never dead-ends; :func:`payable` is that test. It is
pure (its search memoised), and bots use it too.

Shapes: ``need`` is a 5-tuple of symbols still owed per Allure type (in
:data:`games.lafleur.cards.ALLURE` order); ``cards`` is a sorted tuple of
Flower *layout* codes (:data:`games.lafleur.cards.FLOWER_LAYOUT`); ``arts``
is a 5-tuple of untilted Artisans per Allure type.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from games.lafleur.cards import L_WILD, PAIRS, layout_symbols

_SYMBOLS: Final[tuple[tuple[int, ...], ...]] = tuple(layout_symbols(x) for x in range(L_WILD + 1))


def after_artisans(need: tuple[int, ...], arts: tuple[int, ...]) -> tuple[int, ...]:
    """``need`` once every useful Artisan has paid (an Artisan has no other use)."""
    a0, a1, a2, a3, a4 = arts
    n0, n1, n2, n3, n4 = need
    return (n0 - a0 if n0 > a0 else 0, n1 - a1 if n1 > a1 else 0, n2 - a2 if n2 > a2 else 0,
            n3 - a3 if n3 > a3 else 0, n4 - a4 if n4 > a4 else 0)


@cache
def pay_with_card(need: tuple[int, ...], layout: int) -> tuple[int, ...]:
    """``need`` after a non-Wild Flower card of ``layout`` pays what it can (cached: few distinct inputs)."""
    out = list(need)
    for t in _SYMBOLS[layout]:
        if out[t] > 0:
            out[t] -= 1
    return tuple(out)


def payable(need: tuple[int, ...], cards: tuple[int, ...], arts: tuple[int, ...] = (0, 0, 0, 0, 0),
            free: int = 0) -> bool:
    """True when ``need`` can be paid in full.

    Args:
        need: symbols owed per Allure type.
        cards: sorted Flower layout codes in hand.
        arts: untilted Artisans per Allure type.
        free: symbols of any type an ability pays (0 or 1).

    Returns:
        Whether some combination of the resources pays every symbol.
    """
    if any(arts):
        need = after_artisans(need, arts)
        if not any(need):
            return True
    return _payable(need, cards, free)


_PAIR_OF: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(next(10 + k for k, pr in enumerate(PAIRS) if set(pr) == {t, u}) if u != t else -1 for u in range(5))
    for t in range(5)
)
"""``_PAIR_OF[t][u]``: the layout of the mixed card of types t and u (-1 when t == u)."""


def _payable(need: tuple[int, ...], cards: tuple[int, ...], free: int) -> bool:
    total = sum(need)
    wild = cards.count(L_WILD)
    # Upper bound first: every card pays at most 2, wild/free 1.
    if free + wild + 2 * (len(cards) - wild) < total:
        return False
    if total <= free + wild + (len(cards) - wild) // 2:  # Wilds, the ability and pairs suffice
        return True
    counts = [0] * L_WILD
    for c in cards:
        if c != L_WILD:
            counts[c] += 1
    return _cover(need, tuple(counts), 0, wild, free, {})


def _cover(need: tuple[int, ...], counts: tuple[int, ...], deferred: int, wild: int, free: int,
           memo: dict[tuple[tuple[int, ...], tuple[int, ...], int], bool]) -> bool:
    """:func:`_step`, memoised in ``memo`` for one query (``wild`` and ``free`` are fixed within it).

    A memo per query rather than a process-wide cache. Caching
    :func:`payable` and :func:`_payable` in 200,000-entry LRU caches hit 27 %
    and 40 % of calls in random 4-player playouts, and the collector's full
    passes over the caches took about 12 % of the time; a bounded cache of
    this search thrashes (exponential time) once one query needs more states
    than its bound. Without them La Fleur ran 1.3-1.5x more playouts per
    CPU-second; a Garden Feature costs at most 5 symbols, a search of a few
    dozen states.
    """
    key = (need, counts, deferred)
    got = memo.get(key)
    if got is None:
        got = memo[key] = _step(need, counts, deferred, wild, free, memo)
    return got


def _step(need: tuple[int, ...], counts: tuple[int, ...], deferred: int, wild: int, free: int,
          memo: dict[tuple[tuple[int, ...], tuple[int, ...], int], bool]) -> bool:
    """Pay the first owed type with a matching card, or leave it to Wilds, the ability and pairs.

    Paying a needed symbol with a plain card never hurts (a card in a pair
    pays half a symbol), so the search only chooses *which* card pays; the
    symbols left over must fit ``free + Wilds + unused plain cards // 2``.
    """
    t = next((i for i in range(5) if need[i]), -1)
    if t < 0:
        d = deferred - free if deferred > free else 0
        if d <= wild:
            return True
        return d - wild <= sum(counts) // 2
    nt = need[t]
    rest = need[:t] + (0,) + need[t + 1:]
    if counts[5 + t]:  # a double of the same type pays up to 2
        c = list(counts)
        c[5 + t] -= 1
        n = need[:t] + (nt - 2 if nt > 2 else 0,) + need[t + 1:]
        if _cover(n, tuple(c), deferred, wild, free, memo):
            return True
    for u in range(5):
        lay = _PAIR_OF[t][u]
        if lay >= 0 and counts[lay] and need[u]:  # a mixed card paying t and u
            c = list(counts)
            c[lay] -= 1
            m = list(need)
            m[t] -= 1
            m[u] -= 1
            if _cover(tuple(m), tuple(c), deferred, wild, free, memo):
                return True
    if counts[t]:  # a single
        c = list(counts)
        c[t] -= 1
        if _cover(need[:t] + (nt - 1,) + need[t + 1:], tuple(c), deferred, wild, free, memo):
            return True
    for u in range(5):  # a mixed card whose other type is not needed
        lay = _PAIR_OF[t][u]
        if lay >= 0 and counts[lay] and not need[u]:
            c = list(counts)
            c[lay] -= 1
            if _cover(need[:t] + (nt - 1,) + need[t + 1:], tuple(c), deferred, wild, free, memo):
                return True
            break  # any such card is as good as another
    return _cover(rest, counts, deferred + nt, wild, free, memo)


def counts_of(cost: tuple[int, ...]) -> tuple[int, ...]:
    """Symbols per Allure type of a cost given as a tuple of type indexes."""
    return tuple(cost.count(t) for t in range(5))
