"""Spike (docs/benchmarks.md "Session 10"): what a native gRPC front end would cost a bot round trip.

Not a benchmark with a goal: it prints the server CPU per round trip (per decision with
``--game``) of

* **grpc.aio**: the Python echo server of ``bench/bench_referee.py`` (the referee goals' "raw");
* **Go echo**: ``build/frontend`` (grpc-go from Debian) echoing every message;
* **Go gateway + Python**: ``build/frontend --gateway SOCK`` forwarding each message as a frame
  ``[len u32][stream u32][kind u8][payload]`` over one Unix socket to this Python process, which answers
  every frame read with an ``--answer``-byte frame, one write per batch; the CPU of both processes.

The client is a child process doing ping-pong over ``--streams`` streams (bench_referee's raw
client, with a ``--payload``-byte request). With ``--game``, instead of the two Go measurements:
the referee in this process playing ``--streams`` 2-player matches at a time of that game with
bench_referee's instant bots, the bots on grpc.aio, then behind the front end (``frames.py``).
Usage (after ``make -C bench/spikes/native_frontend``)::

    GOMAXPROCS=1 .venv/bin/python bench/spikes/native_frontend/measure.py [--payload 100] [--answer 100]
    GOMAXPROCS=1 .venv/bin/python bench/spikes/native_frontend/measure.py --game 'floriferous(players=2)'
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from bench.bench_referee import (  # noqa: E402
    TOKENS,
    _bidi_server,
    _echo,
    _identity,
    pingpong_client,
    referee_child,
)
from bench.harness import cpu_seconds  # noqa: E402

sys.path.insert(0, str(HERE))
from frames import MSG, FrameLink, frame, split_frames  # noqa: E402  (this folder)

FRONTEND = HERE / "build" / "frontend"


async def measure(address: str, ns: argparse.Namespace, pids: list[int],
                  child: list[str] | None = None) -> dict[str, float]:
    """Count the child's round trips (or decisions) over ``ns.seconds``; CPU per round trip of this
    process and ``pids``. The child is the ping-pong client, or the ``child`` arguments of this file."""
    args = child or ["--child", address, "--streams", str(ns.streams), "--payload", str(ns.payload)]
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, *args, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def count() -> int:
        stdin.write(b"\n")
        line = await stdout.readline()
        if not line:
            raise RuntimeError("the client child ended (its error is above)")
        return int(line)

    try:
        while child and await count() == 0:  # matches take a while to start
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)
        n0, t0, py0, x0 = await count(), time.perf_counter(), time.process_time(), sum(map(cpu_seconds, pids))
        await asyncio.sleep(ns.seconds)
        n1, t1, py1, x1 = await count(), time.perf_counter(), time.process_time(), sum(map(cpu_seconds, pids))
    finally:
        proc.kill()
        await proc.wait()
    n = n1 - n0
    return {"per_s": n / (t1 - t0), "python_us": (py1 - py0) / n * 1e6, "native_us": (x1 - x0) / n * 1e6}


class _Frames(asyncio.Protocol):
    """The Python side of the gateway echo: answers every message, one write per batch of frames read."""

    def __init__(self, answer: int) -> None:
        self.answer = b"y" * answer
        self.buf = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        frames, self.buf = split_frames(self.buf + data)
        out = [frame(stream, MSG, self.answer) for stream, kind, _ in frames if kind == MSG]
        if out:
            self.transport.write(b"".join(out))


async def measure_referee(ns: argparse.Namespace, frontend: bool) -> dict[str, float]:
    """A referee in this process; bots reach it through grpc.aio or through the Go front end."""
    from referee.connect import RefereeServicer
    from referee.testing import Harness

    async with Harness(TOKENS, progress_every=1_000_000) as h:
        assert h.core is not None
        core = h.core
        if not frontend:
            return await measure(h.address, ns, [], ["--child-referee", h.address, h.address, ns.game])
        tmp = tempfile.TemporaryDirectory(prefix="parterre-frontend-")
        sock = os.path.join(tmp.name, "frontend.sock")
        unix = await asyncio.get_running_loop().create_unix_server(lambda: FrameLink(RefereeServicer(core)), sock)
        go = await asyncio.create_subprocess_exec(str(FRONTEND), "--gateway", sock, stdout=subprocess.PIPE)
        assert go.stdout is not None
        address = (await go.stdout.readline()).decode().strip()
        try:
            return await measure(address, ns, [go.pid], ["--child-referee", address, h.address, ns.game])
        finally:
            go.kill()
            await go.wait()
            unix.close()
            await unix.wait_closed()
            tmp.cleanup()


async def one_repeat(ns: argparse.Namespace) -> dict[str, dict[str, float]]:
    out = {}
    server, port = await _bidi_server("bench.Echo", "Chat", _echo, _identity, _identity)
    try:
        out["grpc.aio echo"] = await measure(f"127.0.0.1:{port}", ns, [])
    finally:
        await server.stop(0)
    if ns.game:
        out[f"referee {ns.game}, grpc.aio"] = await measure_referee(ns, frontend=False)
        out[f"referee {ns.game}, front end"] = await measure_referee(ns, frontend=True)
        return out
    for mode in ("Go echo", "Go gateway + Python"):
        args: list[str] = []
        unix = None
        if mode != "Go echo":
            tmp = tempfile.TemporaryDirectory(prefix="parterre-frontend-")
            sock = os.path.join(tmp.name, "frontend.sock")
            unix = await asyncio.get_running_loop().create_unix_server(lambda: _Frames(ns.answer), sock)
            args = ["--gateway", sock]
        go = await asyncio.create_subprocess_exec(str(FRONTEND), *args, stdout=subprocess.PIPE)
        assert go.stdout is not None
        address = (await go.stdout.readline()).decode().strip()
        try:
            out[mode] = await measure(address, ns, [go.pid])
        finally:
            go.kill()
            await go.wait()
            if unix is not None:
                unix.close()
                await unix.wait_closed()
                tmp.cleanup()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--streams", type=int, default=4)
    p.add_argument("--payload", type=int, default=100, help="bytes of each request (the echo's answer too)")
    p.add_argument("--answer", type=int, default=100, help="bytes of the gateway's answer")
    p.add_argument("--game", help="also run 2-player matches of this game string through the referee, "
                   "with its bots on grpc.aio and behind the front end (e.g. 'floriferous(players=2)')")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--child-referee", nargs=3, help=argparse.SUPPRESS)
    ns = p.parse_args()
    if ns.child_referee:
        bots, control, game = ns.child_referee
        asyncio.run(referee_child(control, game, ns.streams, shared=False, bot_address=bots))
        return 0
    if ns.child:
        asyncio.run(pingpong_client(ns.child, ns.streams, b"x" * ns.payload))
        return 0
    if not FRONTEND.exists():
        print(f"{FRONTEND} is missing: make -C {HERE.relative_to(ROOT)}")
        return 1
    runs = [asyncio.run(one_repeat(ns)) for _ in range(ns.repeats)]
    print(f"requests {ns.payload} B, gateway answers {ns.answer} B, {ns.streams} streams, "
          f"GOMAXPROCS={os.environ.get('GOMAXPROCS', 'default')}; "
          f"medians of {ns.repeats} repeats of {ns.seconds:.0f} s")
    for mode in runs[0]:
        per_s = statistics.median(r[mode]["per_s"] for r in runs)
        py = statistics.median(r[mode]["python_us"] for r in runs)
        native = statistics.median(r[mode]["native_us"] for r in runs)
        print(f"  {mode:22s} {per_s:8.0f}/s (round trips or decisions)  server CPU {py + native:6.1f} us "
              f"(Python {py:.1f} + native {native:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
