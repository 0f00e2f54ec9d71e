"""Elo ratings, pure maths (no database). docs/faults.md F-16, F-18; ladder/README.md, "Ratings".

Model: **logistic Elo** on the 400-point scale. The expected score of a player
rated ``Ra`` against one rated ``Rb`` is::

    E = 1 / (1 + 10 ** ((Rb - Ra) / 400))

and a result with actual score ``S`` (win 1, tie 1/2, loss 0) changes ``Ra`` by
``K * (S - E)``.

A multiplayer result (N seats with competition ranks such as 1, 2, 2, 4) is
decomposed into all N(N-1)/2 pairwise results, each seat's change being the sum
over its N-1 opponents with ``K / (N - 1)`` per pair. With N = 2 this is
classic Elo. Four players at 1500 finishing [1, 2, 2, 4] with K = 32 get
[+16, 0, 0, -16]: the winner scores 3 x (32/3) x (1 - 1/2) = +16. The changes of
one match always sum to zero (every pair's two changes cancel).

Online updates (``ladder.matches.record_result``) and full rebuilds
(``ladder.ratings.rebuild_ratings``) both call :func:`pairwise_deltas` and add
the deltas with ``before + delta`` in the same order, so they agree bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

INITIAL_RATING = 1500.0
"""Rating of a bot before its first rated match in a game (Elo points)."""

DEFAULT_K = 32.0
"""K-factor of the ladder (Elo points per unit of surprise); ladder/README.md, "Ratings"."""


def expected(ra: float, rb: float) -> float:
    """Expected score of a player rated ``ra`` against one rated ``rb``.

    Args:
        ra: rating of the player (Elo points).
        rb: rating of the opponent (Elo points).

    Returns:
        ``1 / (1 + 10 ** ((rb - ra) / 400))``, in (0, 1); 0.5 at equal ratings.
    """
    return 1.0 / (1.0 + float(10.0 ** ((rb - ra) / 400.0)))


def pair_score(rank_a: int, rank_b: int) -> float:
    """Actual score of a seat ranked ``rank_a`` against one ranked ``rank_b``.

    Ranks are competition ranks, 1 = best. Returns 1.0 (better rank), 0.5
    (same rank: a tie) or 0.0 (worse rank).
    """
    if rank_a < rank_b:
        return 1.0
    if rank_a == rank_b:
        return 0.5
    return 0.0


def pairwise_deltas(ratings: Sequence[float], ranks: Sequence[int], k: float = DEFAULT_K) -> list[float]:
    """Rating changes of one match, multiplayer results decomposed pairwise.

    Args:
        ratings: rating of each seat before the match (Elo points), length N.
        ranks: competition rank of each seat (1 = winner, ties share a rank),
            length N.
        k: K-factor for a 2-player match; each of the N-1 pairs of a seat uses
            ``k / (N - 1)``.

    Returns:
        Change per seat (Elo points), length N; they sum to zero (up to
        floating-point rounding). A 1-seat match (solo) gives ``[0.0]``.

    Raises:
        ValueError: lengths differ, or a rank is below 1.

    Example:
        >>> pairwise_deltas([1500, 1500, 1500, 1500], [1, 2, 2, 4])
        [16.0, 0.0, 0.0, -16.0]
    """
    n = len(ratings)
    if len(ranks) != n:
        raise ValueError(f"{n} ratings but {len(ranks)} ranks")
    if any(r < 1 for r in ranks):
        raise ValueError(f"ranks must be >= 1, got {list(ranks)}")
    if n < 2:
        return [0.0] * n
    k_pair = k / (n - 1)
    deltas = []
    for i in range(n):
        total = 0.0
        for j in range(n):
            if i != j:
                total += k_pair * (pair_score(ranks[i], ranks[j]) - expected(ratings[i], ratings[j]))
        deltas.append(total)
    return deltas


def seat_outcomes(ranks: Sequence[int]) -> list[str]:
    """Classify each seat of a finished match as ``"win"``, ``"draw"`` or ``"loss"``.

    A seat wins when it alone has rank 1, draws when it shares rank 1 with
    another seat, and loses otherwise (in a 4-player match, 2nd place is a
    loss for these counters; the Elo update still credits it pairwise).
    A solo match (one seat) with rank 1 is a win.
    """
    firsts = sum(1 for r in ranks if r == 1)
    out = []
    for r in ranks:
        if r != 1:
            out.append("loss")
        elif firsts == 1:
            out.append("win")
        else:
            out.append("draw")
    return out
