"""Bot tokens: who is on the other end of a stream (docs/faults.md F-06).

The ladder stores ``sha256(token)`` hex and publishes the live tokens in the
Redis hash ``parterre:bot_tokens`` (field = sha256 hex, value = bot id);
revoking deletes the field (docs/architecture.md, "Bot identity and tokens").
The referee only reads: it has no database code.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping
from typing import Any, Protocol

from redis.exceptions import RedisError

log = logging.getLogger(__name__)

DEFAULT_KEY = "parterre:bot_tokens"
"""Redis hash the ladder publishes live tokens into."""

PUBLISHED_SUFFIX = ":published"
"""``<key>:published`` exists while the hash is whole: the ladder writes it with the whole set
(``ladder.bots.publish_tokens``). Redis is a cache that may be lost; while the marker is missing an
absent field means "not known", not "revoked"."""

WANTED_SUFFIX = ":wanted"
"""``<key>:wanted``: the list a referee pushes to when the marker is missing; the workers' token
watch wakes on it and publishes the whole set again from PostgreSQL."""

KNOWN_TOKENS_MAX = 100_000
"""Most token digests a :class:`RedisTokenStore` remembers from its last lookups (oldest forgotten first)."""


class TokenStoreUnavailableError(RuntimeError):
    """The token store could not be asked (e.g. Redis is down). Not the bot's fault."""


class TokenCacheLostError(TokenStoreUnavailableError):
    """Redis answers but lost the published hash (its ``:published`` marker is missing): nobody is
    known to be revoked until the ladder has published the whole set again. Not the bot's fault."""


