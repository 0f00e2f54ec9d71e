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
from referee import live, metrics
from referee.cluster import RELAY_BOT_HEADER, RELAY_CLOSE_NONCE, RELAY_FROM_HEADER, Cluster, ClusterConfig
from referee.room import MatchSpec, MatchSpecError, Room
from referee.sessions import RateLimit, Session, SessionRegistry
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
            (revocation closes them; one batched lookup per check); 0 = never.
        default_no_show_timeout_ms: used when a RunMatchRequest says 0.
        default_max_duration_ms: watchdog used when a RunMatchRequest says 0.
        progress_every: a Progress event every this many decisions.
        progress_interval_ms: and at least this often while a match runs (or
            waits for its bots), so the worker can extend its lease.
        keepalive_time_ms / keepalive_timeout_ms: HTTP/2 keepalive of the server.
        max_message_bytes: largest message accepted (bots and workers); a
            bigger one ends the stream with ``RESOURCE_EXHAUSTED``.
        max_messages_per_s: messages a bot stream may send per second, per
            match it can play at once (``Hello.max_concurrent_matches``); the
            burst is one second's worth. Messages over the limit are dropped
            with an ``Error(PROTOCOL)`` (at most one per second).
        rate_limit_kill_after: a stream that had this many messages dropped is
            closed with ``RESOURCE_EXHAUSTED``.
    """

    referee_id: str = ""
    reconnect_grace_ms: int = 3000
    hello_timeout_ms: int = 10_000
    ping_interval_ms: int = 5000
    ping_timeout_ms: int = 15_000
    token_recheck_ms: int = 5000
    default_no_show_timeout_ms: int = 30_000
    default_max_duration_ms: int = 3_600_000
    progress_every: int = 25
    progress_interval_ms: int = 10_000
    keepalive_time_ms: int = 10_000
    keepalive_timeout_ms: int = 5000
    max_message_bytes: int = 64 << 10
    max_messages_per_s: int = 500
    rate_limit_kill_after: int = 2000


@dataclass
class Counters:
    """Plain counters of one referee (tests read them; Prometheus has the same)."""

    auth_failures: int = 0
    protocol_errors: int = 0
    not_seated: int = 0
    sessions_opened: int = 0
    sessions_killed: int = 0
    rate_limited: int = 0
    undecodable: int = 0


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
        self.control_server: grpc.aio.Server | None = None
        self.control_port = 0
        self.health: health.aio.HealthServicer | None = None
        self.cluster: Cluster | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._nonce = 0

    def service_token_ok(self, metadata: dict[str, Any]) -> bool:
        """True when ``metadata`` carries this referee's service token (constant-time compare)."""
        given = metadata.get(SERVICE_TOKEN_HEADER, "")
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.service_token.encode())

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
        if self.cluster is not None:
            await self.cluster.stop()
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
        if self.control_server is not None:
            await self.control_server.stop(min(grace_s, 1.0))
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
        """Close the sessions whose token was revoked (one batched lookup; FAULTS F-06)."""
        sessions = [s for s in self.registry.sessions() if s.token_digest and not s.closed]
        if not sessions:
            return
        try:
            bot_ids = await self.token_store.lookup_digests([s.token_digest for s in sessions])
        except TokenStoreUnavailableError:
            return  # infrastructure trouble: keep everyone connected
        for session, bot_id in zip(sessions, bot_ids, strict=True):
            if bot_id != session.bot_id:
                self._auth_failed("revoked")
                log.info("bot %s session %s: token revoked, closing the stream", session.bot_id, session.id,
                         extra={"bot_id": session.bot_id})
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
                    log.exception("match %s: handling a decision failed", d.match_id,
                                  extra={"match_id": d.match_id, "bot_id": session.bot_id})
            elif d.match_id in session.relays:  # a match hosted by another referee
                session.relays[d.match_id].forward(msg)
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
                    log.exception("match %s: handling a resignation failed", msg.resign.match_id,
                                  extra={"match_id": msg.resign.match_id, "bot_id": session.bot_id})
            elif msg.resign.match_id in session.relays:
                session.relays[msg.resign.match_id].forward(msg)
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

    def rate_limited(self, session: Session, now: float) -> bool:
        """Count a message dropped by the rate limit; True when the stream must now be closed."""
        s = self.settings
        self.counters.rate_limited += 1
        metrics.PROTOCOL_ERRORS.labels("rate_limited").inc()
        session.rate_dropped += 1
        if session.rate_dropped >= s.rate_limit_kill_after:
            return True
        if now - session.rate_warned_at >= 1.0:
            session.rate_warned_at = now
            session.error(pb.PROTOCOL, f"rate limit: more than {s.max_messages_per_s * session.capacity} messages/s "
                                       f"on this connection; message dropped ({session.rate_dropped} so far, the "
                                       f"stream is closed after {s.rate_limit_kill_after})")
        return False


