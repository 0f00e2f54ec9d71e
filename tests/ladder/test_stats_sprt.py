"""SPRT maths (ladder.stats.sprt, ladder.stats.scales): docs/faults.md F-19 and published reference values.

Where every expected number comes from:

* F-19 (cutechess#543): W=880, L=759, D=1863, elo0=0, elo1=5, alpha=beta=0.05,
  bounds ±2.94: logistic-Elo GSPRT about 2.95 (H1), BayesElo SPRT about 2.27
  (continue).
* Published fishtest results, as copied into Stockfish's commit message for
  PR #3273 ("LMR for captures at allNodes", December 2020), when fishtest
  reported pentanomial SPRTs with bounds in *logistic* Elo (written in curly
  braces; normalised Elo uses angle brackets):
  STC https://tests.stockfishchess.org/tests/view/5fe50b9d3932f79192d3973c
  "LLR: 2.95 (-2.94,2.94) {-0.25,1.25} ... Ptnml(0-2): 292, 5905, 28939, 6129, 299";
  LTC https://tests.stockfishchess.org/tests/view/5fe552e43932f79192d39744
  "LLR: 2.92 (-2.94,2.94) {0.25,1.25} ... Ptnml(0-2): 5, 418, 6043, 506, 12".
* The same LLRs derived here by an independent method: a direct numerical
  maximisation of the multinomial log-likelihood over the constrained simplex
  (coordinate ascent with golden-section line searches — no secular
  equation), and the closed-form approximation of Michel Van den Bergh,
  "A simple approximation of the GSPRT" (``GSPRT_approximation.pdf``, formula
  (2.1), github.com/vdbergh/pentanomial/doc): LLR ≈ N (s1 - s0)(2 s - s0 - s1) / (2 var).
* The BayesElo trinomial and pentanomial probabilities of the README of
  github.com/vdbergh/pentanomial (draw_elo 327, biases -90 and 200 BayesElo,
  self-play): probs3 = [0.1644, 0.6712, 0.1644],
  probs5 = [0.0159, 0.2189, 0.5303, 0.2189, 0.0159].
"""

from __future__ import annotations

import math
import random

import pytest

from ladder.stats import scales
from ladder.stats.sprt import (
    REGULARIZATION,
    Sprt,
    SprtState,
    elo_estimate,
    llr_bayeselo,
    llr_expectation,
    llr_logistic,
    mle_with_expectation,
)

F19 = [759, 1863, 880]  # losses, draws, wins
STC = ([292, 5905, 28939, 6129, 299], -0.25, 1.25, 2.95)
LTC = ([5, 418, 6043, 506, 12], 0.25, 1.25, 2.92)


