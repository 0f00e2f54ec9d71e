"""How uvicorn serves the site: timeouts and limits against slow and numerous clients.

uvicorn (0.55, its h11 protocol: ``httptools`` is not installed) has a keep-alive timeout and a
cap on an incomplete request head, but no timeout for reading a request's head: a client that
sends one header byte every few seconds (slowloris) would hold its connection for ever.
:class:`HeadTimeoutH11Protocol` adds one; :func:`uvicorn_options` gives every way the site is
served (``parterre web``, ``parterre up``, :func:`web.app.start_background`) the same
settings:

* **head timeout** (:data:`HEAD_TIMEOUT_S`): a request head (request line and headers) must
  arrive whole within this many seconds of the connection, or of its first byte on a kept-alive
  connection; else the connection is closed;
* ``timeout_keep_alive`` (:data:`KEEP_ALIVE_S`): an idle kept-alive connection is closed;
* ``h11_max_incomplete_event_size`` (:data:`MAX_HEAD_BYTES`): a longer request head is answered 400;
* ``limit_concurrency`` (``PARTERRE_WEB_MAX_CONNECTIONS``, default :data:`MAX_CONNECTIONS`): with
  this many connections open (or requests in progress), a new request is answered 503 at once.

A slow *body* is bounded by the body limits (web/limits.py: uvicorn holds at most 64 KiB
of unread body per connection) and by ``limit_concurrency``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from web.settings import WebSettings
from web.settings import settings as web_settings

HEAD_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_HEAD_BYTES = 16 << 10
MAX_CONNECTIONS = int(WebSettings.model_fields["web_max_connections"].default)


class HeadTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for a request head (:data:`HEAD_TIMEOUT_S`).

    The timer starts when the connection is made and again at the first byte of each later request
    on a kept-alive connection; it stops once h11 has parsed the whole head (the client's state
    leaves ``IDLE``). When it fires first, the connection is closed without an answer.
    """

    head_timeout_s: float = HEAD_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's own signature
        self._head_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._head_timer is None:
                self._arm_head_timer()  # a later request's head has begun
        else:
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        self._cancel_head_timer()  # the keep-alive timeout watches the idle connection now
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.debug("closing a connection whose request head took over %.0f s", self.head_timeout_s)
            self.transport.close()


def proxy_options(env: dict[str, str] | None = None) -> dict[str, Any]:
    """uvicorn's proxy settings from ``PARTERRE_TRUSTED_PROXIES``.

    Unset (the default): ``X-Forwarded-For`` is ignored from everyone, so the
    address the login and sign-up limits count by is the TCP peer and cannot
    be chosen by the client (uvicorn's own default trusts the header from
    127.0.0.1, which any local process or pass-through proxy could use).
    Set to a comma-separated list of proxy addresses or networks (or ``*``):
    the header is honoured from those only (uvicorn's ``forwarded_allow_ips``).

    Args:
        env: the environment (default ``os.environ``).

    Returns:
        keyword arguments for ``uvicorn.run`` / ``uvicorn.Config``.
    """
    trusted = web_settings(env).trusted_proxies.strip()
    if not trusted:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": trusted}


def max_connections(env: dict[str, str] | None = None) -> int:
    """``PARTERRE_WEB_MAX_CONNECTIONS`` (default :data:`MAX_CONNECTIONS`).

    Raises:
        ValueError: not a whole number >= 1.
    """
    return web_settings(env).web_max_connections


def uvicorn_options(env: dict[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config``: the protocol with a head timeout,
    the keep-alive timeout, the head size cap, the connection cap and the proxy settings
    (:func:`proxy_options`)."""
    return {"http": HeadTimeoutH11Protocol, "timeout_keep_alive": KEEP_ALIVE_S,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES, "limit_concurrency": max_connections(env),
            **proxy_options(env)}
