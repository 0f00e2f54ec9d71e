"""Referee throughput against raw gRPC, measured in the same run (DESIGN §9).

Usage::

    .venv/bin/python bench/bench_referee.py [--game "toy(players=2,turns=50)"]
        [--concurrency 4] [--seconds 3] [--rounds 3]

Each measurement has the server in this process and the clients in a child
process (as in production, bots are other processes):

* **raw**: a grpc.aio bidirectional stream echo over ``concurrency`` streams,
  each doing request/answer round trips of ~100-byte messages back to back.
* **referee, stream per match**: ``concurrency`` 2-player matches at a time
  through ``MatchControl.RunMatch``, played by instant bots (``choose``
  returns 0), each bot connected ``concurrency`` times (one stream per
  concurrent match, like the raw streams); decisions (not chance outcomes)
  per second. The child process holds the bots and the match driver (the
  workers' role), so this process holds the referee alone.
* **referee, shared stream**: the same, each bot playing all its matches over
  one stream (``max_concurrent_matches = concurrency``).

Rounds are interleaved and medians reported, since shared machines are noisy
(DESIGN §9), with the CPU time per operation of each side. The headline is
``ratio = referee (stream per match) / raw`` (target >= 0.6).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the toy game fixture

import grpc  # noqa: E402
import grpc.aio  # noqa: E402

ECHO_METHOD = "/bench.Echo/Chat"
PAYLOAD = b"x" * 100
TOKENS = {"bench-a": 1, "bench-b": 2}
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system, all threads) used so far by process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _identity(b: bytes) -> bytes:
    return b


# -- raw ping-pong ----------------------------------------------------------------------------

async def _echo(request_iterator, context):  # noqa: ANN001
    async for req in request_iterator:
        yield req


async def pingpong_client(address: str, streams: int) -> None:
    """Child: ping-pong over ``streams`` streams; prints the round-trip count each time it gets a line."""
    async with grpc.aio.insecure_channel(address) as ch:
        chat = ch.stream_stream(ECHO_METHOD, request_serializer=_identity, response_deserializer=_identity)
        counts = [0] * streams

        async def one(i: int) -> None:
            call = chat()
            while True:
                await call.write(PAYLOAD)
                await call.read()
                counts[i] += 1

        tasks = [asyncio.create_task(one(i)) for i in range(streams)]
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while await reader.readline():
            print(sum(counts), flush=True)
        for t in tasks:
            t.cancel()


async def measure_raw(streams: int, seconds: float) -> dict[str, float]:
    """Echo server here, client in a child process; counts round trips over ``seconds``."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {"Chat": grpc.stream_stream_rpc_method_handler(_echo, request_deserializer=_identity,
                                                       response_serializer=_identity)},
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--child-pingpong", f"127.0.0.1:{port}", "--concurrency", str(streams),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def count() -> int:
        proc.stdin.write(b"\n")  # type: ignore[union-attr]
        return int(await proc.stdout.readline())  # type: ignore[union-attr]

    try:
        await asyncio.sleep(1.0)  # start-up and warm-up
        n0, t0, cpu0, child0 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
        await asyncio.sleep(seconds)
        n1, t1, cpu1, child1 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
    finally:
        proc.kill()
        await proc.wait()
        await server.stop(0)
    n = n1 - n0
    return {"ops": n, "per_s": n / (t1 - t0), "server_us": (cpu1 - cpu0) / n * 1e6,
            "client_us": (child1 - child0) / n * 1e6}


# -- referee ----------------------------------------------------------------------------------

