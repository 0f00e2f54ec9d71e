"""200 concurrent matches with 100 ms bots on one referee: no spurious timeout (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_concurrency.py [--concurrency 200] [--delay-ms 100]
        [--seconds 10] [--repeats 3] [--cap-ms 1000] [--margin-ms 100]
        [--redis-url redis://127.0.0.1:6379/14] [--no-feed]

The referee (``referee.testing.Harness``, real gRPC on loopback) runs alone in
this process, as deployed: its live feed publishes to a real Redis (``--redis-url``), as
``referee.server.serve`` configures it (``--no-feed``: without it, not as deployed); a child
process holds the bots and the match driver (the workers' role, ``MatchControl.RunMatch``), as
in production. The child
connects 20 bots, each playing up to ``concurrency / 10`` matches at once; every
bot answers each request after ``--delay-ms`` (an asyncio sleep) with a random
legal index. ``concurrency`` lanes play 2-player Floriferous matches back to
back for ``--seconds``, then let the running ones finish.

A **spurious timeout** is a ``timeout`` verdict against these bots: they always
answer within ``delay`` ≪ ``cap + margin`` (default 100 ms against 1 s + 100 ms,
the ladder's usual time control), so any timeout is the referee's (or the
machine's) lag charged to a bot. Goal: 0 per repeat.

Each repeat runs, interleaved, the **baseline** (one match at a time, same
bots) and then the measured run at ``--concurrency``. Printed beside: decisions
played, the p99 of the referee-measured decision time minus the bot's delay
(the lag a bot sees), and the referee's CPU per decision. Exits 1 when a goal
is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import Goal, Result, not_run, report  # noqa: E402 - after the sys.path setup above

GAME_STRING = "floriferous(players=2)"
BOTS = 20
TOKENS = {f"conc-{i}": i + 1 for i in range(BOTS)}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def child(address: str, concurrency: int, delay_s: float, seconds: float, cap_ms: int,
                margin_ms: int) -> dict[str, Any]:
    """Bots and driver: lanes of matches for ``seconds``; returns counts and the lag percentiles."""
    import grpc.aio

    from bots.sdk import Bot
    from proto.parterre.v1 import control_pb2 as control_pb
    from proto.parterre.v1 import control_pb2_grpc as control_grpc
    from proto.parterre.v1 import referee_pb2 as pb
    from referee.server import SERVICE_TOKEN_HEADER
    from referee.testing import SERVICE_TOKEN

    per_bot = max(1, -(-concurrency * 2 // BOTS))

    class Paced(Bot):
        name = "paced"

        def __init__(self, seed: int) -> None:
            super().__init__(max_concurrent_matches=per_bot)
            self.rng = random.Random(seed)

        async def choose(self, request: Any) -> int:
            await asyncio.sleep(delay_s)
            return self.rng.randrange(len(request.raw.legal_actions))

    bots = [asyncio.create_task(Paced(i).arun(address, tok)) for i, tok in enumerate(TOKENS)]
    stats: dict[str, Any] = {"matches": 0, "decisions": 0, "timeouts": 0, "other_faults": 0, "lags": []}
    next_id = 1
    async with grpc.aio.insecure_channel(address) as ch:
        stub = control_grpc.MatchControlStub(ch)
        md = [(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]
        deadline = time.monotonic() + seconds

        async def lane(k: int) -> None:
            nonlocal next_id
            pair = (k % (BOTS // 2)) * 2 + 1
            while time.monotonic() < deadline:
                match_id, next_id = next_id, next_id + 1
                req = control_pb.RunMatchRequest(
                    match_id=match_id, attempt=1, game_string=GAME_STRING, seed=f"c{match_id}",
                    seat_bot_ids=[pair, pair + 1] if match_id % 2 else [pair + 1, pair],
                    time_control=pb.TimeControl(cap_ms=cap_ms, margin_ms=margin_ms), no_show_timeout_ms=30_000,
                )
                async for event in stub.RunMatch(req, metadata=md):
                    if not event.HasField("result"):
                        continue
                    res = event.result
                    assert res.status == "finished", res.reason
                    stats["matches"] += 1
                    for seat in res.seats:
                        stats["decisions"] += seat.decisions
                        stats["timeouts"] += seat.verdict == "timeout"
                        stats["other_faults"] += seat.verdict not in ("normal", "timeout")
                    for step in json.loads(res.replay_json)["steps"]:
                        if step["time_ms"] is not None:
                            stats["lags"].append(step["time_ms"] - delay_s * 1000)

        await asyncio.gather(*(lane(k) for k in range(concurrency)))
    for t in bots:
        t.cancel()
    lags = stats.pop("lags")
    stats.update(lag_p50=_pct(lags, 0.5), lag_p99=_pct(lags, 0.99), lag_max=max(lags, default=float("nan")))
    return stats


async def measure(concurrency: int, ns: argparse.Namespace) -> dict[str, Any]:
    """The referee here, as deployed unless ``--no-feed`` (its live feed publishing to ``--redis-url``,
    as ``referee.server.serve`` configures it), the child's bots and lanes against it; the child's stats
    plus referee CPU/decision."""
    import contextlib

    from referee import live
    from referee.testing import Harness

    live.configure(None if ns.no_feed else ns.redis_url, "bench-concurrency")
    try:
        return await _measure(concurrency, ns, Harness)
    finally:
        live.configure(None)
        with contextlib.suppress(Exception):
            await live.shutdown()


async def _measure(concurrency: int, ns: argparse.Namespace, harness: Any) -> dict[str, Any]:
    async with harness(TOKENS, progress_every=1_000_000) as h:
        cpu0 = time.process_time()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--child", h.address, "--concurrency", str(concurrency),
            "--delay-ms", str(ns.delay_ms), "--seconds", str(ns.seconds), "--cap-ms", str(ns.cap_ms),
            "--margin-ms", str(ns.margin_ms), stdout=subprocess.PIPE,
        )
        out, _ = await proc.communicate()
        cpu = time.process_time() - cpu0
    if proc.returncode != 0:
        raise RuntimeError(f"the bots' process failed (exit {proc.returncode})")
    stats: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    stats["cpu_us"] = cpu / max(1, stats["decisions"]) * 1e6
    return stats


def main(argv: list[str] | None = None) -> int:
    """Measure; print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--concurrency", type=int, default=200)
    p.add_argument("--delay-ms", type=float, default=100.0, help="each bot's time per decision")
    p.add_argument("--seconds", type=float, default=10.0, help="how long new matches are started")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap-ms", type=int, default=1000)
    p.add_argument("--margin-ms", type=int, default=100)
    p.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
                   help="the Redis the referee's live feed publishes to, as deployed (a database of its own)")
    p.add_argument("--no-feed", action="store_true", help="the referee without its live feed (not as deployed)")
    p.add_argument("--child", metavar="ADDRESS", help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.child:
        print(json.dumps(asyncio.run(child(ns.child, ns.concurrency, ns.delay_ms / 1000, ns.seconds, ns.cap_ms,
                                           ns.margin_ms))))
        return 0
    if not ns.no_feed:
        from bench.bench_live_feed import _redis_ok

        problem = _redis_ok(ns.redis_url)
        if problem:
            return not_run(f"no Redis at {ns.redis_url} ({problem}); start one, pass --redis-url or --no-feed")
    timeouts, base_timeouts, runs = [], [], []
    for _ in range(ns.repeats):
        base = asyncio.run(measure(1, ns))
        got = asyncio.run(measure(ns.concurrency, ns))
        base_timeouts.append(float(base["timeouts"]))
        timeouts.append(float(got["timeouts"]))
        runs.append(got)
        print(f"  1 match: {base['decisions']} decisions, {base['timeouts']} timeouts, lag p99 "
              f"{base['lag_p99']:.1f} ms | {ns.concurrency} matches: {got['matches']} matches, {got['decisions']} "
              f"decisions, {got['timeouts']} timeouts, {got['other_faults']} other faults, lag p50/p99/max "
              f"{got['lag_p50']:.1f}/{got['lag_p99']:.1f}/{got['lag_max']:.1f} ms, referee CPU "
              f"{got['cpu_us']:.0f} us/decision", flush=True)
    decisions = sum(r["decisions"] for r in runs)
    lags = ", ".join(f"{r['lag_p99']:.1f}" for r in runs)
    note = (f"{decisions} decisions in {sum(r['matches'] for r in runs)} matches; time control "
            f"{ns.cap_ms} ms + {ns.margin_ms} ms margin, bots {ns.delay_ms:.0f} ms; lag p99 (decision time - "
            f"delay) [{lags}] ms")
    return report([
        Result(Goal(f"referee: spurious timeouts, {ns.concurrency} matches", "timeouts", 0.0,
                    higher_is_better=False), timeouts, base_timeouts, "timeouts with 1 match at a time", note=note),
    ], f"referee{' without its live feed' if ns.no_feed else ' as deployed'}: {ns.concurrency} concurrent "
       f"matches with {ns.delay_ms:.0f} ms bots")


if __name__ == "__main__":
    sys.exit(main())