# -- an independent maximiser ---------------------------------------------------------------------


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small dense system)."""
    n = len(b)
    m = [row[:] + [bi] for row, bi in zip(a, b, strict=True)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def constrained_max_loglik(counts: list[float], s: float) -> list[float]:
    """argmax of sum n_i log q_i over q > 0, sum q = 1, sum q_i v_i = s, v_i = i / (K - 1).

    Direct maximisation, no Lagrange multiplier: q_0 and q_{K-1} are
    eliminated through the two linear constraints, so q = b + A x is affine
    in the K - 2 interior probabilities x; the log-likelihood is then a
    concave function of x, maximised by Newton's method with its exact
    gradient A^T (n / q) and Hessian -A^T diag(n / q^2) A, backtracking to
    stay inside q > 0.
    """
    k = len(counts)
    v = [i / (k - 1) for i in range(k)]
    inner_v = v[1:-1]
    b = [1 - s] + [0.0] * (k - 2) + [s]
    a = [[-(1 - w) for w in inner_v]]
    a += [[1.0 if i == j else 0.0 for j in range(k - 2)] for i in range(k - 2)]
    a += [[-w for w in inner_v]]

    def full(x: list[float]) -> list[float]:
        return [bi + sum(aij * xj for aij, xj in zip(row, x, strict=True)) for bi, row in zip(b, a, strict=True)]

    def loglik(x: list[float]) -> float:
        q = full(x)
        return -math.inf if min(q) <= 0 else sum(c * math.log(qi) for c, qi in zip(counts, q, strict=True))

    n = sum(counts)
    x = [c / n for c in counts[1:-1]]
    while min(full(x)) <= 0:
        x = [xi / 2 for xi in x]
    for _ in range(100):
        q = full(x)
        grad = [sum(counts[r] * a[r][j] / q[r] for r in range(k)) for j in range(k - 2)]
        hess = [[-sum(counts[r] * a[r][i] * a[r][j] / q[r] ** 2 for r in range(k)) for j in range(k - 2)]
                for i in range(k - 2)]
        step = _solve(hess, [-g for g in grad])
        t, current = 1.0, loglik(x)
        while loglik([xi + t * d for xi, d in zip(x, step, strict=True)]) < current and t > 1e-12:
            t /= 2
        x = [xi + t * d for xi, d in zip(x, step, strict=True)]
        if max(abs(t * d) for d in step) < 1e-15:
            break
    return full(x)


def independent_llr(counts: list[float], elo0: float, elo1: float) -> float:
    r = [c if c else REGULARIZATION for c in counts]
    q0 = constrained_max_loglik(r, scales.logistic(elo0))
    q1 = constrained_max_loglik(r, scales.logistic(elo1))
    return sum(c * (math.log(b) - math.log(a)) for c, a, b in zip(r, q0, q1, strict=True))


def gsprt_approximation(counts: list[float], elo0: float, elo1: float) -> float:
    """Van den Bergh, GSPRT_approximation.pdf (2.1): N (s1 - s0)(2 s - s0 - s1) / (2 var)."""
    k = len(counts)
    n = sum(counts)
    v = [i / (k - 1) for i in range(k)]
    mean = sum(c * x for c, x in zip(counts, v, strict=True)) / n
    var = sum(c * (x - mean) ** 2 for c, x in zip(counts, v, strict=True)) / n
    s0, s1 = scales.logistic(elo0), scales.logistic(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


# -- F-19 -------------------------------------------------------------------------------------------


def test_f19_logistic_llr_accepts_h1():
    sprt = Sprt(0, 5, 0.05, 0.05)
    assert sprt.lower == pytest.approx(-2.944, abs=1e-3) and sprt.upper == pytest.approx(2.944, abs=1e-3)
    llr = llr_logistic(0, 5, F19)
    assert llr == pytest.approx(2.95, abs=0.005)
    assert sprt.decide(llr) is SprtState.H1


def test_f19_bayeselo_llr_continues():
    llr = llr_bayeselo(0, 5, F19)
    assert llr == pytest.approx(2.27, abs=0.005)
    assert Sprt(0, 5).decide(llr) is SprtState.CONTINUE


def test_f19_by_the_independent_maximiser():
    assert independent_llr(F19, 0, 5) == pytest.approx(llr_logistic(0, 5, F19), rel=1e-6)


def test_f19_bayeselo_by_hand():
    """LLR = sum n log(P1/P0), drawelo from the data: the formula written out once more."""
    n = sum(F19)
    pw, pl = F19[2] / n, F19[0] / n
    drawelo = 200 * math.log10((1 - pl) / pl * (1 - pw) / pw)
    assert scales.draw_elo(*F19) == pytest.approx(drawelo)

    def probs(belo: float) -> list[float]:
        w = 1 / (1 + 10 ** ((drawelo - belo) / 400))
        lo = 1 / (1 + 10 ** ((drawelo + belo) / 400))
        return [lo, 1 - w - lo, w]

    expected = sum(c * math.log(b / a) for c, a, b in zip(F19, probs(0), probs(5), strict=True))
    assert llr_bayeselo(0, 5, F19) == pytest.approx(expected, rel=1e-12)


# -- pentanomial -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("counts", "elo0", "elo1", "published"), [STC, LTC], ids=["STC", "LTC"])
def test_pentanomial_matches_published_fishtest_results(counts, elo0, elo1, published):
    assert round(llr_logistic(elo0, elo1, counts), 2) == published


@pytest.mark.parametrize(("counts", "elo0", "elo1", "published"), [STC, LTC], ids=["STC", "LTC"])
def test_pentanomial_by_the_independent_maximiser(counts, elo0, elo1, published):
    assert independent_llr(counts, elo0, elo1) == pytest.approx(llr_logistic(elo0, elo1, counts), rel=1e-5)


@pytest.mark.parametrize(("counts", "elo0", "elo1", "published"), [STC, LTC], ids=["STC", "LTC"])
def test_pentanomial_close_to_the_closed_form_approximation(counts, elo0, elo1, published):
    assert gsprt_approximation(counts, elo0, elo1) == pytest.approx(llr_logistic(elo0, elo1, counts), rel=0.01)


def test_small_and_regularised_samples_by_the_independent_maximiser():
    for counts in ([0, 3, 5, 2, 0], [1, 0, 0, 0, 4], [2, 7, 1]):
        assert independent_llr(counts, -10, 10) == pytest.approx(llr_logistic(-10, 10, counts), rel=1e-5, abs=1e-7)


def test_bayeselo_pentanomial_probabilities_of_the_published_readme():
    """vdbergh/pentanomial README: draw_elo 327, biases [-90, 200], self-play."""
    p3, p5 = [0.0] * 3, [0.0] * 5
    for bias in (-90, 200):
        first = scales.bayeselo_to_proba(bias, 327)  # the bot with the advantage of the deal
        second = scales.bayeselo_to_proba(-bias, 327)  # the same deal with the seats swapped
        for i in range(3):
            p3[i] += (first[i] + second[i]) / 4
            for j in range(3):
                p5[i + j] += first[i] * second[j] / 2
    assert [round(x, 4) for x in p3] == [0.1644, 0.6712, 0.1644]
    assert [round(x, 4) for x in p5] == [0.0159, 0.2189, 0.5303, 0.2189, 0.0159]


# -- building blocks ---------------------------------------------------------------------------------


def test_mle_with_expectation_meets_its_constraints_and_is_the_empirical_at_its_mean():
    values = [0, 0.25, 0.5, 0.75, 1]
    probs = [0.1, 0.2, 0.4, 0.2, 0.1]
    for s in (0.3, 0.5, 0.62):
        q = mle_with_expectation(values, probs, s)
        assert sum(q) == pytest.approx(1)
        assert sum(a * b for a, b in zip(q, values, strict=True)) == pytest.approx(s)
    assert mle_with_expectation(values, probs, 0.5) == pytest.approx(probs)
    with pytest.raises(ValueError):
        mle_with_expectation([0, 1], [1.0, 0.0], 0.5)  # all mass at 0: no distribution with mean 1/2


def test_llr_expectation_equals_llr_logistic_on_the_same_distribution():
    counts = [3, 10, 40, 12, 4]
    values = [i / 4 for i in range(5)]
    s0, s1 = scales.logistic(-5), scales.logistic(5)
    assert llr_expectation(values, counts, s0, s1) == pytest.approx(llr_logistic(-5, 5, counts))


def test_sprt_design_is_validated():
    for bad in ((5, 0), (0, 5, 0, 0.05), (0, 5, 0.6, 0.5)):
        with pytest.raises(ValueError):
            Sprt(*bad)
    s = Sprt(-10, 0, 0.05, 0.1)
    assert s.decide(s.upper) is SprtState.H1 and s.decide(s.lower) is SprtState.H0
    assert s.decide(0.0) is SprtState.CONTINUE


def test_elo_estimate_is_fishtests_get_elo():
    """F-19's data: score (880 + 1863/2) / 3502, per-game variance, normal interval through logistic Elo."""
    est = elo_estimate(F19)
    n = sum(F19)
    mu = (F19[2] + F19[1] / 2) / n
    var = (F19[2] * (1 - mu) ** 2 + F19[1] * (0.5 - mu) ** 2 + F19[0] * mu**2) / n
    se = math.sqrt(var / n)
    assert est.score == pytest.approx(mu)
    assert est.elo == pytest.approx(-400 * math.log10(1 / mu - 1))
    assert est.low == pytest.approx(scales.elo(mu - 1.959964 * se), abs=1e-3)
    assert est.high == pytest.approx(scales.elo(mu + 1.959964 * se), abs=1e-3)
    assert est.elo == pytest.approx(12.0, abs=0.05)
    assert est.los == pytest.approx(scales.phi((mu - 0.5) / se))


