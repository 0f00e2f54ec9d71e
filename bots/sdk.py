"""The Python bot SDK (docs/bots.md, "Python, with the SDK"): subclass :class:`Bot`, implement ``choose``.

Example::

    from bots.sdk import Bot

    class FirstBot(Bot):
        name = "first"

        def choose(self, request):
            request.debug("no idea, first one")   # optional: shown only to the bot's owner
            return 0                      # index into request.legal_actions

    FirstBot().run("127.0.0.1:50051", token="...")   # blocks; reconnects with backoff

A bot keeps one ``Referee.Connect`` stream open and plays up to
``max_concurrent_matches`` matches over it at once. Each
:class:`DecisionRequest` is self-contained (game, seat, observation, legal
actions, clock), so a bot may be stateless (lichess-bot's habit). Pings are
answered with Pongs by the SDK. ``choose`` may be a plain function (called
inline; set ``threaded = True`` to run it in a worker thread) or a coroutine
function (run as its own task, so slow thinking in one match does not stall
the others).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import operator
import random
import secrets
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import grpc
import grpc.aio

from bots.wire import (
    ENCODINGS,
    BotStats,
    DecisionRequest,
    MatchInfo,
    MatchResult,
    decode_action,
    decode_observation,
)
from proto.contract import CONTRACT_REVISION, cap_debug
from proto.parterre.v1 import referee_pb2 as pb

log = logging.getLogger(__name__)

CONNECT_METHOD = "/parterre.v1.Referee/Connect"

CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", 64 << 20),
]


class AuthenticationError(RuntimeError):
    """The referee refused the token (missing, unknown or revoked); not retried."""


class HelloRefusedError(RuntimeError):
    """The referee refused the ``Hello`` itself (``INVALID_ARGUMENT`` before any Welcome: a ``bot_name``
    or ``bot_version`` it does not take, docs/bots.md); not retried, since the same Hello would be refused
    again. The message is the referee's, naming the offending character."""


def shown(text: str) -> str:
    """``text`` as it may be printed on a terminal or in a log: itself when printable (the zero-width joiner
    and non-joiner of emoji sequences and Persian count as printable), else its ``ascii()``."""
    return text if all(ch.isprintable() or ch in "\u200c\u200d" for ch in text) else ascii(text)


def _print_to_stderr(line: str) -> None:
    """:meth:`Bot.run`'s default ``announce``: the line on stderr, at once."""
    print(line, file=sys.stderr, flush=True)


__all__ = [
    "CHANNEL_OPTIONS", "CONNECT_METHOD", "AuthenticationError", "Bot", "BotStats", "DecisionRequest",
    "HelloRefusedError", "MatchInfo", "MatchResult", "decode_action", "decode_observation", "shown",
]


class _Outbox:
    """Ordered writes on one stream: direct from the caller when idle, else via a writer task."""

    __slots__ = ("call", "backlog", "wake", "writing")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.backlog: deque[Any] = deque()
        self.wake = asyncio.Event()
        self.writing = False

    def put(self, msg: Any) -> None:
        self.backlog.append(msg)
        if not self.writing:
            self.wake.set()

    async def put_now(self, msg: Any) -> None:
        if self.writing or self.backlog:
            self.put(msg)
            return
        self.writing = True
        try:
            await self.call.write(msg)
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError, asyncio.InvalidStateError):
            pass  # the reader sees the stream end (InvalidStateError: a write on a call that already ended)
        finally:
            self.writing = False
            if self.backlog:
                self.wake.set()

    async def run(self) -> None:
        backlog = self.backlog
        try:
            while True:
                await self.wake.wait()
                self.wake.clear()
                while backlog and not self.writing:
                    self.writing = True
                    try:
                        await self.call.write(backlog.popleft())
                    finally:
                        self.writing = False
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError, asyncio.InvalidStateError):
            pass


def _serialize(message: Any) -> bytes:
    """Request serializer accepting messages or raw bytes (misbehaving test bots)."""
    return message if isinstance(message, bytes) else message.SerializeToString()


