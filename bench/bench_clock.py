"""Clock fairness and capacity as deployed: what a bot is charged beyond its own thinking, against the floor.

Usage::

    .venv/bin/python bench/bench_clock.py [--concurrency 1,50,200] [--think-ms 50] [--think sleep]
        [--seconds 5] [--repeats 3] [--judge-up-to N] [--redis-url redis://127.0.0.1:6379/14]

    # capacity (docs/benchmarks.md): where one referee breaks, 100 ms bots
    .venv/bin/python bench/bench_clock.py --concurrency 100,200,400,800 --think-ms 100 --judge-up-to 200

Two servers, each alone in a fresh process of its own (``--serve``), interleaved in every repeat,
at each concurrency:

* **referee**: the referee as ``parterre referee`` runs it (``referee.testing.Harness`` with the
  live feed configured to a real Redis, as ``referee.server.serve`` does; nobody watching), playing
  ``concurrency`` 2-player Floriferous matches at a time through ``MatchControl.RunMatch``;
* **floor**: the referee's shape without the referee (``bench/bench_referee.py``'s floor): a
  ``Referee.Connect`` server whose rooms alternate a DecisionRequest between the two streams of a
  pair and time each answer as the referee does (``time.monotonic`` from the write to the read).

The bots are the same in both (a child process of the server's; two streams per lane): on each
DecisionRequest a bot notes the time, thinks ``--think-ms`` (``sleep``: ``asyncio.sleep``; ``spin``:
a CPU loop), notes the time again and writes its answer: its **own measured thinking**. The **lag**
of a decision is what the server charged (the referee: the replay's ``time_ms``; the floor: its own
measure) minus the bot's own measure.

Per concurrency and server the report gives: the lag's p50 and p99; **decisions per second** (the
requests the bots received from 1 s after the start, or a quarter of the window if shorter, to the
end of the window, over that time: the steady state, without the start-up and without the referee's
last matches finishing); timeouts (the referee's verdicts); the server's **event-loop lag** (a task
that sleeps 10 ms, p99 and most of its overshoot); the server's **CPU** as a share of one core
(the server is one process, so 100 % is its limit) and the bots' process's; how busy the machine's
cores were (``/proc/stat``, every process on the machine); **RSS per match** (the server's most
resident memory during the window minus before the bots came, over ``concurrency``); for the
referee the live feed's round trip to Redis (p99 of a publisher turn, one pipelined write of every
due entry) and the Redis server's CPU (``INFO cpu``; the run's alone only when the Redis is).

Goals (docs/benchmarks.md), at every concurrency up to ``--judge-up-to`` (default: all): the
referee's p99 lag at most the floor's p99 lag + :data:`SLACK_MS`, with no timeout, and at least
:data:`RATE_SHARE` × the floor's decisions per second. A concurrency above it is reported with its
verdict ("holds", or where and why it breaks: the referee's CPU, its event loop, Redis, the bots'
process or the machine), not judged. Exits 1 on a miss, 3 when no Redis answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_referee import _bidi_server, _floor_request, _identity  # noqa: E402 - after sys.path
from bench.bench_referee import _FloorRooms as _Floor  # noqa: E402 - after sys.path
from bench.harness import (  # noqa: E402 - after the sys.path setup above
    Goal,
    Result,
    busy_share,
    load_average,
    machine_busy,
    not_run,
    report,
)

GAME_STRING = "floriferous(players=2)"
SLACK_MS = 2.0
"""The referee may charge a bot at most this much more than the floor does (p99 of the lag)."""
RATE_SHARE = 0.8
"""The referee must play at least this share of the floor's decisions per second."""
LOOP_TICK_S = 0.010
"""The event-loop probe's sleep."""
NAMESPACE = "bench-clock"
FLOOR_METHOD = "/bench.Floor/Connect"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


async def _think(kind: str, think_s: float) -> None:
    if kind == "sleep":
        await asyncio.sleep(think_s)
        return
    end = time.perf_counter() + think_s
    while time.perf_counter() < end:  # a CPU-bound bot
        pass