def _error(code: pb.ErrorCode, message: str) -> pb.RefereeMessage:
    return pb.RefereeMessage(error=pb.Error(code=code, message=message))


class Undecodable:
    """What the request deserializer returns for bytes that are not a ``BotMessage``
    (so the referee can answer with a clear error instead of a bare stream failure).

    Attributes:
        size: length of the bytes.
        error: the protobuf decoder's complaint.
    """

    __slots__ = ("size", "error")

    def __init__(self, size: int, error: str) -> None:
        self.size = size
        self.error = error


def decode_bot_message(data: bytes) -> pb.BotMessage | Undecodable:
    """Request deserializer of ``Referee.Connect``: never raises."""
    try:
        return pb.BotMessage.FromString(data)
    except Exception as exc:  # DecodeError, RecursionError on absurd nesting, ...
        return Undecodable(len(data), f"{type(exc).__name__}: {str(exc)[:200]}")


class RefereeServicer(pb_grpc.RefereeServicer):
    """``Referee.Connect``: authenticate, then read messages until the stream ends.

    Two kinds of stream: a bot's own (``Hello.token`` checked against the
    token store) and a relay from another referee of the cluster (service
    token and ``x-parterre-relay-bot`` in metadata; referee/cluster.py).

    Args:
        core: the referee.
        relay_only: True on the internal control endpoint: only relay streams
            are accepted there (bots are refused with ``PERMISSION_DENIED``).
    """

    def __init__(self, core: RefereeCore, *, relay_only: bool = False) -> None:
        self.core = core
        self.relay_only = relay_only

    async def _refuse(self, context: grpc.aio.ServicerContext, status: grpc.StatusCode,
                      code: pb.ErrorCode,
                      message: str) -> None:
        await context.write(_error(code, message))
        await context.abort(status, message)

    async def _authenticate(self, context: grpc.aio.ServicerContext) -> tuple[pb.Hello, int, str] | None:
        """Read Hello and check who is speaking; returns ``(hello, bot_id, relay_from)``,
        or None when the client left before saying anything.

        Aborts the RPC (raises) on any failure, after an ``Error`` message.
        """
        core = self.core
        metadata = {k: v for k, v in (context.invocation_metadata() or ())}
        relay_bot = metadata.get(RELAY_BOT_HEADER)
        relay_from = ""
        if relay_bot is not None:
            if not core.service_token_ok(metadata) or not str(relay_bot).isdigit():
                core._auth_failed("relay")
                await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.UNAUTHENTICATED,
                                   "relay streams need the service token")
            relay_from = str(metadata.get(RELAY_FROM_HEADER) or "?")[:100]
        elif self.relay_only:
            core._auth_failed("control_endpoint")
            await self._refuse(context, grpc.StatusCode.PERMISSION_DENIED, pb.UNAUTHENTICATED,
                               "this is the referee's internal endpoint; bots connect to the bot endpoint")
        try:
            first = await asyncio.wait_for(context.read(), core.settings.hello_timeout_ms / 1000.0)
        except TimeoutError:
            core._protocol_error(None, "no_hello", "")
            await self._refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.PROTOCOL,
                               f"no Hello within {core.settings.hello_timeout_ms} ms")
        if first is grpc.aio.EOF:
            return None
        if isinstance(first, Undecodable):
            core.counters.undecodable += 1
            core._protocol_error(None, "undecodable", "")
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, pb.PROTOCOL,
                               f"the first message ({first.size} bytes) is not a BotMessage: {first.error}")
        kind = first.WhichOneof("kind")
        if kind != "hello":
            core._protocol_error(None, "no_hello", "")
            await self._refuse(context, grpc.StatusCode.FAILED_PRECONDITION, pb.PROTOCOL,
                               f"the first message must be Hello, got {kind or 'an empty BotMessage'}")
        hello = first.hello
        if relay_bot is not None:
            return hello, int(relay_bot), relay_from
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
        return hello, bot_id, ""

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        core = self.core
        if core.shutting_down:
            await self._refuse(context, grpc.StatusCode.UNAVAILABLE, pb.SHUTTING_DOWN, "referee shutting down")
        who = await self._authenticate(context)
        if who is None:
            return
        hello, bot_id, relay_from = who
        capacity = 1 if relay_from else hello.max_concurrent_matches
        session = Session(
            bot_id=bot_id, token=hello.token, name=hello.bot_name[:100], version=hello.bot_version[:50],
            games=[g[:50] for g in list(hello.games)[:20]], capacity=capacity, context=context,
            relay_from=relay_from,
        )
        s = core.settings
        if s.max_messages_per_s > 0:
            rate = float(s.max_messages_per_s * session.capacity)
            session.limiter = RateLimit(rate, rate)
        del hello, who  # the token is not kept beyond its digest
        session.task = asyncio.current_task()
        session.last_seen = time.monotonic()
        await context.write(pb.RefereeMessage(welcome=pb.Welcome(bot_id=bot_id, referee_id=core.referee_id)))
        core.counters.sessions_opened += 1
        metrics.SESSIONS.inc()
        writer = asyncio.create_task(session.write_loop())
        core.registry.add(session)
        lost = Verdict.DISCONNECT
        relay_closed = False  # a relay's lender said goodbye (RELAY_CLOSE_NONCE) before the end
        try:
            read = context.read
            dispatch = core.dispatch
            monotonic = time.monotonic
            limiter = session.limiter
            relay = bool(relay_from)
            while True:
                msg = await read()
                if msg is grpc.aio.EOF:
                    break
                if relay and isinstance(msg, pb.BotMessage) and msg.HasField("pong") \
                        and msg.pong.nonce == RELAY_CLOSE_NONCE:
                    relay_closed = True
                    continue
                now = session.last_seen = monotonic()
                if limiter is not None and not limiter.allow(now):
                    if core.rate_limited(session, now):
                        session.kill_reason = (grpc.StatusCode.RESOURCE_EXHAUSTED, pb.PROTOCOL,
                                               f"rate limit: {session.rate_dropped} messages dropped; stream closed")
                        lost = Verdict.CRASH
                        break
                    continue
                if isinstance(msg, Undecodable):
                    core.counters.undecodable += 1
                    core._protocol_error(None, "undecodable", "")
                    session.kill_reason = (grpc.StatusCode.INVALID_ARGUMENT, pb.PROTOCOL,
                                           f"a message of {msg.size} bytes is not a BotMessage: {msg.error}; "
                                           "stream closed")
                    lost = Verdict.CRASH
                    break
                dispatch(session, msg, now)
                if writer.done():
                    break
        except asyncio.CancelledError:
            if session.kill_reason is None:
                raise  # the RPC was cancelled (client gone): a disconnect
        except Exception as exc:  # transport error: the stream crashed
            log.info("bot %s session %s: stream error: %s", bot_id, session.id, type(exc).__name__,
                     extra={"bot_id": bot_id})
            lost = Verdict.CRASH
        finally:
            if session.relay_from and not relay_closed:
                session.infra_lost = True  # the other referee died or froze: not the bot's doing
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
        if not core.service_token_ok(metadata):
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
        keepalive_s = s.progress_interval_ms / 1000.0 if s.progress_interval_ms > 0 else None
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
                done, _ = await asyncio.wait({waiter, task}, timeout=keepalive_s,
                                             return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if not done and not events:  # nothing for a while: tell the worker we are alive
                    events.append(pb.MatchEvent(progress=pb.Progress(step=len(room.steps),
                                                                     decisions=room.decisions)))
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


def _add_referee_service(server: grpc.aio.Server, servicer: RefereeServicer) -> None:
    """Register ``Referee.Connect`` with a deserializer that never raises (:func:`decode_bot_message`)."""
    handler = grpc.method_handlers_generic_handler("parterre.v1.Referee", {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=decode_bot_message,
            response_serializer=pb.RefereeMessage.SerializeToString),
    })
    server.add_generic_rpc_handlers((handler,))


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """TLS of the bot endpoint (PEM bytes).

    Attributes:
        cert_chain: the server certificate (chain), PEM.
        private_key: its private key, PEM.
    """

    cert_chain: bytes
    private_key: bytes

    @classmethod
    def from_files(cls, cert_path: str, key_path: str) -> TlsConfig:
        """Read ``PARTERRE_TLS_CERT`` / ``PARTERRE_TLS_KEY`` style files.

        Raises:
            ValueError: a file cannot be read or is not PEM (the message names it).
        """
        out = []
        for what, path in (("certificate", cert_path), ("private key", key_path)):
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise ValueError(f"TLS {what} {path}: {exc.strerror}") from None
            if b"-----BEGIN" not in data:
                raise ValueError(f"TLS {what} {path}: not a PEM file")
            out.append(data)
        return cls(out[0], out[1])


