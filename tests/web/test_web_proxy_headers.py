"""X-Forwarded-For is honoured only from the proxies in PARTERRE_TRUSTED_PROXIES.

The login and sign-up limits count by client address (``web.auth.client_address``);
uvicorn's own default trusts the header from 127.0.0.1, so any local process could choose
the address it is counted under. The oracle is a real uvicorn server started with our options
and a route that echoes the address Starlette sees.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from web.app import proxy_options


async def _peer(request: Request) -> PlainTextResponse:
    return PlainTextResponse(request.client.host if request.client else "?")


def _seen_address(monkeypatch: pytest.MonkeyPatch, trusted: str | None) -> str:
    if trusted is None:
        monkeypatch.delenv("PARTERRE_TRUSTED_PROXIES", raising=False)
    else:
        monkeypatch.setenv("PARTERRE_TRUSTED_PROXIES", trusted)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(Starlette(routes=[Route("/", _peer)]), host="127.0.0.1", port=port,
                            log_level="warning", **proxy_options())
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        return httpx.get(f"http://127.0.0.1:{port}/", headers={"X-Forwarded-For": "203.0.113.5"}, timeout=10).text
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_header_is_ignored_by_default_even_from_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _seen_address(monkeypatch, None) == "127.0.0.1"


def test_a_listed_proxy_is_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _seen_address(monkeypatch, "127.0.0.1") == "203.0.113.5"


def test_an_unlisted_peer_is_not_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _seen_address(monkeypatch, "192.0.2.1") == "127.0.0.1"
