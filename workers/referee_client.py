"""Ask a referee to run a match through the internal ``MatchControl`` service.

docs/architecture.md, "Referee ↔ worker": the worker sends the match spec, the referee seats the bots, plays
the match and streams events ending with a ``MatchResult`` (status, seats,
replay JSON). Any failure to reach the referee or a stream that ends without a
result is an infrastructure error (docs/architecture.md "Verdicts"), never a bot's fault.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from proto.parterre.v1 import control_pb2, control_pb2_grpc, referee_pb2

SERVICE_TOKEN_METADATA = "x-parterre-service-token"


class InfraError(RuntimeError):
    """The referee could not be reached or did not finish the match (not the bots' fault)."""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What the referee reported for one attempt.

    Attributes:
        status: ``finished``, ``aborted_no_show`` or ``infra_error``.
        seats: per seat dicts {seat, bot_id, rank, score, verdict, time_used_ms, decisions, debug_notes}
            (``debug_notes``: ``[[step, text], ...]``, the seat's own debug text, never in the replay).
        replay_json: the replay text (``parterre-replay/1``).
        reason: the referee's reason for the ending (``MatchResult.reason``),
            e.g. ``"watchdog: over max_duration_ms=..."`` for an ``infra_error``.
    """

    status: str
    seats: list[dict[str, Any]]
    replay_json: str
    reason: str = ""

    def as_result(self) -> dict[str, Any]:
        """The dict ``ladder.matches.record_result`` takes."""
        return {"status": self.status, "seats": self.seats, "replay_json": self.replay_json}

    def error_text(self) -> str:
        """What the attempt row keeps as ``match_attempts.error`` for a status that is not
        ``finished``: ``"referee reported infra_error: <the referee's reason>"`` (at most
        1,000 characters; the reason alone says why, e.g. which seat's relay was lost)."""
        text = f"referee reported {self.status}"
        if self.reason:
            text += f": {self.reason}"
        return text[:1000]


class RefereeUnavailableError(InfraError):
    """No referee could be reached and the match never started there (docs/faults.md F-08 (b), F-22).

    Raised when every address answered the ``RunMatch`` call itself with
    ``UNAVAILABLE`` (connection refused, unresolvable, referee shutting down)
    before its ``started`` event, or when there is no address at all. Nothing
    was played and no bot saw the match: the worker gives the claim back
    (:func:`ladder.referee_wait.release_unstarted`) instead of counting an attempt.
    Any other failure of the call — another status, or ``UNAVAILABLE`` after
    the match started — is an :class:`InfraError` of a started attempt.
    """


class LeaseLostError(InfraError):
    """The worker's claim on the match was taken over while it ran; the call was cancelled."""


KEEPALIVE_MS = 10_000
"""HTTP/2 keepalive of the worker's channel: a ping every 10 s, 5 s (half) to answer. A referee
whose host vanishes (lost node, cut network) sends no FIN or RST, and the call only listens. The
referee permits pings every 5 s (``referee/server.py``); :data:`SILENCE_MS` is what bounds the wait."""

SILENCE_MS = 30_000
"""A referee sends an event at least every progress interval (10 s by default) while a match runs
or waits for its bots; a call that hears nothing for three intervals has lost its referee. The
keepalive alone is not enough: gRPC's core paces its pings, and a silent peer was found only
after about 70 s in a test with a 10 s ping."""


class _SilenceWatchdog:
    """Calls ``cancel`` when :meth:`heard` was not called for ``limit_s`` seconds (one thread per call)."""

    def __init__(self, cancel: Callable[[], Any], limit_s: float) -> None:
        self._cancel = cancel
        self._limit_s = limit_s
        self._last = time.monotonic()
        self._done = threading.Event()
        self.fired = False
        threading.Thread(target=self._watch, name="referee-silence", daemon=True).start()

    def heard(self) -> None:
        self._last = time.monotonic()

    def stop(self) -> None:
        self._done.set()

    def _watch(self) -> None:
        check_s = min(1.0, self._limit_s / 4)
        while not self._done.wait(check_s):
            if time.monotonic() - self._last > self._limit_s:
                self.fired = True
                self._cancel()
                return


_channels: dict[tuple[int, str, bytes | None, int], grpc.Channel] = {}
_channels_lock = threading.Lock()


def _channel(address: str, tls_root_cert: bytes | None, keepalive_ms: int = KEEPALIVE_MS) -> grpc.Channel:
    """The worker process's channel to ``address`` (one per process, reused by every match).

    Keyed by the process id too: a Celery prefork child never uses a channel
    its parent opened (gRPC channels do not survive ``fork``).
    """
    key = (os.getpid(), address, tls_root_cert, keepalive_ms)
    options = [("grpc.keepalive_time_ms", keepalive_ms), ("grpc.keepalive_timeout_ms", max(1, keepalive_ms // 2)),
               ("grpc.keepalive_permit_without_calls", 0), ("grpc.http2.max_pings_without_data", 0)]
    with _channels_lock:
        channel = _channels.get(key)
        if channel is None:
            if tls_root_cert is not None:
                creds = grpc.ssl_channel_credentials(root_certificates=tls_root_cert)
                channel = grpc.secure_channel(address, creds, options=options)
            else:
                channel = grpc.insecure_channel(address, options=options)
            _channels[key] = channel
        return channel


def _drop_channel(address: str, tls_root_cert: bytes | None, keepalive_ms: int = KEEPALIVE_MS) -> None:
    """Close and forget the channel to ``address`` (it failed to connect: the next match dials afresh)."""
    with _channels_lock:
        channel = _channels.pop((os.getpid(), address, tls_root_cert, keepalive_ms), None)
    if channel is not None:
        channel.close()


def run_match(
    address: str | Sequence[str],
    service_token: str,
    *,
    match_id: int,
    attempt: int,
    game_string: str,
    seed: str,
    seat_bot_ids: list[int],
    time_control: dict[str, int],
    no_show_timeout_ms: int,
    max_duration_ms: int,
    on_event: Callable[[Any], bool] | None = None,
    tls_root_cert: bytes | None = None,
    seat_bot_names: Sequence[str] = (),
    keepalive_ms: int = KEEPALIVE_MS,
    silence_ms: int = SILENCE_MS,
    trial: bool = False,
    seat_credential_digests: Sequence[str] = (),
) -> MatchOutcome:
    """Run one match attempt on a referee and wait for its result.

    Args:
        address: the referee's ``MatchControl`` address, or several to try in
            order: the next is tried only when one cannot be reached
            (``UNAVAILABLE`` before its ``started`` event; nothing was played there).
        service_token: sent as ``x-parterre-service-token``.
        match_id ... max_duration_ms: the ``RunMatchRequest``.
        on_event: called with every ``MatchEvent`` (started, progress; the
            worker extends its lease there); returning False cancels the call
            (the referee ends the match ``infra_error``) and raises :class:`LeaseLostError`.
        tls_root_cert: PEM root certificate when the endpoint uses TLS.
        seat_bot_names: the bots' registered names per seat, shown to opponents and in the replay.
        keepalive_ms: the channel's ping interval (:data:`KEEPALIVE_MS`); a referee that answers
            no ping within half of it is lost, and the call ends ``UNAVAILABLE``.
        silence_ms: a referee that sends no event for this long is lost (:data:`SILENCE_MS`):
            the call is cancelled, as ``UNAVAILABLE`` (an attempt once the match started).
        trial / seat_credential_digests: an unrated game whose seats are taken by credential, one sha256
            hex digest per seat (``RunMatchRequest.trial``; ``workers.hosting.trial_games``).

    Raises:
        RefereeUnavailableError: no referee reachable (every address ``UNAVAILABLE``
            before the match started there), or no address at all.
        InfraError: the service token refused, another error status, or the
            stream broke after the match started, before a result arrived.
        LeaseLostError: ``on_event`` returned False.
    """
    addresses = [address] if isinstance(address, str) else [a for a in address if a]
    if not addresses:
        raise RefereeUnavailableError("no referee address configured (PARTERRE_REFEREE_ADDRESS) or discovered")
    request = control_pb2.RunMatchRequest(
        match_id=match_id,
        attempt=attempt,
        game_string=game_string,
        seed=seed,
        seat_bot_ids=seat_bot_ids,
        seat_bot_names=list(seat_bot_names),
        time_control=referee_pb2.TimeControl(
            base_ms=int(time_control.get("base_ms", 0)),
            increment_ms=int(time_control.get("increment_ms", 0)),
            cap_ms=int(time_control.get("cap_ms", 0)),
            margin_ms=int(time_control.get("margin_ms", 0)),
        ),
        no_show_timeout_ms=no_show_timeout_ms,
        max_duration_ms=max_duration_ms,
        trial=trial,
        seat_credential_digests=list(seat_credential_digests),
    )
    deadline_s = (no_show_timeout_ms + max_duration_ms) / 1000 + 30
    errors = []
    for addr in addresses:
        started = False  # the referee's `started` event: the bots are seated and the match is on
        watchdog: _SilenceWatchdog | None = None
        try:
            channel = _channel(addr, tls_root_cert, keepalive_ms)
            # the generated gRPC module (proto/.../control_pb2_grpc.py) carries no annotations
            stub = control_pb2_grpc.MatchControlStub(channel)  # generated, unannotated: see untyped_calls_exclude
            responses = stub.RunMatch(
                request,
                metadata=[(SERVICE_TOKEN_METADATA, service_token)],
                timeout=deadline_s,
                wait_for_ready=False,
            )
            watchdog = _SilenceWatchdog(responses.cancel, silence_ms / 1000.0)
            try:
                for event in responses:
                    watchdog.heard()
                    kind = event.WhichOneof("event")
                    started = started or kind in ("started", "result")
                    if kind == "result":
                        return _outcome(event.result)
                    if on_event is not None and not on_event(event):
                        raise LeaseLostError(f"match {match_id} attempt {attempt}: claim lost; call cancelled")
            finally:
                watchdog.stop()
                responses.cancel()  # a no-op once the stream has ended; ends the call otherwise
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            detail = f"referee {addr}: {code}: {getattr(exc, 'details', lambda: '')()}"
            if watchdog is not None and watchdog.fired:
                code = grpc.StatusCode.UNAVAILABLE
                detail = f"referee {addr}: silent for {silence_ms / 1000:g} s (no event; the referee sends one " \
                         f"at least every progress interval): lost"
            if code == grpc.StatusCode.UNAVAILABLE:
                _drop_channel(addr, tls_root_cert, keepalive_ms)
            if code == grpc.StatusCode.UNAVAILABLE and not started:
                errors.append(detail)
                continue  # not reached, or gone before the match started: nothing was played; try the next
            raise InfraError(detail) from exc
        raise InfraError(f"referee {addr} ended the stream without a result")
    raise RefereeUnavailableError("no referee reachable: " + "; ".join(errors))


def _outcome(res: Any) -> MatchOutcome:
    seats = [
        {
            "seat": s.seat,
            "bot_id": s.bot_id,
            "rank": s.rank,
            "score": s.score,
            "verdict": s.verdict,
            "time_used_ms": s.time_used_ms,
            "decisions": s.decisions,
            "debug_notes": [[n.step, n.text] for n in s.debug_notes],  # the owner's only (ladder.seat_debug)
        }
        for s in res.seats
    ]
    return MatchOutcome(res.status, seats, res.replay_json, res.reason)
