"""``parterre regress`` (parterre/regress.py): specs, plans, the sequential loop, the three backends, exit codes.

Budgets are small and the Elo bounds wide so that every run here decides in
a few deals; the long measurements (calibration of the handicap, budgets of
the planted check, false-positive rate) are in bench/bench_regress.py and
docs/regression.md.
"""

from __future__ import annotations

import concurrent.futures
import json
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bots.cli import BOT_KINDS, make_bot
from bots.handicap import HandicapBot
from bots.reference import GreedyBot
from ladder.stats.sprt import Sprt, SprtState
from parterre import regress as rg
from parterre.cli import main

# -- specs and plans -------------------------------------------------------------------------------


def test_parse_spec():
    s = rg.parse_spec("builtin:handicap:p=0.3,seed=7,name=x")
    assert (s.kind, dict(s.options), s.builtin) == ("handicap", {"p": 0.3, "seed": 7, "name": "x"}, True)
    assert rg.parse_spec("builtin:greedy").options == ()
    reg = rg.parse_spec("my-bot")
    assert (reg.builtin, reg.ref) == (False, "my-bot")
    for bad in ("", "builtin:nope", "builtin:handicap:p"):
        with pytest.raises(rg.RegressError):
            rg.parse_spec(bad)
    with pytest.raises(rg.RegressError, match="does not take"):
        rg.parse_spec("builtin:greedy:p=0.3").make()


def test_make_plan():
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:random")
    assert (plan.players, plan.head_to_head, plan.games_per_deal) == (2, True, 2)
    assert plan.game_string.startswith("floriferous(") and "players=2" in plan.game_string
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:random", ["builtin:random", "builtin:greedy"])
    assert (plan.players, plan.head_to_head, plan.games_per_deal) == (3, False, 6)
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:random", players=4)
    assert [o.text for o in plan.opponents] == ["builtin:greedy"] * 3
    with pytest.raises(rg.RegressError, match="opponent"):
        rg.make_plan("floriferous", "a", "b", players=3)  # registered bots need explicit opponents
    with pytest.raises(rg.RegressError, match="opponent"):
        rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy", ["builtin:random"], players=4)
    with pytest.raises(rg.RegressError):
        rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy", players=9)
    with pytest.raises(rg.RegressError):
        rg.make_plan("no_such_game", "builtin:greedy", "builtin:greedy")


def test_tables_and_rotations_put_both_bots_in_the_same_seat():
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:random", ["builtin:random", "builtin:random"])
    ids = {"candidate": "A", "baseline": "B", "opponent1": "X", "opponent2": "Y"}
    tables = plan.tables(ids)
    assert tables == [["A", "X", "Y"], ["B", "X", "Y"]]
    rot = [rg.rotations(t) for t in tables]
    for k in range(3):
        assert rot[0][k].index("A") == rot[1][k].index("B") == (3 - k) % 3
    # candidate first in every rotation of its table, baseline last in every rotation of its table
    first = [tuple(1 if s == (3 - k) % 3 else 2 for s in range(3)) for k in range(3)]
    last = [tuple(3 if s == (3 - k) % 3 else 1 for s in range(3)) for k in range(3)]
    assert plan.deal_result([first, last]).score == 1
    assert plan.deal_result([last, first]).score == 0
    h2h = rg.make_plan("floriferous", "builtin:greedy", "builtin:random")
    assert h2h.tables(ids) == [["A", "B"]]
    assert h2h.deal_result([[(1, 2), (2, 1)]]).pentanomial == 4


def test_deal_seeds_are_64_hex_and_distinct():
    seeds = {rg.deal_seed("run", i) for i in range(100)}
    assert len(seeds) == 100 and all(len(s) == 64 and int(s, 16) >= 0 for s in seeds)
    assert rg.deal_seed("run", 3) == rg.deal_seed("run", 3) != rg.deal_seed("other", 3)


# -- the sequential loop with a scripted runner ------------------------------------------------------