# -- the child: bots (and, for the referee, the match driver) --------------------------------------

async def child(mode: str, address: str, concurrency: int, seconds: float, think: str, think_ms: float) -> None:
    """Play for ``seconds``; print one JSON line: the bots' own thinking per (match, seq), for the
    referee the charged time per (match, seq) from the replays, and the verdicts; the requests received
    in the steady part of the window (``steady`` over ``steady_s`` seconds)."""
    import grpc.aio

    from proto.parterre.v1 import control_pb2 as control_pb
    from proto.parterre.v1 import control_pb2_grpc as control_grpc
    from proto.parterre.v1 import referee_pb2 as pb
    from referee.server import SERVICE_TOKEN_HEADER
    from referee.testing import SERVICE_TOKEN

    think_s = think_ms / 1000.0
    thought: dict[str, float] = {}  # "match:seq" -> the bot's own measure (ms)
    charged: dict[str, float] = {}
    verdicts: dict[str, int] = {}
    start = time.monotonic()
    stop_at = start + seconds
    ramp = min(1.0, seconds / 4)
    steady = [0]
    async with grpc.aio.insecure_channel(address) as ch:
        if mode == "floor":
            connect = ch.stream_stream(FLOOR_METHOD, request_serializer=_identity,
                                       response_deserializer=pb.RefereeMessage.FromString)
        else:
            connect = ch.stream_stream("/parterre.v1.Referee/Connect", request_serializer=_identity,
                                       response_deserializer=pb.RefereeMessage.FromString)

        async def answer(call: Any, lock: asyncio.Lock, r: Any, t0: float) -> None:
            await _think(think, think_s)
            data = pb.BotMessage(decision=pb.Decision(match_id=r.match_id, seq=r.seq, action_index=0,
                                                      attempt=r.attempt)).SerializeToString()
            async with lock:  # one write at a time on a call; the wait for it is the bot's own time
                thought[f"{r.match_id}:{r.seq}"] = (time.monotonic() - t0) * 1000.0
                with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):  # the window closed
                    await call.write(data)

        async def bot(first: Any) -> None:
            call = connect()
            lock = asyncio.Lock()
            await call.write(first.SerializeToString())
            tasks = set()
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    return
                kind = msg.WhichOneof("kind")
                if kind == "decision_request":
                    now = time.monotonic()
                    steady[0] += start + ramp <= now <= stop_at
                    task = asyncio.create_task(answer(call, lock, msg.decision_request, now))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif kind == "ping":
                    async with lock:
                        await call.write(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)).SerializeToString())

        if mode == "floor":
            bots = [asyncio.create_task(bot(pb.BotMessage(pong=pb.Pong(nonce=p * 2 + side))))
                    for p in range(concurrency) for side in (0, 1)]
            await asyncio.sleep(seconds)
        else:
            # a stream takes at most 64 matches at once (the referee's max_declared_concurrency): more streams
            per_stream = min(concurrency, 64)
            streams = -(-concurrency // per_stream)
            json_only = pb.OBSERVATION_ENCODING_JSON
            hello = [pb.BotMessage(hello=pb.Hello(token=tok, bot_name="clock", max_concurrent_matches=per_stream,
                                                  contract_revision=2, observation_encoding=json_only))
                     for tok in ("bench-a", "bench-b") for _ in range(streams)]
            bots = [asyncio.create_task(bot(h)) for h in hello]
            stub = control_grpc.MatchControlStub(ch)
            md = [(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]
            next_id = [1]

            async def lane() -> None:
                while time.monotonic() < stop_at:
                    match_id = next_id[0]
                    next_id[0] += 1
                    req = control_pb.RunMatchRequest(
                        match_id=match_id, attempt=1, game_string=GAME_STRING, seed=str(match_id),
                        seat_bot_ids=[1, 2] if match_id % 2 else [2, 1],
                        time_control=pb.TimeControl(cap_ms=int(think_ms) + 1000, margin_ms=100),
                        no_show_timeout_ms=30_000)
                    async for event in stub.RunMatch(req, metadata=md):
                        if event.HasField("result"):
                            res = event.result
                            for s in res.seats:
                                verdicts[s.verdict] = verdicts.get(s.verdict, 0) + 1
                            seq = 0
                            for step in json.loads(res.replay_json)["steps"]:
                                if step["player"] >= 0 and not step["fallback"]:
                                    seq += 1
                                    charged[f"{match_id}:{seq}"] = float(step["time_ms"])

            await asyncio.gather(*(lane() for _ in range(concurrency)))
        for t in bots:
            t.cancel()
    print(json.dumps({"thought": thought, "charged": charged, "verdicts": verdicts, "steady": steady[0],
                      "steady_s": seconds - ramp}), flush=True)


# -- the servers ---------------------------------------------------------------------------------

class _FloorRooms(_Floor):
    """The floor's rooms (``bench/bench_referee.py``'s), each answer timed from the write to its read."""

    def __init__(self) -> None:
        super().__init__()
        self.charged: dict[str, float] = {}

    async def room(self, pair: int) -> None:
        from proto.parterre.v1 import referee_pb2 as pb

        loop = asyncio.get_running_loop()
        template = pb.RefereeMessage.FromString(_floor_request())
        slot, side, seq = self.streams[pair], 0, 0
        while True:
            seq += 1
            template.decision_request.match_id, template.decision_request.seq = pair + 1, seq
            fut = self.futures[pair] = loop.create_future()
            data = template.SerializeToString()
            await slot[side].write(data)
            sent = time.monotonic()
            answered = await fut
            self.charged[f"{pair + 1}:{seq}"] = (answered - sent) * 1000.0
            side = 1 - side


async def _run_child(args: list[str], seconds: float) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, *args, stdout=subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), seconds + 120)
    if proc.returncode != 0:
        raise RuntimeError(f"the bots' child failed ({proc.returncode})")
    data: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return data


