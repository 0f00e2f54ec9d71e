"""The live feed: the spectator view of running matches, published to Redis (docs/web.md, "Live matches").

A room with a feed (:func:`feed_for`) hands each recorded step to
:meth:`LiveFeed.step`, which only counts it — and, while someone may be
watching, keeps ``(step, seat, action)`` in a bounded list. Everything else
happens in one background task per referee process (:class:`Publisher`),
never on the room's path: it builds the **spectator** observation
(``State.observation(None)``) of the state at that moment, the
spectator-safe labels of the steps kept since its last entry
(:func:`games.spectator.public_label`), encodes the entry once and writes all
rooms' entries with one pipelined round trip. A seat's own observation, the
action JSON and the seed never leave the room this way.

**What is published when.**

* A match nobody watches: a *snapshot* (the spectator observation, no step
  labels) :data:`SNAPSHOT_S` seconds after the start and then at most every
  :data:`SNAPSHOT_S` seconds while it moves on, so a viewer who arrives finds a
  recent board and "playing now" a step count (a match shorter than that
  publishes its end only).
* A watched match (the web sets :func:`watch_key` with a TTL while a viewer is
  connected; read every :data:`WATCH_POLL_S`): every :data:`FLUSH_S` seconds
  one entry with the labels of every step since the last entry and the
  observation after the last of them. A label names only cards in the
  observations published up to and with its entry (cards seen between two
  entries and hidden again by the second read as hidden).
* The end: the last steps of a watched match, then an end entry with the result.

More than :data:`MAX_PENDING` steps waiting (Redis slow or away) are dropped
and the next entry is marked ``"gap": true``. Redis errors never
fail a match: the publisher logs the outage once, retries every
:data:`RETRY_S`, and when Redis is back writes each match's index entry and a
snapshot again (a Redis restarted empty has its feeds back within seconds).

Redis keys (``ns`` = namespace, default ``parterre``):

* ``{ns}:live:{match_id}`` — a stream; each entry has fields ``i`` (the last
  step it covers, -1 before the first) and ``e``, JSON ``{"i": step,
  "player": seat or -1 or null, "steps": [[step, seat or -1, label], ...],
  "observation": {...}, "terminal": bool, "gap": bool, "t": unix seconds}``,
  then a last entry ``{"end": true, "status": str, "reason": str, "scores":
  [...], "ranks": [...], "t": ...}``. Trimmed to about :data:`MAXLEN`
  entries; expires :data:`KEEP_S` after its last entry.
* ``{ns}:live:index`` — a hash ``match_id -> JSON {"match_id", "game",
  "game_string", "players", "started", "seen"}`` (unix seconds; ``seen`` is
  rewritten every :data:`INDEX_S`) of the matches being played; an entry is
  removed when its match ends. It carries no step count: the web reads that
  from the stream, after its delay.
* ``{ns}:live:watch:{match_id}`` — set by the web while someone watches.

Enabled by :func:`configure` (``referee.server.serve`` passes its Redis URL)
or, without it, by ``PARTERRE_LIVE_REDIS_URL``; ``PARTERRE_LIVE=0`` turns the
feed off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from games.api import Action, State
from games.spectator import NOTED_GAMES, note_mark, notes_between, public_label, seen_in_json
from referee.settings import live_settings

log = logging.getLogger(__name__)

MAXLEN = 3000
"""Approximate stream length kept per match: about 10 minutes of a watched match at :data:`FLUSH_S`
(the web's delay must be shorter)."""
KEEP_S = 3600
"""Seconds a match's stream stays readable after its last entry (late viewers see its end)."""
FLUSH_S = 0.2
"""Seconds between two entries of a watched match (its steps are batched in between)."""
SNAPSHOT_S = 5.0
"""Seconds between two snapshots of a match nobody watches."""
WATCH_POLL_S = 1.0
"""Seconds between two reads of the watch keys of this process's matches."""
INDEX_S = 30.0
"""Seconds between two rewrites of a match's index entry (the web ignores entries not rewritten for
three times this: a referee that died)."""
MAX_PENDING = 5000
"""Steps kept for the next entry of a watched match; beyond, they are dropped for a snapshot."""
RETRY_S = 1.0
"""Seconds between two attempts while Redis is away."""
END_GIVE_UP_S = 120.0
"""How long a finished match's end entry is retried while Redis is away."""

_config: dict[str, Any] = {"url": None, "namespace": "parterre", "publisher": None}


def configure(redis_url: str | None, namespace: str = "parterre") -> None:
    """Publish the live feed of every room of this process to ``redis_url`` (None: off).

    A publisher already running stops (rooms it served publish no more).
    """
    old: Publisher | None = _config["publisher"]
    if old is not None and not old.loop.is_closed():
        with contextlib.suppress(RuntimeError):  # its loop stopped meanwhile
            old.loop.call_soon_threadsafe(old.task.cancel)
    _config.update(url=redis_url, namespace=namespace, publisher=None)


def stream_key(namespace: str, match_id: int) -> str:
    """The Redis stream of one match."""
    return f"{namespace}:live:{match_id}"


def index_key(namespace: str) -> str:
    """The Redis hash of the matches being played."""
    return f"{namespace}:live:index"


def watch_key(namespace: str, match_id: int) -> str:
    """The key the web sets (with a TTL) while someone watches a match."""
    return f"{namespace}:live:watch:{match_id}"


class LiveFeed:
    """One match's feed: the room's side (:meth:`start`, :meth:`step`, :meth:`end`), cheap by design.

    The entries themselves are built and written by the process's :class:`Publisher`.
    """

    def __init__(self, publisher: Publisher, match_id: int, game: str, game_string: str, players: int) -> None:
        self.publisher = publisher
        self.match_id = match_id
        self.game = game
        self.key = stream_key(publisher.ns, match_id)
        self.watch = watch_key(publisher.ns, match_id)
        self.state: State | None = None
        self.steps = 0
        self.watched = True  # until the publisher's first look at the watch key: keep the first steps
        self.known = False  # whether the publisher has read the watch key yet
        self.pending: list[tuple[int, int, Action, int, int]] = []  # step, seat, action, note marks before/after
        self.noted = game in NOTED_GAMES  # steps may show the table more than their action
        self.mark = 0  # games.spectator.note_mark after the last step
        self.gap = False
        self.seen: set[str] = set()
        self.published = -2  # the last step an entry covered (-2: none yet)
        self.last_entry = time.monotonic()  # of the last entry (the first snapshot comes SNAPSHOT_S after the start)
        self.last_index = 0.0  # monotonic time the index entry was last written (0: to write)
        self.result: dict[str, Any] | None = None
        self.ended_at = 0.0
        self.info = {"match_id": match_id, "game": game, "game_string": game_string, "players": players,
                     "started": time.time()}

    def start(self, state: State) -> None:
        """Start publishing ``state`` (the room's own, read again for each entry)."""
        self.state = state
        if self.noted:
            self.mark = note_mark(self.game, state)
        self.publisher.add(self)

    def step(self, state: State, player: int, action: Action) -> None:
        """Count one step (``state`` has it applied); keep it for the next entry while watched."""
        i = self.steps
        self.steps = i + 1
        before = self.mark
        if self.noted:
            self.mark = note_mark(self.game, state)
        if self.watched:
            if len(self.pending) < MAX_PENDING:
                self.pending.append((i, player, action, before, self.mark))
            else:
                self.pending.clear()
                self.gap = True

    def end(self, status: str, reason: str, scores: Any, ranks: Any) -> None:
        """Publish the last steps and the end of the match, and close the feed."""
        self.result = {"end": True, "status": status, "reason": reason, "scores": list(scores),
                       "ranks": list(ranks), "t": time.time()}
        self.ended_at = time.monotonic()

    def lost(self) -> None:
        """Redis went away: what was kept is dropped; index and a snapshot are written again when it is back."""
        self.pending.clear()
        self.gap = self.published >= -1
        self.published = -2  # a snapshot at once when Redis is back, moved on or not
        self.last_index = 0.0
        self.last_entry = 0.0

    def entry(self, now: float) -> tuple[int, str] | None:
        """The entry due now as (last step, JSON text), or None; built on the publisher's turn of the loop,
        between two steps of the room."""
        state = self.state
        if state is None or not self.known:
            return None
        last = self.steps - 1
        fresh = last != self.published
        if self.result is not None:  # the end: the last steps of a watched match (the end entry follows)
            if not self.watched or not (fresh or self.gap):
                return None
        elif self.watched:
            if not (fresh or self.gap) or now - self.last_entry < FLUSH_S:
                return None
        elif not fresh or now - self.last_entry < SNAPSHOT_S:
            return None
        obs = json.dumps(state.observation(None), separators=(",", ":"), ensure_ascii=False)
        game, seen = self.game, self.seen
        if self.watched:  # the cards a spectator has seen, for the labels (unwatched snapshots have none)
            seen |= seen_in_json(game, obs)
        steps = [[i, p, public_label(game, a.to_json(), a.label(), seen) + notes_between(game, state, m0, m1)]
                 for i, p, a, m0, m1 in self.pending]
        head = {"i": last, "player": self.pending[-1][1] if self.pending else None, "steps": steps,
                "terminal": state.is_terminal(), "gap": self.gap, "t": time.time()}
        self.pending.clear()
        self.gap = False
        self.published = last
        self.last_entry = now
        return last, json.dumps(head, separators=(",", ":"), ensure_ascii=False)[:-1] + ',"observation":' + obs + "}"


class Publisher:
    """Writes the entries of every feed of this process, one pipelined round trip per turn.

    Args:
        url: redis-py URL.
        namespace: key prefix.
    """

    def __init__(self, url: str, namespace: str) -> None:
        import redis.asyncio as aioredis

        self.client: Any = aioredis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0,
                                                  client_name="parterre-live-feed")
        self.ns = namespace
        self.index = index_key(namespace)
        self.feeds: dict[int, LiveFeed] = {}
        self.loop = asyncio.get_running_loop()
        self.down = False
        self.next_poll = 0.0
        self.task = self.loop.create_task(self._run(), name="live-feed publisher")

    def add(self, feed: LiveFeed) -> None:
        """Publish ``feed`` from now on (its watch key is read at the next turn)."""
        self.feeds[feed.match_id] = feed

    async def _run(self) -> None:
        while True:
            try:
                await self.turn()
            except Exception as exc:  # Redis away or failing: the feed never fails a match
                if not self.down:
                    log.warning("live feed: Redis unavailable (%s); retrying every %.0f s", exc, RETRY_S)
                self.down = True
                now = time.monotonic()
                for feed in list(self.feeds.values()):
                    feed.lost()
                    if feed.result is not None and now - feed.ended_at > END_GIVE_UP_S:
                        del self.feeds[feed.match_id]
                await asyncio.sleep(RETRY_S)
                continue
            if self.down:
                log.info("live feed: Redis is back")
                self.down = False
            await asyncio.sleep(FLUSH_S)

    async def turn(self) -> None:
        """Write every entry due and read the watch keys when due: one pipelined round trip."""
        if not self.feeds:
            return
        now = time.monotonic()
        due = now >= self.next_poll  # every feed's watch key, or only those of the new feeds
        polled = list(self.feeds.values()) if due else [f for f in self.feeds.values() if not f.known]
        if due:
            self.next_poll = now + WATCH_POLL_S
        ended: list[LiveFeed] = []
        async with self.client.pipeline(transaction=False) as p:
            for feed in polled:
                p.exists(feed.watch)
            writes = len(polled)
            for feed in list(self.feeds.values()):
                mid, result = str(feed.match_id), feed.result
                if result is None and now - feed.last_index >= INDEX_S:
                    p.hset(self.index, mid, json.dumps({**feed.info, "seen": time.time()}))
                    feed.last_index = now
                    writes += 1
                built = feed.entry(now)
                if built is not None:
                    p.xadd(feed.key, {"i": built[0], "e": built[1]}, maxlen=MAXLEN, approximate=True)
                    p.expire(feed.key, KEEP_S)
                    writes += 1
                if result is not None:
                    p.xadd(feed.key, {"i": "end", "e": json.dumps(result, separators=(",", ":"))},
                           maxlen=MAXLEN, approximate=True)
                    p.hdel(self.index, mid)
                    p.expire(feed.key, KEEP_S)
                    ended.append(feed)
                    writes += 1
                if built is not None:
                    await asyncio.sleep(0)  # one match's entry at a time: the rooms' turns come between
            replies = await p.execute() if writes else []
        for feed, w in zip(polled, replies, strict=False):  # used from the next turn on
            if w and not feed.watched:
                feed.gap = feed.published >= -1  # the steps before its next entry were not kept
            feed.watched, feed.known = bool(w), True
            if not w:
                feed.pending.clear()
        for feed in ended:
            self.feeds.pop(feed.match_id, None)

    async def close(self, timeout_s: float = 5.0) -> None:
        """Stop the task, write what is due (the ends of finished matches) and close the client."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout_s):
                await self.turn()
        with contextlib.suppress(Exception):
            await self.client.aclose()


def _publisher() -> Publisher | None:
    cfg = live_settings()
    url = _config["url"] or cfg.live_redis_url
    if not url or not cfg.live:
        return None
    pub: Publisher | None = _config["publisher"]
    if pub is None or pub.loop is not asyncio.get_running_loop() or pub.task.done():
        pub = _config["publisher"] = Publisher(url, _config["namespace"])
    return pub


def feed_for(match_id: int, game: str, game_string: str, players: int) -> LiveFeed | None:
    """The live feed of a room about to play, or None when the feed is off (call inside the event loop)."""
    pub = _publisher()
    if pub is None:
        return None
    return LiveFeed(pub, match_id, game, game_string, players)


async def shutdown(timeout_s: float = 5.0) -> None:
    """Write what is due (the ends of finished matches) and stop this process's publisher."""
    pub: Publisher | None = _config["publisher"]
    if pub is None or pub.loop is not asyncio.get_running_loop():
        return
    _config["publisher"] = None
    await pub.close(timeout_s)


def decode(fields: Mapping[Any, Any]) -> dict[str, Any]:
    """A stream entry's JSON (``fields`` as redis-py returns them, bytes or str keys)."""
    raw = fields.get(b"e", fields.get("e"))
    return dict(json.loads(raw))
