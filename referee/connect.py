"""``Referee.Connect``: a bot's (or a relay's) stream, after the handshake.

Tokens and identity: docs/architecture.md, "Bot identity and tokens".

:class:`RefereeServicer` authenticates the stream (``referee/handshake.py``),
opens a :class:`~referee.sessions.Session`, then reads messages until the
stream ends, handing each to :meth:`RefereeCore.dispatch`;
:func:`add_referee_service` registers it with a deserializer that never raises.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
import grpc.aio

from proto import contract
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee import metrics
from referee.core import RefereeCore
from referee.handshake import Undecodable, authenticate, closing_trailers, error_message, refuse
from referee.headers import RELAY_CLOSE_NONCE
from referee.sessions import RateLimit, Session
from referee.trials import TrialSeat
from referee.verdicts import Verdict

log = logging.getLogger(__name__)

STREAM_GONE: tuple[type[BaseException], ...] = (grpc.aio.UsageError, grpc.aio.AbortError, grpc.RpcError,
                                                grpc.aio.InternalError, RuntimeError, asyncio.InvalidStateError)
"""What writing to a stream whose RPC already ended raises (grpc-python aio; ``InternalError`` covers
``ExecuteBatchError``, a write on a connection the client reset: seen at the end of a bench run)."""


def _retrieve(task: asyncio.Task[None]) -> None:
    """Done callback: read a finished writer's exception so that asyncio does not log it as lost
    ("Task exception was never retrieved"), however its Connect ended."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("a session's writer ended with %r", task.exception())


async def stop_writer(writer: asyncio.Task[None], session_id: int, timeout_s: float = 1.0) -> None:
    """Cancel ``writer`` (``Session.write_loop``) and wait for it to end, reading whatever
    it raised (a write on a stream the referee is killing fails): never "Task
    exception was never retrieved" (F-27). Waits at most ``timeout_s``.
    """
    writer.cancel()
    writer.add_done_callback(_retrieve)  # also when the wait below is cut short
    await asyncio.wait({writer}, timeout=timeout_s)
    if writer.done() and not writer.cancelled() and writer.exception() is not None:
        log.debug("session %s: writer ended with %r", session_id, writer.exception())