def _advertised(bind: str, port: int, explicit: str) -> str:
    """The address other processes should use for a socket bound at ``bind`` (port ``port``)."""
    if explicit:
        host, _, p = explicit.rpartition(":")
        return f"{host}:{port}" if p == "0" else explicit
    host = bind.rpartition(":")[0]
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = socket.gethostname()
    return f"{host}:{port}"


async def create_server(
    address: str = "127.0.0.1:0", *, token_store: TokenStore, service_token: str,
    settings: RefereeSettings | None = None, control_address: str | None = None, tls: TlsConfig | None = None,
    cluster: ClusterConfig | None = None, **overrides: Any,
) -> tuple[grpc.aio.Server, int]:
    """Build and start a referee server (must run inside an event loop).

    Args:
        address: ``host:port`` of the bot endpoint; port 0 picks a free port (tests).
        token_store: where bot tokens are checked (:class:`~referee.tokens.RedisTokenStore`
            in production, :class:`~referee.tokens.StaticTokenStore` in tests).
        service_token: the secret workers send as ``x-parterre-service-token``.
        settings: tunables; ``overrides`` replace single fields
            (e.g. ``reconnect_grace_ms=500``).
        control_address: when given, ``MatchControl`` (and relay streams from
            other referees) are served on this separate ``host:port`` only,
            not on the bot endpoint (``parterre referee --control-address``);
            its port is ``core.control_port``.
        tls: serve the bot endpoint with TLS (``PARTERRE_TLS_CERT``/``_KEY``);
            the control endpoint stays plain (an internal network).
        cluster: join a cluster of referees through Redis (referee/cluster.py);
            port 0 in its addresses means the bound ports.

    Returns:
        ``(server, port)``: the started ``grpc.aio.Server`` of the bot endpoint
        (its ``referee`` attribute is the :class:`RefereeCore`) and its port.

    Raises:
        RuntimeError: an address could not be bound.
        ValueError: empty service token or unknown setting.
    """
    s = dataclasses.replace(settings or RefereeSettings(), **overrides)
    core = RefereeCore(token_store, service_token, s)
    server = grpc.aio.server(options=_server_options(s))
    _add_referee_service(server, RefereeServicer(core))
    services = ["", "parterre.v1.Referee"]
    if control_address is None:
        pb_grpc.add_MatchControlServicer_to_server(MatchControlServicer(core), server)
        services.append("parterre.v1.MatchControl")
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if tls is not None:
        creds = grpc.ssl_server_credentials([(tls.private_key, tls.cert_chain)])
        port = server.add_secure_port(address, creds)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise RuntimeError(f"could not bind {address}")
    control_server = None
    if control_address is not None:
        control_server = grpc.aio.server(options=_server_options(s))
        pb_grpc.add_MatchControlServicer_to_server(MatchControlServicer(core), control_server)
        _add_referee_service(control_server, RefereeServicer(core, relay_only=True))
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, control_server)
        core.control_port = control_server.add_insecure_port(control_address)
        if core.control_port == 0:
            raise RuntimeError(f"could not bind {control_address}")
        services.append("parterre.v1.MatchControl")
    await server.start()
    if control_server is not None:
        await control_server.start()
    for name in services:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    core.server = server
    core.control_server = control_server
    core.health = health_servicer
    core.start_background()
    server.referee = core  # type: ignore[attr-defined,unused-ignore]
    if cluster is not None:
        bot_address = _advertised(address, port, cluster.address)
        ctl = _advertised(control_address, core.control_port, cluster.control_address) if control_address else ""
        core.cluster = Cluster(core, dataclasses.replace(cluster, address=bot_address, control_address=ctl))
        await core.cluster.start()
    log.info("referee %s listening on port %d%s%s", core.referee_id, port, " (TLS)" if tls else "",
             f", control on port {core.control_port}" if control_server is not None else "")
    return server, port


