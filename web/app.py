"""The web application: FastAPI, Jinja2 templates, error pages, security headers, serving.

:func:`create_app` builds the app over a ladder database (a URL, or an open
pool the caller owns); :func:`serve` runs it with uvicorn until interrupted (timeouts and limits:
web/serving.py);
:func:`start_background` runs it in a thread (tests, the demo) and returns
the address.

The public site is read-only (``GET``/``HEAD``); participants' accounts, tokens and
bots are the routes of web/participants.py (signed sessions, CSRF, Bearer tokens).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from psycopg_pool import ConnectionPool
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

from ladder.db import make_pool
from ladder.errors import DatabaseUnavailableError
from ladder.password_gate import PasswordCheckBusyError
from ladder.read import NotFound, ReplayCache
from ladder.replay_store import StoredReplayError
from web import filters
from web.deps import wall_clock
from web.labels import LabelCache
from web.limits import BodyLimit
from web.live import LiveConfig, config_from_env
from web.metrics import instrument as instrument_metrics
from web.serving import proxy_options, uvicorn_options

log = logging.getLogger(__name__)

__all__ = ["BackgroundServer", "create_app", "error_response", "proxy_options", "serve", "start_background"]

HERE = Path(__file__).resolve().parent
TEMPLATES_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""No inline script or style anywhere: even a markup injection could not run code."""

API_DESCRIPTION = """\
Read-only JSON API of the Parterre ladder: the same data as the web pages.

* `GET /api/` — games, leaders, latest results, tournaments
* `GET /api/leaderboard/{game}` — one page of a game's leaderboard (filter by player count, sort)
* `GET /api/bots/{bot_id}` — ratings with history, verdict counts, head-to-head, recent matches
* `GET /api/tournaments/{tournament_id}` — standings, crosstable, matches
* `GET /api/matches/{match_id}` — seats, results, seed, replay steps
* `GET /api/matches/{match_id}/replay` — the replay JSON (`parterre-replay/1`) as stored
* `GET /api/matches/{match_id}/steps/{step}` — the rebuilt state after a step
* `GET /api/competitions`, `/api/competitions/{competition_id}` (`/table`, `/evaluation`) — competitions,
  their season or final table (shared places as ranges) and final evaluation

Elo is in rating points, times in milliseconds. Two ratings per bot: the
online Elo (`elo`, a running estimate without an interval) and the
Bradley-Terry fit of all results (`bt_elo`, its bootstrap 95 % interval
`bt_low`–`bt_high`, and `bt_rank`), null for a bot outside the latest fit.
"""


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,  # every template, every value: bot names and versions are untrusted
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    filters.install(env)
    return env


class _ResponseHeaders:
    """Pure ASGI middleware: security headers on every HTTP response, and ``Server-Timing``.

    ``Server-Timing: app;dur=<ms>`` is the time from receiving the request to
    starting the response (the bench reads it; browsers show it in their
    network panel).
    """

    HEADERS = (
        (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
        (b"x-frame-options", b"DENY"),
    )

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - started) * 1000:.2f}".encode()
                message["headers"] = [*message.get("headers", []), *self.HEADERS, (b"server-timing", took)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def error_response(request: Request, status: int, message: str) -> Response:
    """A JSON error (``{"detail": message}``) for ``/api/`` paths, an HTML error page otherwise."""
    if _is_api(request):
        return JSONResponse({"detail": message}, status_code=status)
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(
        request, "error.html", {"status": status, "message": message}, status_code=status
    )


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> Response:
        return error_response(request, 404, str(exc) or "not found")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        if exc.status_code == 404 and message == "Not Found":
            message = "there is no page at this address"
        response = error_response(request, exc.status_code, message)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        if _is_api(request):
            return JSONResponse({"detail": _jsonable_errors(exc)}, status_code=422)
        # A malformed id in the address is a page that does not exist; a bad query value is a bad request.
        in_path = any(e.get("loc", ("",))[0] == "path" for e in exc.errors())
        if in_path:
            return error_response(request, 404, "there is no page at this address")
        fields = ", ".join(str(e.get("loc", ("", "?"))[-1]) for e in exc.errors())
        return error_response(request, 422, f"invalid value for: {fields}")

    @app.exception_handler(StoredReplayError)
    async def replay_unreadable(request: Request, exc: StoredReplayError) -> Response:
        log.error("stored replay unreadable at %s: %s", request.url.path, exc)
        return error_response(request, 500, f"this match's stored replay cannot be read: {exc}")

    @app.exception_handler(PasswordCheckBusyError)
    async def password_checks_busy(request: Request, exc: PasswordCheckBusyError) -> Response:
        response = error_response(request, 503, str(exc))
        response.headers["retry-after"] = str(exc.retry_after_s)
        return response

    @app.exception_handler(RedisError)
    async def cache_down(request: Request, exc: RedisError) -> Response:
        log.warning("redis unavailable at %s: %s", request.url.path, exc)
        return error_response(request, 503, "the site's cache (Redis) is unavailable; "
                                            "try again shortly")

    @app.exception_handler(DatabaseUnavailableError)
    async def database_down(request: Request, exc: DatabaseUnavailableError) -> Response:
        log.warning("database unavailable: %s", exc)
        return error_response(request, 503, "the ladder database is unavailable; try again shortly")


def _jsonable_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()
    ]


