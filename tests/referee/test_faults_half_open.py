"""Half-open connections and the reason a stream was closed (docs/faults.md, "Lost dependencies
and half-open connections", D-03 and D-04).

* D-03: a stream whose connection went half-open (no FIN/RST reached the referee) is taken over at
  once only by a new stream that sends the same ``Hello.instance_id`` (docs/bots.md,
  "Reconnecting"). Every example bot and the stdio adapter send one. The fault is acted with a TCP
  proxy of this test's own between the Node.js bot and the referee: it stops forwarding the
  connection's bytes in both directions and keeps both sockets open (a cable pulled out, a NAT that
  forgot the flow). The referee's own heartbeat is set to 60 s, so only the takeover can free the
  seat quickly.
* D-04: a stream the referee kills carries its reason in the gRPC status's trailing metadata
  (``x-parterre-error-bin``: the closing ``RefereeError``), not only in the closing ``Error``
  message, which cannot always be written.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from fixtures.toolchains import missing as tool_missing
from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from bots.stdio import StdioBot
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee.testing import Harness

register_toy()

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "bots" / "node"
TOKENS = {"tok-a": 1, "tok-node": 2, "tok-stdio": 3}

# How each example builds its Hello, and the field that must be set in it.
EXAMPLES = {
    "bots/node/bot.js": (r"hello:\s*\{(?P<body>[^}]*)\}", r"\binstance_id:\s*INSTANCE_ID\b"),
    "bots/go/main.go": (r"&pb\.Hello\{(?P<body>.*?)\}\s*\n", r"\bInstanceId:\s*instanceID\b"),
    "bots/cpp/bot.cc": (r"mutable_hello\(\);(?P<body>.*?)stream->Write\(hello\)", r"set_instance_id\("),
    "bots/java/src/org/parterre/bot/Bot.java": (r"Hello\.newBuilder\(\)(?P<body>.*?)\.build\(\)",
                                                r"\.setInstanceId\(INSTANCE_ID\)"),
}


async def _until(predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_d03_every_example_bot_sends_an_instance_id_in_its_hello(path: str) -> None:
    hello_re, field_re = EXAMPLES[path]
    source = (ROOT / path).read_text()
    hellos = list(re.finditer(hello_re, source, re.S))
    assert hellos, f"{path}: no Hello built"
    for hello in hellos:
        assert re.search(field_re, hello.group("body")), f"{path}: a Hello without instance_id"


async def test_d03_the_stdio_adapter_sends_the_same_instance_id_on_every_stream(tmp_path: Path) -> None:
    adapter = StdioBot([sys.executable, str(ROOT / "bots" / "examples" / "random_bot.py")], log_dir=tmp_path)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(adapter, "tok-stdio", initial_backoff_s=0.05)
        await h.wait_sessions(3)
        (first,) = h.core.registry.by_bot[3]
        assert len(first.instance_id) >= 8
        adapter.disconnect(reconnect_after_s=0.05)
        await _until(lambda: [s.id for s in h.core.registry.by_bot.get(3, [])] not in ([], [first.id]), 10,
                     "the adapter reconnected")
        (second,) = h.core.registry.by_bot[3]
        assert second.instance_id == first.instance_id


class FreezingProxy:
    """A TCP proxy; :meth:`freeze` stops forwarding every connection open at that moment, in both
    directions, without closing anything (a half-open connection). Later connections pass."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frozen: set[int] = set()
        self.live: set[int] = set()
        self.server: asyncio.Server | None = None
        self.port = 0
        self._next = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def freeze(self) -> None:
        self.frozen |= self.live

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._next += 1
        conn = self._next
        self.live.add(conn)
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target_port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while True:
                    data = await src.read(65536)
                    if not data:
                        break
                    if conn in self.frozen:
                        await asyncio.Event().wait()  # bytes dropped, sockets left open: half-open
                    dst.write(data)
                    await dst.drain()
            if conn not in self.frozen:
                dst.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()


