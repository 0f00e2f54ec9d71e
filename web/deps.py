"""The app's connection pool as a FastAPI dependency: a route takes ``pool: Pool``.

The pool is the one :func:`web.app.create_app` was given or opened (``app.state.pool``).
A helper that already holds the request reads it with :func:`app_pool`. Who is asking
is a dependency too: ``web/auth.py`` (``SessionAccount`` for pages, ``ApiCaller`` and its
scoped forms for the API).
"""

from __future__ import annotations

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
