"""The duplicate model (ladder.stats.paired): deal scores, the pentanomial link, and the paired GSPRT."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from ladder.stats.paired import DuplicateTest, head_to_head_deal, paired_deal, seat_pair_scores
from ladder.stats.scales import logistic
from ladder.stats.sprt import Sprt, SprtState, llr_logistic


def test_head_to_head_pair_scores_are_the_pentanomial_categories():
    # candidate first: [cand, base]; baseline first: [base, cand]
    assert head_to_head_deal([1, 2], [2, 1]).pentanomial == 4  # won both
    assert head_to_head_deal([2, 1], [1, 2]).pentanomial == 0  # lost both
    assert head_to_head_deal([1, 2], [1, 2]).pentanomial == 2  # each seat 0 won: a win and a loss
    assert head_to_head_deal([1, 1], [1, 1]).pentanomial == 2  # two ties
    assert head_to_head_deal([1, 1], [2, 1]).pentanomial == 3  # a tie and a win
    deal = head_to_head_deal([1, 1], [1, 2])
    assert (deal.pentanomial, deal.score, deal.games) == (1, Fraction(1, 4), 2)
    with pytest.raises(ValueError):
        head_to_head_deal([1, 2, 3], [1, 2])


def test_pair_scores_of_a_seat():
    assert seat_pair_scores([2, 1, 2, 4], 0) == {1: 0, 2: Fraction(1, 2), 3: 1}


def test_paired_deal_averages_the_virtual_games_through_each_opponent():
    # 3 players; rotation k puts the table's first bot in seat (3 - k) % 3
    cand = [([1, 2, 3], 0), ([2, 1, 3], 2), ([3, 1, 2], 1)]
    base = [([1, 2, 3], 0), ([1, 2, 3], 2), ([2, 2, 1], 1)]
    deal = paired_deal(cand, base)
    # rotation 0: identical -> u = 1/2, 1/2
    # rotation 1: cand seat 2 rank 3 vs ranks 2, 1 -> s = 0, 0; base seat 2 rank 3 -> 0, 0 -> 1/2, 1/2
    # rotation 2: cand seat 1 rank 1 vs (3, 2) -> 1, 1; base seat 1 rank 2 vs (2, 1) -> 1/2, 0 -> 3/4, 1
    assert deal.score == (Fraction(1, 2) * 4 + Fraction(3, 4) + 1) / 6
    assert (deal.games, deal.virtual_games, deal.pentanomial) == (6, 6, None)
    with pytest.raises(ValueError):
        paired_deal(cand, base[:2])
    with pytest.raises(ValueError):
        paired_deal([([1, 2], 0)], [([1, 2], 1)])


def test_identical_results_score_one_half():
    games = [([2, 1, 3, 4], 0), ([1, 2, 3, 4], 3), ([4, 3, 1, 2], 2), ([1, 1, 3, 4], 1)]
    assert paired_deal(games, games).score == Fraction(1, 2)


def test_head_to_head_test_is_fishtests_pentanomial_gsprt():
    sprt = Sprt(-20, 0)
    test = DuplicateTest(sprt, pentanomial=True)
    deals = [([1, 2], [2, 1])] * 3 + [([1, 2], [1, 2])] * 9 + [([2, 1], [2, 1])] * 2 + [([2, 1], [1, 2])]
    for a, b in deals:
        test.add(head_to_head_deal(a, b))
    assert test.penta == [1, 0, 11, 0, 3]
    assert test.llr() == pytest.approx(llr_logistic(-20, 0, [1, 0, 11, 0, 3]))
    assert test.games == 30 and test.deals == 15
    assert [p.deals for p in test.trajectory] == list(range(1, 16))
    with pytest.raises(ValueError):
        test.add(paired_deal([([1, 2], 0)], [([1, 2], 0)]))


def test_the_decision_sticks():
    test = DuplicateTest(Sprt(-100, 0), pentanomial=True)
    while test.state is SprtState.CONTINUE:
        test.add(head_to_head_deal([1, 2], [1, 2]))  # always one all: score exactly 1/2
    assert test.state is SprtState.H1
    test.add(head_to_head_deal([2, 1], [2, 1]))
    assert test.state is SprtState.H1 and test.trajectory[-1].state is SprtState.H1


def simulate_paired(delta: float, deals: int, seed: int, opponents=(0.0, 0.0), spread: float = 300.0) -> list:
    """3-player deals under Bradley-Terry with a random bias per (deal, seat): each pairwise result of
    A (rating delta) or B (rating 0) against opponent j is a win with probability L(r - r_j + b)."""
    rng = random.Random(seed)
    out = []
    for _ in range(deals):
        cand, base = [], []
        for _k in range(3):
            bias = [rng.gauss(0, spread) for _ in opponents]
            for _who, r, sink in (("A", delta, cand), ("B", 0.0, base)):
                s = [1 if rng.random() < logistic(r - rj + b) else 0 for rj, b in zip(opponents, bias, strict=True)]
                # encode as ranks: seat 0 is the bot; opponents beaten rank below it
                ranks = [2] + [3 if x else 1 for x in s]
                sink.append((ranks, 0))
        out.append(paired_deal(cand, base))
    return out


def test_paired_score_is_one_half_for_equal_strength_and_rises_with_it():
    equal = simulate_paired(0.0, 1500, seed=1)
    mean = sum(float(d.score) for d in equal) / len(equal)
    assert mean == pytest.approx(0.5, abs=0.01)
    stronger = simulate_paired(100.0, 1500, seed=2)
    mean = sum(float(d.score) for d in stronger) / len(stronger)
    # derivation step 3: E[u] = 1/2 + E_b[L(100 + b) - L(b)] / 2, computed here by quadrature
    grid = [-4 + 8 * i / 400 for i in range(401)]
    dens = [math.exp(-x * x / 2) for x in grid]
    edge = sum((logistic(100 + 300 * x) - logistic(300 * x)) * w for x, w in zip(grid, dens, strict=True)) / sum(dens)
    expected = 0.5 + edge / 2
    assert mean == pytest.approx(expected, abs=0.01)
    assert mean - 0.5 < (logistic(100) - 0.5) / 2 + 0.01  # at most about half a direct game's edge


def test_paired_gsprt_decides_both_ways_on_simulated_deals():
    sprt = Sprt(-40, 0)
    for delta, expected in ((0.0, SprtState.H1), (-120.0, SprtState.H0)):
        test = DuplicateTest(sprt, pentanomial=False)
        for deal in simulate_paired(delta, 2000, seed=7):
            if test.add(deal) is not SprtState.CONTINUE:
                break
        assert test.state is expected, (delta, test.deals, test.llr())
        est = test.estimate()
        assert est.low <= est.elo <= est.high


def test_paired_distribution_is_regularised_at_both_ends():
    test = DuplicateTest(Sprt(-10, 10), pentanomial=False)
    test.add(paired_deal([([1, 2, 3], 0)], [([1, 2, 3], 0)]))
    values, counts = test.distribution()
    assert values == [0.0, 0.5, 1.0] and counts == [1e-3, 1.0, 1e-3]
    with pytest.raises(ValueError):
        DuplicateTest(Sprt(-10, 10), pentanomial=False).estimate()
