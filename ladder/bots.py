"""Bot registration, tokens and revocation (docs/architecture.md "Bot identity and tokens").

A token is shown once, at registration; the ladder stores only its SHA-256
hex digest (``bots.token_hash``). The live tokens are published to a Redis
hash (default key ``parterre:bot_tokens``): field = sha256 hex of the token,
value = bot id as decimal text. The referee checks ``Hello.token`` against that
hash and has no database code. Revoking a bot deletes its field (docs/faults.md F-06);
:func:`issue_token` rotates a live bot's token.

A bot is either hosted or connects from outside (docs/hosted.md): while it has a
live hosted credential (:data:`HOSTED_LIVE_SQL`), its ordinary token is not
published, so no unsandboxed program can take the hosted bot's rated seats.

A single-token change (register, rotate, revoke) writes Redis inside the PostgreSQL transaction,
just before its commit: when Redis cannot be reached the transaction rolls back, the caller gets
the ``RedisError`` (the web answers 503) and nothing changed — no bot stored whose token was never
shown, no revocation on record while the token still works. A commit that fails after the Redis
write fails closed: the new digest in Redis belongs to no bot or to a token nobody was shown, and
the next full publication (:func:`publish_tokens`) rewrites the hash from PostgreSQL.

A full publication reads PostgreSQL and then rewrites the whole hash; a single-token change that
committed in between would be undone by it (a retired bot's token live again, a new bot's token
gone, and nothing republishes a hash that ``<key>:published`` says is whole). So the two exclude each
other through one PostgreSQL advisory lock per hash (:func:`lock_tokens`): a single-token change holds
it shared from the start of its transaction to its commit, a full publication (and
``ladder.submissions.sync_credentials``, :func:`apply_account_status`) holds it exclusively from
before its reads to after its Redis write.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg.errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.errors import BotExistsError, BotNotFoundError, BotRevokedError, InvalidBotNameError

TOKENS_KEY = "parterre:bot_tokens"
"""Default Redis hash of live token hashes (field sha256 hex -> bot id)."""

PUBLISHED_SUFFIX = ":published"
"""``<key>:published`` is written with the whole hash (:func:`publish_tokens`): while it is missing the
hash is not known to be whole (Redis lost it, docs/architecture.md "Bot identity and tokens"), so the
referee revokes no one and the ladder publishes the whole set again (:func:`ensure_published`)."""

WANTED_SUFFIX = ":wanted"
"""``<key>:wanted``: a Redis list a referee pushes to when it finds ``<key>:published`` missing; the
workers' token watch (``workers/token_cache.py``) wakes on it and republishes at once."""



def lock_tokens(conn: Any, key: str, *, exclusive: bool = False) -> None:
    """Take the hash ``key``'s transaction-scoped advisory lock (module docstring): shared by a single-token
    change, before any row lock of its transaction; exclusive by a writer that rewrites Redis from what it
    reads of PostgreSQL, before it reads. Released at the commit or rollback."""
    fn = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    conn.execute(f"SELECT {fn}(hashtextextended(%s, 0))", (f"parterre:token-hash:{key}",))


def held_sql(alias: str) -> str:
    """SQL true when bot ``alias``'s account is not ``active`` (disabled or held pending): such a bot's
    tokens and hosted credentials are kept out of the referees' hash until the account is active
    again (S-11; a bot without an account is never held)."""
    return f"EXISTS (SELECT 1 FROM accounts ha WHERE ha.id = {alias}.account_id AND ha.status <> 'active')"


HOSTED_LIVE_SQL = (
    "SELECT h.bot_id FROM hosted_versions h JOIN bots hb ON hb.id = h.bot_id WHERE h.status = 'active' "
    "AND h.token_hash IS NOT NULL AND h.token_revoked_at IS NULL AND hb.revoked_at IS NULL "
    f"AND NOT {held_sql('hb')}")
"""Ids of the bots with a live hosted credential (``ladder.submissions.playing_versions``): their
ordinary tokens are kept out of the referees' hash."""

MAX_NAME_LENGTH = 64
"""Longest bot name (and version), in characters."""

HOUSE_PREFIX = "house-"
"""Start of every house bot's name (:mod:`ladder.house`); no other bot's name reads as starting with its
skeleton, ``house`` (``bot_name_skeleton``, migration 0012)."""

