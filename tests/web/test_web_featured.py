"""The featured match (``/tv``, web/featured.py): always something to watch, never a held deal.

Given running matches published on the live feed the way a referee publishes them
(:class:`referee.live.Publisher`, a real Redis), with seat ratings the test sets and a seat
rotation whose twin on the same seed is still planned, ``/tv`` sends the browser to the
strongest table that may be shown; as matches end the featured match changes; with nothing
that may be shown it says why. The oracles are the ratings and the plans the test made, not
the code's own ordering.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from games.registry import load_game
from ladder.matches import claim_match
from ladder.tournaments import plan_match
from web import create_app
from web.live import LiveConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

GAME = "floriferous(players=2)"


def _publish(redis_url: str, ns: str, started: list[int], ended: list[int]) -> None:
    """Publish the start of ``started`` and the end of ``ended`` through a referee's Publisher."""
    from referee.live import LiveFeed, Publisher

    async def run() -> None:
        publisher = Publisher(redis_url, ns)
        game = load_game(GAME)
        for mid in started + ended:
            feed = LiveFeed(publisher, mid, game.name, game.game_string(), game.num_players)
            feed.start(game.new_initial_state())
            if mid in ended:
                feed.end("finished", "played to the end", [1.0, 0.0], [1, 2])
        await asyncio.sleep(0.6)  # a few of the publisher's own turns (every 0.2 s)
        await publisher.close()

    asyncio.run(run())


@pytest.fixture
def site(pool: Any, migrated_url: str, redis_base_url: str, redis_prefix: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    from ladder.bots import register_bot

    bots = {name: register_bot(pool, name)[0] for name in ("a", "b", "c", "d", "e", "f")}
    ratings = {"a": 1800.0, "b": 1700.0, "c": 1500.0, "d": 1300.0, "e": 2100.0, "f": 2000.0}
    with pool.connection() as conn:
        for name, elo in ratings.items():
            conn.execute("INSERT INTO ratings (bot_id, game, elo, games) VALUES (%s, 'floriferous', %s, 10)",
                         (bots[name], elo))
    gs = load_game(GAME).game_string()
    mids: dict[str, Any] = {
        "strong": plan_match(pool, game_string=gs, bot_ids=[bots["a"], bots["b"]], plan_key="tv:strong"),
        "weak": plan_match(pool, game_string=gs, bot_ids=[bots["c"], bots["d"]], plan_key="tv:weak"),
        # the strongest table, but a seat rotation whose twin on the same deal is still to be played
        "held": plan_match(pool, game_string=gs, bot_ids=[bots["e"], bots["f"]], plan_key="tv:held:rot0",
                           seed="tv-deal"),
        "twin": plan_match(pool, game_string=gs, bot_ids=[bots["f"], bots["e"]], plan_key="tv:held:rot1",
                           seed="tv-deal"),
    }
    for key in ("strong", "weak", "held"):
        assert claim_match(pool, mids[key], "tv-test") is not None  # running; the twin stays planned
    ns = redis_prefix.rstrip(":")
    app = create_app(pool=pool, live=LiveConfig(redis_base_url, 0.0, ns))
    with TestClient(app, follow_redirects=False) as client:
        yield client, {**mids, "ns": ns}


def test_tv_shows_the_strongest_table_that_may_be_shown_and_moves_on_as_matches_end(
        site: tuple[Any, dict[str, Any]], redis_base_url: str) -> None:
    client, m = site
    assert "no match is being played" in client.get("/tv").text

    _publish(redis_base_url, m["ns"], [m["strong"], m["weak"], m["held"]], [])
    first = client.get("/tv")
    assert first.status_code == 303 and first.headers["location"] == f"/matches/{m['strong']}?tv=1#live"
    assert first.headers["cache-control"] == "no-store"
    page = client.get(f"/matches/{m['strong']}?tv=1").text
    assert 'id="live-view"' in page and 'data-tv="1"' in page  # the live view goes back to /tv at the end

    held = client.get(f"/matches/{m['held']}").text
    assert 'id="live-view"' not in held and 'id="live-held"' in held and "seat rotation" in held

    _publish(redis_base_url, m["ns"], [], [m["strong"]])
    assert client.get("/tv").headers["location"] == f"/matches/{m['weak']}?tv=1#live"

    _publish(redis_base_url, m["ns"], [], [m["weak"]])
    last = client.get("/tv")
    assert last.status_code == 200 and 'id="tv-why"' in last.text
    assert "seat rotation" in last.text and 'http-equiv="refresh"' in last.text  # says why, looks again

    home = client.get("/").text
    assert 'href="/tv"' in home


def test_tv_without_a_live_feed_says_so(pool: Any) -> None:
    with TestClient(create_app(pool=pool), follow_redirects=False) as client:
        page = client.get("/tv")
    assert page.status_code == 200 and "no live feed" in page.text
