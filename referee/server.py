"""The referee's gRPC server: ``Referee.Connect`` for bots, ``MatchControl.RunMatch``
for workers, and the standard health service (DESIGN §3, §4).

Usage::

    server, port = await create_server("127.0.0.1:0", token_store=StaticTokenStore({"t": 1}),
                                       service_token="s3cret")
    ...
    await server.referee.stop(grace_s=5)

``create_server`` returns a started ``grpc.aio.Server``; its ``referee``
attribute is the :class:`RefereeCore` (sessions, rooms, counters, ``stop``).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import gc
import hmac
import logging
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee import metrics
from referee.room import MatchSpec, MatchSpecError, Room
from referee.sessions import Session, SessionRegistry
from referee.tokens import DEFAULT_KEY, RedisTokenStore, TokenStore, TokenStoreUnavailableError
from referee.verdicts import Verdict

log = logging.getLogger(__name__)

SERVICE_TOKEN_HEADER = "x-parterre-service-token"
"""Metadata key workers put their service token in (``MatchControl``)."""


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Tunables of a referee; durations in ms unless the name says ``_s``.

    Attributes:
        referee_id: sent in Welcome and results; default ``host:pid``.
        reconnect_grace_ms: how long a dropped bot may take to reconnect (DESIGN §4).
        hello_timeout_ms: how long a new stream may take to send Hello.
        ping_interval_ms: how often the heartbeat runs (Ping to every session).
        ping_timeout_ms: a session silent this long is closed (FAULTS F-09:
            found within ping_timeout + ping_interval).
        token_recheck_ms: how often live sessions' tokens are checked again
            (revocation closes them); 0 = never.
        default_no_show_timeout_ms: used when a RunMatchRequest says 0.
        default_max_duration_ms: watchdog used when a RunMatchRequest says 0.
        progress_every: a Progress event every this many decisions.
        keepalive_time_ms / keepalive_timeout_ms: HTTP/2 keepalive of the server.
        max_message_bytes: largest message accepted from a bot.
    """

    referee_id: str = ""
    reconnect_grace_ms: int = 3000
    hello_timeout_ms: int = 10_000
    ping_interval_ms: int = 5000
    ping_timeout_ms: int = 15_000
    token_recheck_ms: int = 30_000
    default_no_show_timeout_ms: int = 30_000
    default_max_duration_ms: int = 3_600_000
    progress_every: int = 25
    keepalive_time_ms: int = 10_000
    keepalive_timeout_ms: int = 5000
    max_message_bytes: int = 1 << 20


@dataclass
class Counters:
    """Plain counters of one referee (tests read them; Prometheus has the same)."""

    auth_failures: int = 0
    protocol_errors: int = 0
    not_seated: int = 0
    sessions_opened: int = 0
    sessions_killed: int = 0


