"""Connections and schema migrations. ``ladder`` is the only package with database code.

URLs are libpq URLs in either of the two forms Parterre meets:

* ``postgresql://user:password@host:port/db`` (an external server);
* ``postgresql://postgres:@/db?host=/tmp/pgserver-xyz`` (the embedded pgserver:
  the socket directory is in the query string).

Connections of the pool made by :func:`make_pool` are in **autocommit** mode:
every ladder function that writes opens an explicit transaction
(``with conn.transaction():``), so nothing is ever left half-written.

Migrations use alembic with the scripts inside the package
(``ladder/migrations``); the alembic configuration is built in code, so they
run from any working directory. :func:`migrate` takes a PostgreSQL advisory
lock, so several processes may call it at once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import psycopg.errors
from psycopg_pool import ConnectionPool, PoolTimeout

from ladder.errors import DatabaseUnavailableError

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
"""Alembic script location (``env.py``, ``versions/``)."""

MIGRATION_LOCK_KEY = 0x7061727465727265
"""Key of the ``pg_advisory_xact_lock`` taken by :func:`migrate` (``b"parterre"`` as an int)."""

DEFAULT_RETRIES = 5
"""Times :func:`run_transaction` retries after a serialization failure or deadlock (docs/faults.md F-17)."""

T = TypeVar("T")

_migrate_lock = threading.Lock()  # alembic's ``context`` proxy is process-global


def redact_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***`` (in the netloc and in the query).

    Strings that are not URLs (libpq ``key=value`` strings) have ``password=...`` masked.
    """
    if "://" not in url:
        return " ".join(
            "password=***" if part.lower().startswith("password=") else part for part in url.split()
        )
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, password = userinfo.partition(":")
        netloc = f"{user}:***@{hostport}" if sep and password else f"{userinfo}@{hostport}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def sqlalchemy_url(url: str) -> str:
    """SQLAlchemy form of a libpq URL: ``postgresql://...`` -> ``postgresql+psycopg://...``.

    The query string (``?host=/socket/dir``) is kept, so pgserver URLs work too.

    Raises:
        ValueError: ``url`` is not a ``postgresql://`` or ``postgres://`` URL.
    """
    for scheme in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme) :]
    raise ValueError(f"not a PostgreSQL URL: {redact_url(url)!r}")


def _libpq_url(url: str) -> str:
    return "postgresql://" + url[len("postgresql+psycopg://") :] if url.startswith("postgresql+psycopg://") else url


def connect(url: str, *, connect_timeout_s: float = 5, autocommit: bool = True) -> psycopg.Connection[Any]:
    """Open one connection (outside any pool).

    Raises:
        DatabaseUnavailableError: the server cannot be reached or refuses the login.
    """
    try:
        return psycopg.connect(
            _libpq_url(url), connect_timeout=max(1, int(connect_timeout_s)), autocommit=autocommit
        )
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailableError(
            f"cannot connect to PostgreSQL at {redact_url(url)}: {str(exc).strip()}"
        ) from exc


def make_pool(
    url: str, *, min_size: int = 1, max_size: int = 10, timeout_s: float = 10.0
) -> ConnectionPool:
    """Open a connection pool to the ladder database.

    The pool checks each connection before lending it, so a pool survives a
    restart of the server (docs/faults.md F-13). Connections are in autocommit mode.

    Args:
        url: libpq URL (``postgresql://user@host:port/db`` or pgserver's
            ``postgresql://postgres:@/db?host=/socket/dir``).
        min_size: connections kept open.
        max_size: most connections open at once.
        timeout_s: seconds to wait for the first connection (and, later, for a
            free connection).

    Returns:
        An open ``psycopg_pool.ConnectionPool``; close it with ``pool.close()``
        (or use it as a context manager).

    Raises:
        DatabaseUnavailableError: the server is unreachable; the message names
            the URL without its password.
    """
    url = _libpq_url(url)
    # Probe once so that the error says why (refused, unknown host, bad password).
    connect(url, connect_timeout_s=timeout_s).close()
    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True},
        open=False,
        check=ConnectionPool.check_connection,
        timeout=timeout_s,
        name="parterre-ladder",
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
    except PoolTimeout as exc:
        pool.close()
        raise DatabaseUnavailableError(
            f"cannot open a connection pool to PostgreSQL at {redact_url(url)} within {timeout_s} s"
        ) from exc
    return pool


