"""The live view under attack and under a lost Redis, against a real ``parterre web`` process.

Each test starts its own ``redis-server`` (a free port below 32768), a web
process (``python -m parterre web``) relaying the live feed from it, and a
running match (claimed in the ladder) published through the referee's
publisher (:class:`referee.live.Publisher`, as a room publishes it) from a
thread of the test.

* A flood of anonymous viewers — hundreds of parallel server-sent-event
  connections from 40 loopback addresses at once — gets at most
  ``PER_CLIENT`` live views per address (``429`` beyond) and ``VIEWERS`` in
  all (``503`` beyond), every admitted viewer receives the board, the web process holds a small constant number of
  Redis connections (``CLIENT LIST`` of the server, less this test's and the
  publisher's), and ``/api/health`` answers during the flood.
* Redis stopped under a viewer: the viewer gets ``event: unavailable`` and its
  stream ends cleanly, the web process logs no traceback, ``/api/health`` still
  answers; Redis started again empty: the referee's publisher writes the match
  again and a viewer reconnecting gets its board.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fixtures.web_helpers import shared_site

from games.api import CHANCE
from games.registry import load_game
from ladder import make_pool
from ladder.matches import claim_match
from ladder.tournaments import plan_match
from web.live_hub import PER_CLIENT

ROOT = Path(__file__).resolve().parents[2]
NS = "flood"
ADDRESSES = [f"127.0.0.{i}" for i in range(2, 42)]
PER_ADDRESS = PER_CLIENT + 3  # three more than the cap from each address
VIEWERS = 300
"""The web process's cap in these tests (PARTERRE_LIVE_MAX_VIEWERS): below 40 addresses × PER_CLIENT."""


def _free_port() -> int:
    """A free TCP port below 32768 (outside the ephemeral range other processes draw from)."""
    for port in range(20_000 + os.getpid() % 5000, 32_768):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below 32768")


