"""Several referees against one Redis: presence, discovery and relays (referee/README.md, "Several referees").

Bots connect to any referee; a worker asks one referee to host a match; the
host seats bots connected to *other* referees through **relay streams**
(referee/README.md, "Several referees"):

* **Presence.** Every ``presence_interval_ms`` each referee writes
  ``parterre:referee:<id>`` (JSON, expiring after three intervals) and adds
  its id to the set ``parterre:referees`` (``parterre`` is the namespace,
  ``PARTERRE_CLUSTER_NAMESPACE``): its addresses, its open rooms, and
  per connected bot the free capacity, the capacity and the games it plays.
  Workers read it to find referees and to pick the host where most seats'
  bots already are; the continuous ladder reads it to know who is online. A
  referee that dies simply stops refreshing its key.
* **Relay requests.** A host with a seat whose bot is not connected locally
  (before the start, or orphaned after a drop) publishes
  ``{"bot_id", "host", "address", "count", "match_ids"}`` on the Redis channel
  ``parterre:relay:<id>`` of a referee where that bot has free capacity
  (re-published every ``relay_request_interval_ms`` while still wanted).
* **Relay links.** That referee lends one unit of the bot's capacity: it
  opens a ``Referee.Connect`` stream to the host's control endpoint,
  authenticated by the service token and naming the bot in metadata. On the
  host this stream is an ordinary :class:`~referee.sessions.Session` of the
  bot (capacity 1), so rooms seat it like any other. The lender forwards
  everything the host sends for the match to the bot's own stream (answering
  Pings itself) and the bot's Decisions/Resigns for that match back.
* **Failures.** The bot drops: the lender closes the relay cleanly (a
  ``Pong`` with nonce :data:`~referee.headers.RELAY_CLOSE_NONCE`, then
  half-close), the host applies its reconnect grace and disconnect policy as
  for a local bot. The lender dies or freezes: the relay ends abruptly, the
  host marks the seat *infra-lost* and, unless the bot comes back through
  another relay within the grace window, ends the match ``infra_error``
  (never a bot's fault) so that the worker runs it again. The host dies: the
  worker gets ``infra_error``; the lender tells the bot with a ``MatchEnded``
  of status ``infra_error``.

Workers do not import this package: ``workers/directory.py`` reads the same
keys (a test checks the names agree).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
import grpc.aio
from redis.exceptions import RedisError

from proto.parterre.v1 import referee_pb2 as pb
from referee import relay_wants
from referee.headers import RELAY_BOT_HEADER, RELAY_CLOSE_NONCE, RELAY_FROM_HEADER, SERVICE_TOKEN_HEADER
from referee.room import Room
from referee.sessions import Session, SessionRegistry

log = logging.getLogger(__name__)

REDIS_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)
"""What a Redis call raises when the server is down, slow or gone (redis-py's
``ConnectionError``/``TimeoutError`` are ``RedisError``s; a reset socket is an ``OSError``)."""


class ClusterHost(Protocol):
    """What a :class:`Cluster` needs of its referee (``referee.core.RefereeCore`` has it)."""

    @property
    def referee_id(self) -> str: ...
    @property
    def service_token(self) -> str: ...
    @property
    def shutting_down(self) -> bool: ...
    @property
    def registry(self) -> SessionRegistry: ...
    @property
    def rooms(self) -> Mapping[int, tuple[Room, asyncio.Task[Any]]]: ...

NAMESPACE = "parterre"
"""Default prefix of the cluster's Redis keys (``PARTERRE_CLUSTER_NAMESPACE``)."""
REFEREES_KEY = "{ns}:referees"
"""Redis set of the ids of referees that published presence (format with ``ns``)."""
REFEREE_KEY = "{ns}:referee:{id}"
"""Redis key of one referee's presence JSON (format with ``ns`` and ``id``)."""
RELAY_CHANNEL = "{ns}:relay:{id}"
"""Redis pub/sub channel of relay requests to one referee (format with ``ns`` and ``id``)."""
MAX_MATCH_IDS = 1000
"""Most match ids a relay request's ``match_ids`` is read for (the rest are ignored)."""


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """How a referee takes part in a cluster.

    Attributes:
        redis_url: redis-py URL of the shared Redis.
        address: advertised bot endpoint (``host:port``; port 0 = the bound port).
        control_address: advertised ``MatchControl`` endpoint; "" = ``address``.
        presence_interval_ms: how often presence is written (expires after 3 intervals).
        relay_request_interval_ms: how often a wanted bot is asked for again.
        relay_idle_ms: an unused relay stream on the host is closed after this.
        loan_timeout_ms: a lender closes a relay that got no match within this.
        namespace: prefix of the Redis keys (several clusters may share a Redis).
    """

    redis_url: str
    address: str = ""
    control_address: str = ""
    presence_interval_ms: int = 2000
    relay_request_interval_ms: int = 1000
    relay_idle_ms: int = 2000
    loan_timeout_ms: int = 60_000
    namespace: str = NAMESPACE


