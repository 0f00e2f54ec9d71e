"""The relay between a sandboxed gRPC bot and the referee (docs/hosted.md, "gRPC bots").

A hosted gRPC bot has no network (``workers.hosting.sandbox``: an empty network
namespace). Its only way out is one Unix socket, ``referee.sock`` in a folder
made for one match (or one validation run) and bound into that sandbox alone
at ``/run/parterre``. :class:`GrpcRelay` listens there, outside the sandbox,
and is **gRPC-aware**, not a byte pipe:

* it serves ``parterre.v1.Referee/Connect`` and nothing else: ``MatchControl``,
  health, reflection or any other method answer ``UNIMPLEMENTED`` from the
  relay itself and never reach the referee (a byte relay would hand the bot
  whatever else the referee's port serves);
* each stream of the bot becomes one upstream ``Connect`` to the referee's bot
  endpoint; every ``Hello`` is re-written on the way: ``token`` becomes the
  platform's credential of the hosted version (held by the relay only: the
  bot sees the placeholder ``PARTERRE_BOT_TOKEN=hosted``), and
  ``max_concurrent_matches`` becomes 1;
* one stream at a time (a second concurrent one is refused with
  ``RESOURCE_EXHAUSTED``), so the bot holds at most one referee session;
* ``max_matches`` > 0: after that many ``MatchEnded`` (of matches this stream
  started) the relay ends the stream and refuses new ones (a rated seat plays
  one match, as the stdio adapter does) — after :data:`LINGER_S` without a
  new ``MatchStarted``, a margin kept from before ``Hello.max_matches`` and
  ``Hello.only_match_id`` (the referee then seated a waiting match on a
  session the instant its match ended; it no longer can);
* messages from the bot are capped at :data:`MAX_BOT_MESSAGE` bytes;
* with a ``gate`` (a trial's side, ``workers.hosting.trial_games``): a stream
  waits for the gate before anything reaches the referee (the runner opens it
  once the trial's credential is admitted, and sets ``credential`` to it); a
  relayed ``MatchEnded`` closes it again (the credential is spent) and ends the
  bot's stream as a rated seat's ends after its match; a refusal of the
  credential reaches the bot as ``UNAVAILABLE`` with a rated seat's words (it
  reconnects and waits for the next game) instead of ending the relay.

Everything else the bot sends (decisions, resignations, pongs) and everything
the referee sends is forwarded unchanged, so the referee times and judges the
bot exactly as a connected one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import grpc.aio

from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

MAX_BOT_MESSAGE = 1 << 20
"""Largest message a bot may send through the relay (a decision is a few bytes, about 1 KB with its debug text)."""

LINGER_S = 1.0
"""After its last match, how long a seat's stream stays open for a match the referee seats on it at once."""

UPSTREAM_OPTIONS = [("grpc.max_receive_message_length", 64 << 20), ("grpc.keepalive_time_ms", 10_000),
                    ("grpc.keepalive_permit_without_calls", 1)]

SERVER_OPTIONS = [("grpc.max_receive_message_length", MAX_BOT_MESSAGE), ("grpc.max_concurrent_streams", 4),
                  # the SDKs' keepalive pings (every 10 s) are welcome, as on the referee (referee.server)
                  ("grpc.keepalive_permit_without_calls", 1), ("grpc.http2.min_ping_interval_without_data_ms", 5000),
                  ("grpc.http2.max_pings_without_data", 0)]