class RefereeCore:
    """State shared by the two services: sessions, rooms, settings, counters.

    Attributes:
        registry: the connected bot sessions.
        rooms: running rooms by match id.
        counters: :class:`Counters`.
        shutting_down: set by :meth:`stop`; new streams and matches are refused.
    """

    def __init__(self, token_store: TokenStore, service_token: str, settings: RefereeSettings) -> None:
        if not service_token:
            raise ValueError("service_token must not be empty")
        self.token_store = token_store
        self.service_token = service_token
        self.settings = settings
        self.referee_id = settings.referee_id or f"{socket.gethostname()}:{os.getpid()}"
        self.registry = SessionRegistry()
        self.rooms: dict[int, tuple[Room, asyncio.Task[Any]]] = {}
        self.counters = Counters()
        self.shutting_down = False
        self.server: grpc.aio.Server | None = None
        self.health: health.aio.HealthServicer | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._nonce = 0

    # -- lifecycle ------------------------------------------------------------------
    def start_background(self) -> None:
        """Start the heartbeat / token-recheck sweeper."""
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(), name="referee-sweeper")

    async def stop(self, grace_s: float = 5.0) -> None:
        """Graceful stop: refuse new work, mark NOT_SERVING, let running matches
        and streams end for up to ``grace_s`` seconds, then cancel the rest
        (their matches end as ``infra_error``, never charged to a bot).
        """
        self.shutting_down = True
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        rooms = [task for _, task in self.rooms.values()]
        if rooms:
            await asyncio.wait(rooms, timeout=grace_s)
        for _, task in list(self.rooms.values()):
            task.cancel()  # the room reports infra_error to its worker and MatchEnded to its bots
        try:
            async with asyncio.timeout(1.0):
                while self.rooms:  # RunMatch handlers deliver the results, then leave
                    await asyncio.sleep(0.01)
        except TimeoutError:
            pass
        for session in self.registry.sessions():
            session.kill(grpc.StatusCode.UNAVAILABLE, pb.SHUTTING_DOWN, "referee shutting down")
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.server is not None:
            await self.server.stop(min(grace_s, 1.0))
        await self.token_store.aclose()

    async def _sweep(self) -> None:
        s = self.settings
        last_recheck = time.monotonic()
        while True:
            await asyncio.sleep(s.ping_interval_ms / 1000.0)
            now = time.monotonic()
            self._nonce += 1
            ping = pb.RefereeMessage(ping=pb.Ping(nonce=self._nonce))
            for session in self.registry.sessions():
                if now - session.last_seen > s.ping_timeout_ms / 1000.0:
                    self.counters.sessions_killed += 1
                    session.kill(grpc.StatusCode.DEADLINE_EXCEEDED, pb.PROTOCOL,
                                 f"no message for {s.ping_timeout_ms} ms (heartbeat)")
                else:
                    session.send(ping)
            if s.token_recheck_ms and now - last_recheck >= s.token_recheck_ms / 1000.0:
                last_recheck = now
                await self._recheck_tokens()

    async def _recheck_tokens(self) -> None:
        for session in self.registry.sessions():
            try:
                bot_id = await self.token_store.lookup(session.token)
            except TokenStoreUnavailableError:
                return  # infrastructure trouble: keep everyone connected
            if bot_id != session.bot_id:
                self._auth_failed("revoked")
                session.kill(grpc.StatusCode.UNAUTHENTICATED, pb.UNAUTHENTICATED, "token revoked")

    def _auth_failed(self, reason: str) -> None:
        self.counters.auth_failures += 1
        metrics.AUTH_FAILURES.labels(reason).inc()

    def _protocol_error(self, session: Session | None, kind: str, message: str, match_id: int = 0) -> None:
        self.counters.protocol_errors += 1
        metrics.PROTOCOL_ERRORS.labels(kind).inc()
        if session is not None:
            session.error(pb.PROTOCOL, message, match_id)

    # -- bot messages ---------------------------------------------------------------
    def dispatch(self, session: Session, msg: pb.BotMessage, now: float) -> None:
        """Handle one message of an authenticated session (never raises for bad input)."""
        kind = msg.WhichOneof("kind")
        if kind == "decision":
            d = msg.decision
            binding = session.seats.get(d.match_id)
            if binding is not None and binding.started:
                try:
                    binding.on_decision(d.seq, d.action_index if d.HasField("action_index") else None, now)
                except Exception:  # a referee bug must never be charged to the bot's stream
                    log.exception("match %s: handling a decision failed", d.match_id)
            else:
                self._not_seated(session, d.match_id, d.seq)
        elif kind == "pong":
            pass  # last_seen is updated for every message
        elif kind == "resign":
            binding = session.seats.get(msg.resign.match_id)
            if binding is not None and binding.started:
                try:
                    binding.on_resign()
                except Exception:
                    log.exception("match %s: handling a resignation failed", msg.resign.match_id)
            else:
                self._not_seated(session, msg.resign.match_id, 0)
        elif kind == "hello":
            self._protocol_error(session, "hello_again", "Hello already received on this stream; ignored")
        else:
            self._protocol_error(session, "empty", "empty BotMessage: set one of hello, decision, resign, pong")

    def _not_seated(self, session: Session, match_id: int, seq: int) -> None:
        ended = session.recent_ended.get(match_id)
        if ended is not None and seq:
            reason, late = ended
            code = pb.LATE if seq in late else pb.MATCH_ENDED
            metrics.REJECTED_DECISIONS.labels(pb.RejectionCode.Name(code)).inc()
            session.send(pb.RefereeMessage(decision_rejected=pb.DecisionRejected(
                match_id=match_id, seq=seq, code=code, reason=f"match {match_id} has ended: {reason}")))
            return
        self.counters.not_seated += 1
        metrics.PROTOCOL_ERRORS.labels("not_seated").inc()
        session.error(pb.NOT_SEATED, f"this connection holds no seat in match {match_id}", match_id)


def _error(code: pb.ErrorCode, message: str) -> pb.RefereeMessage:
    return pb.RefereeMessage(error=pb.Error(code=code, message=message))


