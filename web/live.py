"""Live matches: the referee's spectator feed relayed to browsers after the operator's delay (docs/web.md).

The referees publish each running match's spectator view to a Redis stream
(``referee/live.py`` documents the keys and what is published when); any web
replica relays them, since nothing lives in a process. ``GET
/matches/{id}/live`` is a stream of server-sent events:

* ``event: step`` — ``{"i", "player", "name", "label", "board", "steps",
  "gap"}``: the board panel (server-rendered HTML, autoescaped, the same
  adapters as the replay viewer) of the state after step ``i``, built from the
  **spectator** observation only, and ``steps``, ``[{"i", "player", "name",
  "label"}]``, the spectator-safe labels of the steps since the previous event
  (empty for a snapshot; ``gap``: steps were not published before it);
* ``event: end`` — ``{"status", "reason", "scores", "ranks"}``;
* ``event: gone`` — no live feed for this match (finished long ago, or never
  published);
* ``event: unavailable`` — the feed's Redis is away; the stream ends and the
  browser reconnects after the ``retry:`` it was given.

Each web process reads a watched match's stream once and fans it out to its
viewers (``web.live_hub``), with caps on concurrent live views per
client address (``429``) and per process (``503``).

**Delay.** An entry is sent no earlier than ``delay_s`` seconds after Redis
stored it: its stream id is Redis's own millisecond clock, compared with
Redis's ``TIME`` (so referees', Redis's and the web's clocks need not agree).
The delay is the operator's (``PARTERRE_LIVE_DELAY``, seconds, default
:data:`DEFAULT_DELAY_S`): a bot owner watching cannot see the table earlier
than the delay, and a seat's own observations are never on the feed at all.

"Playing now" (:func:`playing_now`) reads the index hash of running matches
and, for the step count, the newest entry of each stream that is at least
``delay_s`` old: it never shows progress ahead of the delay.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ladder import read as q
from ladder.db import connection
from ladder.read.matches import seats_of
from web.api import MatchId
from web.boards import board_panel
from web.deps import Pool, app_pool
from web.live_hub import PER_CLIENT, TOTAL, Hub, Render, index_key, sse, stream_key
from web.settings import settings as web_settings
from web.viewer import Frame

log = logging.getLogger(__name__)

DEFAULT_DELAY_S = 30.0
"""Default relay delay, seconds (``PARTERRE_LIVE_DELAY``)."""
STALE_S = 120.0
"""Index entries not rewritten for this long are not listed (a referee that died without ending its
matches; a live referee rewrites them every ``referee.live.INDEX_S``)."""


@dataclass(frozen=True, slots=True)
class LiveConfig:
    """Where the live feed is and how late it is relayed.

    Attributes:
        redis_url: redis-py URL of the Redis the referees publish to.
        delay_s: seconds between Redis storing a step and a browser receiving it.
        namespace: key prefix (the referees' ``cluster_namespace``).
        per_address: concurrent live views one client address may hold (``429`` beyond).
        viewers: concurrent live views of one web process (``503`` beyond).
    """

    redis_url: str
    delay_s: float = DEFAULT_DELAY_S
    namespace: str = "parterre"
    per_address: int = PER_CLIENT
    viewers: int = TOTAL

    def __post_init__(self) -> None:
        # Celery's form of a Unix-socket Redis (the embedded default, ``redis+socket:///path``)
        # is redis-py's ``unix:///path``: without this, the home page failed under demo and up.
        if self.redis_url.startswith("redis+socket://"):
            object.__setattr__(self, "redis_url", "unix://" + self.redis_url[len("redis+socket://"):])


def config_from_env() -> LiveConfig | None:
    """``PARTERRE_REDIS_URL``, ``PARTERRE_LIVE_DELAY`` (seconds), ``PARTERRE_LIVE_MAX_PER_ADDRESS`` and
    ``PARTERRE_LIVE_MAX_VIEWERS`` (the caps); None without a Redis URL.

    Raises:
        ValueError: ``PARTERRE_LIVE_DELAY`` is not a number >= 0, or a cap not an integer >= 1.
    """
    cfg = web_settings()
    if not cfg.redis_url:
        return None
    return LiveConfig(cfg.redis_url, cfg.live_delay_s, cfg.cluster_namespace, cfg.live_max_per_address,
                      cfg.live_max_viewers)


def _stream(cfg: LiveConfig, match_id: int) -> str:
    return stream_key(cfg.namespace, match_id)


def _index(cfg: LiveConfig) -> str:
    return index_key(cfg.namespace)


@dataclass(frozen=True, slots=True)
class PlayingNow:
    """A match being played: its id, game, seat names, steps so far (about), start time (unix seconds)."""

    match_id: int
    game: str
    game_string: str
    names: list[str]
    steps: int
    started: float


def _sync_redis(request: Request, cfg: LiveConfig) -> Any:
    """The app's one synchronous Redis client for "playing now" (a pool: pages do not open a connection each)."""
    import redis

    client = getattr(request.app.state, "live_sync_redis", None)
    if client is None:
        client = redis.Redis.from_url(cfg.redis_url, socket_timeout=1.0, socket_connect_timeout=1.0,
                                          client_name="parterre-web")
        request.app.state.live_sync_redis = client
    return client


def playing_now(request: Request, game: str | None = None, limit: int = 20) -> list[PlayingNow]:
    """The running matches with a live feed, newest first (``game``: only that game). Empty without a feed.

    A match's ``steps`` are those of its newest stream entry stored at least the delay ago (0 before
    that): the list never shows progress ahead of what a viewer may see.
    """
    cfg: LiveConfig | None = request.app.state.live
    if cfg is None:
        return []
    import redis

    try:
        r = _sync_redis(request, cfg)
        raw = r.hgetall(_index(cfg))
        now = time.time()
        items = [json.loads(v) for v in raw.values()]
        items = [i for i in items if (game is None or i.get("game") == game)
                 and now - float(i.get("seen", i.get("started", 0))) < STALE_S]
        items.sort(key=lambda i: -float(i.get("started", 0)))
        items = items[:limit]
        if not items:
            return []
        sec, usec = r.time()
        due_ms = int((sec + usec / 1e6 - cfg.delay_s) * 1000)
        with r.pipeline(transaction=False) as p:
            for i in items:
                p.xrevrange(_stream(cfg, int(i["match_id"])), max=str(due_ms), min="-", count=1)
            newest = p.execute()
    except (redis.RedisError, OSError, ValueError) as exc:  # no feed is no reason to fail the page
        log.warning("playing now: live feed unavailable: %s", exc)
        return []
    steps = [_steps_of(got) for got in newest]
    with connection(app_pool(request)) as conn:
        seats = seats_of(conn, [int(i["match_id"]) for i in items])
    return [
        PlayingNow(int(i["match_id"]), i["game"], i.get("game_string", i["game"]),
                   [s.name for s in seats.get(int(i["match_id"]), [])], n, float(i.get("started", 0)))
        for i, n in zip(items, steps, strict=True)
    ]


def _steps_of(got: list[Any]) -> int:
    """Steps played by a stream entry (its ``i`` field: the last step it covers), 0 without one."""
    if not got:
        return 0
    fields = got[0][1]
    raw = fields.get(b"i", fields.get("i"))
    try:
        return max(0, int(raw) + 1)
    except (TypeError, ValueError):  # the end entry
        return 0


router = APIRouter(include_in_schema=False)


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return sse(kind, json.dumps(data, separators=(",", ":"), ensure_ascii=False))


def _name(names: list[str], player: Any) -> str:
    if isinstance(player, int) and 0 <= player < len(names):
        return names[player]
    return "chance" if player == -1 else ""


def _render(templates: Any, game: str, names: list[str]) -> Render:
    """Entry JSON (``referee/live.py``) -> the encoded ``step`` or ``end`` event, rendered once for every viewer."""

    def render(e: dict[str, Any]) -> bytes:
        if e.get("end"):
            return _event("end", {k: e.get(k) for k in ("status", "reason", "scores", "ranks")})
        i, player = int(e["i"]), e.get("player")
        frame = Frame(step=i, steps=i + 1, player=player, label="", action=None, time_ms=None,
                      fallback=False, terminal=bool(e.get("terminal")), observation=e["observation"])
        panel = board_panel(game, frame, names, False)
        html = templates.env.get_template(panel.template).render(ctx=panel.context)
        steps = [{"i": int(s), "player": p, "name": _name(names, p), "label": str(label)}
                 for s, p, label in e.get("steps", ())]
        return _event("step", {"i": i, "player": player, "name": _name(names, player),
                               "label": steps[-1]["label"] if steps else "", "board": html, "steps": steps,
                               "gap": bool(e.get("gap"))})

    return render


def hub_of(app: Any) -> Hub:
    """The app's live hub (made on first use, on the serving loop)."""
    hub: Hub | None = getattr(app.state, "live_hub", None)
    if hub is None:
        cfg: LiveConfig = app.state.live
        hub = app.state.live_hub = Hub(cfg, cfg.per_address, cfg.viewers)
    return hub


class _Held(StreamingResponse):
    """A live view's response: its slot is given back however the response ends (even unsent)."""

    def __init__(self, body: AsyncIterator[bytes], hub: Hub, address: str) -> None:
        super().__init__(body, media_type="text/event-stream",
                         headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        self.hub, self.address = hub, address

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.hub.release(self.address)


@router.get("/matches/{match_id}/live", response_model=None)
async def match_live(request: Request, pool: Pool, match_id: MatchId) -> Response:
    """Server-sent events of a running match, spectator view, after the operator's delay (module docstring).

    Refused with ``429`` past the live views one address may hold and ``503`` past the process's
    (``web.live_hub``), before any database or Redis work.
    """
    cfg: LiveConfig | None = request.app.state.live
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

    async def once(event: bytes) -> AsyncIterator[bytes]:
        yield event

    if cfg is None:
        return StreamingResponse(once(_event("gone", {"match_id": match_id})), media_type="text/event-stream",
                                 headers=headers)
    hub = hub_of(request.app)
    address = request.client.host if request.client is not None else "unknown"
    refused = hub.admit(address)
    if refused is not None:
        status, why = refused
        return PlainTextResponse(why, status_code=status, headers={"Retry-After": "10", **headers})
    try:
        page = await run_in_threadpool(q.match_page, pool, match_id, request.app.state.replays)
        held = await run_in_threadpool(q.twins_open, pool, match_id)
    except BaseException:
        hub.release(address)
        raise
    gone = _event("gone", {"match_id": match_id, **({"reason": "twin"} if held else {})})
    # While another match on the same deal (seed) is not over, this one's feed would show cards the other's
    # seats are still to see (a rotation ahead of its twin): no live view then, as for a match without a feed.
    if held:
        return _Held(once(gone), hub, address)
    names = [s.name for s in page.seats]
    relay = hub.relay(match_id, page.status == "running", _render(request.app.state.templates, page.game, names),
                      gone)
    return _Held(hub.stream(relay), hub, address)
