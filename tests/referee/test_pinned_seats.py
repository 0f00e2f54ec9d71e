"""A stream pinned to one match (``Hello.only_match_id``) is seated in that match only.

Why: a worker starts a hosted bot's seat process for one match and stops it once
that match has ended. While the referee seated *any* free session of a bot, two
matches of one hosted bot running at once could swap seats: match B took match
A's process, so A's process, idle, was stopped by A's worker the moment A's
match ended... while match B (or A's rerun) had just been handed it. The seat
then lost its stream with no process of the bot left to come back: a
``disconnect`` charged to the bot (CI, tests/e2e/test_hosted_ladder.py, a run of
2026-12-06: ``(1, 'finished', [3, 1], ['disconnect', 'normal'])``).

Oracles: the matches each bot process was told about (its own ``MatchStarted``
and ``MatchEnded`` messages, recorded by the SDK), the referee's verdicts and
statuses; each test has a control where the stream is not pinned and the other
behaviour is seen, so the tests can fail.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for

from bots.reference import RandomBot
from referee.testing import Harness

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2}
GAME = "toy(players=2,turns=6)"


class QuickBot(RandomBot):
    """Answers after 30 ms (matches last long enough to be watched, far from any limit)."""

    # the type: ignore below: the async form of Bot.choose, which the SDK runs as a task
    async def choose(self, request: Any) -> int:  # type: ignore[override]
        await asyncio.sleep(0.03)
        return 0


def started(bot: RandomBot) -> list[int]:
    """Match ids of the ``MatchStarted`` messages ``bot`` received (its ``received`` list)."""
    assert bot.received is not None
    return [m.match_started.match_id for m in bot.received if m.HasField("match_started")]


def recording(seed: int) -> QuickBot:
    bot = QuickBot(seed=seed)
    bot.received = []
    return bot


@pytest.mark.parametrize("pinned", [True, False])
async def test_a_pinned_stream_is_seated_in_its_match_and_in_no_other(pinned: bool) -> None:
    """Bot 1's only stream is pinned to match 921: match 922 finds no session of bot 1 (no-show,
    unrated, nobody charged), then match 921 is played on it. Control: unpinned, it plays 922."""
    bot1 = recording(1)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(bot1, "tok-a", only_match_id=921 if pinned else 0)
        h.start_bot(QuickBot(seed=2, max_concurrent_matches=8), "tok-b")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        assert [s.only_match_id for s in h.core.registry.by_bot[1]] == [921 if pinned else 0]
        assert [s.only_match_id for s in h.core.registry.by_bot[2]] == [0]
        other = await h.run_match(922, GAME, [1, 2], no_show_timeout_ms=500)
        own = await h.run_match(921, GAME, [1, 2], no_show_timeout_ms=3000)
    assert own.status == "finished" and [s.verdict for s in own.seats] == ["normal", "normal"], own
    if pinned:
        assert other.status == "aborted_no_show", other
        assert [s.verdict for s in other.seats] == ["no_show", "normal"]
        assert started(bot1) == [921]
    else:
        assert other.status == "finished", other
        assert started(bot1) == [922, 921]


def seating_tried(h: Harness, match_id: int) -> bool:
    """Whether the referee has made its first pass at seating ``match_id``: it seats in seat order, so
    once seat 1 (the always-free bot 2) has its session, seat 0's stream has been chosen or found missing."""
    assert h.core is not None
    running = h.core.rooms.get(match_id)
    return running is not None and running[0].seats[1].session is not None


@pytest.mark.parametrize("pinned", [True, False])
async def test_two_matches_of_one_bot_each_get_the_process_started_for_them(pinned: bool) -> None:
    """The race of the hosted ladder, step by step: match 932's request reaches the referee while
    only match 931's seat process (one-match, like a hosted seat) is connected. Pinned, 932 waits for
    its own process and each plays its own match. Control: unpinned, 931's process plays 932, so 931
    is left to 932's process (which its worker would stop as soon as 932 has ended)."""
    a, b = recording(1), recording(3)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(QuickBot(seed=2, max_concurrent_matches=8), "tok-b")
        h.start_bot(a, "tok-a", stop_after_matches=1, only_match_id=931 if pinned else 0)
        await h.wait_sessions(2)
        await h.wait_sessions(1)
        second = asyncio.create_task(h.run_match(932, GAME, [1, 2], no_show_timeout_ms=8000))
        await wait_for(lambda: seating_tried(h, 932))
        first = asyncio.create_task(h.run_match(931, GAME, [1, 2], no_show_timeout_ms=8000))
        await wait_for(lambda: seating_tried(h, 931))
        h.start_bot(b, "tok-a", stop_after_matches=1, only_match_id=932 if pinned else 0)
        results = await asyncio.gather(first, second)
    for r in results:
        assert r.status == "finished", r
        assert [s.verdict for s in r.seats] == ["normal", "normal"], r
    assert (started(a), started(b)) == (([931], [932]) if pinned else ([932], [931]))


