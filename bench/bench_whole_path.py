"""The whole path's CPU per match against the same match in process, as deployed (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_whole_path.py [--admin-url URL] [--port-base 25190] [--matches 12]
        [--repeats 3] [--games floriferous,lafleur,flowar] [--players 2]

Set-up (all real, as ``parterre up`` runs it; ``bench/deployed.py``): a fresh PostgreSQL database
on ``--admin-url`` (dropped afterwards), a private ``redis-server`` of this run (its CPU is
then this run's alone), ``parterre up --no-web --no-beat --no-house`` (the
referee with its live feed and metrics, one Celery worker), and one
``parterre bot run random`` process per seat, connected over gRPC.

Each repeat, per game, interleaved: **in process** (the baseline), the matches'
deals played by :func:`bots.local.play_local` in this process with seats that
pick a uniform legal index (what ``parterre bot run random`` does), CPU by
``time.process_time``; then **the whole path**: the same deals planned
(``plan_match`` with their seeds) and queued to the worker, which claims each,
has the referee play it with the bots over gRPC, and records the result, the
rating update and the compact replay in PostgreSQL. Its CPU is the sum over
every process involved, from ``/proc``: the referee and the worker (with their
children), the bots, the PostgreSQL backends connected to the run's database,
the private Redis, and this process while it plans and queues.

The quantity is whole-path CPU per match ÷ in-process CPU per match (goal ≤ 20
in every game). Random bots make the in-process match as cheap as it can be, so
the ratio is the tax at its largest; a bot that thinks pays the same tax on a
larger base. The report breaks the whole path's CPU down by process ("where
the rest goes"). Not counted: PostgreSQL's shared background processes (WAL
writer, checkpointer), which serve every database on the server, and backends
that connect and leave between two samples (the worker's pool keeps its own).
Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.deployed import Deployed, add_arguments  # noqa: E402 - after the sys.path setup above
from bench.harness import Goal, Result, cpu_seconds, report  # noqa: E402 - after the sys.path setup above

GOAL_RATIO = 20.0
GAMES = ("floriferous", "lafleur", "flowar")
PORT_BASE = 25190
"""The referee on BASE, the metrics from BASE + 1, the private Redis on BASE + 9 (below the ephemeral range)."""


def _tree_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of ``pid`` and every descendant, by role (its command line's ``parterre`` subcommand)."""
    import psutil  # type: ignore[import-untyped]  # psutil ships no type information

    out: dict[str, float] = defaultdict(float)
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return out
    for p in procs:
        try:
            cmd = p.cmdline()
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        role = next((r for r in ("referee", "worker", "up") if r in cmd), "other")
        if "celery" in " ".join(cmd):
            role = "worker"
        out[role] += t.user + t.system  # children's times are their own entries, not folded in
    return out


