"""Workers: 2 Celery workers ÷ 1 in matches/hour, and Celery's overhead per match (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_workers.py [--admin-url URL] [--redis-url URL]
        [--matches 20] [--repeats 3] [--delay-ms 6]

Set-up (all real): a fresh PostgreSQL database on ``--admin-url`` (default
``PARTERRE_BENCH_DATABASE_URL`` or the machine's server; dropped afterwards),
the Redis broker on ``--redis-url`` (a queue of this run's own), a referee with
two paced bots in a thread of this process (``referee.testing.ThreadedReferee``,
the bots answer a random legal index after ``--delay-ms``: a 2-player
Floriferous match has 30 decisions, so it lasts ≈ 0.2 s), and two Celery
worker processes (``celery worker --pool solo``, one match at a time each):
worker A consumes queues *one* and *two*, worker B queue *two* only.

Each repeat runs, interleaved:

* **direct** (the baseline): ``--matches`` matches, one after the other,
  through ``workers.tasks.run_match`` called in a child process without Celery
  (claim, referee, record: everything but the broker), after one warm-up match
  (a running worker has its database pool and referee channel open too);
* **1 worker**: ``--matches`` matches queued on *one* (only A takes them);
* **2 workers**: ``2 × --matches`` matches queued on *two* (A and B).

A run's time is from queuing the first match to seeing the last one finished
in PostgreSQL (polled every 5 ms). Quantities, with their goals:

* matches/hour with 2 workers ÷ with 1 worker, same repeat: >= 1.8;
* Celery's overhead per match, in ms: the wall time per match outside the game
  itself (run time / matches - the mean referee-measured match duration, replay
  ``started_at``..``ended_at``), through 1 worker minus directly: <= 20 ms, a
  tenth of a 0.2 s match (our goal; Celery alone costs ≈ 3 ms per task on
  this kind of machine). Taking out each run's own match durations keeps the bots'
  pacing, which a loaded machine stretches, out of the difference.

These are wall-clock figures on purpose: the matches are paced by the bots'
sleeps, and what is measured is how much of the wall time the workers lose.
Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import Goal, Result, report  # noqa: E402 - after the sys.path setup above

DEFAULT_ADMIN = os.environ.get("PARTERRE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DEFAULT_REDIS = os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
GAME_STRING = "floriferous(players=2)"
RATIO_GOAL = 1.8
OVERHEAD_GOAL_MS = 20.0
TC = {"base_ms": 0, "increment_ms": 0, "cap_ms": 2000, "margin_ms": 100}

DIRECT_CHILD = """
import json, sys, time
import workers.tasks as tasks
warm, *ids = json.loads(sys.argv[1])
tasks.run_match(warm)  # the pool and the referee channel open here, as in a running worker
t0 = time.perf_counter()
out = [tasks.run_match(i) for i in ids]
print(json.dumps({"s": time.perf_counter() - t0, "out": out}))
"""


def _paced_bot(seed: int, delay_s: float) -> Any:
    from bots.sdk import Bot

    class Paced(Bot):
        """Answers a random legal index after ``delay_s`` (asyncio sleep: no CPU)."""

        name = "paced"

        def __init__(self) -> None:
            super().__init__(max_concurrent_matches=4)
            self.rng = random.Random(seed)

        async def choose(self, request: Any) -> int:
            await asyncio.sleep(delay_s)
            return self.rng.randrange(len(request.raw.legal_actions))

    return Paced()


class Bench:
    """The services of one run: database, referee, bots, two workers."""

    def __init__(self, admin_url: str, redis_url: str, delay_s: float) -> None:
        from ladder import bots as ladder_bots
        from ladder import db as ladder_db
        from referee.testing import SERVICE_TOKEN, ThreadedReferee

        self.admin_url = admin_url
        self.db = f"parterre_bench_workers_{secrets.token_hex(4)}"
        import psycopg

        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.db}"')
        self.url = urlparse(admin_url)._replace(path="/" + self.db).geturl()
        ladder_db.migrate(self.url)
        self.pool = ladder_db.make_pool(self.url, min_size=1, max_size=2)
        self.bots = [ladder_bots.register_bot(self.pool, f"paced-{i}") for i in range(2)]
        tokens = {tok: bid for bid, tok in self.bots}
        self.referee = ThreadedReferee(tokens, bots={tok: _paced_bot(i, delay_s)
                                                     for i, (_, tok) in enumerate(self.bots)}).start()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  # the workers' stderr, closed in close()
        self.queues = (f"bench-one-{secrets.token_hex(3)}", f"bench-two-{secrets.token_hex(3)}")
        self.env = {
            **os.environ, "PARTERRE_DATABASE_URL": self.url, "PARTERRE_REDIS_URL": redis_url,
            "PARTERRE_SERVICE_TOKEN": SERVICE_TOKEN, "PARTERRE_REFEREE_ADDRESS": self.referee.address,
            "PARTERRE_REFEREE_DISCOVERY": "0", "PARTERRE_QUEUE": self.queues[1],
            "PYTHONPATH": str(ROOT),
        }
        self.workers = [self._worker("a", f"{self.queues[0]},{self.queues[1]}"), self._worker("b", self.queues[1])]
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("PARTERRE_")})
        from workers.app import app

        app.conf.update(broker_url=redis_url if not redis_url.startswith("unix://") else
                        "redis+socket://" + redis_url[len("unix://"):])
        self.app = app
        self.n = 0

    def _worker(self, name: str, queues: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool", "solo", "--concurrency", "1",
             "--queues", queues, "--hostname", f"{name}@bench-{secrets.token_hex(3)}", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel", "WARNING"],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log,
        )

    def plan(self, k: int) -> list[int]:
        from ladder.tournaments import plan_match

        ids = []
        for _ in range(k):
            self.n += 1
            seats = [b for b, _ in self.bots][:: 1 if self.n % 2 else -1]
            ids.append(plan_match(self.pool, game_string=GAME_STRING, bot_ids=seats, plan_key=f"bench:{self.n}",
                                  time_control=TC))
        return ids

    def _wait(self, ids: list[int], timeout_s: float = 300.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.pool.connection() as conn:
                done = conn.execute("SELECT count(*), count(*) FILTER (WHERE status <> 'finished') FROM matches "
                                    "WHERE id = ANY(%s) AND status NOT IN ('planned', 'running')", (ids,)).fetchone()
            assert done is not None
            if done[0] == len(ids):
                if done[1]:
                    raise RuntimeError(f"{done[1]} of {len(ids)} matches did not finish")
                return
            time.sleep(0.005)
        raise TimeoutError(f"matches {ids[0]}..{ids[-1]} not finished in {timeout_s} s")

    def through_celery(self, k: int, queue: str) -> tuple[float, list[int]]:
        """Seconds to run ``k`` matches queued on ``queue``, and their ids."""
        from workers.tasks import run_match

        ids = self.plan(k)
        t0 = time.perf_counter()
        for mid in ids:
            run_match.apply_async((mid,), queue=queue)
        self._wait(ids)
        return time.perf_counter() - t0, ids

    def direct(self, k: int) -> tuple[float, list[int]]:
        """Seconds to run ``k`` matches one after the other without Celery (in a child process), and their ids."""
        ids = self.plan(k + 1)
        out = subprocess.run([sys.executable, "-c", DIRECT_CHILD, json.dumps(ids)], cwd=ROOT, env=self.env,
                             check=True, capture_output=True, text=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        if set(got["out"]) != {"finished"}:
            raise RuntimeError(f"direct run: {got['out']}")
        return float(got["s"]), ids[1:]

    def match_seconds(self, ids: list[int]) -> list[float]:
        """Referee-measured durations of matches ``ids`` (replay started_at..ended_at), in seconds."""
        from datetime import datetime

        from ladder.read import replay_json

        spans = []
        for mid in ids:
            text = replay_json(self.pool, mid)
            assert text is not None
            rep = json.loads(text)
            spans.append((datetime.fromisoformat(rep["ended_at"]) - datetime.fromisoformat(rep["started_at"]))
                         .total_seconds())
        return spans

    def worker_log(self) -> str:
        """The tail of the workers' stderr."""
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-4000:]

    def close(self) -> None:
        for w in self.workers:
            w.terminate()
        for w in self.workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                w.kill()
        self.referee.stop()
        self.pool.close()
        self.log.close()
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    """Measure; print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default=DEFAULT_ADMIN)
    p.add_argument("--redis-url", default=DEFAULT_REDIS)
    p.add_argument("--matches", type=int, default=20, help="matches per 1-worker run (2x for 2 workers)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--delay-ms", type=float, default=6.0, help="each bot's time per decision")
    ns = p.parse_args(argv)
    bench = Bench(ns.admin_url, ns.redis_url, ns.delay_ms / 1000)
    try:
        bench.through_celery(4, bench.queues[1])  # warm-up: both workers connected, channels open
        ratio, one_rate, overhead, direct_ms, spans = [], [], [], [], []
        for _ in range(ns.repeats):
            d, d_ids = bench.direct(ns.matches)
            one, one_ids = bench.through_celery(ns.matches, bench.queues[0])
            two, _ = bench.through_celery(2 * ns.matches, bench.queues[1])
            r1, r2 = ns.matches / one * 3600, 2 * ns.matches / two * 3600
            ratio.append(r2 / r1)
            one_rate.append(r1)
            # wall time per match outside the game itself (the referee's clock), with and without Celery
            d_spans, one_spans = bench.match_seconds(d_ids), bench.match_seconds(one_ids)
            outside_direct = d / ns.matches - statistics.fmean(d_spans)
            outside_celery = one / ns.matches - statistics.fmean(one_spans)
            overhead.append((outside_celery - outside_direct) * 1000)
            direct_ms.append(outside_direct * 1000)
            spans += d_spans + one_spans
        span = statistics.median(spans)
    except Exception:
        print(bench.worker_log(), file=sys.stderr)
        raise
    finally:
        bench.close()
    note = f"{ns.matches} / {2 * ns.matches} matches per run, median match {span * 1000:.0f} ms (referee clock)"
    return report([
        Result(Goal("workers: 2 / 1 matches/hour (0.2 s matches)", "ratio", RATIO_GOAL), ratio, one_rate,
               "matches/hour with 1 worker", note=note),
        Result(Goal("workers: Celery overhead per match", "ms/match", OVERHEAD_GOAL_MS, higher_is_better=False,
                    source="docs/benchmarks.md (a tenth of a 0.2 s match)"),
               overhead, direct_ms, "ms per match outside the game without Celery (claim, RunMatch, record)",
               note=note),
    ], "workers: scaling and Celery overhead")


if __name__ == "__main__":
    sys.exit(main())
