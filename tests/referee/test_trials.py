"""Trials (``RunMatchRequest.trial``): unrated games whose seats are taken by credential (referee/trials.py).

A hosted version under validation has no published token, its disguised
opponent is no ladder bot's, and a regression test seats two versions of one
bot id: the worker declares a trial with a credential digest per seat, and the
referee admits a stream whose ``Hello.token`` hashes to one of them for that
seat only, until the trial ends.

Oracles: the referee's results (statuses, verdicts, seat bot ids, replay
players), the messages each bot process received (``MatchStarted`` seat,
``Welcome``), the SDK's ``AuthenticationError`` (the referee's
``UNAUTHENTICATED``), gRPC statuses of the control call; each attack has a
credential or token that the old bot-id seating would have let through.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from typing import Any

import grpc
import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for

from bots.reference import RandomBot
from bots.sdk import AuthenticationError
from proto.parterre.v1 import control_pb2 as control_pb
from referee.testing import Harness

register_toy()

GAME = "toy(players=2,turns=6)"
TOKENS = {"tok-a": 1, "tok-b": 2}


def credential() -> tuple[str, str]:
    """A fresh credential and its digest, as the worker makes them."""
    cred = secrets.token_urlsafe(32)
    return cred, hashlib.sha256(cred.encode()).hexdigest()


def recording(seed: int) -> RandomBot:
    bot = RandomBot(seed=seed)
    bot.received = []
    return bot


def seats_started(bot: RandomBot) -> list[tuple[int, int]]:
    """``(match_id, seat)`` of every MatchStarted ``bot`` received."""
    assert bot.received is not None
    return [(m.match_started.match_id, m.match_started.seat) for m in bot.received if m.HasField("match_started")]


def welcomed_as(bot: RandomBot) -> list[int]:
    assert bot.received is not None
    return [m.welcome.bot_id for m in bot.received if m.HasField("welcome")]


async def open_trial(h: Harness, match_id: int, bot_ids: list[int], digests: list[str], **kwargs: Any) -> Any:
    """Start a trial's RunMatch as a task; return it once the referee has taken its digests (its first
    event, Progress at step 0, is sent then)."""
    assert h.core is not None
    task = asyncio.create_task(h.run_match_events(match_id, GAME, bot_ids, trial=True,
                                                  seat_credential_digests=digests, **kwargs))
    await wait_for(lambda: all(d in h.core.trial_book.by_digest for d in digests) or task.done(), timeout_s=5)
    return task


def result_of(events: list[control_pb.MatchEvent]) -> control_pb.MatchResult:
    assert events[-1].HasField("result")
    return events[-1].result


async def test_two_seats_of_one_bot_are_told_apart_by_credential_and_the_credentials_die_with_the_trial() -> None:
    """A regression test's shape: both seats are bot 7 (no token of bot 7 exists). Each credential's stream
    gets its own seat, is welcomed and shown as bot 7 with the request's names; the first event is Progress
    at step 0; the trial's room is not among the ladder's. Once the trial ended, its sessions are closed and
    a credential of it is refused (UNAUTHENTICATED)."""
    (c0, d0), (c1, d1) = credential(), credential()
    first, second = recording(1), recording(2)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        task = await open_trial(h, 4711, [7, 7], [d1, d0], seat_bot_names=["seven (v2)", "seven (v1)"])
        assert not h.core.rooms and len(h.core.trials) == 1
        h.start_bot(first, c0, stop_after_matches=1, initial_backoff_s=0.05)
        h.start_bot(second, c1, stop_after_matches=1, initial_backoff_s=0.05)
        events = await asyncio.wait_for(task, 10)
        result = result_of(events)
        await wait_for(lambda: not h.core.registry.sessions(), timeout_s=5)
        assert not h.core.trials and not h.core.trial_book.by_digest
        late = RandomBot(seed=3)
        with pytest.raises(AuthenticationError):
            await asyncio.wait_for(late.arun(h.address, c0, reconnect=False), 5)
    assert events[0].HasField("progress") and events[0].progress.step == 0
    assert result.status == "finished", result
    assert [(s.seat, s.bot_id, s.verdict) for s in result.seats] == [(0, 7, "normal"), (1, 7, "normal")]
    assert seats_started(second) == [(4711, 0)] and seats_started(first) == [(4711, 1)]  # by credential
    assert welcomed_as(first) == [7] and welcomed_as(second) == [7]
    players = json.loads(result.replay_json)["players"]
    assert [(p["bot_id"], p["name"]) for p in players] == [(7, "seven (v2)"), (7, "seven (v1)")]


async def test_a_bot_token_of_the_seats_bot_never_takes_a_trial_seat() -> None:
    """Bot 1 is connected with its own token; a trial seats bot 1 and bot 2 by credential and only seat 1's
    credential connects: seat 0 is a no-show, bot 1's ordinary stream is never seated (bot-id seating took it)."""
    (_, d0), (c1, d1) = credential(), credential()
    own = recording(1)
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(own, "tok-a")
        await h.wait_sessions(1)
        task = await open_trial(h, 10, [1, 2], [d0, d1], no_show_timeout_ms=600)
        h.start_bot(RandomBot(seed=2), c1, stop_after_matches=1, initial_backoff_s=0.05)
        result = result_of(await asyncio.wait_for(task, 10))
    assert result.status == "aborted_no_show", result
    assert [s.verdict for s in result.seats] == ["no_show", "normal"]
    assert seats_started(own) == []


