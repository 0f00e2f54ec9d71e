"""The run of ``parterre regress`` and its report: the SPRT loop, exit codes, text and JSON output."""

from __future__ import annotations

import concurrent.futures
import json
import math
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from ladder.stats.paired import DealResult, DuplicateTest, TrajectoryPoint
from ladder.stats.sprt import EloEstimate, Sprt, SprtState
from parterre.regress.plan import RegressPlan, deal_seed
from parterre.regress.runners import Runner
from parterre.regress.spec import Ranks, RegressError

EXIT_CODES = {SprtState.H1: 0, SprtState.H0: 1, SprtState.CONTINUE: 2}
"""Exit status of ``parterre regress`` per final SPRT state (3 = the run failed)."""


EXIT_ERROR = 3
"""Exit status when the run could not be made."""


@dataclass
class RegressReport:
    """The outcome of a run.

    Attributes:
        plan / sprt: what was tested.
        backend: ``referee``, ``direct`` or ``ladder``.
        test: the sequential test (trajectory, distribution).
        state: final SPRT state.
        estimate: Elo difference with its 95 % interval (None before any deal).
        max_games: the budget.
        elapsed_s: wall time.
        run_seed: seed the deals were derived from.
        tournament_id: the ladder tournament (ladder backend only).
    """

    plan: RegressPlan
    sprt: Sprt
    backend: str
    test: DuplicateTest
    state: SprtState
    estimate: EloEstimate | None
    max_games: int
    elapsed_s: float
    run_seed: str
    tournament_id: int | None = None

    @property
    def exit_code(self) -> int:
        """0 (H1: not a regression), 1 (H0: regression) or 2 (undecided)."""
        return EXIT_CODES[self.state]

    @property
    def games(self) -> int:
        """Matches played and counted."""
        return self.test.games

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary with the whole trajectory."""
        est = self.estimate
        values, counts = self.test.distribution() if self.test.deals else ([], [])
        return {
            "game_string": self.plan.game_string,
            "players": self.plan.players,
            "candidate": self.plan.candidate.text,
            "baseline": self.plan.baseline.text,
            "opponents": [o.text for o in self.plan.opponents],
            "model": "pentanomial (game pairs)" if self.plan.head_to_head else "paired duplicate (N-player)",
            "elo_model": "logistic" if self.plan.head_to_head else "logistic, duplicate score",
            "elo0": self.sprt.elo0, "elo1": self.sprt.elo1, "alpha": self.sprt.alpha, "beta": self.sprt.beta,
            "bounds": [self.sprt.lower, self.sprt.upper],
            "backend": self.backend,
            "result": {SprtState.H1: "H1", SprtState.H0: "H0", SprtState.CONTINUE: "undecided"}[self.state],
            "exit_code": self.exit_code,
            "llr": self.test.trajectory[-1].llr if self.test.trajectory else 0.0,
            "elo": None if est is None else {"elo": est.elo, "low": est.low, "high": est.high, "los": est.los,
                                             "score": est.score, "confidence": est.confidence},
            "games": self.test.games, "deals": self.test.deals, "max_games": self.max_games,
            "pentanomial": list(self.test.penta) if self.plan.head_to_head else None,
            "distribution": {f"{v:.6g}": c for v, c in zip(values, counts, strict=True) if c >= 1},
            "trajectory": [[p.deals, p.games, round(p.llr, 6)] for p in self.test.trajectory],
            "elapsed_s": round(self.elapsed_s, 3),
            "run_seed": self.run_seed,
            "tournament_id": self.tournament_id,
        }


def _deals_in_order(plan: RegressPlan, runner: Runner, run_seed: str, budget: int,
                    concurrency: int) -> Generator[DealResult, None, None]:
    """The samples of deals ``0 .. budget - 1`` in deal order, ``concurrency`` deals in flight; closing the
    generator cancels the deals not yet counted.

    Raises:
        RegressError: a deal could not be played."""
    futures: dict[int, concurrent.futures.Future[list[list[Ranks]]]] = {}
    next_start = 0
    try:
        for index in range(budget):
            while next_start < budget and len(futures) < max(1, concurrency):
                futures[next_start] = runner.start_deal(next_start, deal_seed(run_seed, next_start))
                next_start += 1
            try:
                ranks = futures.pop(index).result()
            except RegressError:
                raise
            except Exception as exc:
                raise RegressError(f"deal {index} could not be played: {type(exc).__name__}: {exc}") from exc
            yield plan.deal_result(ranks)
    finally:
        for fut in futures.values():
            fut.cancel()


def run_regress(
    plan: RegressPlan,
    sprt: Sprt,
    runner: Runner,
    *,
    max_games: int,
    run_seed: str,
    concurrency: int = 1,
    on_deal: Callable[[TrajectoryPoint, DuplicateTest], None] | None = None,
) -> RegressReport:
    """Play deals until the SPRT decides or the next deal would exceed ``max_games``
    (:meth:`ladder.stats.paired.DuplicateTest.run`, the one sequential test loop).

    Deals are started ``concurrency`` at a time but counted strictly in deal
    order, so the stopping time does not depend on which matches happen to
    finish first. Deals still running when the test decides are not counted.

    Args:
        plan: what to play.
        sprt: hypotheses and error probabilities.
        runner: the backend.
        max_games: game budget (matches); at least one deal's worth.
        run_seed: deal ``i`` is played on :func:`deal_seed(run_seed, i) <deal_seed>`.
        concurrency: deals in flight at once (>= 1).
        on_deal: called after each counted deal with its trajectory point.

    Returns:
        The report (``exit_code`` 0, 1 or 2).

    Raises:
        RegressError: the budget is below one deal, or a deal could not be played.
    """
    per_deal = plan.games_per_deal
    budget = max_games // per_deal
    if budget < 1:
        raise RegressError(f"--max-games {max_games} is less than one deal ({per_deal} games)")
    started = time.monotonic()
    test = DuplicateTest(sprt, pentanomial=plan.head_to_head)
    deals = _deals_in_order(plan, runner, run_seed, budget, concurrency)
    try:
        test.run(deals, on_deal)
    finally:
        deals.close()  # cancels the deals still in flight
    estimate = test.estimate() if test.deals else None
    return RegressReport(plan, sprt, runner.backend, test, test.state, estimate, max_games,
                         time.monotonic() - started, run_seed)


def describe(plan: RegressPlan, sprt: Sprt) -> Iterator[str]:
    """Header lines: what is compared, the model, and what each exit status means."""
    if plan.head_to_head:
        yield (f"{plan.game_string}: candidate {plan.candidate.text} vs baseline {plan.baseline.text}, "
               "each deal played in both seat orders (a game pair)")
        yield "model: pentanomial GSPRT over game pairs (fishtest), logistic Elo"
    else:
        yield (f"{plan.game_string}: candidate {plan.candidate.text} and baseline {plan.baseline.text} in the same "
               f"seats against {', '.join(o.text for o in plan.opponents)}, every seat rotation of each deal")
        yield ("model: paired duplicate GSPRT over deals; Elo = logistic Elo of the duplicate score "
               "(about half a Bradley-Terry difference, see docs/regression.md)")
    yield (f"H0: elo = {sprt.elo0:+g} (exit 1, regression)   H1: elo = {sprt.elo1:+g} (exit 0, not a regression)   "
           f"alpha {sprt.alpha:g}, beta {sprt.beta:g}, LLR bounds ({sprt.lower:+.2f}, {sprt.upper:+.2f})")


def trajectory_line(point: TrajectoryPoint, test: DuplicateTest) -> str:
    """One line of the LLR trajectory."""
    bar_w = 21
    lo, hi = test.sprt.lower, test.sprt.upper
    pos = 0 if point.llr <= lo else bar_w - 1 if point.llr >= hi else int((point.llr - lo) / (hi - lo) * (bar_w - 1))
    bar = "".join("|" if i == bar_w // 2 and i != pos else "*" if i == pos else "." for i in range(bar_w))
    return f"  deal {point.deals:5d}  games {point.games:6d}  LLR {point.llr:+7.3f}  [{bar}]"


def summary_lines(report: RegressReport) -> Iterator[str]:
    """The final lines: verdict, Elo with interval, games."""
    verdict = {
        SprtState.H1: f"H1 accepted: not a regression (elo >= {report.sprt.elo1:+g})",
        SprtState.H0: f"H0 accepted: REGRESSION (elo <= {report.sprt.elo0:+g})",
        SprtState.CONTINUE: "undecided: the game budget ran out before the test decided",
    }[report.state]
    llr = report.test.trajectory[-1].llr if report.test.trajectory else 0.0
    yield f"result: {verdict}"
    yield f"LLR {llr:+.3f} (bounds {report.sprt.lower:+.2f}, {report.sprt.upper:+.2f})"
    if report.estimate is not None:
        scale = "logistic Elo" if report.plan.head_to_head else "duplicate Elo (logistic)"
        yield f"Elo difference: {report.estimate} — {scale}, candidate minus baseline"
    if report.plan.head_to_head:
        yield f"pentanomial [LL, LD, DD+WL, WD, WW]: {report.test.penta}"
    yield (f"games played: {report.test.games} in {report.test.deals} deal(s) of {report.plan.games_per_deal}, "
           f"budget {report.max_games}; {report.elapsed_s:.1f} s, backend {report.backend}")


def print_text(report: RegressReport, out: Callable[[str], None] = print) -> None:
    """Print the summary."""
    for line in summary_lines(report):
        out(line)


def print_json(report: RegressReport, out: Callable[[str], None] = print) -> None:
    """Print the JSON summary."""
    out(json.dumps(report.to_json(), indent=1))


def auto_every(max_games: int, per_deal: int, lines: int = 40) -> int:
    """Print every k-th trajectory point so a full budget shows about ``lines`` lines."""
    return max(1, math.ceil(max_games / per_deal / lines))
