"""One reader per watched match, fanned out to its viewers, with caps (docs/web.md, "Live matches").

A web process reads each watched match's stream once (:class:`Relay`: one
task, one shared Redis client for the whole process) and hands every event,
rendered and encoded once, to each viewer's bounded queue. While a relay has
viewers it keeps the match's watch key (``referee.live.watch_key``) set, so
the referee publishes every step; without viewers for :data:`LINGER_S` it
stops.

Caps (:class:`Hub`): at most :data:`PER_CLIENT` concurrent live views per
client address (``429``) and :data:`TOTAL` per process (``503``) by default
(``PARTERRE_LIVE_MAX_PER_ADDRESS``, ``PARTERRE_LIVE_MAX_VIEWERS``), both with
``Retry-After``. When Redis goes away under a relay, each viewer gets
``event: unavailable`` and its stream ends (``retry:`` tells the browser when
to reconnect); no error reaches the server's log beyond one warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

log = logging.getLogger(__name__)

PER_CLIENT = 8
"""Concurrent live views one client address may hold."""
TOTAL = 2000
"""Concurrent live views one web process serves."""
QUEUE = 64
"""Events waiting for one viewer; a slower viewer skips to the newest (each carries a whole board)."""
KEEPALIVE_S = 15.0
BLOCK_MS = 5000
"""Longest blocking read of a stream (milliseconds)."""
WATCH_TTL_S = 30
"""TTL of the watch key; rewritten every third of it while the relay has viewers."""
LINGER_S = 5.0
"""A relay without viewers stops after this many seconds."""
RETRY_MS = 5000
"""How long a browser waits before reconnecting after the feed was unavailable."""

Render = Callable[[dict[str, Any]], bytes]
"""Entry JSON -> the encoded server-sent event (built once per entry, for every viewer)."""



def stream_key(namespace: str, match_id: int) -> str:
    """A match's stream (the referee's ``referee.live.stream_key``; ``ladder`` does not import ``referee``)."""
    return f"{namespace}:live:{match_id}"


def index_key(namespace: str) -> str:
    """The hash of the matches being played (``referee.live.index_key``)."""
    return f"{namespace}:live:index"


def watch_key(namespace: str, match_id: int) -> str:
    """The key set while someone watches a match (``referee.live.watch_key``)."""
    return f"{namespace}:live:watch:{match_id}"


def sse(kind: str, data: str) -> bytes:
    """One server-sent event."""
    return f"event: {kind}\ndata: {data}\n\n".encode()


UNAVAILABLE = sse("unavailable", '{"reason":"live feed unavailable"}')


class Relay:
    """One match's stream, read by one task and handed to every viewer after the delay.

    Attributes:
        latest: the last event released (a new viewer starts with it), or None.
        viewers: the queues of the viewers.
    """

    def __init__(self, hub: Hub, match_id: int, running: bool, render: Render, gone: bytes) -> None:
        self.hub = hub
        self.match_id = match_id
        self.running = running
        self.render = render
        self.gone = gone
        self.viewers: set[asyncio.Queue[bytes | None]] = set()
        self.latest: bytes | None = None
        self.idle_since = time.monotonic()
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"live relay {match_id}")

    def subscribe(self) -> asyncio.Queue[bytes | None]:
        """A new viewer's queue, starting with the latest event released."""
        q: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUE)
        if self.latest is not None:
            q.put_nowait(self.latest)
        self.viewers.add(q)
        return q

    def unsubscribe(self, q: asyncio.Queue[bytes | None]) -> None:
        """A viewer left."""
        self.viewers.discard(q)
        if not self.viewers:
            self.idle_since = time.monotonic()

    def _release(self, event: bytes, last: bool = False) -> None:
        self.latest = event
        for q in list(self.viewers):
            if q.full():  # a slow viewer skips to this event
                while not q.empty():
                    q.get_nowait()
            q.put_nowait(event)
            if last:
                if q.full():
                    q.get_nowait()
                q.put_nowait(None)

    def _idle(self) -> bool:
        return not self.viewers and time.monotonic() - self.idle_since > LINGER_S

    async def _run(self) -> None:
        try:
            await self._read()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Redis away or failing: the viewers are told, the relay ends
            log.warning("live relay of match %s stopped: %s", self.match_id, exc)
            self._release(UNAVAILABLE, last=True)
            self.latest = None
        finally:
            self.hub.forget(self)

    async def _read(self) -> None:
        hub, r = self.hub, self.hub.redis()
        cfg = hub.cfg
        key = stream_key(cfg.namespace, self.match_id)
        if not await r.exists(key) and not (self.running or await r.hexists(index_key(cfg.namespace),
                                                                            str(self.match_id))):
            self._release(self.gone, last=True)
            return
        sec, usec = await r.time()
        offset = time.time() - (sec + usec / 1e6)  # local clock minus Redis clock
        watch = watch_key(cfg.namespace, self.match_id)
        await r.set(watch, "1", ex=WATCH_TTL_S)
        rewatch = time.monotonic() + WATCH_TTL_S / 3
        due_ms = int((sec + usec / 1e6 - cfg.delay_s) * 1000)
        last = "0-0"
        got = await r.xrevrange(key, max=str(due_ms), min="-", count=1)
        if got:  # the newest entry already due: a viewer starts from its board
            last = _text(got[0][0])
            if self._emit(got[0][1]):
                return
        while not self._idle():
            resp = await r.xread({key: last}, count=100, block=BLOCK_MS)
            for entry_id, fields in resp[0][1] if resp else ():
                last = _text(entry_id)
                stored = int(last.split("-")[0]) / 1000.0 + offset  # Redis's time of the entry, local clock
                while (wait := stored + cfg.delay_s - time.time()) > 0:
                    if time.monotonic() > rewatch:
                        await r.set(watch, "1", ex=WATCH_TTL_S)
                        rewatch = time.monotonic() + WATCH_TTL_S / 3
                    if self._idle():
                        return
                    await asyncio.sleep(min(wait, WATCH_TTL_S / 3))
                if self._emit(fields):
                    return
            if time.monotonic() > rewatch and self.viewers:
                await r.set(watch, "1", ex=WATCH_TTL_S)
                rewatch = time.monotonic() + WATCH_TTL_S / 3

    def _emit(self, fields: Any) -> bool:
        """Release one entry; True when it was the end."""
        import json

        raw = fields.get(b"e", fields.get("e"))
        e = json.loads(raw)
        if e.get("end"):
            self._release(self.render(e), last=True)
            return True
        self._release(self.render(e))
        return False


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Hub:
    """The live views of one web process: the relays, the Redis client, the caps.

    Args:
        cfg: a ``web.live.LiveConfig``.
        per_client / total: the caps (:data:`PER_CLIENT`, :data:`TOTAL`).
    """

    def __init__(self, cfg: Any, per_client: int = PER_CLIENT, total: int = TOTAL) -> None:
        self.cfg = cfg
        self.per_client = per_client
        self.total = total
        self.held: Counter[str] = Counter()
        self.relays: dict[int, Relay] = {}
        self._redis: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def redis(self) -> Any:
        """The process's one asyncio Redis client (a pool: one connection per blocked reader, a few more)."""
        loop = asyncio.get_running_loop()
        if self._redis is None or self._loop is not loop:  # a client serves the loop that made it
            import redis.asyncio as aioredis

            self._loop = loop

            self._redis = aioredis.Redis.from_url(self.cfg.redis_url, socket_timeout=BLOCK_MS / 1000 + 5,
                                                  socket_connect_timeout=2.0, client_name="parterre-web")
        return self._redis

    def admit(self, address: str) -> tuple[int, str] | None:
        """Hold a live-view slot for ``address``, or (status, why) when a cap refuses it."""
        if sum(self.held.values()) >= self.total:
            return 503, "too many live viewers on this server; try again later"
        if self.held[address] >= self.per_client:
            return 429, f"at most {self.per_client} live views at once from one address"
        self.held[address] += 1
        return None

    def release(self, address: str) -> None:
        """Give back a slot taken by :meth:`admit`."""
        self.held[address] -= 1
        if self.held[address] <= 0:
            del self.held[address]

    def relay(self, match_id: int, running: bool, render: Render, gone: bytes) -> Relay:
        """The relay of ``match_id`` (started when none runs)."""
        relay = self.relays.get(match_id)
        if relay is None or relay.task.done() or relay.task.get_loop() is not asyncio.get_running_loop():
            relay = self.relays[match_id] = Relay(self, match_id, running, render, gone)
        return relay

    def forget(self, relay: Relay) -> None:
        """A relay ended."""
        if self.relays.get(relay.match_id) is relay:
            del self.relays[relay.match_id]

    async def stream(self, relay: Relay) -> AsyncIterator[bytes]:
        """One viewer's server-sent events: the latest board, then every event released, keepalives between."""
        q = relay.subscribe()
        try:
            yield f"retry: {RETRY_MS}\n: live feed\n\n".encode()
            while True:
                try:
                    async with asyncio.timeout(KEEPALIVE_S):
                        event = await q.get()
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                if event is None:
                    return
                yield event
        finally:
            relay.unsubscribe(q)

    async def close(self) -> None:
        """Stop every relay and close the client."""
        for relay in list(self.relays.values()):
            relay.task.cancel()
            with contextlib.suppress(BaseException):
                await relay.task
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None
