"""Elo scales: logistic Elo and BayesElo, and the normal distribution (docs/faults.md F-19 "Say which Elo").

Two Elo models appear in Parterre and every figure says which one it uses:

* **Logistic Elo** (the ladder's online Elo, the Bradley-Terry fit, and the
  SPRT of ``parterre regress``): a rating difference ``d`` (Elo points) means an
  expected score ``L(d) = 1 / (1 + 10 ** (-d / 400))`` per game, draws
  counting one half. Conversely the logistic Elo of an expected score ``s`` is
  ``elo(s) = -400 * log10(1 / s - 1)``. This is fishtest's "logistic Elo"
  (``fishtest/server/fishtest/stats/stat_util.py``, ``L`` and ``elo``).
* **BayesElo** (Rémi Coulom's bayeselo program; cutechess-cli's SPRT before
  cutechess#543): a difference ``d`` and a ``drawelo`` ``D`` give
  ``P(win) = 1 / (1 + 10 ** ((D - d) / 400))`` and
  ``P(loss) = 1 / (1 + 10 ** ((D + d) / 400))``; the rest is draws. The same
  match is worth more BayesElo points than logistic Elo points when draws are
  frequent, which is why F-19's example gives two different verdicts.

Pure functions, floats in and out; no third-party dependency (the normal
quantiles come from :class:`statistics.NormalDist`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = [
    "SCORE_CLAMP",
    "bayeselo_to_elo",
    "bayeselo_to_proba",
    "draw_elo",
    "elo",
    "logistic",
    "phi",
    "phi_inv",
    "proba_to_bayeselo",
]

SCORE_CLAMP = 1e-3
"""Scores are clamped to ``[SCORE_CLAMP, 1 - SCORE_CLAMP]`` before :func:`elo` (±1200 Elo), as fishtest does."""

_NORMAL = NormalDist()


def logistic(d: float) -> float:
    """Expected score per game of a rating difference ``d`` (logistic Elo points).

    ``L(d) = 1 / (1 + 10 ** (-d / 400))``; ``L(0) = 0.5``, ``L(400) = 10/11``.
    """
    return 1.0 / (1.0 + math.pow(10.0, -d / 400.0))


def elo(score: float) -> float:
    """Logistic Elo difference of an expected score per game (the inverse of :func:`logistic`).

    Args:
        score: expected score in [0, 1] (1 win, 1/2 draw, 0 loss); clamped to
            ``[SCORE_CLAMP, 1 - SCORE_CLAMP]``.

    Returns:
        ``-400 * log10(1 / score - 1)`` Elo points (about ±1200 at the clamp).
    """
    s = min(max(score, SCORE_CLAMP), 1.0 - SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / s - 1.0)


def phi(x: float) -> float:
    """Standard normal cumulative distribution function."""
    return _NORMAL.cdf(x)


def phi_inv(p: float) -> float:
    """Standard normal quantile function (``phi_inv(0.975) = 1.95996...``)."""
    return _NORMAL.inv_cdf(p)


def bayeselo_to_proba(belo: float, drawelo: float) -> tuple[float, float, float]:
    """Loss, draw and win probabilities of a BayesElo difference.

    Source: Rémi Coulom, *Bayeselo* (the model), in fishtest's form
    (``stat_util.bayeselo_to_proba``).

    Args:
        belo: BayesElo difference (points).
        drawelo: the draw parameter ``D`` (points, > 0 gives draws).

    Returns:
        ``(P(loss), P(draw), P(win))``, summing to 1.
    """
    win = 1.0 / (1.0 + 10.0 ** ((-belo + drawelo) / 400.0))
    loss = 1.0 / (1.0 + 10.0 ** ((belo + drawelo) / 400.0))
    return loss, 1.0 - win - loss, win


def proba_to_bayeselo(p_win: float, p_loss: float) -> tuple[float, float]:
    """BayesElo difference and drawelo of win and loss probabilities (inverse of :func:`bayeselo_to_proba`).

    Returns:
        ``(belo, drawelo)`` in points.

    Raises:
        ValueError: a probability outside (0, 1).
    """
    if not (0.0 < p_win < 1.0 and 0.0 < p_loss < 1.0):
        raise ValueError(f"win and loss probabilities must be in (0, 1), got {p_win}, {p_loss}")
    belo = 200.0 * math.log10(p_win / p_loss * (1.0 - p_loss) / (1.0 - p_win))
    drawelo = 200.0 * math.log10((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win)
    return belo, drawelo


def draw_elo(losses: float, draws: float, wins: float) -> float:
    """The drawelo that fits observed frequencies (estimated "out of sample", as cutechess and fishtest do).

    Args:
        losses / draws / wins: counts (may be regularised fractions; must be > 0 where needed).

    Returns:
        drawelo (points).
    """
    n = losses + draws + wins
    return proba_to_bayeselo(wins / n, losses / n)[1]


def bayeselo_to_elo(belo: float, drawelo: float) -> float:
    """Logistic Elo of the expected score a BayesElo difference gives at this drawelo."""
    loss, draw, win = bayeselo_to_proba(belo, drawelo)
    return elo(win + 0.5 * draw)
