"""``parterre up``: referee, workers, beat, house bots and web as child processes (``parterre/up.py``)."""

from __future__ import annotations

import argparse
import os

from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_up(args: argparse.Namespace) -> int:
    """Run the stack until Ctrl-C; 0 after a requested stop, 1 when a child failed."""
    from parterre.up import UpConfig, run_up

    st = common.settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    for flag, value in (("--workers", args.workers), ("--concurrency", args.concurrency)):
        if value < 1:
            raise CliError(f"{flag} must be at least 1")
    if not 0 <= args.web_port <= 65535:
        raise CliError(f"--web-port {args.web_port}: expected 0..65535")
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65000:
        raise CliError(f"--metrics-port {args.metrics_port}: expected 0..65000")
    services = common.services(need_redis=True)  # embedded servers start here, and stay up while `up` runs
    cfg = UpConfig(
        referee_address=address, workers=args.workers, concurrency=args.concurrency, web=not args.no_web,
        web_host=args.web_host, web_port=args.web_port, beat=not args.no_beat, house=not args.no_house,
        metrics_port=None if args.no_metrics else args.metrics_port, grace_s=args.grace,
    )
    os.environ.update({"PARTERRE_DATABASE_URL": services.database_url, "PARTERRE_REDIS_URL": services.redis_url})
    return run_up(cfg, services=services)


def register(sub: Subparsers) -> None:
    """Add ``up``."""
    up = sub.add_parser("up", help="run referee, workers, beat and web as child processes; Ctrl-C stops all")
    up.add_argument("--address", help="referee host:port (default $PARTERRE_REFEREE_ADDRESS)")
    up.add_argument("--workers", type=int, default=1, help="Celery worker processes")
    up.add_argument("--concurrency", type=int, default=2, help="matches at once per worker")
    up.add_argument("--web-host", default="127.0.0.1", help="web site interface")
    up.add_argument("--web-port", type=int, default=8000, help="web site port; 0 = a free port")
    up.add_argument("--no-web", action="store_true", help="do not run the web site")
    up.add_argument("--no-beat", action="store_true", help="do not run Celery beat")
    up.add_argument("--no-house", action="store_true", help="do not run the house bots (parterre house)")
    up.add_argument("--metrics-port", type=int, default=9100,
                    help="first /metrics port: referee, then workers, beat, web; 0 = free ports")
    up.add_argument("--no-metrics", action="store_true", help="no /metrics endpoints")
    up.add_argument("--grace", type=float, default=15.0, help="seconds each shutdown step waits")
    up.set_defaults(func=cmd_up)
