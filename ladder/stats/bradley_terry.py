"""Bradley-Terry ratings with bootstrap intervals (the leaderboard's uncertainty).

Model. Each bot ``i`` has a strength ``gamma_i > 0``; in any match, seat ``i``
scores against seat ``j`` with probability ``gamma_i / (gamma_i + gamma_j)``
(Bradley and Terry 1952). Ratings are reported on the **logistic Elo** scale,
``r_i = 400 * log10(gamma_i)`` shifted so that the mean over the fitted bots
is :data:`ANCHOR` (1500): a difference of ``d`` points means an expected score
``1 / (1 + 10 ** (-d / 400))``, as for the ladder's online Elo
(:mod:`ladder.elo`), so the two columns are comparable — but the fit uses
all results at once and does not depend on their order.

Data. Every finished match with two or more seats is decomposed into its
N(N-1)/2 pairwise results (rank above = 1, tie = 1/2, below = 0; ladder/README.md, "Ratings"),
each pair weighted ``1 / (N - 1)`` so that every seat of every match carries
the weight of one game, as the online Elo's ``K / (N - 1)`` does. Ties count
as half a win for each side (the "ties count 1/2" quasi-likelihood; no tie
parameter).

Fit. Maximum likelihood by the MM algorithm of Hunter, *MM algorithms for
generalized Bradley-Terry models*, Annals of Statistics 32 (2004), eq. (3)
(Zermelo's iteration): ``gamma_i <- W_i / sum_j N_ij / (gamma_i + gamma_j)``
with ``W_i`` the weighted score of ``i`` and ``N_ij`` the weighted number of
pairwise results between ``i`` and ``j``. A maximum exists only when every
bot has both won and lost against the rest (Hunter's Assumption 1), which a
young ladder does not guarantee (a bot that won every game would run off to
+infinity), so every bot also gets :data:`PRIOR_GAMES` virtual game(s),
drawn, against a virtual player of fixed strength 1 — the same device as
BayesElo's prior of virtual draws. Its pull is that of one drawn game; it
vanishes as real games accumulate.

Uncertainty. A nonparametric bootstrap that resamples whole **matches** with
replacement (so the correlated pairwise results of one multiplayer match stay
together), refits each replicate (warm-started from the full fit), recentres
it on the anchor, and reports the percentile interval of each rating and, for
each bot, the share of replicates in which it is rated above the next bot down
the table: the likelihood that it is the stronger of the two (Efron and
Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13). Ratings are
relative to the mean, so an interval says how well the bot is placed
*among the others*.

Information and likelihood ratios. On request (``information=True``) the
fit also gives each rating's standard error and that of its difference with
the next bot down the table, from the observed information of the penalised
likelihood (the negative Hessian ``H`` at the maximum, prior included):
``Var(v . theta) = v' H^-1 v``, in Elo points squared; and, for each bot and
the next one down, the signed root ``z`` of the likelihood-ratio statistic
``2 (l_max - l_tied)``, ``l_tied`` the maximum with the two strengths tied
(Wilks: about normal when they are equal). The final evaluation of a
competition (:mod:`ladder.competition_final`) separates neighbours with
``z``: unlike the percentile bootstrap it does not put every replicate on one
side after a 2-0 start, and unlike the Wald ratio ``difference / se`` it
keeps growing with one-sided results (the information ``p (1 - p)`` of a
lopsided pair shrinks as its estimated gap grows: the Hauck-Donner effect).

Pure Python; a few thousand matches and a few dozen bots fit in well under a
second, 200 bootstrap replicates of a 100,000-match game in seconds.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "ANCHOR",
    "BOOTSTRAP",
    "MODEL",
    "PRIOR_GAMES",
    "BTFit",
    "BTRating",
    "MatchRecord",
    "fit_bradley_terry",
    "mle_ratings",
]

ANCHOR = 1500.0
"""Mean rating of the fitted bots (Elo points)."""
PRIOR_GAMES = 1.0
"""Virtual drawn games of each bot against a fixed virtual player (regularisation)."""
BOOTSTRAP = 200
"""Default number of bootstrap replicates."""
MODEL = "Bradley-Terry MLE (MM, Hunter 2004), pairwise ties 1/2, pair weight 1/(N-1), 1 virtual draw, mean 1500"
"""One-line description of the model, stored with every cached fit and shown on leaderboards."""

_LOG10_OVER_400 = math.log(10.0) / 400.0


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A finished match for the fit.

    Attributes:
        bots: bot per seat (any hashable id), length N >= 2, distinct.
        ranks: competition rank per seat (1 = best, ties share a rank), length N.
    """

    bots: tuple[Hashable, ...]
    ranks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BTRating:
    """One bot's line of a Bradley-Terry fit.

    Attributes:
        bot: the bot's id.
        rank: 1 = highest rating.
        elo: maximum-likelihood rating (logistic Elo points, mean of the fit = anchor).
        low / high: bootstrap percentile interval (points); equal to ``elo`` when
            no bootstrap was run.
        games: matches of two or more seats the bot played.
        p_above_next: share of bootstrap replicates rating this bot above the
            next one down the table (its likelihood of being the stronger of
            the two), None for the last bot or without bootstrap.
        se: standard error of ``elo`` (points, from the observed information; the
            rating is relative to the mean of the fit), None unless asked for.
        se_next: standard error of ``elo`` minus the next bot's, None for the last
            bot or unless asked for.
        z_next: evidence that this bot is stronger than the next one down: the signed
            root of the likelihood-ratio statistic of the two being equal (about
            normal under equality), None for the last bot or unless asked for.
    """

    bot: Hashable
    rank: int
    elo: float
    low: float
    high: float
    games: int
    p_above_next: float | None
    se: float | None = None
    se_next: float | None = None
    z_next: float | None = None


