"""The public web site and JSON API of the ladder (docs/web.md): read-only, no account needed.

Server-rendered pages (FastAPI + Jinja2, autoescaped), a JSON API under
``/api/`` described at ``/openapi.json``, and a replay viewer whose only
JavaScript (``static/viewer.js``) navigates between server-rendered board
panels. Routes and decisions: ``docs/web.md``.

Entry points:
    ``create_app(database_url=None, *, pool=None, pool_size=10, replay_cache_size=32) -> FastAPI``
    ``serve(database_url, host="127.0.0.1", port=8000, *, migrate_schema=True, log_level="info")``
        (blocking; ``parterre web --port N``)
    ``start_background(database_url=None, host="127.0.0.1", port=0, *, pool=None,
    migrate_schema=False) -> BackgroundServer`` (``.url``, ``.port``, ``.stop()``; tests and the demo)

Imports only ``games`` and ``ladder`` (never ``referee``, ``workers`` or ``parterre``).
"""

from __future__ import annotations

from web.app import BackgroundServer, create_app, serve, start_background

__all__ = ["BackgroundServer", "create_app", "serve", "start_background"]
