"""Bots that misbehave on purpose, for fault tests (docs/faults.md F-01..F-07).

Each is a :class:`bots.sdk.Bot` that plays the first legal action except at
the decision where it misbehaves. ``at_decision`` counts this bot's decision
requests *within one match*, from 1; None means every decision.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from bots.sdk import Bot, DecisionRequest
from proto.parterre.v1 import referee_pb2 as pb


class _Counting(Bot):
    """Counts decision requests per match; ``hits(request)`` says when to misbehave."""

    def __init__(self, at_decision: int | None = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at_decision = at_decision
        self.counts: defaultdict[int, int] = defaultdict(int)
        self.misbehaved = 0

    def hits(self, request: DecisionRequest) -> bool:
        """Count ``request``; True when this is the decision to misbehave at."""
        self.counts[request.match_id] += 1
        hit = self.at_decision is None or self.counts[request.match_id] == self.at_decision
        self.misbehaved += hit
        return hit


class SlowBot(_Counting):
    """Sleeps before answering.

    Args:
        delay_ms: how long to think; None = past the deadline
            (``deadline_ms + margin_ms + extra_ms``).
        extra_ms: how far past the deadline when ``delay_ms`` is None.
        at_decision: which decision is slow (None: all).
    """

    name = "slow"

    def __init__(self, delay_ms: float | None = None, extra_ms: float = 200.0, at_decision: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(at_decision, **kwargs)
        self.delay_ms = delay_ms
        self.extra_ms = extra_ms

    async def choose(self, request: DecisionRequest) -> int:
        if self.hits(request):
            delay = self.delay_ms
            if delay is None:
                margin = request.match.time_control["margin_ms"] if request.match else 0
                delay = request.deadline_ms + margin + self.extra_ms
            await asyncio.sleep(delay / 1000.0)
        return 0


class IllegalBot(_Counting):
    """Answers with an illegal index at one decision.

    Args:
        mode: ``"out_of_range"`` (index = number of legal actions),
            ``"negative"`` (-1), ``"missing"`` (no action_index at all), or
            ``"other_match"`` (first a Decision for a match it is not seated
            in, then a correct answer).
        at_decision: which decision (None: all).
    """

    name = "illegal"
    MODES = ("out_of_range", "negative", "missing", "other_match")

    def __init__(self, mode: str = "out_of_range", at_decision: int | None = 1, **kwargs: Any) -> None:
        if mode not in self.MODES:
            raise ValueError(f"mode must be one of {', '.join(self.MODES)}")
        super().__init__(at_decision, **kwargs)
        self.mode = mode

    def choose(self, request: DecisionRequest) -> int:
        return -2 if self.hits(request) else 0  # -2: marker for make_decision

    def make_decision(self, request: DecisionRequest, index: Any) -> pb.BotMessage | bytes | None:
        if index != -2:
            return super().make_decision(request, index)
        if self.mode == "out_of_range":
            return super().make_decision(request, request.num_actions)
        if self.mode == "negative":
            return super().make_decision(request, -1)
        if self.mode == "missing":
            return pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq))
        self.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id + 1_000_000, seq=request.seq,
                                                     action_index=0)))
        return super().make_decision(request, 0)


class DropBot(_Counting):
    """Closes its stream abruptly at one decision (no answer).

    Args:
        at_decision: which decision (once per match).
        reconnect_after_s: reconnect after this delay; None = stay away.
    """

    name = "drop"

    def __init__(self, at_decision: int = 1, reconnect_after_s: float | None = None, **kwargs: Any) -> None:
        super().__init__(at_decision, **kwargs)
        self.reconnect_after_s = reconnect_after_s
        self.dropped = 0

    def choose(self, request: DecisionRequest) -> int:
        if self.hits(request) and not self.dropped:
            self.dropped += 1
            self.disconnect(self.reconnect_after_s)
            return -1
        return 0

    def make_decision(self, request: DecisionRequest, index: Any) -> pb.BotMessage | bytes | None:
        return None if index == -1 else super().make_decision(request, index)


class GarbageBot(_Counting):
    """Sends malformed or unexpected messages at one decision, then answers normally.

    Args:
        modes: any of ``"empty"`` (a BotMessage with no field set),
            ``"hello_again"``, ``"unknown_match"``, ``"future_seq"`` (answer a
            seq not requested yet), ``"duplicate"`` (answer twice),
            ``"raw_bytes"`` (bytes that are not a BotMessage: the stream fails),
            ``"no_hello"`` (a Decision instead of Hello: refused at once).
        at_decision: which decision.
    """

    name = "garbage"

    def __init__(self, modes: tuple[str, ...] = ("empty", "hello_again", "unknown_match", "future_seq"),
                 at_decision: int | None = 1, **kwargs: Any) -> None:
        super().__init__(at_decision, **kwargs)
        self.modes = tuple(modes)

    def hello(self, token: str) -> pb.BotMessage:
        if "no_hello" in self.modes:
            return pb.BotMessage(decision=pb.Decision(match_id=1, seq=1, action_index=0))
        return super().hello(token)

    def choose(self, request: DecisionRequest) -> int:
        if self.hits(request):
            for mode in self.modes:
                if mode == "empty":
                    self.send(pb.BotMessage())
                elif mode == "hello_again":
                    self.send(self.hello("not-a-token"))
                elif mode == "unknown_match":
                    self.send(pb.BotMessage(decision=pb.Decision(match_id=987_654_321, seq=1, action_index=0)))
                elif mode == "future_seq":
                    self.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq + 100,
                                                                 action_index=0)))
                elif mode == "raw_bytes":
                    self.send(b"\xff\xff\xff\xff\x0f garbage")
                elif mode == "duplicate":
                    again = super().make_decision(request, 0)
                    assert again is not None  # the SDK's make_decision always builds a Decision
                    self.send(again)
        return 0


class SilentBot(Bot):
    """Keeps its stream open (answers Pings) and never answers a decision."""

    name = "silent"

    def choose(self, request: DecisionRequest) -> int:
        return 0

    def make_decision(self, request: DecisionRequest, index: Any) -> None:
        return None