class Bot:
    """Base class of Python bots. Override :meth:`choose`; the rest is optional.

    Class attributes (overridable per instance through ``__init__``):
        name / version: shown on the ladder (Hello.bot_name / bot_version).
        games: game names the bot plays (informational).
        max_concurrent_matches: matches played at once over one connection.
        threaded: run a synchronous ``choose`` in a worker thread.
        observation_encoding: what the referee puts in each DecisionRequest (Hello.observation_encoding):
            ``"json"`` (default: the JSON text only, which :attr:`DecisionRequest.observation` reads;
            :attr:`DecisionRequest.typed_observation` is then built from it on first use), ``"typed"``
            (the typed message only) or ``"both"`` (what the referee sends a bot that does not say).

    Attributes:
        stats: :class:`BotStats`.
        received: set to a list to record every ``RefereeMessage`` read (tests).
    """

    name = "bot"
    version = "1"
    games: tuple[str, ...] = ()
    max_concurrent_matches = 1
    threaded = False
    observation_encoding = "json"

    def __init__(
        self, *, name: str | None = None, version: str | None = None, games: Iterable[str] | None = None,
        max_concurrent_matches: int | None = None,
    ) -> None:
        if name is not None:
            self.name = name
        if version is not None:
            self.version = version
        if games is not None:
            self.games = tuple(games)
        if max_concurrent_matches is not None:
            self.max_concurrent_matches = max_concurrent_matches
        self.stats = BotStats()
        self.received: list[pb.RefereeMessage] | None = None
        self._call: Any = None
        self._outbox: _Outbox | None = None
        self._stop: asyncio.Event | None = None
        self._reconnect_after_s: float | None = 0.0
        self.announce: Callable[[str], None] | None = None
        """Where one-line connection news goes for a human (``parterre bot run``
        prints it): "connected as X", each reconnect attempt. None = silent."""
        self.contract_notices: list[str] = []
        """What referees said about this bot's contract revision (``Welcome.notices``), each once."""
        self._address = ""
        self._async_choose = inspect.iscoroutinefunction(self.choose)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.instance_id = secrets.token_hex(8)
        """Sent in every Hello: the referee moves this process's seats from a
        half-open earlier stream to the new one at once (F-25)."""
        self._connection_no = 0
        self._welcomes_before = 0  # stats.welcomes when the current stream opened
        self._stop_after: int | None = None
        self._only_match_id = 0
        self._only_attempt = 0

    # -- to override ------------------------------------------------------------------
    def choose(self, request: DecisionRequest) -> int | Awaitable[int]:
        """Return the index of the chosen legal action (or a coroutine giving it).

        Args:
            request: the decision (observation, legal actions, clock).

        Returns:
            An index in ``range(request.num_actions)``.
        """
        raise NotImplementedError

    def on_match_started(self, match: MatchInfo) -> None:
        """Called when a match starts (and again after a reconnect)."""

    def on_match_ended(self, result: MatchResult) -> None:
        """Called when a match ends; ``result.seed`` reveals the seed.

        Also called with ``status == "gone"`` when a match attempt ended without a
        MatchEnded: a newer attempt of the same match id started (the referee of
        the old one died). Nothing of the gone attempt is asked or sent any more;
        forget what was kept for it.
        """

    def on_rejected(self, rejected: pb.DecisionRejected) -> None:
        """Called when the referee rejects a Decision (duplicate, stale, late, ...)."""
        log.warning("%s: decision %s of match %s rejected: %s", self.name, rejected.seq, rejected.match_id,
                    rejected.reason)

    def on_error(self, error: pb.RefereeError) -> None:
        """Called for an Error message from the referee."""
        # a refused token ends the run with AuthenticationError, which says it once
        level = logging.DEBUG if error.code == pb.ERROR_CODE_UNAUTHENTICATED else logging.WARNING
        log.log(level, "%s: referee error %s: %s", shown(self.name), pb.ErrorCode.Name(error.code), error.message)

    def make_decision(self, request: DecisionRequest, index: Any) -> pb.BotMessage | bytes | None:
        """The message answering ``request`` with ``index`` (None: send nothing).

        Misbehaving test bots override this; ordinary bots do not need to.
        """
        if type(index) is not int:
            try:
                index = operator.index(index)  # numpy integers and the like
            except TypeError:
                log.error("%s: choose returned %r, not an int; the referee will judge it illegal", self.name, index)
                index = None
        return pb.BotMessage(decision={"match_id": request.raw.match_id, "seq": request.raw.seq, "action_index": index,
                                       "attempt": request.raw.attempt, "debug": cap_debug(request.debug_text)})

    def hello(self, token: str) -> pb.BotMessage:
        """The Hello message sent first on every connection. With ``stop_after_matches`` (:meth:`arun`)
        it says how many matches are left (``Hello.max_matches``), so the referee does not seat this
        process in a match it will leave before playing; with ``only_match_id``, that the referee seats it
        in that match only (``Hello.only_match_id``, and ``only_attempt``)."""
        left = 0 if self._stop_after is None else max(1, self._stop_after - len(self.stats.results))
        return pb.BotMessage(hello=pb.Hello(
            token=token, bot_name=self.name, bot_version=self.version, games=list(self.games),
            max_concurrent_matches=self.max_concurrent_matches, instance_id=self.instance_id, max_matches=left,
            observation_encoding=ENCODINGS[self.observation_encoding], only_match_id=self._only_match_id,
            only_attempt=self._only_attempt, contract_revision=CONTRACT_REVISION,
        ))

    # -- running ----------------------------------------------------------------------
    def run(self, address: str, token: str, **kwargs: Any) -> None:
        """Connect and play until stopped (blocking; see :meth:`arun` for the arguments).

        For a program's ``main``: like ``parterre bot run``, it prints the connection
        news on stderr ("connected as NAME (bot id N) to ADDRESS, waiting for matches",
        each reconnect attempt) unless :attr:`announce` is already set, and a refused
        token (or Hello: a name or version it does not take) is one line on stderr and
        exit status 2, not a traceback. Programs that want to handle them themselves use
        :meth:`arun`, which raises :class:`AuthenticationError` or :class:`HelloRefusedError`.

        Raises:
            SystemExit: status 2, after one line on stderr, when the referee refused the token or the Hello.
        """
        announce = self.announce
        if announce is None:
            self.announce = _print_to_stderr
        try:
            asyncio.run(self.arun(address, token, **kwargs))
        except AuthenticationError as exc:
            print(f"{shown(self.name)}: the referee at {address} refused the token (wrong or revoked): {exc}",
                  file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        except HelloRefusedError as exc:
            print(f"{shown(self.name)}: the referee at {address} refused this bot's Hello: {exc}",
                  file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        finally:
            self.announce = announce

    async def arun(
        self, address: str, token: str, *, reconnect: bool = True, stop_after_matches: int | None = None,
        initial_backoff_s: float = 0.2, max_backoff_s: float = 10.0, only_match_id: int = 0, only_attempt: int = 0,
    ) -> None:
        """Connect and play until :meth:`stop`, cancellation or ``stop_after_matches`` results.

        Args:
            address: referee ``host:port``.
            token: the bot's secret token.
            reconnect: reconnect after the stream ends (exponential backoff with
                jitter from ``initial_backoff_s`` to ``max_backoff_s``; reset
                after each Welcome).
            stop_after_matches: return after this many MatchEnded messages.
            only_match_id: be seated in this match only (``Hello.only_match_id``): a process started for
                one match (a hosted bot's seat). 0: any match.
            only_attempt: with ``only_match_id``, in this attempt of it only (``Hello.only_attempt``); 0: any.

        Raises:
            AuthenticationError: the referee refused the token (never retried).
            HelloRefusedError: the referee refused the Hello itself (never retried).
        """
        self._stop = asyncio.Event()
        self._stop_after = stop_after_matches
        self._only_match_id = max(0, only_match_id)
        self._only_attempt = max(0, only_attempt)
        self._address = address
        backoff = initial_backoff_s
        attempt = 0
        while not self._stop.is_set():
            welcomes = self.stats.welcomes
            self._reconnect_after_s = 0.0
            why = "stream closed by the referee"
            try:
                await self._connection(address, token)
            except (AuthenticationError, HelloRefusedError):
                raise
            except grpc.aio.AioRpcError as exc:
                # with an announce hook the same news is printed for a human (one line, not two)
                (log.debug if self.announce is not None else log.info)(
                    "%s: stream ended: %s %s", self.name, exc.code(), exc.details())
                why = f"{exc.code().name}: {exc.details() or 'no details'}"
            if self._stop.is_set() or not reconnect or self._reconnect_after_s is None:
                return
            if self.stats.welcomes > welcomes:
                backoff, attempt = initial_backoff_s, 0
            delay = max(self._reconnect_after_s, backoff * random.uniform(0.8, 1.2))
            attempt += 1
            if self.announce is not None:
                lost = "connection lost" if self.stats.welcomes > welcomes else f"cannot connect to {address}"
                self.announce(f"{lost} ({why}); reconnect attempt {attempt} in {delay:.1f} s")
            try:
                await asyncio.wait_for(self._stop.wait(), delay)
                return
            except TimeoutError:
                pass
            backoff = min(max_backoff_s, backoff * 2)

    def stop(self) -> None:
        """Ask :meth:`arun` to return (closes the stream)."""
        if self._stop is not None:
            self._stop.set()
        if self._call is not None:
            self._call.cancel()

    def disconnect(self, reconnect_after_s: float | None = None) -> None:
        """Drop the current stream abruptly (tests: a bot that vanishes).

        Args:
            reconnect_after_s: reconnect after this delay; None = do not reconnect.
        """
        self._reconnect_after_s = reconnect_after_s
        if self._call is not None:
            self._call.cancel()

    def send(self, message: pb.BotMessage | bytes) -> None:
        """Queue a message (or raw bytes) on the current stream."""
        if self._outbox is not None:
            self._outbox.put(message)

    async def _connection(self, address: str, token: str) -> None:
        async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
            connect = channel.stream_stream(
                CONNECT_METHOD, request_serializer=_serialize, response_deserializer=pb.RefereeMessage.FromString
            )
            call = self._call = connect()
            self._connection_no += 1
            self._welcomes_before = self.stats.welcomes
            outbox = self._outbox = _Outbox(call)
            outbox.put(self.hello(token))
            writer = asyncio.create_task(outbox.run())
            try:
                await self._read_loop(call)
            except grpc.aio.AioRpcError as exc:
                if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    raise AuthenticationError(exc.details() or "token refused") from None
                if exc.code() == grpc.StatusCode.INVALID_ARGUMENT and self.stats.welcomes == self._welcomes_before:
                    raise HelloRefusedError(exc.details() or "Hello refused") from None
                if exc.code() != grpc.StatusCode.CANCELLED:
                    raise
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # this task is being cancelled
                return  # the call was cancelled locally (stop() / disconnect())
            finally:
                writer.cancel()
                for task in list(self._tasks):
                    task.cancel()
                self._call = None
                self._outbox = None
                call.cancel()

    async def _read_loop(self, call: Any) -> None:
        stats = self.stats
        outbox = self._outbox
        assert outbox is not None
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                status = await call.code()
                if status in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    raise AuthenticationError(await call.details() or "token refused")
                if status == grpc.StatusCode.INVALID_ARGUMENT and self.stats.welcomes == self._welcomes_before:
                    raise HelloRefusedError(await call.details() or "Hello refused")
                return
            if self.received is not None:
                self.received.append(msg)
            kind = msg.WhichOneof("kind")
            if kind == "decision_request":
                raw = msg.decision_request
                reply = self._on_request(DecisionRequest(raw, stats.matches.get(raw.match_id), time.monotonic(),
                                                         self._connection_no))
                if reply is not None:
                    stats.decisions += 1
                    await outbox.put_now(reply)
            elif kind == "ping":
                outbox.put(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
            elif kind == "match_started":
                info = MatchInfo.from_message(msg.match_started)
                old = stats.matches.get(info.match_id)
                if old is not None and old.attempt != info.attempt:
                    self._gone(old, f"attempt {old.attempt} is gone: attempt {info.attempt} of match "
                                    f"{info.match_id} started")
                stats.matches[info.match_id] = info
                self.on_match_started(info)
            elif kind == "match_ended":
                m = msg.match_ended
                ended_info = stats.matches.pop(m.match_id) if m.match_id in stats.matches else None
                result = MatchResult(m.match_id, ended_info.seat if ended_info else -1, list(m.ranks), list(m.scores),
                                     list(m.verdicts), m.reason, m.seed, m.status, m.attempt)
                stats.results.append(result)
                self.on_match_ended(result)
                if self._stop_after is not None and len(stats.results) >= self._stop_after:
                    self.stop()
            elif kind == "decision_rejected":
                stats.rejections.append(msg.decision_rejected)
                self.on_rejected(msg.decision_rejected)
            elif kind == "welcome":
                stats.welcomes += 1
                stats.bot_id = msg.welcome.bot_id
                if self.announce is not None:
                    self.announce(f"connected as {shown(self.name)} (bot id {stats.bot_id}) to {self._address}, "
                                  f"waiting for matches")
                self._contract_notices(msg.welcome)
            elif kind == "error":
                stats.errors.append(msg.error)
                self.on_error(msg.error)

    def _contract_notices(self, welcome: Any) -> None:
        """Print (``announce``) and log the referee's notices about the contract, each once per process."""
        for notice in welcome.notices:
            if notice in self.contract_notices:
                continue
            self.contract_notices.append(notice)
            log.warning("referee: %s", notice)
            if self.announce is not None:
                self.announce(f"referee: {shown(notice)}")

    def _gone(self, info: MatchInfo, reason: str) -> None:
        """A match attempt ended without MatchEnded: tell the bot (``on_match_ended``, status ``gone``)."""
        result = MatchResult(info.match_id, info.seat, [], [], [], reason, "", "gone", info.attempt)
        self.stats.gone.append(result)
        log.info("%s: match %d: %s", self.name, info.match_id, reason)
        self.on_match_ended(result)

    def is_live(self, request: DecisionRequest) -> bool:
        """True while an answer to ``request`` still belongs to it: the request came on the
        current stream and no other attempt of its match has started since. (An answer
        after its match ended is still sent: the referee rejects it with an explicit
        ``LATE`` or ``MATCH_ENDED``, which the bot's logs should show.)"""
        if request.connection != self._connection_no or self._outbox is None:
            return False
        info = self.stats.matches.get(request.match_id)
        return info is None or info.attempt == request.attempt

    def _on_request(self, request: DecisionRequest) -> pb.BotMessage | bytes | None:
        """Answer inline (plain ``choose``: returns the reply) or in a task (returns None)."""
        if self._async_choose:
            self._spawn(self._answer_async(request))
            return None
        if self.threaded:
            self._spawn(self._answer_thread(request))
            return None
        try:
            index = self.choose(request)
        except Exception:
            log.exception("%s: choose failed; answering 0", self.name)
            index = 0
        return self.make_decision(request, index)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer_async(self, request: DecisionRequest) -> None:
        try:
            choose = cast(Callable[[DecisionRequest], Awaitable[Any]], self.choose)  # _async_choose: a coroutine
            index = await choose(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: choose failed; answering 0", self.name)
            index = 0
        self._answer(request, index)

    async def _answer_thread(self, request: DecisionRequest) -> None:
        try:
            index = await asyncio.to_thread(self.choose, request)
        except Exception:
            log.exception("%s: choose failed; answering 0", self.name)
            index = 0
        self._answer(request, index)

    def _answer(self, request: DecisionRequest, index: Any) -> None:
        if not self.is_live(request):  # its stream or its attempt is gone: the answer belongs to nothing
            self.stats.discarded += 1
            log.info("%s: discarded the answer to match %d attempt %d seq %d: that request no longer exists",
                     self.name, request.match_id, request.attempt, request.seq)
            return
        msg = self.make_decision(request, index)
        if msg is not None and self._outbox is not None:
            self.stats.decisions += 1
            self._outbox.put(msg)
