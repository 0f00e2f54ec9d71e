"""Determinized flat Monte Carlo over the root with paired playouts (the search bot's default method).

Perfect Information Monte Carlo (PIMC; Long, Sturtevant, Buro & Furtak 2010,
"Understanding the Success of Perfect Information Monte Carlo Sampling in Game
Tree Search") with common random numbers: each *round* draws one
determinization of the observation (``games/<game>/determinize.py``) and one
seed for chance, then plays every root candidate from that same position to
the end of the game with the greedy strategy for every seat, the chance
outcomes drawn from a ``random.Random`` seeded alike for each candidate. The
candidates are compared on the same deals, so the deal's luck (which decides
most games between two greedy players, docs/search.md) cancels out of their
differences instead of drowning them: paired comparison, the duplicate-deal
idea inside one decision.

Reward of a finished playout for the observing seat (:func:`pimc_reward`):
its rank value (1 first, 0 last, ties share) plus ``margin_weight`` × its
score less the best rival's score, in points. The answer is the candidate with
the best total reward over the completed rounds (ties: the earlier candidate,
the greedy choice first). A round still running at the deadline is dropped;
with no round completed the answer is the first candidate.
"""

from __future__ import annotations

import random
import time
from typing import Any

MARGIN_WEIGHT = 0.05
"""Reward per point of score margin, beside 1 for a win (a weight of ours: 20 points of margin = one rank)."""


def pimc_reward(scores: Any, ranks: Any, seat: int, margin_weight: float = MARGIN_WEIGHT) -> float:
    """Rank value of ``seat`` (1 first, 0 last, ties share) plus ``margin_weight`` × its score margin."""
    n = len(scores)
    if n == 1:
        return margin_weight * float(scores[0])
    me = ranks[seat]
    rank_value = sum((me < ranks[o]) + 0.5 * (me == ranks[o]) for o in range(n) if o != seat) / (n - 1)
    best = max(float(scores[o]) for o in range(n) if o != seat)
    return float(rank_value + margin_weight * (float(scores[seat]) - best))


MIN_ROUNDS = 3
"""Rounds the candidate count must leave time for, at the first playout's cost (:func:`pimc`)."""


class _Late(Exception):
    """The deadline passed inside a playout (the round is dropped)."""


def playout(state: Any, policy: Any, rng: random.Random, deadline: float, check_clock: bool) -> Any:
    """Play ``state`` to its end in place: ``policy(state) -> action`` for every seat, chance from ``rng``.

    Raises:
        _Late: ``check_clock`` and ``time.monotonic()`` passed ``deadline``.
    """
    while not state.is_terminal():
        if check_clock and time.monotonic() >= deadline:
            raise _Late
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        state.apply_action(policy(state))
    return state


def pimc(game: Any, observation: dict[str, Any], determinize: Any, rng: random.Random, deadline: float,
         seat: int, policy: Any, candidates: list[int] | None = None, *, max_playouts: int = 1_000_000,
         num_actions: int | None = None, margin_weight: float = MARGIN_WEIGHT,
         halving: int = 0, min_rounds: int = MIN_ROUNDS) -> tuple[int, int, list[float]]:
    """Paired flat Monte Carlo; returns (root action index, playouts completed, mean reward per candidate).

    ``candidates`` are indexes into the observed legal actions (every
    determinization has the same ones, in the same order), best first; None:
    all of them. ``max_playouts`` caps the playouts (whole rounds only; at
    least one round is attempted). The clock is read before every decision of
    every playout. ``halving`` > 0: sequential halving (Karnin, Koren & Somekh
    2013): after ``halving`` rounds the worse half of the candidates still in
    is dropped, then after twice as many rounds again, and so on down to two;
    every candidate still in has played every round, so their totals compare.
    ``min_rounds`` > 0: the first playout's cost caps the candidates (the last
    ones dropped, at least two kept) so that ``min_rounds`` rounds fit before
    the deadline: under a short clock a few well-compared candidates beat a
    round of all of them that never finishes.

    Raises:
        ValueError: ``num_actions`` is given and the determinization has another number of legal actions
            (a determinizer bug; the caller plays greedy).
    """
    start = time.monotonic()
    first = determinize(game, observation, rng)
    legal = first.legal_actions()
    if num_actions is not None and len(legal) != num_actions:
        raise ValueError(f"determinization has {len(legal)} legal actions, the request {num_actions}")
    cands = list(range(len(legal))) if candidates is None else list(candidates)
    if len(cands) <= 1:
        return (cands[0] if cands else 0), 0, [0.0] * len(cands)
    k = len(cands)
    totals = [0.0] * k
    counts = [0] * k
    alive = list(range(k))  # positions in ``cands``, best first
    rounds = playouts = 0
    phase, phase_end = halving, halving
    while (playouts + len(alive) <= max(max_playouts, k)) and (rounds == 0 or time.monotonic() < deadline):
        base = first if rounds == 0 else determinize(game, observation, rng)
        seed = rng.getrandbits(62)
        values = []
        try:
            for j in list(alive):
                if j not in alive:
                    break  # cut by the first playout's cost (below)
                t0 = time.monotonic()
                state = base.clone()
                state.apply_action(state.legal_actions()[cands[j]])
                end = playout(state, policy, random.Random(seed), deadline, True)
                out = end.outcome()
                values.append(pimc_reward(out.scores, out.ranks, seat, margin_weight))
                if rounds == 0 and j == alive[0] and min_rounds > 0:
                    # as many candidates as leave time for ``min_rounds`` rounds at this playout's cost
                    cost = max(time.monotonic() - t0, 1e-6)
                    fit = int((deadline - start) / (min_rounds * cost))
                    if fit < len(alive):
                        alive = alive[: max(2, fit)]
        except _Late:
            break
        rounds += 1
        playouts += len(alive)
        for j, v in zip(alive, values, strict=True):
            totals[j] += v
            counts[j] += 1
        if halving > 0 and rounds == phase_end and len(alive) > 2:
            keep = max(2, (len(alive) + 1) // 2)
            alive = sorted(sorted(alive, key=lambda j: (-totals[j], j))[:keep])
            phase *= 2
            phase_end = rounds + phase
    if rounds == 0:
        return cands[0], 0, [0.0] * k
    best = max(alive, key=lambda j: (totals[j], -j))
    return cands[best], playouts, [totals[j] / counts[j] if counts[j] else 0.0 for j in range(k)]
