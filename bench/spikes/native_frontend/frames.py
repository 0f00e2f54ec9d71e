"""The Python side of the spike's front end: ``Referee.Connect`` over frames (docs/benchmarks.md "Session 10").

:class:`FrameLink` is the asyncio protocol of the Unix socket the Go front end
(``main.go``) connects to. Each stream it opens runs the referee's own
:meth:`referee.connect.RefereeServicer.Connect` over a :class:`FrameContext`,
the four calls of a ``grpc.aio.ServicerContext`` that Connect and its
handshake use: ``read``, ``write``, ``abort``, ``invocation_metadata``.
A spike: no flow control (a write is done once the frame is in the socket's
buffer), no TLS, no peer address.
"""

from __future__ import annotations

import asyncio
import collections
import json
import struct
from typing import Any

import grpc
import grpc.aio

from referee.connect import RefereeServicer
from referee.handshake import decode_bot_message
from referee.server import serialize_referee_message

OPEN, MSG, HALF, GONE, CLOSE = 1, 2, 3, 4, 5
_HEADER = struct.Struct("<IIB")
_EOF = object()


def split_frames(buf: bytes) -> tuple[list[tuple[int, int, bytes]], bytes]:
    """The whole frames at the start of ``buf`` as ``(stream, kind, payload)``, and the bytes left over."""
    frames, i, size = [], 0, _HEADER.size
    while len(buf) - i >= size:
        n, stream, kind = _HEADER.unpack_from(buf, i)
        if len(buf) - i - size < n:
            break
        frames.append((stream, kind, buf[i + size:i + size + n]))
        i += size + n
    return frames, buf[i:]


def frame(stream: int, kind: int, payload: bytes) -> bytes:
    """One frame: ``[len u32][stream u32][kind u8][payload]``, little-endian."""
    return _HEADER.pack(len(payload), stream, kind) + payload


class FrameContext:
    """One stream: what ``RefereeServicer.Connect`` needs of its ``ServicerContext``."""

    def __init__(self, link: FrameLink, stream: int, metadata: list[tuple[str, str]]) -> None:
        self.link = link
        self.stream = stream
        self.metadata = tuple(metadata)
        self.inbox: collections.deque[Any] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False

    def feed(self, item: Any) -> None:
        self.inbox.append(item)
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def read(self) -> Any:
        while not self.inbox:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        item = self.inbox.popleft()
        return grpc.aio.EOF if item is _EOF else decode_bot_message(item)

    async def write(self, msg: Any) -> None:
        if self.closed:
            raise grpc.aio.UsageError("the stream is closed")
        self.link.send(self.stream, MSG, serialize_referee_message(msg))

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        self.close(code.value[0], details)
        raise grpc.aio.AbortError(details)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def close(self, code: int, details: str) -> None:
        if not self.closed:
            self.closed = True
            self.link.send(self.stream, CLOSE, struct.pack("<I", code) + details.encode())


class FrameLink(asyncio.Protocol):
    """The Unix socket to the front end: frames in, a task per stream running ``Connect``."""

    def __init__(self, servicer: RefereeServicer) -> None:
        self.servicer = servicer
        self.buf = b""
        self.streams: dict[int, tuple[FrameContext, asyncio.Task[None]]] = {}
        self.out: list[bytes] = []
        self.flush_scheduled = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self.transport = transport
        self.loop = asyncio.get_running_loop()

    def send(self, stream: int, kind: int, payload: bytes) -> None:
        self.out.append(frame(stream, kind, payload))
        if not self.flush_scheduled:  # one write per turn of the loop
            self.flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.flush_scheduled = False
        if self.out:
            self.transport.write(b"".join(self.out))
            self.out.clear()

    def data_received(self, data: bytes) -> None:
        frames, self.buf = split_frames(self.buf + data)
        for stream, kind, payload in frames:
            if kind == MSG:
                entry = self.streams.get(stream)
                if entry is not None:
                    entry[0].feed(payload)
            elif kind == OPEN:
                ctx = FrameContext(self, stream, [tuple(p) for p in json.loads(payload)])
                task = asyncio.ensure_future(self._run(ctx))
                self.streams[stream] = (ctx, task)
            elif kind == HALF:
                entry = self.streams.get(stream)
                if entry is not None:
                    entry[0].feed(_EOF)
            elif kind == GONE:
                entry = self.streams.pop(stream, None)
                if entry is not None:
                    entry[0].closed = True
                    entry[1].cancel()

    def connection_lost(self, exc: Exception | None) -> None:
        """The front end is gone: every stream it carried is gone with it."""
        for ctx, task in list(self.streams.values()):
            ctx.closed = True
            task.cancel()
        self.streams.clear()

    async def _run(self, ctx: FrameContext) -> None:
        try:
            await self.servicer.Connect(None, ctx)  # type: ignore[arg-type]  # the spike's context
            ctx.close(grpc.StatusCode.OK.value[0], "")
        except grpc.aio.AbortError:
            pass  # closed with its status by abort()
        except asyncio.CancelledError:
            pass
        finally:
            self.streams.pop(ctx.stream, None)