class GrpcRelay(pb_grpc.RefereeServicer):
    """Serves ``Referee.Connect`` on ``unix:<socket_path>`` and relays it to ``upstream`` (see the module doc).

    Args:
        socket_path: the Unix socket to listen on (its folder is what the sandbox gets).
        upstream: the referee's bot endpoint, ``host:port`` (or ``unix:...``).
        credential: the token put in every ``Hello``.
        max_matches: stop after this many ``MatchEnded`` (0: never).
        only_match_id / only_attempt: put in every ``Hello``: the referee seats this seat in that match
            (and attempt) only (0: any).
        gate: a trial side's gate (see the module doc); None: streams go through at once.

    Attributes:
        matches_ended: ``MatchEnded`` relayed so far.
        in_match: a match started and not yet ended.
        refused: the referee refused the credential (``UNAUTHENTICATED``).
        done: set once ``max_matches`` matches ended.
    """

    def __init__(self, socket_path: str, upstream: str, credential: str, max_matches: int = 0,
                 only_match_id: int = 0, only_attempt: int = 0, gate: asyncio.Event | None = None) -> None:
        self.socket_path = socket_path
        self.gate = gate
        self.only_match_id = max(0, only_match_id)
        self.only_attempt = max(0, only_attempt)
        self.upstream = upstream
        self.credential = credential
        self.max_matches = max_matches
        self.matches_ended = 0
        self.active_matches: set[int] = set()
        self.refused = False
        self.streams = 0
        self.done = asyncio.Event()
        self._busy = False
        self._server: grpc.aio.Server | None = None
        self._channel: grpc.aio.Channel | None = None

    @property
    def connected(self) -> bool:
        """A bot's stream is open here (relayed, or waiting at the gate)."""
        return self._busy

    @property
    def in_match(self) -> bool:
        return bool(self.active_matches)

    async def start(self) -> None:
        """Listen on the socket (world-connectable: the sandbox runs as another uid; its folder guards it)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)
        self._channel = grpc.aio.insecure_channel(self.upstream, options=UPSTREAM_OPTIONS)
        self._server = grpc.aio.server(options=SERVER_OPTIONS)
        pb_grpc.add_RefereeServicer_to_server(self, self._server)
        with _bindable(self.socket_path) as path:
            self._server.add_insecure_port(f"unix:{path}")
        await self._server.start()
        os.chmod(self.socket_path, 0o777)

    async def stop(self, grace_s: float = 0.5) -> None:
        """Stop listening and close the upstream channel; removes the socket."""
        if self._server is not None:
            await self._server.stop(grace_s)
        if self._channel is not None:
            await self._channel.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)

    def _rewrite(self, msg: pb.BotMessage, credential: str) -> pb.BotMessage:
        if msg.HasField("hello"):
            msg.hello.token = credential
            msg.hello.max_concurrent_matches = 1
            msg.hello.only_match_id = self.only_match_id  # the bot's own values are not trusted either
            msg.hello.only_attempt = self.only_attempt
            if self.max_matches:  # a one-match seat: the referee never seats it in a second match
                msg.hello.max_matches = max(1, self.max_matches - self.matches_ended)
        return msg

    async def Connect(self, request_iterator: AsyncIterator[pb.BotMessage],  # CamelCase: the gRPC method's name
                      context: Any) -> AsyncIterator[pb.RefereeMessage]:
        if self.done.is_set():
            await context.abort(grpc.StatusCode.UNAVAILABLE, "this seat's match is over")
        if self._busy:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "one stream at a time through this socket")
        self._busy = True
        if self.gate is not None:
            try:
                await self.gate.wait()  # until the runner's next trial admits this side's credential
            except BaseException:
                self._busy = False
                raise
        used = self.credential  # this stream's; the runner may arm the gate with the next game's meanwhile

        def spent() -> None:
            """Close the gate for the credential this stream used, never for a newer one."""
            if self.gate is not None and self.credential == used:
                self.gate.clear()

        self.streams += 1
        log.info("relay: stream %s opened", self.streams)
        assert self._channel is not None
        call = pb_grpc.RefereeStub(self._channel).Connect()

        async def pump_up() -> None:
            try:
                async for msg in request_iterator:
                    await call.write(self._rewrite(msg, used))
            finally:
                with contextlib.suppress(Exception):
                    await call.done_writing()

        up = asyncio.create_task(pump_up())
        try:
            while True:
                if self.max_matches and self.matches_ended >= self.max_matches and not self.active_matches:
                    # Its quota played. The referee seats a free session the moment a match ends, so a match
                    # waiting for this bot may start on this stream now (its own seat's process is then idle
                    # and stopped by its worker): play it rather than leave it a disconnect. Else close.
                    try:
                        out = await asyncio.wait_for(call.read(), LINGER_S)
                    except TimeoutError:
                        self.done.set()
                        break
                else:
                    out = await call.read()
                if out is grpc.aio.EOF:
                    code = await call.code()
                    if self.gate is not None and code in (grpc.StatusCode.UNAUTHENTICATED,
                                                          grpc.StatusCode.PERMISSION_DENIED):
                        spent()  # a spent credential: wait for the next game's
                        await context.abort(grpc.StatusCode.UNAVAILABLE, "this seat's match is over")
                    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                        self.refused = True
                        self.done.set()
                    if code != grpc.StatusCode.OK:
                        await context.abort(code, await call.details() or "referee stream failed")
                    break
                if out.HasField("match_started"):
                    self.active_matches.add(out.match_started.match_id)
                    log.info("relay: match %s started", out.match_started.match_id)
                yield out
                if out.HasField("match_ended") and out.match_ended.match_id in self.active_matches:
                    self.active_matches.discard(out.match_ended.match_id)
                    self.matches_ended += 1
                    log.info("relay: match %s ended (%s so far)", out.match_ended.match_id, self.matches_ended)
                    if self.gate is not None:  # the trial's credential is spent: its stream ends here
                        spent()
                        break
            log.info("relay: stream %s ended by the referee or after its matches", self.streams)
        except grpc.aio.AioRpcError as exc:
            log.info("relay: stream %s: referee status %s %s", self.streams, exc.code().name, exc.details())
            if self.gate is not None and exc.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                                        grpc.StatusCode.PERMISSION_DENIED):
                spent()
                await context.abort(grpc.StatusCode.UNAVAILABLE, "this seat's match is over")
            if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                self.refused = True
                self.done.set()
            await context.abort(exc.code(), exc.details() or "referee stream failed")
        except asyncio.CancelledError:
            log.info("relay: stream %s closed by the bot", self.streams)
            raise
        finally:
            up.cancel()
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await up
            self._busy = False  # active_matches stay: a bot that reconnects within the grace is still in them


SUN_PATH_MAX = 107
"""The longest path ``bind`` takes for a Unix socket on Linux (``sun_path`` is 108 bytes with its NUL)."""


@contextlib.contextmanager
def _bindable(socket_path: str) -> Iterator[str]:
    """A path naming ``socket_path`` that fits a Unix socket address.

    A run folder under a deep ``PARTERRE_HOSTED_DIR`` gives socket paths longer than
    :data:`SUN_PATH_MAX`, which gRPC refuses to bind. Then the socket is bound through a short symbolic
    link to its folder, made in the system's temporary folder and removed once bound: the socket itself
    is created at ``socket_path``.
    """
    if len(os.fsencode(socket_path)) <= SUN_PATH_MAX:
        yield socket_path
        return
    short = tempfile.mkdtemp(prefix="pt-")
    try:
        os.symlink(os.path.dirname(os.path.abspath(socket_path)), os.path.join(short, "d"))
        yield os.path.join(short, "d", os.path.basename(socket_path))
    finally:
        shutil.rmtree(short, ignore_errors=True)


def connectable(socket_path: str) -> tuple[str, str | None]:
    """A path a client can connect to ``socket_path`` by, and the folder to remove when done (None: none made).

    As :func:`_bindable`, for a client that stays connected (and reconnects) for a while: a socket
    path longer than :data:`SUN_PATH_MAX` is reached through a short symbolic link to its folder, kept
    until the caller removes the returned folder.
    """
    if len(os.fsencode(socket_path)) <= SUN_PATH_MAX:
        return socket_path, None
    short = tempfile.mkdtemp(prefix="pt-")
    os.symlink(os.path.dirname(os.path.abspath(socket_path)), os.path.join(short, "d"))
    return os.path.join(short, "d", os.path.basename(socket_path)), short