@dataclass(frozen=True, slots=True)
class BTFit:
    """A fit: ratings best first and how they were obtained.

    Attributes:
        ratings: one :class:`BTRating` per bot, highest rating first (ties by bot id order of first appearance).
        matches: matches used (two or more seats).
        bootstrap: replicates run (0 = none).
        confidence: coverage of the intervals.
        anchor: mean rating.
        prior_games: virtual draws per bot.
        iterations: Newton iterations of the full-data fit.
        model: :data:`MODEL`.
        covariance: when asked for, the ratings' covariance (Elo points squared, from the observed
            information), rows and columns in the order of ``ratings``; empty otherwise. The variance of a
            difference is ``c[i][i] + c[j][j] - 2 c[i][j]`` (:func:`se_between`).
    """

    ratings: tuple[BTRating, ...]
    matches: int
    bootstrap: int
    confidence: float
    anchor: float
    prior_games: float
    iterations: int
    model: str = MODEL
    covariance: tuple[tuple[float, ...], ...] = ()

    def rating(self, bot: Hashable) -> BTRating:
        """The line of ``bot``.

        Raises:
            KeyError: the bot is not in the fit.
        """
        for r in self.ratings:
            if r.bot == bot:
                return r
        raise KeyError(bot)


def _pair_terms(bots: Sequence[int], ranks: Sequence[int]) -> list[tuple[int, int, float, float]]:
    """``(i, j, score of i, weight)`` for each pair i < j (by seat) of one match, weight 1/(N-1)."""
    n = len(bots)
    w = 1.0 / (n - 1)
    out = []
    for a in range(n):
        for b in range(a + 1, n):
            ra, rb = ranks[a], ranks[b]
            s = 1.0 if ra < rb else 0.5 if ra == rb else 0.0
            out.append((bots[a], bots[b], s, w))
    return out


def _aggregate(
    terms: Sequence[list[tuple[int, int, float, float]]], multiplicity: Iterable[tuple[int, int]], k: int
) -> tuple[list[float], dict[tuple[int, int], float]]:
    """Weighted scores ``W`` (shape k) and pair counts ``N[(i, j)]`` (i < j) of the chosen matches."""
    wins = [0.0] * k
    pairs: dict[tuple[int, int], float] = {}
    for idx, m in multiplicity:
        for i, j, s, w in terms[idx]:
            ww = w * m
            wins[i] += ww * s
            wins[j] += ww * (1.0 - s)
            key = (i, j) if i < j else (j, i)
            pairs[key] = pairs.get(key, 0.0) + ww
    return wins, pairs


def _loglik(
    theta: Sequence[float], wins: Sequence[float], plist: Sequence[tuple[tuple[int, int], float]], prior: float
) -> float:
    """Penalised log-likelihood of log-strengths ``theta`` (virtual player at theta = 0)."""
    total = 0.0
    for i, t in enumerate(theta):
        total += (wins[i] + prior / 2.0) * t - prior * _log1pexp(t)
    for (i, j), n in plist:
        a, b = theta[i], theta[j]
        m = max(a, b)
        total -= n * (m + math.log(math.exp(a - m) + math.exp(b - m)))
    return total