def test_pentanomial_estimate_counts_pairs_and_scores_per_game():
    est = elo_estimate([0, 0, 10, 0, 0])
    assert est.score == pytest.approx(0.5, abs=1e-3) and abs(est.elo) < 1
    est = elo_estimate([1, 2, 3, 4, 5])
    assert est.samples == pytest.approx(15)
    assert est.score == pytest.approx((0 * 1 + 0.25 * 2 + 0.5 * 3 + 0.75 * 4 + 1 * 5) / 15)


def test_scales_round_trip():
    for d in (-300, -5, 0, 17, 250):
        assert scales.elo(scales.logistic(d)) == pytest.approx(d)
    belo, drawelo = scales.proba_to_bayeselo(0.3, 0.2)
    loss, _, win = scales.bayeselo_to_proba(belo, drawelo)
    assert (win, loss) == pytest.approx((0.3, 0.2))
    assert scales.elo(1.0) == pytest.approx(1200, abs=1)  # clamped like fishtest


def test_error_rates_of_the_pentanomial_sprt_on_simulated_pairs():
    """Simulated game pairs at elo = elo1: H0 is accepted in about beta of the runs (here 0.05).

    Pairs are drawn from a fixed pentanomial law whose expected score is
    exactly L(elo1), so this checks the SPRT procedure, not any game.
    """
    rng = random.Random(11)
    sprt = Sprt(-40, 0, 0.05, 0.05)
    law = [0.05, 0.2, 0.5, 0.2, 0.05]  # mean score 1/2 = L(0)
    runs, h0 = 100, 0
    for _ in range(runs):
        counts = [0] * 5
        state = SprtState.CONTINUE
        for _ in range(2000):
            counts[rng.choices(range(5), weights=law)[0]] += 1
            state = sprt.decide(llr_logistic(sprt.elo0, sprt.elo1, counts))
            if state is not SprtState.CONTINUE:
                break
        h0 += state is SprtState.H0
    assert h0 / runs <= 0.10  # nominal 0.05; Wald's bounds err on the safe side