class RefereeServicer(pb_grpc.RefereeServicer):
    """``Referee.Connect``: authenticate, then read messages until the stream ends."""

    def __init__(self, core: RefereeCore) -> None:
        self.core = core

    async def _refuse(self, context: grpc.aio.ServicerContext, status: grpc.StatusCode,
                      code: pb.ErrorCode,
                      message: str) -> None:
        await context.write(_error(code, message))
        await context.abort(status, message)

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        core = self.core
        if core.shutting_down:
            await self._refuse(context, grpc.StatusCode.UNAVAILABLE, pb.SHUTTING_DOWN, "referee shutting down")
        try:
            first = await asyncio.wait_for(context.read(), core.settings.hello_timeout_ms / 1000.0)
        except TimeoutError:
            core._protocol_error(None, "no_hello", "")
            await self._refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.PROTOCOL,
                               f"no Hello within {core.settings.hello_timeout_ms} ms")
        if first is grpc.aio.EOF:
            return
        kind = first.WhichOneof("kind")
        if kind != "hello":
            core._protocol_error(None, "no_hello", "")
            await self._refuse(context, grpc.StatusCode.FAILED_PRECONDITION, pb.PROTOCOL,
                               f"the first message must be Hello, got {kind or 'an empty BotMessage'}")
        hello = first.hello
        if not hello.token:
            core._auth_failed("missing")
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.UNAUTHENTICATED, "Hello.token is missing")
        try:
            bot_id = await core.token_store.lookup(hello.token)
        except TokenStoreUnavailableError as exc:
            log.warning("token store unavailable: %s", exc)
            await self._refuse(context, grpc.StatusCode.UNAVAILABLE, pb.UNAVAILABLE,
                               "token store unavailable, try again later")
        if bot_id is None:
            core._auth_failed("invalid")
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.UNAUTHENTICATED,
                               "unknown or revoked token")
        assert bot_id is not None  # _refuse() raised otherwise
        session = Session(
            bot_id=bot_id, token=hello.token, name=hello.bot_name[:100], version=hello.bot_version[:50],
            games=list(hello.games)[:20], capacity=hello.max_concurrent_matches, context=context,
        )
        session.task = asyncio.current_task()
        session.last_seen = time.monotonic()
        await context.write(pb.RefereeMessage(welcome=pb.Welcome(bot_id=bot_id, referee_id=core.referee_id)))
        core.counters.sessions_opened += 1
        metrics.SESSIONS.inc()
        writer = asyncio.create_task(session.write_loop())
        core.registry.add(session)
        lost = Verdict.DISCONNECT
        try:
            read = context.read
            dispatch = core.dispatch
            monotonic = time.monotonic
            while True:
                msg = await read()
                if msg is grpc.aio.EOF:
                    break
                now = session.last_seen = monotonic()
                dispatch(session, msg, now)
                if writer.done():
                    break
        except asyncio.CancelledError:
            if session.kill_reason is None:
                raise  # the RPC was cancelled (client gone): a disconnect
        except Exception as exc:  # undecodable bytes, transport error: the stream crashed
            log.info("bot %s session %s: stream error: %r", bot_id, session.id, exc)
            lost = Verdict.CRASH
        finally:
            session.close()
            core.registry.remove(session, lost)
            metrics.SESSIONS.dec()
        if session.kill_reason is not None:
            code, error_code, reason = session.kill_reason
            writer.cancel()
            try:
                await context.write(_error(error_code, reason))
            except Exception:
                pass
            await context.abort(code, reason)
        try:
            await asyncio.wait_for(writer, 1.0)
        except (TimeoutError, Exception):
            writer.cancel()


class MatchControlServicer(pb_grpc.MatchControlServicer):
    """``MatchControl.RunMatch``: run one match attempt and stream its events."""

    def __init__(self, core: RefereeCore) -> None:
        self.core = core

    async def RunMatch(  # noqa: N802
        self, request: pb.RunMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.MatchEvent]:
        core = self.core
        metadata = {k: v for k, v in (context.invocation_metadata() or ())}
        given = metadata.get(SERVICE_TOKEN_HEADER, "")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), core.service_token.encode()):
            core._auth_failed("service_token")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"missing or wrong {SERVICE_TOKEN_HEADER}")
        if core.shutting_down:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "referee shutting down")
        s = core.settings
        try:
            spec = MatchSpec.from_request(request, default_no_show_ms=s.default_no_show_timeout_ms,
                                          default_max_duration_ms=s.default_max_duration_ms)
        except MatchSpecError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        running = core.rooms.get(spec.match_id)
        if running is not None:
            old_room, old_task = running
            if spec.attempt <= old_room.spec.attempt:
                await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                    f"match {spec.match_id} attempt {old_room.spec.attempt} is running")
            old_task.cancel()  # a newer attempt supersedes it (its worker gets infra_error)
        events: collections.deque[pb.MatchEvent] = collections.deque()
        wake = asyncio.Event()

        def emit(event: pb.MatchEvent) -> None:
            events.append(event)
            wake.set()

        room = Room(spec, core.registry, emit=emit, referee_id=core.referee_id,
                    reconnect_grace_ms=s.reconnect_grace_ms, progress_every=s.progress_every)
        task = asyncio.create_task(room.run(), name=f"match-{spec.match_id}-{spec.attempt}")
        core.rooms[spec.match_id] = (room, task)
        try:
            while True:
                while events:
                    event = events.popleft()
                    yield event
                    if event.HasField("result"):
                        return
                if task.done() and not events:
                    if not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                    return
                wake.clear()
                waiter = asyncio.ensure_future(wake.wait())
                await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
        finally:
            if not task.done():
                task.cancel()
            if core.rooms.get(spec.match_id, (None,))[0] is room:
                del core.rooms[spec.match_id]