def _log1pexp(t: float) -> float:
    return t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """The lower factor ``L`` of a symmetric positive definite ``a = L L'``."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        row_i = low[i]
        for j in range(i + 1):
            row_j = low[j]
            s = a[i][j] - sum(row_i[k] * row_j[k] for k in range(j))
            if i == j:
                row_i[i] = math.sqrt(max(s, 1e-300))
            else:
                row_i[j] = s / row_j[j]
    return low


def _forward(low: list[list[float]], b: Sequence[float]) -> list[float]:
    """``y`` with ``L y = b`` (``L`` lower triangular)."""
    y = [0.0] * len(b)
    for i in range(len(b)):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    return y


def _cholesky_solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve ``a x = b`` for a symmetric positive definite ``a`` (Cholesky)."""
    low = _cholesky(a)
    n = len(b)
    y = _forward(low, b)
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _gradient_and_information(
    theta: Sequence[float], wins: Sequence[float], plist: Sequence[tuple[tuple[int, int], float]], prior: float
) -> tuple[list[float], list[list[float]]]:
    """Gradient and negative Hessian (the observed information) of the penalised log-likelihood at ``theta``
    (the formulas are in :func:`_newton`)."""
    k = len(theta)
    grad = [0.0] * k
    neg_h = [[0.0] * k for _ in range(k)]
    for i, t in enumerate(theta):
        sig = 1.0 / (1.0 + math.exp(-t))
        grad[i] = wins[i] + prior / 2.0 - prior * sig
        neg_h[i][i] = prior * sig * (1.0 - sig)
    for (i, j), n in plist:
        p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
        v = n * p * (1.0 - p)
        grad[i] -= n * p
        grad[j] -= n * (1.0 - p)
        neg_h[i][i] += v
        neg_h[j][j] += v
        neg_h[i][j] -= v
        neg_h[j][i] -= v
    return grad, neg_h


def _fold(grad: list[float], neg_h: list[list[float]], a: int, b: int) -> tuple[list[list[float]], list[float]]:
    """The information and gradient of ``theta`` with ``theta_b`` tied to ``theta_a`` (``b`` folded into
    ``a`` and dropped), in the argument order of :func:`_cholesky_solve`."""
    g = list(grad)
    g[a] += g[b]
    h = [list(row) for row in neg_h]
    for j in range(len(h)):
        h[a][j] += h[b][j]
    for row in h:
        row[a] += row[b]
    del g[b], h[b]
    for row in h:
        del row[b]
    return h, g


def _newton(
    wins: Sequence[float], pairs: dict[tuple[int, int], float], prior: float, start: Sequence[float] | None,
    tol: float = 1e-10, max_iter: int = 100, tie: tuple[int, int] | None = None,
) -> tuple[list[float], int]:
    """Maximise the penalised log-likelihood by Newton-Raphson with backtracking.

    With ``tie = (a, b)`` the maximum is taken under ``theta_a = theta_b`` (``start`` must
    satisfy it): the gradient and Hessian are folded onto the shared parameter.

    The log-likelihood of log-strengths ``theta_i = ln gamma_i`` is
    ``sum_(i<j) N_ij (sbar_ij theta_i + (1 - sbar_ij) theta_j - ln(e^theta_i + e^theta_j))``
    plus, per bot, ``prior/2 * theta_i - prior * ln(1 + e^theta_i)`` (the
    virtual draw against strength 1). It is strictly concave when
    ``prior > 0``; its gradient is ``g_i = W_i + prior/2 - sum_j N_ij p_ij - prior sigma(theta_i)``
    and its Hessian has ``H_ij = N_ij p_ij p_ji`` off the diagonal and
    ``H_ii = -sum_j N_ij p_ij p_ji - prior sigma(theta_i)(1 - sigma(theta_i))``
    with ``p_ij = gamma_i / (gamma_i + gamma_j)``. The stationary point is the
    fixed point of Hunter's MM iteration; Newton reaches it in a few steps
    where MM needs thousands when the prior is weak.

    Returns:
        ``(theta, iterations)``.
    """
    k = len(wins)
    theta = list(start) if start is not None else [0.0] * k
    plist = list(pairs.items())
    current = _loglik(theta, wins, plist, prior)
    it = 0
    while it < max_iter:
        it += 1
        grad, neg_h = _gradient_and_information(theta, wins, plist, prior)
        if tie is None:
            step = _cholesky_solve(neg_h, grad)
        else:
            step = _cholesky_solve(*_fold(grad, neg_h, *tie))
            step.insert(tie[1], step[tie[0] - (tie[0] > tie[1])])
        t_step = 1.0
        while True:
            cand = [a + t_step * d for a, d in zip(theta, step, strict=True)]
            value = _loglik(cand, wins, plist, prior)
            if value >= current - 1e-12 * abs(current) or t_step < 1e-6:
                break
            t_step /= 2.0
        theta, current = cand, value
        if max((abs(t_step * d) for d in step), default=0.0) < tol:
            break
    return theta, it