def _join(values: Any) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def _lags(charged: dict[str, float], thought: dict[str, float]) -> list[float]:
    return [charged[k] - thought[k] for k in charged if k in thought]


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _redis_cpu(url: str) -> float:
    """The Redis server's CPU seconds so far (``INFO cpu``), NaN when it cannot be read."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=2)
        info = client.info("cpu")
        client.close()
    except (redis.RedisError, OSError):
        return float("nan")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def serve(mode: str, concurrency: int, seconds: float, think: str, think_ms: float, url: str) -> dict[str, Any]:
    """One window, in this (fresh) process: the server, its bots' child, and the probes of this process.

    Returns:
        The lag's p50 and p99 (ms), decisions, steady decisions per second, timeouts, the event loop's
        lag p99 and most (ms), this process's and the bots' CPU as shares of one core, the machine's
        busy share, RSS before the bots and at most (bytes), and for the referee the live feed's turn
        p99 (ms) and the Redis server's CPU share.
    """
    import resource

    args = ["--child", mode, "--concurrency", str(concurrency), "--seconds", str(seconds), "--think", think,
            "--think-ms", str(think_ms)]
    loop_lags: list[float] = []
    peak = [_rss_bytes()]
    turns: list[float] = []

    async def probe() -> None:  # the event loop's lag, and the most resident memory
        while True:
            t = time.perf_counter()
            await asyncio.sleep(LOOP_TICK_S)
            loop_lags.append((time.perf_counter() - t - LOOP_TICK_S) * 1000.0)
            peak[0] = max(peak[0], _rss_bytes())

    async def window(address: str) -> dict[str, Any]:
        base = _rss_bytes()
        peak[0] = base
        loop_lags.clear()
        probing = asyncio.create_task(probe())
        t0, cpu0, busy0 = time.monotonic(), time.process_time(), machine_busy()
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        redis0 = _redis_cpu(url) if mode == "referee" else float("nan")
        try:
            got = await _run_child([*args, "--address", address], seconds)
        finally:
            probing.cancel()
        wall = time.monotonic() - t0
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        got.update(cpu=(time.process_time() - cpu0) / wall, busy=busy_share(busy0, machine_busy()),
                   bots_cpu=(kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime) / wall,
                   rss_base=base, rss_peak=peak[0],
                   redis_cpu=(_redis_cpu(url) - redis0) / wall if mode == "referee" else float("nan"))
        return got

    if mode == "floor":
        from referee.handshake import decode_bot_message
        from referee.server import serialize_referee_message

        rooms = _FloorRooms()
        server, port = await _bidi_server("bench.Floor", "Connect", rooms.handler, decode_bot_message,
                                          serialize_referee_message)
        try:
            got = await window(f"127.0.0.1:{port}")
        finally:
            for t in rooms.rooms:
                t.cancel()
            await server.stop(0)
        lags, timeouts = _lags(rooms.charged, got["thought"]), 0
    else:
        from referee import live
        from referee.testing import Harness

        turn = live.Publisher.turn

        async def timed_turn(self: Any) -> None:  # the live feed's round trip to Redis, timed
            t = time.perf_counter()
            try:
                await turn(self)
            finally:
                turns.append((time.perf_counter() - t) * 1000.0)

        live.Publisher.turn = timed_turn  # this process serves this one window: the patch dies with it
        live.configure(url, NAMESPACE)  # as referee.server.serve does
        try:
            async with Harness({"bench-a": 1, "bench-b": 2}, progress_every=1_000_000) as h:
                got = await window(h.address)
        finally:
            live.configure(None)
            with contextlib.suppress(Exception):
                await live.shutdown()
        lags, timeouts = _lags(got["charged"], got["thought"]), got["verdicts"].get("timeout", 0)
    return {"p99": _pct(lags, 0.99), "p50": _pct(lags, 0.5), "decisions": len(lags), "timeouts": timeouts,
            "rate": got["steady"] / got["steady_s"], "loop_p99": _pct(loop_lags, 0.99),
            "loop_max": max(loop_lags, default=float("nan")), "cpu": got["cpu"], "bots_cpu": got["bots_cpu"],
            "busy": got["busy"], "rss_base": got["rss_base"], "rss_peak": got["rss_peak"],
            "turn_p99": _pct(turns, 0.99), "redis_cpu": got["redis_cpu"]}


async def measure(mode: str, concurrency: int, ns: argparse.Namespace) -> dict[str, Any]:
    """One window in a fresh process (``--serve``), so that its memory and CPU are its own."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", mode, "--concurrency", str(concurrency), "--seconds", str(ns.seconds),
        "--think", ns.think, "--think-ms", str(ns.think_ms), "--redis-url", ns.redis_url, stdout=subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), ns.seconds + 300)
    if proc.returncode != 0:
        raise RuntimeError(f"the {mode} server's process failed ({proc.returncode})")
    data: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return data


