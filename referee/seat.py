"""The seats of a match room and its one outstanding decision request (docs/architecture.md "The clock", "Verdicts").

:class:`Seat` is what a bot session holds of a match (``sessions.SeatBinding``):
it forwards the session's events to its :class:`~referee.room.Room`.
:class:`Pending` is the room's outstanding ``DecisionRequest`` with its clock
start (the moment the writer hands it to the transport) and its future.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from games.api import Action
from proto.contract import DEBUG_MAX_SEAT_BYTES, cap_debug
from proto.parterre.v1 import control_pb2 as control_pb
from referee.clock import Allowance, SeatClock, seat_share_ms
from referee.match_spec import MatchSpec
from referee.sessions import Session
from referee.verdicts import Verdict


class Room(Protocol):
    """What a seat and a pending request need of their match room (``referee.room.Room``)."""

    spec: MatchSpec
    loop: asyncio.AbstractEventLoop

    def on_decision(self, seat: Seat, seq: int, index: int | None, received_at: float, attempt: int = 0,
                    debug: str = "") -> None:
        """A Decision from ``seat``'s session."""

    def retire(self, seat: Seat, verdict: Verdict, reason: str) -> None:
        """Give ``seat`` a fault verdict."""

    def on_session_lost(self, seat: Seat, kind: Verdict) -> None:
        """``seat``'s session ended."""

    def move_seat(self, seat: Seat, session: Session) -> bool:
        """Move ``seat`` to another session of its bot."""

ANSWER, TIMEOUT, RETIRED, INTERRUPT = range(4)
"""What resolved a pending decision's future: the seat's answer, the room's timer, the
seat's retirement, or the end of the match."""


class Pending:
    """The one outstanding DecisionRequest of a room.

    Its deadline is ``start() + allowance.limit_ms``; the room's timer
    (:meth:`Room._arm`) fires at the earliest pending deadline. ``msg`` is the
    request's ``RefereeMessage`` as wire bytes (``GameCodec.decision_request``).
    """

    __slots__ = ("seat", "seq", "allowance", "legal", "msg", "future", "queued_at", "sent_at", "limit_s", "writer",
                 "cut", "debug")

    def __init__(self, room: Room, seat: Seat, seq: int, allowance: Allowance, legal: list[Action],
                 msg: bytes) -> None:
        self.seat = seat
        self.seq = seq
        self.allowance = allowance
        self.legal = legal
        self.msg = msg
        self.future: asyncio.Future[tuple[int, int | None, float]] = room.loop.create_future()
        self.queued_at = time.monotonic()
        self.sent_at: float | None = None
        self.limit_s = allowance.limit_ms / 1000.0
        self.writer: asyncio.Task[Any] | None = None
        """The room's task while it is in the request's write (``Session.send_now``): a bot that
        stops reading holds it there by HTTP/2 flow control, and ``Room._on_timer`` cuts it out."""
        self.cut = False
        self.debug = ""
        """``Decision.debug`` of the answer that resolved it (kept only if the answer is applied)."""

    def mark_sent(self) -> None:
        """Start the clock: the writer hands the request to the transport now."""
        if self.sent_at is None:
            self.sent_at = time.monotonic()

    def start(self) -> float:
        """Clock start: send time, or queueing time if never written."""
        return self.sent_at if self.sent_at is not None else self.queued_at

    def pause(self, dropped_at: float, now: float) -> None:
        """Give back the time since ``dropped_at`` (the clock started no earlier counts): a seat the
        infrastructure dropped (its relaying referee died) is not charged for it (docs/architecture.md "Verdicts")."""
        lost = max(0.0, now - max(dropped_at, self.start()))
        if self.sent_at is not None:
            self.sent_at += lost
        else:
            self.queued_at += lost

    def deadline(self) -> float:
        """``time.monotonic()`` value after which an answer is late."""
        return self.start() + self.limit_s

    def resolve(self, kind: int, index: int | None = None, at: float = 0.0, debug: str = "") -> None:
        """Resolve once (``debug``: the answer's ``Decision.debug``); later calls are ignored."""
        if not self.future.done():
            self.debug = debug
            self.future.set_result((kind, index, at))

    async def send_on(self, session: Session) -> None:
        """Write the request on ``session`` from the room's task (``Session.send_now``). A write the
        bot's flow control still holds at the deadline is cut by :meth:`cut_write`: this then
        returns as if sent, and the room reads the TIMEOUT (the stream is closed: ``Session.stalled``)."""
        self.writer = asyncio.current_task()
        try:
            await session.send_now(self.msg, self)
        except asyncio.CancelledError:
            if not self.cut:
                raise
            self.writer.uncancel()  # type: ignore[union-attr]  # set above
        self.writer = None

    def cut_write(self) -> None:
        """Take the room's task out of a held write (:meth:`send_on`)."""
        if self.writer is not None:
            self.cut = True
            self.writer.cancel()

    def answered(self) -> bool:
        """True when resolved by an answer (not by the clock or a retirement)."""
        return self.future.done() and not self.future.cancelled() and self.future.result()[0] == ANSWER


