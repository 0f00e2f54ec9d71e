"""A referee outage and a killed worker, with real processes (docs/faults.md F-22 and F-23;
docs/faults.md F-22, F-23).

Everything is real: ``parterre referee`` and ``parterre worker`` processes (Celery
with the test Redis as broker, on a queue and cluster namespace of this test's
own), the machine's PostgreSQL (a fresh database), a bots process, and
``parterre tournament run --wait`` as the user runs it; each child in its own
process group, killed with SIGKILL (nothing cleaned up).

* **Outage (F-22)**: while a 12-match round-robin runs, the referee is
  SIGKILLed and started again on the same ports 20 s later. With the defaults
  (3 attempts, 5 s apart) this used to turn most queued matches ``failed``
  while ``--wait`` exited 0. Now: every match finishes, no match used more
  than 2 attempts (the one running at the kill, and its retry), no verdict
  against a bot, and ``--wait`` exits 0 with a tally of 12 finished.
* **Killed worker (F-23)**, with and without ``parterre beat``: one of two
  workers is SIGKILLed while it runs a match and is not started again; its
  match stays ``running`` until its lease (5 s here) runs out, then the other
  worker's own reaper (or beat's) queues it again. ``--wait`` exits 0 with
  every match finished, and the lost attempt is an ``infra_error``.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from test_faults_e2e import BOTS_PROCESS, Stack

from parterre.demo import free_port, wait_for_referee

pytestmark = [pytest.mark.e2e, pytest.mark.faults_e2e]  # `make test-faults` (a .ci/run stage)


def _env(tmp_path: Path, url: str, redis_url: str, control: str, **extra: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
        "PARTERRE_HOME": str(tmp_path),
        "PARTERRE_DATABASE_URL": url,
        "PARTERRE_REDIS_URL": redis_url,
        "PARTERRE_SERVICE_TOKEN": "e2e-" + secrets.token_hex(8),
        "PARTERRE_QUEUE": f"parterre-outage-{secrets.token_hex(4)}",
        "PARTERRE_CLUSTER_NAMESPACE": f"parterre-outage-{secrets.token_hex(4)}",
        "PARTERRE_REFEREE_ADDRESS": control,
        "PARTERRE_LADDER_GAMES": "",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def _q(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, connect_timeout=3) as conn:
        return conn.execute(sql, params).fetchall()


def _setup(database_url: str, redis_base_url: str, n_bots: int) -> tuple[int, list[tuple[int, str]]]:
    import redis

    from ladder import bots as ladder_bots
    from ladder import db as ladder_db
    from ladder import tournaments

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=2)
    r = redis.Redis.from_url(redis_base_url)
    try:
        bots = [ladder_bots.register_bot(pool, f"outage-{i}", redis=r) for i in range(n_bots)]
        tid = tournaments.create_tournament(
            pool, name="outage", game="floriferous", bot_ids=[b for b, _ in bots], player_counts=(2,),
            time_control={"base_ms": 0, "increment_ms": 0, "cap_ms": 5000, "margin_ms": 500},
        )
    finally:
        r.close()
        pool.close()
    return tid, bots


def _wait_run(stack: Stack, tid: int, timeout_s: float) -> subprocess.Popen[bytes]:
    return stack.cli("wait", "tournament", "run", str(tid), "--wait", "--timeout", str(timeout_s))


def _finish(stack: Stack, proc: subprocess.Popen[bytes], limit_s: float, watch: tuple[str, ...]) -> int:
    deadline = time.monotonic() + limit_s
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"--wait still waiting:\n{stack.tail('wait')}\n{stack.tail('worker2')}"
        for name in watch:
            assert stack.procs[name].poll() is None, f"{name} died:\n{stack.tail(name)}"
        time.sleep(0.3)
    return int(proc.returncode)


def test_f22_a_20_s_referee_outage_fails_no_queued_match(database_url, redis_base_url, tmp_path):
    tid, bots = _setup(database_url, redis_base_url, 4)  # 4 bots, 2 players: 6 pairs x 2 seatings = 12
    bot_port, control_port = free_port(), free_port()
    env = _env(tmp_path, database_url, redis_base_url, f"127.0.0.1:{control_port}")
    stack = Stack(tmp_path, env)

    def start_referee() -> None:
        stack.cli("ref", "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", "ref")

    t0 = time.monotonic()
    try:
        start_referee()
        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)
        spec = [{"token": tok, "address": f"127.0.0.1:{bot_port}"} for _, tok in bots]
        stack.start("bots", [sys.executable, "-c", BOTS_PROCESS, json.dumps(spec), "100"])
        stack.cli("worker1", "worker", "--concurrency", "2", "--loglevel", "WARNING", "--hostname", "worker1@e2e")
        wait = _wait_run(stack, tid, 240)
        while _q(database_url, "SELECT count(*) FROM matches WHERE status = 'finished'")[0][0] < 2:
            assert time.monotonic() - t0 < 120, stack.tail("worker1")
            assert wait.poll() is None, stack.tail("wait")
            time.sleep(0.2)
        stack.kill("ref")
        killed_at = time.monotonic()
        pending_at_kill = _q(database_url, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')")[0][0]
        time.sleep(20.0)
        mid_outage = dict(_q(database_url, "SELECT status, count(*) FROM matches GROUP BY status"))
        start_referee()
        code = _finish(stack, wait, 200, ("worker1", "bots"))
        print(f"\noutage: {pending_at_kill} matches pending at the kill, after 20 s: {mid_outage}; "
              f"all done {time.monotonic() - killed_at:.0f} s after the kill")
    finally:
        stack.stop_all()
    out = stack.tail("wait")
    assert code == 0, out
    assert f"tournament {tid}: 12 matches: 12 finished" in out
    assert pending_at_kill >= 8 and mid_outage.get("failed", 0) == 0
    assert dict(_q(database_url, "SELECT status, count(*) FROM matches GROUP BY status")) == {"finished": 12}
    # attempts counted only for matches that started: the ones the kill interrupted, then their retries
    per_match = dict(_q(database_url, "SELECT match_id, count(*) FROM match_attempts GROUP BY match_id"))
    assert len(per_match) == 12 and max(per_match.values()) <= 2, per_match
    errors = [e for (e,) in _q(database_url, "SELECT error FROM match_attempts WHERE status <> 'finished'")]
    assert all("no referee reachable" not in e for e in errors), errors  # waiting is not an attempt
    log = (tmp_path / "worker1.log").read_text(errors="replace")
    assert "no referee reachable (try" in log and "not an attempt" in log
    verdicts = dict(_q(database_url, "SELECT verdict, count(*) FROM seats GROUP BY verdict"))
    assert verdicts == {"normal": 24}, verdicts


@pytest.mark.parametrize("beat", [False, True], ids=["without-beat", "with-beat"])
def test_f23_a_killed_workers_match_is_recovered_and_wait_tells(database_url, redis_base_url, tmp_path, beat):
    tid, bots = _setup(database_url, redis_base_url, 3)  # 3 pairs x 2 seatings = 6 matches
    bot_port, control_port = free_port(), free_port()
    env = _env(tmp_path, database_url, redis_base_url, f"127.0.0.1:{control_port}",
               PARTERRE_LEASE_S="5", PARTERRE_WORKER_REAP_S="2", PARTERRE_REAP_PERIOD_S="2",
               PARTERRE_STALE_PLANNED_S="3600")
    stack = Stack(tmp_path, env)
    t0 = time.monotonic()
    try:
        stack.cli("ref", "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", "ref")
        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)
        spec = [{"token": tok, "address": f"127.0.0.1:{bot_port}"} for _, tok in bots]
        stack.start("bots", [sys.executable, "-c", BOTS_PROCESS, json.dumps(spec), "150"])
        stack.cli("worker1", "worker", "--concurrency", "1", "--loglevel", "WARNING", "--hostname", "worker1@e2e")
        stack.cli("worker2", "worker", "--concurrency", "1", "--loglevel", "WARNING", "--hostname", "worker2@e2e")
        watch = ("ref", "bots", "worker2")
        if beat:
            stack.cli("beat", "beat", "--reap-period", "2", "--ladder-period", "3600", "--loglevel", "WARNING")
            watch += ("beat",)
        wait = _wait_run(stack, tid, 150)
        while not _q(database_url, "SELECT count(*) FROM matches WHERE status = 'running' "
                                   "AND starts_with(claimed_by, 'worker1@e2e')")[0][0]:
            assert time.monotonic() - t0 < 120, stack.tail("worker1")
            assert wait.poll() is None, stack.tail("wait")
            time.sleep(0.1)
        time.sleep(0.5)
        lost = _q(database_url, "SELECT id FROM matches WHERE status = 'running' "
                                "AND starts_with(claimed_by, 'worker1@e2e')")
        stack.kill("worker1")  # never started again: its match waits for its lease, then a reaper
        code = _finish(stack, wait, 150, watch)
    finally:
        stack.stop_all()
    out = stack.tail("wait")
    assert code == 0, out
    assert f"tournament {tid}: 6 matches: 6 finished" in out
    assert dict(_q(database_url, "SELECT status, count(*) FROM matches GROUP BY status")) == {"finished": 6}
    assert lost, "worker1 held no match when it was killed"
    rows = _q(database_url, "SELECT attempt, status, error FROM match_attempts WHERE match_id = %s ORDER BY attempt",
              lost[0][0])
    assert [r[1] for r in rows] == ["infra_error", "finished"], rows
    assert "lease expired" in rows[0][2]
    verdicts = dict(_q(database_url, "SELECT verdict, count(*) FROM seats GROUP BY verdict"))
    assert verdicts == {"normal": 12}, verdicts