def verdict(floor: list[dict[str, Any]], ref: list[dict[str, Any]], ideal: float) -> tuple[bool, str]:
    """Whether one concurrency holds (fairness, no timeout, throughput), and if not, the likeliest cause.

    ``ideal`` is the decisions per second of bots that think exactly their time with no lag at all; a
    floor far below it means this machine could not drive the level, whatever the referee does.
    """
    med = statistics.median
    floor_share = med(f["rate"] for f in floor) / ideal
    excess = med(r["p99"] - f["p99"] for f, r in zip(floor, ref, strict=True))
    rate = med(r["rate"] / f["rate"] for f, r in zip(floor, ref, strict=True))
    timeouts = sum(r["timeouts"] for r in ref)
    misses = [what for what, bad in (
        (f"lag p99 +{excess:.1f} ms over the floor's", excess > SLACK_MS),
        (f"{timeouts} timeouts", timeouts > 0),
        (f"{rate:.2f} × the floor's decisions/s", rate < RATE_SHARE)) if bad]
    if floor_share < RATE_SHARE:
        return not misses, (f"not measurable here: the floor itself played {floor_share:.0%} of the {ideal:,.0f} "
                            f"decisions/s its bots allow (the machine or the bots' process held both back)"
                            + (f"; {'; '.join(misses)}" if misses else ""))
    if not misses:
        return True, "holds"
    cpu, bots, busy = med(r["cpu"] for r in ref), med(r["bots_cpu"] for r in ref), med(r["busy"] for r in ref)
    loop, floor_loop = med(r["loop_p99"] for r in ref), med(f["loop_p99"] for f in floor)
    turn, redis_cpu = med(r["turn_p99"] for r in ref), med(r["redis_cpu"] for r in ref)
    causes = []
    if cpu >= 0.9:
        causes.append(f"CPU: the referee's one process uses {cpu:.0%} of a core")
    if loop - floor_loop > SLACK_MS:
        causes.append(f"its event loop: lag p99 {loop:.1f} ms against the floor's {floor_loop:.1f}")
    if turn > 1000 * live_flush_s() or redis_cpu >= 0.9:
        causes.append(f"Redis: a live-feed turn takes {turn:.0f} ms (p99), the Redis server {redis_cpu:.0%} of a core")
    if bots >= 0.9:
        causes.append(f"the bots' process at {bots:.0%} of a core (the bench's own limit)")
    if busy >= 0.95:
        causes.append(f"the machine's cores {busy:.0%} busy (every process on it)")
    return False, f"breaks: {'; '.join(misses)} ({'; '.join(causes) or 'no saturated resource seen'})"


