"""A bot's own debug text per decision (docs/bots.md, "Debug text"), at the referee.

A real in-process referee (``referee.testing.Harness``) and SDK bots that write, with every
answer, a text naming the decision and the action they chose. The oracle is the bot's own
record of what it sent: the referee must hand each seat's texts back in
``SeatResult.debug_notes`` at the step its decision made (the replay's step whose action is
the one the bot chose), cut to 1,000 bytes of UTF-8 with the marker, and never put them in
the replay text or the live feed. A bot that sends none plays as before.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from bots.sdk import DecisionRequest
from proto.contract import DEBUG_CUT_MARKER, DEBUG_MAX_BYTES
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import referee_pb2 as pb
from referee import live
from referee import seat as referee_seat
from referee.testing import Harness, replay_of

TOKENS = {"tok-a": 1, "tok-b": 2}


class NotingBot(RandomBot):
    """A random bot that writes, with each answer, ``make(request, index)`` as its debug text, and keeps
    ``(seq, text, action chosen)`` of every decision it answered."""

    def __init__(self, make: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.make = make
        self.sent: list[tuple[int, str, dict[str, Any]]] = []

    def choose(self, request: DecisionRequest) -> int:
        index = super().choose(request)
        text = self.make(request, index)
        request.debug(text)
        self.sent.append((request.seq, text, request.legal_actions[index]))
        return index


class RawDebugBot(RandomBot):
    """Sends ``text`` as ``Decision.debug`` unchanged, past the SDK's cut (as a bot speaking gRPC itself may)."""

    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text

    def make_decision(self, request: DecisionRequest, index: Any) -> pb.BotMessage:
        return pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq, action_index=index,
                                                  attempt=request.attempt, debug=self.text))


def _notes(result: control_pb.MatchResult, seat: int) -> list[tuple[int, str]]:
    return [(n.step, n.text) for n in result.seats[seat].debug_notes]


async def _play(bot_a: Any, bot_b: Any, match_id: int, game: str = "toy(players=2,turns=6)") -> control_pb.MatchResult:
    register_toy()
    async with Harness(TOKENS) as h:
        h.start_bot(bot_a, "tok-a")
        h.start_bot(bot_b, "tok-b")
        return await h.run_match(match_id, game, [1, 2], cap_ms=10_000)


async def test_each_seats_text_comes_back_at_the_step_its_decision_made_and_never_in_the_replay() -> None:
    a = NotingBot(lambda r, i: f"SECRET-A seq {r.seq}: chose {r.labels[i]} ✿", seed=1)
    b = NotingBot(lambda r, i: f"SECRET-B seq {r.seq}", seed=2)
    result = await _play(a, b, 501)
    replay = replay_of(result)
    assert result.seats[0].verdict == result.seats[1].verdict == "normal"
    for seat, bot in ((0, a), (1, b)):
        notes = _notes(result, seat)
        assert [text for _, text in notes] == [text for _, text, _ in bot.sent]  # every one, in order
        for (step, _), (_, _, action) in zip(notes, bot.sent, strict=True):
            rec = replay["steps"][step]
            assert rec["player"] == seat and rec["action"] == action and not rec["fallback"]
        mine = [s["i"] for s in replay["steps"] if s["player"] == seat]
        assert [step for step, _ in notes] == mine  # one per decision, none elsewhere
    assert "SECRET" not in result.replay_json and "debug" not in result.replay_json


async def test_a_bot_sending_no_debug_plays_as_before() -> None:
    quiet = await _play(RandomBot(seed=1), RandomBot(seed=2), 502)
    noted = await _play(NotingBot(lambda r, i: "why", seed=1), RandomBot(seed=2), 503)
    assert [len(s.debug_notes) for s in quiet.seats] == [0, 0]
    assert len(noted.seats[0].debug_notes) > 0 and len(noted.seats[1].debug_notes) == 0
    strip = {"match_id", "started_at", "ended_at", "steps"}
    a, b = replay_of(quiet), replay_of(noted)
    assert [s["action"] for s in a["steps"]] == [s["action"] for s in b["steps"]]  # same seeds: the same game
    assert {k: v for k, v in a.items() if k not in strip} == {k: v for k, v in b.items() if k not in strip}


async def test_a_huge_text_is_cut_to_the_cap_with_the_marker_never_refused() -> None:
    huge = "ß" * 600_000  # 1.2 MB of UTF-8 through the SDK: cut before it is sent
    sdk = NotingBot(lambda r, i: huge, seed=1)
    raw = "x" * 3 + "€" * 20_000  # 60 kB on the wire, under the referee's message cap: the referee cuts it
    result = await _play(sdk, RawDebugBot(raw, seed=2), 504)
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    for seat, text in ((0, huge), (1, raw)):
        notes = _notes(result, seat)
        assert len(notes) == result.seats[seat].decisions > 0
        for _, kept in notes:
            data = kept.encode("utf-8")
            assert len(data) <= DEBUG_MAX_BYTES and kept.endswith(DEBUG_CUT_MARKER)
            head = kept.removesuffix(DEBUG_CUT_MARKER)
            assert text.startswith(head) and len(head.encode("utf-8")) > DEBUG_MAX_BYTES - 12


async def test_a_seats_notes_stop_at_the_per_match_cap_with_one_note_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(referee_seat, "DEBUG_MAX_SEAT_BYTES", 2500)
    result = await _play(NotingBot(lambda r, i: "n" * 1000, seed=1), RandomBot(seed=2), 505)
    texts = [t for _, t in _notes(result, 0)]
    assert result.seats[0].decisions == 6
    assert texts == ["n" * 1000, "n" * 1000, "[debug text over 2500 bytes in this match: the rest is not kept]"]


@pytest.fixture
def feed(redis_base_url: str, redis_prefix: str) -> Any:
    ns = redis_prefix.rstrip(":")
    live.configure(redis_base_url, ns)
    try:
        yield redis_base_url, ns
    finally:
        live.configure(None)


async def test_the_live_feed_never_carries_debug_text(feed: tuple[str, str]) -> None:
    """Watched, the feed publishes every step; none of its bytes holds a seat's debug text."""
    import redis.asyncio as aioredis

    url, ns = feed
    r = aioredis.Redis.from_url(url)
    try:
        await r.set(live.watch_key(ns, 506), "1", ex=60)
        result = await _play(NotingBot(lambda rq, i: f"SECRET-LIVE-A {rq.seq}", seed=1),
                             NotingBot(lambda rq, i: f"SECRET-LIVE-B {rq.seq}", seed=2), 506)
        async with asyncio.timeout(10):
            while True:
                raw = [f[b"e"] for _, f in await r.xrange(live.stream_key(ns, 506))]
                if raw and json.loads(raw[-1]).get("end"):
                    break
                await asyncio.sleep(0.05)
        await r.delete(live.stream_key(ns, 506), live.watch_key(ns, 506))
    finally:
        await r.aclose()
    assert len(result.seats[0].debug_notes) > 0  # the bots did send text
    steps = [s for e in map(json.loads, raw[:-1]) for s in e["steps"]]
    assert len(steps) == len(replay_of(result)["steps"])  # every step was published
    assert not any(b"SECRET" in e for e in raw)
