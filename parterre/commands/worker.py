"""``parterre worker``: a Celery worker running tournament and ladder matches."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

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
    from workers.app import periodic_queue

    # Redis is a cache that may vanish: gossip, mingle and the heartbeat are Celery's worker-to-worker
    # chatter over the broker, and gossip's stop on a lost connection ends the whole worker
    # (docs/faults.md D-06); the workers need none of it (the claim in PostgreSQL is the truth)
    argv = ["worker", "--loglevel", args.loglevel, "--concurrency", str(args.concurrency),
            "--without-gossip", "--without-mingle", "--without-heartbeat"]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    ticks = None
    if args.queues:
        argv += ["--queues", args.queues]
    else:  # the main queue and, when a slot is free, the ticks' queue (S-22)
        argv += ["--queues", f"{app.conf.task_default_queue},{periodic_queue()}"]
        if args.tick_slot:
            ticks = _start_tick_consumer(args)
    try:
        app.worker_main(argv)
    finally:
        if ticks is not None:
            ticks.terminate()
            try:
                ticks.wait(30)
            except subprocess.TimeoutExpired:
                ticks.kill()
    return 0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: a SIGKILLed parent ends it
    except (OSError, AttributeError):
        pass


def _start_tick_consumer(args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """A second Celery worker, one slot, consuming only the periodic ticks' queue (``workers.app.periodic_queue``).

    The main pool's slots can all be held by long matches (a challenge may give 60 s per decision);
    this one never takes a match, so the ladder, challenge and tournament ticks and the reaper keep
    running (docs/faults.md S-22). It shares the metrics directory (its samples are in the main
    process's ``/metrics``) but serves no endpoint of its own, and it ends with its parent.
    """
    from workers.app import periodic_queue

    env = {k: v for k, v in os.environ.items() if k != "PARTERRE_METRICS_PORT"}
    host = args.hostname or "celery@%h"
    name = "ticks-" + host if "@" in host else f"ticks-{host}@%h"
    cmd = [sys.executable, "-c", "from parterre.cli import main; raise SystemExit(main())", "worker",
           "--queues", periodic_queue(), "--concurrency", "1", "--loglevel", args.loglevel, "--hostname", name,
           "--no-tick-slot"]
    return subprocess.Popen(cmd, env=env, preexec_fn=_die_with_parent)  # only sets PDEATHSIG


def register(sub: Subparsers) -> None:
    """Add ``worker``."""
    w = sub.add_parser("worker", help="run a Celery worker")
    w.add_argument("--concurrency", type=int, default=2, help="matches run at once (Celery worker processes)")
    w.add_argument("--loglevel", default="INFO", help="Celery log level: DEBUG, INFO, WARNING, ERROR")
    w.add_argument("--hostname", help="Celery node name, e.g. worker1@%%h (default: Celery's celery@HOST)")
    w.add_argument("--queues", help="comma-separated queues to consume (default $PARTERRE_QUEUE or parterre)")
    w.add_argument("--no-tick-slot", dest="tick_slot", action="store_false",
                   help="do not start the single-slot consumer of the periodic ticks' queue (QUEUE.periodic; "
                        "default: started unless --queues is given)")
    w.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    w.set_defaults(func=cmd_worker)
