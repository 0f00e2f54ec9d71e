"""One bot may hold at most ``max_streams_per_bot`` open streams on a referee (docs/faults.md,
"Clocks, stalls and retried deals"; docs/bots.md "Reconnecting"): the default is one stream per
match for as many matches as one stream may be given (``max_declared_concurrency``, 64) plus 4,
i.e. 68. A parallel burst of 69 Hellos on one token over the real wire: 68 are welcomed, one is
refused with ``RESOURCE_EXHAUSTED`` and a reason naming the limit; another bot is not affected.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio

from proto.parterre.v1 import referee_pb2 as pb
from referee.core import RefereeSettings
from referee.testing import Harness

CONNECT = "/parterre.v1.Referee/Connect"
DEFAULT_STREAMS = 68  # docs/bots.md: 64 matches at once on one stream, plus 4


def hello(token: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, bot_name="burst", bot_version="1", max_concurrent_matches=1))


async def open_stream(channel: grpc.aio.Channel, token: str) -> tuple[Any, pb.RefereeMessage | None]:
    call = channel.stream_stream(CONNECT, request_serializer=pb.BotMessage.SerializeToString,
                                 response_deserializer=pb.RefereeMessage.FromString)()
    await call.write(hello(token))
    first = await call.read()
    return call, None if first is grpc.aio.EOF else first


async def test_the_default_lets_68_streams_of_one_bot_in_and_refuses_the_69th_of_a_parallel_burst():
    assert RefereeSettings().max_streams_per_bot == DEFAULT_STREAMS
    async with Harness({"tok-a": 1, "tok-b": 2}) as h:
        assert h.core is not None
        channels = [grpc.aio.insecure_channel(h.address) for _ in range(8)]  # several connections, as a botnet
        try:
            opened = await asyncio.gather(*(open_stream(channels[i % len(channels)], "tok-a")
                                            for i in range(DEFAULT_STREAMS + 1)))
            kinds = [m.WhichOneof("kind") if m is not None else "eof" for _, m in opened]
            assert kinds.count("welcome") == DEFAULT_STREAMS, kinds
            refused = [(call, m) for call, m in opened if m is None or m.WhichOneof("kind") != "welcome"]
            assert len(refused) == 1
            call, msg = refused[0]
            assert msg is not None and msg.WhichOneof("kind") == "error"
            assert f"already has {DEFAULT_STREAMS} open streams" in msg.error.message
            assert "max_streams_per_bot" in msg.error.message
            assert await call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert h.core.counters.streams_refused == 1
            assert h.core.open_streams.get(1) == DEFAULT_STREAMS
            _, other = await open_stream(channels[0], "tok-b")  # another bot still gets in
            assert other is not None and other.WhichOneof("kind") == "welcome"
            for call, _ in opened:
                call.cancel()
        finally:
            for channel in channels:
                await channel.close()
