"""A hosted bot's stderr of its rated matches, kept for its owner (docs/hosted.md, "Rated matches").

The workers keep each rated match attempt's stderr tail (:func:`save_match_log`, from
``workers.hosting.seats``); the owner's pages and ``GET /api/bots/{id}/hosted-logs`` read them
(:func:`match_logs`). Ownership is the caller's to check.
"""

from __future__ import annotations

from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder.db import connection

MATCH_LOG_CHARS = 65536
"""Longest stderr kept per rated match attempt (the tail; the sandbox caps what it keeps first)."""
MATCH_LOGS_KEPT = 200
"""Rated-match logs kept per bot (the newest; older ones are deleted as new ones arrive), so that a
bot playing the continuous ladder for months holds at most ~13 MB of logs in the database
(``MATCH_LOGS_KEPT`` × :data:`MATCH_LOG_CHARS`), not one row per match forever. The owner's pages
and ``GET /api/bots/{id}/hosted-logs`` show the newest 10 and 50. ``PARTERRE_HOSTED_LOGS_KEPT``
(``workers.hosting.validation.hosted_settings``) sets it for a worker."""


def save_match_log(pool: ConnectionPool, match_id: int, attempt: int, bot_id: int, version_id: int,
                   log: str, kept: int = MATCH_LOGS_KEPT) -> None:
    """Keep a hosted bot's stderr of one rated match attempt (its tail, :data:`MATCH_LOG_CHARS`); idempotent.

    Then delete the bot's logs older than its newest ``kept`` (newest: by ``created_at``, then match id
    and attempt), in the same transaction; other bots' logs are never touched.

    Raises:
        ValueError: ``kept`` < 1 (a log just kept would be deleted at once).
    """
    if kept < 1:
        raise ValueError(f"kept must be at least 1, got {kept}")
    with connection(pool) as conn, conn.transaction():
        conn.execute("INSERT INTO hosted_match_logs (match_id, attempt, bot_id, version_id, log) "
                     "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (match_id, attempt, bot_id) DO UPDATE "
                     "SET log = EXCLUDED.log", (match_id, attempt, bot_id, version_id, log[-MATCH_LOG_CHARS:]))
        conn.execute("DELETE FROM hosted_match_logs l USING (SELECT match_id, attempt FROM hosted_match_logs "
                     "WHERE bot_id = %s ORDER BY created_at DESC, match_id DESC, attempt DESC OFFSET %s) old "
                     "WHERE l.bot_id = %s AND l.match_id = old.match_id AND l.attempt = old.attempt",
                     (bot_id, kept, bot_id))


def match_logs(pool: ConnectionPool, bot_id: int, limit: int = 50,
               version_id: int | None = None) -> list[dict[str, Any]]:
    """The newest rated-match logs of ``bot_id`` (of one version if ``version_id``): ``[{"match_id", "attempt",
    "version", "log", "created_at"}]`` (ownership is the caller's to check: a bot's stderr is its owner's)."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute("SELECT l.match_id, l.attempt, h.number AS version, l.log, l.created_at FROM hosted_match_logs l "
                    "JOIN hosted_versions h ON h.id = l.version_id WHERE l.bot_id = %s "
                    "AND (%s::bigint IS NULL OR l.version_id = %s) "
                    "ORDER BY l.created_at DESC, l.match_id DESC LIMIT %s", (bot_id, version_id, version_id, limit))
        return [{**r, "created_at": r["created_at"].isoformat()} for r in cur.fetchall()]
