"""Bot sessions: one authenticated stream each, and the registry of them.

Tokens and identity: docs/architecture.md, "Bot identity and tokens".

A :class:`Session` is one ``Referee.Connect`` stream after a valid Hello. It
may hold seats in several matches at once (up to its capacity,
``Hello.max_concurrent_matches``). Everything sent to a bot goes through
:meth:`Session.send`, whose single writer task keeps writes in order and
starts the decision clock when a request is handed to the transport.

The :class:`SessionRegistry` finds a connected session of a bot with free
capacity for a new match, and hands seats whose stream dropped to the bot's
next session (reconnection within the grace window).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import grpc

from proto.parterre.v1 import referee_pb2
from referee.tokens import token_hash
from referee.verdicts import Verdict

if TYPE_CHECKING:
    import grpc.aio

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class SentHook(Protocol):
    """Something to tell when its message reached the transport (a pending decision)."""

    def mark_sent(self) -> None:
        """Called by the writer right before the message is written."""


class SeatBinding(Protocol):
    """What a session knows of a seat it holds (implemented by the match room's seat)."""

    match_id: int
    started: bool

    @property
    def attempt(self) -> int:
        """The match attempt the seat belongs to."""

    def on_decision(self, seq: int, index: int | None, received_at: float, attempt: int = 0, debug: str = "") -> None:
        """A Decision for this seat arrived (``index`` None when unset; ``attempt`` 0 when not given;
        ``debug`` its ``Decision.debug``, empty when none)."""

    def move_to(self, session: Session) -> bool:
        """Move the seat (and its pending request) to ``session`` of the same bot; False if it cannot."""

    def on_resign(self) -> None:
        """A Resign for this seat arrived."""

    def on_session_lost(self, kind: Verdict) -> None:
        """The session holding this seat ended (``kind``: disconnect or crash)."""


class RateLimit:
    """A token bucket: ``rate`` messages per second per match the stream actually
    plays, at most ``burst`` per such match at once, plus one credit per decision
    request sent on the stream (so an answer to a request is never limited, however
    fast the match runs; floods are bounded by ``rate``).

    The multiplier is the number of matches assigned at the moment
    (:meth:`allow`'s ``matches``, at least 1), never what the bot declared in
    ``Hello.max_concurrent_matches``: a bot cannot raise its own limit (F-24).

    Args:
        rate: tokens added per second per assigned match (> 0).
        burst: bucket size per assigned match; starts full (for one match).
    """

    __slots__ = ("rate", "burst", "tokens", "at", "credits")

    MAX_CREDITS = 10_000

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = float(rate)
        self.burst = float(max(1.0, burst))
        self.tokens = self.burst
        self.at = time.monotonic()
        self.credits = 0

    def credit(self) -> None:
        """One more message allowed: a decision request was sent on this stream."""
        if self.credits < self.MAX_CREDITS:
            self.credits += 1

    def allow(self, now: float, matches: int = 1) -> bool:
        """Take one credit, else one token at ``now`` (``time.monotonic()``); False when both are out.

        Args:
            now: ``time.monotonic()``.
            matches: matches assigned to the stream now (seats held and relays; < 1 counts as 1).
        """
        if self.credits:
            self.credits -= 1
            return True
        scale = matches if matches > 1 else 1
        tokens = self.tokens + (now - self.at) * self.rate * scale
        self.at = now
        if tokens >= 1.0:
            self.tokens = min(self.burst * scale, tokens) - 1.0
            return True
        self.tokens = tokens
        return False


class Loan(Protocol):
    """One unit of a local session's capacity lent to another referee (``referee.cluster.RelayLink``)."""

    def forward(self, msg: referee_pb2.BotMessage) -> None:
        """Pass a bot's message for a relayed match on to the hosting referee."""

    def bot_lost(self) -> None:
        """The bot's local session ended: close the relay cleanly (the host applies its disconnect policy)."""


class Session:
    """One authenticated bot stream.

    Attributes:
        id: process-unique session number.
        bot_id: the bot's ladder id (from its token).
        token_digest: sha256 hex of the token (the token itself is never kept).
        name / version / games: from Hello (untrusted text).
        capacity: matches this stream plays at once (>= 1).
        seats: match id -> seat held (reserved or started).
        recent_ended: match id -> (reason, late seqs) of recently ended matches,
            so that late answers get an explicit DecisionRejected.
        last_seen: ``time.monotonic()`` of the last message read.
        kill_reason: set when the referee closes the session itself.
        relay_from: for a relay stream (a bot connected to another referee,
            playing a match hosted here): that referee's id; "" for a bot's own stream.
        infra_lost: set when a relay stream ended abruptly (the other referee
            died): its seats end the match as ``infra_error``, never a bot verdict.
        loans: capacity of this session lent to other referees (``referee.cluster``).
        relays: match id -> loan carrying that match (matches hosted elsewhere).
        limiter: rate limit of the messages read on this stream.
        instance_id: ``Hello.instance_id`` (the bot process's random id; "" when not sent):
            a newer stream with the same one supersedes this session (F-25).
        encoding: ``Hello.observation_encoding`` (``referee_pb2.ObservationEncoding``; 0 = both): what
            the rooms put in this stream's DecisionRequests (:meth:`referee.codec.GameCodec.decision_request`).
        max_matches: ``Hello.max_matches`` (0 = no limit); always 1 for a relay stream, which its
            lender closes after the one match it was lent for.
        only_match_id / only_attempt: ``Hello.only_match_id`` and ``Hello.only_attempt``: the one match
            (and attempt of it) this stream may be seated in; 0 = any. A relay stream carries its
            lender's (:meth:`may_seat`).
        key: what the registry files this session under: its bot id, or for a trial's session the
            seat's own negative key (``referee.trials``: only that seat takes it).
        trial: admitted by a trial's credential: never in presence, never lent, not re-checked
            against the token store, closed with its trial.
    """

    RECENT = 64

    def __init__(
        self, *, bot_id: int, token: str, name: str, version: str, games: list[str],
        capacity: int, context: grpc.aio.ServicerContext | None = None, relay_from: str = "",
        instance_id: str = "", max_matches: int = 0,
        encoding: referee_pb2.ObservationEncoding = referee_pb2.OBSERVATION_ENCODING_UNSPECIFIED,
        only_match_id: int = 0, only_attempt: int = 0, key: int | None = None,
    ) -> None:
        self.id = next(_ids)
        self.key = bot_id if key is None else key
        self.trial = key is not None  # a trial seat's session (referee.trials)
        self.only_match_id = max(0, only_match_id)
        self.only_attempt = max(0, only_attempt) if self.only_match_id else 0
        # a relay is one loan of the lender's capacity for one match: the lender closes it once that
        # match ended (referee.cluster.RelayLink), so it is never seated in a second match
        self.max_matches = 1 if relay_from else max(0, max_matches)
        self.matches_taken: set[int] = set()
        self.encoding = encoding
        self.instance_id = instance_id
        self.bot_id = bot_id
        self.token_digest = token_hash(token) if token else ""
        self.relay_from = relay_from
        self.infra_lost = False
        self.loans: set[Loan] = set()
        self.relays: dict[int, Loan] = {}
        self.limiter: RateLimit | None = None
        self.rate_dropped = 0
        self.rate_warned_at = 0.0
        self.name = name
        self.version = version
        self.games = games
        self.capacity = max(1, capacity)
        self.context = context
        self.seats: dict[int, SeatBinding] = {}
        self.recent_ended: OrderedDict[int, tuple[str, frozenset[int]]] = OrderedDict()
        self.last_seen = 0.0
        self.closed = False
        self.kill_reason: tuple[Any, referee_pb2.ErrorCode, str] | None = None
        self.task: asyncio.Task[Any] | None = None
        self._backlog: deque[tuple[referee_pb2.RefereeMessage | bytes, SentHook | None] | None] = deque()
        self._wake = asyncio.Event()
        self._writing = False
        self.write_started = 0.0  # time.monotonic() when the write in flight began (the heartbeat's check)
        self._abandoned = False  # a write was cancelled mid-flight: gRPC's core may still be sending it

    def __repr__(self) -> str:
        return f"Session(#{self.id}, bot={self.bot_id}, seats={sorted(self.seats)})"

    @property
    def writing(self) -> bool:
        """True while a message is being written (by the writer task or :meth:`send_now`), and for
        good once a write was cancelled mid-flight: cancelling the awaiting task does not cancel the
        send in gRPC's core, and a second write on the stream would fail
        (``GRPC_CALL_ERROR_TOO_MANY_OPERATIONS``)."""
        return self._writing or self._abandoned

    @property
    def busy(self) -> bool:
        """True while messages are queued or being written."""
        return self.writing or bool(self._backlog)

    @property
    def assigned(self) -> int:
        """Matches this stream plays now: seats held here plus matches relayed from other referees."""
        return len(self.seats) + len(self.relays)

    @property
    def free(self) -> int:
        """Seats this session can still take (capacity lent to other referees counts as taken; with
        ``Hello.max_matches``, never more than the matches it has left)."""
        free = self.capacity - len(self.seats) - len(self.loans)
        if self.max_matches:  # matches held now are among those taken
            free = min(free, self.max_matches - len(self.matches_taken))
        return free

    def may_seat(self, match_id: int, attempt: int) -> bool:
        """False when this stream is pinned to another match, or another attempt of it
        (``Hello.only_match_id``, ``Hello.only_attempt``)."""
        if not self.only_match_id:
            return True
        return self.only_match_id == match_id and (not self.only_attempt or self.only_attempt == attempt)

    def take_match(self, match_id: int) -> None:
        """Count ``match_id`` against ``Hello.max_matches`` (a seat bound here, or a relayed match); kept
        only when the stream declared a limit (a long-lived stream without one would grow the set forever)."""
        if self.max_matches:
            self.matches_taken.add(match_id)

    def send(self, msg: referee_pb2.RefereeMessage | bytes, hook: SentHook | None = None) -> None:
        """Queue ``msg`` (a message, or its wire bytes) for the writer task; ``hook.mark_sent()`` runs
        just before it is written.

        Messages to a closed session are dropped.
        """
        if not self.closed:
            self._backlog.append((msg, hook))
            if not self._writing:
                self._wake.set()

    async def send_now(self, msg: referee_pb2.RefereeMessage | bytes, hook: SentHook | None = None) -> None:
        """Write ``msg`` from the calling task when nothing is queued or being written
        (the decision hot path: saves a task switch), else queue it like :meth:`send`.

        Never raises: a broken stream is noticed by the session's reader.
        """
        if self._writing or self._backlog or self.closed or self.context is None:
            self.send(msg, hook)
            return
        self._writing = True
        self.write_started = time.monotonic()
        try:
            if hook is not None:
                hook.mark_sent()
            await self.context.write(msg)
        except asyncio.CancelledError:
            self._abandoned = True
            raise
        except Exception as exc:
            log.debug("session %s: write failed: %r", self.id, exc)
        finally:
            self._writing = False
            if self._backlog:
                self._wake.set()

    def error(self, code: referee_pb2.ErrorCode, message: str, match_id: int = 0) -> None:
        """Send a ``RefereeError`` message."""
        error = referee_pb2.RefereeError(code=code, message=message, match_id=match_id)
        self.send(referee_pb2.RefereeMessage(error=error))

    def remember_ended(self, match_id: int, reason: str, late: frozenset[int]) -> None:
        """Keep ``match_id`` among the recently ended matches (bounded)."""
        self.recent_ended[match_id] = (reason, late)
        while len(self.recent_ended) > self.RECENT:
            self.recent_ended.popitem(last=False)

    async def write_loop(self) -> None:
        """Write queued messages in order until :meth:`close`.

        Raises:
            Exception: whatever the transport raises; the caller ends the session.
        """
        assert self.context is not None
        backlog = self._backlog
        write = self.context.write
        while True:
            await self._wake.wait()
            self._wake.clear()
            while backlog and not self._writing:
                item = backlog.popleft()
                if item is None:
                    return
                msg, hook = item
                self._writing = True
                self.write_started = time.monotonic()
                try:
                    if hook is not None:
                        hook.mark_sent()
                    await write(msg)
                except asyncio.CancelledError:
                    self._abandoned = True
                    raise
                finally:
                    self._writing = False

    def close(self) -> None:
        """Stop the writer after the messages already queued."""
        if not self.closed:
            self.closed = True
            self._backlog.append(None)
            self._wake.set()

    def stalled(self, what: str) -> str:
        """End this stream because ``what`` was still held in its write at a deadline: HTTP/2 flow
        control holds a write when the bot stops reading (a bot could otherwise freeze its match
        instead of losing it on time). A stream with a write stuck in flight can carry nothing else.

        Returns:
            The reason, for the seat's verdict.
        """
        reason = f"{what} was still held by the stream's flow control at its deadline: the bot stopped reading"
        self.kill(grpc.StatusCode.DEADLINE_EXCEEDED, referee_pb2.ERROR_CODE_PROTOCOL, f"{reason}; stream closed")
        return reason

    def kill(self, code: Any, error_code: referee_pb2.ErrorCode, reason: str) -> None:
        """End this session from the referee's side (heartbeat lost, token revoked).

        Args:
            code: grpc status code to end the stream with.
            error_code: ``ErrorCode`` of the Error message sent first.
            reason: human-readable reason.
        """
        if self.kill_reason is None and not self.closed:
            self.kill_reason = (code, error_code, reason)
            if self.task is not None:
                self.task.cancel()


class SessionRegistry:
    """Connected sessions by bot, seats waiting for a reconnect, and change notification.

    Sessions and orphaned seats are filed by key: the bot id, or for a trial's seat its own negative key
    (``referee.trials``), so that a bot-id lookup never finds a trial's session and a trial's seat only its own.
    """

    def __init__(self) -> None:
        self.by_bot: dict[int, list[Session]] = {}
        self.orphans: dict[int, dict[int, Callable[[Session], bool]]] = {}
        self._changed = asyncio.Event()

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_bot.values())

    def sessions(self) -> list[Session]:
        """Every connected session."""
        return [s for v in self.by_bot.values() for s in v]

    def notify(self) -> None:
        """Wake everyone waiting in :meth:`wait_changed`."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_changed(self, timeout_s: float) -> None:
        """Wait until a session connects, drops or frees capacity, or ``timeout_s`` passes."""
        event = self._changed
        waiter = asyncio.ensure_future(event.wait())
        try:  # asyncio.wait, not wait_for: Python 3.11's wait_for can swallow a cancellation
            await asyncio.wait({waiter}, timeout=max(0.0, timeout_s))
        finally:
            waiter.cancel()

    def add(self, session: Session) -> None:
        """Register a new session; hand it the bot's orphaned seats that fit.

        A still-open session of the same bot with the same non-empty
        ``instance_id`` is the same bot process's earlier stream, dead or
        half-open (its FIN/RST never came): its seats move to the new session
        at once, pending requests included, and it is closed (F-25).
        """
        if session.instance_id:
            for old in list(self.by_bot.get(session.key, ())):
                if old.instance_id == session.instance_id and old is not session and not old.closed:
                    self.supersede(old, session)
        self.by_bot.setdefault(session.key, []).append(session)
        waiting = self.orphans.get(session.key)
        if waiting:
            for key, reattach in list(waiting.items()):
                if session.free <= 0:
                    break
                if reattach(session):
                    waiting.pop(key, None)
            if not waiting:
                self.orphans.pop(session.key, None)
        self.notify()

    def supersede(self, old: Session, new: Session) -> None:
        """Move ``old``'s seats that fit to ``new`` (same bot), then close ``old``.

        Seats that do not fit stay on ``old`` and follow the disconnect policy
        (grace window, then they are handed to the next free session).
        """
        moved = 0
        for match_id, binding in list(old.seats.items()):
            if new.free <= 0:
                break
            try:
                if binding.move_to(new):
                    old.seats.pop(match_id, None)
                    moved += 1
            except Exception:  # one room's bug must not leak into the others
                log.exception("moving match %s to a new session failed", binding.match_id)
        log.info("bot %s: session %s superseded by session %s of the same instance (%d seats moved)",
                 old.bot_id, old.id, new.id, moved, extra={"bot_id": old.bot_id})
        old.kill(grpc.StatusCode.ABORTED, referee_pb2.ERROR_CODE_PROTOCOL,
                 f"superseded by a newer stream of the same bot instance (session {new.id})")

    def remove(self, session: Session, kind: Verdict) -> None:
        """Unregister a session that ended; its seats learn it was lost (``kind``)."""
        sessions = self.by_bot.get(session.key, [])
        if session in sessions:
            sessions.remove(session)
            if not sessions:
                self.by_bot.pop(session.key, None)
        for binding in list(session.seats.values()):
            try:
                binding.on_session_lost(kind)
            except Exception:  # one room's bug must not leak into the others
                log.exception("on_session_lost failed for match %s", binding.match_id)
        session.seats.clear()
        for loan in list(session.loans):
            try:
                loan.bot_lost()
            except Exception:
                log.exception("closing a relay of bot %s failed", session.bot_id)
        self.notify()

    def acquire(self, bot_id: int, exclude: set[int], match_id: int, attempt: int) -> Session | None:
        """A connected session of ``bot_id`` with free capacity that may play this attempt of ``match_id``:
        one pinned to it first (it may play nothing else), then the most free.

        Args:
            bot_id: the bot.
            exclude: session ids not to use (already holding a seat of this match).
            match_id / attempt: the match attempt to seat (a session pinned to another is skipped).
        """
        best: Session | None = None
        best_rank = (False, 0)
        for s in self.by_bot.get(bot_id, ()):
            if s.closed or s.free <= 0 or s.id in exclude or not s.may_seat(match_id, attempt):
                continue
            rank = (bool(s.only_match_id), s.free)
            if best is None or rank > best_rank:
                best, best_rank = s, rank
        return best

    def add_orphan(self, bot_id: int, key: int, reattach: Callable[[Session], bool]) -> None:
        """Register a seat whose session dropped; ``reattach(session)`` is tried on reconnect.

        If a session of the bot with free capacity is already connected, it is
        tried at once.
        """
        for s in self.by_bot.get(bot_id, ()):
            if not s.closed and s.free > 0 and reattach(s):
                return
        self.orphans.setdefault(bot_id, {})[key] = reattach

    def drop_orphan(self, bot_id: int, key: int) -> None:
        """Forget an orphaned seat (grace expired or match ended)."""
        waiting = self.orphans.get(bot_id)
        if waiting is not None:
            waiting.pop(key, None)
            if not waiting:
                self.orphans.pop(bot_id, None)