async def referee_child(address: str, game_string: str, concurrency: int, shared: bool) -> None:
    """Child: two instant bots and the match driver (the workers' role, ``MatchControl.RunMatch``).

    Each bot connects once with ``max_concurrent_matches = concurrency`` (shared) or
    ``concurrency`` times with 1. ``concurrency`` lanes play matches back to back;
    each line on stdin is answered with the number of decisions played so far.
    """
    from bots.sdk import Bot
    from proto.parterre.v1 import referee_pb2 as pb
    from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
    from referee.server import SERVICE_TOKEN_HEADER
    from referee.testing import SERVICE_TOKEN

    class Instant(Bot):
        name = "instant"

        def choose(self, request):  # noqa: ANN001, ANN201
            return 0

    connections, per_connection = (1, concurrency) if shared else (concurrency, 1)
    bots = [asyncio.create_task(Instant(max_concurrent_matches=per_connection).arun(address, tok))
            for tok in TOKENS for _ in range(connections)]
    decisions = 0
    next_id = 1
    async with grpc.aio.insecure_channel(address) as ch:
        stub = pb_grpc.MatchControlStub(ch)
        md = [(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]

        async def lane() -> None:
            nonlocal decisions, next_id
            while True:
                match_id, next_id = next_id, next_id + 1
                req = pb.RunMatchRequest(
                    match_id=match_id, attempt=1, game_string=game_string, seed=str(match_id),
                    seat_bot_ids=[1, 2] if match_id % 2 else [2, 1],
                    time_control=pb.TimeControl(cap_ms=10_000, margin_ms=50), no_show_timeout_ms=30_000,
                )
                async for event in stub.RunMatch(req, metadata=md):
                    if event.HasField("result"):
                        assert event.result.status == "finished", event.result.reason
                        decisions += sum(s.decisions for s in event.result.seats)

        lanes = [asyncio.create_task(lane()) for _ in range(concurrency)]
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while await reader.readline():
            print(decisions, flush=True)
        for t in lanes + bots:
            t.cancel()


async def measure_referee(game_string: str, concurrency: int, seconds: float, shared: bool) -> dict[str, float]:
    """The referee alone in this process; bots and match driver in a child; decisions over ``seconds``."""
    from referee.testing import Harness

    async with Harness(TOKENS, progress_every=1_000_000) as h:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--child-referee", h.address, "--game", game_string,
            "--concurrency", str(concurrency), *(["--shared"] if shared else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None

        async def count() -> int:
            proc.stdin.write(b"\n")  # type: ignore[union-attr]
            return int(await proc.stdout.readline())  # type: ignore[union-attr]

        try:
            while await count() == 0:  # start-up
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # warm-up
            n0, t0, cpu0, child0 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
            await asyncio.sleep(seconds)
            n1, t1, cpu1, child1 = await count(), time.perf_counter(), time.process_time(), _cpu_of(proc.pid)
        finally:
            proc.kill()
            await proc.wait()
    n = n1 - n0
    return {"ops": n, "per_s": n / (t1 - t0), "server_us": (cpu1 - cpu0) / n * 1e6,
            "client_us": (child1 - child0) / n * 1e6}


async def run_all(ns: argparse.Namespace) -> None:
    """Interleave the three measurements ``ns.rounds`` times and print medians."""
    runs: dict[str, list[dict[str, float]]] = {"raw": [], "per_match": [], "shared": []}
    for _ in range(ns.rounds):
        runs["raw"].append(await measure_raw(ns.concurrency, ns.seconds))
        runs["per_match"].append(await measure_referee(ns.game, ns.concurrency, ns.seconds, shared=False))
        runs["shared"].append(await measure_referee(ns.game, ns.concurrency, ns.seconds, shared=True))
    names = {
        "raw": f"raw grpc.aio ping-pong, {ns.concurrency} streams",
        "per_match": "referee, stream per match",
        "shared": "referee, one shared stream per bot",
    }
    for key, label in names.items():
        rs = runs[key]
        unit = "round trips/s" if key == "raw" else "decisions/s"
        rates = ", ".join(f"{r['per_s']:.0f}" for r in rs)
        print(f"{label:38s} median {statistics.median(r['per_s'] for r in rs):6.0f} {unit:13s} [{rates}]  "
              f"CPU/op: server {statistics.median(r['server_us'] for r in rs):4.0f} us, "
              f"clients {statistics.median(r['client_us'] for r in rs):4.0f} us")
    for key in ("per_match", "shared"):
        ratios = [f["per_s"] / r["per_s"] for r, f in zip(runs["raw"], runs[key], strict=False)]
        print(f"ratio {names[key]} / raw, per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
              f"median {statistics.median(ratios):.2f}" + ("  (target >= 0.6)" if key == "per_match" else ""))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="toy(players=2,turns=50)", help="game string of the matches")
    p.add_argument("--concurrency", type=int, default=4, help="concurrent matches = concurrent raw streams")
    p.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians reported)")
    p.add_argument("--child-pingpong", metavar="ADDRESS", help=argparse.SUPPRESS)
    p.add_argument("--child-referee", metavar="ADDRESS", help=argparse.SUPPRESS)
    p.add_argument("--shared", action="store_true", help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.child_pingpong:
        asyncio.run(pingpong_client(ns.child_pingpong, ns.concurrency))
        return 0
    if ns.child_referee:
        asyncio.run(referee_child(ns.child_referee, ns.game, ns.concurrency, ns.shared))
        return 0
    import fixtures.toy_game  # noqa: F401  registers "toy"

    print(f"cores: {os.cpu_count()}, concurrency: {ns.concurrency}, game: {ns.game}, "
          f"{ns.rounds} interleaved rounds of {ns.seconds:.0f} s")
    asyncio.run(run_all(ns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
