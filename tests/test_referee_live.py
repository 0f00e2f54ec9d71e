"""The referee's live feed (referee/live.py): a room publishes spectator-view steps of a real match.

Given a referee with the feed configured and two bots playing Floriferous, when
the match is played, then the Redis stream holds the initial state, one entry
per replay step in order, each with the **spectator** observation equal to the
engine's ``State.observation(None)`` after that step (rebuilt from the
replay), and a last entry with the result; the match leaves the "playing now"
index when it ends.
"""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from fixtures.waiting import async_wait_until

from bots.reference import RandomBot
from games.replay import iter_states
from referee import live
from referee.testing import Harness, replay_of

TOKENS = {"tok-a": 1, "tok-b": 2}
LIVE_FLOWAR_SEED = "live-42"
"""A match seed whose Flowar deal puts Flower cards back while filling the Market."""


@pytest.fixture
def feed(redis_base_url: str, redis_prefix: str):
    ns = redis_prefix.rstrip(":")
    live.configure(redis_base_url, ns)
    try:
        yield redis_base_url, ns
    finally:
        live.configure(None)


async def test_a_room_publishes_every_step_in_the_spectator_view(feed) -> None:
    import redis

    url, ns = feed
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, name="alpha"), "tok-a")
        h.start_bot(RandomBot(seed=2, name="beta"), "tok-b")
        events = await h.run_match_events(41, "floriferous(players=2)", [1, 2], seed="live-41")
    replay = replay_of(events[-1].result)
    r = redis.Redis.from_url(url)
    try:
        def ended() -> list[dict[str, Any]] | None:  # the feed drains in the background
            entries = [json.loads(f[b"e"]) for _, f in r.xrange(live.stream_key(ns, 41))]
            return entries if entries and entries[-1].get("end") else None

        entries = await async_wait_until(ended, 10, 0.05, what="the feed's end entry")
        assert not r.hexists(live.index_key(ns), "41")
    finally:
        r.delete(live.stream_key(ns, 41))
        r.close()
    assert entries[-1]["end"] is True and entries[-1]["status"] == "finished"
    assert entries[-1]["ranks"] == replay["result_ranks"]
    steps = entries[:-1]
    assert [e["i"] for e in steps] == list(range(-1, len(replay["steps"])))
    for (i, state), e in zip(iter_states(replay), steps, strict=True):
        assert e["observation"] == json.loads(json.dumps(state.observation(None))), i
        if i >= 0:
            assert e["player"] == replay["steps"][i]["player"]


async def test_the_live_labels_are_the_viewers_spectator_labels(feed: tuple[str, str]) -> None:
    """One rule for both (games.spectator): the feed's label of every step of a Flowar match is the
    viewer's spectator step label (ladder/web/labels.py), including the Flower cards a Market refill
    put back ("Game Setup", step 5), which this match has."""
    import redis

    from ladder.web.labels import SPECTATOR, step_labels

    url, ns = feed
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, name="alpha"), "tok-a")
        h.start_bot(RandomBot(seed=2, name="beta"), "tok-b")
        events = await h.run_match_events(42, "flowar(players=2)", [1, 2], seed=LIVE_FLOWAR_SEED)
    replay = replay_of(events[-1].result)
    r = redis.Redis.from_url(url)
    try:
        def ended() -> list[dict[str, Any]] | None:  # the feed drains in the background
            stream = cast("list[tuple[bytes, dict[bytes, bytes]]]", r.xrange(live.stream_key(ns, 42)))
            entries = [json.loads(f[b"e"]) for _, f in stream]
            return entries if entries and entries[-1].get("end") else None

        entries = await async_wait_until(ended, 20, 0.05, what="the feed's end entry")
    finally:
        r.delete(live.stream_key(ns, 42))
        r.close()
    labels = [e["label"] for e in entries[1:-1]]
    assert labels == step_labels(replay, SPECTATOR)
    assert any(" · put back F" in label for label in labels)