async def test_a_trial_credential_takes_no_other_seat_no_other_trial_and_no_ladder_match() -> None:
    """Two streams with seat 0's credential of trial A: one takes seat 0, the other never seat 1. A second
    trial B of the same bots and a ladder match of bot 7 and 8 run meanwhile: neither takes a stream of A's
    credential (all no-shows), and no trial session is among bot 7's sessions."""
    (c0, d0), (_, d1) = credential(), credential()
    (_, e0), (_, e1) = credential(), credential()
    twins = [recording(1), recording(2)]
    async with Harness(TOKENS) as h:
        assert h.core is not None
        trial_a = await open_trial(h, 20, [7, 8], [d0, d1], no_show_timeout_ms=1500)
        for bot in twins:
            h.start_bot(bot, c0, initial_backoff_s=0.05)
        await wait_for(lambda: len(h.core.registry.sessions()) == 2, timeout_s=5)
        assert all(s.trial and s.bot_id == 7 and s.key < 0 for s in h.core.registry.sessions())
        assert 7 not in h.core.registry.by_bot
        trial_b = await open_trial(h, 20, [7, 8], [e0, e1], no_show_timeout_ms=500)
        ladder = await h.run_match(21, GAME, [7, 8], no_show_timeout_ms=500)
        a = result_of(await asyncio.wait_for(trial_a, 10))
        b = result_of(await asyncio.wait_for(trial_b, 10))
    assert ladder.status == "aborted_no_show" and [s.verdict for s in ladder.seats] == ["no_show", "no_show"]
    assert b.status == "aborted_no_show" and [s.verdict for s in b.seats] == ["no_show", "no_show"]
    assert a.status == "aborted_no_show" and [s.verdict for s in a.seats] == ["normal", "no_show"]
    assert sorted(len(seats_started(bot)) for bot in twins) == [0, 0]  # nothing started: no MatchStarted


async def test_a_trial_neither_supersedes_nor_collides_with_the_ladder_match_of_its_shown_id() -> None:
    """Ladder match 42 attempt 1 waits for its bots; a trial shown as match 42 attempt 2 is played to the end
    meanwhile and the ladder room is untouched (a ladder request of attempt 2 cancels attempt 1: control)."""
    (c0, d0), (c1, d1) = credential(), credential()
    async with Harness(TOKENS) as h:
        assert h.core is not None
        ladder = asyncio.create_task(h.run_match(42, GAME, [1, 2], no_show_timeout_ms=3000))
        await wait_for(lambda: 42 in h.core.rooms, timeout_s=5)
        trial = await open_trial(h, 42, [1, 2], [d0, d1], attempt=2)
        h.start_bot(RandomBot(seed=1), c0, stop_after_matches=1, initial_backoff_s=0.05)
        h.start_bot(RandomBot(seed=2), c1, stop_after_matches=1, initial_backoff_s=0.05)
        played = result_of(await asyncio.wait_for(trial, 10))
        assert 42 in h.core.rooms and not h.core.rooms[42][1].done()
        h.start_bot(RandomBot(seed=3), "tok-a")
        h.start_bot(RandomBot(seed=4), "tok-b")
        rated = await asyncio.wait_for(ladder, 10)
    assert played.status == "finished" and played.attempt == 2
    assert rated.status == "finished" and rated.attempt == 1, rated