def _standard_errors(
    theta: Sequence[float], wins: Sequence[float], pairs: dict[tuple[int, int], float], prior: float,
    order: Sequence[int],
) -> tuple[dict[int, float], dict[int, float]]:
    """Standard errors (Elo points) of each rating relative to the mean, and of each rating minus the next
    one in ``order``: ``sqrt(v' H^-1 v)`` with ``H = L L'`` the observed information, i.e. ``|L^-1 v|``."""
    k = len(theta)
    _, neg_h = _gradient_and_information(theta, wins, list(pairs.items()), prior)
    low = _cholesky(neg_h)
    scale = 1.0 / _LOG10_OVER_400

    def se_of(v: list[float]) -> float:
        return scale * math.sqrt(sum(x * x for x in _forward(low, v)))

    se = {i: se_of([(1.0 if j == i else 0.0) - 1.0 / k for j in range(k)]) for i in range(k)}
    se_next = {}
    for a, b in zip(order, order[1:], strict=False):
        v = [0.0] * k
        v[a], v[b] = 1.0, -1.0
        se_next[a] = se_of(v)
    return se, se_next


def _covariance(theta: Sequence[float], wins: Sequence[float], pairs: dict[tuple[int, int], float], prior: float
                ) -> list[list[float]]:
    """The inverse of the observed information in Elo points squared: with ``H = L L'``, entry ``(i, j)`` is
    the dot product of columns ``i`` and ``j`` of ``L^-1`` (one forward substitution per column)."""
    k = len(theta)
    _, neg_h = _gradient_and_information(theta, wins, list(pairs.items()), prior)
    low = _cholesky(neg_h)
    scale = (1.0 / _LOG10_OVER_400) ** 2
    columns = [_forward(low, [1.0 if r == c else 0.0 for r in range(k)]) for c in range(k)]
    return [[scale * sum(a * b for a, b in zip(columns[i], columns[j], strict=True)) for j in range(k)]
            for i in range(k)]


def se_between(fit: BTFit, a: int, b: int) -> float:
    """Standard error (Elo points) of the difference of the ratings at positions ``a`` and ``b`` of
    ``fit.ratings`` (a fit made with ``covariance=True``).

    Raises:
        ValueError: the fit has no covariance.
    """
    c = fit.covariance
    if not c:
        raise ValueError("the fit was made without covariance=True")
    return math.sqrt(max(0.0, c[a][a] + c[b][b] - 2.0 * c[a][b]))


def _likelihood_ratios(
    theta: Sequence[float], wins: Sequence[float], pairs: dict[tuple[int, int], float], prior: float,
    order: Sequence[int],
) -> dict[int, float]:
    """For each bot of ``order`` but the last: the signed root of the likelihood-ratio statistic of
    "equal to the next one down", ``sqrt(2 (l_max - l_tied))`` (>= 0: the order is the fit's)."""
    plist = list(pairs.items())
    top = _loglik(theta, wins, plist, prior)
    out = {}
    for a, b in zip(order, order[1:], strict=False):
        start = list(theta)
        start[a] = start[b] = (theta[a] + theta[b]) / 2.0
        tied, _ = _newton(wins, pairs, prior, start, tol=1e-9, tie=(a, b))
        out[a] = math.sqrt(max(0.0, 2.0 * (top - _loglik(tied, wins, plist, prior))))
    return out


def _to_elo(log_gamma: Sequence[float], anchor: float) -> list[float]:
    elos = [x / _LOG10_OVER_400 for x in log_gamma]
    shift = anchor - sum(elos) / len(elos) if elos else 0.0
    return [e + shift for e in elos]


