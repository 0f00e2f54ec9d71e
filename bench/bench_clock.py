"""Clock fairness as deployed: what a bot is charged beyond its own thinking, against the floor.

Usage::

    .venv/bin/python bench/bench_clock.py [--concurrency 1,50,200] [--think-ms 50] [--think sleep]
        [--seconds 5] [--repeats 3] [--redis-url redis://127.0.0.1:6379/14]

Two servers, each alone in this process, interleaved in every repeat, at each concurrency:

* **referee**: the referee as ``parterre referee`` runs it (``referee.testing.Harness`` with the
  live feed configured to a real Redis, as ``referee.server.serve`` does; nobody watching), playing
  ``concurrency`` 2-player Floriferous matches at a time through ``MatchControl.RunMatch``;
* **floor**: the referee's shape without the referee (``bench/bench_referee.py``'s floor): a
  ``Referee.Connect`` server whose rooms alternate a DecisionRequest between the two streams of a
  pair and time each answer as the referee does (``time.monotonic`` from the write to the read).

The bots are the same in both (a child process; two streams per lane): on each DecisionRequest a
bot notes the time, thinks ``--think-ms`` (``sleep``: ``asyncio.sleep``; ``spin``: a CPU loop),
notes the time again and writes its answer: its **own measured thinking**. The **lag** of a
decision is what the server charged (the referee: the replay's ``time_ms``; the floor: its own
measure) minus the bot's own measure. Goal (docs/benchmarks.md): the referee's p99 lag at most
the floor's p99 lag + :data:`SLACK_MS`, at every concurrency, with no timeout. Exits 1 on a miss,
3 when no Redis answers.
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
from bench.harness import Goal, Result, not_run, report  # noqa: E402 - after the sys.path setup above

GAME_STRING = "floriferous(players=2)"
SLACK_MS = 2.0
"""The referee may charge a bot at most this much more than the floor does (p99 of the lag)."""
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
    """Play for ``seconds``; print one JSON line: the bots' own thinking per (match, seq), and for the
    referee the charged time per (match, seq) from the replays, and the verdicts."""
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
    stop_at = time.monotonic() + seconds
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
                    task = asyncio.create_task(answer(call, lock, msg.decision_request, time.monotonic()))
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
    print(json.dumps({"thought": thought, "charged": charged, "verdicts": verdicts}), flush=True)


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


async def measure(mode: str, concurrency: int, seconds: float, think: str, think_ms: float,
                  url: str) -> dict[str, Any]:
    """One window: the p99 lag (ms), decisions, timeouts."""
    args = ["--child", mode, "--concurrency", str(concurrency), "--seconds", str(seconds), "--think", think,
            "--think-ms", str(think_ms)]
    if mode == "floor":
        from referee.handshake import decode_bot_message
        from referee.server import serialize_referee_message

        rooms = _FloorRooms()
        server, port = await _bidi_server("bench.Floor", "Connect", rooms.handler, decode_bot_message,
                                          serialize_referee_message)
        try:
            got = await _run_child([*args, "--address", f"127.0.0.1:{port}"], seconds)
        finally:
            for t in rooms.rooms:
                t.cancel()
            await server.stop(0)
        lags, timeouts = _lags(rooms.charged, got["thought"]), 0
    else:
        from referee import live
        from referee.testing import Harness

        live.configure(url, NAMESPACE)  # as referee.server.serve does
        try:
            async with Harness({"bench-a": 1, "bench-b": 2}, progress_every=1_000_000) as h:
                got = await _run_child([*args, "--address", h.address], seconds)
        finally:
            live.configure(None)
            with contextlib.suppress(Exception):
                await live.shutdown()
        lags, timeouts = _lags(got["charged"], got["thought"]), got["verdicts"].get("timeout", 0)
    return {"p99": _pct(lags, 0.99), "p50": _pct(lags, 0.5), "decisions": len(lags), "timeouts": timeouts}


async def run_all(ns: argparse.Namespace) -> list[Result]:
    levels = [int(c) for c in ns.concurrency.split(",") if c.strip()]
    got: dict[tuple[int, str], list[dict[str, Any]]] = {(c, m): [] for c in levels for m in ("floor", "referee")}
    for _ in range(ns.repeats):
        for c in levels:
            for m in ("floor", "referee"):
                r = await measure(m, c, ns.seconds, ns.think, ns.think_ms, ns.redis_url)
                print(f"  {c} matches, {m}: lag p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms over "
                      f"{r['decisions']} decisions, {r['timeouts']} timeouts", flush=True)
                got[c, m].append(r)
    results = []
    for c in levels:
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
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--concurrency", default="1,50,200", help="comma-separated numbers of concurrent matches")
    p.add_argument("--think", choices=("sleep", "spin"), default="sleep", help="how the bots think")
    p.add_argument("--think-ms", type=float, default=50.0, help="the bots' thinking per decision (ms)")
    p.add_argument("--seconds", type=float, default=5.0, help="length of one window (s)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians reported)")
    p.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
                   help="the Redis the live feed publishes to (a database of its own)")
    p.add_argument("--child", choices=("floor", "referee"), help=argparse.SUPPRESS)
    p.add_argument("--address", help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.child:
        asyncio.run(child(ns.child, ns.address, int(ns.concurrency), ns.seconds, ns.think, ns.think_ms))
        return 0
    from bench.bench_live_feed import _redis_ok

    problem = _redis_ok(ns.redis_url)
    if problem:
        return not_run(f"no Redis at {ns.redis_url} ({problem}); start one or pass --redis-url")
    print(f"cores: {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {ns.repeats} interleaved repeats of "
          f"{ns.seconds:g} s; bots think {ns.think_ms:g} ms ({ns.think})")
    return report(asyncio.run(run_all(ns)), "clock fairness as deployed")


if __name__ == "__main__":
    sys.exit(main())
