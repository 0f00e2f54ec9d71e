"""Health checks for containers: ``python -m parterre.health KIND TARGET``, exit 0 when healthy.

The images have no curl or grpc_health_probe; these checks use what the
Parterre image already has (used by ``docker-compose.yml``)::

    python -m parterre.health grpc 127.0.0.1:50051     # gRPC health service says SERVING (referee)
    python -m parterre.health http http://127.0.0.1:8000/api/health   # HTTP 2xx (web, /metrics)
    python -m parterre.health tcp postgres:5432        # a TCP connection is accepted

Each check gives up after ``--timeout`` seconds (default 3) and prints one
line saying why it failed.
"""

from __future__ import annotations

import argparse
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence


def check_grpc(address: str, timeout_s: float = 3.0, service: str = "") -> str | None:
    """``None`` when the gRPC health service at ``address`` answers SERVING, else why not."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        with grpc.insecure_channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout_s
            )
    except grpc.RpcError as exc:
        return f"{address}: {exc.code().name}: {exc.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"{address}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def check_http(url: str, timeout_s: float = 3.0) -> str | None:
    """``None`` when ``GET url`` answers 2xx, else why not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:  # operator-given URL
            if 200 <= resp.status < 300:
                return None
            return f"{url}: HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return f"{url}: HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {getattr(exc, 'reason', exc)}"


def check_tcp(address: str, timeout_s: float = 3.0) -> str | None:
    """``None`` when ``host:port`` accepts a TCP connection, else why not."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except (OSError, ValueError) as exc:
        return f"{address}: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one check; 0 healthy, 1 not (with a line on stderr), 2 bad arguments."""
    p = argparse.ArgumentParser(prog="python -m parterre.health", description=__doc__.split("\n")[0])
    p.add_argument("kind", choices=("grpc", "http", "tcp"))
    p.add_argument("target", help="host:port (grpc, tcp) or URL (http)")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds (default 3)")
    p.add_argument("--service", default="", help="gRPC health service name (default: the server)")
    args = p.parse_args(argv)
    if args.kind == "grpc":
        problem = check_grpc(args.target, args.timeout, args.service)
    elif args.kind == "http":
        problem = check_http(args.target, args.timeout)
    else:
        problem = check_tcp(args.target, args.timeout)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
