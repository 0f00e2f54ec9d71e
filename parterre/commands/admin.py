"""``parterre admin ...``: operator commands on accounts (needs database access).

* ``parterre admin create USERNAME`` — an admin account (the first admin comes from here;
  sign-up never makes one). The password is read from ``$PARTERRE_ADMIN_PASSWORD`` or asked for.
* ``parterre admin role USERNAME participant|organiser|admin``
* ``parterre admin approve USERNAME`` / ``disable USERNAME`` (with ``PARTERRE_SIGNUP=approval``
  new accounts wait as ``pending``)
* ``parterre admin accounts [--pending]``
"""

from __future__ import annotations

import argparse
import getpass
from typing import TYPE_CHECKING, Any

from parterre.settings import cli_settings

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool


def _pool() -> Any:
    from parterre.commands.common import pool, services

    return pool(services(), migrate=True)


def _account(pool: ConnectionPool, username: str) -> Any:
    from ladder import accounts as acc
    from parterre.commands.common import CliError

    account = acc.get_account(pool, username)
    if account is None:
        raise CliError(f"no account {username!r}: it must exist first (signed up on the site's /signup page "
                       f"or with `parterre remote signup {username}`)")
    return account


def cmd_create(args: argparse.Namespace) -> int:
    from ladder import accounts as acc
    from parterre.commands.common import CliError

    password = cli_settings().admin_password or getpass.getpass(f"password for {args.username}: ")
    pool = _pool()
    try:
        account = acc.create_account(pool, args.username, password, role="admin")
    except acc.AccountError as exc:
        raise CliError(str(exc)) from None
    print(f"admin account {account.username} created (id {account.id})")
    return 0


def cmd_role(args: argparse.Namespace) -> int:
    from ladder import accounts as acc

    pool = _pool()
    account = acc.set_role(pool, _account(pool, args.username).id, args.role)
    print(f"{account.username}: role {account.role}")
    return 0


def _status(args: argparse.Namespace, status: str) -> int:
    """Set an account's status; its bots' tokens and hosted credentials leave the referees' hash when it
    is not active and come back when it is active again (S-11, ``ladder.bots.apply_account_status``)."""
    import redis

    from ladder import accounts as acc
    from ladder import bots
    from parterre.commands import common

    services = common.services(need_redis=True)
    pool = common.pool(services, migrate=True)
    account = acc.set_status(pool, _account(pool, args.username).id, status)
    try:
        n = bots.apply_account_status(pool, account.id, redis=common.redis_client(services))
    except (redis.RedisError, OSError) as exc:  # the status is stored; this part is idempotent
        raise common.CliError(f"{account.username} is {account.status}, but its bots' tokens could not be "
                              f"{'published' if account.active else 'withdrawn'} in Redis ({exc}); "
                              f"run the command again") from None
    print(f"{account.username}: {account.status} ({n} bot token(s) {'published' if account.active else 'withdrawn'})")
    return 0


def cmd_accounts(args: argparse.Namespace) -> int:
    from ladder import accounts as acc

    for a in acc.list_accounts(_pool(), status="pending" if args.pending else None):
        print(f"{a.id}\t{a.username}\t{a.role}\t{a.status}\t{a.created_at:%Y-%m-%d %H:%M}")
    return 0


def register(sub: Any) -> None:
    """Add ``admin`` and its subcommands to the ``parterre`` parser's subparsers."""
    a = sub.add_parser("admin", help="accounts: create an admin, set roles, approve sign-ups")
    s = a.add_subparsers(dest="admin_cmd", required=True)
    c = s.add_parser("create", help="create an admin account (password from $PARTERRE_ADMIN_PASSWORD or asked)")
    c.add_argument("username", help="the new admin's user name")
    c.set_defaults(func=cmd_create)
    r = s.add_parser("role", help="set an account's role")
    r.add_argument("username", help="the account's user name")
    r.add_argument("role", choices=["participant", "organiser", "admin"], help="the new role")
    r.set_defaults(func=cmd_role)
    ap = s.add_parser("approve", help="activate a pending account")
    ap.add_argument("username", help="the account's user name")
    ap.set_defaults(func=lambda args: _status(args, "active"))
    d = s.add_parser("disable", help="disable an account (its sessions and tokens, its bots' tokens included, "
                                     "stop working; approve gives them back)")
    d.add_argument("username", help="the account's user name")
    d.set_defaults(func=lambda args: _status(args, "disabled"))
    ls = s.add_parser("accounts", help="list accounts")
    ls.add_argument("--pending", action="store_true", help="only accounts waiting for approval")
    ls.set_defaults(func=cmd_accounts)