@pytest.mark.parametrize("pinned", [True, False])
async def test_a_dropped_seat_waits_for_its_own_process_not_another_matchs(pinned: bool) -> None:
    """Match 941's stream drops mid-match while a stream of the same bot pinned to match 942 is
    idle. Pinned, the seat is not handed to it: it waits (grace) for its own process, which comes
    back and finishes the match. Control: unpinned, the idle stream takes the seat at once."""
    own, idle = recording(1), recording(3)
    async with Harness(TOKENS, reconnect_grace_ms=5000) as h:
        assert h.core is not None
        core = h.core
        h.start_bot(QuickBot(seed=2, max_concurrent_matches=8), "tok-b")
        h.start_bot(own, "tok-a", only_match_id=941 if pinned else 0)
        await h.wait_sessions(2)
        await h.wait_sessions(1)
        h.start_bot(idle, "tok-a", only_match_id=942 if pinned else 0)
        await h.wait_sessions(1, count=2)
        match = asyncio.create_task(h.run_match(941, "toy(players=2,turns=30)", [1, 2], no_show_timeout_ms=3000))
        await wait_for(lambda: 941 in core.rooms and len(core.rooms[941][0].steps) >= 4)
        own.disconnect(reconnect_after_s=0.5)
        result = await match
    assert result.status == "finished", result
    assert [s.verdict for s in result.seats] == ["normal", "normal"], result
    assert started(idle) == ([] if pinned else [941])
    assert started(own) == ([941, 941] if pinned else [941])  # pinned: again after its reconnect


async def test_a_match_takes_the_stream_pinned_to_it_before_an_unpinned_one() -> None:
    """Bot 1 has an unpinned stream (connected first) and one pinned to match 961; matches 961 then 962
    are asked for. 961 must take its pinned stream (which may play nothing else), leaving the unpinned
    one to 962: both are played. (Most free first, as before, would give 961 the unpinned stream, and 962
    would find none: a no-show.)"""
    loose, pinned = recording(1), recording(3)
    async with Harness(TOKENS) as h:
        h.start_bot(QuickBot(seed=2, max_concurrent_matches=8), "tok-b")
        h.start_bot(loose, "tok-a", stop_after_matches=1)
        await h.wait_sessions(2)
        await h.wait_sessions(1)
        h.start_bot(pinned, "tok-a", stop_after_matches=1, only_match_id=961)
        await h.wait_sessions(1, count=2)
        first = asyncio.create_task(h.run_match(961, GAME, [1, 2], no_show_timeout_ms=3000))
        await wait_for(lambda: seating_tried(h, 961))
        second = asyncio.create_task(h.run_match(962, GAME, [1, 2], no_show_timeout_ms=3000))
        results = await asyncio.gather(first, second)
    assert [r.status for r in results] == ["finished", "finished"], results
    assert (started(pinned), started(loose)) == ([961], [962])


async def test_a_stream_pinned_to_one_attempt_is_not_seated_in_the_next() -> None:
    """A worker starts a hosted seat for one attempt of a match (``Hello.only_attempt``). Attempt 2 of
    match 971 must be played by the stream started for attempt 2, not by attempt 1's (still connected,
    about to be stopped by its worker), although that one connected first."""
    old, new = recording(1), recording(3)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(QuickBot(seed=2, max_concurrent_matches=8), "tok-b")
        h.start_bot(old, "tok-a", stop_after_matches=1, only_match_id=971, only_attempt=1)
        await h.wait_sessions(2)
        await h.wait_sessions(1)
        h.start_bot(new, "tok-a", stop_after_matches=1, only_match_id=971, only_attempt=2)
        await h.wait_sessions(1, count=2)
        assert sorted((s.only_match_id, s.only_attempt) for s in h.core.registry.by_bot[1]) == [(971, 1), (971, 2)]
        result = await h.run_match(971, GAME, [1, 2], attempt=2, no_show_timeout_ms=3000)
    assert result.status == "finished", result
    assert (started(old), started(new)) == ([], [971])
