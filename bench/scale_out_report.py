"""The figures of ``bench/bench_scale_out.py``: a run's counters, what held the runs back, the estimate.

Pure functions over the runs' counters (:class:`Run`), so that the estimate for 100 referees and 50
workers reads as arithmetic on what was measured (docs/benchmarks.md, "Scale out").
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any

NAMES = ("a", "b")
"""The two referees and the two workers: ``referee-a``, ``worker-b``..."""
TARGET_REFEREES, TARGET_WORKERS = 100, 50
HELD_MATCHES = 200
"""Matches one referee holds at once with bots that think (the capacity goal of ``bench_clock.py``)."""


@dataclass
class Run:
    """The counters of one window: a tournament run, a window with no match, a calibration."""

    config: str
    matches: int
    decisions: int
    wall_s: float
    cpu: dict[str, float]  # role -> CPU seconds over the run
    machine: float  # share of all cores busy over the run (every process on the machine)
    commands: dict[str, int]  # Redis command -> calls over the run
    redis: dict[str, int]  # Redis INFO stats deltas
    pg_connections: dict[str, int] = field(default_factory=dict)  # application_name -> most seen at once
    hosted: list[int] = field(default_factory=list)  # matches each referee ended over the run

    def share(self, role: str) -> float:
        """``role``'s CPU over the run as a share of one core."""
        return self.cpu.get(role, 0.0) / self.wall_s


def _per(runs: list[Run], value: Any) -> float:
    """Sum of ``value(run)`` over ``runs`` per match played in them."""
    return sum(value(r) for r in runs) / max(1, sum(r.matches for r in runs))


def _fmt_share(run: Run, roles: list[str]) -> str:
    return ", ".join(f"{role} {run.share(role):.0%}" for role in roles if run.share(role) >= 0.005)


def describe(run: Run, repeat: int) -> str:
    """One line of a run: wall, rates, CPU by process, the machine."""
    roles = ["referee-a", "referee-b", "worker-a", "worker-b", "bots", "postgres", "redis", "bench"]
    return (f"repeat {repeat} {run.config}: {run.matches} matches, {run.decisions} decisions in {run.wall_s:.2f} s "
            f"({run.matches / run.wall_s:.2f} matches/s, {run.decisions / run.wall_s:,.0f} decisions/s; hosted by "
            f"a/b {'/'.join(str(h) for h in run.hosted)}); CPU of one core: {_fmt_share(run, roles)}; the machine's "
            f"{os.cpu_count()} cores {run.machine:.0%} busy (every process on it)")


def machine_limit(runs: dict[str, list[Run]]) -> list[str]:
    """Whether the cores or the design held the 2 + 2 runs back: CPU per match in each configuration, and
    the most a referee-bound 2 + 2 could gain over 1 + 1 on this machine's cores at that CPU per match."""
    cores = os.cpu_count() or 1
    cpu = {c: _per(runs[c], lambda r: sum(v for k, v in r.cpu.items() if k != "bench")) for c in runs}
    bots = {c: _per(runs[c], lambda r: r.cpu["bots"]) for c in runs}
    ref_one = statistics.median(r.share("referee-a") for r in runs["one"])
    referee = _per(runs["one"], lambda r: r.cpu["referee-a"])
    lines = [
        f"CPU per match, every process of the run: 1 + 1 {cpu['one'] * 1000:.0f} ms, 2 + 2 {cpu['two'] * 1000:.0f} ms "
        f"({cpu['two'] / cpu['one']:.2f} ×: what the second pair adds per match); the referee {referee * 1000:.0f} ms",
        f"referee a in the 1 + 1 runs: {ref_one:.0%} of a core (a referee is one process: 100 % is its limit; less "
        f"means the machine's cores, shared with everything else on it, held it back)",
    ]
    for label, minus in (("with the bots on this machine", {c: 0.0 for c in runs}),
                         ("without the bots (deployed, they run on their authors' machines)", bots)):
        one = min(1.0 / referee, cores / (cpu["one"] - minus["one"]))  # a referee's core, or the machine's
        two = min(2.0 / referee, cores / (cpu["two"] - minus["two"]))
        need = 2.0 / referee * (cpu["two"] - minus["two"])
        lines.append(f"what {cores} idle cores allow, {label}: 1 + 1 {one:.1f} matches/s, 2 + 2 {two:.1f}: at most "
                     f"{two / one:.2f} ×; 2 + 2 with both referees at a full core needs {need:.1f} cores")
    return lines


