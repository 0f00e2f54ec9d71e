"""Scale out: two referees and two workers against one of each, on a referee-bound tournament.

Usage::

    .venv/bin/python bench/bench_scale_out.py [--admin-url URL] [--port-base 25390] [--game lafleur]
        [--players 4] [--bots 4] [--rounds 12] [--concurrency 8] [--repeats 3]

Set-up (``bench/deployed.py``), every piece as deployed and warm for the whole run: a fresh
PostgreSQL database, a private ``redis-server`` (the broker, the bots' tokens, the referees'
presence and live feed: its counters are this run's alone), two ``parterre referee`` processes
(*a* and *b*, each with its live feed and its metrics endpoint, publishing presence in the
Redis), two ``parterre worker`` processes of ``--concurrency`` slots each (worker *a* consumes
queues ``scale-one`` and ``scale-two``, worker *b* only ``scale-two``, so one warm pair of
workers serves both configurations), and the bots.

**The bots** are the Go example bot (``bots/go``, built by ``make -C bots/go``): its decision
takes microseconds and its gRPC is compiled, so per decision it costs a small part of what the
referee's Python costs, and the referee is the bottleneck, not the bots (a Python SDK bot costs
about as much CPU per decision as the referee). Two sets of ``--bots`` bots, one account each:
set *one* connected to referee *a* only, set *two* with each bot connected to both referees (one
stream to each), so that no match of either configuration needs a relay and the workers' choice
of host (the referee where the match's bots are, then the fewest rooms) spreads set *two*'s
matches over both referees.

**The tournament**: a round-robin of ``--game`` at ``--players`` players over the set's bots,
``--rounds`` rounds (4 bots at 4 players: 4 matches a round), created and planned by
``ladder.tournaments`` and each match queued to the configuration's queue, as the
``parterre.plan_tournament`` task queues it (that task sends to the default queue). 4-player La
Fleur is the default because it is the longest match (about 219 decisions), so the worker's fixed
cost per match (claim, record, rating) is the smallest share and the referee's cost per decision
dominates: referee-bound.

Each repeat, interleaved: **1 + 1** (set *one*'s tournament on ``scale-one``: referee *a*,
worker *a*) then **2 + 2** (set *two*'s on ``scale-two``: both referees, both workers). A run's
time is from planning to the last match recorded (PostgreSQL polled every 0.1 s). Goal:
wall(1 + 1) / wall(2 + 2) ≥ 1.7, median of the repeats.

Counted from the runs, for the capacity estimate (docs/benchmarks.md):

* CPU of every process from ``/proc`` (each referee, each worker with its pool, the bots, this
  database's PostgreSQL backends, this process; the Redis from its own ``INFO cpu``) as a share
  of one core over the run, and the machine's use of its cores from ``/proc/stat`` (other jobs
  included), so that one sees whether the cores or the design held the 2 + 2 run back;
* PostgreSQL: transactions (``pg_stat_database`` ``xact_commit + xact_rollback``) and rows
  written (``tup_inserted + tup_updated + tup_deleted``) of the run's database, over the whole
  measurement and then an idle wait of 11 s, since a backend reports its counts up to 10 s late,
  this process's own polls subtracted, per match; connections of each worker
  (``pg_stat_activity`` by ``application_name``, the most seen at once);
* Redis: commands and writes (``INFO commandstats`` deltas; a write is a command ``COMMAND INFO``
  flags ``write``), connections opened and bytes out, per match and split between the referee (16
  matches this process plays itself through ``MatchControl``, no worker), queuing (50 tasks sent
  to a queue nobody consumes) and the worker (the rest); with no match running, per second per
  referee (the workers paused) and per worker;

and from them, linearly, what 100 referees and 50 workers would ask of PostgreSQL and Redis
and which limit comes first. Exits 1 when the goal is missed, 3 when the Go bot cannot be built.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.deployed import Deployed, add_arguments  # noqa: E402 - after the sys.path setup above
from bench.harness import (  # noqa: E402 - after the sys.path setup above
    Goal,
    Result,
    busy_share,
    cpu_seconds,
    load_average,
    machine_busy,
    not_run,
    report,
)
from bench.scale_out_report import (  # noqa: E402 - after sys.path
    NAMES,
    Measured,
    Run,
    capacity,
    describe,
    machine_limit,
)

PORT_BASE = 25390
"""Referees on BASE and BASE + 1, their metrics on BASE + 2 and + 3, the workers' on + 4 and + 5, Redis + 9."""
GOAL_RATIO = 1.7
GO_BOT = ROOT / "bots" / "go" / "build" / "parterre-go-bot"
QUEUES = {"one": "scale-one", "two": "scale-two"}
IDLE_S = 10.0
"""The idle window (no match) in which each process's own Redis and PostgreSQL traffic is counted."""
PG_SETTLE_S = 11.0
"""A PostgreSQL backend reports its transaction counts at most 10 s late (``PGSTAT_IDLE_INTERVAL``)."""
POLL_S = 0.1


