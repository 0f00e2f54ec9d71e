"""``parterre db migrate``: upgrade the ladder schema to the latest migration."""

from __future__ import annotations

import argparse

from parterre.commands import common
from parterre.commands.common import Subparsers


def cmd_db_migrate(args: argparse.Namespace) -> int:
    """Migrate the configured (or embedded) database."""
    services = common.services()
    common.pool(services, migrate=True).close()
    print("database is at the latest migration")
    return 0


def register(sub: Subparsers) -> None:
    """Add ``db migrate``."""
    dbp = sub.add_parser("db", help="database maintenance").add_subparsers(dest="db_cmd", required=True)
    dm = dbp.add_parser("migrate", help="upgrade the schema to the latest migration")
    dm.set_defaults(func=cmd_db_migrate)
