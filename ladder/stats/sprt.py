"""Sequential probability ratio tests on game results (docs/faults.md F-19).

Hypotheses, in **logistic Elo** (:mod:`ladder.stats.scales`): ``H0: elo = elo0``
against ``H1: elo = elo1`` with ``elo0 < elo1``. After each new sample the
log-likelihood ratio ``LLR = log(L(H1) / L(H0))`` is compared with Wald's
bounds ``lower = log(beta / (1 - alpha))`` and ``upper = log((1 - beta) / alpha)``
(±2.944 for alpha = beta = 0.05): ``LLR >= upper`` accepts H1, ``LLR <= lower``
accepts H0, anything between continues. ``alpha`` is the probability of
accepting H1 when ``elo = elo0``, ``beta`` that of accepting H0 when
``elo = elo1`` (Wald 1945; no overshoot correction is applied, which makes the
real error rates slightly *smaller* than the nominal ones).

Three likelihoods:

* :func:`llr_logistic` — the **generalised** SPRT (GSPRT) of fishtest for
  trinomial results ``[L, D, W]`` or pentanomial game-pair results
  ``[LL, LD+DL, LW+DD+WL, DW+WD, WW]``. The results are a sample from an
  unknown discrete distribution on the scores ``0, 1/2, 1`` (per game) or
  ``0, 1/4, ..., 1`` (per game of a pair); under ``Hk`` its expectation is
  ``L(elo_k)``, and each hypothesis is represented by the maximum-likelihood
  distribution with that expectation. Michel Van den Bergh, *Maximum
  likelihood estimation for multinomial distributions with an expectation
  constraint* (``support_MLE_multinomial.pdf``, Proposition 1.1; also in
  github.com/vdbergh/pentanomial ``doc/MLE_multinomial.pdf``) shows that this
  distribution is ``p_i / (1 + x (a_i - s))``, where ``x`` solves the secular
  equation ``sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0``; the GSPRT itself
  is Li, Liu and Ying, *Generalized sequential probability ratio test for
  separate families of hypotheses* (Sequential Analysis 33, 2014). Zero counts
  are replaced by 1e-3 first, exactly as fishtest's ``LLRcalc.regularize``.
* :func:`llr_expectation` — the same GSPRT for any finite set of scores in
  [0, 1] (used by the N-player paired model, :mod:`ladder.stats.paired`).
* :func:`llr_bayeselo` — the classic SPRT of cutechess-cli (before
  cutechess#543) and of fishtest's ``LLRlegacy``: trinomial, BayesElo bounds,
  drawelo estimated from the results themselves.

F-19's example (W=880, L=759, D=1863, elo0=0, elo1=5, alpha=beta=0.05) gives
LLR 2.947 with :func:`llr_logistic` (H1 accepted) and 2.271 with
:func:`llr_bayeselo` (continue); ``tests/ladder/test_stats_sprt.py`` pins both, and
checks the pentanomial GSPRT against fishtest results published with
Stockfish's commits.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ladder.stats.scales import bayeselo_to_proba, draw_elo, elo, logistic, phi, phi_inv

__all__ = [
    "REGULARIZATION",
    "EloEstimate",
    "Sprt",
    "SprtState",
    "elo_estimate",
    "elo_estimate_values",
    "llr_bayeselo",
    "llr_expectation",
    "llr_logistic",
    "mle_with_expectation",
    "regularize",
]

REGULARIZATION = 1e-3
"""Count given to empty categories before any likelihood is computed (fishtest's ``LLRcalc.regularize``)."""


class SprtState(enum.Enum):
    """Where an SPRT stands."""

    H0 = "H0"
    """LLR <= lower bound: H0 (``elo = elo0``) accepted."""
    H1 = "H1"
    """LLR >= upper bound: H1 (``elo = elo1``) accepted."""
    CONTINUE = "continue"
    """Between the bounds: play on."""


@dataclass(frozen=True, slots=True)
class Sprt:
    """An SPRT's design: hypotheses in logistic Elo and the two error probabilities.

    Attributes:
        elo0: H0's Elo difference (candidate minus baseline, logistic Elo points).
        elo1: H1's Elo difference; must exceed ``elo0``.
        alpha: probability of accepting H1 when ``elo = elo0`` (0 < alpha < 1).
        beta: probability of accepting H0 when ``elo = elo1`` (0 < beta < 1).

    Raises:
        ValueError: ``elo1 <= elo0`` or an error probability outside (0, 1), or
            ``alpha + beta >= 1``.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be greater than elo0 ({self.elo0})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"{name} must be in (0, 1), got {value}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"alpha + beta must be below 1, got {self.alpha + self.beta}")

    @property
    def lower(self) -> float:
        """Wald's lower bound ``log(beta / (1 - alpha))`` (-2.944 for 0.05/0.05)."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Wald's upper bound ``log((1 - beta) / alpha)`` (+2.944 for 0.05/0.05)."""
        return math.log((1.0 - self.beta) / self.alpha)

    def decide(self, llr: float) -> SprtState:
        """H1 when ``llr >= upper``, H0 when ``llr <= lower``, else continue."""
        if llr >= self.upper:
            return SprtState.H1
        if llr <= self.lower:
            return SprtState.H0
        return SprtState.CONTINUE


def regularize(counts: Sequence[float]) -> list[float]:
    """Replace zero counts by :data:`REGULARIZATION` (fishtest's ``LLRcalc.regularize``)."""
    return [float(c) if c else REGULARIZATION for c in counts]


def _secular(a: Sequence[float], p: Sequence[float]) -> float:
    """The root ``x`` of ``f(x) = sum_i p_i a_i / (1 + x a_i)`` (Van den Bergh, Prop. 1.1).

    ``f`` decreases strictly on ``(-1 / max(a), -1 / min(a))`` from +inf to -inf,
    so the root is unique; found by Newton steps kept inside a shrinking
    bracket (bisection when a step leaves it).

    Raises:
        ValueError: the ``a_i`` with positive probability do not take both signs
            (the constrained maximum is then on the boundary of the simplex).
    """
    amax = max(ai for ai, pi in zip(a, p, strict=True) if pi > 0)
    amin = min(ai for ai, pi in zip(a, p, strict=True) if pi > 0)
    if not (amin < 0.0 < amax):
        raise ValueError("the expectation must lie strictly inside the range of the observed scores")
    lo, hi = -1.0 / amax, -1.0 / amin
    width = hi - lo
    lo, hi = lo + 1e-12 * width, hi - 1e-12 * width
    x = 0.0
    for _ in range(200):
        f = df = 0.0
        for ai, pi in zip(a, p, strict=True):
            t = 1.0 / (1.0 + x * ai)
            f += pi * ai * t
            df -= pi * ai * ai * t * t
        if f > 0.0:
            lo = x
        else:
            hi = x
        if abs(f) < 1e-15 or hi - lo < 1e-15 * max(1.0, abs(x)):
            return x
        step = x - f / df if df < 0.0 else (lo + hi) / 2.0
        x = step if lo < step < hi else (lo + hi) / 2.0
    return x


def mle_with_expectation(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """Maximum-likelihood distribution on ``values`` with expectation ``s``, given observed frequencies.

    Van den Bergh, ``support_MLE_multinomial.pdf`` Proposition 1.1: the
    maximiser of ``sum_i p_i log q_i`` subject to ``sum_i q_i = 1`` and
    ``sum_i q_i values_i = s`` is ``q_i = p_i / (1 + x (values_i - s))`` with
    ``x`` the root of the secular equation.

    Args:
        values: the scores ``a_i`` (shape K), e.g. ``0, 1/2, 1``.
        probs: observed frequencies ``p_i`` (shape K, summing to 1).
        s: the required expectation, strictly between the smallest and largest
            value that has a positive frequency.

    Returns:
        ``q`` (shape K), summing to 1.
    """
    a = [v - s for v in values]
    x = _secular(a, probs)
    return [pi / (1.0 + x * ai) for ai, pi in zip(a, probs, strict=True)]


def llr_expectation(values: Sequence[float], counts: Sequence[float], s0: float, s1: float) -> float:
    """Generalised log-likelihood ratio of "expectation s1" against "expectation s0".

    ``LLR = N * sum_i p_i * log(q1_i / q0_i)`` where ``p`` is the empirical
    distribution of the ``N`` samples and ``qk`` is
    :func:`mle_with_expectation` for ``sk`` (fishtest's ``LLRcalc.LLR`` with
    ``statistic="expectation"``). Counts are used as given: regularise first
    when some category may be empty.

    Args:
        values: the possible scores of one sample (shape K), in [0, 1].
        counts: how many samples had each score (shape K; fractions allowed).
        s0 / s1: expected score under H0 / H1.

    Returns:
        The LLR (natural log); 0.0 when there are no samples.
    """
    n = float(sum(counts))
    if n <= 0.0:
        return 0.0
    p = [c / n for c in counts]
    q0 = mle_with_expectation(values, p, s0)
    q1 = mle_with_expectation(values, p, s1)
    return n * sum(pi * (math.log(b) - math.log(a)) for pi, a, b in zip(p, q0, q1, strict=True) if pi > 0)


def _scores(k: int) -> list[float]:
    if k not in (3, 5):
        raise ValueError(f"expected 3 (trinomial L, D, W) or 5 (pentanomial) counts, got {k}")
    return [i / (k - 1) for i in range(k)]


def llr_logistic(elo0: float, elo1: float, counts: Sequence[float]) -> float:
    """fishtest's GSPRT log-likelihood ratio with bounds in logistic Elo (``LLRcalc.LLR_logistic``).

    Args:
        elo0 / elo1: H0 / H1 Elo differences (logistic Elo points).
        counts: trinomial ``[losses, draws, wins]`` (per game) or pentanomial
            ``[LL, LD+DL, LW+DD+WL, DW+WD, WW]`` (per game pair, the pair
            scoring 0, 1/2, 1, 3/2, 2); zero counts are regularised to 1e-3.

    Returns:
        The LLR (natural log).

    Raises:
        ValueError: not 3 or 5 counts.

    Example:
        F-19: ``llr_logistic(0, 5, [759, 1863, 880])`` is 2.947.
    """
    values = _scores(len(counts))
    return llr_expectation(values, regularize(counts), logistic(elo0), logistic(elo1))


def llr_bayeselo(belo0: float, belo1: float, counts: Sequence[float]) -> float:
    """The classic BayesElo SPRT log-likelihood ratio (cutechess-cli's, fishtest's ``LLRlegacy``).

    drawelo is estimated from the (regularised) results; then
    ``LLR = sum_r n_r log(P1_r / P0_r)`` over r in loss, draw, win with
    ``Pk = bayeselo_to_proba(belo_k, drawelo)``.

    Args:
        belo0 / belo1: H0 / H1 differences in **BayesElo** points.
        counts: ``[losses, draws, wins]``.

    Returns:
        The LLR (natural log).

    Raises:
        ValueError: not 3 counts.

    Example:
        F-19: ``llr_bayeselo(0, 5, [759, 1863, 880])`` is 2.271.
    """
    if len(counts) != 3:
        raise ValueError(f"the BayesElo SPRT takes [losses, draws, wins], got {len(counts)} counts")
    r = regularize(counts)
    de = draw_elo(*r)
    p0 = bayeselo_to_proba(belo0, de)
    p1 = bayeselo_to_proba(belo1, de)
    return sum(n * math.log(b / a) for n, a, b in zip(r, p0, p1, strict=True))


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """A logistic Elo difference with its confidence interval.

    Attributes:
        elo: logistic Elo of the mean score per game (points).
        low / high: the interval's ends (points), from the normal approximation
            of the mean score mapped through :func:`ladder.stats.scales.elo`.
        los: likelihood of superiority, ``Phi((score - 1/2) / standard error)``.
        score: mean score per game in [0, 1].
        stderr: standard error of ``score``.
        samples: number of samples (games, game pairs or deals; regularised).
        confidence: the interval's coverage (0.95).
    """

    elo: float
    low: float
    high: float
    los: float
    score: float
    stderr: float
    samples: float
    confidence: float = 0.95

    def __str__(self) -> str:
        return f"{self.elo:+.1f} Elo [{self.low:+.1f}, {self.high:+.1f}] ({self.confidence:.0%}), LOS {self.los:.1%}"


def elo_estimate_values(values: Sequence[float], counts: Sequence[float], confidence: float = 0.95) -> EloEstimate:
    """Elo difference and interval of samples with scores ``values`` (each in [0, 1]).

    The mean ``mu`` of the sample scores, its standard error
    ``sigma / sqrt(n)`` and ``mu ± z * se`` with ``z = Phi^-1((1 + confidence) / 2)``
    are mapped through logistic :func:`~ladder.stats.scales.elo`
    (fishtest's ``stat_util.get_elo``).

    Args:
        values: score of each category (shape K).
        counts: samples per category (shape K).
        confidence: coverage of the interval.

    Raises:
        ValueError: no samples.
    """
    n = float(sum(counts))
    if n <= 0.0:
        raise ValueError("no samples")
    mu = sum(v * c for v, c in zip(values, counts, strict=True)) / n
    var = sum(c * (v - mu) ** 2 for v, c in zip(values, counts, strict=True)) / n
    se = math.sqrt(var / n)
    z = phi_inv(0.5 + confidence / 2.0)
    los = phi((mu - 0.5) / se) if se > 0 else (1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5)
    return EloEstimate(elo(mu), elo(mu - z * se), elo(mu + z * se), los, mu, se, n, confidence)


def elo_estimate(counts: Sequence[float], confidence: float = 0.95) -> EloEstimate:
    """Elo difference and interval of trinomial or pentanomial results (fishtest's ``get_elo``).

    Args:
        counts: ``[L, D, W]`` or the pentanomial ``[LL, ..., WW]``; regularised.
        confidence: coverage of the interval.

    Returns:
        The estimate; ``samples`` counts games (trinomial) or game pairs
        (pentanomial), and ``score`` is per game either way.
    """
    values = _scores(len(counts))
    return elo_estimate_values(values, regularize(counts), confidence)
