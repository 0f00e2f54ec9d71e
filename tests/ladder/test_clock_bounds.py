# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""Time controls are bounded wherever one enters (docs/faults.md, "Clocks, stalls and retried deals";
docs/bots.md "The clock and the verdicts"): the attacker's requests to the web API, an organiser's
tournament, the CLI, and the bounds themselves against the referee's own rule.

The bounds, as docs/bots.md states them: every decision gets at least 100 ms and at most 60,000 ms
(what the referee allows: ``min(base + increment, cap)`` with a bank, ``min(increment, cap)`` of the
non-zero ones without); ``base_ms`` at most 3,600,000, ``increment_ms`` and ``cap_ms`` at most
60,000, ``margin_ms`` 0 to 10,000.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_participants import (  # noqa: F401 - fixtures are found by name
    account,
    app,
    bearer,
    client,
    new_bot,
    pool,
    rds,
)

from ladder import accounts as acc
from ladder.errors import TournamentError
from ladder.match_plans import check_time_control, decision_bounds_ms
from parterre.commands.common import CliError, parse_time_control
from referee import clock

TOO_SHORT = [
    ({"base_ms": 0, "increment_ms": 1, "cap_ms": 60_000}, "at least 100 ms"),  # min(increment, cap) = 1 ms
    ({"base_ms": 1, "increment_ms": 0, "cap_ms": 60_000}, "at least 100 ms"),  # min(bank, cap) = 1 ms
    ({"base_ms": 50, "increment_ms": 49, "cap_ms": 0}, "at least 100 ms"),
]
TOO_LONG = [
    ({"base_ms": 3_600_000, "increment_ms": 0, "cap_ms": 0}, "at most 60000 ms"),  # one decision: the hour
    ({"base_ms": 60_000, "increment_ms": 1000, "cap_ms": 0}, "at most 60000 ms"),  # the bank grows
    ({"base_ms": 0, "increment_ms": 0, "cap_ms": 60_001}, "cap_ms is at most 60000 ms"),
    ({"base_ms": 3_600_001, "increment_ms": 0, "cap_ms": 1000}, "base_ms is at most 3600000 ms"),
    ({"base_ms": 0, "increment_ms": 1000, "cap_ms": 1000, "margin_ms": 10_001}, "margin_ms is at most 10000 ms"),
]


def test_a_challenger_cannot_set_a_clock_outside_the_bounds(client: Any) -> None:
    """The attacker's requests: each got 201 and a match before; now 400 naming the bound."""
    _, a = account(client)
    _, c = account(client)
    mine, theirs = new_bot(client, a), new_bot(client, c, accepts_challenges=True)
    for tc, bound in TOO_SHORT + TOO_LONG:
        r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine["id"], theirs["id"]],
                                                 "time_control": tc, "rated": True}, headers=bearer(a))
        assert r.status_code == 400, (tc, r.status_code, r.text)
        assert bound in r.json()["detail"], (tc, r.json())
    for tc in ({"base_ms": 0, "increment_ms": 100, "cap_ms": 100, "margin_ms": 0},
               {"base_ms": 3_600_000, "increment_ms": 0, "cap_ms": 60_000, "margin_ms": 10_000}):
        r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine["id"], theirs["id"]],
                                                 "time_control": tc}, headers=bearer(a))
        assert r.status_code == 201, (tc, r.text)


def test_an_organiser_cannot_create_a_tournament_with_a_clock_outside_the_bounds(client: Any, pool: Any) -> None:
    name, org = account(client, scopes=("tournament:create", "bot:manage"))
    row = acc.get_account(pool, name)
    assert row is not None
    acc.set_role(pool, row.id, "organiser")
    bots = [new_bot(client, org)["id"], new_bot(client, org)["id"]]
    for tc, bound in TOO_SHORT + TOO_LONG:
        r = client.post("/api/tournaments", json={"name": "t", "game": "floriferous", "bot_ids": bots,
                                                  "time_control": tc}, headers=bearer(org))
        assert r.status_code == 400 and bound in r.json()["detail"], (tc, r.status_code, r.text)


@pytest.mark.parametrize(("text", "bound"), [("0:1:60000:100", "at least 100 ms"),
                                             ("3600000:0:0:100", "at most 60000 ms"),
                                             ("99+50", "at least 100 ms"),
                                             ("1000+10001", "margin_ms is at most 10000 ms")])
def test_the_cli_refuses_a_clock_outside_the_bounds(text: str, bound: str) -> None:
    with pytest.raises(CliError, match=bound):
        parse_time_control(text)


def test_the_bounds_at_their_edges() -> None:
    """The documented numbers, one millisecond either side."""
    check_time_control(0, 100, 0, 0)
    check_time_control(0, 0, 60_000, 10_000)
    check_time_control(60_000, 0, 0, 0)  # a bank with no cap and no increment: 60 s for the first decision
    check_time_control(3_600_000, 0, 60_000, 100)
    for args in ((0, 99, 0, 0), (0, 0, 99, 0), (0, 0, 60_001, 0), (60_001, 0, 0, 0), (3_600_001, 0, 60_000, 0),
                 (0, 1000, 1000, 10_001), (0, 1000, 1000, -1), (0, 0, 0, 100)):
        with pytest.raises(TournamentError):
            check_time_control(*args)


def test_the_first_decisions_bound_is_what_the_referee_allows() -> None:
    """An independent model, the referee's own clock: the least time the check computes is the
    allowance of the referee's first decision, for random time controls."""
    rng = random.Random(7)
    for _ in range(2000):
        base, inc, cap = (rng.choice([0, rng.randrange(1, 200), rng.randrange(1, 70_000)]) for _ in range(3))
        if base == inc == cap == 0:
            continue
        least, most = decision_bounds_ms(base, inc, cap)
        seat = clock.SeatClock(clock.TimeControl(base, inc, cap, 0))
        first = seat.next_allowance().allowed_ms
        assert least == first, (base, inc, cap)
        seat.charge(0)  # an answer at once: the bank grows by the increment
        second = seat.next_allowance().allowed_ms
        assert most is None or second <= most, (base, inc, cap)
        if most is None:
            assert second > first  # uncapped, the bank keeps growing: nothing bounds a decision


@pytest.mark.parametrize("deadline", ["99", "60001"])
def test_the_hosted_games_runner_refuses_a_deadline_outside_the_bounds(deadline: str, tmp_path: Path) -> None:
    """The gRPC bots' games (trials) refuse the deadline before they look for a referee or start a side."""
    from workers.hosting import trial_games

    deals = trial_games.play_trial_deals("floriferous(players=2)", "grpc:[]", "builtin:greedy", run_seed="s",
                                         deals=1, deadline_ms=int(deadline), run_dir=tmp_path, env={},
                                         cwd=tmp_path)
    with pytest.raises(ValueError, match="time control"):
        next(deals)
    assert list(tmp_path.iterdir()) == []