READS_AS = ("names are compared by what they read as: case, spaces and punctuation aside, with look-alike "
            "characters read as one (0 as o; 1, i and | as l; 3 as e; 5 and $ as s; rn as m; vv as w; Cyrillic "
            "and Greek letters as the Latin ones they look like): docs/participants.md, \"Bot names\"")
"""The rule, as said in every refusal of a name for it."""


def name_error(exc: psycopg.errors.IntegrityError, name: str, pool: ConnectionPool) -> Exception | None:
    """The error to raise for a bot row the database refused by its name, or ``None`` for another refusal.

    Bot names are unique under ``bot_name_skeleton(name)`` (migration 0012, :data:`READS_AS`) and under
    ``bot_name_key(name)`` (migration 0010: NFKC, lower case, each run of spaces and punctuation one ``-``),
    among all bots whatever their owner, and only a house bot's skeleton may start with ``house``
    (constraint ``bots_house_prefix``). A clash names the registered bot's name.
    """
    constraint = str(exc.diag.constraint_name or "")
    if isinstance(exc, psycopg.errors.CheckViolation) and constraint == "bots_house_prefix":
        return InvalidBotNameError(f"{name!r} reads as a name starting with {HOUSE_PREFIX!r}, and such names are "
                                   f"the house bots'; {READS_AS}")
    if isinstance(exc, psycopg.errors.UniqueViolation) and "name" in constraint:
        with connection(pool) as conn:
            row = conn.execute(
                "SELECT name FROM bots WHERE NOT name_legacy AND (bot_name_skeleton(name) = bot_name_skeleton(%s) "
                "OR bot_name_key(name) = bot_name_key(%s)) ORDER BY id LIMIT 1", (name, name)).fetchone()
        taken = f"{row[0]!r}" if row is not None else "another bot's name"
        return BotExistsError(f"{name!r} reads as {taken}, already registered; {READS_AS}")
    return None


@dataclass(frozen=True, slots=True)
class Bot:
    """A registered bot (never carries the token or its hash).

    Attributes:
        id: bot id (PostgreSQL ``bigint``).
        name: unique name, 1-64 printable characters.
        version: free-form version label, 1-64 printable characters.
        owner: who registered it, or ``None``.
        revoked_at: when its token was revoked, or ``None`` while live.
        created_at: registration time (UTC-aware).
    """

    id: int
    name: str
    version: str
    owner: str | None
    revoked_at: datetime | None
    created_at: datetime

    @property
    def revoked(self) -> bool:
        """True once the bot's token has been revoked."""
        return self.revoked_at is not None


def new_token() -> str:
    """A fresh bot token: ``secrets.token_urlsafe(32)`` (43 URL-safe characters, 256 bits).

    Never begins with ``-``, so ``--token T`` on a command line is never
    mistaken for an option (a token ``-x...`` made ``parterre bot run`` exit 2).
    """
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith("-"):
            return token