class ScriptedRunner(rg.Runner):
    """Head-to-head deals whose outcome is a function of the deal index; futures finish out of order."""

    backend = "scripted"

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.started: list[int] = []
        self.pool = concurrent.futures.ThreadPoolExecutor(4)

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[tuple[int, ...]]]]:
        self.started.append(index)

        def play() -> list[list[tuple[int, ...]]]:
            import time

            time.sleep(0.002 * ((7 * index) % 5))  # finish out of order
            return [self.outcome(index)]

        return self.pool.submit(play)

    def close(self) -> None:
        self.pool.shutdown()


WIN_BOTH = [(1, 2), (2, 1)]
LOSE_BOTH = [(2, 1), (1, 2)]
SPLIT = [(1, 2), (1, 2)]


def _run(outcome: Any, max_games: int = 400, concurrency: int = 3, sprt: Sprt | None = None) -> rg.RegressReport:
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy")
    with ScriptedRunner(outcome) as runner:
        return rg.run_regress(plan, sprt or Sprt(-50, 0), runner, max_games=max_games, run_seed="t",
                              concurrency=concurrency)


def test_a_clear_regression_exits_1_and_stops_at_once():
    points = []
    plan = rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy")
    with ScriptedRunner(lambda i: LOSE_BOTH if i % 3 else SPLIT) as runner:
        report = rg.run_regress(plan, Sprt(-50, 0), runner, max_games=400, run_seed="t", concurrency=3,
                                on_deal=lambda p, t: points.append(p))
    assert report.state is SprtState.H0 and report.exit_code == 1
    assert points[-1].state is SprtState.H0 and all(p.state is SprtState.CONTINUE for p in points[:-1])
    assert report.test.deals == len(points) < 40 and report.games == 2 * report.test.deals
    assert max(runner.started) < report.test.deals + 3  # no more than `concurrency` deals beyond the decision
    assert report.estimate is not None and report.estimate.high < 0


def test_no_regression_exits_0_and_undecided_exits_2():
    report = _run(lambda i: SPLIT)
    assert report.state is SprtState.H1 and report.exit_code == 0
    report = _run(lambda i: WIN_BOTH if i % 2 else LOSE_BOTH, max_games=20)
    assert report.state is SprtState.CONTINUE and report.exit_code == 2
    assert report.games == 20 and report.test.deals == 10


def test_deals_are_counted_in_order_whatever_the_completion_order():
    outcome = lambda i: WIN_BOTH if i in (0, 4) else SPLIT  # noqa: E731 - a one-line local helper
    a = _run(outcome, max_games=30, concurrency=1, sprt=Sprt(-1000, 1000))
    b = _run(outcome, max_games=30, concurrency=4, sprt=Sprt(-1000, 1000))
    assert [p.llr for p in a.test.trajectory] == [p.llr for p in b.test.trajectory]


def test_budget_below_one_deal_is_an_error():
    with pytest.raises(rg.RegressError, match="less than one deal"):
        _run(lambda i: SPLIT, max_games=1)


def test_report_json():
    data = _run(lambda i: SPLIT).to_json()
    assert data["result"] == "H1" and data["exit_code"] == 0 and data["elo_model"] == "logistic"
    assert data["pentanomial"][2] == data["deals"] and len(data["trajectory"]) == data["deals"]
    json.dumps(data)


# -- the handicap bot --------------------------------------------------------------------------------


class _Req:
    def __init__(self, observation: dict[str, Any], legal: list[dict[str, Any]], seat: int) -> None:
        self.game, self.observation, self.legal_actions, self.seat = "floriferous", observation, legal, seat
        self.num_actions = len(legal)