def capacity(runs: list[Run], idle_all: Run, idle_refs: Run, direct: Run, queued: Run, xacts_per_match: float,
             max_connections: int, concurrency: int, presence: list[tuple[int, int]]) -> list[str]:
    """What 100 referees and 50 workers would ask of PostgreSQL and Redis, extrapolated linearly from the runs."""
    out = []
    ref_cpu = _per(runs, lambda r: r.cpu["referee-a"] + r.cpu["referee-b"])
    worker_cpu = _per(runs, lambda r: r.cpu["worker-a"] + r.cpu["worker-b"])
    pg_cpu = _per(runs, lambda r: r.cpu["postgres"])
    redis_idle_cpu = idle_all.cpu["redis"] / idle_all.wall_s
    redis_cpu = _per(runs, lambda r: r.cpu["redis"] - redis_idle_cpu * r.wall_s)
    idle_rate = sum(idle_all.commands.values()) / idle_all.wall_s
    cmds = _per(runs, lambda r: sum(r.commands.values()) - idle_rate * r.wall_s)
    ref_idle = sum(idle_refs.commands.values()) / idle_refs.wall_s / len(NAMES)
    worker_idle = max(0.0, idle_rate - ref_idle * len(NAMES)) / len(NAMES)
    ref_cmds = (sum(direct.commands.values()) - idle_rate * direct.wall_s) / direct.matches
    queue_cmds = sum(queued.commands.values()) / queued.matches
    worker_cmds = cmds - ref_cmds - queue_cmds
    conns = _per(runs, lambda r: r.redis["total_connections_received"])
    bytes_out = _per(runs, lambda r: r.redis["total_net_output_bytes"])
    per_worker_pg = max(max(r.pg_connections.get(f"scale-worker-{n}", 0) for n in NAMES) for r in runs)
    decisions = _per(runs, lambda r: r.decisions)
    rate = 1.0 / ref_cpu  # matches/s of one referee on a core of its own (a referee is one process)
    cluster = TARGET_REFEREES * rate
    slots = TARGET_REFEREES * concurrency  # the matches at once that kept one referee busy here, per referee
    pg_conns = TARGET_WORKERS * per_worker_pg * (slots / TARGET_WORKERS) / concurrency
    pg_xacts = cluster * xacts_per_match
    redis_cmds = cluster * cmds + TARGET_REFEREES * ref_idle + TARGET_WORKERS * worker_idle
    redis_core = cluster * redis_cpu + redis_idle_cpu
    rec_bytes, rec_bots = max(presence, default=(0, 0), key=lambda p: p[1])
    out.append(f"measured per match ({decisions:.0f} decisions; all runs): referee CPU {ref_cpu * 1000:.1f} ms "
               f"({ref_cpu / decisions * 1e6:.0f} us a decision), worker CPU {worker_cpu * 1000:.1f} ms, PostgreSQL "
               f"backends {pg_cpu * 1000:.1f} ms, Redis {redis_cpu * 1000:.2f} ms; PostgreSQL {xacts_per_match:.1f} "
               f"transactions; Redis {cmds:.1f} commands (referee {ref_cmds:.1f}, worker {worker_cmds:.1f}, queuing "
               f"{queue_cmds:.1f}), {conns:.2f} connections opened, {bytes_out / 1024:.1f} KiB sent")
    out.append(f"measured with no match: Redis commands/s per referee {ref_idle:.2f}, per worker {worker_idle:.2f}; "
               f"PostgreSQL connections per worker of {concurrency} slots {per_worker_pg} (the most seen at once); "
               f"a referee's presence record {rec_bytes} bytes with {rec_bots} bots")
    ref_rate_cmds = rate * ref_cmds + ref_idle
    worker_share = cluster / TARGET_WORKERS
    out.append(f"one referee, referee-bound (a core of its own, instant bots): {rate:.1f} matches/s, "
               f"{rate * decisions:,.0f} decisions/s; Redis {ref_rate_cmds:.0f} commands/s; no PostgreSQL")
    out.append(f"one worker at {TARGET_REFEREES}/{TARGET_WORKERS} of that rate ({worker_share:.1f} matches/s): "
               f"{worker_share * worker_cpu:.2f} cores, {slots // TARGET_WORKERS} slots, "
               f"{per_worker_pg * slots / TARGET_WORKERS / concurrency:.0f} PostgreSQL connections, "
               f"{worker_share * xacts_per_match:.0f} transactions/s, Redis "
               f"{worker_share * (worker_cmds + queue_cmds) + worker_idle:.0f} commands/s")
    limits = [
        ("PostgreSQL connections", pg_conns, f"{pg_conns:,.0f} against max_connections {max_connections}",
         pg_conns / max_connections),
        ("Redis CPU (one thread)", redis_core, f"{redis_core:.2f} of its one core", redis_core),
        ("PostgreSQL transactions", pg_xacts, f"{pg_xacts:,.0f}/s, {cluster * pg_cpu:.1f} cores of backends", 0.0),
        ("Redis commands", redis_cmds, f"{redis_cmds:,.0f}/s, {cluster * conns:,.0f} new connections/s, "
         f"{cluster * bytes_out / 2**20:,.0f} MiB/s sent", 0.0),
    ]
    out.append(f"{TARGET_REFEREES} referees and {TARGET_WORKERS} workers, linearly ({cluster:,.0f} matches/s, "
               f"{cluster * decisions:,.0f} decisions/s, {slots:,} matches at once, {cluster * worker_cpu:.0f} "
               f"worker cores):")
    out += [f"  {name}: {text}" for name, _, text, _ in limits]
    first = max(limits, key=lambda item: item[3])
    out.append(f"  first limit reached: {first[0]} ({first[3]:.1f} × the limit)" if first[3] >= 1 else
               "  no hard limit reached")
    held = TARGET_REFEREES * HELD_MATCHES
    out.append(f"  with bots that think (a referee holding {HELD_MATCHES} matches, docs/benchmarks.md), "
               f"{held:,} matches at once need as many worker slots: {per_worker_pg * held / concurrency:,.0f} "
               f"PostgreSQL connections at {per_worker_pg} per {concurrency} slots")
    out.append(f"  the presence read of every match grows with referees × bots: {TARGET_REFEREES} records of "
               f"{rec_bytes} bytes here ({rec_bots} bots each) is {TARGET_REFEREES * rec_bytes / 1024:.0f} KiB a "
               f"match, "
               f"{cluster * TARGET_REFEREES * rec_bytes / 2**20:,.0f} MiB/s from Redis")
    return out
