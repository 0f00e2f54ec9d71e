"""``parterre web``: the public web site and JSON API (docs/web.md)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import Subparsers

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from parterre.embedded import Services


def cmd_web(args: argparse.Namespace) -> int:
    """Migrate the database, then serve the web site until interrupted."""
    from parterre.up import serve_web
    from web import memory

    memory.limit_arenas()  # before the pool starts its threads (web/memory.py)
    services = common.services()
    pool = common.pool(services, migrate=True)
    try:
        _publish_tokens_if_lost(pool, services)
    finally:
        pool.close()
    os.environ["PARTERRE_DATABASE_URL"] = services.database_url
    settings_mod.check_address("--host/--port", f"{args.host}:{args.port}")
    print(f"web site on http://{args.host}:{args.port}/ (JSON API under /api/, OpenAPI at /openapi.json)",
          flush=True)
    serve_web(args.host, args.port)
    return 0


def _publish_tokens_if_lost(pool: ConnectionPool, services: Services) -> None:
    """Publish the bot tokens again from PostgreSQL when Redis lost them (``ladder.bots.ensure_published``);
    an unreachable Redis is reported and does not keep the site from starting; without a Redis configured
    there is nothing to publish to."""
    if not services.redis_url:
        return
    from redis.exceptions import RedisError

    from ladder.bots import ensure_published

    client = common.redis_client(services)
    try:
        count = ensure_published(pool, client)
    except (RedisError, OSError) as exc:
        print(f"warning: could not check the bot tokens in Redis: {exc}", flush=True)
        return
    finally:
        client.close()
    if count is not None:
        print(f"Redis had lost the bot tokens: published {count} again from the database", flush=True)


def register(sub: Subparsers) -> None:
    """Add ``web``."""
    wb = sub.add_parser("web", help="serve the public web site and JSON API")
    wb.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0 = every interface)")
    wb.add_argument("--port", type=int, default=8000, help="port to listen on")
    wb.set_defaults(func=cmd_web)
