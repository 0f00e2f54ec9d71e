"""What the live spectator feed costs the referee: CPU per decision with the feed as deployed vs off.

Usage::

    .venv/bin/python bench/bench_live_feed.py [--games floriferous,lafleur,flowar]
        [--concurrency 4] [--seconds 3] [--repeats 3] [--redis-url redis://127.0.0.1:6379/14]

The referee runs in this process (:class:`referee.testing.Harness`), the two
instant bots and the match driver in a child process (``bench/bench_referee.py``'s
client child: bots answering at once with a random legal index, matches played
back to back over ``MatchControl.RunMatch``). Three configurations of the same
referee, interleaved in each repeat (off, deployed, watched, off, ...):

* **off**: no live feed (``PARTERRE_LIVE=0``);
* **deployed**: the feed configured as ``parterre referee`` configures it
  (``referee.server.serve`` calls ``referee.live.configure(redis_url,
  cluster_namespace)``), publishing to a real Redis at ``--redis-url``
  (a database of its own), nobody watching;
* **watched**: as deployed, with every running match watched (the web's
  interest key set for each room, as ``web.live`` sets it while a viewer
  is connected).

CPU per decision is this process's CPU time (``time.process_time``: every
thread, the Redis client included) ÷ the decisions the bots answered in the
window. The feed's share of a decision is ``(feed - off) / feed``. Goal: at
most :data:`SHARE_GOAL` for deployed and for watched (docs/web.md, "Live
matches"), judged as the ratio feed ÷ off of each repeat (at most
:data:`RATIO_GOAL`). Exits 1 when a goal is missed, 3 when no Redis answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the toy game fixture (bench_referee's child imports it)

from bench.bench_referee import TOKENS, _measure_child  # noqa: E402 - after the sys.path setup above
from bench.harness import Goal, Result, not_run, report  # noqa: E402 - after the sys.path setup above

GAMES = {"floriferous": "floriferous(players=2)", "lafleur": "lafleur(players=2)", "flowar": "flowar(players=2)"}
SHARE_GOAL = 0.20
"""The live feed may cost at most this share of the referee's CPU per decision."""
RATIO_GOAL = 1 / (1 - SHARE_GOAL)
"""The same goal as a ratio of paired repeats (feed on ÷ off <= 1.25), which noise cannot make negative."""
NAMESPACE = "bench-live"
MODES = ("off", "deployed", "watched")


async def _watch_every_room(h: Any, url: str) -> None:
    """Keep the interest key of every running room set, as a connected viewer's web process does."""
    import redis.asyncio as aioredis

    from referee import live

    r = aioredis.Redis.from_url(url)
    try:
        while True:
            assert h.core is not None
            ids = list(h.core.rooms)
            if ids:
                async with r.pipeline(transaction=False) as p:
                    for mid in ids:
                        p.set(live.watch_key(NAMESPACE, mid), "1", ex=30)
                    await p.execute()
            await asyncio.sleep(0.1)
    finally:
        await r.aclose()


async def measure(mode: str, game_string: str, concurrency: int, seconds: float, url: str) -> dict[str, float]:
    """One window of the referee in ``mode`` (off / deployed / watched); CPU per decision in µs."""
    from referee import live
    from referee.testing import Harness

    live.configure(None if mode == "off" else url, NAMESPACE)  # as referee.server.serve does
    watcher: asyncio.Task[None] | None = None
    try:
        async with Harness(TOKENS, progress_every=1_000_000) as h:
            if mode == "watched":
                watcher = asyncio.create_task(_watch_every_room(h, url))
            got = await _measure_child(["--child-referee", h.address, "--game", game_string, "--concurrency",
                                        str(concurrency), "--encoding", "json"], seconds, wait_for_first=True)
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            return got
    finally:
        live.configure(None)
        with contextlib.suppress(Exception):
            await live.shutdown()


def _redis_ok(url: str) -> str:
    import redis

    try:
        r = redis.Redis.from_url(url, socket_timeout=2)
        r.ping()
        r.close()
    except (redis.RedisError, OSError) as exc:
        return str(exc)
    return ""


def _cleanup(url: str) -> None:
    import redis

    r = redis.Redis.from_url(url)
    try:
        keys = list(r.scan_iter(f"{NAMESPACE}:*", count=1000))
        for i in range(0, len(keys), 500):
            r.delete(*keys[i:i + 500])
    finally:
        r.close()


async def run_all(ns: argparse.Namespace) -> list[Result]:
    """Interleave off / deployed / watched ``ns.repeats`` times per game; the feed's share per decision."""
    games = [g.strip() for g in ns.games.split(",") if g.strip()]
    got: dict[tuple[str, str], list[float]] = {(g, m): [] for g in games for m in MODES}
    for _ in range(ns.repeats):
        for g in games:
            for m in MODES:
                async with asyncio.timeout(ns.seconds + 120):  # a stuck window fails loudly, never hangs
                    us = (await measure(m, GAMES[g], ns.concurrency, ns.seconds, ns.redis_url))["server_us"]
                print(f"  {g} {m}: {us:.0f} us referee CPU/decision", flush=True)
                got[g, m].append(us)
                _cleanup(ns.redis_url)
    results = []
    for g in games:
        off = got[g, "off"]
        for m in ("deployed", "watched"):
            on = got[g, m]
            shares = ", ".join(f"{1 - o / x:.2f}" for o, x in zip(off, on, strict=True))
            results.append(Result(
                Goal(f"{g}: referee CPU/decision, feed {m} ÷ feed off", "ratio", RATIO_GOAL,
                     higher_is_better=False, source="docs/web.md"),
                [x / o for o, x in zip(off, on, strict=True)], off, "us referee CPU/decision, feed off",
                note=(f"{GAMES[g]}: referee CPU/decision {m} [{', '.join(f'{x:.0f}' for x in on)}] us "
                      f"(median {statistics.median(on):.0f}), off [{', '.join(f'{x:.0f}' for x in off)}] us "
                      f"(median {statistics.median(off):.0f}); the feed's share (1 - off/{m}) [{shares}], "
                      f"goal <= {SHARE_GOAL:.2f}"),
            ))
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; 0 when every goal is met, 1 when one is missed, 3: no Redis."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    p.add_argument("--concurrency", type=int, default=4, help="concurrent matches")
    p.add_argument("--seconds", type=float, default=3.0, help="length of one measurement (s)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians reported)")
    p.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
                   help="the Redis the feed publishes to (a database of its own; default "
                        "$PARTERRE_BENCH_REDIS_URL or redis://127.0.0.1:6379/14)")
    ns = p.parse_args(argv)
    unknown = {g.strip() for g in ns.games.split(",") if g.strip()} - set(GAMES)
    if unknown:
        p.error(f"unknown game(s): {', '.join(sorted(unknown))}")
    problem = _redis_ok(ns.redis_url)
    if problem:
        return not_run(f"no Redis at {ns.redis_url} ({problem}); start one or pass --redis-url")
    print(f"cores: {os.cpu_count()}, concurrency: {ns.concurrency}, {ns.repeats} interleaved repeats of "
          f"{ns.seconds:.0f} s, Redis {ns.redis_url}")
    return report(asyncio.run(run_all(ns)), "live feed's cost to the referee")


if __name__ == "__main__":
    sys.exit(main())