async def test_trial_requests_are_checked() -> None:
    """Only the service token declares a trial; digests outside a trial, a missing, malformed or repeated
    digest are refused (INVALID_ARGUMENT); a digest of a running trial cannot be taken again (ALREADY_EXISTS)."""
    (_, d0), (_, d1) = credential(), credential()
    async with Harness(TOKENS) as h:
        assert h.core is not None
        calls = {
            "no service token": dict(trial=True, seat_credential_digests=[d0, d1], metadata=[]),
            "outside a trial": dict(seat_credential_digests=[d0, d1]),
            "one missing": dict(trial=True, seat_credential_digests=[d0, ""]),
            "too few": dict(trial=True, seat_credential_digests=[d0]),
            "malformed": dict(trial=True, seat_credential_digests=[d0, d1.upper()]),
            "repeated": dict(trial=True, seat_credential_digests=[d0, d0]),
        }
        codes = {}
        for what, kwargs in calls.items():
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await h.run_match_events(30, GAME, [1, 2], **kwargs)  # type: ignore[arg-type]  # mixed kwargs dict
            codes[what] = err.value.code()
        running = await open_trial(h, 31, [1, 2], [d0, d1], no_show_timeout_ms=800)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.run_match_events(32, GAME, [1, 2], trial=True, seat_credential_digests=[d1, credential()[1]])
        codes["taken"] = err.value.code()
        await asyncio.wait_for(running, 10)
        assert not h.core.trial_book.by_digest and not h.core.trial_book.digests
    assert codes.pop("no service token") == grpc.StatusCode.UNAUTHENTICATED
    assert codes.pop("taken") == grpc.StatusCode.ALREADY_EXISTS
    assert set(codes.values()) == {grpc.StatusCode.INVALID_ARGUMENT}, codes


async def test_a_trial_session_is_not_rechecked_against_the_token_store_and_ends_with_its_trial() -> None:
    """The token re-check leaves a trial's session alone (the store does not know its credential); the trial's
    end closes it (the SDK sees the stream end, reconnects, and is refused: AuthenticationError)."""
    (c0, d0), (_, d1) = credential(), credential()
    async with Harness(TOKENS) as h:
        assert h.core is not None
        trial = await open_trial(h, 50, [1, 2], [d0, d1], no_show_timeout_ms=1500)
        bot_task = h.start_bot(RandomBot(seed=1), c0, initial_backoff_s=0.05)
        await wait_for(lambda: len(h.core.registry.sessions()) == 1, timeout_s=5)
        await h.core._recheck_tokens()
        assert [s.closed or s.kill_reason is not None for s in h.core.registry.sessions()] == [False]
        result_of(await asyncio.wait_for(trial, 10))
        with pytest.raises(AuthenticationError):
            await asyncio.wait_for(bot_task, 10)
        assert not h.core.registry.sessions()


async def test_a_trial_has_no_live_feed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rooms ask ``referee.live.feed_for`` for their feed: a ladder match does, a trial never (control: the
    ladder match played on the same referee)."""
    from referee import live

    asked: list[int] = []

    def feed_for(match_id: int, *_: Any) -> None:
        asked.append(match_id)

    monkeypatch.setattr(live, "feed_for", feed_for)
    (c0, d0), (c1, d1) = credential(), credential()
    async with Harness(TOKENS) as h:
        trial = await open_trial(h, 60, [1, 2], [d0, d1])
        h.start_bot(RandomBot(seed=1), c0, stop_after_matches=1, initial_backoff_s=0.05)
        h.start_bot(RandomBot(seed=2), c1, stop_after_matches=1, initial_backoff_s=0.05)
        assert result_of(await asyncio.wait_for(trial, 10)).status == "finished"
        h.start_bot(RandomBot(seed=3), "tok-a")
        h.start_bot(RandomBot(seed=4), "tok-b")
        assert (await h.run_match(61, GAME, [1, 2])).status == "finished"
    assert asked == [61]


async def test_a_trial_session_is_never_in_presence_nor_lent() -> None:
    """The cluster's presence record shows bot 1's own stream, not the trial's session of bot 7; a relay request
    for bot 7 or for the session's own key lends nothing."""
    from referee.cluster import Cluster, ClusterConfig

    (c0, d0), (_, d1) = credential(), credential()
    async with Harness(TOKENS) as h:
        assert h.core is not None
        h.start_bot(RandomBot(seed=1), "tok-a")
        trial = await open_trial(h, 70, [7, 8], [d0, d1], no_show_timeout_ms=1500)
        h.start_bot(RandomBot(seed=2), c0, initial_backoff_s=0.05)
        await wait_for(lambda: len(h.core.registry.sessions()) == 2, timeout_s=5)
        key = next(s.key for s in h.core.registry.sessions() if s.trial)
        cluster = Cluster(h.core, ClusterConfig(redis_url="redis://127.0.0.1:1/0"))  # never started: no Redis
        shown = sorted(cluster.snapshot()["bots"])
        lent = [cluster.serve_request({"bot_id": b, "host": "other", "address": "127.0.0.1:1", "count": 1,
                                       "match_ids": [70]}) for b in (7, key)]
        await asyncio.wait_for(trial, 10)
    assert shown == ["1"]
    assert lent == [0, 0] and not cluster.links
