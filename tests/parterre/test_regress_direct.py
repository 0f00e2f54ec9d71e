"""``play_direct`` (the ``direct`` backend of ``parterre regress`` and the benches) against the referee.

``parterre/regress/direct.py`` re-implements the referee's match loop without
gRPC: chance from ``random.Random(seed)``, each seat given its observation and
the legal actions in the engine's order. Its oracle is the referee itself:
the same plan and deal seeds are played by the ``referee`` backend (a real
referee on 127.0.0.1 and SDK bots over gRPC) and by ``play_direct``, for every
registered game, and the ranks of every match must be equal.

The bots are greedy: deterministic functions of (observation, legal actions,
seat) for every game of the registry, so any difference in chance sampling,
seat order, observations or action order shows up as a different game.
"""

from __future__ import annotations

import pytest

from parterre import regress as rg

RUN_SEED = "direct-vs-referee"
DEALS = 3


def _direct_ranks(plan: rg.RegressPlan, seed: str) -> list[list[rg.Ranks]]:
    out = []
    for table in plan.tables({role: role for role, _ in plan.roles()}):
        bots = {role: spec.make(seed="unused: greedy strategies are deterministic") for role, spec in plan.roles()}
        out.append([rg.play_direct(plan.game_string, seed, [bots[r] for r in seats]) for seats in rg.rotations(table)])
    return out


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("game", ["floriferous", "lafleur", "flowar"])  # the rules engines; not the tests' toy
def test_play_direct_gives_the_referees_ranks(game: str, players: int) -> None:
    opponents = ["builtin:greedy"] * (players - 1) if players > 2 else []
    plan = rg.make_plan(game, "builtin:greedy", "builtin:greedy", opponents, players, {})
    seeds = [rg.deal_seed(RUN_SEED, i) for i in range(DEALS)]
    with rg.RefereeRunner(plan, RUN_SEED) as runner:
        futures = [runner.start_deal(i, seed) for i, seed in enumerate(seeds)]
        by_referee = [f.result(timeout=240) for f in futures]
    by_direct = [_direct_ranks(plan, seed) for seed in seeds]
    assert by_direct == by_referee
    matches = [ranks for deal in by_direct for table in deal for ranks in table]
    assert len(matches) == DEALS * plan.games_per_deal
    assert all(sorted(r)[0] == 1 and len(r) == players for r in matches)


def test_the_comparison_can_fail() -> None:
    """The same bots on different seeds do not always give the same ranks (the check above is not vacuous)."""
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy", [], 2, {})
    results = {tuple(map(tuple, _direct_ranks(plan, rg.deal_seed(RUN_SEED, i))[0])) for i in range(12)}
    assert len(results) > 1