class Seat:
    """One seat of a room; the session's handle on it (``sessions.SeatBinding``)."""

    __slots__ = (
        "room", "seat", "bot_id", "key", "match_id", "session", "clock", "verdict", "fault_reason",
        "drop_kind", "infra_drop", "grace", "answered", "late", "decisions", "name", "version", "started",
        "dropped", "rejections", "debug_notes", "debug_bytes",
    )

    def __init__(self, room: Room, seat: int, bot_id: int, key: int | None = None) -> None:
        self.room = room
        self.seat = seat
        self.bot_id = bot_id
        self.key = bot_id if key is None else key  # whose sessions take the seat: the bot's, or a trial credential's
        self.match_id = room.spec.match_id
        self.session: Session | None = None
        spec = room.spec
        self.clock = SeatClock(spec.time_control, seat_share_ms(spec.max_duration_ms, len(spec.bot_ids)))
        self.verdict = Verdict.NORMAL
        self.fault_reason = ""
        self.drop_kind = Verdict.DISCONNECT
        self.infra_drop = False
        self.grace: asyncio.TimerHandle | None = None
        self.answered: set[int] = set()
        self.late: set[int] = set()
        self.decisions = 0
        self.name = ""
        self.version = ""
        self.started = False
        self.dropped = (0.0, 0)  # (time.monotonic(), steps played) when the stream was lost
        self.rejections: list[dict[str, object]] = []  # DecisionRejected sent to this seat (replay)
        self.debug_notes: list[tuple[int, str]] = []  # (step, Decision.debug): the owner's only, never the replay
        self.debug_bytes = 0

    # -- sessions.SeatBinding ------------------------------------------------------
    @property
    def attempt(self) -> int:
        """The match attempt this seat belongs to."""
        return self.room.spec.attempt

    def on_decision(self, seq: int, index: int | None, received_at: float, attempt: int = 0, debug: str = "") -> None:
        self.room.on_decision(self, seq, index, received_at, attempt, debug)

    def note_debug(self, step: int, text: str) -> None:
        """Keep the debug text of the applied decision that made ``step`` (docs/bots.md, "Debug text"):
        cut to ``DEBUG_MAX_BYTES``; past ``DEBUG_MAX_SEAT_BYTES`` of this seat's notes one note says so,
        then nothing more is kept; an answer that is not applied (late, illegal) keeps none. Only the
        seat's owner ever sees it (``SeatResult.debug_notes``; never the replay or the live feed)."""
        if not text or self.debug_bytes > DEBUG_MAX_SEAT_BYTES:
            return
        text = cap_debug(text)
        size = len(text.encode("utf-8"))
        if self.debug_bytes + size > DEBUG_MAX_SEAT_BYTES:
            text = f"[debug text over {DEBUG_MAX_SEAT_BYTES} bytes in this match: the rest is not kept]"
            size = DEBUG_MAX_SEAT_BYTES + 1  # nothing after this one
        self.debug_bytes += size
        self.debug_notes.append((step, text))

    def result(self, rank: int, score: float) -> control_pb.SeatResult:
        """This seat's part of the ``MatchResult``, its debug notes included."""
        return control_pb.SeatResult(
            seat=self.seat, bot_id=self.bot_id, rank=rank, score=score, verdict=self.verdict.value,
            time_used_ms=int(round(self.clock.used_ms)), decisions=self.decisions,
            debug_notes=[control_pb.DebugNote(step=i, text=t) for i, t in self.debug_notes])

    def move_to(self, session: Session) -> bool:
        return self.room.move_seat(self, session)

    def on_resign(self) -> None:
        self.room.retire(self, Verdict.RESIGNED, "resigned")

    def on_session_lost(self, kind: Verdict) -> None:
        self.room.on_session_lost(self, kind)
