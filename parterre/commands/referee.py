"""``parterre referee``: the gRPC referee (docs/referee.md)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
from typing import Any

from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_referee(args: argparse.Namespace) -> int:
    """Serve the referee until interrupted; TLS from ``PARTERRE_TLS_CERT``/``PARTERRE_TLS_KEY``."""
    common.observe(args, "referee")
    from parterre.embedded import redis_py_url
    from referee.core import RefereeSettings
    from referee.server import BIND_RETRY_S, BindError, TlsConfig, serve

    st = common.settings()
    if not args.address and "," in st.referee_address:
        raise CliError("PARTERRE_REFEREE_ADDRESS lists several referees (for workers); give this one --address")
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    control = args.control_address or os.environ.get("PARTERRE_REFEREE_CONTROL_ADDRESS") or None
    if control is not None:
        control = settings_mod.check_address("--control-address", control)
    tls = None
    cert, key = os.environ.get("PARTERRE_TLS_CERT"), os.environ.get("PARTERRE_TLS_KEY")
    if cert or key:
        if not (cert and key):
            raise CliError("TLS needs both PARTERRE_TLS_CERT and PARTERRE_TLS_KEY")
        try:
            tls = TlsConfig.from_files(cert, key)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    advertise = args.advertise_address or os.environ.get("PARTERRE_REFEREE_ADVERTISE_ADDRESS", "")
    advertise_control = (args.advertise_control_address
                         or os.environ.get("PARTERRE_REFEREE_ADVERTISE_CONTROL_ADDRESS", ""))
    services = common.services(need_redis=True)
    limits = _limits_from_env()
    raw_retry = os.environ.get("PARTERRE_BIND_RETRY_S", "").strip() or str(BIND_RETRY_S)
    try:
        bind_retry_s = float(raw_retry)
    except ValueError:
        raise CliError(f"PARTERRE_BIND_RETRY_S must be a number of seconds, got {raw_retry!r}") from None
    try:
        asyncio.run(serve(
            address,
            redis_url=redis_py_url(services.redis_url),
            service_token=st.service_token,
            control_address=control,
            tls=tls,
            cluster=not args.no_cluster,
            advertise_address=advertise,
            advertise_control_address=advertise_control,
            cluster_namespace=os.environ.get("PARTERRE_CLUSTER_NAMESPACE") or "parterre",
            bind_retry_s=bind_retry_s,
            **({"referee_id": args.referee_id} if args.referee_id else {}),
            settings=dataclasses.replace(RefereeSettings(), **limits),
        ))
    except BindError as exc:
        raise CliError(str(exc)) from None
    return 0


LIMIT_VARIABLES = {
    "PARTERRE_MAX_DECLARED_CONCURRENCY": ("max_declared_concurrency", 1),
    "PARTERRE_MAX_STREAMS_PER_BOT": ("max_streams_per_bot", 0),
    "PARTERRE_MAX_MESSAGES_PER_S": ("max_messages_per_s", 0),
}
"""Operator limits of the referee read from the environment: variable -> (setting, least value);
see ``referee.core.RefereeSettings`` (0 = no limit for streams and messages)."""


def _limits_from_env() -> dict[str, Any]:
    """The referee settings the operator set through :data:`LIMIT_VARIABLES`.

    Raises:
        CliError: a value that is not an integer at least the setting's least value.
    """
    out: dict[str, Any] = {}
    for var, (setting, least) in LIMIT_VARIABLES.items():
        text = os.environ.get(var, "").strip()
        if not text:
            continue
        try:
            value = int(text)
        except ValueError:
            raise CliError(f"{var} must be an integer, got {text!r}") from None
        if value < least:
            raise CliError(f"{var} must be at least {least}, got {value}")
        out[setting] = value
    return out


def register(sub: Subparsers) -> None:
    """Add ``referee``."""
    r = sub.add_parser("referee", help="run the gRPC referee")
    r.add_argument("--address", help="host:port to listen on (default $PARTERRE_REFEREE_ADDRESS)")
    r.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    r.add_argument("--control-address",
                   help="serve the internal MatchControl service on this separate host:port only "
                        "(default $PARTERRE_REFEREE_CONTROL_ADDRESS; unset: on --address)")
    r.add_argument("--advertise-address", help="bot address other processes should use (default: the bound one)")
    r.add_argument("--advertise-control-address", help="control address workers and other referees should use")
    r.add_argument("--referee-id", help="this referee's id in the cluster (default host:pid)")
    r.add_argument("--no-cluster", action="store_true",
                   help="do not publish presence or relay bots with other referees through Redis")
    r.set_defaults(func=cmd_referee)
