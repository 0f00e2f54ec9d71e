"""Referee throughput and CPU per decision against raw gRPC, measured in the same run: a guard.

Usage::

    .venv/bin/python bench/bench_referee.py [--games toy,floriferous,lafleur,flowar]
        [--concurrency 4] [--seconds 3] [--repeats 3]

Each measurement has the server in this process and the clients in a child
process (as in production, bots are other processes):

* **raw**: a grpc.aio bidirectional stream echo over ``concurrency`` streams,
  each doing request/answer round trips of ~100-byte messages back to back.
* **referee**: ``concurrency`` 2-player matches at a time through
  ``MatchControl.RunMatch``, one stream per concurrent match, played by bots
  that answer at once with a uniformly random legal index (seeded), so matches
  last as long as real ones (always index 0 ended Flowar after ~33 decisions).
  Decisions are counted as the bots answer them, not when a match ends. The
  bots ask for the JSON text only (``Hello.observation_encoding``, the Python
  SDK's default); ``--encoding both`` measures a bot that does not say. The
  child holds the bots and the match driver (the workers' role), so this
  process holds the referee alone.

* **floor** (informative): the referee's shape without the referee:
  ``concurrency`` "rooms", each alternating a ~400-byte ``RefereeMessage``
  between two streams and awaiting the answer through a future resolved by
  the stream's reader, with the referee's own (de)serialisers. What gRPC and
  asyncio cost a decision of this shape; the rest of a referee decision is the
  referee's. Its decisions/s ÷ raw is printed beside the ratios: no referee of
  this shape exceeds it.

Repeats are interleaved (raw, floor, then each game, then raw again ...), since shared
machines are noisy. These ratios are a **guard, not a goal** (docs/benchmarks.md): no user
waits on them, but they must not grow. The limits are the figures of the referee without its
live feed when the guard was set, with about 15 % headroom: decisions/s ÷ raw ≥ 0.36 (toy) and
≥ 0.30 (games); CPU per decision ≤ 2.9 × (toy) and ≤ 3.8 × (games) the server CPU of a raw
round trip of the same repeat. Exits 1 when the guard is crossed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the toy game fixture

import grpc  # noqa: E402 - after the sys.path setup above
import grpc.aio  # noqa: E402 - after the sys.path setup above

from bench.harness import Goal, Result, cpu_seconds, report  # noqa: E402 - after the sys.path setup above

ECHO_METHOD = "/bench.Echo/Chat"
PAYLOAD = b"x" * 100
TOKENS = {"bench-a": 1, "bench-b": 2}
GAMES = {
    "toy": ("toy(players=2,turns=50)", 0.36, 2.9),
    "floriferous": ("floriferous(players=2)", 0.30, 3.8),
    "lafleur": ("lafleur(players=2)", 0.30, 3.8),
    "flowar": ("flowar(players=2)", 0.30, 3.8),
}
"""Name -> (2-player game string, guard on decisions/s ÷ raw round trips/s (at least), guard on referee
CPU per decision ÷ a raw round trip's server CPU (at most))."""
GUARD = "guard: must not grow (docs/benchmarks.md)"
_cpu_of = cpu_seconds


def _identity(b: bytes) -> bytes:
    return b


# -- what the three measurements share ----------------------------------------------------------

async def _report_counts(count: Callable[[], int]) -> None:
    """Child: answer each line on stdin with ``count()`` until stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.readline():
        print(count(), flush=True)


async def _measure_child(args: list[str], seconds: float, *, wait_for_first: bool = False) -> dict[str, float]:
    """Run this file with ``args`` as the client child; count its operations over ``seconds``.

    Returns ``ops``, ``per_s`` and the CPU per operation of this process (``server_us``) and of
    the child (``client_us``), in µs. With ``wait_for_first`` the window opens 0.5 s after the
    child's first operation (matches take a while to start), else after 1 s.
    """
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, *args, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE)
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None

    async def count() -> int:
        stdin.write(b"\n")
        line = await stdout.readline()
        if not line:
            raise RuntimeError(f"the client child {args[0]} ended (its error is above)")
        return int(line)

    try:
        if wait_for_first:
            while await count() == 0:  # start-up
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # warm-up
        else:
            await asyncio.sleep(1.0)  # start-up and warm-up
        n0, t0, cpu0, child0 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
        await asyncio.sleep(seconds)
        n1, t1, cpu1, child1 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
    finally:
        proc.kill()
        await proc.wait()
    n = n1 - n0
    return {"ops": n, "per_s": n / (t1 - t0), "server_us": (cpu1 - cpu0) / n * 1e6,
            "client_us": (child1 - child0) / n * 1e6}


async def _bidi_server(service: str, method: str, handler: Any, deserializer: Callable[[bytes], Any],
                       serializer: Callable[[Any], bytes]) -> tuple[grpc.aio.Server, int]:
    """A started grpc.aio server with one bidirectional method on a free loopback port."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {
        method: grpc.stream_stream_rpc_method_handler(handler, request_deserializer=deserializer,
                                                      response_serializer=serializer)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


# -- raw ping-pong ----------------------------------------------------------------------------

async def _echo(request_iterator, context):
    async for req in request_iterator:
        yield req


async def pingpong_client(address: str, streams: int, payload: bytes = PAYLOAD) -> None:
    """Child: ping-pong of ``payload`` over ``streams`` streams; prints the round-trip count each time it
    gets a line."""
    async with grpc.aio.insecure_channel(address) as ch:
        chat = ch.stream_stream(ECHO_METHOD, request_serializer=_identity, response_deserializer=_identity)
        counts = [0] * streams

        async def one(i: int) -> None:
            call = chat()
            while True:
                await call.write(payload)
                await call.read()
                counts[i] += 1

        tasks = [asyncio.create_task(one(i)) for i in range(streams)]
        await _report_counts(lambda: sum(counts))
        for t in tasks:
            t.cancel()


async def measure_raw(streams: int, seconds: float) -> dict[str, float]:
    """Echo server here, client in a child process; counts round trips over ``seconds``."""
    server, port = await _bidi_server("bench.Echo", "Chat", _echo, _identity, _identity)
    try:
        return await _measure_child(["--child-pingpong", f"127.0.0.1:{port}", "--concurrency", str(streams)],
                                    seconds)
    finally:
        await server.stop(0)


# -- the referee's shape without the referee (informative) --------------------------------------

FLOOR_METHOD = "/bench.Floor/Connect"


def _floor_request() -> bytes:
    from proto.parterre.v1 import referee_pb2 as pb

    msg = pb.RefereeMessage()
    req = msg.decision_request
    req.match_id, req.seq, req.seat, req.game, req.attempt = 1, 1, 0, "toy", 1
    req.observation.json = '{"x":"' + "y" * 300 + '"}'
    req.legal_actions.add(index=0, label="play card 1", json='{"card":1}')
    return msg.SerializeToString()


async def floor_client(address: str, pairs: int) -> None:
    """Child: ``pairs`` pairs of streams answering every request at once; prints the count on each stdin line."""
    from proto.parterre.v1 import referee_pb2 as pb

    async with grpc.aio.insecure_channel(address) as ch:
        connect = ch.stream_stream(FLOOR_METHOD, request_serializer=_identity,
                                   response_deserializer=pb.RefereeMessage.FromString)
        count = [0]

        async def one(pair: int, side: int) -> None:
            call = connect()
            await call.write(pb.BotMessage(pong=pb.Pong(nonce=pair * 2 + side)).SerializeToString())
            while True:
                msg = await call.read()
                r = msg.decision_request
                await call.write(pb.BotMessage(decision=pb.Decision(match_id=r.match_id, seq=r.seq,
                                                                    action_index=0)).SerializeToString())
                count[0] += 1

        tasks = [asyncio.create_task(one(p, side)) for p in range(pairs) for side in (0, 1)]
        await _report_counts(lambda: count[0])
        for t in tasks:
            t.cancel()


class _FloorRooms:
    """The server side of the floor: pairs of streams, one room task per pair."""

    def __init__(self) -> None:
        self.streams: dict[int, dict[int, object]] = {}
        self.futures: dict[int, asyncio.Future[object]] = {}
        self.request = _floor_request()
        self.rooms: list[asyncio.Task[None]] = []

    async def handler(self, request_iterator, context):
        from proto.parterre.v1 import referee_pb2 as pb

        first = await context.read()
        if not isinstance(first, pb.BotMessage):
            return
        pair, side = divmod(first.pong.nonce, 2)
        slot = self.streams.setdefault(pair, {})
        slot[side] = context
        if len(slot) == 2:
            self.rooms.append(asyncio.create_task(self.room(pair)))
        while True:
            msg = await context.read()
            if msg is grpc.aio.EOF:
                return
            fut = self.futures.get(pair)
            if fut is not None and not fut.done():
                fut.set_result(time.monotonic())  # when the answer was read (bench_clock.py times with it)

    async def room(self, pair: int) -> None:
        loop = asyncio.get_running_loop()
        slot = self.streams[pair]
        side = 0
        while True:
            fut = self.futures[pair] = loop.create_future()
            await slot[side].write(self.request)  # type: ignore[attr-defined]  # a ServicerContext
            await fut
            side = 1 - side


async def measure_floor(pairs: int, seconds: float) -> dict[str, float]:
    """The referee's shape without the referee (server here, ``pairs`` pairs of streams in a child)."""
    from referee.handshake import decode_bot_message
    from referee.server import serialize_referee_message

    rooms = _FloorRooms()
    server, port = await _bidi_server("bench.Floor", "Connect", rooms.handler, decode_bot_message,
                                      serialize_referee_message)
    try:
        return await _measure_child(["--child-floor", f"127.0.0.1:{port}", "--concurrency", str(pairs)], seconds)
    finally:
        for t in rooms.rooms:
            t.cancel()
        await server.stop(0)


# -- referee ----------------------------------------------------------------------------------

async def referee_child(address: str, game_string: str, concurrency: int, shared: bool,
                        encoding: str = "json") -> None:
    """Child: two instant bots and the match driver (the workers' role, ``MatchControl.RunMatch``).

    Each bot connects once with ``max_concurrent_matches = concurrency`` (shared) or
    ``concurrency`` times with 1. ``concurrency`` lanes play matches back to back;
    each line on stdin is answered with the number of decisions played so far.
    """
    from bots.sdk import Bot
    from proto.parterre.v1 import control_pb2 as control_pb
    from proto.parterre.v1 import control_pb2_grpc as control_grpc
    from proto.parterre.v1 import referee_pb2 as pb
    from referee.server import SERVICE_TOKEN_HEADER
    from referee.testing import SERVICE_TOKEN

    decisions = 0

    class Instant(Bot):
        """Answers at once with a random legal index; counts every answer."""

        name = "instant"

        def __init__(self, seed: int, max_concurrent_matches: int) -> None:
            super().__init__(max_concurrent_matches=max_concurrent_matches)
            self.rng = random.Random(seed)
            self.observation_encoding = encoding  # Hello.observation_encoding (the SDK's default: json)

        def choose(self, request):
            nonlocal decisions
            decisions += 1
            return self.rng.randrange(len(request.raw.legal_actions))

    connections, per_connection = (1, concurrency) if shared else (concurrency, 1)
    bots = [asyncio.create_task(Instant(i * 100 + j, per_connection).arun(address, tok))
            for i, tok in enumerate(TOKENS) for j in range(connections)]
    next_id = 1
    async with grpc.aio.insecure_channel(address) as ch:
        stub = control_grpc.MatchControlStub(ch)
        md = [(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]

        async def lane() -> None:
            nonlocal next_id
            while True:
                match_id, next_id = next_id, next_id + 1
                req = control_pb.RunMatchRequest(
                    match_id=match_id, attempt=1, game_string=game_string, seed=str(match_id),
                    seat_bot_ids=[1, 2] if match_id % 2 else [2, 1],
                    time_control=pb.TimeControl(cap_ms=10_000, margin_ms=50), no_show_timeout_ms=30_000,
                )
                async for event in stub.RunMatch(req, metadata=md):
                    if event.HasField("result"):
                        assert event.result.status == "finished", event.result.reason

        lanes = [asyncio.create_task(lane()) for _ in range(concurrency)]
        failed: list[BaseException] = []  # a lane whose match did not finish ends the child, loudly

        def lane_ended(t: asyncio.Task[None]) -> None:
            if not t.cancelled():  # lanes loop forever: ending means a RunMatch or an assert failed
                failed.append(t.exception() or RuntimeError("a lane ended"))

        for t in lanes:
            t.add_done_callback(lane_ended)

        def count() -> int:
            if failed:
                raise RuntimeError(f"a match lane failed: {failed[0]!r}")
            return decisions

        await _report_counts(count)
        for t in lanes + bots:
            t.cancel()


async def measure_referee(game_string: str, concurrency: int, seconds: float, shared: bool,
                          encoding: str = "json") -> dict[str, float]:
    """The referee alone in this process; bots and match driver in a child; decisions over ``seconds``."""
    from referee.testing import Harness

    async with Harness(TOKENS, progress_every=1_000_000) as h:
        return await _measure_child(["--child-referee", h.address, "--game", game_string, "--concurrency",
                                     str(concurrency), *(["--shared"] if shared else []), "--encoding", encoding],
                                    seconds, wait_for_first=True)


def _join(values: Iterable[float]) -> str:
    return ", ".join(f"{v:.0f}" for v in values)


async def run_all(ns: argparse.Namespace) -> list[Result]:
    """Interleave raw and each game ``ns.repeats`` times; the results with their goals."""
    games = [g.strip() for g in ns.games.split(",") if g.strip()]
    raw: list[dict[str, float]] = []
    floor: list[dict[str, float]] = []
    ref: dict[str, list[dict[str, float]]] = {g: [] for g in games}
    for _ in range(ns.repeats):
        raw.append(await measure_raw(ns.concurrency, ns.seconds))
        floor.append(await measure_floor(ns.concurrency, ns.seconds))
        for g in games:
            ref[g].append(await measure_referee(GAMES[g][0], ns.concurrency, ns.seconds, shared=False,
                                                encoding=ns.encoding))
    floor_x = ", ".join(f"{f['server_us'] / w['server_us']:.2f}" for f, w in zip(floor, raw, strict=True))
    floor_rate = ", ".join(f"{f['per_s'] / w['per_s']:.2f}" for f, w in zip(floor, raw, strict=True))
    floor_note = (f"the referee's shape without the referee (informative): [{_join(f['server_us'] for f in floor)}] "
                  f"us, [{floor_x}] x raw")
    # What the same shape does with no referee work at all: a referee can at best match the floor's rate.
    floor_rate_note = f"the floor's own decisions/s ÷ raw (the most any referee of this shape reaches): [{floor_rate}]"
    results = []
    for g in games:
        game_string, target, cpu_factor = GAMES[g]
        results.append(Result(
            Goal(f"{g}: decisions/s ÷ raw round trips/s (guard)", "ratio", target, source=GUARD),
            [r["per_s"] / w["per_s"] for w, r in zip(raw, ref[g], strict=True)],
            [w["per_s"] for w in raw], "raw round trips/s",
            note=f"{game_string}: decisions/s [{_join(r['per_s'] for r in ref[g])}]; {floor_rate_note}",
        ))
        results.append(Result(
            Goal(f"{g}: CPU/decision ÷ raw CPU/round trip (guard)", "ratio", cpu_factor, higher_is_better=False,
                 source=GUARD),
            [r["server_us"] / w["server_us"] for w, r in zip(raw, ref[g], strict=True)],
            [w["server_us"] for w in raw], "us server CPU per raw round trip",
            note=f"referee CPU per decision [{_join(r['server_us'] for r in ref[g])}] us; {floor_note}",
        ))
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    p.add_argument("--game", default="toy(players=2,turns=50)", help=argparse.SUPPRESS)  # children
    p.add_argument("--concurrency", type=int, default=4, help="concurrent matches = concurrent raw streams")
    p.add_argument("--seconds", type=float, default=3.0, help="length of one measurement (s)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians reported)")
    p.add_argument("--child-pingpong", metavar="ADDRESS", help=argparse.SUPPRESS)
    p.add_argument("--child-referee", metavar="ADDRESS", help=argparse.SUPPRESS)
    p.add_argument("--child-floor", metavar="ADDRESS", help=argparse.SUPPRESS)
    p.add_argument("--shared", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--encoding", choices=("json", "typed", "both"), default="json",
                   help="Hello.observation_encoding of the bots (json: the Python SDK's default; both: a bot "
                        "that does not say)")
    ns = p.parse_args(argv)
    if ns.child_pingpong:
        asyncio.run(pingpong_client(ns.child_pingpong, ns.concurrency))
        return 0
    if ns.child_floor:
        asyncio.run(floor_client(ns.child_floor, ns.concurrency))
        return 0
    if ns.child_referee:
        import fixtures.toy_game  # registers "toy"

        asyncio.run(referee_child(ns.child_referee, ns.game, ns.concurrency, ns.shared, ns.encoding))
        return 0
    import fixtures.toy_game  # noqa: F401  registers "toy"

    unknown = set(g.strip() for g in ns.games.split(",") if g.strip()) - set(GAMES)
    if unknown:
        p.error(f"unknown game(s): {', '.join(sorted(unknown))}")
    print(f"cores: {os.cpu_count()}, concurrency: {ns.concurrency}, {ns.repeats} interleaved repeats of "
          f"{ns.seconds:.0f} s, bots' observation encoding: {ns.encoding}")
    return report(asyncio.run(run_all(ns)), "referee against raw gRPC")


if __name__ == "__main__":
    sys.exit(main())