def go_bot() -> str | None:
    """The Go bot's path, building it when it is missing; ``None`` when it cannot be built."""
    if not GO_BOT.exists():
        subprocess.run(["make", "-C", str(GO_BOT.parent.parent)], check=False, capture_output=True)
    return str(GO_BOT) if GO_BOT.exists() else None


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every process under it (a worker's pool, ``parterre up``'s children)."""
    import psutil  # type: ignore[import-untyped]  # psutil ships no type information

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


@dataclass
class Snapshot:
    """Counters at one moment."""

    at: float
    cpu: dict[str, float]
    busy: tuple[float, float]
    commands: dict[str, int]
    redis: dict[str, int]
    hosted: list[int]


class Stack(Deployed):
    """Two referees, two workers, the Go bots, against the run's database and private Redis."""

    def __init__(self, admin_url: str, port_base: int, concurrency: int) -> None:
        self.addresses = [f"127.0.0.1:{port_base + i}" for i in range(len(NAMES))]
        self.port_base = port_base
        super().__init__(admin_url, "scale", port_base, env={"PARTERRE_REFEREE_ADDRESS": ",".join(self.addresses)})
        try:
            import redis

            self.r = redis.Redis(port=self.redis_port)
            self.referees = [self.parterre(f"referee-{n}", "referee", "--address", self.addresses[i], "--referee-id",
                                           f"scale-{n}", "--metrics-port", str(port_base + 2 + i))
                             for i, n in enumerate(NAMES)]
            queues = [f"{QUEUES['one']},{QUEUES['two']}", QUEUES["two"]]
            for n in NAMES:  # each worker's metrics in a folder of its own, as `parterre up` gives it
                (self.dir / "metrics" / n).mkdir(parents=True)
            self.workers = [self.parterre(f"worker-{n}", "worker", "--concurrency", str(concurrency), "--queues",
                                          queues[i], "--hostname", f"scale-{n}@%h", "--loglevel", "WARNING",
                                          "--metrics-port", str(port_base + 4 + i),
                                          env={"PGAPPNAME": f"scale-worker-{n}",
                                               "PROMETHEUS_MULTIPROC_DIR": str(self.dir / "metrics" / n)})
                            for i, n in enumerate(NAMES)]
            for i, n in enumerate(NAMES):
                self.wait_grpc(self.addresses[i], self.referees[i], f"referee-{n}")
            self.queue_here()
            self.bot_procs: list[subprocess.Popen[bytes]] = []
            self.polls = 0
            self.admin = self._admin()
        except BaseException:
            self.close()
            raise

    def _admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.admin_url, autocommit=True, application_name="scale-bench-admin")

    def add_bots(self, label: str, placement: list[list[int]], binary: str) -> list[int]:
        """Register one bot per entry of ``placement`` (the referees it connects to); returns their ids."""
        from ladder import bots as ladder_bots

        ids = []
        for j, where in enumerate(placement):
            bot_id, token = ladder_bots.register_bot(self.pool, f"{label}-{j}", redis=self.r)
            ids.append(bot_id)
            for i in where:
                self.bot_procs.append(self.spawn(
                    f"bot-{label}-{j}-{NAMES[i]}", [binary, "--address", self.addresses[i], "--token", token,
                                                    "--name", f"{label}-{j}", "--max-matches", "64",
                                                    "--seed", str(j)]))
        return ids

    def wait_presence(self, expected: dict[int, set[str]], timeout_s: float = 60.0) -> None:
        """Wait until every bot is connected where expected (bot id -> referee ids), per the presence."""
        from workers import directory

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            seen: dict[int, set[str]] = defaultdict(set)
            for ref in directory.read_referees(client=self.r, ns="parterre"):
                for bot_id in ref.bots:
                    seen[bot_id].add(ref.id)
            if all(seen.get(b, set()) >= want for b, want in expected.items()):
                return
            time.sleep(0.2)
        raise TimeoutError(f"bots not connected in {timeout_s} s: {self.log('referee-a')}")

    # -- counters -------------------------------------------------------------------------------

    def roles(self) -> dict[str, float]:
        """CPU seconds so far by role."""
        out = {f"referee-{n}": cpu_seconds(p.pid) for n, p in zip(NAMES, self.referees, strict=True)}
        out.update({f"worker-{n}": tree_cpu(p.pid) for n, p in zip(NAMES, self.workers, strict=True)})
        out["bots"] = sum(cpu_seconds(p.pid) for p in self.bot_procs if p.poll() is None)
        cpu = self.r.info("cpu")  # Redis's own getrusage, to the microsecond (/proc counts in 10 ms ticks)
        out["redis"] = float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
        out["bench"] = cpu_seconds()
        pg = 0.0
        for pid in self.backends():
            try:
                pg += cpu_seconds(pid)
            except FileNotFoundError:
                continue
        out["postgres"] = pg
        return out

    def backends(self) -> list[int]:
        """PostgreSQL backends connected to the run's database."""
        return [r[0] for r in self.admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.db,))]

    def pg_connections(self) -> dict[str, int]:
        """Connections to the run's database now, by ``application_name``."""
        return {str(r[0]): int(r[1]) for r in self.admin.execute(
            "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = %s GROUP BY 1", (self.db,))}

    def pg_transactions(self) -> tuple[int, int, int]:
        """What the run's database has counted: (transactions committed and rolled back, rolled back, rows
        written: inserted, updated and deleted)."""
        self.admin.execute("SELECT pg_stat_clear_snapshot()")
        row = self.admin.execute("SELECT xact_commit + xact_rollback, xact_rollback, tup_inserted + tup_updated + "
                                 "tup_deleted FROM pg_stat_database WHERE datname = %s", (self.db,)).fetchone()
        return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)

    def write_commands(self, names: set[str]) -> set[str]:
        """Those of ``names`` (``INFO commandstats`` names) that Redis flags ``write`` (``COMMAND INFO``)."""
        plain = sorted(n for n in names if "|" not in n)  # subcommands ("client|setinfo") write nothing
        info = self.r.execute_command("COMMAND", "INFO", *plain) if plain else {}
        return {str(n) for n, v in info.items() if v and "write" in [str(f) for f in v.get("flags", [])]}

    def snapshot(self) -> Snapshot:
        stats = self.r.info("commandstats")
        info = self.r.info("stats")
        keep = ("total_commands_processed", "total_connections_received", "total_net_input_bytes",
                "total_net_output_bytes")
        commands = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
        return Snapshot(time.monotonic(), self.roles(), machine_busy(), commands, {k: int(info[k]) for k in keep},
                        [self.referee_matches(i) for i in range(len(NAMES))])

    def referee_matches(self, i: int) -> int:
        """Match attempts referee ``i`` has ended (its ``parterre_referee_matches_finished_total``)."""
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port_base + 2 + i}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("parterre_referee_matches_finished_total{")))

    # -- a run ---------------------------------------------------------------------------------

    def done(self, ids: list[int]) -> tuple[int, int]:
        """(matches ended, matches ended otherwise than finished) among ``ids``; one transaction."""
        self.polls += 1
        with self.pool.connection() as conn:
            row = conn.execute("SELECT count(*), count(*) FILTER (WHERE status <> 'finished') FROM matches "
                               "WHERE id = ANY(%s) AND status NOT IN ('planned', 'running')", (ids,)).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def delta(self, config: str, before: Snapshot, after: Snapshot, matches: int = 0, decisions: int = 0,
              most: dict[str, int] | None = None) -> Run:
        """The counters between two snapshots as a :class:`Run` (the bench's own ``INFO`` calls left out)."""
        busy = busy_share(before.busy, after.busy)
        commands = {k: v - before.commands.get(k, 0) for k, v in after.commands.items() if k != "info"}
        return Run(config, matches, decisions, after.at - before.at,
                   {k: after.cpu.get(k, 0.0) - before.cpu.get(k, 0.0) for k in after.cpu}, busy,
                   {k: v for k, v in commands.items() if v},
                   {k: v - before.redis[k] for k, v in after.redis.items()}, dict(most or {}),
                   [a - b for a, b in zip(after.hosted, before.hosted, strict=True)])

    def tournament(self, config: str, bot_ids: list[int], game: str, players: int, rounds: int,
                   timeout_s: float = 900.0) -> Run:
        """Create, plan and queue a round-robin of ``bot_ids`` on ``config``'s queue; wait for the last result."""
        from ladder.tournaments import create_tournament, plan_tournament
        from workers.tasks import run_match

        tid = create_tournament(self.pool, name=f"scale {config} {time.time():.0f}", game=game,
                                player_counts=[players], rounds=rounds, bot_ids=bot_ids)
        self.polls += 1  # create_tournament's transaction, counted with the polls
        before = self.snapshot()
        ids = plan_tournament(self.pool, tid)
        self.polls += 1
        for mid in ids:
            run_match.apply_async((mid,), queue=QUEUES[config])
        most: dict[str, int] = defaultdict(int)
        deadline = time.monotonic() + timeout_s
        while True:
            ended, bad = self.done(ids)
            if ended == len(ids):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(ids) - ended} of {len(ids)} matches not ended in {timeout_s} s")
            self.check_alive()
            for app, n in self.pg_connections().items():
                most[app] = max(most[app], n)
            time.sleep(POLL_S)
        after = self.snapshot()
        if bad:
            raise RuntimeError(f"{bad} of {len(ids)} matches did not finish: {self.log('worker-a')}")
        with self.pool.connection() as conn:
            row = conn.execute("SELECT coalesce(sum(decisions), 0) FROM seats WHERE match_id = ANY(%s)",
                               (ids,)).fetchone()
        self.polls += 1
        return self.delta(config, before, after, len(ids), int(row[0]) if row else 0, most)

    def idle(self, seconds: float, *, workers_stopped: bool = False) -> Run:
        """Counters over ``seconds`` with no match; with ``workers_stopped`` the workers are paused
        (SIGSTOP, their connections kept) so that only the referees (and Redis itself) are counted."""
        import psutil

        paused = []
        if workers_stopped:
            for w in self.workers:
                root = psutil.Process(w.pid)
                paused += [root, *root.children(recursive=True)]
            for proc in paused:
                proc.suspend()
        try:
            before = self.snapshot()
            time.sleep(seconds)
            after = self.snapshot()
        finally:
            for proc in paused:
                proc.resume()
        return self.delta("idle", before, after)

    def direct(self, bot_ids: list[int], game_string: str, n: int) -> Run:
        """``n`` matches played on referee *a* by this process itself through ``MatchControl.RunMatch``
        (``workers.referee_client``, as a worker calls it; four at a time), without a worker or the
        database: what the referee alone costs per match."""
        from concurrent.futures import ThreadPoolExecutor

        from parterre.settings import service_token_for
        from workers.referee_client import run_match

        token = service_token_for(Path(self.env["PARTERRE_HOME"]))
        decisions = []

        def one(k: int) -> None:
            seats = bot_ids[k % len(bot_ids):] + bot_ids[:k % len(bot_ids)]
            out = run_match(self.addresses[0], token, match_id=10**9 + k, attempt=1, game_string=game_string,
                            seed=f"direct-{k}", seat_bot_ids=seats, time_control={"cap_ms": 1000, "margin_ms": 100},
                            no_show_timeout_ms=30_000, max_duration_ms=600_000)
            if out.status != "finished":
                raise RuntimeError(f"direct match {k}: {out.status} {out.reason}")
            decisions.append(sum(int(seat["decisions"]) for seat in out.seats))

        before = self.snapshot()
        with ThreadPoolExecutor(4) as ex:
            list(ex.map(one, range(n)))
        after = self.snapshot()
        return self.delta("direct", before, after, n, sum(decisions))

    def queue_cost(self, n: int) -> Run:
        """``n`` tasks queued to a queue no worker consumes: the Redis commands of queuing a match."""
        from workers.tasks import run_match

        before = self.snapshot()
        for _ in range(n):
            run_match.apply_async((0,), queue="scale-nobody")
        after = self.snapshot()
        self.r.delete("scale-nobody")
        return self.delta("queue", before, after, n)

    def redis_clients(self) -> dict[str, int]:
        """The Redis connections open now, by the role of the process holding each (``CLIENT LIST`` matched
        with ``/proc``: a client's port to the socket of one of the run's processes)."""
        import psutil

        inode_port: dict[str, int] = {}
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if int(f[2].rsplit(":", 1)[1], 16) == self.redis_port:
                    inode_port[f[9]] = int(f[1].rsplit(":", 1)[1], 16)
        owner: dict[int, str] = {}
        groups = [*((f"referee-{n}", p.pid) for n, p in zip(NAMES, self.referees, strict=True)),
                  *((f"worker-{n}", p.pid) for n, p in zip(NAMES, self.workers, strict=True)),
                  ("bench", os.getpid())]
        for role, pid in groups:
            try:
                root = psutil.Process(pid)
                procs = [root] if role == "bench" else [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
            for proc in procs:
                try:
                    fds = os.listdir(f"/proc/{proc.pid}/fd")
                except OSError:
                    continue
                for fd in fds:
                    try:
                        target = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
                    except OSError:
                        continue
                    if target.startswith("socket:[") and target[8:-1] in inode_port:
                        owner[inode_port[target[8:-1]]] = role
        counts: dict[str, int] = defaultdict(int)
        for client in self.r.client_list():
            port = int(str(client["addr"]).rsplit(":", 1)[1])
            counts[owner.get(port, "other")] += 1
        return dict(counts)

    def presence_bytes(self) -> list[tuple[int, int]]:
        """(bytes, bots listed) of each referee's presence record now."""
        import json

        out = []
        for n in NAMES:
            raw = self.r.get(f"parterre:referee:scale-{n}")
            if raw is not None:
                out.append((len(raw), len(json.loads(raw).get("bots", {}))))
        return out

    def check_alive(self) -> None:
        """Raise when a referee or a worker has exited (with the tail of its log)."""
        for name, proc in [*zip(("referee-a", "referee-b"), self.referees, strict=True),
                           *zip(("worker-a", "worker-b"), self.workers, strict=True)]:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}): {self.log(name)}")

    def close(self) -> None:
        admin = getattr(self, "admin", None)
        if admin is not None:
            admin.close()
        super().close()


