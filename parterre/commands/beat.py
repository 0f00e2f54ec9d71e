"""``parterre beat``: Celery beat sending the ladder tick and the reaper."""

from __future__ import annotations

import argparse
import os

from parterre import embedded
from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_beat(args: argparse.Namespace) -> int:
    """Run Celery beat until interrupted."""
    common.observe(args, "beat")
    services = common.services(need_redis=True)
    st = common.settings()
    os.environ.update({"PARTERRE_REDIS_URL": services.redis_url, "PARTERRE_SERVICE_TOKEN": st.service_token})
    from workers.app import app, configure_beat

    app.conf.update(broker_url=embedded.celery_url(services.redis_url))
    if args.ladder_period is not None and args.ladder_period <= 0:
        raise CliError("--ladder-period must be positive")
    if args.reap_period is not None and args.reap_period <= 0:
        raise CliError("--reap-period must be positive")
    configure_beat(args.ladder_period, args.reap_period)
    # celery.beat:Scheduler keeps the schedule in memory: no shelve file to share or lock,
    # so several beat processes may run (planning is idempotent, docs/faults.md F-12).
    app.start(["beat", "--loglevel", args.loglevel, "--scheduler", "celery.beat:Scheduler"])
    return 0


def register(sub: Subparsers) -> None:
    """Add ``beat``."""
    bt = sub.add_parser("beat", help="run Celery beat: the continuous ladder, challenges, entry windows and the reaper")
    bt.add_argument("--ladder-period", type=float,
                    help="seconds per ladder round (default $PARTERRE_LADDER_PERIOD_S or 10)")
    bt.add_argument("--reap-period", type=float,
                    help="seconds between reaper runs (default $PARTERRE_REAP_PERIOD_S or 15)")
    bt.add_argument("--loglevel", default="INFO", help="Celery log level: DEBUG, INFO, WARNING, ERROR")
    bt.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    bt.set_defaults(func=cmd_beat)
