"""The final evaluation of a 64-entrant competition, planned and played on the workers (docs/competitions.md).

Usage::

    .venv/bin/python bench/bench_competition_final.py [--admin-url URL] [--port-base 25290] [--entrants 64]
        [--tiers 8] [--season-s 60] [--budget 2000] [--max-batches 20] [--concurrency 4]

Set-up (all real, as ``parterre up`` runs it; ``bench/deployed.py``): a fresh PostgreSQL database
on ``--admin-url`` (dropped afterwards), a private ``redis-server``, ``parterre up --no-web
--no-house`` (referee with its live feed, one Celery worker of ``--concurrency``
slots, and the beat, whose competition tick runs every second; the continuous
ladder's tick is set to a day, so that only the competition plays), one account
per entrant and one process holding every entrant's connection (the SDK's
:class:`bots.handicap.HandicapBot`, one per entrant).

**Known strength gaps**: the entrants fall into ``--tiers`` tiers of equal size;
tier ``t`` plays the greedy strategy with a random move with probability
``t / (tiers - 1)`` (tier 0 is the greedy bot, the last the random bot), so the
true order of the tiers is known and two bots of one tier are equally strong.

The competition opens at once; its season runs ``--season-s`` seconds; the
deadline and the final evaluation follow (``final_at`` = the deadline), with a
budget of ``--budget`` matches in at most ``--max-batches`` batches. The bench
reports the planner's estimate (from the season's fit) against the matches the
evaluation played, how many neighbouring places it separated, the places, and
the wall time from the deadline to the frozen table on this machine.

Goals:

* **no false order**: no entrant placed strictly above one of a stronger tier
  (the oracle is the tiers, not the evaluation's own intervals), 0;
* the final evaluation of 64 entrants frozen within 10 minutes of the deadline
  on this machine (results the same hour: a participant waits for them).

Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.deployed import Deployed, add_arguments  # noqa: E402 - after the sys.path setup above
from bench.harness import Goal, Result, report  # noqa: E402 - after the sys.path setup above

PORT_BASE = 25290
"""The referee on BASE, the private Redis on BASE + 9 (below the ephemeral range)."""
WALL_GOAL_S = 600.0
GAME = "floriferous"
TIME_CONTROL = {"base_ms": 0, "increment_ms": 1000, "cap_ms": 1000, "margin_ms": 100}

BOTS_CHILD = """
import asyncio, json, sys
from bots.handicap import HandicapBot

address, specs = json.loads(sys.argv[1])

async def main():
    bots = [(HandicapBot(p, seed=seed, name=name, games=["floriferous"], max_concurrent_matches=8), token)
            for name, token, p, seed in specs]
    await asyncio.gather(*(bot.arun(address, token) for bot, token in bots))

asyncio.run(main())
"""


class Stack(Deployed):
    """The run's services (:class:`bench.deployed.Deployed`): ``parterre up``, the entrants' process."""

    def __init__(self, admin_url: str, concurrency: int, port_base: int) -> None:
        self.referee = f"127.0.0.1:{port_base}"
        super().__init__(admin_url, "final", port_base, pool_size=4, env={
            "PARTERRE_REFEREE_ADDRESS": self.referee,
            "PARTERRE_COMPETITION_PERIOD_S": "1", "PARTERRE_LADDER_PERIOD_S": "86400",
        })
        self.up = self.parterre("up", "up", "--no-web", "--no-house", "--workers", "1", "--concurrency",
                                str(concurrency), "--metrics-port", "0")

    def start_bots(self, specs: list[tuple[str, str, float, str]]) -> None:
        """One process holding every entrant's connection: ``(name, token, p, seed)`` each."""
        self.spawn("bots", [sys.executable, "-c", BOTS_CHILD, json.dumps([self.referee, specs])])


def spans(rows: list[Any]) -> dict[int, tuple[int, int]]:
    """``bot id -> (place_low, place_high)`` of the placed rows of a final table."""
    return {r.bot_id: (int(r.place_low), int(r.place_high)) for r in rows if r.standing == "placed"}


def false_orders(placed: dict[int, tuple[int, int]], tier: dict[int, int]) -> int:
    """Pairs placed strictly one above the other (``place_high`` above ``place_low``) against the tiers."""
    return sum(1 for a, (_, a_high) in placed.items() for b, (b_low, _) in placed.items()
               if a_high < b_low and tier[a] > tier[b])