class RefereeServicer(pb_grpc.RefereeServicer):
    """``Referee.Connect``: authenticate, then read messages until the stream ends.

    The handshake (who is speaking) is :func:`referee.handshake.authenticate`.

    Args:
        core: the referee.
        relay_only: True on the internal control endpoint: only relay streams
            are accepted there (bots are refused with ``PERMISSION_DENIED``).
    """

    def __init__(self, core: RefereeCore, *, relay_only: bool = False) -> None:
        self.core = core
        self.relay_only = relay_only

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        core = self.core
        if core.shutting_down:
            await refuse(context, grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_SHUTTING_DOWN, "referee shutting down")
        who = await authenticate(core, context, relay_only=self.relay_only)
        if who is None:
            return
        hello, bot_id, relay_from, trial = who
        del who
        s = core.settings
        open_streams = core.open_streams
        key = trial.key if trial is not None else bot_id  # a trial's credential counts apart from its bot's streams
        if not relay_from and s.max_streams_per_bot > 0 and open_streams.get(key, 0) >= s.max_streams_per_bot:
            core.counters.streams_refused += 1
            log.info("bot %s: stream refused, %d streams already open", bot_id, open_streams.get(bot_id, 0),
                     extra={"bot_id": bot_id})
            await refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED, pb.ERROR_CODE_PROTOCOL,
                         f"this bot already has {s.max_streams_per_bot} open streams on this referee "
                         "(max_streams_per_bot)")
        declared = hello.max_concurrent_matches
        capacity = 1 if relay_from or trial else min(max(1, declared), max(1, s.max_declared_concurrency))
        session = Session(  # a trial's session: its one seat, no token digest (not re-checked), no pin of its own
            bot_id=bot_id, token="" if trial else hello.token, name=hello.bot_name, version=hello.bot_version[:50],
            games=[g[:50] for g in list(hello.games)[:20]], capacity=capacity, context=context,
            relay_from=relay_from, instance_id="" if relay_from else hello.instance_id[:64],
            max_matches=0 if relay_from or trial else hello.max_matches,
            encoding=hello.observation_encoding, only_match_id=0 if trial else hello.only_match_id,
            only_attempt=0 if trial else hello.only_attempt, key=None if trial is None else trial.key,
        )
        notices = [] if relay_from else contract.hello_answer(hello.contract_revision)[1]
        del hello  # the token is not kept beyond its digest
        open_streams[key] = open_streams.get(key, 0) + 1  # no await since the check: no race
        try:
            await self._serve(context, session, notices, trial)
        finally:
            left = open_streams.get(key, 1) - 1
            if left > 0:
                open_streams[key] = left
            else:
                open_streams.pop(key, None)

    async def _serve(self, context: grpc.aio.ServicerContext, session: Session, notices: list[str],
                     trial: TrialSeat | None = None) -> None:
        """The stream after its handshake: Welcome (with the contract ``notices``), then read until it ends
        (a trial's session: unless its trial ended while the Welcome was written)."""
        core = self.core
        s = core.settings
        bot_id = session.bot_id
        if s.max_messages_per_s > 0:
            rate = float(s.max_messages_per_s)
            session.limiter = RateLimit(rate, rate)
        session.task = asyncio.current_task()
        session.last_seen = time.monotonic()
        await context.write(pb.RefereeMessage(welcome=pb.Welcome(
            bot_id=bot_id, referee_id=core.referee_id, contract_revision=contract.CONTRACT_REVISION, notices=notices)))
        core.counters.sessions_opened += 1
        metrics.SESSIONS.inc()
        writer = asyncio.create_task(session.write_loop())
        writer.add_done_callback(_retrieve)  # what it raises is read on every path (F-27)
        if trial is not None and not core.trial_book.is_open(trial):
            session.kill(grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_UNAVAILABLE, "the trial this credential was for "
                         "has ended; the credential is spent")
        try:
            await self._run(context, session, writer)
        finally:
            if not writer.done():  # a Connect cancelled anywhere (a server stop mid-kill) takes its writer
                writer.cancel()

    async def _run(self, context: grpc.aio.ServicerContext, session: Session, writer: asyncio.Task[None]) -> None:
        """Read until the stream ends or the referee kills it; then the closing Error, the status, the writer."""
        core = self.core
        bot_id, relay_from = session.bot_id, session.relay_from
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
                if limiter is not None and not limiter.allow(now, len(session.seats) + len(session.relays)):
                    if core.rate_limited(session, now):
                        session.kill_reason = (grpc.StatusCode.RESOURCE_EXHAUSTED, pb.ERROR_CODE_PROTOCOL,
                                               f"rate limit: {session.rate_dropped} messages dropped; stream closed")
                        lost = Verdict.CRASH
                        break
                    continue
                if isinstance(msg, Undecodable):
                    core.counters.undecodable += 1
                    core.protocol_error(None, "undecodable", "")
                    session.kill_reason = (grpc.StatusCode.INVALID_ARGUMENT, pb.ERROR_CODE_PROTOCOL,
                                           f"a message of {msg.size} bytes is not a BotMessage: {msg.error}; "
                                           "stream closed")
                    lost = Verdict.CRASH
                    break
                dispatch(session, msg, now)
                if writer.done():
                    break
        except asyncio.CancelledError:
            if session.kill_reason is None:
                # the RPC was cancelled (client gone): a disconnect. Its writer goes with it
                # (and whatever it raised is read: _retrieve).
                writer.cancel()
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the referee's own kill(): handled below, not a cancellation
        except Exception as exc:  # transport error: the stream crashed
            log.info("bot %s session %s: stream error: %s", bot_id, session.id, type(exc).__name__,
                     extra={"bot_id": bot_id})
            lost = Verdict.CRASH
        finally:
            if session.relay_from and not relay_closed:
                session.infra_lost = True  # the other referee died or froze: not the bot's doing
            if session.relay_from and session.seats:
                log.info("relay session %s of bot %s from %s ended %s, holding matches %s", session.id, bot_id,
                         relay_from, "cleanly (the bot left)" if relay_closed else "abruptly",
                         sorted(session.seats), extra={"bot_id": bot_id})
            session.close()
            core.registry.remove(session, lost)
            metrics.SESSIONS.dec()
        if session.kill_reason is not None:
            code, error_code, reason = session.kill_reason
            for _ in range(50):  # a write in flight (a Ping queued by the sweep that then found the token
                if not session.writing:  # revoked) is let finish: cancelling it would cost the closing Error
                    break
                await asyncio.sleep(0.01)
            await stop_writer(writer, session.id)  # before abort() raises: the writer is never left behind
            for _ in range(100):  # a room's send_now() may be mid-write: one write at a time on a gRPC stream
                if not session.writing:
                    break
                await asyncio.sleep(0.01)
            if session.writing:
                # a write held by flow control for over 1 s (a bot that stopped reading), or the
                # writer's write cancelled above while gRPC still sends it: a second write would fail
                # with GRPC_CALL_ERROR_TOO_MANY_OPERATIONS; the status below carries the reason all the same
                log.info("session %s: closing Error not sent, a write is still in flight", session.id)
            else:
                try:
                    await asyncio.wait_for(context.write(error_message(error_code, reason)), 1.0)
                except TimeoutError:  # the window is full: the status below still ends the RPC
                    log.info("session %s: closing Error not sent within 1 s", session.id)
                except STREAM_GONE as exc:  # the client already left: the abort below still ends the RPC
                    log.debug("session %s: could not send the closing Error: %r", session.id, exc)
                except Exception:
                    log.exception("session %s: sending the closing Error failed", session.id)
            # the reason rides in the status's trailers too: it arrives when the Error above could not be written
            await context.abort(code, reason, trailing_metadata=closing_trailers(error_code, reason))
        try:
            await asyncio.wait_for(writer, 1.0)
        except TimeoutError:
            writer.cancel()
        except STREAM_GONE as exc:  # the writer hit the closed stream: nothing left to send
            log.debug("session %s: writer ended with %r", session.id, exc)
        except Exception:
            log.exception("session %s: writer failed", session.id)
