"""The ``direct`` backend: the rules engine driven as the referee drives it, without a referee."""

from __future__ import annotations

import concurrent.futures
import random
from collections.abc import Sequence
from typing import Any

from bots.local import play_local, sdk_seat
from parterre.regress.plan import RegressPlan, rotations
from parterre.regress.runners import Runner
from parterre.regress.spec import DIRECT_KINDS, Ranks, RegressError


def play_direct(game_string: str, seed: str, bots: Sequence[Any]) -> Ranks:
    """Play one match without a referee (:func:`bots.local.play_local`, chance from ``random.Random(seed)``
    as the referee draws it).

    Args:
        game_string: the game.
        seed: the match seed.
        bots: one bot per seat, each with ``choose(request) -> int``.

    Returns:
        The rules' ranks per seat.

    Raises:
        RegressError: a bot returned an index out of range.
    """
    from games.registry import load_game

    result = play_local(load_game(game_string), [sdk_seat(bot) for bot in bots], random.Random(seed))
    if result.fault_seat is not None:
        raise RegressError(f"seat {result.fault_seat} {result.detail or result.fault}")
    return result.ranks


def _direct_deal(plan: RegressPlan, run_seed: str, index: int, seed: str) -> list[list[Ranks]]:
    """Play one deal with fresh bots seeded from ``(run_seed, role, index)``: reproducible in any process."""
    bots = {role: spec.make(seed=f"{run_seed}:{role}:{index}") for role, spec in plan.roles()}
    out = []
    for table in plan.tables({role: role for role, _ in plan.roles()}):
        out.append([play_direct(plan.game_string, seed, [bots[r] for r in seats]) for seats in rotations(table)])
    return out


class DirectRunner(Runner):
    """The ``direct`` backend: rules engine and bots in this process (or ``jobs`` worker processes).

    Bots are built afresh for every deal, seeded from the run seed, their role
    and the deal index, so a run is reproducible whatever ``jobs`` is.

    Args:
        plan: the run's plan (built-in bots of kinds :data:`DIRECT_KINDS` only).
        run_seed: seeds the bots.
        jobs: worker processes (1 = play in this thread, when the future is created).

    Raises:
        RegressError: a registered bot or a kind the backend cannot play.
    """

    backend = "direct"

    def __init__(self, plan: RegressPlan, run_seed: str, jobs: int = 1) -> None:
        for role, spec in plan.roles():
            if spec.kind not in DIRECT_KINDS:
                raise RegressError(f"the direct backend plays builtin {', '.join(DIRECT_KINDS)}; {role} is {spec.text}")
        self.plan, self.run_seed = plan, run_seed
        self.pool = concurrent.futures.ProcessPoolExecutor(jobs) if jobs > 1 else None

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Play the deal now (jobs = 1) or submit it to the process pool."""
        if self.pool is not None:
            return self.pool.submit(_direct_deal, self.plan, self.run_seed, index, seed)
        fut: concurrent.futures.Future[list[list[Ranks]]] = concurrent.futures.Future()
        try:
            fut.set_result(_direct_deal(self.plan, self.run_seed, index, seed))
        except BaseException as exc:  # surfaced by .result()
            fut.set_exception(exc)
        return fut

    def close(self) -> None:
        """Shut the process pool down (pending deals are cancelled)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
