"""The state one referee process shares between its services.

:class:`RefereeCore` holds the bot sessions, the running rooms, the settings
and the counters; it dispatches the messages of authenticated bot streams,
runs the heartbeat / token recheck, and stops gracefully. The gRPC services
that use it are in ``referee/connect.py`` (``Referee.Connect``) and
``referee/control.py`` (``MatchControl.RunMatch``); ``referee/server.py``
assembles them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health

from proto.parterre.v1 import referee_pb2 as pb
from referee import metrics
from referee.cluster import Cluster
from referee.headers import SERVICE_TOKEN_HEADER
from referee.room import Room, rejection_name
from referee.sessions import Session, SessionRegistry
from referee.tokens import TokenStore, TokenStoreUnavailableError
from referee.trials import TrialBook

log = logging.getLogger(__name__)


STREAMS_HEADROOM = 4
"""Streams a bot may hold beyond one per match it may play at once: a reconnecting bot's new
streams while the heartbeat has not yet found the old, half-open ones dead."""


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Tunables of a referee; durations in ms unless the name says ``_s``.

    Attributes:
        referee_id: sent in Welcome and results; default ``host:pid``.
        reconnect_grace_ms: how long a dropped bot may take to reconnect (docs/architecture.md "Verdicts").
        hello_timeout_ms: how long a new stream may take to send Hello.
        ping_interval_ms: how often the heartbeat runs (Ping to every session).
        ping_timeout_ms: a session silent this long is closed (docs/faults.md F-09:
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
            match it actually plays at the moment (at least one; never per
            match it *declared*: F-24), plus one per decision request sent to
            it; the burst is one second's worth. Messages over the limit are
            dropped with an ``Error(PROTOCOL)`` (at most one per second).
        rate_limit_kill_after: a stream that had this many messages dropped is
            closed with ``RESOURCE_EXHAUSTED``.
        max_declared_concurrency: the most matches one stream is given at once,
            whatever ``Hello.max_concurrent_matches`` says (a larger declaration
            is capped, not refused).
        max_streams_per_bot: open streams one bot (one token) may hold on this
            referee; the next one is refused with ``RESOURCE_EXHAUSTED`` before
            its Welcome; 0 = no limit. The default, 68, is one stream per match
            for as many matches as one stream may be given at once
            (``max_declared_concurrency``, 64) plus :data:`STREAMS_HEADROOM`.
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
    max_declared_concurrency: int = 64
    max_streams_per_bot: int = 64 + STREAMS_HEADROOM


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
    streams_refused: int = 0


class RefereeCore:
    """State shared by the two services: sessions, rooms, settings, counters.

    Attributes:
        registry: the connected bot sessions.
        rooms: running rooms by match id (the ladder's).
        trials: running trials' rooms by trial number, apart from ``rooms`` (referee/trials.py).
        trial_book: the running trials' credential digests and seat keys.
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
        self.trials: dict[int, tuple[Room, asyncio.Task[Any]]] = {}
        self.trial_book = TrialBook()
        self.counters = Counters()
        self.shutting_down = False
        self.server: grpc.aio.Server | None = None
        self.control_server: grpc.aio.Server | None = None
        self.control_port = 0
        self.health: health.aio.HealthServicer | None = None
        self.cluster: Cluster | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._nonce = 0
        self.open_streams: dict[int, int] = {}
        """Bot id -> streams of that bot past the handshake (``max_streams_per_bot``)."""

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
        rooms = [task for _, task in [*self.rooms.values(), *self.trials.values()]]
        if rooms:
            await asyncio.wait(rooms, timeout=grace_s)
        for _, task in [*self.rooms.values(), *self.trials.values()]:
            task.cancel()  # the room reports infra_error to its worker and MatchEnded to its bots
        with contextlib.suppress(TimeoutError):  # rooms still open after 1 s are left to the server stop
            async with asyncio.timeout(1.0):
                while self.rooms or self.trials:  # RunMatch handlers deliver the results, then leave
                    await asyncio.sleep(0.01)
        for session in self.registry.sessions():
            session.kill(grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_SHUTTING_DOWN, "referee shutting down")
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
                    session.kill(grpc.StatusCode.DEADLINE_EXCEEDED, pb.ERROR_CODE_PROTOCOL,
                                 f"no message for {s.ping_timeout_ms} ms (heartbeat)")
                elif session.writing and now - session.write_started > s.ping_timeout_ms / 1000.0:
                    # a bot that keeps sending (Pongs) but stopped reading: its window holds our write
                    self.counters.sessions_killed += 1
                    session.stalled(f"a message written {s.ping_timeout_ms} ms ago")
                else:
                    session.send(ping)
            if s.token_recheck_ms and now - last_recheck >= s.token_recheck_ms / 1000.0:
                last_recheck = now
                await self._recheck_tokens()

    async def _recheck_tokens(self) -> None:
        """Close the sessions whose token was revoked (one batched lookup; docs/faults.md, "Impersonation").
        A trial's sessions are not the token store's: they end with their trial (referee/trials.py)."""
        sessions = [s for s in self.registry.sessions() if s.token_digest and not s.closed and not s.trial]
        if not sessions:
            return
        try:
            bot_ids = await self.token_store.lookup_digests([s.token_digest for s in sessions])
        except TokenStoreUnavailableError:
            return  # infrastructure trouble: keep everyone connected
        for session, bot_id in zip(sessions, bot_ids, strict=True):
            if bot_id != session.bot_id:
                self.auth_failed("revoked")
                log.info("bot %s session %s: token revoked, closing the stream", session.bot_id, session.id,
                         extra={"bot_id": session.bot_id})
                session.kill(grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED, "token revoked")

    def auth_failed(self, reason: str) -> None:
        """Count a refused stream or call (``reason`` is the Prometheus label)."""
        self.counters.auth_failures += 1
        metrics.AUTH_FAILURES.labels(reason).inc()

    def protocol_error(self, session: Session | None, kind: str, message: str, match_id: int = 0) -> None:
        """Count a malformed or unexpected bot message; answer ``session`` with ``Error(PROTOCOL)`` when given."""
        self.counters.protocol_errors += 1
        metrics.PROTOCOL_ERRORS.labels(kind).inc()
        if session is not None:
            session.error(pb.ERROR_CODE_PROTOCOL, message, match_id)

    # -- bot messages ---------------------------------------------------------------
    def dispatch(self, session: Session, msg: pb.BotMessage, now: float) -> None:
        """Handle one message of an authenticated session (never raises for bad input)."""
        kind = msg.WhichOneof("kind")
        if kind == "decision":
            d = msg.decision
            binding = session.seats.get(d.match_id)
            if binding is not None and binding.started:
                try:
                    binding.on_decision(d.seq, d.action_index if d.HasField("action_index") else None, now,
                                        d.attempt, d.debug)
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
            self.protocol_error(session, "hello_again", "Hello already received on this stream; ignored")
        else:
            self.protocol_error(session, "empty", "empty BotMessage: set one of hello, decision, resign, pong")

    def _not_seated(self, session: Session, match_id: int, seq: int) -> None:
        ended = session.recent_ended.get(match_id)
        if ended is not None and seq:
            reason, late = ended
            code = pb.REJECTION_CODE_LATE if seq in late else pb.REJECTION_CODE_MATCH_ENDED
            metrics.REJECTED_DECISIONS.labels(rejection_name(code)).inc()
            session.send(pb.RefereeMessage(decision_rejected=pb.DecisionRejected(
                match_id=match_id, seq=seq, code=code, reason=f"match {match_id} has ended: {reason}")))
            return
        self.counters.not_seated += 1
        metrics.PROTOCOL_ERRORS.labels("not_seated").inc()
        session.error(pb.ERROR_CODE_NOT_SEATED, f"this connection holds no seat in match {match_id}", match_id)

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
            session.error(pb.ERROR_CODE_PROTOCOL,
                          f"rate limit: more than {s.max_messages_per_s * max(1, session.assigned)} messages/s "
                          f"on this connection ({s.max_messages_per_s} per match it plays); message dropped "
                          f"({session.rate_dropped} so far, the stream is closed after {s.rate_limit_kill_after})")
        return False