def _decisions(n: int = 40) -> list[_Req]:
    import random

    from games.api import CHANCE, TERMINAL
    from games.registry import load_game

    rng = random.Random(4)
    out = []
    while len(out) < n:
        state = load_game("floriferous(players=2)").new_initial_state()
        while state.current_player() != TERMINAL and len(out) < n:
            p = state.current_player()
            if p == CHANCE:
                state.apply_action(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            out.append(_Req(state.observation(p), [a.to_json() for a in legal], p))
            state.apply_action(legal[rng.randrange(len(legal))])
    return out


def test_handicap_bot_is_greedy_at_p0_and_random_at_p1():
    reqs = _decisions()
    greedy = GreedyBot(seed=1)
    assert [HandicapBot(p=0.0, seed=1).choose(r) for r in reqs] == [greedy.choose(r) for r in reqs]
    random_choices = [HandicapBot(p=1.0, seed=2).choose(r) for r in reqs]
    assert all(0 <= c < r.num_actions for c, r in zip(random_choices, reqs, strict=True))
    assert random_choices != [greedy.choose(r) for r in reqs]
    half = HandicapBot(p=0.5, seed=3)
    differs = sum(half.choose(r) != greedy.choose(r) for r in reqs if r.num_actions > 1)
    assert 0 < differs < len(reqs)
    with pytest.raises(ValueError):
        HandicapBot(p=1.5)


def test_handicap_is_a_registered_bot_kind():
    assert BOT_KINDS["handicap"] is HandicapBot
    bot = make_bot("handicap", p=0.3, seed=5)
    assert isinstance(bot, HandicapBot) and bot.p == 0.3


# -- in process: direct and referee backends -----------------------------------------------------------


def _direct(candidate: str, baseline: str, sprt: Sprt, max_games: int, **kw: Any) -> rg.RegressReport:
    plan = rg.make_plan("floriferous", candidate, baseline, **kw)
    with rg.DirectRunner(plan, "test-run") as runner:
        return rg.run_regress(plan, sprt, runner, max_games=max_games, run_seed="test-run")


def test_direct_identical_copy_passes_and_planted_regression_is_detected_head_to_head():
    sprt = Sprt(-150, 0)
    copy = _direct("builtin:greedy", "builtin:greedy", sprt, 40)
    assert copy.exit_code == 0 and copy.games <= 20, copy.to_json()
    planted = _direct("builtin:handicap:p=0.8", "builtin:greedy", sprt, 60)
    assert planted.exit_code == 1, planted.to_json()
    assert planted.estimate is not None and planted.estimate.elo < -150


def test_direct_paired_three_players():
    sprt = Sprt(-100, 0)
    copy = _direct("builtin:greedy", "builtin:greedy", sprt, 90, players=3)
    assert copy.exit_code == 0 and not copy.plan.head_to_head, copy.to_json()
    planted = _direct("builtin:handicap:p=0.9", "builtin:greedy", sprt, 90, players=3)
    assert planted.exit_code == 1, planted.to_json()


def test_direct_runs_are_reproducible():
    a = _direct("builtin:handicap:p=0.3", "builtin:greedy", Sprt(-1000, 1000), 8)
    b = _direct("builtin:handicap:p=0.3", "builtin:greedy", Sprt(-1000, 1000), 8)
    assert a.test.penta == b.test.penta


def test_direct_backend_refuses_protocol_bots():
    plan = rg.make_plan("floriferous", "builtin:slow", "builtin:greedy")
    with pytest.raises(rg.RegressError, match="direct backend"):
        rg.DirectRunner(plan, "x")


def test_cli_in_process_referee_identical_copy(capsys):
    code = main(["regress", "--game", "floriferous", "--candidate", "builtin:greedy", "--baseline", "builtin:greedy",
                 "--elo0", "-100", "--elo1", "0", "--max-games", "40", "--seed", "cli", "--every", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "backend referee" in out and "H1 accepted" in out and "LLR" in out and "games played" in out
    assert "Elo difference" in out and "logistic Elo" in out
    assert out.count("  deal ") >= 2  # the trajectory


def test_cli_exit_codes_for_undecided_and_errors(capsys):
    code = main(["regress", "--game", "floriferous", "--candidate", "builtin:random", "--baseline", "builtin:random",
                 "--max-games", "4", "--backend", "direct", "--json", "--seed", "u"])
    data = json.loads(capsys.readouterr().out)
    assert code == 2 and data["result"] == "undecided" and data["games"] == 4
    base = ["regress", "--game", "floriferous", "--baseline", "builtin:greedy"]
    assert main([*base, "--candidate", "builtin:nope"]) == 3
    assert main(["regress", "--game", "floriferous", "--candidate", "builtin:greedy", "--baseline", "x"]) == 3
    assert main(["regress", "--game", "floriferous", "--candidate", "builtin:greedy", "--baseline", "builtin:greedy",
                 "--elo0", "5", "--elo1", "0"]) == 3
    assert "error" in capsys.readouterr().err


# -- the ladder backend: registered bots, duplicate deals in PostgreSQL, worker task -------------------


@pytest.fixture
def ladder_pool(database_url: str) -> Iterator[Any]:
    from ladder import db

    db.migrate(database_url)
    p = db.make_pool(database_url, min_size=1, max_size=6)
    yield p
    p.close()


def test_ladder_backend_plays_duplicate_deals_through_the_worker_task(ladder_pool, database_url, monkeypatch):
    import workers.tasks as tasks
    from ladder import bots as ladder_bots
    from referee.testing import SERVICE_TOKEN, ThreadedReferee

    registered = {name: ladder_bots.register_bot(ladder_pool, name) for name in ("cand", "base")}
    tokens = {token: bot_id for bot_id, token in registered.values()}
    ref = ThreadedReferee(tokens, bots={registered["cand"][1]: HandicapBot(p=0.2, seed=1, max_concurrent_matches=4),
                                        registered["base"][1]: GreedyBot(seed=2, max_concurrent_matches=4)}).start()
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
    monkeypatch.setattr(tasks, "_pool", ladder_pool)
    threads: list[threading.Thread] = []

    def delay(match_id: int) -> None:  # a worker: run the real task function in a thread
        t = threading.Thread(target=tasks.run_match, args=(match_id,))
        threads.append(t)
        t.start()

    monkeypatch.setattr(tasks.run_match, "delay", delay)
    try:
        plan = rg.make_plan("floriferous", "cand", "base")
        with rg.LadderRunner(plan, ladder_pool, check_workers=False, poll_s=0.05) as runner:
            report = rg.run_regress(plan, Sprt(-10, 10), runner, max_games=4, run_seed=secrets.token_hex(4),
                                    concurrency=2)
            tid = runner.tournament_id
        for t in threads:
            t.join(30)
    finally:
        ref.stop()
    assert report.backend == "ladder" and report.test.deals == 2 and report.games == 4
    assert sum(report.test.penta) == 2
    with ladder_pool.connection() as conn:
        fmt = conn.execute("SELECT format FROM tournaments WHERE id = %s", (tid,)).fetchone()[0]
        rows = conn.execute(
            "SELECT split_part(plan_key, ':', 1), count(*), count(DISTINCT seed), bool_and(status = 'finished') "
            "FROM matches WHERE tournament_id = %s GROUP BY 1 ORDER BY 1", (tid,)).fetchall()
        rated = conn.execute("SELECT sum(games) FROM ratings WHERE game = 'floriferous'").fetchone()[0]
    assert fmt == "duplicate"
    assert rows == [("d0", 2, 1, True), ("d1", 2, 1, True)]  # each deal: both seat orders on one seed
    assert rated == 8  # ladder matches are rated like any other


def test_ladder_backend_needs_registered_bots_and_a_worker(ladder_pool, monkeypatch):
    from ladder import bots as ladder_bots

    with pytest.raises(rg.RegressError, match="registered bots"):
        rg.LadderRunner(rg.make_plan("floriferous", "builtin:greedy", "builtin:greedy"), ladder_pool)
    with pytest.raises(rg.RegressError, match="no registered bot"):
        rg.LadderRunner(rg.make_plan("floriferous", "ghost", "phantom"), ladder_pool, check_workers=False)
    ladder_bots.register_bot(ladder_pool, "one")
    ladder_bots.register_bot(ladder_pool, "two")
    monkeypatch.setattr(rg.LadderRunner, "workers_alive", staticmethod(lambda timeout_s=2.0: False))
    with pytest.raises(rg.RegressError, match="no Celery worker"):
        rg.LadderRunner(rg.make_plan("floriferous", "one", "two"), ladder_pool)
