"""A limit on request bodies, before anything reads them (a 150 MB JSON body was parsed in full).

Pure ASGI middleware. A request whose ``Content-Length`` is over the limit is
answered ``413`` at once, without reading the body; a body sent without a length
(chunked) is read here first, at most the limit, and answered ``413`` once over
(then handed on whole; the framework would turn an error raised while it reads
into a 400). Limits:
:data:`DEFAULT_LIMIT` for every route, :data:`UPLOAD_LIMIT` for the hosted-bot
archive uploads (their own 8 MiB archive limit is checked after reading,
``ladder.submissions.MAX_ARCHIVE_BYTES``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

DEFAULT_LIMIT = 1 << 20
"""Bytes of request body any route accepts (1 MiB: the largest JSON a participant sends is small)."""
UPLOAD_LIMIT = 9 << 20
"""Bytes for the archive upload routes (``.../versions``, ``.../hosted``): the 8 MiB archive plus a form."""
UPLOAD_MARKERS = ("/versions", "/hosted")


class BodyLimit:
    """Answer ``413 {"detail": ...}`` to a request body over its route's limit."""

    def __init__(self, app: Callable[..., Awaitable[None]], default: int = DEFAULT_LIMIT,
                 upload: int = UPLOAD_LIMIT) -> None:
        self.app = app
        self.default = default
        self.upload = upload

    def limit_for(self, path: str) -> int:
        """The body limit of ``path`` in bytes."""
        return self.upload if any(m in path for m in UPLOAD_MARKERS) else self.default

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(str(scope.get("path", "")))
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1
                if declared > limit:
                    await _reject(send, limit)
                    return
        if any(name == b"content-length" for name, _ in scope.get("headers", ())):
            await self.app(scope, receive, send)  # the declared length is within the limit
            return
        messages: list[MutableMapping[str, Any]] = []
        seen = 0
        while True:
            message: MutableMapping[str, Any] = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > limit:
                await _reject(send, limit)
                return
            if not message.get("more_body", False):
                break
        queue = iter(messages)

        async def replay() -> MutableMapping[str, Any]:
            try:
                return next(queue)
            except StopIteration:
                more: MutableMapping[str, Any] = await receive()
                return more

        await self.app(scope, replay, send)


async def _reject(send: Any, limit: int) -> None:
    body = json.dumps({"detail": f"request body over {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