def mle_ratings(
    matches: Sequence[MatchRecord], *, prior_games: float = PRIOR_GAMES, anchor: float = ANCHOR
) -> dict[Hashable, float]:
    """Maximum-likelihood ratings only (no bootstrap): ``{bot: Elo}``, mean ``anchor``.

    See :func:`fit_bradley_terry` for the model and the arguments.
    """
    fit = fit_bradley_terry(matches, bootstrap=0, prior_games=prior_games, anchor=anchor)
    return {r.bot: r.elo for r in fit.ratings}


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default "linear" method)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def fit_bradley_terry(
    matches: Sequence[MatchRecord],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int | None = 0,
    confidence: float = 0.95,
    prior_games: float = PRIOR_GAMES,
    anchor: float = ANCHOR,
    bots: Sequence[Hashable] = (),
    information: bool = False,
    covariance: bool = False,
) -> BTFit:
    """Fit Bradley-Terry ratings to finished matches, with bootstrap intervals.

    Args:
        matches: the results (matches with fewer than two seats are ignored).
        bootstrap: replicates (0 = point estimates only).
        seed: seed of the resampling ``random.Random`` (None = from the OS);
            the default makes a fit reproducible.
        confidence: coverage of the percentile intervals.
        prior_games: virtual drawn games per bot against the fixed virtual
            player (> 0; it keeps every rating finite and the fit unique).
        anchor: mean rating of the bots (Elo points).
        bots: bots to rate even if they appear in no match (they keep the prior's
            rating, with its wide interval); they come first in the order that
            breaks ties between equal ratings.
        information: also give each line's ``se`` and ``se_next`` (see the module doc).
        covariance: also give the ratings' covariance (``BTFit.covariance``; cubic in the bots: asked for
            where every pair is compared, not for every table).

    Returns:
        The fit; bots are ``bots`` and those that appear in ``matches``.

    Raises:
        ValueError: a match whose bots and ranks differ in length or repeat a bot,
            ``prior_games <= 0``, or a confidence outside (0, 1).
    """
    if not prior_games > 0:
        raise ValueError(f"prior_games must be > 0 (it keeps the fit unique and finite), got {prior_games}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    index: dict[Hashable, int] = {b: i for i, b in enumerate(dict.fromkeys(bots))}
    games: Counter[int] = Counter()
    distinct: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    used = 0
    for m in matches:
        if len(m.bots) != len(m.ranks):
            raise ValueError(f"match has {len(m.bots)} bots but {len(m.ranks)} ranks")
        if len(set(m.bots)) != len(m.bots):
            raise ValueError(f"a bot holds two seats of one match: {m.bots}")
        if len(m.bots) < 2:
            continue
        ids = tuple(index.setdefault(b, len(index)) for b in m.bots)
        key = (ids, tuple(m.ranks))
        distinct[key] = distinct.get(key, 0) + 1
        games.update(ids)
        used += 1
    k = len(index)
    names = list(index)
    if k == 0:
        return BTFit((), 0, 0, confidence, anchor, prior_games, 0)
    keys = list(distinct)
    counts = [distinct[key] for key in keys]
    terms = [_pair_terms(ids, ranks) for ids, ranks in keys]
    wins, pairs = _aggregate(terms, enumerate(counts), k)
    log_gamma, iterations = _newton(wins, pairs, prior_games, None)
    elos = _to_elo(log_gamma, anchor)

    replicates: list[list[float]] = []
    if bootstrap > 0:
        rng = random.Random(seed)
        cum = []
        total = 0
        for c in counts:
            total += c
            cum.append(total)
        population = range(len(keys))
        for _ in range(bootstrap):
            drawn = Counter(rng.choices(population, cum_weights=cum, k=used))
            w_b, p_b = _aggregate(terms, drawn.items(), k)
            lg, _ = _newton(w_b, p_b, prior_games, log_gamma, tol=1e-8)
            replicates.append(_to_elo(lg, anchor))

    order = sorted(range(k), key=lambda i: (-elos[i], i))
    se, se_next = _standard_errors(log_gamma, wins, pairs, prior_games, order) if information else ({}, {})
    z_next = _likelihood_ratios(log_gamma, wins, pairs, prior_games, order) if information else {}
    alpha = (1.0 - confidence) / 2.0
    lines = []
    for pos, i in enumerate(order):
        if replicates:
            column = sorted(rep[i] for rep in replicates)
            low, high = _quantile(column, alpha), _quantile(column, 1.0 - alpha)
        else:
            low = high = elos[i]
        p_next = None
        if replicates and pos + 1 < len(order):
            j = order[pos + 1]
            above = sum(1.0 if rep[i] > rep[j] else 0.5 if rep[i] == rep[j] else 0.0 for rep in replicates)
            p_next = above / len(replicates)
        lines.append(BTRating(names[i], pos + 1, elos[i], low, high, games[i], p_next, se.get(i), se_next.get(i),
                               z_next.get(i)))
    cov: tuple[tuple[float, ...], ...] = ()
    if covariance:
        full = _covariance(log_gamma, wins, pairs, prior_games)
        cov = tuple(tuple(full[i][j] for j in order) for i in order)
    return BTFit(tuple(lines), used, len(replicates), confidence, anchor, prior_games, iterations, covariance=cov)
