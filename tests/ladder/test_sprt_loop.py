"""``DuplicateTest.run``, the one sequential test loop of ``parterre regress`` and the hosted regression test.

Oracles independent of the code under test:

* Wald's error bounds: over many simulated runs of game pairs with a *known* Elo difference, the
  test accepts H1 at ``elo = elo0`` in at most about ``alpha`` of the runs and H0 at ``elo = elo1``
  in at most about ``beta`` (Wald's bounds err on the safe side; the slack below allows for the
  simulation's own sampling error). Games are simulated as independent wins and losses with the
  logistic win probability ``1 / (1 + 10 ** (-elo / 400))``, written out here.
* Wald's bounds themselves, ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``, written
  out here: the loop stops at the first deal whose LLR (recorded in the trajectory) crosses one.
* The loop's contract: it draws no deal after the test decides, and a budget that runs out
  leaves it undecided.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest

from ladder.stats.paired import DealResult, DuplicateTest, TrajectoryPoint, head_to_head_deal
from ladder.stats.sprt import Sprt, SprtState

WIN = ([1, 2], [2, 1])  # the candidate wins both games of the pair
LOSS = ([2, 1], [1, 2])
SPLIT = ([1, 2], [1, 2])  # candidate first wins, baseline first wins


def _p_win(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def _pairs(rng: random.Random, elo: float, limit: int) -> Iterator[DealResult]:
    p = _p_win(elo)
    for _ in range(limit):
        first = [1, 2] if rng.random() < p else [2, 1]  # candidate in seat 0
        second = [2, 1] if rng.random() < p else [1, 2]  # candidate in seat 1
        yield head_to_head_deal(first, second)


@pytest.mark.parametrize(("true_elo", "wrong", "bound"), [(-60.0, SprtState.H1, "alpha"), (0.0, SprtState.H0, "beta")])
def test_error_rates_stay_within_alpha_and_beta(true_elo: float, wrong: SprtState, bound: str) -> None:
    sprt = Sprt(-60, 0, alpha=0.1, beta=0.1)
    rng = random.Random(f"sprt-loop-{true_elo}")
    runs, errors, undecided = 120, 0, 0
    for _ in range(runs):
        state = DuplicateTest(sprt, pentanomial=True).run(_pairs(rng, true_elo, 3000))
        errors += state is wrong
        undecided += state is SprtState.CONTINUE
    nominal = getattr(sprt, bound)
    # binomial sampling error of 120 runs at 0.1 is about 0.027: three of them above the nominal rate
    assert errors / runs <= nominal + 3 * math.sqrt(nominal * (1 - nominal) / runs)
    assert undecided == 0


class _Counted:
    """An iterable of deals that counts how many were drawn."""

    def __init__(self, deals: list[DealResult]) -> None:
        self.deals, self.drawn = deals, 0

    def __iter__(self) -> Iterator[DealResult]:
        for deal in self.deals:
            self.drawn += 1
            yield deal


def test_stops_at_the_first_deal_past_walds_bound_and_draws_no_more() -> None:
    alpha, beta = 0.05, 0.1
    sprt = Sprt(-50, 0, alpha, beta)
    upper, lower = math.log((1 - beta) / alpha), math.log(beta / (1 - alpha))
    for pair, decided in ((WIN, SprtState.H1), (LOSS, SprtState.H0)):
        deals = _Counted([head_to_head_deal(*pair)] * 200)
        test = DuplicateTest(sprt, pentanomial=True)
        seen: list[float] = []

        def record(point: TrajectoryPoint, _test: DuplicateTest, seen: list[float] = seen) -> None:
            seen.append(point.llr)

        assert test.run(deals, record) is decided
        crossed = [i for i, llr in enumerate(seen) if not lower < llr < upper]
        assert crossed == [len(seen) - 1]  # only the last point is past a bound
        assert deals.drawn == len(seen) == test.deals < 200
        assert test.run(deals) is decided and deals.drawn == len(seen)  # decided: draws nothing more


def test_a_budget_that_runs_out_leaves_the_test_undecided() -> None:
    deals = _Counted([head_to_head_deal(*SPLIT)] * 5)
    test = DuplicateTest(Sprt(-5, 5), pentanomial=True)
    assert test.run(deals) is SprtState.CONTINUE
    assert deals.drawn == 5 and test.deals == 5 and test.games == 10