def main(argv: list[str] | None = None) -> int:
    """Measure; print the report; returns 0 when every goal is met, else 1."""
    from ladder import accounts, competition_final, competitions, owned_bots

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p, port_base=PORT_BASE)
    p.add_argument("--entrants", type=int, default=64)
    p.add_argument("--tiers", type=int, default=8)
    p.add_argument("--season-s", type=float, default=60.0)
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--max-batches", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--timeout-s", type=float, default=1800.0)
    ns = p.parse_args(argv)
    if ns.entrants % ns.tiers or ns.tiers < 2:
        p.error("--entrants must be a multiple of --tiers (at least 2)")
    stack = Stack(ns.admin_url, ns.concurrency, ns.port_base)
    try:
        import redis

        published = redis.Redis.from_url(stack.env["PARTERRE_REDIS_URL"])  # tokens the referee knows at once
        organiser = accounts.create_account(stack.pool, "organiser", secrets.token_urlsafe(16), role="organiser")
        per_tier = ns.entrants // ns.tiers
        specs, tier, entrants = [], {}, []
        for i in range(ns.entrants):
            t = i % ns.tiers
            account = accounts.create_account(stack.pool, f"entrant-{i:02d}", secrets.token_urlsafe(16))
            bot, token = owned_bots.create_bot(stack.pool, account.id, f"tier{t}-{i // ns.tiers}", games=[GAME],
                                              redis=published)
            specs.append((bot.name, token, t / (ns.tiers - 1), f"seed-{i}"))
            tier[bot.id] = t
            entrants.append((bot.id, account.id))
        stack.start_bots(specs)
        now = datetime.now(UTC)
        deadline = now + timedelta(seconds=ns.season_s)
        comp = competitions.create_competition(
            stack.pool, organiser_id=organiser.id, name="64 entrants", game=GAME, deadline_at=deadline, now=now,
            final_at=deadline, time_control=TIME_CONTROL, entry_mode="any", final_budget=ns.budget,
            final_max_batches=ns.max_batches)
        for bot_id, account_id in entrants:
            competitions.enter_competition(stack.pool, comp.id, bot_id, account_id=account_id, now=now)
        print(f"{ns.entrants} entrants in {ns.tiers} tiers of {per_tier}; season until {deadline:%H:%M:%S}",
              flush=True)
        started = time.monotonic()
        estimate_printed = False
        while True:
            if stack.up.poll() is not None:
                raise RuntimeError(f"parterre up exited: {stack.log('up')}")
            if time.monotonic() - started > ns.season_s + ns.timeout_s:
                raise TimeoutError(f"no final table after {ns.timeout_s} s: {stack.log('up')}")
            ev = competition_final.evaluation(stack.pool, comp.id)
            if ev is not None and not estimate_printed:
                print(f"estimate before the first batch: {ev.estimate.get('total_matches')} matches "
                      f"({ev.estimate.get('unknown')} pairs unknown); budget {ns.budget}", flush=True)
                estimate_printed = True
            if ev is not None and ev.finished_at is not None:
                break
            time.sleep(1.0)
        wall = (ev.finished_at - deadline).total_seconds()
        rows = competition_final.final_table(stack.pool, comp.id)
        with stack.pool.connection() as conn:
            season = conn.execute("SELECT count(*) FROM matches WHERE competition_id = %s AND plan_key LIKE %s "
                                  "AND status = 'finished'", (comp.id, f"competition:{comp.id}:s%")).fetchone()
        placed = spans(rows)
        wrong = false_orders(placed, tier)
        separated = len(set(placed.values())) - 1
        tiers_apart = sum(1 for a in range(ns.tiers - 1)
                          if max((hi for b, (_, hi) in placed.items() if tier[b] == a), default=1 << 30)
                          < min((lo for b, (lo, _) in placed.items() if tier[b] == a + 1), default=-1))
        print("final places (tier: places):")
        for t in range(ns.tiers):
            got = sorted(span for b, span in placed.items() if tier[b] == t)
            print(f"  tier {t} (p={t / (ns.tiers - 1):.2f}): " + " ".join(
                str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in got))
    except Exception:
        print(stack.log("up"), file=sys.stderr)
        print(stack.log("bots"), file=sys.stderr)
        raise
    finally:
        stack.close()
    estimate = ev.estimate.get("total_matches")
    note = (f"season {season[0] if season else 0} matches in {ns.season_s:.0f} s; the planner's estimate "
            f"{estimate} matches ({ev.estimate.get('unknown')} pairs too close to estimate), played "
            f"{ev.matches_played} in {ev.batches} batches, stop: {ev.stop_reason}; {separated} boundaries between "
            f"places; {tiers_apart} of {ns.tiers - 1} neighbouring tiers wholly apart")
    return report([
        Result(Goal(f"final evaluation: false orders, {ns.entrants} entrants", "pairs", 0.0,
                    higher_is_better=False), [float(wrong)], note=note),
        Result(Goal(f"final evaluation: deadline to frozen table, {ns.entrants}", "s", WALL_GOAL_S,
                    higher_is_better=False), [wall], [float(ev.matches_played)], "matches played", note=note),
    ], "competition: the final evaluation of a simulated competition")


if __name__ == "__main__":
    sys.exit(main())
