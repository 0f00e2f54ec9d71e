"""Bot tokens: who is on the other end of a stream (DESIGN §3, FAULTS F-06).

The ladder stores ``sha256(token)`` hex and publishes the live tokens in the
Redis hash ``parterre:bot_tokens`` (field = sha256 hex, value = bot id);
revoking deletes the field (docs/architecture.md, "Bot identity and tokens").
The referee only reads: it has no database code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol

from redis.exceptions import RedisError

DEFAULT_KEY = "parterre:bot_tokens"
"""Redis hash the ladder publishes live tokens into."""


class TokenStoreUnavailableError(RuntimeError):
    """The token store could not be asked (e.g. Redis is down). Not the bot's fault."""


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

    The client is created on first use, inside the running event loop.
    """

    def __init__(self, redis_url: str, key: str = DEFAULT_KEY, *, socket_timeout_s: float = 2.0) -> None:
        self.redis_url = redis_url
        self.key = key
        self._timeout = socket_timeout_s
        self._client: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            import redis.asyncio as aioredis

            self._client = aioredis.Redis.from_url(
                self.redis_url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
            )
        return self._client

    async def lookup(self, token: str) -> int | None:
        """See :meth:`TokenStore.lookup`."""
        if not token:
            return None
        try:
            value = await self._redis().hget(self.key, token_hash(token))
        except (RedisError, OSError) as exc:  # connection refused/reset, timeouts, a dead server
            raise TokenStoreUnavailableError(f"token store at {redact_url(self.redis_url)} unavailable: {exc}") from exc
        return _bot_id(value)

    async def lookup_digests(self, digests: list[str]) -> list[int | None]:
        """See :meth:`TokenStore.lookup_digests` (one ``HMGET``)."""
        if not digests:
            return []
        try:
            values = await self._redis().hmget(self.key, digests)
        except (RedisError, OSError) as exc:
            raise TokenStoreUnavailableError(f"token store at {redact_url(self.redis_url)} unavailable: {exc}") from exc
        return [_bot_id(v) for v in values]

    async def aclose(self) -> None:
        """Close the Redis connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
