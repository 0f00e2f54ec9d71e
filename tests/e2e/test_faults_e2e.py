"""Fault injection across processes: a tournament of 50 matches while a worker, a
referee and PostgreSQL go down (docs/faults.md F-08,
F-10, F-13, F-14, F-15; docs/architecture.md, "Verdicts" and "Exactly-once recording").

Processes, all real: a PostgreSQL cluster of this test's own (``initdb`` in a
temporary directory, started and stopped with ``pg_ctl``: the machine's server
is not disturbed), the test Redis (own queue and cluster namespace), two
``parterre referee`` processes (bots spread over both, so many matches seat
bots of both referees through relays), two ``parterre worker`` processes,
``parterre beat`` (the reaper every 2 s) and a bots process.

While the round-robin (5 bots, 2- and 3-player, 50 matches) runs:
SIGKILL a worker's whole process group, then start it again under the same
node name (F-13); SIGKILL a referee, then start it again on the same ports;
restart PostgreSQL (``pg_ctl stop -m fast`` then ``start``).

Then: every match finished exactly once (one ``finished`` attempt, one
replay, one rating-history row per seat), no result double-counted (games in
the ratings equal seats of finished matches), ratings equal a rebuild from the
history, every replay complete and verified by the engine, no bot charged for
the infrastructure (every seat's verdict is ``normal``), and the faults did
happen (``infra_error`` attempts exist).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from parterre.demo import free_port, wait_for_referee
from parterre.embedded import celery_url

pytestmark = [pytest.mark.e2e, pytest.mark.faults_e2e]  # `make test-faults` (a .ci/run stage)

ROOT = Path(__file__).resolve().parents[2]
THINK_MS = 40
DEADLINE_S = 170


class TempPostgres:
    """A PostgreSQL cluster in a temporary directory, on 127.0.0.1:<port>, trust auth.

    Uses pgserver's bundled binaries; as root, runs them as pgserver's
    unprivileged ``pgserver`` user (PostgreSQL refuses to run as root).
    """

    def __init__(self) -> None:
        from pgserver._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.dir = Path(tempfile.mkdtemp(prefix="parterre-faults-pg-"))
        os.chmod(self.dir, 0o755)
        self.data = self.dir / "data"
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            from pgserver.utils import ensure_user_exists

            self.user = "pgserver"
            ensure_user_exists(self.user)
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        for tries_left in (1, 0):
            try:
                self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
                break
            except subprocess.CalledProcessError as exc:
                # pgserver's initdb died once with SIGSEGV in a CI run, before any code of
                # ours ran: a signal death is retried once on a fresh folder; an error exit is not.
                if exc.returncode >= 0 or not tries_left:
                    raise
                shutil.rmtree(self.data, ignore_errors=True)
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, exe: str, *args: str) -> None:
        subprocess.run([str(self.bin / exe), *args], check=True, capture_output=True, timeout=120, user=self.user,
                       cwd=self.dir)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.dir / "log"),
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.dir} -c max_connections=200 -c fsync=off", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", mode, "stop")

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


BOTS_PROCESS = textwrap.dedent("""
    import asyncio, json, sys
    from bots.reference import RandomBot

    class Thinker(RandomBot):
        async def choose(self, request):
            await asyncio.sleep(THINK / 1000)
            return super().choose(request)

    async def main(spec):
        bots = [Thinker(seed=i, max_concurrent_matches=4, name=f"e2e-{i}") for i in range(len(spec))]
        await asyncio.gather(*(b.arun(s["address"], s["token"], initial_backoff_s=0.1, max_backoff_s=1.0)
                               for b, s in zip(bots, spec)))

    THINK = int(sys.argv[2])
    asyncio.run(main(json.loads(sys.argv[1])))