class Stack(Deployed):
    """One run's services (:class:`bench.deployed.Deployed`): ``parterre up``, the bots."""

    def __init__(self, admin_url: str, players: int, port_base: int) -> None:
        from ladder import bots as ladder_bots

        referee = f"127.0.0.1:{port_base}"
        super().__init__(admin_url, "path", port_base, env={"PARTERRE_REFEREE_ADDRESS": referee})
        try:
            self.up = self.parterre("up", "up", "--no-web", "--no-beat", "--no-house", "--workers", "1",
                                    "--concurrency", "2", "--metrics-port", str(port_base + 1))
            self.bots = [ladder_bots.register_bot(self.pool, f"random-{i}") for i in range(players)]
            self.wait_grpc(referee, self.up, "up")
            self.bot_procs = [self.parterre(f"bot-{i}", "bot", "run", "random", "--token", token, "--address",
                                            referee, "--seed", str(i))
                              for i, (_, token) in enumerate(self.bots)]
            self.queue_here()
        except BaseException:
            self.close()
            raise
        self.n = 0

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far by role: referee, worker, bots, postgres (this database's backends), redis."""
        out = dict(_tree_cpu(self.up.pid))
        out.pop("up", None)  # the supervisor only waits
        out["bots"] = sum(sum(_tree_cpu(p.pid).values()) for p in self.bot_procs)
        out["redis"] = cpu_seconds(self.redis.pid)
        with self.pool.connection() as conn:
            pids = [r[0] for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
        pg = 0.0
        for pid in pids:
            try:
                pg += cpu_seconds(pid)
            except FileNotFoundError:
                continue
        out["postgres"] = pg
        out["postgres_pids"] = float(len(pids))
        return out

    def run(self, game_string: str, seeds: list[str]) -> tuple[dict[str, float], list[int]]:
        """Plan, queue and wait for one match per seed; CPU seconds spent by role, and the match ids."""
        from ladder.tournaments import plan_match
        from workers.tasks import run_match

        before = self.cpu()
        t0 = time.process_time()
        ids = []
        for seed in seeds:
            self.n += 1
            seats = [b for b, _ in self.bots]
            seats = seats[self.n % len(seats):] + seats[:self.n % len(seats)]
            mid = plan_match(self.pool, game_string=game_string, bot_ids=seats, plan_key=f"bench:path:{self.n}",
                             seed=seed)
            run_match.apply_async((mid,))
            ids.append(mid)
        planner = time.process_time() - t0
        self._wait(ids)
        after = self.cpu()
        spent = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after if k != "postgres_pids"}
        spent["planner"] = planner
        return spent, ids

    def _wait(self, ids: list[int], timeout_s: float = 600.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.pool.connection() as conn:
                row = conn.execute("SELECT count(*), count(*) FILTER (WHERE status <> 'finished') FROM matches "
                                   "WHERE id = ANY(%s) AND status NOT IN ('planned', 'running')", (ids,)).fetchone()
            assert row is not None
            if row[0] == len(ids):
                if row[1]:
                    raise RuntimeError(f"{row[1]} of {len(ids)} matches did not finish: {self.log('up')}")
                return
            time.sleep(0.05)
        raise TimeoutError(f"matches {ids[0]}..{ids[-1]} not finished in {timeout_s} s: {self.log('up')}")

    def decisions(self, ids: list[int]) -> int:
        """Decisions the seats made in matches ``ids`` (the referee's count, from ``seats``)."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT coalesce(sum(decisions), 0) FROM seats WHERE match_id = ANY(%s)",
                               (ids,)).fetchone()
        return int(row[0]) if row else 0


def in_process(game_string: str, seeds: list[str]) -> tuple[float, int]:
    """CPU seconds to play the deals in this process with uniform random seats, and the decisions made."""
    from bots.local import play_local
    from games.registry import load_game

    game = load_game(game_string)
    pick = random.Random(0)
    seats = [lambda d: pick.randrange(len(d.legal))] * game.num_players
    t0 = time.process_time()
    decisions = sum(play_local(game, seats, random.Random(seed)).decisions for seed in seeds)
    return time.process_time() - t0, decisions


def main(argv: list[str] | None = None) -> int:
    """Measure; print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p, port_base=PORT_BASE)
    p.add_argument("--matches", type=int, default=12, help="matches per game and repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--games", default=",".join(GAMES))
    p.add_argument("--players", type=int, default=2)
    ns = p.parse_args(argv)
    games = [g.strip() for g in ns.games.split(",") if g.strip()]
    stack = Stack(ns.admin_url, ns.players, ns.port_base)
    results = []
    try:
        stack.run(f"{games[0]}(players={ns.players})", [f"warm-{i}" for i in range(4)])  # channels and pools open
        ratios: dict[str, list[float]] = defaultdict(list)
        base: dict[str, list[float]] = defaultdict(list)
        shares: dict[str, dict[str, float]] = {g: defaultdict(float) for g in games}
        per_decision: dict[str, list[float]] = defaultdict(list)
        for r in range(ns.repeats):
            for g in games:
                gs = f"{g}(players={ns.players})"
                seeds = [secrets.token_hex(16) for _ in range(ns.matches)]
                local_s, local_decisions = in_process(gs, seeds)
                spent, ids = stack.run(gs, seeds)
                whole = sum(spent.values())
                ratios[g].append((whole / ns.matches) / (local_s / ns.matches))
                base[g].append(local_s / ns.matches * 1000)
                wire_decisions = stack.decisions(ids)
                per_decision[g].append((whole / max(wire_decisions, 1)) / (local_s / max(local_decisions, 1)))
                for k, v in spent.items():
                    shares[g][k] += v
                parts = ", ".join(f"{k} {v / ns.matches * 1000:.1f}" for k, v in sorted(spent.items()))
                print(f"repeat {r + 1} {g}: in process {local_s / ns.matches * 1000:.1f} ms/match, whole path "
                      f"{whole / ns.matches * 1000:.1f} ms/match ({parts})", flush=True)
    except Exception:
        print(stack.log("up"), file=sys.stderr)
        raise
    finally:
        stack.close()
    for g in games:
        total = sum(shares[g].values())
        where = ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(shares[g].items(), key=lambda kv: -kv[1]))
        results.append(Result(
            Goal(f"whole path ÷ in process, {g} ({ns.players} players)", "× CPU per match", GOAL_RATIO,
                 higher_is_better=False),
            ratios[g], base[g], "ms CPU per match in process",
            note=f"{ns.matches} matches a repeat; the whole path's CPU: {where}; per decision "
                 f"{statistics.median(per_decision[g]):.1f} ×"))
    return report(results, "whole path: CPU per match, as deployed, against the match in process")


if __name__ == "__main__":
    sys.exit(main())