def live_flush_s() -> float:
    """The live feed's period between two publisher turns (``referee.live.FLUSH_S``)."""
    from referee import live

    return float(live.FLUSH_S)


def _line(c: int, m: str, r: dict[str, Any]) -> str:
    extra = (f", live-feed turn p99 {r['turn_p99']:.1f} ms, Redis {r['redis_cpu']:.0%} of a core"
             if m == "referee" else "")
    return (f"  {c} matches, {m}: lag p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms over {r['decisions']} decisions, "
            f"{r['rate']:,.0f} decisions/s, {r['timeouts']} timeouts; event loop lag p99 {r['loop_p99']:.1f} ms "
            f"(most {r['loop_max']:.0f}); CPU {r['cpu']:.0%} of a core, bots' process {r['bots_cpu']:.0%}, machine "
            f"{r['busy']:.0%} busy; RSS {(r['rss_peak'] - r['rss_base']) / 2**10 / c:,.0f} KiB a match "
            f"({r['rss_base'] / 2**20:.0f} MiB before){extra}")


async def run_all(ns: argparse.Namespace) -> list[Result]:
    levels = [int(c) for c in ns.concurrency.split(",") if c.strip()]
    judged = [c for c in levels if ns.judge_up_to is None or c <= ns.judge_up_to]
    got: dict[tuple[int, str], list[dict[str, Any]]] = {(c, m): [] for c in levels for m in ("floor", "referee")}
    for _ in range(ns.repeats):
        for c in levels:
            for m in ("floor", "referee"):
                r = await measure(m, c, ns)
                print(_line(c, m, r), flush=True)
                got[c, m].append(r)
    med = statistics.median
    print(f"\nper concurrency (medians of {ns.repeats} repeats; {load_average()}):")
    print(f"  {'matches':>7s} {'dec/s ref':>9s} {'floor':>7s} {'ratio':>5s} {'p99 ref':>8s} {'floor':>7s} "
          f"{'t/o':>4s} {'loop p99':>8s} {'ref CPU':>7s} {'bots CPU':>8s} {'machine':>7s} {'KiB/match':>9s}  verdict")
    for c in levels:
        floor, ref = got[c, "floor"], got[c, "referee"]
        _, why = verdict(floor, ref, c * 1000.0 / ns.think_ms)
        kib = med((r["rss_peak"] - r["rss_base"]) / 2**10 / c for r in ref)
        print(f"  {c:7d} {med(r['rate'] for r in ref):9,.0f} {med(f['rate'] for f in floor):7,.0f} "
              f"{med(r['rate'] / f['rate'] for f, r in zip(floor, ref, strict=True)):5.2f} "
              f"{med(r['p99'] for r in ref):8.1f} {med(f['p99'] for f in floor):7.1f} "
              f"{sum(r['timeouts'] for r in ref):4d} {med(r['loop_p99'] for r in ref):8.1f} "
              f"{med(r['cpu'] for r in ref):7.0%} {med(r['bots_cpu'] for r in ref):8.0%} "
              f"{med(r['busy'] for r in ref):7.0%} {kib:9,.0f}"
              f"  {why}{'' if c in judged else ' (not judged)'}")
    results = []
    for c in judged:
        floor, ref = got[c, "floor"], got[c, "referee"]
        excess = [r["p99"] - f["p99"] for f, r in zip(floor, ref, strict=True)]
        timeouts = sum(r["timeouts"] for r in ref)
        results.append(Result(
            Goal(f"{c} matches of {ns.think_ms:g} ms {ns.think} bots: referee lag p99 − floor lag p99", "ms",
                 SLACK_MS, higher_is_better=False),
            [max(e, 1e-3) + (1e6 if timeouts else 0.0) for e in excess], [f["p99"] for f in floor], "ms floor p99",
            note=(f"{c} matches: referee lag p99 [{_join(r['p99'] for r in ref)}] ms (median "
                  f"{statistics.median(r['p99'] for r in ref):.1f}), floor p99 [{_join(f['p99'] for f in floor)}] ms; "
                  f"referee decisions/window [{_join(r['decisions'] for r in ref)}], timeouts {timeouts} "
                  f"(a timeout fails the goal)")))
        results.append(Result(
            Goal(f"{c} matches of {ns.think_ms:g} ms {ns.think} bots: referee decisions/s ÷ floor's", "×", RATE_SHARE),
            [r["rate"] / f["rate"] for f, r in zip(floor, ref, strict=True)], [f["rate"] for f in floor],
            "floor decisions/s",
            note=f"referee decisions/s [{_join(r['rate'] for r in ref)}]"))
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--concurrency", default="1,50,200", help="comma-separated numbers of concurrent matches")
    p.add_argument("--think", choices=("sleep", "spin"), default="sleep", help="how the bots think")
    p.add_argument("--think-ms", type=float, default=50.0, help="the bots' thinking per decision (ms)")
    p.add_argument("--seconds", type=float, default=5.0, help="length of one window (s)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians reported)")
    p.add_argument("--judge-up-to", type=int, help="judge the goals up to this concurrency only (default: all); "
                                                   "higher ones are reported with their verdict")
    p.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
                   help="the Redis the live feed publishes to (a database of its own)")
    p.add_argument("--child", choices=("floor", "referee"), help=argparse.SUPPRESS)
    p.add_argument("--serve", choices=("floor", "referee"), help=argparse.SUPPRESS)
    p.add_argument("--address", help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.child:
        asyncio.run(child(ns.child, ns.address, int(ns.concurrency), ns.seconds, ns.think, ns.think_ms))
        return 0
    if ns.serve:
        print(json.dumps(asyncio.run(serve(ns.serve, int(ns.concurrency), ns.seconds, ns.think, ns.think_ms,
                                           ns.redis_url))), flush=True)
        return 0
    from bench.bench_live_feed import _redis_ok

    problem = _redis_ok(ns.redis_url)
    if problem:
        return not_run(f"no Redis at {ns.redis_url} ({problem}); start one or pass --redis-url")
    print(f"cores: {os.cpu_count()}, {load_average()}; {ns.repeats} interleaved repeats of "
          f"{ns.seconds:g} s; bots think {ns.think_ms:g} ms ({ns.think})")
    return report(asyncio.run(run_all(ns)), "clock fairness and capacity as deployed")


if __name__ == "__main__":
    sys.exit(main())
