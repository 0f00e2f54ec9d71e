"""A bot that stops reading (HTTP/2 flow control holds the referee's writes) loses on time.

docs/faults.md S-25: a bot that answered, kept its stream "alive" with a
Pong every 2 s, and then granted the referee no more flow-control window (SETTINGS
``INITIAL_WINDOW_SIZE=0``, no WINDOW_UPDATE) held the room inside the write of its next
request, where the clock could not retire it: the match ended ``infra_error`` by the watchdog,
unrated, and was retried on the same deal. A bot that merely stops answering lost by
``timeout`` within its time control. Now both lose by ``timeout``, and the referee drops a stream
whose write is held longer than the heartbeat's timeout.

The staller is a raw HTTP/2 gRPC client (no h2 library; RFC 9113 frames, HPACK literals):
grpc's own clients always grant window.
"""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

from bots.reference import RandomBot
from proto.parterre.v1 import referee_pb2 as pb
from referee.testing import Harness, replay_of

DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TOKENS = {"tok-a": 1, "tok-b": 2}


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(name: str, value: str) -> bytes:
    """An HPACK literal header field without indexing, new name (RFC 7541 §6.2.2)."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


class StallBot:
    """Answers index 0 to every request; after ``stall_after`` answers it grants no more window.
    With ``silent_after`` instead, it keeps the window open and stops answering (the contrast)."""

    def __init__(self, token: str, stall_after: int | None = None, silent_after: int | None = None) -> None:
        self.token, self.stall_after, self.silent_after = token, stall_after, silent_after
        self.answered = 0
        self.stalled = False
        self.ended = ""
        self.writer: asyncio.StreamWriter | None = None

    def _send(self, msg: pb.BotMessage) -> None:
        body = msg.SerializeToString()
        assert self.writer is not None
        self.writer.write(_frame(DATA, 0, 1, b"\x00" + struct.pack(">I", len(body)) + body))

    async def run(self, address: str) -> None:
        host, port = address.split(":")
        reader, self.writer = await asyncio.open_connection(host, int(port))
        w = self.writer
        w.write(PREFACE + _frame(SETTINGS, 0, 0, b""))
        block = b"".join(_literal(k, v) for k, v in (
            (":method", "POST"), (":scheme", "http"), (":path", "/parterre.v1.Referee/Connect"),
            (":authority", address), ("content-type", "application/grpc"), ("te", "trailers")))
        w.write(_frame(HEADERS, 0x4, 1, block))
        self._send(pb.BotMessage(hello=pb.Hello(token=self.token, bot_name="staller", bot_version="1",
                                                max_concurrent_matches=1)))
        await w.drain()
        alive = asyncio.create_task(self._pongs())
        buf = b""
        try:
            while True:
                head = await reader.readexactly(9)
                length = int.from_bytes(head[:3], "big")
                kind, flags, stream = head[3], head[4], struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
                payload = await reader.readexactly(length)
                if kind == SETTINGS and not flags & 1:
                    w.write(_frame(SETTINGS, 1, 0, b""))
                elif kind == PING and not flags & 1:
                    w.write(_frame(PING, 1, 0, payload))
                elif kind in (GOAWAY, RST) or (kind == HEADERS and flags & 1):
                    self.ended = {GOAWAY: "goaway", RST: "reset"}.get(kind, "trailers")
                    return
                elif kind == DATA and stream == 1:
                    if not self.stalled and length:
                        inc = struct.pack(">I", length)
                        w.write(_frame(WINDOW_UPDATE, 0, 0, inc) + _frame(WINDOW_UPDATE, 0, 1, inc))
                    buf += payload
                    while len(buf) >= 5 and len(buf) >= 5 + struct.unpack(">I", buf[1:5])[0]:
                        n = struct.unpack(">I", buf[1:5])[0]
                        self._on_message(pb.RefereeMessage.FromString(buf[5:5 + n]))
                        buf = buf[5 + n:]
                await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended = "eof"
        finally:
            alive.cancel()

    def _on_message(self, msg: pb.RefereeMessage) -> None:
        if msg.WhichOneof("kind") != "decision_request":
            return
        if self.silent_after is not None and self.answered >= self.silent_after:
            return
        r = msg.decision_request
        self._send(pb.BotMessage(decision=pb.Decision(match_id=r.match_id, seq=r.seq, action_index=0,
                                                      attempt=r.attempt)))
        self.answered += 1
        if self.stall_after is not None and self.answered >= self.stall_after and not self.stalled:
            self.stalled = True  # no window for the referee from now on
            assert self.writer is not None
            self.writer.write(_frame(SETTINGS, 0, 0, struct.pack(">HI", 0x4, 0)))  # INITIAL_WINDOW_SIZE = 0

    async def _pongs(self) -> None:
        while True:  # "alive": the referee's last_seen stays fresh
            await asyncio.sleep(2.0)
            self._send(pb.BotMessage(pong=pb.Pong(nonce=0)))
            assert self.writer is not None
            await self.writer.drain()


async def _play(bot: StallBot, *, ping_timeout_ms: int = 3000) -> tuple[Any, float, bool]:
    """A 2-player Floriferous match of RandomBot (seat 0) against ``bot``: (result, seconds, whether
    the referee still counted the bot's stream right after the match)."""
    async with Harness(TOKENS, ping_interval_ms=1000, ping_timeout_ms=ping_timeout_ms) as h:
        assert h.core is not None
        h.start_bot(RandomBot(seed=1), "tok-a")
        task = asyncio.create_task(bot.run(h.address))
        await h.wait_sessions(2)
        t0 = time.monotonic()
        result = await h.run_match(900, "floriferous(players=2)", [1, 2], cap_ms=1000, margin_ms=100,
                                   max_duration_ms=20_000)
        elapsed = time.monotonic() - t0
        await asyncio.sleep(0.2)
        registered = bool(h.core.registry.by_bot.get(2))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return result, elapsed, registered


async def test_a_bot_that_stops_answering_loses_on_time() -> None:
    """The contrast (it held before): window open, no answer."""
    result, elapsed, registered = await _play(StallBot("tok-b", silent_after=3))
    assert result.status == "finished", result.reason
    assert [s.verdict for s in result.seats] == ["normal", "timeout"]
    assert elapsed < 10 and registered  # its stream is fine: it may play again


async def test_a_bot_that_stops_reading_loses_on_time_and_its_stream_is_closed() -> None:
    bot = StallBot("tok-b", stall_after=3)
    result, elapsed, registered = await _play(bot, ping_timeout_ms=60_000)  # the decision's clock alone decides
    assert result.status == "finished", result.reason
    seats = list(result.seats)
    assert [s.verdict for s in seats] == ["normal", "timeout"] and seats[1].rank == 2
    assert elapsed < 10  # not the 20 s watchdog, nor an infra_error to retry on the same deal
    reason = replay_of(result)["fault_reasons"][1]
    assert "flow control" in reason and "stopped reading" in reason
    assert bot.stalled and bot.answered == 3
    # The referee no longer counts the stream (no seat goes to it). gRPC cannot end an RPC whose
    # data write is held (its status would queue behind the data): the bot's HTTP/2 stream stays
    # open until it leaves, one of the max_streams_per_bot it may hold.
    assert not registered


async def test_a_stream_that_stops_reading_between_matches_is_closed_by_the_heartbeat() -> None:
    """No match to time it: a Ping held in the write for longer than the heartbeat's timeout
    closes the stream, however many Pongs the bot sends."""
    bot = StallBot("tok-b", stall_after=0)
    async with Harness(TOKENS, ping_interval_ms=500, ping_timeout_ms=2000) as h:
        task = asyncio.create_task(bot.run(h.address))
        await h.wait_sessions(2)
        assert h.core is not None
        bot.stalled = True
        assert bot.writer is not None
        bot.writer.write(_frame(SETTINGS, 0, 0, struct.pack(">HI", 0x4, 0)))
        deadline = time.monotonic() + 10
        while h.core.registry.by_bot.get(2) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not h.core.registry.by_bot.get(2), "the stalled stream is still registered"
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