class RedisServer:
    """A ``redis-server`` of this test on ``port`` (no persistence: a restart loses every key)."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port, self.workdir = port, workdir
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--save", "", "--appendonly", "no", "--dir", str(self.workdir)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port, socket_timeout=1).ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


class Publishing:
    """A match played through the engine in a thread, published as a room publishes it, until stopped."""

    def __init__(self, redis_url: str, match_id: int, game_string: str) -> None:
        self.redis_url, self.match_id, self.game_string = redis_url, match_id, game_string
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()

    async def _run(self) -> None:
        import random

        from referee.live import LiveFeed, Publisher

        publisher = Publisher(self.redis_url, NS)
        game = load_game(self.game_string)
        rng = random.Random(3)
        state = game.new_initial_state()
        feed = LiveFeed(publisher, self.match_id, game.name, game.game_string(), game.num_players)
        feed.start(state)
        while not self.stop.is_set():
            if state.is_terminal():  # a long match: start the deal again (the feed only sees steps)
                state = game.new_initial_state()
                feed.state = state
            p = state.current_player()
            action = state.sample_chance(rng) if p == CHANCE else rng.choice(state.legal_actions())
            state.apply_action(action)
            feed.step(state, p, action)
            await asyncio.sleep(0.05)
        await publisher.close()


@pytest.fixture
def live_web(pg_admin_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A redis-server, a running match published to it, and a ``parterre web`` process relaying it."""
    site = shared_site(pg_admin_url, request.config)
    redis_server = RedisServer(_free_port(), tmp_path)
    redis_server.start()
    pool = make_pool(site.database_url, max_size=2)
    try:
        gs = load_game("floriferous(players=2)").game_string()
        mid = plan_match(pool, game_string=gs, bot_ids=[site.bots["greedy-alpha"], site.bots["random-gamma"]],
                         plan_key=f"web:flood:{tmp_path.name}")
        assert claim_match(pool, mid, "flood-tests") is not None  # running
    finally:
        pool.close()
    publishing = Publishing(redis_server.url, mid, gs)
    port = _free_port()
    log = (tmp_path / "web.log").open("wb")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PARTERRE_DATABASE_URL": site.database_url,
           "PARTERRE_REDIS_URL": redis_server.url, "PARTERRE_LIVE_DELAY": "0.5",
           "PARTERRE_CLUSTER_NAMESPACE": NS, "PARTERRE_LIVE_MAX_VIEWERS": str(VIEWERS)}
    web = subprocess.Popen([sys.executable, "-m", "parterre.cli", "web", "--port", str(port)], cwd=ROOT, env=env,
                           stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert web.poll() is None, (tmp_path / "web.log").read_text()
            assert time.monotonic() < deadline, "the web process did not start"
            time.sleep(0.2)
        yield {"base": base, "match_id": mid, "redis": redis_server, "log": tmp_path / "web.log",
               "publishing": publishing}
    finally:
        web.terminate()
        web.wait(20)
        log.close()
        publishing.stop.set()
        publishing.thread.join(20)
        redis_server.stop()


async def _view(client: httpx.AsyncClient, url: str, first: asyncio.Queue[tuple[int, str, str]],
                hold: asyncio.Event, address: str) -> str:
    """One viewer: report the status and the first event kind, then hold the stream open until ``hold``."""
    async with client.stream("GET", url) as resp:
        if resp.status_code != 200:
            await first.put((resp.status_code, "", address))
            return ""
        reported = False
        text = ""
        async for chunk in resp.aiter_text():
            text += chunk
            if not reported and "event: " in text:
                await first.put((200, text.split("event: ", 1)[1].split("\n", 1)[0], address))
                reported = True
            if reported and hold.is_set():
                break
        return text


def _web_clients(redis_url: str) -> int:
    """Connections to the server other than this one and the referee-side publisher's."""
    import redis

    r = redis.Redis.from_url(redis_url, client_name="flood-test")
    try:
        return sum(1 for c in r.client_list() if c.get("name") not in ("flood-test", "parterre-live-feed"))
    finally:
        r.close()


def test_a_flood_of_anonymous_viewers_is_capped_and_shares_one_reader(live_web: dict[str, Any]) -> None:
    base, mid = live_web["base"], live_web["match_id"]
    url = f"{base}/matches/{mid}/live"
    total = len(ADDRESSES) * PER_ADDRESS

    async def flood() -> tuple[list[tuple[int, str, str]], list[float], int]:
        first: asyncio.Queue[tuple[int, str, str]] = asyncio.Queue()
        hold = asyncio.Event()
        clients = [httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address=a),
                                     timeout=httpx.Timeout(60), limits=httpx.Limits(max_connections=None))
                   for a in ADDRESSES]
        health: list[float] = []
        try:
            viewers = [asyncio.create_task(_view(c, url, first, hold, a))
                       for c, a in zip(clients, ADDRESSES, strict=True) for _ in range(PER_ADDRESS)]
            got: list[tuple[int, str, str]] = []
            async with httpx.AsyncClient(timeout=10) as h:
                async with asyncio.timeout(120):
                    while len(got) < total:
                        while not first.empty():
                            got.append(first.get_nowait())
                        t0 = time.monotonic()
                        assert (await h.get(base + "/api/health")).status_code == 200  # during the flood
                        health.append(time.monotonic() - t0)
                        await asyncio.sleep(0.1)
            peak = await asyncio.to_thread(_web_clients, live_web["redis"].url)
            hold.set()
            for v in viewers:
                v.cancel()
            await asyncio.gather(*viewers, return_exceptions=True)
        finally:
            for c in clients:
                await c.aclose()
        return got, health, peak

    got, health, peak = asyncio.run(flood())
    assert peak <= 4, f"{peak} Redis connections of the web process for one watched match"
    statuses = [s for s, _, _ in got]
    assert statuses.count(200) == VIEWERS, sorted(set(statuses))  # the process's cap
    assert statuses.count(429) + statuses.count(503) == total - VIEWERS
    served = Counter(a for s, _, a in got if s == 200)
    assert max(served.values()) == PER_CLIENT  # the per-address cap
    assert statuses.count(503) >= len(ADDRESSES) * PER_CLIENT - VIEWERS  # those the per-address cap let pass
    assert {kind for s, kind, _ in got if s == 200} == {"step"}  # every served viewer got the board
    assert max(health) < 5.0, health


def test_redis_lost_under_a_viewer_ends_the_view_cleanly_and_it_comes_back(live_web: dict[str, Any]) -> None:
    base, mid = live_web["base"], live_web["match_id"]
    url = f"{base}/matches/{mid}/live"
    server: RedisServer = live_web["redis"]

    def events(text: str) -> list[str]:
        return [line[len("event: "):] for line in text.splitlines() if line.startswith("event: ")]

    with httpx.Client(timeout=httpx.Timeout(30)) as client:
        with client.stream("GET", url) as resp:
            assert resp.status_code == 200
            text = ""
            chunks = resp.iter_text()
            for chunk in chunks:
                text += chunk
                if "event: step" in text:
                    break
            server.stop()  # Redis goes away under the viewer
            for chunk in chunks:  # the stream ends (the loop ends) with "unavailable"
                text += chunk
        assert events(text)[-1] == "unavailable", events(text)
        assert "retry: " in text
        assert client.get(base + "/api/health").status_code == 200

        server.start()  # back, empty: the referee's publisher writes the match again
        deadline = time.monotonic() + 30
        while True:
            with client.stream("GET", url) as resp:
                assert resp.status_code == 200
                text = ""
                for chunk in resp.iter_text():
                    text += chunk
                    if "event: " in text:
                        break
            if events(text) and events(text)[0] == "step":
                break
            assert time.monotonic() < deadline, f"no board after Redis came back: {events(text)}"
            time.sleep(0.5)
    log = live_web["log"].read_text()
    assert "Traceback" not in log, log

