"""A live match watched in a browser.

Given a running match (claimed in the ladder) whose steps a referee-side
feed (:class:`referee.live.LiveFeed`, the object a room publishes through)
writes to Redis while it is played through the engine, and a web server
relaying that feed with a delay of ``DELAY`` seconds, when chromium opens the
match page, then new steps appear while the match is still being played, no
step is ever on the page sooner than ``DELAY`` seconds after Redis stored it
(the oracle: the stream's own entry ids, Redis's clock in milliseconds), and
the final result is shown when the match ends. The feed carries only the
spectator observation: no entry names a card the spectator has not seen.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import test_web_browser as wb
from fixtures.browser import browser, chromium_present  # noqa: F401 - fixtures are found by name
from fixtures.web_helpers import shared_site
from test_web_labels import _mentions, _vocabulary

from games.api import CHANCE
from games.registry import load_game
from ladder import make_pool
from ladder.matches import claim_match
from ladder.tournaments import plan_match
from web import start_background
from web.live import LiveConfig, playing_now

page = wb.page  # the browser tests' fixture

DELAY = 2.0
STEP_S = 0.15


def _play_and_publish(redis_url: str, ns: str, match_id: int, game_string: str, published: dict[str, Any],
                      go: threading.Event | None = None, step_s: float = STEP_S) -> None:
    """Play a match through the engine, publishing it through a LiveFeed as a room does, ``step_s`` apart
    (a viewer's pace; a test that reads the stream afterwards needs none).

    The initial state is published at once; with ``go``, play starts when it is set (the browser is watching).
    """
    from referee.live import LiveFeed, Publisher

    async def run() -> None:
        publisher = Publisher(redis_url, ns)
        game = load_game(game_string)
        state = game.new_initial_state()
        feed = LiveFeed(publisher, match_id, game.name, game.game_string(), game.num_players)
        feed.start(state)
        if go is not None:
            await asyncio.get_running_loop().run_in_executor(None, go.wait, 60)
        rng = random.Random(7)
        while not state.is_terminal():
            p = state.current_player()
            action = state.sample_chance(rng) if p == CHANCE else rng.choice(state.legal_actions())
            state.apply_action(action)
            feed.step(state, p, action)
            await asyncio.sleep(step_s)
        outcome = state.outcome()
        published["playing_until"] = time.time()
        feed.end("finished", outcome.reason, outcome.scores, outcome.ranks)
        await publisher.close()

    asyncio.run(run())


@pytest.fixture
def live_site(pg_admin_url: str, request: pytest.FixtureRequest, redis_base_url: str,
              redis_prefix: str) -> Iterator[tuple[Any, Any, str]]:
    site = shared_site(pg_admin_url, request.config)
    ns = redis_prefix.rstrip(":")
    server = start_background(site.database_url, live=LiveConfig(redis_base_url, DELAY, ns))
    try:
        yield server, site, ns
    finally:
        server.stop()


def test_a_live_match_updates_in_the_browser_never_ahead_of_the_delay(page: Any, live_site: Any,
                                                                      redis_base_url: str) -> None:
    import redis

    server, site, ns = live_site
    pool = make_pool(site.database_url, max_size=2)
    try:
        bots = [site.bots["greedy-alpha"], site.bots["random-gamma"]]
        gs = load_game("floriferous(players=2)").game_string()
        mid = plan_match(pool, game_string=gs, bot_ids=bots, plan_key=f"web:live:{ns}")
        assert claim_match(pool, mid, "web-tests") is not None  # running
    finally:
        pool.close()
    published: dict[str, Any] = {}
    go = threading.Event()
    publisher = threading.Thread(target=_play_and_publish, args=(redis_base_url, ns, mid, gs, published, go))
    publisher.start()
    r = redis.Redis.from_url(redis_base_url)
    try:
        key = f"{ns}:live:{mid}"
        deadline = time.time() + 5
        while not r.exists(key) and time.time() < deadline:
            time.sleep(0.02)
        # "playing now" lists it, on the home page and the game's leaderboard
        page.goto(server.url + "/")
        assert f"Match #{mid}" in page.inner_text("#playing-now")
        page.goto(server.url + "/leaderboard/floriferous")
        assert f"Match #{mid}" in page.inner_text("#playing-now")
        page.goto(server.url + f"/matches/{mid}")
        assert page.locator("#live-view").count() == 1
        deadline = time.time() + 20  # (a polled read: the site's CSP forbids the eval wait_for_function uses)
        while not page.inner_text("#live-status").startswith("live"):
            assert time.time() < deadline, page.inner_text("#live-status")
            time.sleep(0.05)
        go.set()  # the browser is connected: the match is played from now on

        times: dict[int, float] = {}
        last = ["-"]

        def stored_at() -> dict[int, float]:
            """Step -> when Redis stored it (the stream id's milliseconds), read incrementally."""
            for entry_id, fields in r.xrange(key, min=last[0]):
                last[0] = "(" + entry_id.decode()
                e = json.loads(fields[b"e"])
                if "i" in e:
                    times[int(e["i"])] = int(entry_id.decode().split("-")[0]) / 1000.0
            return times

        seen_during_play: set[int] = set()
        checks = 0
        end = time.time() + 60
        while time.time() < end:
            shown = page.get_attribute("#live-view", "data-step")
            now = time.time()
            if shown is not None:
                i = int(shown)
                t = stored_at()[i]
                assert now - t >= DELAY - 0.01, f"step {i} shown {now - t:.3f} s after Redis stored it"
                checks += 1
                if "playing_until" not in published:
                    seen_during_play.add(i)
            if page.get_attribute("#live-view", "data-ended") == "1":
                break
            time.sleep(0.1)
        assert page.get_attribute("#live-view", "data-ended") == "1", "the end never reached the page"
        assert len(seen_during_play) >= 3, f"steps shown while the match was played: {sorted(seen_during_play)}"
        assert "Match over (finished)" in page.inner_text("#live-result")
        assert checks >= 10
        # every step published (the feed keeps steps from when the watch began) is listed, in order
        published_steps = [s[0] for _, f in r.xrange(key) for s in json.loads(f[b"e"]).get("steps", ())]
        assert published_steps, "no step was published while the page watched"
        listed = [int(li.get_attribute("data-step") or -1) for li in page.locator("#live-steps li:not(.gap)").all()]
        assert listed == published_steps
        assert published_steps == list(range(published_steps[0], published_steps[-1] + 1))
        assert page.errors == []
    finally:
        go.set()
        publisher.join(30)
        r.delete(f"{ns}:live:{mid}")
        r.close()


def test_the_live_feed_is_spectator_only(redis_base_url: str, redis_prefix: str) -> None:
    """Every entry's observation is the spectator's (seat -1) and its label names only cards seen by then."""
    import redis

    ns = redis_prefix.rstrip(":")
    gs = load_game("lafleur(players=2)").game_string()
    r = redis.Redis.from_url(redis_base_url)
    r.set(f"{ns}:live:watch:999001", "1", ex=120)  # watched (as the web marks it): every step is published
    t = threading.Thread(target=_play_and_publish, args=(redis_base_url, ns, 999_001, gs, {}), kwargs={"step_s": 0.002})
    t.start()
    t.join(60)
    try:
        entries = [json.loads(f[b"e"]) for _, f in r.xrange(f"{ns}:live:999001")]
    finally:
        r.delete(f"{ns}:live:999001", f"{ns}:live:watch:999001")
        r.close()
    assert entries[-1]["end"] is True
    labels = [s for e in entries[:-1] for s in e["steps"]]
    assert len(labels) > 50 and [s[0] for s in labels] == list(range(len(labels)))
    vocab = _vocabulary("lafleur")
    public = ""
    for e in entries[:-1]:
        assert e["observation"]["seat"] == -1  # the spectator's observation, never a seat's
        public += json.dumps(e["observation"], ensure_ascii=False)
        for i, _, label in e["steps"]:
            for ids in _mentions(label, vocab):
                assert any(f'"{c}"' in public for c in ids), (i, label)


def test_pages_stay_up_with_the_embedded_redis_url_form_and_without_a_feed() -> None:
    """Under ``parterre demo``/``up`` the Redis URL is Celery's ``redis+socket://`` form: the home page
    failed with 500 (redis-py refuses that scheme). It is converted, and an unreachable feed gives
    an empty "playing now" list, not an error."""
    assert LiveConfig("redis+socket:///tmp/x/redis.socket").redis_url == "unix:///tmp/x/redis.socket"
    assert LiveConfig("redis://127.0.0.1:6379/0").redis_url == "redis://127.0.0.1:6379/0"

    class _State:
        live = LiveConfig("redis+socket:///nonexistent/parterre-test.socket", 0.0, "t")

    class _App:
        state = _State()

    class _Request:
        app = _App()

    assert playing_now(_Request()) == []  # type: ignore[arg-type]  # a minimal stand-in for a Request
