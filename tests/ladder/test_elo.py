"""Elo maths (ladder.elo): logistic Elo, pairwise multiplayer decomposition. docs/faults.md F-16, F-18."""

from __future__ import annotations

import random

import pytest

from ladder.elo import DEFAULT_K, INITIAL_RATING, expected, pairwise_deltas, seat_outcomes


def test_expected_is_logistic_400_scale() -> None:
    assert expected(1500, 1500) == 0.5
    assert expected(1900, 1500) == pytest.approx(10 / 11)  # 400 points = odds 10:1
    assert expected(1500, 1900) == pytest.approx(1 / 11)
    assert expected(1600, 1500) + expected(1500, 1600) == pytest.approx(1.0)


def test_f18_four_players_with_a_tie() -> None:
    # K/(N-1) = 32/3 per pair, expected 1/2 each: the winner gets 3 x 32/3 x 1/2 = +16.
    deltas = pairwise_deltas([1500.0] * 4, [1, 2, 2, 4], k=32)
    assert deltas == pytest.approx([16.0, 0.0, 0.0, -16.0])
    assert deltas[1] == deltas[2]  # tied players identical
    assert sum(deltas) == pytest.approx(0.0, abs=1e-12)


def test_two_players_is_classic_elo() -> None:
    assert pairwise_deltas([1500.0, 1500.0], [1, 2]) == [16.0, -16.0]
    assert pairwise_deltas([1500.0, 1500.0], [1, 1]) == [0.0, 0.0]
    ra, rb = 1620.0, 1480.0
    e = expected(ra, rb)
    assert pairwise_deltas([ra, rb], [2, 1], k=DEFAULT_K) == pytest.approx([32 * (0 - e), 32 * e])


def test_f16_sequence_of_two_wins() -> None:
    x = INITIAL_RATING
    x += pairwise_deltas([x, 1500.0], [1, 2])[0]
    assert x == 1516.0
    x += pairwise_deltas([x, 1500.0], [1, 2])[0]
    assert x == pytest.approx(1531.26, abs=0.01)
    assert round(x, 1) == 1531.3


def test_deltas_always_sum_to_zero_and_respect_order() -> None:
    rng = random.Random(7)
    for _ in range(500):
        n = rng.randint(2, 4)
        ratings = [rng.uniform(1000, 2000) for _ in range(n)]
        ranks = [rng.randint(1, n) for _ in range(n)]
        deltas = pairwise_deltas(ratings, ranks)
        assert abs(sum(deltas)) < 1e-9
        assert all(abs(d) <= DEFAULT_K for d in deltas)
        # Same rating, better rank => larger change.
        for i in range(n):
            for j in range(n):
                if ratings[i] == ratings[j] and ranks[i] < ranks[j]:
                    assert deltas[i] > deltas[j]


def test_solo_and_bad_input() -> None:
    assert pairwise_deltas([1500.0], [1]) == [0.0]
    with pytest.raises(ValueError):
        pairwise_deltas([1500.0, 1500.0], [1])
    with pytest.raises(ValueError):
        pairwise_deltas([1500.0, 1500.0], [0, 1])


def test_seat_outcomes() -> None:
    assert seat_outcomes([1, 2]) == ["win", "loss"]
    assert seat_outcomes([1, 1]) == ["draw", "draw"]
    assert seat_outcomes([1, 2, 2, 4]) == ["win", "loss", "loss", "loss"]
    assert seat_outcomes([2, 1, 1]) == ["loss", "draw", "draw"]