def core_of(server: grpc.aio.Server) -> RefereeCore:
    """The :class:`RefereeCore` of a server made by :func:`create_server`."""
    core: RefereeCore = server.referee  # type: ignore[attr-defined,unused-ignore]
    return core


async def serve(
    address: str, *, service_token: str, token_store: TokenStore | None = None, redis_url: str | None = None,
    token_key: str = DEFAULT_KEY, settings: RefereeSettings | None = None, grace_s: float = 10.0,
    control_address: str | None = None, tls: TlsConfig | None = None, cluster: bool = True,
    advertise_address: str = "", advertise_control_address: str = "", cluster_namespace: str = "parterre",
    **overrides: Any,
) -> None:
    """Run a referee until SIGINT/SIGTERM, then stop gracefully (``parterre referee``).

    Args:
        address / service_token / settings / control_address / tls / overrides:
            as :func:`create_server`.
        token_store: where tokens are checked; default a
            :class:`~referee.tokens.RedisTokenStore` on ``redis_url``.
        redis_url: redis-py URL of the ladder's Redis (tokens, and the cluster).
        token_key: the Redis hash of live tokens.
        grace_s: how long running matches get to finish on shutdown.
        cluster: publish presence and relay bots with the other referees on
            ``redis_url`` (referee/cluster.py); needs ``redis_url``.
        advertise_address / advertise_control_address: addresses other
            processes use to reach this referee (default: the bound ones; a
            wildcard host becomes this machine's host name).
        cluster_namespace: prefix of the cluster's Redis keys (``PARTERRE_CLUSTER_NAMESPACE``).

    Raises:
        ValueError: neither ``token_store`` nor ``redis_url`` given.
    """
    if token_store is None:
        if not redis_url:
            raise ValueError("serve() needs a token_store or a redis_url")
        token_store = RedisTokenStore(redis_url, key=token_key)
    if redis_url:
        live.configure(redis_url, cluster_namespace)  # spectator steps of running matches (referee/live.py)
    cluster_config = None
    if cluster and redis_url:
        cluster_config = ClusterConfig(redis_url, address=advertise_address, control_address=advertise_control_address,
                                       namespace=cluster_namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before serving: a stop asked at any time is graceful
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    server, port = await create_server(address, token_store=token_store, service_token=service_token,
                                       settings=settings, control_address=control_address, tls=tls,
                                       cluster=cluster_config, **overrides)
    gc.freeze()  # start-up objects out of the collector's way (DESIGN §9: a lean hot path)
    log.info("referee serving on port %d; SIGINT/SIGTERM stops it", port)
    await stop.wait()
    await core_of(server).stop(grace_s)
