"""``parterre worker``: a Celery worker running tournament and ladder matches (DESIGN §5)."""

from __future__ import annotations

import argparse
import os

from parterre import embedded
from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import Subparsers


def cmd_worker(args: argparse.Namespace) -> int:
    """Migrate the database, then run a Celery worker until interrupted."""
    common.observe(args, "worker", multiprocess=True)  # before prometheus_client is imported
    from parterre.logging import install_celery_hooks

    install_celery_hooks("worker")
    services = common.services(need_redis=True)
    st = common.settings()
    os.environ.update(
        {
            "PARTERRE_DATABASE_URL": services.database_url,
            "PARTERRE_REDIS_URL": services.redis_url,
            "PARTERRE_SERVICE_TOKEN": st.service_token,
            "PARTERRE_REFEREE_ADDRESS": st.referee_address,
            # hosted bots' credentials in rated matches, the same as under `parterre up` (docs/hosted.md)
            "PARTERRE_HOSTED_TOKEN_SECRET": settings_mod.hosted_token_secret(st.home),
        }
    )
    from ladder import db

    db.migrate(services.database_url)
    from workers.app import app

    app.conf.update(broker_url=embedded.celery_url(services.redis_url))
    argv = ["worker", "--loglevel", args.loglevel, "--concurrency", str(args.concurrency)]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    if args.queues:
        argv += ["--queues", args.queues]
    app.worker_main(argv)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``worker``."""
    w = sub.add_parser("worker", help="run a Celery worker")
    w.add_argument("--concurrency", type=int, default=2, help="matches run at once (Celery worker processes)")
    w.add_argument("--loglevel", default="INFO", help="Celery log level: DEBUG, INFO, WARNING, ERROR")
    w.add_argument("--hostname", help="Celery node name, e.g. worker1@%%h (default: Celery's celery@HOST)")
    w.add_argument("--queues", help="comma-separated queues to consume (default $PARTERRE_QUEUE or parterre)")
    w.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    w.set_defaults(func=cmd_worker)