_UNAVAILABLE_SQLSTATES = {"57P01", "57P02", "57P03"}  # admin/crash shutdown, cannot connect now


def is_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` means the server is unreachable or the connection was lost.

    That is: a pool timeout, or a ``psycopg.OperationalError`` with no SQLSTATE
    (the connection broke), a class-08 SQLSTATE (connection exception), or a
    server shutdown. Serialization failures, deadlocks, lock and statement
    timeouts are *not* unavailability.
    """
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _UNAVAILABLE_SQLSTATES


@contextmanager
def connection(pool: ConnectionPool) -> Iterator[psycopg.Connection[Any]]:
    """Borrow a connection from ``pool`` (autocommit), translating a lost server.

    Raises:
        DatabaseUnavailableError: no connection could be had, or it broke
            (see :func:`is_unavailable`); docs/faults.md F-08 (c).
    """
    try:
        with pool.connection() as conn:
            yield conn
    except (psycopg.OperationalError, PoolTimeout) as exc:
        if is_unavailable(exc):
            raise DatabaseUnavailableError(
                f"lost PostgreSQL at {redact_url(str(pool.conninfo))}: {str(exc).strip()}"
            ) from exc
        raise


def run_transaction(
    pool: ConnectionPool, fn: Callable[[psycopg.Connection[Any]], T], *, retries: int = DEFAULT_RETRIES
) -> T:
    """Run ``fn(conn)`` inside one transaction, retrying on serialization failure or deadlock.

    ``fn`` must do all its writes through ``conn`` and have no other side
    effects, because it may run up to ``retries + 1`` times (only the last run
    commits). docs/faults.md F-17.

    Raises:
        psycopg.errors.SerializationFailure / psycopg.errors.DeadlockDetected:
            still failing after ``retries`` retries.
        DatabaseUnavailableError: the server is unreachable or the connection
            broke (if it broke during COMMIT, the transaction may or may not
            have committed; every ladder write is safe to repeat).
        Whatever ``fn`` raises (the transaction is rolled back).
    """
    for attempt in range(retries + 1):
        try:
            with connection(pool) as conn, conn.transaction():
                return fn(conn)
        except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected) as exc:
            if attempt == retries:
                raise
            pause = min(0.02 * 2**attempt, 0.5) * (0.5 + random.random())
            log.warning("transaction retry %d/%d after %s: %s", attempt + 1, retries, type(exc).__name__, exc)
            time.sleep(pause)
    raise AssertionError("unreachable")


# -- migrations ----------------------------------------------------------------


def alembic_config(url: str | None = None) -> Config:
    """Alembic configuration for the ladder's migrations, built in code.

    Args:
        url: database URL (libpq or SQLAlchemy form), stored as
            ``sqlalchemy.url`` for alembic commands that open their own
            connection (``alembic.command.upgrade(cfg, "head", sql=True)``...).
    """
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return cfg


def _engine(url: str) -> Any:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    libpq = _libpq_url(url)

    def creator() -> psycopg.Connection[Any]:
        # libpq parses the URL itself (socket directory in the query included).
        return connect(libpq, autocommit=False)

    return create_engine("postgresql+psycopg://", creator=creator, poolclass=NullPool)


def head_revision() -> str:
    """Revision id of the newest migration shipped with this code."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(url: str) -> str | None:
    """Revision id the database is at, or ``None`` for an empty (never migrated) database.

    Raises:
        DatabaseUnavailableError: the server cannot be reached.
    """
    from alembic.runtime.migration import MigrationContext

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def migrate(url: str, revision: str = "head") -> str | None:
    """Upgrade the database to ``revision`` (default: the newest). Idempotent.

    The whole upgrade runs in one transaction (PostgreSQL DDL is
    transactional) holding ``pg_advisory_xact_lock(MIGRATION_LOCK_KEY)``, so
    when two processes migrate at once the second waits, then finds the schema
    at head and does nothing.

    Returns:
        The revision the database is at afterwards.

    Raises:
        DatabaseUnavailableError: the server cannot be reached.
    """
    from alembic import command
    from sqlalchemy import text

    cfg = alembic_config(url)
    engine = _engine(url)
    try:
        with _migrate_lock, engine.connect() as conn, conn.begin():
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
        with engine.connect() as conn:
            from alembic.runtime.migration import MigrationContext

            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
