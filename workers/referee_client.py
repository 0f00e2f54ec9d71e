"""Ask a referee to run a match through the internal ``MatchControl`` service.

DESIGN §3: the worker sends the match spec, the referee seats the bots, plays
the match and streams events ending with a ``MatchResult`` (status, seats,
replay JSON). Any failure to reach the referee or a stream that ends without a
result is an infrastructure error (DESIGN §4), never a bot's fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc

from proto.parterre.v1 import referee_pb2, referee_pb2_grpc

SERVICE_TOKEN_METADATA = "x-parterre-service-token"


class InfraError(RuntimeError):
    """The referee could not be reached or did not finish the match (not the bots' fault)."""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What the referee reported for one attempt.

    Attributes:
        status: ``finished``, ``aborted_no_show`` or ``infra_error``.
        seats: per seat dicts {seat, bot_id, rank, score, verdict, time_used_ms, decisions}.
        replay_json: the replay text (``parterre-replay/1``).
    """

    status: str
    seats: list[dict[str, Any]]
    replay_json: str

    def as_result(self) -> dict[str, Any]:
        """The dict ``ladder.matches.record_result`` takes."""
        return {"status": self.status, "seats": self.seats, "replay_json": self.replay_json}


def run_match(
    address: str,
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
) -> MatchOutcome:
    """Run one match attempt on the referee at ``address`` and wait for its result.

    Raises:
        InfraError: the referee is unreachable, refused the service token, or the
            stream broke before a result arrived.
    """
    request = referee_pb2.RunMatchRequest(
        match_id=match_id,
        attempt=attempt,
        game_string=game_string,
        seed=seed,
        seat_bot_ids=seat_bot_ids,
        time_control=referee_pb2.TimeControl(
            base_ms=int(time_control.get("base_ms", 0)),
            increment_ms=int(time_control.get("increment_ms", 0)),
            cap_ms=int(time_control.get("cap_ms", 0)),
            margin_ms=int(time_control.get("margin_ms", 0)),
        ),
        no_show_timeout_ms=no_show_timeout_ms,
        max_duration_ms=max_duration_ms,
    )
    deadline_s = (no_show_timeout_ms + max_duration_ms) / 1000 + 30
    try:
        with grpc.insecure_channel(address) as channel:
            stub = referee_pb2_grpc.MatchControlStub(channel)
            for event in stub.RunMatch(
                request,
                metadata=[(SERVICE_TOKEN_METADATA, service_token)],
                timeout=deadline_s,
                wait_for_ready=False,
            ):
                if event.WhichOneof("event") == "result":
                    res = event.result
                    seats = [
                        {
                            "seat": s.seat,
                            "bot_id": s.bot_id,
                            "rank": s.rank,
                            "score": s.score,
                            "verdict": s.verdict,
                            "time_used_ms": s.time_used_ms,
                            "decisions": s.decisions,
                        }
                        for s in res.seats
                    ]
                    return MatchOutcome(res.status, seats, res.replay_json)
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        raise InfraError(f"referee {address}: {code}: {getattr(exc, 'details', lambda: '')()}") from exc
    raise InfraError(f"referee {address} ended the stream without a result")
