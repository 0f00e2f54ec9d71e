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


@dataclass
class Measured:
    """What the bench measured besides the tournament runs.

    Attributes:
        idle_all: a window with no match, every process running.
        idle_refs: a window with no match, the workers paused: the referees (and Redis) alone.
        direct: matches the bench played on referee *a* itself (no worker): the referee's own share.
        queued: tasks queued to a queue nobody consumes: queuing's share.
        xacts: PostgreSQL transactions a match (the bench's polls subtracted).
        rows: PostgreSQL rows written a match (inserted, updated, deleted).
        max_connections: the PostgreSQL server's ``max_connections``.
        concurrency: slots of each worker.
        presence: (bytes, bots) of each referee's presence record.
        writes: the Redis commands that write (``COMMAND INFO`` flags).
    """

    idle_all: Run
    idle_refs: Run
    direct: Run
    queued: Run
    xacts: float
    rows: float
    max_connections: int
    concurrency: int
    presence: list[tuple[int, int]]
    writes: set[str]


def _count(run: Run, only: set[str] | None = None) -> int:
    return sum(v for k, v in run.commands.items() if only is None or k in only)


def capacity(runs: list[Run], m: Measured) -> list[str]:
    """What 100 referees and 50 workers would ask of PostgreSQL and Redis, extrapolated linearly from the runs."""
    out = []
    ref_cpu = _per(runs, lambda r: r.cpu["referee-a"] + r.cpu["referee-b"])
    worker_cpu = _per(runs, lambda r: r.cpu["worker-a"] + r.cpu["worker-b"])
    pg_cpu = _per(runs, lambda r: r.cpu["postgres"])
    redis_idle_cpu = m.idle_all.cpu["redis"] / m.idle_all.wall_s
    redis_cpu = _per(runs, lambda r: r.cpu["redis"] - redis_idle_cpu * r.wall_s)
    per: dict[str, dict[str, float]] = {}  # all commands / writes -> who -> a match, or a second with no match
    for kind, only in (("commands", None), ("writes", m.writes)):
        idle = _count(m.idle_all, only) / m.idle_all.wall_s
        ref_idle = _count(m.idle_refs, only) / m.idle_refs.wall_s / len(NAMES)
        total = _per(runs, lambda r, only=only, idle=idle: _count(r, only) - idle * r.wall_s)
        ref = (_count(m.direct, only) - idle * m.direct.wall_s) / m.direct.matches
        queue = _count(m.queued, only) / m.queued.matches
        per[kind] = {"total": total, "referee": ref, "queue": queue, "worker": total - ref - queue,
                     "referee_idle": ref_idle, "worker_idle": max(0.0, idle - ref_idle * len(NAMES)) / len(NAMES)}
    cmds, writes = per["commands"], per["writes"]
    conns = _per(runs, lambda r: r.redis["total_connections_received"])
    bytes_out = _per(runs, lambda r: r.redis["total_net_output_bytes"])
    per_worker_pg = max(max(r.pg_connections.get(f"scale-worker-{n}", 0) for n in NAMES) for r in runs)
    decisions = _per(runs, lambda r: r.decisions)
    rate = 1.0 / ref_cpu  # matches/s of one referee on a core of its own (a referee is one process)
    cluster = TARGET_REFEREES * rate
    slots = TARGET_REFEREES * m.concurrency  # the matches at once that kept one referee busy here, per referee
    pg_conns = per_worker_pg * slots / m.concurrency

    def redis_rate(kind: str) -> float:
        return (cluster * per[kind]["total"] + TARGET_REFEREES * per[kind]["referee_idle"]
                + TARGET_WORKERS * per[kind]["worker_idle"])

    redis_core = cluster * redis_cpu + redis_idle_cpu
    rec_bytes, rec_bots = max(m.presence, default=(0, 0), key=lambda p: p[1])
    out.append(f"measured per match ({decisions:.0f} decisions; all runs): referee CPU {ref_cpu * 1000:.1f} ms "
               f"({ref_cpu / decisions * 1e6:.0f} us a decision), worker CPU {worker_cpu * 1000:.1f} ms, PostgreSQL "
               f"backends {pg_cpu * 1000:.1f} ms, Redis {redis_cpu * 1000:.2f} ms; PostgreSQL {m.xacts:.1f} "
               f"transactions, {m.rows:.0f} rows written; Redis {cmds['total']:.1f} commands, {writes['total']:.1f} "
               f"of them writes (referee {cmds['referee']:.1f} / {writes['referee']:.1f}, worker "
               f"{cmds['worker']:.1f} / {writes['worker']:.1f}, queuing {cmds['queue']:.1f} / {writes['queue']:.1f}), "
               f"{conns:.2f} connections opened, {bytes_out / 1024:.1f} KiB sent")
    out.append(f"measured with no match: Redis commands (writes)/s per referee {cmds['referee_idle']:.2f} "
               f"({writes['referee_idle']:.2f}), per worker {cmds['worker_idle']:.2f} ({writes['worker_idle']:.2f}); "
               f"PostgreSQL connections per worker of {m.concurrency} slots {per_worker_pg} (the most seen at once); "
               f"a referee's presence record {rec_bytes} bytes with {rec_bots} bots")
    share = cluster / TARGET_WORKERS
    out.append(f"one referee, referee-bound (a core of its own, instant bots): {rate:.1f} matches/s, "
               f"{rate * decisions:,.0f} decisions/s; Redis {rate * cmds['referee'] + cmds['referee_idle']:.0f} "
               f"commands/s ({rate * writes['referee'] + writes['referee_idle']:.0f} writes); no PostgreSQL")
    out.append(f"one worker at {TARGET_REFEREES}/{TARGET_WORKERS} of that rate ({share:.1f} matches/s): "
               f"{share * worker_cpu:.2f} cores, {slots // TARGET_WORKERS} slots, "
               f"{pg_conns / TARGET_WORKERS:.0f} PostgreSQL connections, {share * m.xacts:.0f} transactions/s "
               f"({share * m.rows:,.0f} rows written), Redis "
               f"{share * (cmds['worker'] + cmds['queue']) + cmds['worker_idle']:.0f} commands/s "
               f"({share * (writes['worker'] + writes['queue']) + writes['worker_idle']:.0f} writes)")
    limits = [
        ("PostgreSQL connections", f"{pg_conns:,.0f} against max_connections {m.max_connections}",
         pg_conns / m.max_connections),
        ("Redis CPU (one thread)", f"{redis_core:.2f} of its one core", redis_core),
        ("PostgreSQL writes", f"{cluster * m.xacts:,.0f} transactions/s, {cluster * m.rows:,.0f} rows/s, "
         f"{cluster * pg_cpu:.1f} cores of backends", 0.0),
        ("Redis", f"{redis_rate('commands'):,.0f} commands/s, {redis_rate('writes'):,.0f} writes/s, "
         f"{cluster * conns:,.0f} new connections/s, {cluster * bytes_out / 2**20:,.0f} MiB/s sent", 0.0),
    ]
    out.append(f"{TARGET_REFEREES} referees and {TARGET_WORKERS} workers, linearly ({cluster:,.0f} matches/s, "
               f"{cluster * decisions:,.0f} decisions/s, {slots:,} matches at once, {cluster * worker_cpu:.0f} "
               f"worker cores):")
    out += [f"  {name}: {text}" for name, text, _ in limits]
    first = max(limits, key=lambda item: item[2])
    out.append(f"  first limit reached: {first[0]} ({first[2]:.1f} × the limit)" if first[2] >= 1 else
               "  no hard limit reached")
    held = TARGET_REFEREES * HELD_MATCHES
    out.append(f"  with bots that think (a referee holding {HELD_MATCHES} matches, docs/benchmarks.md), "
               f"{held:,} matches at once need as many worker slots: {per_worker_pg * held / m.concurrency:,.0f} "
               f"PostgreSQL connections at {per_worker_pg} per {m.concurrency} slots")
    out.append(f"  the presence read of every match grows with referees × bots: {TARGET_REFEREES} records of "
               f"{rec_bytes} bytes here ({rec_bots} bots each) is {TARGET_REFEREES * rec_bytes / 1024:.0f} KiB a "
               f"match, {cluster * TARGET_REFEREES * rec_bytes / 2**20:,.0f} MiB/s from Redis")
    return out