def create_app(
    database_url: str | None = None,
    *,
    pool: ConnectionPool | None = None,
    pool_size: int = 10,
    replay_cache_size: int = 32,
    live: LiveConfig | None = None,
) -> FastAPI:
    """Build the web application over a ladder database.

    Give either ``database_url`` (the app opens a pool when it starts and
    closes it when it stops) or ``pool`` (an open pool the caller owns and closes).
    The database must be migrated to head (:func:`ladder.migrate`; :func:`serve` does it).

    Args:
        database_url: libpq URL of the ladder database.
        pool: an open ``psycopg_pool.ConnectionPool`` instead of a URL.
        pool_size: most connections of the pool the app opens.
        replay_cache_size: decoded replays kept in memory (replays never change once stored).
        live: where the referees' live feed is and the relay delay (``web/live.py``);
            None: no live matches (pages say so).

    Returns:
        The FastAPI app (ASGI). Routes: docs/web.md.

    Raises:
        ValueError: neither or both of ``database_url`` and ``pool`` given.
    """
    if (database_url is None) == (pool is None):
        raise ValueError("give exactly one of database_url and pool")
    from web import api, competitions, featured, pages, participants, site_docs
    from web import challenges as challenge_routes
    from web import live as live_routes
    from web import tournaments as tournament_routes

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = pool is None
        if own:
            assert database_url is not None
            app.state.pool = make_pool(database_url, max_size=pool_size)
        try:
            yield
        finally:
            if own:
                app.state.pool.close()

    app = FastAPI(
        title="Parterre ladder",
        version="1",
        description=API_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # FastAPI's page loads Swagger UI from a CDN with an inline script: ours is /docs/api
        redoc_url=None,
    )
    app.state.pool = pool
    app.state.clock = wall_clock  # web/deps.py: the time competitions' schedules are judged at
    app.state.dataset_dir = None  # competitions' dataset tars; None: web.datasets.private_temp_folder
    app.state.replays = ReplayCache(replay_cache_size)
    app.state.labels = LabelCache(2 * replay_cache_size)
    app.state.live = live
    app.state.templates = Jinja2Templates(env=_environment())
    # Swagger UI's files from the fastapi-offline package (web/site_docs.py), mounted before /static that holds it
    app.mount(site_docs.SWAGGER_STATIC, StaticFiles(directory=str(site_docs.swagger_static())), name="swagger-ui")
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")
    app.include_router(tournament_routes.api_router)  # before api.router: /api/tournaments/{id}/table
    app.include_router(challenge_routes.api_router)  # before api.router: /api/bots/search
    app.include_router(api.router)
    app.include_router(competitions.api_router)
    app.include_router(tournament_routes.page_router)
    app.include_router(pages.router)
    app.include_router(competitions.page_router)
    app.include_router(site_docs.router)  # rules pages, bot guide, API reference
    app.include_router(live_routes.router)
    app.include_router(featured.router)  # /tv
    participants.install(app)  # accounts, tokens, owned bots, owner's view (web/participants.py)
    _install_error_handlers(app)
    app.add_middleware(GZipMiddleware, minimum_size=2048)
    app.add_middleware(_ResponseHeaders)
    app.add_middleware(BodyLimit)  # a body's limit is its matched route's, counted as it is read
    instrument_metrics(app)  # request latency by route; /metrics on $PARTERRE_METRICS_PORT (web/metrics.py)
    return app


def serve(
    database_url: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    migrate_schema: bool = True,
    log_level: str = "info",
) -> None:
    """Serve the site with uvicorn until interrupted (``parterre web``).

    Args:
        database_url: libpq URL of the ladder database.
        host / port: address to listen on.
        migrate_schema: bring the schema to head first (:func:`ladder.migrate`, idempotent).
        log_level: uvicorn's log level.

    Raises:
        DatabaseUnavailableError: the database cannot be reached at start.
    """
    import uvicorn

    if migrate_schema:
        from ladder.db import migrate

        migrate(database_url)
    app = create_app(database_url, live=config_from_env())
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False, **uvicorn_options())


@dataclass
class BackgroundServer:
    """A web server running in a daemon thread (see :func:`start_background`).

    Attributes:
        url: base URL, e.g. ``http://127.0.0.1:41231``.
        port: the port actually bound (useful with port 0).
    """

    url: str
    port: int
    server: Any
    thread: threading.Thread

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        self.server.should_exit = True
        self.thread.join(timeout_s)


def start_background(
    database_url: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    pool: ConnectionPool | None = None,
    migrate_schema: bool = False,
    timeout_s: float = 15.0,
    live: LiveConfig | None = None,
) -> BackgroundServer:
    """Start the site in a daemon thread and return once it accepts connections.

    Args:
        database_url / pool: as :func:`create_app`.
        host / port: address; port 0 picks a free port.
        migrate_schema: run :func:`ladder.migrate` first (needs ``database_url``).
        timeout_s: seconds to wait for the server to start.
        live: the live feed's Redis and delay (see :func:`create_app`).

    Raises:
        RuntimeError: the server did not start in time.
    """
    import uvicorn

    if migrate_schema and database_url is not None:
        from ladder.db import migrate

        migrate(database_url)
    app = create_app(database_url, pool=pool, live=live)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on",
                            **uvicorn_options())
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="parterre-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return BackgroundServer(url=f"http://{host}:{bound}", port=int(bound), server=server, thread=thread)
