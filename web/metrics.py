"""Prometheus metrics of the web site: request latency by route (docs/web.md, "Metrics").

``instrument(app)`` (one line in :func:`web.app.create_app`) adds a pure
ASGI middleware, outermost, that times every HTTP request. The ``route``
label is the matched route's template (``/api/bots/{bot_id}``, ``/static``),
never the raw path, and the ``method`` label is one of :data:`METHODS` or ``other``
(h11 accepts any token as a method, and one series per made-up method would let any client
grow ``/metrics``), so that the number of series stays bounded; requests that match no route are ``<unmatched>``.

The metrics are not served on the public port. When ``PARTERRE_METRICS_PORT``
is set (``PORT`` or ``HOST:PORT``) in the process that runs the app, the
middleware starts ``prometheus_client``'s ``/metrics`` endpoint on that port
when the app starts (ASGI lifespan), once per process; ``parterre web`` and
``parterre up`` rely on that.

| metric | labels | meaning |
|---|---|---|
| ``parterre_web_request_seconds`` | method, route, status | time to the end of the response body, histogram |
| ``parterre_web_requests_in_progress`` | method | requests being served now |
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import Gauge, Histogram, start_http_server

log = logging.getLogger(__name__)

UNMATCHED = "<unmatched>"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods that get a label of their own; any other is counted as ``other``."""
OTHER_METHOD = "other"

REQUEST_SECONDS = Histogram(
    "parterre_web_request_seconds",
    "Time to serve one HTTP request (seconds), by method, route template and status code.",
    ["method", "route", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
REQUESTS_IN_PROGRESS = Gauge(
    "parterre_web_requests_in_progress", "HTTP requests being served now.", ["method"], multiprocess_mode="livesum"
)

_served_lock = threading.Lock()
_served_port: int | None = None


def route_of(scope: MutableMapping[str, Any]) -> str:
    """The route template the router matched (Starlette sets ``scope["route"]``), else ``<unmatched>``."""
    route = scope.get("route")
    if route is None and scope.get("endpoint") is not None:
        # Some routers (FastAPI's, for a Mount such as /static) leave only the endpoint: find its route.
        endpoint = scope["endpoint"]
        for candidate in getattr(scope.get("router"), "routes", ()):
            if getattr(candidate, "endpoint", None) is endpoint or getattr(candidate, "app", None) is endpoint:
                route = candidate
                break
    path = getattr(route, "path", None)
    if isinstance(path, str) and path:
        return path
    return UNMATCHED


def method_of(scope: MutableMapping[str, Any]) -> str:
    """The request's method if it is one of :data:`METHODS`, else ``other``."""
    method = str(scope.get("method", "GET"))
    return method if method in METHODS else OTHER_METHOD


def serve_metrics_from_env() -> int | None:
    """Start the ``/metrics`` endpoint on ``$PARTERRE_METRICS_PORT`` once per process.

    Returns:
        The bound port, or ``None`` when the variable is unset or empty.

    Raises:
        ValueError: the variable is not ``PORT`` or ``HOST:PORT``.
        OSError: the port cannot be bound.
    """
    global _served_port
    text = (os.environ.get("PARTERRE_METRICS_PORT") or "").strip()
    if not text:
        return None
    host, sep, port = text.rpartition(":")
    if not port.isdigit() or (sep and not host):
        raise ValueError(f"PARTERRE_METRICS_PORT={text!r}: expected PORT or HOST:PORT")
    with _served_lock:
        if _served_port is None:
            server, _ = start_http_server(int(port), addr=host if sep else "0.0.0.0")
            _served_port = int(server.server_address[1])
            log.info("serving Prometheus metrics on port %d", _served_port)
        return _served_port


class PrometheusMiddleware:
    """Pure ASGI middleware: times each HTTP request by method, route template and status.

    Args:
        app: the ASGI app to wrap.
        serve_endpoint: start the ``/metrics`` endpoint from ``$PARTERRE_METRICS_PORT``
            when the app starts (lifespan startup).
    """

    def __init__(self, app: Callable[..., Awaitable[None]], serve_endpoint: bool = True) -> None:
        self.app = app
        self.serve_endpoint = serve_endpoint

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" and self.serve_endpoint:
            await self.app(scope, self._on_startup(receive), send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = method_of(scope)
        status = 500
        started = time.perf_counter()

        async def send_status(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        REQUESTS_IN_PROGRESS.labels(method).inc()
        try:
            await self.app(scope, receive, send_status)
        finally:
            REQUESTS_IN_PROGRESS.labels(method).dec()
            REQUEST_SECONDS.labels(method, route_of(scope), str(status)).observe(time.perf_counter() - started)

    def _on_startup(self, receive: Any) -> Callable[[], Awaitable[MutableMapping[str, Any]]]:
        async def receive_and_serve() -> MutableMapping[str, Any]:
            message: MutableMapping[str, Any] = await receive()
            if message.get("type") == "lifespan.startup":
                serve_metrics_from_env()
            return message

        return receive_and_serve


def instrument(app: Any) -> Any:
    """Add :class:`PrometheusMiddleware` to a Starlette/FastAPI app (outermost); returns the app."""
    app.add_middleware(PrometheusMiddleware)
    return app
