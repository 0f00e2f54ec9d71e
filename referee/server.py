"""The referee's gRPC server: assembles ``Referee.Connect`` for bots, ``MatchControl.RunMatch``
for workers, and the standard health service (docs/architecture.md "Interfaces").

Usage::

    server, port = await create_server("127.0.0.1:0", token_store=StaticTokenStore({"t": 1}),
                                       service_token="s3cret")
    ...
    await core_of(server).stop(grace_s=5)

``create_server`` returns a started ``grpc.aio.Server``; :func:`core_of` gives
its :class:`~referee.core.RefereeCore` (sessions, rooms, counters, ``stop``).
The services are ``referee/connect.py`` (with the handshake in
``referee/handshake.py``) and ``referee/control.py``; the shared state is
``referee/core.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import signal
import socket
import time
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from proto.parterre.v1 import control_pb2_grpc as control_grpc
from proto.parterre.v1 import referee_pb2 as pb
from referee import live
from referee.cluster import Cluster, ClusterConfig
from referee.connect import RefereeServicer
from referee.control import MatchControlServicer
from referee.core import RefereeCore, RefereeSettings
from referee.handshake import decode_bot_message
from referee.headers import SERVICE_TOKEN_HEADER
from referee.tokens import DEFAULT_KEY, RedisTokenStore, TokenStore

__all__ = ["SERVICE_TOKEN_HEADER", "RefereeCore", "RefereeSettings", "TlsConfig", "core_of", "create_server", "serve"]

log = logging.getLogger(__name__)


def _server_options(s: RefereeSettings) -> list[tuple[str, Any]]:
    return [
        ("grpc.keepalive_time_ms", s.keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", s.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_receive_message_length", s.max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]


def serialize_referee_message(msg: pb.RefereeMessage | bytes) -> bytes:
    """Response serializer of ``Referee.Connect``: a ``RefereeMessage``, or its wire bytes as they are
    (decision requests are written as bytes: ``GameCodec.decision_request``)."""
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


def _add_referee_service(server: grpc.aio.Server, servicer: RefereeServicer) -> None:
    """Register ``Referee.Connect`` with a deserializer that never raises (:func:`decode_bot_message`)."""
    handler = grpc.method_handlers_generic_handler("parterre.v1.Referee", {
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect, request_deserializer=decode_bot_message,
            response_serializer=serialize_referee_message),
    })
    server.add_generic_rpc_handlers((handler,))


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """TLS of the bot endpoint (PEM bytes).

    Attributes:
        cert_chain: the server certificate (chain), PEM.
        private_key: its private key, PEM.
    """

    cert_chain: bytes
    private_key: bytes

    @classmethod
    def from_files(cls, cert_path: str, key_path: str) -> TlsConfig:
        """Read ``PARTERRE_TLS_CERT`` / ``PARTERRE_TLS_KEY`` style files.

        Raises:
            ValueError: a file cannot be read or is not PEM (the message names it).
        """
        out = []
        for what, path in (("certificate", cert_path), ("private key", key_path)):
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise ValueError(f"TLS {what} {path}: {exc.strerror}") from None
            if b"-----BEGIN" not in data:
                raise ValueError(f"TLS {what} {path}: not a PEM file")
            out.append(data)
        return cls(out[0], out[1])


class BindError(RuntimeError):
    """A listening address could not be bound; the message names it and the likely cause."""


BIND_RETRY_S = 90.0
"""How long ``parterre referee`` keeps trying to bind a port in use (``PARTERRE_BIND_RETRY_S``):
longer than a TIME-WAIT (60 s on Linux), so a restart outlasts an outgoing connection that
happened to take the port from the ephemeral range (docs/deploy.md, "Ports")."""


def _bind_once(server: grpc.aio.Server, address: str, tls: TlsConfig | None) -> int:
    """Bind ``address`` once; 0 when it cannot be (grpcio returns 0 or raises
    ``RuntimeError("Failed to bind ...")`` depending on its version)."""
    try:
        if tls is not None:
            creds = grpc.ssl_server_credentials([(tls.private_key, tls.cert_chain)])
            return int(server.add_secure_port(address, creds))
        return int(server.add_insecure_port(address))
    except RuntimeError:
        return 0


async def _bind(server: grpc.aio.Server, address: str, tls: TlsConfig | None, retry_s: float = 0.0) -> int:
    """Bind ``address`` (TLS when given) and return the port, trying again for ``retry_s`` seconds.

    A port in use is tried again after 0.5 s, doubling up to 10 s, each time with a warning naming
    the address, the wait and the time left (an outgoing connection or a socket in TIME-WAIT may hold
    the port for up to 60 s; docs/deploy.md, "Ports").

    Raises:
        BindError: still not bound after ``retry_s`` seconds.
    """
    deadline = time.monotonic() + max(0.0, retry_s)
    delay = 0.5
    while True:
        port = _bind_once(server, address, tls)
        if port:
            return port
        left = deadline - time.monotonic()
        if left <= 0:
            raise BindError(f"could not listen on {address}: the port is in use or the host is not this machine's"
                            + (f" (tried for {retry_s:.0f} s)" if retry_s > 0 else ""))
        wait = min(delay, left)
        log.warning("could not listen on %s: the port is in use (a running process, or a connection that holds "
                    "it for up to 60 s); trying again in %.1f s, %.0f s left (docs/deploy.md, \"Ports\")",
                    address, wait, left)
        await asyncio.sleep(wait)
        delay = min(10.0, delay * 2)


def _advertised(bind: str, port: int, explicit: str) -> str:
    """The address other processes should use for a socket bound at ``bind`` (port ``port``)."""
    if explicit:
        host, _, p = explicit.rpartition(":")
        return f"{host}:{port}" if p == "0" else explicit
    host = bind.rpartition(":")[0]
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = socket.gethostname()
    return f"{host}:{port}"


async def create_server(
    address: str = "127.0.0.1:0", *, token_store: TokenStore, service_token: str,
    settings: RefereeSettings | None = None, control_address: str | None = None, tls: TlsConfig | None = None,
    cluster: ClusterConfig | None = None, bind_retry_s: float = 0.0, **overrides: Any,
) -> tuple[grpc.aio.Server, int]:
    """Build and start a referee server (must run inside an event loop).

    Args:
        address: ``host:port`` of the bot endpoint; port 0 picks a free port (tests).
        token_store: where bot tokens are checked (:class:`~referee.tokens.RedisTokenStore`
            in production, :class:`~referee.tokens.StaticTokenStore` in tests).
        service_token: the secret workers send as ``x-parterre-service-token``.
        settings: tunables; ``overrides`` replace single fields
            (e.g. ``reconnect_grace_ms=500``).
        control_address: when given, ``MatchControl`` (and relay streams from
            other referees) are served on this separate ``host:port`` only,
            not on the bot endpoint (``parterre referee --control-address``);
            its port is ``core.control_port``.
        tls: serve the bot endpoint with TLS (``PARTERRE_TLS_CERT``/``_KEY``);
            the control endpoint stays plain (an internal network).
        cluster: join a cluster of referees through Redis (referee/cluster.py);
            port 0 in its addresses means the bound ports.
        bind_retry_s: keep trying to bind an address in use for this long (:data:`BIND_RETRY_S`
            for ``parterre referee``; 0: fail at once).

    Returns:
        ``(server, port)``: the started ``grpc.aio.Server`` of the bot endpoint
        (its ``referee`` attribute is the :class:`RefereeCore`) and its port.

    Raises:
        BindError: an address could not be bound within ``bind_retry_s`` (in use, or not an address
            of this host).
        ValueError: empty service token or unknown setting.
    """
    s = dataclasses.replace(settings or RefereeSettings(), **overrides)
    core = RefereeCore(token_store, service_token, s)
    server = grpc.aio.server(options=_server_options(s))
    _add_referee_service(server, RefereeServicer(core))
    services = ["", "parterre.v1.Referee"]
    if control_address is None:
        control_grpc.add_MatchControlServicer_to_server(MatchControlServicer(core), server)
        services.append("parterre.v1.MatchControl")
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = await _bind(server, address, tls, bind_retry_s)
    control_server = None
    if control_address is not None:
        control_server = grpc.aio.server(options=_server_options(s))
        control_grpc.add_MatchControlServicer_to_server(MatchControlServicer(core), control_server)
        _add_referee_service(control_server, RefereeServicer(core, relay_only=True))
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, control_server)
        core.control_port = await _bind(control_server, control_address, None, bind_retry_s)
        services.append("parterre.v1.MatchControl")
    await server.start()
    if control_server is not None:
        await control_server.start()
    for name in services:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    core.server = server
    core.control_server = control_server
    core.health = health_servicer
    core.start_background()
    server.referee = core  # grpc.aio.Server is untyped here (no grpc stubs): read back by core_of()
    if cluster is not None:
        bot_address = _advertised(address, port, cluster.address)
        ctl = _advertised(control_address, core.control_port, cluster.control_address) if control_address else ""
        core.cluster = Cluster(core, dataclasses.replace(cluster, address=bot_address, control_address=ctl))
        await core.cluster.start()
    log.info("referee %s listening on port %d%s%s", core.referee_id, port, " (TLS)" if tls else "",
             f", control on port {core.control_port}" if control_server is not None else "")
    return server, port


def core_of(server: grpc.aio.Server) -> RefereeCore:
    """The :class:`RefereeCore` of a server made by :func:`create_server`."""
    core: RefereeCore = server.referee
    return core


async def serve(
    address: str, *, service_token: str, token_store: TokenStore | None = None, redis_url: str | None = None,
    token_key: str = DEFAULT_KEY, settings: RefereeSettings | None = None, grace_s: float = 10.0,
    control_address: str | None = None, tls: TlsConfig | None = None, cluster: bool = True,
    advertise_address: str = "", advertise_control_address: str = "", cluster_namespace: str = "parterre",
    bind_retry_s: float = BIND_RETRY_S, **overrides: Any,
) -> None:
    """Run a referee until SIGINT/SIGTERM, then stop gracefully (``parterre referee``).

    Args:
        address / service_token / settings / control_address / tls / overrides:
            as :func:`create_server`.
        token_store: where tokens are checked; default a
            :class:`~referee.tokens.RedisTokenStore` on ``redis_url``.
        redis_url: redis-py URL of the ladder's Redis (tokens, and the cluster).
        token_key: the Redis hash of live tokens.
        grace_s: how long running matches get to finish on shutdown.
        cluster: publish presence and relay bots with the other referees on
            ``redis_url`` (referee/cluster.py); needs ``redis_url``.
        advertise_address / advertise_control_address: addresses other
            processes use to reach this referee (default: the bound ones; a
            wildcard host becomes this machine's host name).
        cluster_namespace: prefix of the cluster's Redis keys (``PARTERRE_CLUSTER_NAMESPACE``).
        bind_retry_s: how long an address in use is tried again (:data:`BIND_RETRY_S`).

    Raises:
        BindError: an address still in use after ``bind_retry_s``.
        ValueError: neither ``token_store`` nor ``redis_url`` given.
    """
    if token_store is None:
        if not redis_url:
            raise ValueError("serve() needs a token_store or a redis_url")
        token_store = RedisTokenStore(redis_url, key=token_key)
    if redis_url:
        live.configure(redis_url, cluster_namespace)  # spectator steps of running matches (referee/live.py)
    cluster_config = None
    if cluster and redis_url:
        cluster_config = ClusterConfig(redis_url, address=advertise_address, control_address=advertise_control_address,
                                       namespace=cluster_namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before serving: a stop asked at any time is graceful
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals outside the main thread
            loop.add_signal_handler(sig, stop.set)
    server, port = await create_server(address, token_store=token_store, service_token=service_token,
                                       settings=settings, control_address=control_address, tls=tls,
                                       cluster=cluster_config, bind_retry_s=bind_retry_s, **overrides)
    gc.freeze()  # start-up objects out of the collector's way (a lean hot path)
    log.info("referee serving on port %d; SIGINT/SIGTERM stops it", port)
    await stop.wait()
    await core_of(server).stop(grace_s)
    await live.shutdown()  # the ends of the matches stopped just now reach the feed
