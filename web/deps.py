"""The app's connection pool as a FastAPI dependency: a route takes ``pool: Pool``.

The clock is a dependency too (``now: Now``): ``app.state.clock`` (the wall clock in UTC; tests
set a virtual one), read where the ladder takes ``now`` (competitions' schedules).

The pool is the one :func:`web.app.create_app` was given or opened (``app.state.pool``).
A helper that already holds the request reads it with :func:`app_pool`. Who is asking
is a dependency too: ``web/auth.py`` (``SessionAccount`` for pages, ``ApiCaller`` and its
scoped forms for the API).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request
from psycopg_pool import ConnectionPool


def app_pool(request: Request) -> ConnectionPool:
    """The connection pool of the app serving ``request``."""
    pool: ConnectionPool = request.app.state.pool
    return pool


async def _pool(request: Request) -> ConnectionPool:
    # async: FastAPI calls it on the event loop (a sync dependency would take a worker thread for nothing)
    return app_pool(request)


Pool = Annotated[ConnectionPool, Depends(_pool)]
"""A route parameter: the app's connection pool."""


def wall_clock() -> datetime:
    """The current time, UTC (the app's clock unless a test sets ``app.state.clock``)."""
    return datetime.now(UTC)


def app_now(request: Request) -> datetime:
    """The time by the clock of the app serving ``request``."""
    clock: Callable[[], datetime] = request.app.state.clock
    return clock()


async def _now(request: Request) -> datetime:
    return app_now(request)


Now = Annotated[datetime, Depends(_now)]
"""A route parameter: the time by the app's clock (``app.state.clock``)."""
