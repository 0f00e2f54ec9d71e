"""``MatchControl.RunMatch``: a worker asks the referee to run one match attempt.

The interface: docs/architecture.md, "Referee ↔ worker: `MatchControl.RunMatch`".

Checks the service token, builds the :class:`~referee.room.Room`, and streams
its events (``Progress`` ... then exactly one ``MatchResult``). A trial
(``RunMatchRequest.trial``; referee/trials.py) gets a room apart from the
ladder's, its seats' credentials are admitted until it ends, and its first
event is a ``Progress`` of step 0 sent as soon as they are: the caller's bots
may connect from then on.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator

import grpc
import grpc.aio

from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import control_pb2_grpc as control_grpc
from referee.core import RefereeCore
from referee.headers import SERVICE_TOKEN_HEADER
from referee.match_spec import MatchSpec, MatchSpecError
from referee.room import Room
from referee.trials import TrialError


class MatchControlServicer(control_grpc.MatchControlServicer):
    """``MatchControl.RunMatch``: run one match attempt and stream its events."""

    def __init__(self, core: RefereeCore) -> None:
        self.core = core

    async def RunMatch(
        self, request: control_pb.RunMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[control_pb.MatchEvent]:
        core = self.core
        metadata = {k: v for k, v in (context.invocation_metadata() or ())}
        if not core.service_token_ok(metadata):
            core.auth_failed("service_token")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"missing or wrong {SERVICE_TOKEN_HEADER}")
        if core.shutting_down:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "referee shutting down")
        s = core.settings
        try:
            spec = MatchSpec.from_request(request, default_no_show_ms=s.default_no_show_timeout_ms,
                                          default_max_duration_ms=s.default_max_duration_ms)
        except MatchSpecError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        trial, seat_keys = 0, None
        if spec.trial:  # apart from the ladder's rooms: its match id supersedes nothing (referee/trials.py)
            try:
                trial, seat_keys = core.trial_book.open(spec.credential_digests, spec.bot_ids)
            except TrialError as exc:
                await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(exc))
        running = None if spec.trial else core.rooms.get(spec.match_id)
        if running is not None:
            old_room, old_task = running
            if spec.attempt <= old_room.spec.attempt:
                await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                    f"match {spec.match_id} attempt {old_room.spec.attempt} is running")
            old_task.cancel()  # a newer attempt supersedes it (its worker gets infra_error)
        events: collections.deque[control_pb.MatchEvent] = collections.deque()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] | None = None  # what the loop below awaits; emit() and the room's end wake it

        def wake(_: object = None) -> None:
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

        def emit(event: control_pb.MatchEvent) -> None:
            events.append(event)
            wake()

        try:
            room = Room(spec, core.registry, emit=emit, referee_id=core.referee_id,
                        reconnect_grace_ms=s.reconnect_grace_ms, progress_every=s.progress_every, seat_keys=seat_keys)
        except BaseException:
            if trial:
                core.trial_book.close(trial, core.registry)
            raise
        name = f"trial-{trial}" if trial else f"match-{spec.match_id}-{spec.attempt}"
        task = asyncio.create_task(room.run(), name=name)
        task.add_done_callback(wake)
        if trial:
            core.trials[trial] = (room, task)
            events.append(control_pb.MatchEvent(progress=control_pb.Progress(step=0, decisions=0)))  # seats open
        else:
            core.rooms[spec.match_id] = (room, task)
        keepalive_s = s.progress_interval_ms / 1000.0 if s.progress_interval_ms > 0 else None
        try:
            while True:
                while events:
                    event = events.popleft()
                    yield event
                    if event.HasField("result"):
                        return
                if task.done():
                    failure = None if task.cancelled() else task.exception()
                    if failure is not None:
                        raise failure
                    return
                # One future per wait, woken by emit() or the room's end, or by the keepalive timer
                # (not a task and asyncio.wait per event: the per-match cost, docs/benchmarks.md).
                waiter = loop.create_future()
                timer = loop.call_later(keepalive_s, wake) if keepalive_s is not None else None
                try:
                    await waiter
                finally:
                    waiter = None
                    if timer is not None:
                        timer.cancel()
                if not events and not task.done():  # nothing for a while: tell the worker we are alive
                    events.append(control_pb.MatchEvent(progress=control_pb.Progress(step=len(room.steps),
                                                                     decisions=room.decisions)))
        finally:
            if not task.done():
                task.cancel()
            if trial:  # its credentials are refused from now; its sessions closed once MatchEnded is out
                core.trials.pop(trial, None)
                core.trial_book.close(trial, core.registry)
            elif core.rooms.get(spec.match_id, (None,))[0] is room:
                del core.rooms[spec.match_id]