class RelayLink:
    """One unit of a local bot session's capacity lent to a hosting referee.

    Implements :class:`referee.sessions.Loan`. Created by the lender on a
    relay request; ends when its match ends, when the bot's stream drops
    (clean half-close), when the host ends it, or after ``loan_timeout_ms``
    without a match.
    """

    def __init__(self, cluster: Cluster, session: Session, host: str, address: str) -> None:
        self.cluster = cluster
        self.session = session
        self.host = host
        self.address = address
        self.matches: set[int] = set()
        self.used = False
        self.created = time.monotonic()
        self._queue: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._clean = False

    def start(self) -> None:
        """Reserve the capacity and open the relay stream."""
        self.session.loans.add(self)
        self._task = asyncio.create_task(self._run(), name=f"relay-bot{self.session.bot_id}-to-{self.host}")
        self.cluster.links.add(self)

    # -- referee.sessions.Loan ---------------------------------------------------------
    def forward(self, msg: pb.BotMessage) -> None:
        """Send a bot's message for a relayed match on to the host."""
        self._queue.put_nowait(msg)

    def bot_lost(self) -> None:
        """The bot's own stream ended: half-close the relay (the host's disconnect policy applies)."""
        self._clean = True
        self._queue.put_nowait(None)

    def cancel(self) -> None:
        """End the relay abruptly (referee stopping)."""
        if self._task is not None:
            self._task.cancel()

    # ----------------------------------------------------------------------------------
    async def _run(self) -> None:
        session = self.session
        call: Any = None
        writer: asyncio.Task[None] | None = None
        try:
            channel = self.cluster.channel(self.address)
            call = channel.stream_stream(
                "/parterre.v1.Referee/Connect",
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )(metadata=self.cluster.relay_metadata(session.bot_id))
            await call.write(pb.BotMessage(hello=pb.Hello(
                token="", bot_name=session.name, bot_version=session.version, games=session.games,
                max_concurrent_matches=1, observation_encoding=session.encoding,
                only_match_id=session.only_match_id, only_attempt=session.only_attempt)))
            writer = asyncio.create_task(self._write(call))
            timeout_s = self.cluster.config.loan_timeout_ms / 1000.0
            while True:
                if not self.used:
                    left = self.created + timeout_s - time.monotonic()
                    if left <= 0:
                        break
                    try:
                        msg = await asyncio.wait_for(call.read(), left)
                    except TimeoutError:
                        break
                else:
                    msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                self._from_host(msg, call)
        except asyncio.CancelledError:
            pass
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in (grpc.StatusCode.CANCELLED, grpc.StatusCode.OK):
                log.info("relay of bot %s to %s ended: %s %s", session.bot_id, self.host, exc.code(), exc.details())
        except Exception:
            log.exception("relay of bot %s to %s failed", session.bot_id, self.host)
        finally:
            if writer is not None:
                writer.cancel()
            if call is not None:
                call.cancel()
            self._cleanup()

    async def _write(self, call: Any) -> None:
        try:
            while True:
                msg = await self._queue.get()
                if msg is None:
                    await call.write(pb.BotMessage(pong=pb.Pong(nonce=RELAY_CLOSE_NONCE)))
                    await call.done_writing()
                    return
                await call.write(msg)
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError):
            pass

    def _from_host(self, msg: pb.RefereeMessage, call: Any) -> None:
        session = self.session
        kind = msg.WhichOneof("kind")
        if kind == "ping":
            self._queue.put_nowait(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
            return
        if kind == "welcome":
            return
        if kind == "error" and not msg.error.match_id:
            # about the relay stream itself (e.g. "relay no longer needed"), not the bot's business
            log.info("relay of bot %s to %s: %s", session.bot_id, self.host, msg.error.message)
            return
        if kind == "match_started":
            match_id = msg.match_started.match_id
            self.used = True
            self.matches.add(match_id)
            session.relays[match_id] = self
            session.take_match(match_id)
        elif kind == "match_ended":
            match_id = msg.match_ended.match_id
            self.matches.discard(match_id)
            if session.relays.get(match_id) is self:
                del session.relays[match_id]
            session.send(msg)
            session.remember_ended(match_id, msg.match_ended.reason, frozenset())
            if not self.matches:
                self._clean = True
                self._queue.put_nowait(None)  # one match per loan: give the capacity back
            return
        if kind == "decision_request" and session.limiter is not None:
            session.limiter.credit()  # its answer passes the bot's own stream's rate limit
        session.send(msg)

    def _cleanup(self) -> None:
        session = self.session
        session.loans.discard(self)
        self.cluster.links.discard(self)
        for match_id in sorted(self.matches):
            if session.relays.get(match_id) is self:
                del session.relays[match_id]
            if not self._clean:  # the host went away mid-match: tell the bot (not its fault)
                reason = f"hosting referee {self.host} lost"
                session.send(pb.RefereeMessage(match_ended=pb.MatchEnded(
                    match_id=match_id, status="infra_error", reason=reason)))
                session.remember_ended(match_id, reason, frozenset())
        self.matches.clear()
        self.cluster.core.registry.notify()


class Cluster:
    """A referee's part in a cluster: presence, relay requests (host) and relay links (lender).

    Args:
        core: the referee.
        config: :class:`ClusterConfig` with resolved addresses.
    """

    def __init__(self, core: ClusterHost, config: ClusterConfig) -> None:
        self.core = core
        self.config = config
        self.id = core.referee_id
        self.ns = config.namespace
        self.links: set[RelayLink] = set()
        self.directory: dict[str, dict[str, Any]] = {}
        self._redis: Any = None
        self._tasks: list[asyncio.Task[None]] = []
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._asked: dict[tuple[int, str], float] = {}
        self._idle_since: dict[int, float] = {}
        self._warned_at = 0.0
        self.requests_sent = 0
        self.requests_served = 0

    @property
    def relay_address(self) -> str:
        """Where other referees open relay streams to this one (the control endpoint)."""
        return self.config.control_address or self.config.address

    def redis(self) -> Any:
        """The redis.asyncio client (created on first use)."""
        if self._redis is None:
            import redis.asyncio as aioredis

            self._redis = aioredis.Redis.from_url(self.config.redis_url, socket_timeout=2.0,
                                                  socket_connect_timeout=2.0)
        return self._redis

    def channel(self, address: str) -> grpc.aio.Channel:
        """A cached channel to another referee's control endpoint."""
        ch = self._channels.get(address)
        if ch is None:
            ch = self._channels[address] = grpc.aio.insecure_channel(address, options=[
                ("grpc.keepalive_time_ms", 10_000), ("grpc.keepalive_timeout_ms", 5000),
                ("grpc.keepalive_permit_without_calls", 1), ("grpc.http2.max_pings_without_data", 0),
            ])
        return ch

    def relay_metadata(self, bot_id: int) -> list[tuple[str, str]]:
        """Metadata of a relay stream carrying ``bot_id``."""
        return [(SERVICE_TOKEN_HEADER, self.core.service_token), (RELAY_BOT_HEADER, str(bot_id)),
                (RELAY_FROM_HEADER, self.id)]

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        """Publish presence once, then run the background loops."""
        await self._publish()
        self._tasks = [
            asyncio.create_task(self._presence_loop(), name="cluster-presence"),
            asyncio.create_task(self._subscribe_loop(), name="cluster-relay-requests"),
            asyncio.create_task(self._wants_loop(), name="cluster-wants"),
        ]

    async def stop(self) -> None:
        """Stop the loops, end relay links, withdraw presence, close connections."""
        pending = set(self._tasks)
        while pending:  # cancel again if a cancellation was swallowed (asyncio.wait_for in 3.11 can)
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.5)
        for link in list(self.links):
            link.cancel()
        await asyncio.sleep(0)
        try:
            r = self.redis()
            await r.delete(REFEREE_KEY.format(ns=self.ns, id=self.id))
            await r.srem(REFEREES_KEY.format(ns=self.ns), self.id)
        except REDIS_ERRORS as exc:
            log.info("could not withdraw presence: %s", exc)
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    def _warn(self, what: str, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self._warned_at > 30:
            self._warned_at = now
            log.warning("cluster: %s failed (Redis unavailable?): %s", what, exc)

    # -- presence -----------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """This referee's presence record."""
        bots: dict[str, dict[str, Any]] = {}
        for bot_id, sessions in self.core.registry.by_bot.items():
            own = [s for s in sessions if not s.relay_from and not s.closed and not s.trial]  # a trial's: never shown
            if not own:
                continue
            games: set[str] = set()
            for s in own:
                games.update(s.games)
            bots[str(bot_id)] = {
                "free": sum(max(0, s.free) for s in own),
                # of which: unpinned (any match), and the matches that streams pinned to one can take
                "open": sum(max(0, s.free) for s in own if not s.only_match_id),
                "pinned": sorted({s.only_match_id for s in own if s.only_match_id and s.free > 0}),
                "capacity": sum(s.capacity for s in own),
                "sessions": len(own),
                "games": sorted(games),
            }
        return {
            "id": self.id,
            "address": self.config.address,
            "control_address": self.config.control_address or self.config.address,
            "relay_address": self.relay_address,
            "rooms": len(self.core.rooms),
            "at": time.time(),
            "bots": bots,
        }

    async def _publish(self) -> None:
        ttl_ms = max(3 * self.config.presence_interval_ms, 1000)
        try:
            r = self.redis()
            async with r.pipeline(transaction=True) as pipe:
                pipe.set(REFEREE_KEY.format(ns=self.ns, id=self.id), json.dumps(self.snapshot()), px=ttl_ms)
                pipe.sadd(REFEREES_KEY.format(ns=self.ns), self.id)
                await pipe.execute()
        except REDIS_ERRORS as exc:
            self._warn("publishing presence", exc)

    async def _presence_loop(self) -> None:
        interval = self.config.presence_interval_ms / 1000.0
        registry = self.core.registry
        last = time.monotonic()
        while True:
            # publish on every change (debounced to 4/s) and at least every interval
            await registry.wait_changed(max(0.0, last + interval - time.monotonic()))
            await asyncio.sleep(0.25)
            await self._publish()
            last = time.monotonic()

    async def read_directory(self) -> dict[str, dict[str, Any]]:
        """Presence of every live referee (this one included), by id."""
        r = self.redis()
        members = await r.smembers(REFEREES_KEY.format(ns=self.ns))
        ids = sorted(x.decode() if isinstance(x, bytes) else str(x) for x in members)
        if not ids:
            return {}
        values = await r.mget([REFEREE_KEY.format(ns=self.ns, id=i) for i in ids])
        out: dict[str, dict[str, Any]] = {}
        for rid, raw in zip(ids, values, strict=True):
            if raw is None:
                continue
            try:
                out[rid] = json.loads(raw)
            except ValueError:
                continue
        return out

    # -- host side: ask other referees for bots this one needs ---------------------------
    def wanted(self) -> dict[int, list[int]]:
        """:func:`referee.relay_wants.wanted` of this referee's rooms and sessions."""
        return relay_wants.wanted(self.core.rooms.values(), self.core.registry)

    async def _wants_loop(self) -> None:
        interval = min(0.5, self.config.relay_request_interval_ms / 1000.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._ask_for_wanted()
                self._close_idle_relays()
            except asyncio.CancelledError:
                raise
            except REDIS_ERRORS as exc:
                self._warn("asking for relays", exc)
            except Exception:  # a bug here must not stop the loop that brings bots over
                log.exception("cluster: asking for relays failed")

    async def _ask_for_wanted(self) -> None:
        want = self.wanted()
        if not want:
            return
        self.directory = await self.read_directory()
        now = time.monotonic()
        every = self.config.relay_request_interval_ms / 1000.0
        r = self.redis()
        for bot_id, match_ids in want.items():
            where = relay_wants.lenders(self.directory, self.id, bot_id, match_ids)
            where = [rid for rid in where if now - self._asked.get((bot_id, rid), -1e9) >= every]
            if not where:
                continue
            rid = random.choice(where)
            self._asked[(bot_id, rid)] = now
            self.requests_sent += 1
            await r.publish(RELAY_CHANNEL.format(ns=self.ns, id=rid), json.dumps(
                {"bot_id": bot_id, "host": self.id, "address": self.relay_address, "count": len(match_ids),
                 "match_ids": match_ids[:MAX_MATCH_IDS]}))
        for key in [k for k, t in self._asked.items() if now - t > 60]:
            del self._asked[key]

    def _close_idle_relays(self) -> None:
        """Close relay streams here that hold no seat for ``relay_idle_ms`` (capacity goes back to the lender)."""
        import grpc as _grpc

        now = time.monotonic()
        limit = self.config.relay_idle_ms / 1000.0
        alive: set[int] = set()
        for session in self.core.registry.sessions():
            if not session.relay_from:
                continue
            alive.add(session.id)
            if session.seats:
                self._idle_since.pop(session.id, None)
                continue
            since = self._idle_since.setdefault(session.id, now)
            if now - since >= limit:
                session.kill(_grpc.StatusCode.CANCELLED, pb.ERROR_CODE_PROTOCOL, "relay no longer needed")
        for sid in [s for s in self._idle_since if s not in alive]:
            del self._idle_since[sid]

    # -- lender side: serve relay requests ---------------------------------------------------
    async def _subscribe_loop(self) -> None:
        channel = RELAY_CHANNEL.format(ns=self.ns, id=self.id)
        while True:
            pubsub = None
            try:
                pubsub = self.redis().pubsub()
                await pubsub.subscribe(channel)
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None:
                        continue
                    try:
                        self.serve_request(json.loads(message["data"]))
                    except (ValueError, KeyError, TypeError) as exc:  # not JSON, or not a relay request
                        log.warning("bad relay request %r: %s", message.get("data"), exc)
                    except Exception:
                        log.exception("serving relay request %r failed", message.get("data"))
            except asyncio.CancelledError:
                raise
            except REDIS_ERRORS as exc:
                self._warn("listening for relay requests", exc)
                await asyncio.sleep(1.0)
            except Exception:
                log.exception("cluster: listening for relay requests failed")
                await asyncio.sleep(1.0)
            finally:
                if pubsub is not None:
                    try:
                        await pubsub.aclose()
                    except REDIS_ERRORS as exc:  # the connection is already gone
                        log.debug("closing the relay subscription: %s", exc)

    def serve_request(self, request: dict[str, Any]) -> int:
        """Lend capacity of a local bot to the referee asking for it.

        Args:
            request: ``{"bot_id", "host", "address", "count", "match_ids"}``: a session pinned to a
                match (``Hello.only_match_id``) is lent only when its match is among ``match_ids``
                (absent: a host from before the field, never given a pinned session).

        Returns:
            The number of relay links opened.
        """
        bot_id = int(request["bot_id"])
        host = str(request["host"])
        address = str(request["address"])
        count = max(1, int(request.get("count", 1)))
        raw = request.get("match_ids")
        # a list of match ids (ints, not bools), at most MAX_MATCH_IDS; anything else is ignored (no pinned stream lent)
        match_ids = ({m for m in raw[:MAX_MATCH_IDS] if type(m) is int and m > 0}
                     if isinstance(raw, list) else set())

        def lendable(s: Session) -> bool:  # a stream pinned to a match is lent for that match only; a trial's never
            return not s.trial and (not s.only_match_id or s.only_match_id in match_ids)
        if host == self.id or self.core.shutting_down:
            return 0
        now = time.monotonic()
        unused = sum(1 for link in self.links if link.session.bot_id == bot_id and link.host == host
                     and not link.used and now - link.created < self.config.relay_idle_ms / 1000.0 * 2
                     and lendable(link.session))
        opened = 0
        for _ in range(count - unused):
            own = [s for s in self.core.registry.by_bot.get(bot_id, ()) if not s.relay_from and not s.closed
                   and s.free > 0 and lendable(s)]
            if not own:
                break
            session = max(own, key=lambda s: (bool(s.only_match_id), s.free))  # a pinned one plays nothing else
            RelayLink(self, session, host, address).start()
            opened += 1
        self.requests_served += opened
        if opened:
            log.info("lending %d unit(s) of bot %s to referee %s", opened, bot_id, host)
        return opened