def main(argv: list[str] | None = None) -> int:
    """Measure; print the report; returns 0 when the goal is met, 1 when missed, 3 without the Go bot."""
    import signal

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p, port_base=PORT_BASE)
    p.add_argument("--game", default="lafleur")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--bots", type=int, default=4, help="bots in each set (the tournament's entrants)")
    p.add_argument("--rounds", type=int, default=12, help="rounds of the round-robin (4 bots at 4 players: 4 a round)")
    p.add_argument("--concurrency", type=int, default=8, help="slots of each worker (matches at once)")
    p.add_argument("--repeats", type=int, default=3)
    ns = p.parse_args(argv)
    binary = go_bot()
    if binary is None:
        return not_run(f"no Go bot at {GO_BOT} and `make -C bots/go` did not build it (bots/install-toolchains.sh "
                       "installs Go, gRPC and protoc)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the run's processes and drop its database
    stack = Stack(ns.admin_url, ns.port_base, ns.concurrency)
    runs: dict[str, list[Run]] = {"one": [], "two": []}
    try:
        one = stack.add_bots("one", [[0]] * ns.bots, binary)
        two = stack.add_bots("two", [[0, 1]] * ns.bots, binary)
        stack.wait_presence({**{b: {"scale-a"} for b in one}, **{b: {"scale-a", "scale-b"} for b in two}})
        game_string = f"{ns.game}(players={ns.players})"
        for config, bots in (("one", one), ("two", two)):  # pools, channels and imports warm
            stack.tournament(config, bots, ns.game, ns.players, 1)
        print(f"{ns.bots} Go bots a set, {ns.game} at {ns.players} players, {ns.rounds} rounds; workers of "
              f"{ns.concurrency} slots; {load_average()}", flush=True)
        idle_all = stack.idle(IDLE_S / 2)
        idle_refs = stack.idle(IDLE_S / 2, workers_stopped=True)
        clients = stack.redis_clients()
        time.sleep(PG_SETTLE_S)
        x0 = stack.pg_transactions()
        polls0 = stack.polls
        for _ in range(100):
            stack.done([0])
        time.sleep(PG_SETTLE_S)
        x1 = stack.pg_transactions()
        # every poll runs the same statements, so its count is a whole number (the pool's check, the query);
        # a worker's reaper (every 15 s or so) may fall in the window, hence the rounding
        measured_per_poll = (x1[0] - x0[0]) / (stack.polls - polls0)
        per_poll = float(round(measured_per_poll))
        direct = stack.direct(one, game_string, 2 * ns.concurrency)
        queued = stack.queue_cost(50)
        polls1 = stack.polls
        for r in range(ns.repeats):
            for config, bots in (("one", one), ("two", two)):
                run = stack.tournament(config, bots, ns.game, ns.players, ns.rounds)
                runs[config].append(run)
                print("  " + describe(run, r + 1), flush=True)
        time.sleep(PG_SETTLE_S)
        x2 = stack.pg_transactions()
        presence = stack.presence_bytes()
        writes = stack.write_commands({k for r in [*runs["one"], *runs["two"], direct, queued, idle_all]
                                       for k in r.commands})
        with stack.admin.cursor() as cur:
            row = cur.execute("SHOW max_connections").fetchone()
        assert row is not None
        max_connections = int(row[0])
    except Exception:
        for name in ("referee-a", "referee-b", "worker-a", "worker-b"):
            print(f"--- {name}\n{stack.log(name)}", file=sys.stderr)
        raise
    finally:
        stack.close()
    every = runs["one"] + runs["two"]
    played = sum(r.matches for r in every)
    xacts = (x2[0] - x1[0] - (stack.polls - polls1) * per_poll) / played
    rollbacks = (x2[1] - x1[1]) / played
    rows = (x2[2] - x1[2]) / played
    ratios = [a.wall_s / b.wall_s for a, b in zip(runs["one"], runs["two"], strict=True)]
    print(f"\nPostgreSQL: {per_poll:.0f} transactions a poll of this process (measured {measured_per_poll:.2f}; "
          f"subtracted); {rollbacks:.2f} rolled back a match (retried on a lock conflict); Redis connections open "
          f"with no match, by process: {', '.join(f'{k} {v}' for k, v in sorted(clients.items()))}")
    print(f"direct (referee a alone, {direct.matches} matches through MatchControl): referee CPU "
          f"{direct.cpu['referee-a'] / direct.matches * 1000:.1f} ms a match "
          f"({direct.cpu['referee-a'] / max(1, direct.decisions) * 1e6:.0f} us a decision)")
    for line in machine_limit(runs):
        print(line)
    print("capacity, extrapolated linearly from these runs:")
    measured = Measured(idle_all, idle_refs, direct, queued, xacts, rows, max_connections, ns.concurrency,
                        presence, writes)
    for line in capacity(every, measured):
        print("  " + line)
    busy = statistics.median(r.machine for r in runs["two"])
    note = (f"1 + 1 {statistics.median(r.wall_s for r in runs['one']):.2f} s, 2 + 2 "
            f"{statistics.median(r.wall_s for r in runs['two']):.2f} s for {runs['one'][0].matches} matches; the "
            f"machine's {os.cpu_count()} cores {busy:.0%} busy in the 2 + 2 runs (every process on it)")
    return report([
        Result(Goal(f"scale out: 2 referees + 2 workers ÷ 1 + 1, {ns.game} {ns.players}p", "× faster", GOAL_RATIO),
               ratios, [r.wall_s for r in runs["one"]], "s for the 1 + 1 tournament", note=note),
    ], "scale out: a referee-bound tournament on two referees and two workers against one of each")


if __name__ == "__main__":
    sys.exit(main())
