"""Ten million matches: the ladder's database at 10^7 matches, 10^4 bots, three games (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_ten_million.py [--matches 10000000] [--bots 10000] [--users 50]
                                                [--wait 0.5,1.5] [--seconds 60] [--repeats 3]
                                                [--keep] [--reuse] [--skip-backup] [--plans]

Creates the database ``--db`` (default ``parterre_bench_10m``) on ``--admin-url`` (default
``$PARTERRE_BENCH_DATABASE_URL`` or the machine's ``postgresql://postgres@127.0.0.1:5432/postgres``),
migrates it, fills it, measures, and drops it at the end (``--keep`` keeps it).

**The data set** (``bench/ten_million_data.py``, :class:`LadderYear`): a year of a busy ladder, shaped like
real data (accounts, bots and house bots, ladder matches, tournaments, challenges, failed and retried
attempts, fault verdicts, ratings and their history, the derived tables, league promotions), with
real compact replays (``--templates`` matches per game and seat count played in process with the
engines, each reused verbatim by many matches), loaded with binary ``COPY ... FREEZE`` into tables
whose indexes are made again afterwards.

**Measured** (goals in docs/benchmarks.md; the exit status is 1 when one is missed):

* generation time (goal < 30 min) and bytes per match (``pg_total_relation_size`` of each table
  over the matches; informative, with the share of each table);
* ``EXPLAIN (ANALYZE, BUFFERS)`` of the hot queries: the pages', the matchmaking's, the rebuild's;
* the web site as deployed (``parterre web``: uvicorn, one process) under ``--users`` concurrent
  readers driven by Locust (``locust --headless``; each reader reads a leaderboard or a bot
  page, then waits ``--wait`` seconds, uniformly drawn): p99 of the leaderboard and of the bot
  page ≤ 50 ms, from Locust's own statistics, with the CPU each request cost the web process, its
  PostgreSQL backends and Locust (``/proc``);
* ``parterre ratings rebuild`` (the CLI, every game) ≤ 10 min, its peak memory, and that it changes no
  rating (the generated ones are the online updates');
* the continuous ladder's matchmaking tick (``workers.periodic.ladder_tick``, the Celery task's
  body, queueing its matches on a Redis broker) with every bot online ≤ 1 s. "Online" is what the
  tick reads: the referees' presence records in Redis (``workers.directory``); the bench writes
  two records in the form ``referee/cluster.py`` publishes, each listing half of the bots with one
  idle stream each (5,000 streams per referee at 10^4 bots) instead of connecting 10^4 streams.
  Each repeat plans a new round with every bot free (the matches of the round before are
  removed untimed), the worst case: every online bot is seated;
* retention: deleting the replays of the oldest month (a batched ``DELETE``, timed) and what it frees;
* backup and restore: ``pg_dump -Fc`` then ``pg_restore -j 2`` into the same database name
  after dropping it, timed, with the row counts checked equal.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import json
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import psycopg  # noqa: E402 - after the sys.path setup above

from bench.harness import Goal, Result, cpu_seconds, report  # noqa: E402 - after the sys.path setup above
from bench.ladder_data import (  # noqa: E402 - after the sys.path setup above
    create_database,
    database_url,
    drop_database,
    explain,
    indexes_used,
    play_templates,
)
from bench.ladder_data import page_queries as pages  # noqa: E402 - after the sys.path setup above
from bench.ten_million_data import GAMES, LADDER_PERIOD_S, SPAN, LadderYear  # noqa: E402 - after the sys.path setup

DEFAULT_ADMIN = os.environ.get("PARTERRE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
GOAL_GENERATION_S = 30 * 60
GOAL_PAGE_MS = 50.0
GOAL_REBUILD_S = 10 * 60
GOAL_TICK_S = 1.0


# -- measurements ------------------------------------------------------------------------------


def table_bytes(url: str) -> list[tuple[str, int, int]]:
    """``(table, pg_total_relation_size, rows estimate)`` of every table of the public schema, biggest first."""
    with psycopg.connect(url) as conn:
        return [(str(t), int(b), int(r)) for t, b, r in conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid), greatest(c.reltuples, 0)::bigint FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' "
            "ORDER BY 2 DESC").fetchall()]


def hot_queries(url: str, rng: random.Random, n_bots: int) -> list[tuple[str, str, Any]]:
    """The pages' queries, the matchmaking's and the rebuild's (see :func:`bench.ladder_data.page_queries`)."""
    from ladder import fair_play
    from ladder.leagues import _H2H_SQL, GATE_MIN_DECISION_MS

    with psycopg.connect(url) as conn:
        bot = int(conn.execute("SELECT bot_id FROM ratings WHERE game = 'floriferous' ORDER BY games DESC "
                               "LIMIT 1").fetchone()[0])
        match = int(conn.execute("SELECT max(match_id) FROM replays").fetchone()[0])
        tid = conn.execute("SELECT max(id) FROM tournaments").fetchone()[0]
        boss = int(conn.execute("SELECT bot_id FROM house_bots WHERE kind = 'random'").fetchone()[0])
        accounts = [int(r[0]) for r in conn.execute(
            "SELECT DISTINCT account_id FROM bots WHERE account_id IS NOT NULL")]
    all_bots = list(range(1, n_bots + 1))
    out = pages("floriferous", bot, match, tid)
    out += [
        ("bot: league evidence against its next boss (ladder.leagues.head_to_head)", _H2H_SQL,
         {"boss": boss, "game": "floriferous", "bots": [bot], "now": None, "min_ms": GATE_MIN_DECISION_MS}),
        ("tick: the round's matches so far", "SELECT id FROM matches WHERE tournament_id IS NULL "
         "AND starts_with(plan_key, %s) ORDER BY id",
         ("ladder:floriferous(competitive_bounties=false,extended=false,players=2):r1:",)),
        ("tick: planned or running matches of the online bots",
         "SELECT s.bot_id, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
         "WHERE m.status IN ('planned', 'running') AND s.bot_id = ANY(%s::bigint[]) GROUP BY s.bot_id", (all_bots,)),
        ("tick: ratings of the online bots", "SELECT bot_id, games, elo FROM ratings WHERE game = %s "
         "AND bot_id = ANY(%s::bigint[])", ("floriferous", all_bots)),
        ("tick: rated matches per pair of accounts in 24 h (ladder.fair_play.ladder_pair_counts)",
         fair_play._PAIR_COUNT_SQL.format(when="m.status = ANY(%(statuses)s) "
                                               "AND m.created_at > now() - make_interval(secs => %(window)s)"),
         {"accounts": accounts, "game": "floriferous", "statuses": fair_play._COUNTED_STATUSES,
          "window": fair_play.ACCOUNT_PAIR_WINDOW_S}),
    ]
    return out


