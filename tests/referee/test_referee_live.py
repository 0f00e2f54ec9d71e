"""The referee's live feed (referee/live.py): a room publishes the spectator view of a real match.

Given a referee with the feed configured as ``parterre referee`` configures it
and two bots playing Floriferous, when the match is played while watched, then
the Redis stream holds the initial state and, in batches, the label of every
replay step in order, each entry with the **spectator** observation equal to
the engine's ``State.observation(None)`` after its last step (rebuilt from the
replay), and a last entry with the result; unwatched, only snapshots. The match
leaves the "playing now" index when it ends, and "playing now" never counts
more steps than a viewer may see after the delay.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

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


async def _entries(url: str, ns: str, match_id: int) -> list[dict]:
    """The stream's entries once its end is there (the publisher writes in the background)."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(url)
    try:
        async with asyncio.timeout(10):
            while True:
                entries = [json.loads(f[b"e"]) for _, f in await r.xrange(live.stream_key(ns, match_id))]
                if entries and entries[-1].get("end"):
                    break
                await asyncio.sleep(0.05)
        assert not await r.hexists(live.index_key(ns), str(match_id))
        await r.delete(live.stream_key(ns, match_id), live.watch_key(ns, match_id))
    finally:
        await r.aclose()
    return entries


async def _play(match_id: int) -> dict:
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, name="alpha"), "tok-a")
        h.start_bot(RandomBot(seed=2, name="beta"), "tok-b")
        events = await h.run_match_events(match_id, "floriferous(players=2)", [1, 2], seed=f"live-{match_id}")
    return replay_of(events[-1].result)


async def test_a_watched_room_publishes_every_step_in_the_spectator_view(feed) -> None:
    """Watched (the web's key set), every step's spectator label is published, in order, each entry's
    observation the engine's spectator observation after the last step it covers."""
    import redis

    url, ns = feed
    r = redis.Redis.from_url(url)
    r.set(live.watch_key(ns, 41), "1", ex=60)
    r.close()
    replay = await _play(41)
    entries = await _entries(url, ns, 41)
    assert entries[-1]["end"] is True and entries[-1]["status"] == "finished"
    assert entries[-1]["ranks"] == replay["result_ranks"]
    body = entries[:-1]
    steps = [s for e in body for s in e["steps"]]
    assert [s[0] for s in steps] == list(range(len(replay["steps"])))
    assert [s[1] for s in steps] == [st["player"] for st in replay["steps"]]
    states = {i: json.loads(json.dumps(state.observation(None))) for i, state in iter_states(replay)}
    for e in body:
        assert e["observation"] == states[e["i"]], e["i"]
        if e["steps"]:
            assert e["i"] == e["steps"][-1][0]
    assert len(body) < len(steps) / 2  # steps are batched, not one write each


async def test_the_live_labels_are_the_viewers_spectator_labels(feed: tuple[str, str]) -> None:
    """One rule for both (games.spectator): the feed's label of every step of a watched Flowar match is the
    viewer's spectator step label (web/labels.py), the Flower cards a Market refill put back
    ("Game Setup", step 5) included, which this match has. The one difference the batching allows: a
    card the viewer still hides at its step may be named when it is public by the end of the entry's
    batch (the entry's own observation shows it)."""
    import redis

    from games.spectator import hidden_label, named_cards, seen_cards
    from web.labels import SPECTATOR, step_labels

    url, ns = feed
    r = redis.Redis.from_url(url)
    r.set(live.watch_key(ns, 43), "1", ex=60)
    r.close()
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, name="alpha"), "tok-a")
        h.start_bot(RandomBot(seed=2, name="beta"), "tok-b")
        events = await h.run_match_events(43, "flowar(players=2)", [1, 2], seed=LIVE_FLOWAR_SEED)
    replay = replay_of(events[-1].result)
    entries = await _entries(url, ns, 43)
    viewer = step_labels(replay, SPECTATOR)
    fed = [(s[2], e) for e in entries[:-1] for s in e["steps"]]
    assert len(fed) == len(viewer)
    notes = 0
    for i, ((label, entry), shown) in enumerate(zip(fed, viewer, strict=True)):
        if " · put back " in shown:
            notes += 1
        if label == shown:
            continue
        action = replay["steps"][i]["action"]
        note = shown[len(hidden_label("flowar", action)):]
        assert shown.startswith(hidden_label("flowar", action)) and label.endswith(note), (i, label, shown)
        assert named_cards("flowar", action) <= seen_cards("flowar", entry["observation"]), i
    assert notes > 0


