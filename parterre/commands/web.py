"""``parterre web``: the public web site and JSON API (DESIGN §7)."""

from __future__ import annotations

import argparse
import os

from parterre import settings as settings_mod
from parterre.commands import common
from parterre.commands.common import Subparsers


def cmd_web(args: argparse.Namespace) -> int:
    """Migrate the database, then serve the web site until interrupted."""
    from parterre.up import serve_web

    services = common.services()
    common.pool(services, migrate=True).close()
    os.environ["PARTERRE_DATABASE_URL"] = services.database_url
    settings_mod.check_address("--host/--port", f"{args.host}:{args.port}")
    print(f"web site on http://{args.host}:{args.port}/ (JSON API under /api/, OpenAPI at /openapi.json)",
          flush=True)
    serve_web(args.host, args.port)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``web``."""
    wb = sub.add_parser("web", help="serve the public web site and JSON API")
    wb.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0 = every interface)")
    wb.add_argument("--port", type=int, default=8000, help="port to listen on")
    wb.set_defaults(func=cmd_web)
