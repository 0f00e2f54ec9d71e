"""``parterre tournament run --wait``: the final tally by status and an exit code that says whether
every match finished (docs/faults.md F-23).

The CLI runs in-process against a real PostgreSQL and Redis; what the workers
would do is done by a thread through the ladder's own functions (claim, record a
result, record a failed attempt), so the expected tally is known by
construction: the oracle is the list of outcomes the thread produced. (The
same with real processes, a killed worker, with and without ``parterre beat``:
``tests/e2e/test_faults_outage_e2e.py``.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.ladder_helpers import make_result

from parterre.cli import main


@pytest.fixture
def cli_env(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, database_url: str, redis_base_url: str) -> Iterator[Any]:
    """A migrated database with 3 bots and a 2-player round-robin of 6 matches; queuing captured."""
    import workers.tasks as tasks
    from ladder import bots, db, tournaments

    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_base_url)
    monkeypatch.setenv("PARTERRE_CLUSTER_NAMESPACE", f"wait-{time.monotonic_ns()}")
    queued: list[int] = []
    monkeypatch.setattr(tasks.plan_tournament, "delay", lambda tid: queued.append(tid))  # no stray message
    db.migrate(database_url)
    pool = db.make_pool(database_url, max_size=4)
    ids = [bots.register_bot(pool, f"w-{i}")[0] for i in range(3)]
    tid = tournaments.create_tournament(pool, name="wait", game="floriferous", bot_ids=ids)
    yield pool, tid, queued
    pool.close()


def _workers(pool: Any, tid: int, outcomes: list[str]) -> threading.Thread:
    """A thread that plans the tournament and ends match i as ``outcomes[i]``."""
    from ladder import matches, tournaments

    def run() -> None:
        time.sleep(0.5)  # the CLI is waiting by now
        for mid, outcome in zip(tournaments.plan_tournament(pool, tid), outcomes, strict=True):
            if outcome == "planned":
                continue
            spec = matches.claim_match(pool, mid, "fake-worker#0")
            assert spec is not None
            if outcome == "finished":
                assert matches.record_result(pool, mid, spec.attempt, make_result(spec, [1, 2]))
            elif outcome == "failed":
                matches.record_failed_attempt(pool, mid, spec.attempt, "infra_error", "referee 10.0.0.9: boom", 1)
            elif outcome == "aborted_no_show":
                matches.record_failed_attempt(pool, mid, spec.attempt, "aborted_no_show", "no_show: seat 1", 1)
            # "running": claimed, never ended

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_wait_prints_the_tally_and_exits_1_when_matches_failed(cli_env: Any, capsys: Any) -> None:
    pool, tid, queued = cli_env
    outcomes = ["finished", "failed", "finished", "aborted_no_show", "finished", "finished"]
    t = _workers(pool, tid, outcomes)
    code, out, err = _run(capsys, "tournament", "run", str(tid), "--wait", "--timeout", "60")
    t.join(10)
    assert queued == [tid]
    assert code == 1, (out, err)
    assert f"tournament {tid}: 6 matches: 4 finished, 1 failed, 1 aborted_no_show" in out
    assert "failed after 1 attempt(s): referee 10.0.0.9: boom" in out
    assert "aborted_no_show after 1 attempt(s): no_show: seat 1" in out
    assert "2 match(es) did not finish" in err


def test_wait_exits_0_when_every_match_finished(cli_env: Any, capsys: Any) -> None:
    pool, tid, _ = cli_env
    t = _workers(pool, tid, ["finished"] * 6)
    code, out, err = _run(capsys, "tournament", "run", str(tid), "--wait", "--timeout", "60")
    t.join(10)
    assert code == 0, (out, err)
    assert f"tournament {tid}: 6 matches: 6 finished" in out


def test_wait_gives_up_at_its_timeout_with_a_tally_not_a_traceback(cli_env: Any, capsys: Any) -> None:
    pool, tid, _ = cli_env
    t = _workers(pool, tid, ["finished", "finished", "running", "planned", "finished", "finished"])
    t0 = time.monotonic()
    code, out, err = _run(capsys, "tournament", "run", str(tid), "--wait", "--timeout", "3")
    t.join(10)
    assert code == 3, (out, err)
    assert time.monotonic() - t0 < 20
    assert f"tournament {tid}: 6 matches: 4 finished, 1 planned, 1 running" in out
    assert "gave up waiting after 3 s (--timeout)" in err and "Traceback" not in err