def token_hash(token: str) -> str:
    """SHA-256 hex digest of a bot token (the form stored and published)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _check_label(what: str, value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_NAME_LENGTH:
        raise InvalidBotNameError(f"bot {what} must be 1-{MAX_NAME_LENGTH} characters, got {value!r}")
    if not value.isprintable() or value != value.strip():
        raise InvalidBotNameError(
            f"bot {what} {value!r} must be printable characters without leading or trailing spaces"
        )
    return value


def _bot(row: dict[str, Any]) -> Bot:
    return Bot(row["id"], row["name"], row["version"], row["owner"], row["revoked_at"], row["created_at"])


_BOT_COLUMNS = "id, name, version, owner, revoked_at, created_at"


def register_bot(
    pool: ConnectionPool,
    name: str,
    *,
    version: str = "1",
    owner: str | None = None,
    redis: Any = None,
    key: str = TOKENS_KEY,
    house: bool = False,
) -> tuple[int, str]:
    """Register a bot and return its id and its token (shown once, never stored).

    Args:
        pool: ladder connection pool.
        name: unique bot name, 1-64 printable characters, no leading/trailing spaces.
        version: version label, same rules as ``name``.
        owner: optional owner label.
        redis: a redis-py client; when given, the token hash is published to
            the hash ``key`` at once (``HSET key sha256 bot_id``).
        key: Redis hash of live tokens.
        house: mark it a house bot (``bots.house``; :func:`ladder.house.ensure_house_bot` only).

    Returns:
        ``(bot_id, token)``; the token is :func:`new_token` (43 characters).

    Raises:
        InvalidBotNameError: bad name or version; a name that reads as starting with
            :data:`HOUSE_PREFIX` (:func:`name_error`) for a bot that is not a house bot.
        BotExistsError: a bot whose name reads as this one (:func:`name_error`: case, spaces,
            punctuation, look-alike characters) exists (revoked ones included).
    """
    _check_label("name", name)
    _check_label("version", version)
    token = new_token()
    digest = token_hash(token)
    if redis is not None:
        ensure_published(pool, redis, key)
    try:
        with connection(pool) as conn, conn.transaction():
            if redis is not None:
                lock_tokens(conn, key)
            row = conn.execute(
                "INSERT INTO bots (name, version, owner, token_hash, house) VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (name, version, owner, digest, house),
            ).fetchone()
            assert row is not None
            bot_id = int(row[0])
            if redis is not None:  # before the commit: with Redis down nothing is stored (module docstring)
                redis.hset(key, digest, str(bot_id))
    except psycopg.errors.IntegrityError as exc:
        refusal = name_error(exc, name, pool)
        if refusal is not None:
            raise refusal from None
        raise
    return bot_id, token


def _where(name_or_id: int | str) -> tuple[str, tuple[Any, ...]]:
    """SQL condition for a bot reference: an int is an id; a str is a name, or an id
    when it is all digits and no bot has that name."""
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        return "id = %s", (name_or_id,)
    if isinstance(name_or_id, str) and name_or_id.isdigit():
        return (
            "(name = %s OR (id = %s AND NOT EXISTS (SELECT 1 FROM bots n WHERE n.name = %s)))",
            (name_or_id, int(name_or_id), name_or_id),
        )
    return "name = %s", (name_or_id,)


def find_bot(pool: ConnectionPool, name_or_id: int | str) -> Bot | None:
    """Look a bot up by id or name; revoked bots included.

    Args:
        pool: ladder connection pool.
        name_or_id: an ``int`` is an id; a ``str`` is a name, or an id when it
            is all digits and no bot has that name (``"7"`` from a command line).

    Returns:
        The bot, or ``None`` if there is none.
    """
    where, params = _where(name_or_id)
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE {where}", params).fetchone()
    return _bot(row) if row else None


def list_bots(pool: ConnectionPool, *, include_revoked: bool = False) -> list[Bot]:
    """All bots ordered by id; revoked ones only when ``include_revoked``."""
    where = "" if include_revoked else "WHERE revoked_at IS NULL"
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {_BOT_COLUMNS} FROM bots {where} ORDER BY id").fetchall()
    return [_bot(r) for r in rows]


def revoke_bot(pool: ConnectionPool, bot: int | str, *, redis: Any = None, key: str = TOKENS_KEY) -> Bot:
    """Revoke a bot's token: stamp ``revoked_at`` and remove it from the Redis hash.

    Revoking twice keeps the first ``revoked_at``. The bot's matches and
    ratings are kept. docs/faults.md F-06.

    Args:
        pool: ladder connection pool.
        bot: bot id or name, as for :func:`find_bot`.
        redis: a redis-py client; when given, ``HDEL key <token hash>`` (and the hashes of its
            hosted versions' credentials, which are stamped revoked in any case).
        key: Redis hash of live tokens.

    Returns:
        The bot as stored after revocation.

    Raises:
        BotNotFoundError: no such bot.
    """
    where, params = _where(bot)
    if redis is not None:
        ensure_published(pool, redis, key)
    with connection(pool) as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        if redis is not None:
            lock_tokens(conn, key)
        row = cur.execute(
            f"UPDATE bots SET revoked_at = coalesce(revoked_at, now()) WHERE {where} "
            f"RETURNING {_BOT_COLUMNS}, token_hash",
            params,
        ).fetchone()
        if row is None:
            raise BotNotFoundError(f"no bot {bot!r}")
        # the platform-held credentials of its hosted versions too
        hosted = cur.execute("UPDATE hosted_versions SET token_revoked_at = coalesce(token_revoked_at, now()) "
                             "WHERE bot_id = %s AND token_hash IS NOT NULL RETURNING token_hash",
                             (row["id"],)).fetchall()
        if redis is not None:  # before the commit: with Redis down the bot stays as it was (module docstring)
            redis.hdel(key, row["token_hash"], *[h["token_hash"] for h in hosted])
    return _bot(row)


def issue_token(pool: ConnectionPool, bot: int | str, *, redis: Any = None, key: str = TOKENS_KEY) -> str:
    """Give a live bot a new token; the old one stops working (token rotation).

    Args:
        pool: ladder connection pool.
        bot: bot id or name, as for :func:`find_bot`.
        redis: a redis-py client; when given, the old hash is removed from
            ``key`` and the new one added, in one ``MULTI``/``EXEC`` -- unless the bot
            has a live hosted credential: then the new token is stored but not published
            (a hosted bot's rated seats are the sandbox's; it is published once the
            hosted version stops playing, ``ladder.submissions.sync_credentials``).
        key: Redis hash of live tokens.

    Returns:
        The new token (shown once, never stored).

    Raises:
        BotNotFoundError: no such bot.
        BotRevokedError: the bot is revoked (register a new bot instead).
    """
    token = new_token()
    digest = token_hash(token)
    where, params = _where(bot)
    if redis is not None:
        ensure_published(pool, redis, key)
    with connection(pool) as conn, conn.transaction():
        if redis is not None:
            lock_tokens(conn, key)
        row = conn.execute(f"SELECT id, token_hash, revoked_at FROM bots WHERE {where} FOR UPDATE", params).fetchone()
        if row is None:
            raise BotNotFoundError(f"no bot {bot!r}")
        bot_id, old, revoked_at = row
        if revoked_at is not None:
            raise BotRevokedError(f"bot {bot!r} is revoked; register a new bot")
        conn.execute("UPDATE bots SET token_hash = %s WHERE id = %s", (digest, bot_id))
        hosted = conn.execute(f"{HOSTED_LIVE_SQL} AND h.bot_id = %s", (bot_id,)).fetchone() is not None
        hosted = hosted or conn.execute(f"SELECT 1 FROM bots b WHERE b.id = %s AND {held_sql('b')}",
                                        (bot_id,)).fetchone() is not None  # held: published when re-enabled
        if redis is not None:  # before the commit: with Redis down the old token stays (module docstring)
            pipe = redis.pipeline(transaction=True)
            pipe.hdel(key, old)
            if not hosted:
                pipe.hset(key, digest, str(bot_id))
            pipe.execute()
    return token


def publish_tokens(pool: ConnectionPool, redis_client: Any, key: str = TOKENS_KEY) -> int:
    """Rewrite the Redis hash ``key`` from the ``bots`` table (field sha256 -> bot id), plus the
    credentials of active hosted versions (docs/hosted.md).

    Revoked bots are absent, and so are the bots of accounts not ``active`` (:func:`held_sql`)
    and the ordinary tokens of bots with a live hosted credential (:data:`HOSTED_LIVE_SQL`: a
    bot is either hosted or connects from outside).
    The delete and the rewrite run in one Redis ``MULTI``/``EXEC`` transaction, so the
    referee never sees an empty or half-written hash. The hash's lock (:func:`lock_tokens`) is held
    exclusively from before the reads to after that transaction, so no single-token change commits in
    between.

    Returns:
        Number of live tokens published.
    """
    published = _publish(pool, redis_client, key, only_if_missing=False)
    assert published is not None
    return published


def _publish(pool: ConnectionPool, redis_client: Any, key: str, *, only_if_missing: bool) -> int | None:
    """:func:`publish_tokens`; ``only_if_missing``: nothing (None) when ``<key>:published`` exists once the lock
    is held (:func:`ensure_published`: of a burst of callers that found it missing, one publishes)."""
    with connection(pool) as conn, conn.transaction():
        lock_tokens(conn, key, exclusive=True)
        if only_if_missing and redis_client.exists(key + PUBLISHED_SUFFIX):
            return None
        rows = conn.execute(f"SELECT token_hash, id FROM bots WHERE revoked_at IS NULL "
                            f"AND id NOT IN ({HOSTED_LIVE_SQL}) AND NOT {held_sql('bots')} ORDER BY id").fetchall()
        # hosted versions' platform-held credentials (ladder.submissions.activate_credential)
        rows += conn.execute(
            "SELECT h.token_hash, h.bot_id FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
            "WHERE h.status = 'active' AND h.token_hash IS NOT NULL AND h.token_revoked_at IS NULL "
            f"AND b.revoked_at IS NULL AND NOT {held_sql('b')} ORDER BY h.bot_id").fetchall()
        mapping = {digest: str(bot_id) for digest, bot_id in rows}
        pipe = redis_client.pipeline(transaction=True)
        pipe.delete(key)
        if mapping:
            pipe.hset(key, mapping=mapping)
        pipe.set(key + PUBLISHED_SUFFIX, repr(time.time()))
        pipe.execute()
    return len(mapping)


def ensure_published(pool: ConnectionPool, redis_client: Any, key: str = TOKENS_KEY) -> int | None:
    """Publish the whole token hash again (:func:`publish_tokens`) when Redis lost it.

    Redis is a cache that may be emptied at any time (a restart without persistence, ``FLUSHALL``);
    PostgreSQL is the source of truth. The hash is whole while ``<key>:published`` exists
    (:data:`PUBLISHED_SUFFIX`, written in the same transaction as the hash); when it is missing, the
    live tokens are read from the ``bots`` and ``hosted_versions`` tables and written back. Called by
    every worker node and web process when it starts, by the workers' token watch and
    ``parterre.tokens_tick``, and before every single-token change (register, rotate, revoke).

    Returns:
        The number of tokens published, or None when the hash was already whole (one ``EXISTS``).

    Raises:
        redis.exceptions.RedisError: Redis cannot be reached.
        DatabaseUnavailableError: PostgreSQL cannot be reached.
    """
    if redis_client.exists(key + PUBLISHED_SUFFIX):
        return None
    return _publish(pool, redis_client, key, only_if_missing=True)


def apply_account_status(pool: ConnectionPool, account_id: int, *, redis: Any, key: str | None = None) -> int:
    """Make the referees' hash agree with account ``account_id``'s status (S-11), after ``set_status``.

    Not ``active`` (disabled, or held pending): every token hash of its bots — ordinary tokens and
    hosted versions' credentials — is removed (``HDEL``), so a new ``Hello`` is ``UNAUTHENTICATED``
    and a live stream is closed at the referee's next token recheck. ``active`` again: the same
    tokens are published again (a disabling is a hold, not a leak; rotate them if it was one), the
    ordinary token only for a bot without a live hosted credential. Revoked bots stay out. Nothing is
    stamped in the database, so ``parterre.hosted_tick`` (``sync_credentials``) agrees with both.

    Returns:
        The number of hashes removed (held) or published (active).
    """
    key = key or TOKENS_KEY
    ensure_published(pool, redis, key)
    with connection(pool) as conn, conn.transaction():
        lock_tokens(conn, key, exclusive=True)  # no token change commits between these reads and the write
        row = conn.execute("SELECT status FROM accounts WHERE id = %s", (account_id,)).fetchone()
        held = row is not None and row[0] != "active"
        ordinary = conn.execute("SELECT token_hash, id FROM bots WHERE account_id = %s AND revoked_at IS NULL"
                                + ("" if held else f" AND id NOT IN ({HOSTED_LIVE_SQL})"),
                                (account_id,)).fetchall()
        credentials = conn.execute(
            "SELECT h.token_hash, h.bot_id FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
            "WHERE b.account_id = %s AND h.token_hash IS NOT NULL"
            + ("" if held else " AND h.status = 'active' AND h.token_revoked_at IS NULL AND b.revoked_at IS NULL"),
            (account_id,)).fetchall()
        mapping = {digest: str(bot_id) for digest, bot_id in [*ordinary, *credentials]}
        if mapping:
            if held:
                redis.hdel(key, *mapping)
            else:
                redis.hset(key, mapping=mapping)
    return len(mapping)