""")


class Stack:
    """Child processes, each in its own process group, logging to files."""

    def __init__(self, log_dir: Path, env: dict[str, str]) -> None:
        self.log_dir, self.env = log_dir, env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115  (open for the child's lifetime)
        proc = subprocess.Popen(argv, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.procs[name] = proc
        return proc

    def cli(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        return self.start(name, [sys.executable, "-m", "parterre.cli", *args])

    def kill(self, name: str) -> None:
        """SIGKILL the process group: the process and its children die at once, no clean-up."""
        proc = self.procs[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)

    def tail(self, name: str, n: int = 3000) -> str:
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace")[-n:] if path.exists() else ""


@pytest.fixture
def pg() -> Iterator[TempPostgres]:
    server = TempPostgres()
    yield server
    server.destroy()


def counts(url: str) -> dict[str, int]:
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            return dict(conn.execute("SELECT status, count(*) FROM matches GROUP BY status").fetchall())
    except psycopg.OperationalError:
        return {}


def referee_errors(url: str) -> int:
    """Attempts ended by a lost referee so far (0 when the database cannot say)."""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            row = conn.execute("SELECT count(*) FROM match_attempts WHERE error LIKE '%referee%'").fetchone()
            return int(row[0]) if row else 0
    except psycopg.OperationalError:
        return 0


def test_a_tournament_survives_killed_workers_and_referees_and_a_database_restart(pg, redis_base_url, tmp_path):
    from games.replay import verify_replay
    from ladder import bots as ladder_bots
    from ladder import db as ladder_db
    from ladder import ratings, read, tournaments

    t_start = time.monotonic()
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE parterre")
    url = pg.url.rsplit("/", 1)[0] + "/parterre"
    ladder_db.migrate(url)
    pool = ladder_db.make_pool(url, min_size=1, max_size=4)
    import redis

    r = redis.Redis.from_url(redis_base_url)
    ns = f"parterre-e2e-{secrets.token_hex(4)}"
    queue = f"parterre-e2e-{secrets.token_hex(4)}"
    bots = [ladder_bots.register_bot(pool, f"e2e-{i}", redis=r) for i in range(5)]
    ports = {name: (free_port(), free_port()) for name in ("ref1", "ref2")}
    control = ",".join(f"127.0.0.1:{c}" for _, c in ports.values())
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
        "PARTERRE_HOME": str(tmp_path),
        "PARTERRE_DATABASE_URL": url,
        "PARTERRE_REDIS_URL": redis_base_url,
        "PARTERRE_SERVICE_TOKEN": "e2e-" + secrets.token_hex(8),
        "PARTERRE_QUEUE": queue,
        "PARTERRE_CLUSTER_NAMESPACE": ns,
        "PARTERRE_REFEREE_ADDRESS": control,
        "PARTERRE_MATCH_ATTEMPTS": "6",
        "PARTERRE_NO_SHOW_TIMEOUT_MS": "15000",
        "PARTERRE_RETRY_DELAY_S": "1",
        "PARTERRE_LEASE_S": "30",
        "PARTERRE_STALE_PLANNED_S": "8",
        "PARTERRE_LADDER_GAMES": "",  # beat runs the reaper only
        "PYTHONUNBUFFERED": "1",
    }
    stack = Stack(tmp_path, env)

    def start_referee(name: str) -> None:
        bot_port, control_port = ports[name]
        stack.cli(name, "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", name)

    def start_worker(name: str) -> None:
        stack.cli(name, "worker", "--concurrency", "2", "--loglevel", "WARNING", "--hostname", f"{name}@e2e")

    try:
        for name in ports:
            start_referee(name)
        for name in ports:
            wait_for_referee(f"127.0.0.1:{ports[name][1]}", timeout_s=60)
        spec = [{"token": tok, "address": f"127.0.0.1:{ports['ref1' if i % 2 == 0 else 'ref2'][0]}"}
                for i, (_, tok) in enumerate(bots)]
        stack.start("bots", [sys.executable, "-c", BOTS_PROCESS, json.dumps(spec), str(THINK_MS)])
        start_worker("worker1")
        start_worker("worker2")
        stack.cli("beat", "beat", "--reap-period", "2", "--ladder-period", "3600", "--loglevel", "WARNING")

        tid = tournaments.create_tournament(
            pool, name="faults", game="floriferous", bot_ids=[b for b, _ in bots], player_counts=(2, 3), rounds=1,
            time_control={"base_ms": 0, "increment_ms": 0, "cap_ms": 5000, "margin_ms": 500},
        )
        match_ids = tournaments.plan_round_robin(pool, tid)
        assert len(match_ids) == 50  # 10 pairs x 2 seatings + 10 triples x 3
        from workers.app import app

        app.conf.update(broker_url=celery_url(redis_base_url))
        for mid in match_ids:
            app.send_task("parterre.run_match", args=(mid,), queue=queue)

        def faults_ref1() -> None:
            stack.kill("ref1")
            time.sleep(1.0)
            start_referee("ref1")

        ref_kills = 0
        faults = [
            (8, "kill worker1", lambda: (stack.kill("worker1"), time.sleep(1.0), start_worker("worker1"))),
            (18, "kill ref1", faults_ref1),
            (28, "restart postgres", lambda: (pg.stop("fast"), time.sleep(2.0), pg.start())),
        ]
        timeline = []
        while True:
            c = counts(url)
            done = sum(c.get(s, 0) for s in ("finished", "failed", "aborted_no_show"))
            if faults and done >= faults[0][0]:
                _, what, act = faults.pop(0)
                act()
                timeline.append((round(time.monotonic() - t_start, 1), done, what))
                if what == "kill ref1" and ref_kills < 3:
                    # The kill must hit a match ref1 was running (F-08 a); a match it was still seating
                    # moves to ref2 without an attempt (docs/faults.md F-22). Kill again until one was hit.
                    ref_kills += 1
                    time.sleep(3.0)
                    if referee_errors(url) == 0 and done + 4 < len(match_ids):
                        faults.insert(0, (done + 4, "kill ref1", faults_ref1))
            if not faults and done == len(match_ids):
                break
            if time.monotonic() - t_start > DEADLINE_S:
                pytest.fail(f"not done after {DEADLINE_S} s: {c}; faults done: {timeline}\n"
                            f"worker1: {stack.tail('worker1')}\nworker2: {stack.tail('worker2')}\n"
                            f"ref1: {stack.tail('ref1')}")
            for name in ("ref2", "worker2", "beat", "bots"):
                assert stack.procs[name].poll() is None, f"{name} died:\n{stack.tail(name)}"
            time.sleep(0.3)
        elapsed = time.monotonic() - t_start
        print(f"\n{len(match_ids)} matches in {elapsed:.0f} s; faults at (s, matches done): {timeline}")
    finally:
        stack.stop_all()
        r.close()

    pool.close()
    pool = ladder_db.make_pool(url, min_size=1, max_size=2)
    try:
        with pool.connection() as conn:
            q = conn.execute
            statuses = dict(q("SELECT status, count(*) FROM matches GROUP BY status").fetchall())
            assert statuses == {"finished": 50}, statuses
            # exactly once: one finished attempt per match, nothing left running
            per_match = q("SELECT match_id, count(*) FILTER (WHERE status = 'finished'), "
                          "count(*) FILTER (WHERE status = 'running') FROM match_attempts GROUP BY match_id").fetchall()
            assert len(per_match) == 50 and all(f == 1 and running == 0 for _, f, running in per_match)
            attempts = dict(q("SELECT status, count(*) FROM match_attempts GROUP BY status").fetchall())
            errors = [e for (e,) in q("SELECT error FROM match_attempts WHERE status <> 'finished' ORDER BY match_id")]
            print(f"attempts by status: {attempts}")
            for e in errors:
                print("   ", e[:160])
            # the kills did hit running matches: the worker's attempts were ended when it came back
            # under its name (F-13), the referee's by the worker that lost its call (F-08 a)
            assert any("worker1@e2e#" in e and "restarted" in e for e in errors), errors
            assert any("referee" in e for e in errors), errors
            # 0 results double-counted
            seats = q("SELECT count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                      "WHERE m.status = 'finished'").fetchone()[0]
            assert seats == 10 * 2 * 2 + 10 * 3 * 3
            assert q("SELECT sum(games) FROM ratings WHERE game = 'floriferous'").fetchone()[0] == seats
            assert q("SELECT count(*) FROM rating_history").fetchone()[0] == seats
            assert q("SELECT count(DISTINCT result_seq) FROM matches WHERE status = 'finished'").fetchone()[0] == 50
            assert q("SELECT count(*) FROM replays").fetchone()[0] == 50
            worst = q("SELECT max(abs(s)) FROM (SELECT sum(delta) AS s FROM rating_history GROUP BY match_id) t")
            assert worst.fetchone()[0] < 1e-9
            # no bot was charged for the infrastructure
            verdicts = dict(q("SELECT verdict, count(*) FROM seats GROUP BY verdict").fetchall())
            assert verdicts == {"normal": seats}, verdicts
            # the match attempts recorded are the ones in the replays
            final_attempt = dict(q("SELECT id, attempt FROM matches").fetchall())
        before = {row.bot_id: (row.elo, row.games) for row in read.leaderboard(pool, "floriferous")}
        ratings.rebuild_ratings(pool, "floriferous")
        after = {row.bot_id: (row.elo, row.games) for row in read.leaderboard(pool, "floriferous")}
        assert before == after
        for mid in match_ids:
            exported = read.export_replay(pool, mid)
            replay = exported["replay"]
            assert replay["attempt"] == final_attempt[mid] and replay["status"] == "finished"
            assert replay["steps"] and replay["outcome"] is not None and replay["final_hash"]
            report = verify_replay(replay)
            assert report.ok, (mid, report.problems)
            assert report.steps == len(replay["steps"]) and report.hashes_checked >= 1
    finally:
        pool.close()
    assert time.monotonic() - t_start < 240
