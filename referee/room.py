"""A match room: seats the bots, runs the match loop, judges, builds the result (docs/architecture.md "Verdicts").

One :class:`Room` per ``MatchControl.RunMatch`` call. The room owns the
authoritative state; chance outcomes come from ``random.Random(seed)`` through
``state.sample_chance``; each seat gets ``MatchStarted`` and then only its own
``state.observation(seat)`` with the legal actions (docs/faults.md F-20).

Decision protocol (docs/faults.md F-01, F-03, F-04, F-05):

* Every request has a match-wide sequence number ``seq`` (1, 2, ...). The
  answer for the pending ``seq`` of the pending seat is taken once; anything
  else gets a ``DecisionRejected`` with its reason (duplicate, stale, not your
  turn, late, unknown seq) on its own stream, and nothing changes.
* The clock runs from the moment the writer hands the request to the transport
  to the moment the answer is read (``time.monotonic``). The room arms its own
  timer at the deadline (allowed + margin); it never waits on the bot.
* Faults: ``timeout``, ``illegal_action`` (index out of range, negative or
  unset), ``disconnect``/``crash`` (stream gone and not back within the grace
  window; the clock keeps running meanwhile), ``resigned`` (always accepted).
  A faulting seat is retired: ranked last, its remaining decisions played by
  the fallback policy (first legal action). When at most one seat is left
  playing the match ends at once (in 2-player games the faulting bot loses).
* A watchdog ends a match past ``max_duration_ms`` as ``infra_error``: the
  clocks bound every decision and each seat's whole match to its share of ``max_duration_ms``
  (``referee.clock.seat_share_ms``: a bot that stalls or thinks too long loses on time first),
  so a match that still overruns is the referee's problem, never charged to a bot.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from games.api import CHANCE, TERMINAL, Action, Outcome, option_text
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import referee_pb2 as pb
from referee import live, metrics
from referee.codec import codec_for
from referee.match_spec import MatchSpec
from referee.replay import FORMAT, HASH_EVERY, assemble, seed_commitment, step_text
from referee.seat import ANSWER, INTERRUPT, RETIRED, TIMEOUT, Pending, Seat
from referee.sessions import Session, SessionRegistry
from referee.verdicts import MatchStatus, Verdict, result_ranks

log = logging.getLogger(__name__)


def rejection_name(code: pb.RejectionCode) -> str:
    """The short name of a rejection code ("LATE" for ``REJECTION_CODE_LATE``), as replays
    (``rejections[].code``) and metric labels keep it (docs/bots.md "Renames")."""
    return pb.RejectionCode.Name(code).removeprefix("REJECTION_CODE_")


class _InfraAbort(Exception):
    """Raised inside the match loop when the match must end as ``infra_error`` (see :meth:`Room.abort_infra`)."""


class Room:
    """One match attempt.

    Args:
        spec: the validated request.
        registry: connected sessions.
        emit: receives each ``MatchEvent`` (started, progress, result).
        referee_id: this referee's id (in events and Welcome).
        seat_keys: per seat, the registry key of its sessions (a trial's: referee/trials.py); None: the bot ids.
        reconnect_grace_ms: how long a dropped seat may take to come back.
        progress_every: emit a Progress event every this many decisions.
    """

    def __init__(
        self, spec: MatchSpec, registry: SessionRegistry, *, emit: Callable[[control_pb.MatchEvent], None],
        referee_id: str = "", reconnect_grace_ms: int = 3000, progress_every: int = 25,
        seat_keys: list[int] | None = None,
    ) -> None:
        self.spec, self.registry, self.emit, self.referee_id = spec, registry, emit, referee_id
        self.grace_s = reconnect_grace_ms / 1000.0
        self.progress_every = max(1, progress_every)
        self.loop = asyncio.get_running_loop()
        self.game = spec.game
        self.game_name = spec.game.name
        self.game_string = spec.game.game_string()
        self.state = spec.game.new_initial_state()
        self.rng = random.Random(spec.seed)
        self.codec = codec_for(self.game_name)
        self.seats = [Seat(self, i, b, seat_keys[i] if seat_keys else None) for i, b in enumerate(spec.bot_ids)]
        self.active = len(self.seats)
        self.pending: Pending | None = None
        self.seq = self.decisions = 0
        self.seq_seat: list[int] = []
        self.steps: list[tuple[int, Action, float | None, bool, str | None]] = []
        self.started = False
        self.ended = False
        self.result: control_pb.MatchResult | None = None
        self.commitment = seed_commitment(spec.seed)
        self.started_at = ""
        self.latency = metrics.LatencyBatch(self.game_name)
        self.infra_reason = ""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        # live feed of spectator steps (referee/live.py); None when off, and for a trial
        self.live = None if spec.trial else live.feed_for(spec.match_id, self.game_name, self.game_string,
                                                          len(self.seats))
        if self.live is not None:
            self.live.start(self.state)

    # ----------------------------------------------------------------------------------
    async def run(self) -> control_pb.MatchResult:
        """Seat the bots, play, and return the one result (also emitted).

        Cancellation (worker gone, referee stopping) ends the match as
        ``infra_error`` and tells the bots, then re-raises.
        """
        metrics.MATCHES_RUNNING.inc()
        try:
            if not await self._bind_seats():
                return self._finish(MatchStatus.ABORTED_NO_SHOW, "no_show: " + ", ".join(
                    f"seat {s.seat} (bot {s.bot_id})" for s in self.seats if s.verdict is Verdict.NO_SHOW))
            self._start()
            metrics.MATCHES_PLAYING.inc()
            try:
                async with asyncio.timeout(self.spec.max_duration_ms / 1000.0):
                    reason = await self._play()
            except TimeoutError:
                return self._finish(MatchStatus.INFRA_ERROR,
                                    f"watchdog: over max_duration_ms={self.spec.max_duration_ms}")
            except _InfraAbort:
                return self._finish(MatchStatus.INFRA_ERROR, self.infra_reason)
            finally:
                metrics.MATCHES_PLAYING.dec()
            return self._finish(MatchStatus.FINISHED, reason)
        except asyncio.CancelledError:
            self._finish(MatchStatus.INFRA_ERROR, "aborted: match cancelled (worker gone or referee stopping)")
            raise
        except Exception as exc:
            log.exception("match %s: referee error", self.spec.match_id, extra=self.log_fields())
            return self._finish(MatchStatus.INFRA_ERROR, f"referee error: {type(exc).__name__}: {exc}")
        finally:
            metrics.MATCHES_RUNNING.dec()

    def log_fields(self, seat: Seat | None = None) -> dict[str, Any]:
        """Structured log fields of this match (and seat): ``log.info(..., extra=room.log_fields(seat))``."""
        fields: dict[str, Any] = {"match_id": self.spec.match_id, "attempt": self.spec.attempt,
                                  "game": self.game_name}
        if seat is not None:
            fields.update(seat=seat.seat, bot_id=seat.bot_id)
        return fields

    # -- seating ---------------------------------------------------------------------
    async def _bind_seats(self) -> bool:
        deadline = time.monotonic() + self.spec.no_show_timeout_ms / 1000.0
        while True:
            used = {s.session.id for s in self.seats if s.session is not None}
            for seat in self.seats:
                if seat.session is None:
                    session = self.registry.acquire(seat.key, used, self.spec.match_id, self.spec.attempt)
                    if session is not None:
                        self._attach(seat, session)
                        used.add(session.id)
            if all(s.session is not None for s in self.seats):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                for seat in self.seats:
                    if seat.session is None:
                        seat.verdict = Verdict.NO_SHOW
                        seat.fault_reason = "no connected session before the start"
                return False
            await self.registry.wait_changed(left)

    def _attach(self, seat: Seat, session: Session) -> None:
        seat.session = session
        names = self.spec.bot_names  # the registered names; a bot's own Hello.bot_name only without a ladder
        seat.name, seat.version = names[seat.seat] if names else session.name, session.version
        session.seats[self.spec.match_id] = seat
        session.take_match(self.spec.match_id)

    def _detach(self, seat: Seat) -> None:
        session = seat.session
        seat.session = None
        if session is not None and session.seats.get(self.spec.match_id) is seat:
            del session.seats[self.spec.match_id]

    def _players(self) -> list[pb.PlayerInfo]:
        return [pb.PlayerInfo(seat=s.seat, bot_id=s.bot_id, name=s.name, version=s.version) for s in self.seats]

    def _tc_msg(self) -> pb.TimeControl:
        return pb.TimeControl(**self.spec.time_control.to_json())

    def _match_started(self, seat: Seat, players: list[pb.PlayerInfo] | None = None,
                       time_control: pb.TimeControl | None = None) -> pb.RefereeMessage:
        game = self.game
        return pb.RefereeMessage(match_started=pb.MatchStarted(
            match_id=self.spec.match_id, game=self.game_name, game_string=self.game_string,
            options={k: option_text(v) for k, v in game.options.items()}, seat=seat.seat,
            players=self._players() if players is None else players,
            time_control=self._tc_msg() if time_control is None else time_control,
            seed_commitment=self.commitment, num_players=game.num_players, attempt=self.spec.attempt,
        ))

    def _start(self) -> None:
        self.started = True
        self.started_at = _now_iso()
        players, tc = self._players(), self._tc_msg()  # once a match (the per-match cost)
        msg: pb.RefereeMessage | None = None
        for seat in self.seats:
            seat.started = True
            if seat.session is not None:
                if msg is None:
                    msg = self._match_started(seat, players, tc)
                msg.match_started.seat = seat.seat
                seat.session.send(msg.SerializeToString())  # bytes now: the message is reused for the next seat
        self.emit(control_pb.MatchEvent(started=control_pb.MatchStartedInfo(
            match_id=self.spec.match_id, attempt=self.spec.attempt, game_string=self.game_string,
            seed_commitment=self.commitment, players=players, time_control=tc, referee_id=self.referee_id,
        )))

    # -- play ------------------------------------------------------------------------
    async def _play(self) -> str:
        state = self.state
        seats = self.seats
        while True:
            player = state.current_player()
            if player == TERMINAL:
                return "game over"
            if player == CHANCE:
                self._record(CHANCE, state.sample_chance(self.rng), None, False)
                continue
            seat = seats[player]
            if seat.verdict is not Verdict.NORMAL:
                self._record(player, state.legal_actions()[0], None, True)
                continue
            await self._decide(seat)
            if self.infra_reason:
                raise _InfraAbort(self.infra_reason)
            # A match with opponents stops when one seat is left; a solo match (one seat against
            # the rules' automaton) plays on until its seat retires.
            if self.active < min(2, len(seats)):
                return "opponents retired" if self.active == 1 else "every seat retired"

    def _record(self, player: int, action: Action, time_ms: float | None, fallback: bool) -> None:
        state = self.state
        state.apply_action(action)
        steps = self.steps
        h = state.state_hash() if len(steps) % HASH_EVERY == HASH_EVERY - 1 else None  # replay.wants_hash
        steps.append((player, action, time_ms, fallback, h))
        if self.live is not None:
            self.live.step(state, player, action)

    async def _decide(self, seat: Seat) -> None:
        state = self.state
        legal = state.legal_actions()
        self.seq += 1
        seq = self.seq
        self.seq_seat.append(seat.seat)
        allowance = seat.clock.next_allowance()
        encoding = seat.session.encoding if seat.session is not None else 0
        msg = self.codec.decision_request(  # the wire bytes of the RefereeMessage (codec.py)
            self.spec.match_id, seq, state.observation(seat.seat), legal, allowance.time_left_ms,
            allowance.allowed_ms, seat.seat, self.spec.attempt, encoding)
        pending = self.pending = Pending(self, seat, seq, allowance, legal, msg)
        self._arm(pending.queued_at + pending.limit_s)
        try:
            if seat.session is not None:
                if seat.session.limiter is not None:
                    seat.session.limiter.credit()  # the answer to a request is never rate-limited
                await pending.send_on(seat.session)
            else:  # dropped and not back yet: the clock runs from now
                pending.mark_sent()
            kind, index, at = await pending.future
        finally:
            self.pending = None
        if kind == ANSWER:
            elapsed_ms = (at - pending.start()) * 1000.0
            seat.clock.charge(elapsed_ms)
            self.latency.observe(elapsed_ms)
            if elapsed_ms > allowance.limit_ms:  # clock.on_time, inlined
                seat.late.add(seq)
                self._reject(seat, seq, pb.REJECTION_CODE_LATE, f"answer measured at {elapsed_ms:.1f} ms, limit "
                             f"{allowance.limit_ms} ms (allowed {allowance.allowed_ms} + margin)")
                self.retire(seat, Verdict.TIMEOUT, f"decision {seq}: {elapsed_ms:.1f} ms > {allowance.limit_ms} ms"
                                                   f"{seat.clock.share_note(allowance)}")
                return
            if index is None or not 0 <= index < len(legal):
                self.retire(seat, Verdict.ILLEGAL_ACTION, f"decision {seq}: index {index} not in 0..{len(legal) - 1}")
                return
            seat.answered.add(seq)
            seat.decisions += 1
            self.decisions += 1
            self._record(seat.seat, legal[index], round(elapsed_ms), False)  # whole ms (the compact stored replay)
            seat.note_debug(len(self.steps) - 1, pending.debug)  # the owner's only: never the replay or live feed
            if self.decisions % self.progress_every == 0:
                progress = control_pb.Progress(step=len(self.steps), decisions=self.decisions)
                self.emit(control_pb.MatchEvent(progress=progress))
        elif kind == TIMEOUT:
            seat.late.add(seq)
            elapsed_ms = (at - pending.start()) * 1000.0
            seat.clock.charge(elapsed_ms)
            if seat.session is None and seat.infra_drop:
                self.abort_infra(f"decision {seq}: the referee relaying seat {seat.seat} (bot {seat.bot_id}) "
                                 "was lost")
            elif seat.session is None:
                self.retire(seat, seat.drop_kind, f"decision {seq}: no session at the deadline")
            else:
                margin_ms = allowance.limit_ms - allowance.allowed_ms
                self.retire(seat, Verdict.TIMEOUT, f"decision {seq}: no answer within {allowance.allowed_ms} ms + "
                                                   f"{margin_ms} ms margin{seat.clock.share_note(allowance)}")
        else:  # RETIRED (this seat) or INTERRUPT (the match must end): already handled
            if seat.verdict is not Verdict.NORMAL:
                seat.late.add(seq)
                seat.clock.charge((time.monotonic() - pending.start()) * 1000.0)

    # -- the clock's timer -----------------------------------------------------------------
    def _arm(self, at: float) -> None:
        """Make sure the room's timer fires no later than ``at`` (``time.monotonic()``).

        One timer serves every decision: it is re-armed only when a deadline is
        earlier than the armed time; when it fires early it re-arms for the
        pending decision's exact deadline. So the referee's own timer always
        fires at the deadline, without a timer per decision on the hot path.
        """
        if self._timer is None or at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = at
            self._timer = self.loop.call_at(at, self._on_timer)  # loop.time() is time.monotonic()

    def _on_timer(self) -> None:
        self._timer = None
        p = self.pending
        if p is None or p.future.done() or self.ended:
            return
        now = time.monotonic()
        deadline = p.deadline()
        if now < deadline:
            self._arm(deadline)
        elif p.seat.session is None and p.seat.infra_drop:
            return  # the clock waits for a seat the infrastructure dropped: _reattach re-arms, grace ends it
        else:
            p.resolve(TIMEOUT, None, now)
            if p.writer is not None and p.seat.session is not None:  # the request is held: the bot stopped reading
                self.retire(p.seat, Verdict.TIMEOUT, p.seat.session.stalled(f"decision {p.seq}'s request"))
                p.cut_write()

    # -- events from sessions and timers ------------------------------------------------
    def on_decision(self, seat: Seat, seq: int, index: int | None, received_at: float, attempt: int = 0,
                    debug: str = "") -> None:
        """A Decision from ``seat``'s session (see module docstring for the rules).

        ``attempt`` is ``Decision.attempt`` (0 = not given): an answer meant for
        another attempt of this match (one that died with a referee) is rejected
        ``STALE`` and never applied, whatever its seq (docs/faults.md F-21). ``debug``: :meth:`Seat.note_debug`.
        """
        p = self.pending
        if attempt and attempt != self.spec.attempt:
            self._reject(seat, seq, pb.REJECTION_CODE_STALE,
                         f"decision {seq} answers attempt {attempt}; this is attempt {self.spec.attempt}")
            return
        if p is not None and p.seat is seat and p.seq == seq and p.sent_at is not None and not p.future.done():
            p.resolve(ANSWER, index, received_at, debug)
            return
        if seq < 1 or seq > self.seq or (p is not None and p.seq == seq and p.sent_at is None):
            code, why = pb.REJECTION_CODE_UNKNOWN_SEQ, f"decision {seq} has not been requested"
        elif self.seq_seat[seq - 1] != seat.seat:
            code, why = pb.REJECTION_CODE_NOT_YOUR_TURN, (
                f"decision {seq} was requested from seat {self.seq_seat[seq - 1]}, you are seat {seat.seat}")
        elif seq in seat.answered or (p is not None and p.seq == seq and p.answered()):
            code, why = pb.REJECTION_CODE_DUPLICATE, f"decision {seq} was already answered"
        elif seq in seat.late or seat.verdict is not Verdict.NORMAL:
            code = pb.REJECTION_CODE_LATE
            why = f"decision {seq} is closed: {seat.verdict.value} {seat.fault_reason}".rstrip()
        else:
            code, why = pb.REJECTION_CODE_STALE, f"decision {seq} is no longer pending (current {self.seq})"
        self._reject(seat, seq, code, why)

    def _reject(self, seat: Seat, seq: int, code: pb.RejectionCode, reason: str) -> None:
        metrics.REJECTED_DECISIONS.labels(rejection_name(code)).inc()
        if len(seat.rejections) < 100:  # kept for the owner's view (replay "rejections"), bounded
            seat.rejections.append({"seq": seq, "code": rejection_name(code), "reason": reason,
                                    "step": len(self.steps)})
        if seat.session is not None:
            seat.session.send(pb.RefereeMessage(decision_rejected=pb.DecisionRejected(
                match_id=self.spec.match_id, seq=seq, code=code, reason=reason)))

    def retire(self, seat: Seat, verdict: Verdict, reason: str) -> None:
        """Give ``seat`` a fault verdict; from now on the fallback policy plays it.

        No effect when the seat already has a verdict or the match has ended.
        Wakes the match loop when the pending decision is this seat's, or when
        at most one seat is left playing.
        """
        if self.ended or seat.verdict is not Verdict.NORMAL or not self.started:
            return
        seat.verdict = verdict
        seat.fault_reason = reason
        self.active -= 1
        metrics.FAULTS.labels(self.game_name, verdict.value).inc()
        log.info("match %s seat %s (bot %s): %s: %s", self.spec.match_id, seat.seat, seat.bot_id, verdict, reason,
                 extra=self.log_fields(seat))
        if seat.grace is not None:
            seat.grace.cancel()
            seat.grace = None
        p = self.pending
        if p is not None and (p.seat is seat or self.active <= 1):
            p.resolve(RETIRED if p.seat is seat else INTERRUPT)

    def abort_infra(self, reason: str) -> None:
        """End the match as ``infra_error`` (not any bot's fault): wakes the match loop.

        Used when the referee relaying a seat's bot died (referee/cluster.py).
        """
        if self.ended or self.infra_reason:
            return
        self.infra_reason = reason
        log.warning("match %s: ending as infra_error: %s", self.spec.match_id, reason)
        p = self.pending
        if p is not None:
            p.resolve(INTERRUPT)

    def on_session_lost(self, seat: Seat, kind: Verdict) -> None:
        """``seat``'s session ended: before the start free the seat, after it start the grace window.

        A relay stream that ended abruptly (``session.infra_lost``: the
        referee carrying the bot died) marks the seat *infra-dropped*: if the
        bot is not back within the grace window, the match ends
        ``infra_error`` instead of charging the bot.
        """
        lost = seat.session
        seat.session = None
        if self.ended:
            return
        if not self.started:
            self.registry.notify()
            return
        if seat.verdict is not Verdict.NORMAL:
            return
        seat.drop_kind = kind
        seat.dropped = (time.monotonic(), len(self.steps))
        seat.infra_drop = lost is not None and lost.infra_lost
        log.info("match %s seat %s (bot %s): stream lost after step %d (%s, %s); waiting %.0f ms for it",
                 self.spec.match_id, seat.seat, seat.bot_id, len(self.steps),
                 f"relay from {lost.relay_from}" if lost is not None and lost.relay_from else "the bot's own stream",
                 "the relaying referee was lost" if seat.infra_drop else kind.value, self.grace_s * 1000,
                 extra=self.log_fields(seat))
        seat.grace = self.loop.call_later(self.grace_s, self._grace_expired, seat)
        self.registry.add_orphan(seat.key, id(seat), lambda session: self._reattach(seat, session))

    def _grace_expired(self, seat: Seat) -> None:
        seat.grace = None
        self.registry.drop_orphan(seat.key, id(seat))
        if seat.session is None and seat.infra_drop:
            self.abort_infra(f"the referee relaying seat {seat.seat} (bot {seat.bot_id}) was lost and the bot "
                             f"was not back within {self.grace_s * 1000:.0f} ms")
        elif seat.session is None:
            ago = (time.monotonic() - seat.dropped[0]) * 1000.0
            self.retire(seat, seat.drop_kind, f"stream lost, not back within {self.grace_s * 1000:.0f} ms "
                        f"(lost after step {seat.dropped[1]}, {ago:.0f} ms before this verdict)")

    def move_seat(self, seat: Seat, session: Session) -> bool:
        """Move ``seat`` from its session to ``session`` of the same bot at once (a newer
        stream of the same bot process superseded the old one: F-25). The new stream
        gets MatchStarted and the pending request with the time left on its clock,
        as after a reconnect; the clock keeps running. False when it cannot move.
        """
        if self.ended or seat.session is session or self.spec.match_id in session.seats \
                or not session.may_seat(self.spec.match_id, self.spec.attempt):
            return False
        self._detach(seat)
        if not self.started:  # only reserved: MatchStarted goes to whoever holds it at the start
            self._attach(seat, session)
            return True
        return self._reattach(seat, session)

    def _reattach(self, seat: Seat, session: Session) -> bool:
        """Give ``seat`` to a new session of its bot; resend MatchStarted and the pending request."""
        if self.ended or seat.session is not None or self.spec.match_id in session.seats \
                or not session.may_seat(self.spec.match_id, self.spec.attempt):
            return False
        if seat.grace is not None:
            seat.grace.cancel()
            seat.grace = None
        infra, seat.infra_drop = seat.infra_drop, False
        self._attach(seat, session)
        session.send(self._match_started(seat))
        p = self.pending
        if p is not None and p.seat is seat and not p.future.done():
            if infra:  # not the bot's time: it gets back what it had when its relaying referee died
                p.pause(seat.dropped[0], time.monotonic())
                self._arm(p.deadline())
            spent = int((time.monotonic() - p.start()) * 1000.0)
            session.send(self.codec.decision_request(  # in the encoding the new stream asked for
                self.spec.match_id, p.seq, self.state.observation(seat.seat), p.legal,
                max(0, p.allowance.time_left_ms - spent), max(0, p.allowance.allowed_ms - spent), seat.seat,
                self.spec.attempt, session.encoding))
        log.info("match %s seat %s: bot %s is back", self.spec.match_id, seat.seat, seat.bot_id,
                 extra=self.log_fields(seat))
        return True

    # -- the end ------------------------------------------------------------------------
    def _finish(self, status: MatchStatus, reason: str) -> control_pb.MatchResult:
        if self.result is not None:
            return self.result
        self.ended = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        p = self.pending
        if p is not None:
            p.resolve(INTERRUPT)
        outcome: Outcome | None = self.state.outcome() if self.state.is_terminal() else None
        verdicts = [s.verdict for s in self.seats]
        if status is MatchStatus.FINISHED:
            ranks = result_ranks(verdicts, outcome.ranks if outcome else None)
        else:
            ranks = tuple(0 for _ in self.seats)
        scores = tuple(float(x) for x in outcome.scores) if outcome else tuple(0.0 for _ in self.seats)
        replay = self._replay(status, reason, outcome, verdicts, ranks)
        if self.live is not None:
            self.live.end(status.value, reason, scores, ranks)
        ended_msg = pb.MatchEnded(
            match_id=self.spec.match_id, ranks=ranks, scores=scores, verdicts=[v.value for v in verdicts],
            reason=reason, seed=self.spec.seed, status=status.value, attempt=self.spec.attempt,
        )
        for seat in self.seats:
            if seat.grace is not None:
                seat.grace.cancel()
                seat.grace = None
            self.registry.drop_orphan(seat.key, id(seat))
            session = seat.session
            if session is not None:
                if self.started:
                    own = ended_msg
                    if seat.verdict is not Verdict.NORMAL:  # its own reason, not "opponents retired"
                        own = pb.MatchEnded()
                        own.CopyFrom(ended_msg)
                        why = seat.verdict.value
                        if seat.fault_reason and seat.fault_reason != why:  # "resigned resigned" read badly
                            why += f" {seat.fault_reason}"
                        own.reason = f"you (seat {seat.seat}) were retired: {why}; the match: {reason}"
                    session.send(pb.RefereeMessage(match_ended=own))
                    session.remember_ended(self.spec.match_id, reason, frozenset(seat.late))
                self._detach(seat)
        self.registry.notify()
        self.result = control_pb.MatchResult(
            status=status.value, match_id=self.spec.match_id, attempt=self.spec.attempt, reason=reason,
            referee_id=self.referee_id, replay_json=replay,
            seats=[s.result(ranks[s.seat], scores[s.seat]) for s in self.seats],
        )
        metrics.MATCHES_FINISHED.labels(self.game_name, status.value).inc()
        for verdict in verdicts:
            metrics.VERDICTS.labels(self.game_name, verdict.value).inc()
        self.latency.flush()
        self.emit(control_pb.MatchEvent(result=self.result))
        return self.result

    def _replay(self, status: MatchStatus, reason: str, outcome: Outcome | None, verdicts: list[Verdict],
                ranks: tuple[int, ...]) -> str:
        """The replay JSON text (docs/architecture.md "Replay JSON")."""
        info = self.codec.action_info
        last = len(self.steps) - 1
        final_hash = self.state.state_hash()
        parts = []
        for i, (player, action, time_ms, fallback, h) in enumerate(self.steps):
            _, action_text, _, label_text = info(action)
            h = final_hash if i == last else h
            parts.append(step_text(i, player, action_text, label_text, time_ms, fallback, h))
        header = {
            "format": FORMAT,
            "match_id": self.spec.match_id,
            "attempt": self.spec.attempt,
            "game": self.game_name,
            "game_string": self.game_string,
            "rules_revision": self.spec.game.rules_revision,  # games.api.Game.RULES_REVISIONS
            "seed_commitment": self.commitment,
            "seed": self.spec.seed,
            "players": [{"seat": s.seat, "bot_id": s.bot_id, "name": s.name, "version": s.version} for s in self.seats],
            "time_control": self.spec.time_control.to_json(),
            "verdicts": [v.value for v in verdicts],
            "fault_reasons": [s.fault_reason for s in self.seats],
            "rejections": [s.rejections for s in self.seats],
            "outcome": outcome.to_json() if outcome else None,
            "result_ranks": list(ranks),
            "status": status.value,
            "reason": reason,
            "final_hash": final_hash,
            "started_at": self.started_at or None,
            "ended_at": _now_iso(),
        }
        return assemble(header, parts)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