REBUILD_SCAN = ("ratings rebuild: the rated results in application order (plan only)",
                "SELECT m.id, m.game, m.rating_seq, m.finished_at, s.bot_id, s.rank, s.score FROM matches m "
                "JOIN seats s ON s.match_id = m.id WHERE m.status = 'finished' AND m.rated "
                "AND m.rating_seq IS NOT NULL ORDER BY m.rating_seq, s.seat", ())


def _free_port(lo: int, hi: int) -> int:
    for port in range(lo, hi + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {lo}-{hi}")


PARTERRE = [sys.executable, "-c", "import sys; from parterre.cli import main; sys.exit(main())"]
"""The ``parterre`` command of this checkout (its console script may be another checkout's)."""


def _env(url: str, home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")}
    env.update(PARTERRE_DATABASE_URL=url, PARTERRE_HOME=home, PYTHONPATH=str(ROOT))
    return env


def start_web(url: str, port: int, home: str) -> subprocess.Popen[bytes]:
    """``parterre web`` (uvicorn, one process, as deployed) on ``port``; returns once ``/api/health`` answers."""
    import httpx

    with open(os.path.join(home, "web.log"), "wb") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([*PARTERRE, "web", "--host", "127.0.0.1", "--port", str(port)],
                                cwd=ROOT, env=_env(url, home), stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"parterre web exited with {proc.returncode}")
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("the web server did not start")


def _backend_cpu(url: str) -> dict[int, float]:
    """CPU seconds so far of every PostgreSQL backend connected to ``url``'s database (``/proc``), by pid."""
    with psycopg.connect(url, autocommit=True) as conn:
        pids = [int(r[0]) for r in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
    out = {}
    for pid in pids:
        try:
            out[pid] = cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return out


def run_locust(base: str, users: int, seconds: int, n_bots: int, wait: str, out_dir: str, tag: str,
               web_pid: int | None = None, url: str | None = None) -> dict[str, Any]:
    """One headless Locust run; returns ``{name: {"p50", "p99", "n", "failures", "rps"}}`` from its CSV statistics,
    and ``"cpu"``: CPU seconds the run cost the web process, its PostgreSQL backends and Locust itself."""
    web0 = cpu_seconds(web_pid) if web_pid else 0.0
    db0 = _backend_cpu(url) if url else {}
    prefix = os.path.join(out_dir, tag)
    env = {**os.environ, "PARTERRE_BENCH_BOTS": str(n_bots), "PARTERRE_BENCH_WAIT": wait}
    locust = shutil.which("locust", path=os.path.dirname(sys.executable)) or "locust"
    cmd = [locust, "-f", str(ROOT / "bench" / "locust_readers.py"), "--headless", "--users", str(users),
           "--spawn-rate", str(users), "--run-time", f"{seconds}s", "--host", base, "--csv", prefix,
           "--only-summary", "--loglevel", "WARNING", "--stop-timeout", "5"]
    with open(prefix + ".log", "wb") as logf:
        child = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=logf, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1: some requests failed (counted below)
        raise RuntimeError(f"locust exited with {child.returncode}: {Path(prefix + '.log').read_text()[-2000:]}")
    db1 = _backend_cpu(url) if url else {}
    out: dict[str, Any] = {"cpu": {
        "web": (cpu_seconds(web_pid) - web0) if web_pid else 0.0,
        "postgres": sum(c - db0.get(pid, 0.0) for pid, c in db1.items()),
        "locust": usage.ru_utime + usage.ru_stime,
    }}
    with open(prefix + "_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["Name"]] = {"p50": float(row["50%"]), "p99": float(row["99%"]), "n": int(row["Request Count"]),
                                "failures": int(row["Failure Count"]), "rps": float(row["Requests/s"])}
    return out


def time_rebuild(url: str, home: str) -> tuple[float, dict[str, Any], int]:
    """``parterre ratings rebuild`` (every game) in a process of its own.

    Returns:
        ``(seconds, its JSON summary, its peak RSS in KiB)``.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen([*PARTERRE, "ratings", "rebuild"], cwd=ROOT,
                            env=_env(url, home), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # its own resource usage (peak RSS), not that of every child
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    if proc.returncode != 0:
        raise RuntimeError(f"parterre ratings rebuild exited with {proc.returncode}")
    return took, json.loads(out), int(usage.ru_maxrss)


def presence_records(bot_ids: list[int], referees: int) -> dict[str, dict[str, Any]]:
    """Presence records as ``referee/cluster.py`` publishes them (``Cluster.snapshot``): the bots split over
    ``referees`` referees, one idle stream each (capacity 2, both free)."""
    out = {}
    for r in range(referees):
        rid = f"bench-referee-{r + 1}"
        bots = {str(b): {"free": 2, "open": 2, "pinned": [], "capacity": 2, "sessions": 1, "games": []}
                for b in bot_ids[r::referees]}
        out[rid] = {"id": rid, "address": f"127.0.0.1:{21550 + r}", "control_address": f"127.0.0.1:{21550 + r}",
                    "relay_address": f"127.0.0.1:{21560 + r}", "rooms": 0, "at": time.time(), "bots": bots}
    return out


def time_ticks(url: str, redis_url: str, bot_ids: list[int], repeats: int,
               log: Any = print) -> tuple[list[float], list[dict[str, Any]]]:
    """Run the ladder's tick ``repeats`` times with every bot of ``bot_ids`` online; wall seconds and details."""
    ns = f"bench10m-{secrets.token_hex(3)}"
    queue = f"bench10m-{secrets.token_hex(3)}"
    os.environ.update(PARTERRE_DATABASE_URL=url, PARTERRE_REDIS_URL=redis_url, PARTERRE_CLUSTER_NAMESPACE=ns,
                      PARTERRE_QUEUE=queue)
    import redis

    from ladder import tournaments as ladder_tournaments
    from workers import directory
    from workers import periodic as wp

    r = redis.Redis.from_url(redis_url)
    records = presence_records(bot_ids, 2)
    keys = [directory.REFEREE_KEY.format(ns=ns, id=rid) for rid in records]
    spent: dict[str, float] = defaultdict(float)
    real_plan, real_read, real_queue = ladder_tournaments.plan_ladder_round, directory.read_referees, wp.queue_matches

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        return wrapper

    ladder_tournaments.plan_ladder_round = timed("plan_ladder_round", real_plan)
    directory.read_referees = timed("read the presence", real_read)
    wp.queue_matches = timed("queue the matches", real_queue)
    times: list[float] = []
    details: list[dict[str, Any]] = []
    with psycopg.connect(url, autocommit=True) as conn:
        top = int(conn.execute("SELECT max(id) FROM matches").fetchone()[0])
    try:
        base_round = int(time.time() // LADDER_PERIOD_S)
        for i in range(repeats):
            with r.pipeline() as pipe:
                for rid, rec in records.items():
                    rec["at"] = time.time()
                    pipe.set(directory.REFEREE_KEY.format(ns=ns, id=rid), json.dumps(rec), px=60_000)
                    pipe.sadd(directory.REFEREES_KEY.format(ns=ns), rid)
                pipe.execute()
            spent.clear()
            now = (base_round + 1 + i) * LADDER_PERIOD_S + 0.5
            t0 = time.perf_counter()
            cpu0 = time.process_time()
            planned = wp.ladder_tick(now=now, period_s=LADDER_PERIOD_S)
            took = time.perf_counter() - t0
            times.append(took)
            details.append({"planned": planned, "cpu_s": time.process_time() - cpu0, **spent})
            log(f"  tick {i + 1}: {took:.3f} s ({', '.join(f'{k} {v:.3f} s' for k, v in spent.items())}); "
                f"matches planned {sum(planned.values())} {planned}")
            with psycopg.connect(url, autocommit=True) as conn:  # every bot free again for the next repeat
                conn.execute("DELETE FROM matches WHERE id > %s", (top,))
            r.delete(queue, f"{queue}.periodic")
    finally:
        ladder_tournaments.plan_ladder_round = real_plan
        directory.read_referees = real_read
        wp.queue_matches = real_queue
        r.delete(*keys, directory.REFEREES_KEY.format(ns=ns), queue, f"{queue}.periodic")
        for q in (queue, f"{queue}.periodic"):  # kombu's routing records of the bench's own queues
            r.delete(f"_kombu.binding.{q}", f"_kombu.binding_permanent.{q}")
    return times, details


def time_retention(url: str, now: datetime, log: Any = print) -> dict[str, Any]:
    """Delete the replays of the oldest month in batches of 20,000 matches (a retention job's work), timed."""
    with psycopg.connect(url, autocommit=True) as conn:
        lo, hi, n, size = conn.execute(
            "SELECT min(match_id), max(match_id), count(*), sum(pg_column_size(data)) FROM replays "
            "WHERE stored_at < %s", (now - SPAN + timedelta(days=30),)).fetchone()
        before = int(conn.execute("SELECT pg_total_relation_size('replays')").fetchone()[0])
        t0 = time.perf_counter()
        deleted = 0
        for a in range(int(lo), int(hi) + 1, 20_000):
            cur = conn.execute("DELETE FROM replays WHERE match_id >= %s AND match_id < %s AND stored_at < %s",
                               (a, min(a + 20_000, int(hi) + 1), now - SPAN + timedelta(days=30)))
            deleted += cur.rowcount
        took = time.perf_counter() - t0
        t1 = time.perf_counter()
        conn.execute("VACUUM replays")
        vacuum = time.perf_counter() - t1
        after = int(conn.execute("SELECT pg_total_relation_size('replays')").fetchone()[0])
    log(f"  deleted {deleted:,} replays of the oldest 30 days ({int(size or 0) / 2**20:,.0f} MiB of data) in "
        f"{took:.1f} s ({deleted / max(took, 1e-9):,.0f}/s); VACUUM replays {vacuum:.1f} s; the table stays "
        f"{before / 2**30:.2f} -> {after / 2**30:.2f} GiB (the space is reused by new rows)")
    return {"deleted": deleted, "seconds": took, "vacuum_s": vacuum, "bytes": int(size or 0)}


COUNTED = ("matches", "seats", "match_attempts", "replays", "rating_history", "ratings", "bots", "accounts",
           "challenges", "tournaments", "bot_player_stats", "league_promotions")


def row_counts(url: str) -> dict[str, int]:
    """Exact row counts of the main tables."""
    with psycopg.connect(url) as conn:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}


def time_backup(admin_url: str, db: str, url: str, workdir: str, log: Any = print) -> dict[str, Any]:
    """``pg_dump -Fc``, drop, ``pg_restore -j 2`` into a new database of the same name; times and sizes."""
    counts = row_counts(url)
    dump = os.path.join(workdir, f"{db}.dump")
    u = psycopg.conninfo.conninfo_to_dict(url)
    conn_args = ["-h", str(u.get("host", "127.0.0.1")), "-p", str(u.get("port", 5432)),
                 "-U", str(u.get("user", "postgres"))]
    t0 = time.perf_counter()
    subprocess.run(["pg_dump", *conn_args, "-Fc", "-f", dump, db], check=True)
    t_dump = time.perf_counter() - t0
    size = os.path.getsize(dump)
    log(f"  pg_dump -Fc: {t_dump:.1f} s, {size / 2**30:.2f} GiB")
    create_database(admin_url, db, replace=True)
    t1 = time.perf_counter()
    subprocess.run(["pg_restore", *conn_args, "-j", "2", "-d", db, dump], check=True)
    t_restore = time.perf_counter() - t1
    log(f"  pg_restore -j 2: {t_restore:.1f} s")
    t2 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
    t_analyze = time.perf_counter() - t2
    again = row_counts(url)
    if again != counts:
        raise AssertionError(f"restored row counts differ: {counts} != {again}")
    os.remove(dump)
    return {"dump_s": t_dump, "restore_s": t_restore, "analyze_s": t_analyze, "dump_bytes": size, "rows": counts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--admin-url", default=DEFAULT_ADMIN, help="server where the bench may create a database")
    ap.add_argument("--db", default="parterre_bench_10m", help="database to create (dropped first and at the end)")
    ap.add_argument("--matches", type=int, default=10_000_000)
    ap.add_argument("--bots", type=int, default=10_000)
    ap.add_argument("--templates", type=int, default=24, help="real matches played per game and seat count")
    ap.add_argument("--users", type=int, default=50, help="concurrent Locust readers")
    ap.add_argument("--wait", default="0.5,1.5", help="a reader's wait between two pages: low,high seconds")
    ap.add_argument("--seconds", type=int, default=60, help="seconds of each Locust run")
    ap.add_argument("--repeats", type=int, default=3, help="Locust runs and ticks (the median is judged)")
    ap.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"),
                    help="the Redis the tick reads presence from and queues its matches on")
    ap.add_argument("--port-range", default="21500-21599", help="ports the web server may use")
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    ap.add_argument("--reuse", action="store_true", help="measure an already generated database (--keep before)")
    ap.add_argument("--skip-backup", action="store_true", help="no pg_dump / pg_restore")
    ap.add_argument("--plans", action="store_true", help="print the full plans, not only the indexes used")
    args = ap.parse_args(argv)

    url = database_url(args.admin_url, args.db)
    lo_port, hi_port = (int(x) for x in args.port_range.split("-"))
    now = datetime.now(UTC).replace(microsecond=0)
    results: list[Result] = []
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if not args.keep:  # dropped however the run ends (but a kill -9)
        atexit.register(drop_database, args.admin_url, args.db)
    if not args.reuse:
        create_database(args.admin_url, args.db, replace=True)
        from ladder import migrate

        migrate(url)
        print(f"generating {args.matches:,} matches, {args.bots:,} bots into {args.db} ...", flush=True)
        t0 = time.perf_counter()
        templates = play_templates(GAMES, (2, 3, 4), args.templates, args.seed)
        t_play = time.perf_counter() - t0
        per = {k: sum(len(t.blob) for t in v) / len(v) for k, v in templates.items()}
        print(f"  played {sum(len(v) for v in templates.values())} real matches in {t_play:.1f} s; mean stored "
              f"replay bytes: " + ", ".join(f"{g} {n}p {b:.0f}" for (g, n), b in per.items()), flush=True)
        counts = LadderYear(args.matches, args.bots, args.seed, templates, now).load(
            url, log=lambda s: print(s, flush=True))
        gen_s = time.perf_counter() - t0
        for name, took in counts.timings.items():
            print(f"  {name}: {took:.1f} s")
        print(f"  generated in {gen_s:.0f} s: {counts.matches:,} matches ({counts.finished:,} finished; "
              f"{dict(counts.by_kind)}), {counts.seats:,} seats, {counts.history:,} rating history rows, "
              f"{counts.attempts:,} attempts, {counts.challenges:,} challenges, {counts.tournaments:,} tournaments, "
              f"{counts.bots:,} bots, {counts.accounts:,} accounts", flush=True)
        results.append(Result(Goal(f"generation of {args.matches:,} matches", "s", GOAL_GENERATION_S,
                                   higher_is_better=False), [gen_s], note="templates, COPY, indexes, ANALYZE, leagues"))
    with psycopg.connect(url) as conn:
        n_matches = int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
        n_bots = int(conn.execute("SELECT count(*) FROM bots").fetchone()[0])
        db_bytes = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])

    print(f"\nbytes per match ({n_matches:,} matches; pg_database_size {db_bytes / 2**30:.2f} GiB, "
          f"{db_bytes / n_matches:,.0f} B per match):")
    sizes = table_bytes(url)
    total = sum(b for _, b, _ in sizes)
    for t, b, rows in sizes[:12]:
        print(f"  {t:24s} {b / 2**20:10,.1f} MiB {b / n_matches:8,.1f} B/match {100 * b / total:5.1f} %  "
              f"~{rows:,} rows")
    print(f"  {'all tables':24s} {total / 2**20:10,.1f} MiB {total / n_matches:8,.1f} B/match")

    print("\nquery plans (EXPLAIN ANALYZE, BUFFERS):", flush=True)
    rng = random.Random(args.seed)
    plans = explain(url, hot_queries(url, rng, n_bots)) + explain(url, [REBUILD_SCAN], analyze=False)
    for name, plan in plans:
        took = re.search(r"Execution Time: ([\d.]+) ms", plan)
        print(f"- {name}: {took.group(1) + ' ms' if took else 'not run'}; indexes: "
              f"{', '.join(indexes_used(plan)) or 'none'}")
        if args.plans:
            print("    " + plan.replace("\n", "\n    "))

    home = tempfile.mkdtemp(prefix="parterre-bench-10m-")
    try:
        port = _free_port(lo_port, hi_port)
        print(f"\nweb: parterre web on port {port}; {args.users} Locust readers, wait {args.wait} s, "
              f"{args.repeats} runs of {args.seconds} s", flush=True)
        proc = start_web(url, port, home)
        base = f"http://127.0.0.1:{port}"
        page_p99: dict[str, list[float]] = {"leaderboard": [], "bot page": []}
        try:
            run_locust(base, args.users, max(10, args.seconds // 4), n_bots, args.wait, home, "warmup")
            for i in range(args.repeats):
                stats = run_locust(base, args.users, args.seconds, n_bots, args.wait, home, f"run{i}", proc.pid, url)
                cpu = stats.pop("cpu")
                n_req = sum(v["n"] for v in stats.values())
                print(f"  run {i + 1}: CPU per request: web {1000 * cpu['web'] / n_req:.1f} ms, PostgreSQL "
                      f"{1000 * cpu['postgres'] / n_req:.1f} ms, Locust {1000 * cpu['locust'] / n_req:.1f} ms "
                      f"({n_req} requests in {args.seconds} s)", flush=True)
                for name in page_p99:
                    s = stats[name]
                    page_p99[name].append(s["p99"] if s["failures"] == 0 else float("inf"))
                    print(f"  run {i + 1}: {name}: {s['n']} requests, {s['failures']} failures, "
                          f"{s['rps']:.1f}/s, p50 {s['p50']:.0f} ms, p99 {s['p99']:.0f} ms", flush=True)
                print(f"  load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        finally:
            proc.terminate()
            proc.wait(20)
        note = f"{args.users} Locust readers, wait {args.wait} s, {n_matches:,} matches, {n_bots:,} bots"
        results.append(Result(Goal("web: leaderboard p99 under load", "ms (p99)", GOAL_PAGE_MS,
                                   higher_is_better=False), page_p99["leaderboard"], note=note))
        results.append(Result(Goal("web: bot page p99 under load", "ms (p99)", GOAL_PAGE_MS,
                                   higher_is_better=False), page_p99["bot page"], note=note))

        print("\nratings rebuild (parterre ratings rebuild, every game):", flush=True)
        took, summary, peak = time_rebuild(url, home)
        print(f"  {took:.1f} s, peak RSS {peak / 2**10:,.0f} MiB; {summary}")
        if summary.get("changed") != 0:
            print("  the rebuild changed ratings: the generated ratings are not those of the online updates")
        results.append(Result(Goal("ratings rebuild, every game", "s", GOAL_REBUILD_S, higher_is_better=False),
                              [took], note=f"{summary.get('matches', 0):,} rated matches; changed "
                              f"{summary.get('changed')}; peak RSS {peak / 2**10:,.0f} MiB"))

        print(f"\nmatchmaking tick (workers.periodic.ladder_tick), {n_bots:,} bots online:", flush=True)
        with psycopg.connect(url) as conn:
            ids = [int(r[0]) for r in conn.execute("SELECT id FROM bots WHERE revoked_at IS NULL ORDER BY id")]
        ticks, _ = time_ticks(url, args.redis_url, ids, args.repeats)
        results.append(Result(Goal("ladder tick, every bot online", "s", GOAL_TICK_S, higher_is_better=False),
                              ticks, note=f"{len(ids):,} bots online over 2 referees' presence records"))
    finally:
        shutil.rmtree(home, ignore_errors=True)

    print("\nretention:", flush=True)
    time_retention(url, now)
    if not args.skip_backup:
        print("\nbackup and restore:", flush=True)
        work = tempfile.mkdtemp(prefix="parterre-bench-10m-dump-")
        try:
            b = time_backup(args.admin_url, args.db, url, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"  rows checked equal after the restore: {b['rows']}")
    return report(results, f"ten million: {n_matches:,} matches, {n_bots:,} bots")


if __name__ == "__main__":
    raise SystemExit(main())