async def test_an_unwatched_room_publishes_snapshots_only(feed) -> None:
    """Nobody watching: at most one snapshot per SNAPSHOT_S (none for a match shorter than that), no step
    labels, each the engine's spectator observation at its step; then the end."""
    url, ns = feed
    replay = await _play(42)
    entries = await _entries(url, ns, 42)
    assert entries[-1]["end"] is True and entries[-1]["ranks"] == replay["result_ranks"]
    body = entries[:-1]
    assert all(e["steps"] == [] for e in body)
    assert len(body) <= 3 and len(replay["steps"]) > 50
    states = {i: json.loads(json.dumps(state.observation(None))) for i, state in iter_states(replay)}
    for e in body:
        assert e["observation"] == states[e["i"]], e["i"]


class _SlowRandom(RandomBot):
    """A random bot thinking 100 ms a decision (a match then lasts seconds, longer than the delay)."""

    async def choose(self, request: Any) -> int:  # type: ignore[override]  # the SDK awaits a coroutine choose
        await asyncio.sleep(0.1)
        return self.rng.randrange(request.num_actions)


async def test_playing_now_shows_no_progress_ahead_of_the_delay(feed, pg_admin_url: str,
                                                                 request: pytest.FixtureRequest) -> None:
    """A real referee plays a watched match with its feed configured as ``parterre referee`` does; the home
    page's "playing now" step count, read over and over meanwhile, is never more than the steps Redis had
    stored ``delay`` seconds before the page was answered (the oracle: the stream's own entry ids)."""
    import re

    import httpx
    import redis
    from fixtures.web_helpers import shared_site

    from web import start_background
    from web.live import LiveConfig

    url, ns = feed
    delay, mid = 1.0, 987_001
    site = shared_site(pg_admin_url, request.config)
    r = redis.Redis.from_url(url)
    r.set(live.watch_key(ns, mid), "1", ex=120)  # watched, as while a viewer is connected
    server = start_background(site.database_url, live=LiveConfig(url, delay, ns))
    shown: list[tuple[float, int]] = []
    done = threading.Event()

    def poll() -> None:
        pattern = re.compile(rf"Match #{mid}</a>[^<]*<code>[^<]*</code>[^<]*about (\d+) steps")
        with httpx.Client(timeout=10) as c:
            while not done.is_set():
                html = c.get(server.url + "/").text
                t = time.time()  # answered by now: the page may count the steps stored up to t - delay
                m = pattern.search(html)
                if m:
                    shown.append((t, int(m.group(1))))

    poller = asyncio.create_task(asyncio.to_thread(poll))
    try:
        async with Harness(TOKENS) as h:
            h.start_bot(_SlowRandom(seed=1), "tok-a")
            h.start_bot(_SlowRandom(seed=2), "tok-b")
            await h.run_match(mid, "floriferous(players=2)", [1, 2], seed="playing-now")
    finally:
        done.set()
        await poller
        server.stop()
    try:
        stored = [(int(eid.decode().split("-")[0]) / 1000.0, json.loads(f[b"e"]))
                  for eid, f in r.xrange(live.stream_key(ns, mid))]
    finally:
        r.delete(live.stream_key(ns, mid), live.watch_key(ns, mid))
        r.close()
    steps_by = [(at, int(e["i"]) + 1) for at, e in stored if "i" in e]
    assert shown and max(n for _, n in shown) > 0, shown
    for t, n in shown:
        allowed = max((k for at, k in steps_by if at <= t - delay), default=0)
        assert n <= allowed, f"'playing now' showed {n} steps; {allowed} were stored {delay} s before"