def _node_bot() -> list[str]:
    if subprocess.run(["which", "node"], capture_output=True).returncode:
        tool_missing("Node.js absent; install it with `bash bots/install-toolchains.sh`")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        run = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, f"npm ci failed:\n{run.stdout}\n{run.stderr}"
    return ["node", str(NODE_DIR / "bot.js")]


async def test_d03_the_node_bot_takes_over_its_half_open_stream_at_once(tmp_path: Path) -> None:
    node = _node_bot()
    async with Harness(TOKENS, ping_interval_ms=1000, ping_timeout_ms=60_000) as h:
        assert h.core is not None
        proxy = FreezingProxy(int(h.address.rsplit(":", 1)[1]))
        await proxy.start()
        h.start_bot(RandomBot(seed=1), "tok-a")
        log = open(tmp_path / "node.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen([*node, "--address", f"127.0.0.1:{proxy.port}", "--token", "tok-node", "--seed", "3"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        try:
            await h.wait_sessions(1)
            await h.wait_sessions(2, timeout_s=30)
            result = await h.run_match(700, "toy(players=2,turns=3)", [1, 2])
            assert [s.verdict for s in result.seats] == ["normal", "normal"]
            (old,) = h.core.registry.by_bot[2]
            assert old.instance_id, "the Node bot sent no Hello.instance_id"
            proxy.freeze()
            t0 = time.monotonic()
            # the bot's keepalive (10 s + 5 s) finds the connection dead; its new stream supersedes the old one,
            # which the referee's heartbeat alone would keep for 60 s
            await _until(lambda: old.closed and len(h.core.registry.by_bot.get(2, [])) == 1, 40,
                         f"the half-open stream taken over:\n{(tmp_path / 'node.log').read_text()}")
            assert time.monotonic() - t0 < 40
            (new,) = h.core.registry.by_bot[2]
            assert new.instance_id == old.instance_id and new is not old
            assert old.kill_reason is not None and "superseded" in old.kill_reason[2]
            result = await h.run_match(701, "toy(players=2,turns=3)", [1, 2])
            assert [s.verdict for s in result.seats] == ["normal", "normal"]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            await proxy.close()


async def _status(call: Any) -> tuple[Any, str, pb.RefereeError | None]:
    """Read ``call`` to its end: (status code, details, the RefereeError in its trailers or None)."""
    try:
        while await call.read() is not grpc.aio.EOF:  # Welcome, Pings, the closing Error
            pass
        code, details, trailers = await call.code(), await call.details(), await call.trailing_metadata()
    except grpc.aio.AioRpcError as exc:
        code, details, trailers = exc.code(), exc.details(), exc.trailing_metadata()
    return code, details, _closing_error(trailers)


def _closing_error(trailers: Any) -> pb.RefereeError | None:
    for key, value in trailers or ():
        if key == "x-parterre-error-bin":
            return pb.RefereeError.FromString(value)
    return None


async def test_d04_a_killed_stream_carries_its_reason_in_the_status_trailers() -> None:
    async with Harness(TOKENS, ping_interval_ms=50) as h:
        assert h.core is not None
        async with grpc.aio.insecure_channel(h.address) as ch:
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(pb.BotMessage(hello=pb.Hello(token="tok-a", bot_name="x", bot_version="1")))
            await h.wait_sessions(1)
            (session,) = h.core.registry.by_bot[1]
            session.kill(grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED, "token revoked")
            code, details, error = await _status(call)
            assert code == grpc.StatusCode.UNAUTHENTICATED and details == "token revoked"
            assert error is not None and error.code == pb.ERROR_CODE_UNAUTHENTICATED
            assert error.message == "token revoked"
        # a refused Hello too
        async with grpc.aio.insecure_channel(h.address) as ch:
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(pb.BotMessage(hello=pb.Hello(token="wrong", bot_name="x", bot_version="1")))
            code, _, error = await _status(call)
            assert code == grpc.StatusCode.UNAUTHENTICATED
            assert error is not None and error.code == pb.ERROR_CODE_UNAUTHENTICATED
            assert "unknown or revoked token" in error.message