def token_hash(token: str) -> str:
    """SHA-256 hex digest of ``token`` (UTF-8), as the ladder stores it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore(Protocol):
    """What the referee needs from a token store."""

    async def lookup(self, token: str) -> int | None:
        """Bot id of a live token, or None when unknown or revoked.

        Raises:
            TokenStoreUnavailableError: the store cannot be reached.
        """

    async def lookup_digests(self, digests: list[str]) -> list[int | None]:
        """Bot id per sha256 hex digest (None when unknown or revoked); used to
        re-check live sessions, which keep only their token's digest.

        Raises:
            TokenStoreUnavailableError: the store cannot be reached.
        """

    async def aclose(self) -> None:
        """Release connections."""


class StaticTokenStore:
    """An in-memory token store (tests, single-process demos).

    Args:
        tokens: token (clear text) -> bot id.
    """

    def __init__(self, tokens: Mapping[str, int] | None = None) -> None:
        self._by_hash: dict[str, int] = {token_hash(t): int(b) for t, b in (tokens or {}).items()}

    def add(self, token: str, bot_id: int) -> None:
        """Make ``token`` live for ``bot_id``."""
        self._by_hash[token_hash(token)] = int(bot_id)

    def revoke(self, token: str) -> None:
        """Forget ``token``; later lookups return None."""
        self._by_hash.pop(token_hash(token), None)

    async def lookup(self, token: str) -> int | None:
        """See :meth:`TokenStore.lookup`."""
        if not token:
            return None
        return self._by_hash.get(token_hash(token))

    async def lookup_digests(self, digests: list[str]) -> list[int | None]:
        """See :meth:`TokenStore.lookup_digests`."""
        return [self._by_hash.get(d) for d in digests]

    async def aclose(self) -> None:
        """Nothing to release."""


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs and error messages)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def _bot_id(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


class RedisTokenStore:
    """Token store backed by the ladder's Redis hash (redis.asyncio).

    Args:
        redis_url: redis-py URL, e.g. ``redis://127.0.0.1:6379/0`` or
            ``unix:///path/redis.socket``.
        key: the hash holding sha256(token) hex -> bot id.
        socket_timeout_s: per-command timeout.

    Redis may lose the hash (a restart without persistence, ``FLUSHALL``): the
    ladder writes ``<key>:published`` with the whole set, and while that marker
    is missing this store answers from the set it last saw whole (a digest it
    never saw raises :class:`TokenCacheLostError`, so the bot is told to try
    again, not that it is revoked), never reports a revocation, and pushes to
    ``<key>:wanted`` (at most once a second) so that a worker publishes the set
    again at once (docs/architecture.md, "Bot identity and tokens").

    The client is created on first use, inside the running event loop.
    """

    def __init__(self, redis_url: str, key: str = DEFAULT_KEY, *, socket_timeout_s: float = 2.0) -> None:
        self.redis_url = redis_url
        self.key = key
        self._timeout = socket_timeout_s
        self._client: Any = None
        self._known: dict[str, int] = {}
        self._lost_since: float | None = None
        self._nudged_at = 0.0

    def _redis(self) -> Any:
        if self._client is None:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(
                self.redis_url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
            )
        return self._client

    @property
    def cache_lost(self) -> bool:
        """True while the last answer came from a Redis without the ``:published`` marker."""
        return self._lost_since is not None

    async def _ask(self, digests: list[str]) -> tuple[list[Any], bool]:
        """``HMGET`` of ``digests`` and whether the marker exists, in one round trip."""
        try:
            pipe = self._redis().pipeline(transaction=False)
            pipe.hmget(self.key, digests)
            pipe.exists(self.key + PUBLISHED_SUFFIX)
            values, marker = await pipe.execute()
        except (RedisError, OSError) as exc:  # connection refused/reset, timeouts, a dead server
            raise TokenStoreUnavailableError(f"token store at {redact_url(self.redis_url)} unavailable: {exc}") from exc
        if marker:
            if self._lost_since is not None:
                log.warning("token hash %s is whole again after %.1f s", self.key,
                            time.monotonic() - self._lost_since)
                self._lost_since = None
            return list(values), True
        await self._cache_lost()
        return list(values), False

    async def _cache_lost(self) -> None:
        now = time.monotonic()
        if self._lost_since is None:
            self._lost_since = now
            log.warning("token hash %s lost (no %s marker): revoking no one until the ladder publishes it again",
                        self.key, PUBLISHED_SUFFIX)
        if now - self._nudged_at < 1.0:
            return
        self._nudged_at = now
        try:
            pipe = self._redis().pipeline(transaction=False)
            pipe.lpush(self.key + WANTED_SUFFIX, repr(time.time()))
            pipe.ltrim(self.key + WANTED_SUFFIX, 0, 0)
            pipe.expire(self.key + WANTED_SUFFIX, 300)
            await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("could not ask for the token hash again: %s", exc)

    def _remember(self, digest: str, bot_id: int | None) -> None:
        if bot_id is None:
            self._known.pop(digest, None)
            return
        self._known.pop(digest, None)
        self._known[digest] = bot_id
        if len(self._known) > KNOWN_TOKENS_MAX:
            del self._known[next(iter(self._known))]

    async def lookup(self, token: str) -> int | None:
        """See :meth:`TokenStore.lookup`.

        Raises:
            TokenCacheLostError: the hash is lost and this token was not in the set last seen whole.
        """
        if not token:
            return None
        digest = token_hash(token)
        (value,), whole = await self._ask([digest])
        bot_id = _bot_id(value)
        if whole:
            self._remember(digest, bot_id)
            return bot_id
        if bot_id is not None:  # published one by one since the loss (a new registration)
            return bot_id
        if digest in self._known:
            return self._known[digest]
        raise TokenCacheLostError(f"token hash {self.key} is being published again")

    async def lookup_digests(self, digests: list[str]) -> list[int | None]:
        """See :meth:`TokenStore.lookup_digests` (one ``HMGET``).

        Raises:
            TokenCacheLostError: the hash is lost: no session may be judged revoked now.
        """
        if not digests:
            return []
        values, whole = await self._ask(digests)
        if not whole:
            raise TokenCacheLostError(f"token hash {self.key} is being published again")
        ids = [_bot_id(v) for v in values]
        for digest, bot_id in zip(digests, ids, strict=True):
            self._remember(digest, bot_id)
        return ids

    async def aclose(self) -> None:
        """Close the Redis connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
