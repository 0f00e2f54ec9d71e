"""Request body limits decided by the matched route, counted as the body is read, never buffered here.

Pure ASGI middleware, outermost but for the metrics. It wraps ``receive``: the first time the app
reads the body, the router has matched the request (Starlette sets ``scope["route"]``, an exact
route, not a part of the path), and the limit is that route's:

* a route listed in :data:`ROUTE_LIMITS` (the archive uploads), for a caller who presents
  credentials (an ``Authorization`` header or the session cookie); the handlers check them before
  they read a byte;
* :data:`DEFAULT_LIMIT` for every other route, and for an upload route called anonymously;
* 0 when no route matched (nothing reads the body of a 404 or 405 anyway).

A ``Content-Length`` over the limit is refused at that first read, before a byte is taken; a body
sent without a length (chunked) is handed to the app as it arrives, counted, and the read that
goes over the limit raises ``HTTPException(413)`` instead (the app's error handler answers it;
FastAPI passes an ``HTTPException`` raised while it reads a body through). A route that answers
without reading (no credentials, no such bot) never takes the body at all, so anonymous
connections cost no memory whatever they send: uvicorn itself holds at most 64 KiB of unread
body per connection (it stops reading the socket).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from ladder.submissions import MAX_ARCHIVE_BYTES
from web.metrics import UNMATCHED, route_of

DEFAULT_LIMIT = 64 << 10
"""Bytes of request body any route accepts (64 KiB: the largest form or JSON a participant sends,
a tournament naming 64 bots, is under 4 KiB)."""
FORM_MARGIN = 64 << 10
"""Bytes of multipart framing and fields allowed beside an archive in the upload form."""
ROUTE_LIMITS: Mapping[tuple[str, str], int] = {
    ("POST", "/api/bots/{bot_id}/versions"): MAX_ARCHIVE_BYTES,  # the body is the archive
    ("POST", "/my/bots/{bot_id}/hosted"): MAX_ARCHIVE_BYTES + FORM_MARGIN,  # the upload form
}
"""Routes (method, template) allowed more than :data:`DEFAULT_LIMIT`, for callers with credentials."""
SESSION_COOKIE = b"parterre_session="


class BodyLimit:
    """Answer ``413 {"detail": ...}`` to a request body over its route's limit (module docstring).

    Args:
        app: the ASGI app to wrap.
        default: limit of a matched route not in ``limits``.
        limits: per-route limits, by (method, route template).
    """

    def __init__(self, app: Callable[..., Awaitable[None]], default: int = DEFAULT_LIMIT,
                 limits: Mapping[tuple[str, str], int] = ROUTE_LIMITS) -> None:
        self.app = app
        self.default = default
        self.limits = limits

    def limit_for(self, scope: MutableMapping[str, Any]) -> int:
        """The body limit of a routed request in bytes (0 when no route matched; module docstring)."""
        route = route_of(scope)
        if route == UNMATCHED:
            return 0
        limit = self.limits.get((str(scope.get("method", "")), route))
        if limit is None:
            return self.default
        return limit if _has_credentials(scope) else self.default

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared: int | None = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                declared = int(value) if value.isdigit() else 1 << 62
        limit: int | None = None
        seen = 0
        started = False

        async def counted() -> MutableMapping[str, Any]:
            # Called only once the router has matched (it sets scope["route"]): the route decides.
            nonlocal limit, seen
            if limit is None:
                limit = self.limit_for(scope)
                if declared is not None and declared > limit:
                    raise HTTPException(413, _detail(limit))
            message: MutableMapping[str, Any] = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, _detail(limit))
            return message

        async def watch_start(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watch_start)
        except HTTPException as exc:
            if exc.status_code != 413 or started or limit is None:
                raise
            await _reject(send, limit)


def _has_credentials(scope: MutableMapping[str, Any]) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"authorization" and value.strip():
            return True
        if name == b"cookie" and SESSION_COOKIE in value:
            return True
    return False


def _detail(limit: int) -> str:
    return f"request body over {limit} bytes"


async def _reject(send: Any, limit: int) -> None:
    body = json.dumps({"detail": _detail(limit)}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