def _server_options(s: RefereeSettings) -> list[tuple[str, Any]]:
    return [
        ("grpc.keepalive_time_ms", s.keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", s.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_receive_message_length", s.max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]


async def create_server(
    address: str = "127.0.0.1:0", *, token_store: TokenStore, service_token: str,
    settings: RefereeSettings | None = None, **overrides: Any,
) -> tuple[grpc.aio.Server, int]:
    """Build and start a referee server (must run inside an event loop).

    Args:
        address: ``host:port`` to bind; port 0 picks a free port (tests).
        token_store: where bot tokens are checked (:class:`~referee.tokens.RedisTokenStore`
            in production, :class:`~referee.tokens.StaticTokenStore` in tests).
        service_token: the secret workers send as ``x-parterre-service-token``.
        settings: tunables; ``overrides`` replace single fields
            (e.g. ``reconnect_grace_ms=500``).

    Returns:
        ``(server, port)``: the started ``grpc.aio.Server`` (its ``referee``
        attribute is the :class:`RefereeCore`) and the bound port.

    Raises:
        RuntimeError: the address could not be bound.
        ValueError: empty service token or unknown setting.
    """
    s = dataclasses.replace(settings or RefereeSettings(), **overrides)
    core = RefereeCore(token_store, service_token, s)
    server = grpc.aio.server(options=_server_options(s))
    pb_grpc.add_RefereeServicer_to_server(RefereeServicer(core), server)
    pb_grpc.add_MatchControlServicer_to_server(MatchControlServicer(core), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise RuntimeError(f"could not bind {address}")
    await server.start()
    for name in ("", "parterre.v1.Referee", "parterre.v1.MatchControl"):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    core.server = server
    core.health = health_servicer
    core.start_background()
    server.referee = core  # type: ignore[attr-defined,unused-ignore]
    log.info("referee %s listening on port %d", core.referee_id, port)
    return server, port


def core_of(server: grpc.aio.Server) -> RefereeCore:
    """The :class:`RefereeCore` of a server made by :func:`create_server`."""
    core: RefereeCore = server.referee  # type: ignore[attr-defined,unused-ignore]
    return core


async def serve(
    address: str, *, service_token: str, token_store: TokenStore | None = None, redis_url: str | None = None,
    token_key: str = DEFAULT_KEY, settings: RefereeSettings | None = None, grace_s: float = 10.0,
    **overrides: Any,
) -> None:
    """Run a referee until SIGINT/SIGTERM, then stop gracefully (``parterre referee``).

    Args:
        address / service_token / settings / overrides: as :func:`create_server`.
        token_store: where tokens are checked; default a
            :class:`~referee.tokens.RedisTokenStore` on ``redis_url``.
        redis_url: redis-py URL of the ladder's Redis (when no ``token_store``).
        token_key: the Redis hash of live tokens.
        grace_s: how long running matches get to finish on shutdown.

    Raises:
        ValueError: neither ``token_store`` nor ``redis_url`` given.
    """
    if token_store is None:
        if not redis_url:
            raise ValueError("serve() needs a token_store or a redis_url")
        token_store = RedisTokenStore(redis_url, key=token_key)
    server, port = await create_server(address, token_store=token_store, service_token=service_token,
                                       settings=settings, **overrides)
    gc.freeze()  # start-up objects out of the collector's way (DESIGN §9: a lean hot path)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    log.info("referee serving on port %d; SIGINT/SIGTERM stops it", port)
    await stop.wait()
    await core_of(server).stop(grace_s)
