"""The live feed: spectator-view steps of running matches, published to Redis (DESIGN §10).

A room with a feed (:func:`feed_for`) hands each recorded step to
:meth:`LiveFeed.step`, which takes the **spectator** observation
(``State.observation(None)``) and a spectator-safe label
(:func:`games.spectator.public_label`); a seat's own observation, the action
JSON and the seed never leave the room this way. A background task writes
them to Redis, so the room's hot path only builds the observation and queues
it. The web site (``ladder.web.live``) relays the stream to browsers after the
operator's delay; any web replica can, since the feed lives in Redis, not in a
process.

Redis keys (``ns`` = namespace, default ``parterre``):

* ``{ns}:live:{match_id}`` — a stream; each entry has one field ``e``, JSON
  ``{"i": step, "player": seat or -1, "label": str, "observation": {...},
  "terminal": bool, "t": unix seconds}``, then a last entry
  ``{"end": true, "status": str, "reason": str, "scores": [...], "ranks":
  [...], "t": ...}``. Trimmed to about :data:`MAXLEN` entries; expires
  :data:`KEEP_S` after the end.
* ``{ns}:live:index`` — a hash ``match_id -> JSON {"match_id", "game",
  "game_string", "players", "started": unix seconds, "steps"}`` of the matches
  being played; an entry is removed when its match ends.

Enabled by :func:`configure` (``referee.server.serve`` passes its Redis URL)
or, without it, by ``PARTERRE_LIVE_REDIS_URL``; ``PARTERRE_LIVE=0`` turns the
feed off. Publishing never fails a match: Redis errors are logged and the
feed stops for that match.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from games.api import Action, State
from games.spectator import public_label, seen_cards, step_note

log = logging.getLogger(__name__)

MAXLEN = 20_000
"""Approximate stream length kept per match (longer games drop their oldest steps)."""
KEEP_S = 3600
"""Seconds a finished match's stream stays readable (late viewers see its end)."""

_config: dict[str, Any] = {"url": None, "namespace": "parterre", "client": None}


def configure(redis_url: str | None, namespace: str = "parterre") -> None:
    """Publish the live feed of every room of this process to ``redis_url`` (None: off)."""
    _config.update(url=redis_url, namespace=namespace, client=None)


def stream_key(namespace: str, match_id: int) -> str:
    """The Redis stream of one match."""
    return f"{namespace}:live:{match_id}"


def index_key(namespace: str) -> str:
    """The Redis hash of the matches being played."""
    return f"{namespace}:live:index"


def _client() -> Any:
    url = _config["url"] or os.environ.get("PARTERRE_LIVE_REDIS_URL")
    if not url or os.environ.get("PARTERRE_LIVE") == "0":
        return None
    if _config["client"] is None:
        import redis.asyncio as aioredis

        _config["client"] = aioredis.Redis.from_url(url, socket_timeout=2.0)
    return _config["client"]


class LiveFeed:
    """One match's feed: queue spectator steps from the room, write them to Redis in the background."""

    def __init__(self, client: Any, namespace: str, match_id: int, game: str, game_string: str, players: int) -> None:
        self.client = client
        self.ns = namespace
        self.match_id = match_id
        self.game = game
        self.key = stream_key(namespace, match_id)
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.seen: set[str] = set()
        self.last: dict[str, Any] | None = None  # the previous spectator observation (step notes)
        self.steps = 0
        self.info = {"match_id": match_id, "game": game, "game_string": game_string, "players": players,
                     "started": time.time()}
        self.task = asyncio.get_running_loop().create_task(self._drain())

    def start(self, state: State) -> None:
        """Publish the initial state (step -1)."""
        obs = state.observation(None)
        self.seen |= seen_cards(self.game, obs)
        self.last = obs
        self.queue.put_nowait({"i": -1, "player": None, "label": "", "observation": obs, "terminal": False,
                               "t": time.time()})

    def step(self, state: State, player: int, action: Action) -> None:
        """Publish the state after one step (``state`` has it applied) with a spectator-safe label
        (and what the step showed the table, :func:`games.spectator.step_note`, as the viewer's step list)."""
        obs = state.observation(None)
        self.seen |= seen_cards(self.game, obs)
        label = public_label(self.game, action.to_json(), action.label(), self.seen)
        label += step_note(self.game, self.last, obs)
        self.last = obs
        self.queue.put_nowait({"i": self.steps, "player": player, "label": label, "observation": obs,
                               "terminal": state.is_terminal(), "t": time.time()})
        self.steps += 1

    def end(self, status: str, reason: str, scores: Any, ranks: Any) -> None:
        """Publish the end of the match and close the feed."""
        self.queue.put_nowait({"end": True, "status": status, "reason": reason, "scores": list(scores),
                               "ranks": list(ranks), "t": time.time()})
        self.queue.put_nowait(None)

    async def _drain(self) -> None:
        r, index = self.client, index_key(self.ns)
        try:
            await r.hset(index, str(self.match_id), json.dumps(self.info))
            while True:
                entry = await self.queue.get()
                if entry is None:
                    break
                await r.xadd(self.key, {"e": json.dumps(entry, separators=(",", ":"))}, maxlen=MAXLEN,
                             approximate=True)
                if entry.get("end"):
                    await r.hdel(index, str(self.match_id))
                    await r.expire(self.key, KEEP_S)
                elif entry["i"] % 25 == 0:
                    await r.hset(index, str(self.match_id), json.dumps({**self.info, "steps": entry["i"] + 1}))
        except Exception as exc:  # the feed never fails a match
            log.warning("live feed of match %s stopped: %s", self.match_id, exc)
            with contextlib.suppress(Exception):
                await r.hdel(index, str(self.match_id))


def feed_for(match_id: int, game: str, game_string: str, players: int) -> LiveFeed | None:
    """The live feed of a room about to play, or None when the feed is off (call inside the event loop)."""
    client = _client()
    if client is None:
        return None
    return LiveFeed(client, _config["namespace"], match_id, game, game_string, players)


def decode(fields: Mapping[Any, Any]) -> dict[str, Any]:
    """A stream entry's JSON (``fields`` as redis-py returns them, bytes or str keys)."""
    raw = fields.get(b"e", fields.get("e"))
    return dict(json.loads(raw))
