"""Statistics of the ladder: Elo scales, SPRTs, the duplicate model, Bradley-Terry ratings.

Pure maths except :mod:`ladder.stats.store` (the Bradley-Terry cache in
PostgreSQL). Every Elo figure states its model (docs/faults.md F-19): *logistic Elo*
unless it says *BayesElo*.

Elo scales (:mod:`ladder.stats.scales`)
    ``logistic(d) -> score``; ``elo(score) -> d``; ``bayeselo_to_proba(belo, drawelo)``,
    ``proba_to_bayeselo(p_win, p_loss)``, ``draw_elo(l, d, w)``, ``bayeselo_to_elo(belo, drawelo)``;
    ``phi``, ``phi_inv``

SPRT (:mod:`ladder.stats.sprt`)
    ``Sprt(elo0, elo1, alpha=0.05, beta=0.05)`` (``.lower``, ``.upper``, ``.decide(llr) -> SprtState``)
    ``llr_logistic(elo0, elo1, counts)`` (trinomial [L, D, W] or pentanomial; fishtest's GSPRT)
    ``llr_bayeselo(belo0, belo1, [L, D, W])`` (cutechess's classic SPRT)
    ``llr_expectation(values, counts, s0, s1)``; ``mle_with_expectation(values, probs, s)``
    ``elo_estimate(counts) -> EloEstimate``; ``elo_estimate_values(values, counts)``

The duplicate model of ``parterre regress`` (:mod:`ladder.stats.paired`)
    ``head_to_head_deal(ranks, ranks) -> DealResult``; ``paired_deal(candidate_games, baseline_games)``
    ``DuplicateTest(sprt, pentanomial)`` (``.add(deal)``, ``.llr()``, ``.estimate()``, ``.trajectory``)

Bradley-Terry (:mod:`ladder.stats.bradley_terry`)
    ``fit_bradley_terry(matches, bootstrap=200, seed=0) -> BTFit``; ``mle_ratings(matches)``;
    ``MatchRecord(bots, ranks)``; ``BTRating``; ``MODEL``

Cache (:mod:`ladder.stats.store`, takes a ``ConnectionPool``)
    ``refresh_bradley_terry(pool, game, *, force=False) -> RefreshOutcome``
    ``bt_leaderboard(pool, game, *, include_revoked=False) -> BTLeaderboard | None`` (read-only; the web's query)
"""

from __future__ import annotations

from ladder.stats.bradley_terry import MODEL, BTFit, BTRating, MatchRecord, fit_bradley_terry, mle_ratings
from ladder.stats.paired import DealResult, DuplicateTest, TrajectoryPoint, head_to_head_deal, paired_deal
from ladder.stats.scales import (
    bayeselo_to_elo,
    bayeselo_to_proba,
    draw_elo,
    elo,
    logistic,
    phi,
    phi_inv,
    proba_to_bayeselo,
)
from ladder.stats.sprt import (
    EloEstimate,
    Sprt,
    SprtState,
    elo_estimate,
    elo_estimate_values,
    llr_bayeselo,
    llr_expectation,
    llr_logistic,
    mle_with_expectation,
)

__all__ = [
    "MODEL",
    "BTFit",
    "BTRating",
    "DealResult",
    "DuplicateTest",
    "EloEstimate",
    "MatchRecord",
    "Sprt",
    "SprtState",
    "TrajectoryPoint",
    "bayeselo_to_elo",
    "bayeselo_to_proba",
    "draw_elo",
    "elo",
    "elo_estimate",
    "elo_estimate_values",
    "fit_bradley_terry",
    "head_to_head_deal",
    "llr_bayeselo",
    "llr_expectation",
    "llr_logistic",
    "logistic",
    "mle_ratings",
    "mle_with_expectation",
    "paired_deal",
    "phi",
    "phi_inv",
    "proba_to_bayeselo",
]
