"""Participant accounts, passwords, login rate limits and personal API tokens (docs/participants.md).

* Passwords: argon2id through ``argon2-cffi`` (its default parameters, RFC 9106
  "low memory" profile); only the PHC string is stored. A hash made with older
  parameters is re-hashed on the next successful login.
* Usernames: 2-32 characters of ``[A-Za-z0-9_.-]``, starting with a letter or
  digit, unique ignoring case (:data:`USERNAME_RE`). Passwords: 10-256 characters.
* Roles: ``participant`` (sign-up always gives this), ``organiser`` (may create
  tournaments), ``admin`` (approves accounts, sets roles; the first one is made
  by ``parterre admin create``, never by sign-up).
* Rate limits (:func:`reserve_login`, :func:`sign_up`) count rows of
  ``auth_events`` in PostgreSQL, so every web process shares them: at most
  :data:`LOGIN_FAILURES_PER_ACCOUNT` failed logins per account from one
  client address, :data:`LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS` per account
  from all addresses together and :data:`LOGIN_FAILURES_PER_ADDRESS` per client
  address in :data:`LOGIN_WINDOW_S`. Counting an account's failures per
  address (OWASP's "Blocking Brute Force Attacks": lock the pair, not the
  account) means a stranger who knows a username cannot lock its owner out by
  guessing wrong five times; only a guesser spread over many addresses reaches
  the account-wide cap, and then the owner waits at most the window;
  :data:`SIGNUPS_PER_ADDRESS` sign-ups per address per hour.
  An attempt is *reserved* before its password is checked: one transaction, serialised per
  username and per address by PostgreSQL advisory locks, counts the failures and stores the
  attempt as failed; a right password turns the row into ``login_ok`` afterwards. So parallel
  attempts cannot all read the count before any of them writes it, and a process that dies
  mid-check leaves a failure, never a fresh budget. Redis plays no part: losing it neither resets nor lifts a limit.
* argon2 runs inside :func:`ladder.password_gate.slot` (at most a few 64 MiB computations per
  process; :class:`ladder.password_gate.PasswordCheckBusyError` when none comes free).
  Failed logins are logged (address and username, never the password).
* API tokens: ``ptk_`` + 43 URL-safe characters (256 bits), shown once; the
  database keeps the sha256 hex and the first 8 characters (to tell tokens
  apart in a list). Scopes: :data:`SCOPES`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg.errors
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder import password_gate
from ladder.db import connection
from ladder.errors import LadderError

log = logging.getLogger(__name__)

ROLES = ("participant", "organiser", "admin")
STATUSES = ("active", "pending", "disabled")
SCOPES = ("bot:manage", "tournament:create", "challenge")
"""Scopes of a personal API token: manage own bots; create tournaments (organisers); challenge bots."""

USERNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,31}$")
MIN_PASSWORD = 10
MAX_PASSWORD = 256

LOGIN_WINDOW_S = 900
LOGIN_FAILURES_PER_ACCOUNT = 5
LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS = 100
LOGIN_FAILURES_PER_ADDRESS = 20
SIGNUPS_PER_ADDRESS = 5
SIGNUP_WINDOW_S = 3600
TOKEN_PREFIX = "ptk_"

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash("parterre-timing-equaliser")


PasswordCheckBusyError = password_gate.PasswordCheckBusyError


class AccountError(LadderError, ValueError):
    """A username, password, role or scope is not acceptable; the message says why."""


class AccountExistsError(AccountError):
    """The username is taken (compared ignoring case)."""


class AccountNotFoundError(LadderError, LookupError):
    """No account has this id or username."""


class SignupClosedError(LadderError, PermissionError):
    """The operator closed sign-up (``PARTERRE_SIGNUP=closed``)."""


class RateLimitedError(LadderError, PermissionError):
    """Too many attempts; ``retry_after_s`` says when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Account:
    """An account (never carries the password or its hash).

    Attributes:
        id: ``accounts.id``.
        username: as signed up (case kept).
        role: ``participant`` / ``organiser`` / ``admin``.
        status: ``active`` / ``pending`` / ``disabled``.
        session_epoch: sessions signed with another epoch are void.
        created_at: sign-up time (UTC-aware).
    """

    id: int
    username: str
    role: str
    status: str
    session_epoch: int
    created_at: datetime

    @property
    def active(self) -> bool:
        return self.status == "active"


@dataclass(frozen=True, slots=True)
class ApiToken:
    """A personal API token as listed (the token itself is only returned by :func:`create_api_token`)."""

    id: int
    account_id: int
    prefix: str
    label: str
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


_COLUMNS = "id, username, role, status, session_epoch, created_at"


def _account(row: dict[str, Any]) -> Account:
    return Account(row["id"], row["username"], row["role"], row["status"], row["session_epoch"], row["created_at"])


def check_username(username: Any) -> str:
    """Return ``username`` if it matches :data:`USERNAME_RE`; raise :class:`AccountError` otherwise."""
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        raise AccountError(
            "a username is 2-32 characters: letters, digits, '_', '.', '-', starting with a letter or digit"
        )
    return username


def check_password(password: Any) -> str:
    """Return ``password`` if it is 10-256 characters; raise :class:`AccountError` otherwise (never echoing it)."""
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters")
    return password


def create_account(
    pool: ConnectionPool, username: str, password: str, *, role: str = "participant", status: str = "active"
) -> Account:
    """Create an account with an argon2id password hash.

    Sign-up calls this with the default role; only ``parterre admin create``
    and :func:`set_role` ever make an organiser or admin.

    Raises:
        AccountError: bad username, password, role or status.
        AccountExistsError: the username is taken (ignoring case).
    """
    check_username(username)
    check_password(password)
    if role not in ROLES or status not in STATUSES:
        raise AccountError(f"role must be one of {ROLES} and status one of {STATUSES}")
    digest = _hash(password)
    try:
        with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"INSERT INTO accounts (username, password_hash, role, status) VALUES (%s, %s, %s, %s) "
                f"RETURNING {_COLUMNS}",
                (username, digest, role, status),
            ).fetchone()
    except psycopg.errors.UniqueViolation:
        raise AccountExistsError(f"the username {username!r} is taken") from None
    assert row is not None
    return _account(row)


def get_account(pool: ConnectionPool, ref: int | str) -> Account | None:
    """The account with this id (``int``) or username (``str``, ignoring case), or ``None``."""
    where = "id = %s" if isinstance(ref, int) else "lower(username) = lower(%s)"
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_COLUMNS} FROM accounts WHERE {where}", (ref,)).fetchone()
    return _account(row) if row else None


def list_accounts(pool: ConnectionPool, *, status: str | None = None) -> list[Account]:
    """Every account (or those with ``status``), by id."""
    where, params = ("WHERE status = %s", (status,)) if status else ("", ())
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {_COLUMNS} FROM accounts {where} ORDER BY id", params).fetchall()
    return [_account(r) for r in rows]


def _update(pool: ConnectionPool, account_id: int, sql: str, params: Sequence[Any]) -> Account:
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"UPDATE accounts SET {sql} WHERE id = %s RETURNING {_COLUMNS}",
                          (*params, account_id)).fetchone()
    if row is None:
        raise AccountNotFoundError(f"no account {account_id}")
    return _account(row)


def set_role(pool: ConnectionPool, account_id: int, role: str) -> Account:
    """Give an account a role (admin action). Raises AccountError, AccountNotFoundError."""
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    return _update(pool, account_id, "role = %s", (role,))


def set_status(pool: ConnectionPool, account_id: int, status: str) -> Account:
    """Approve (``active``), hold (``pending``) or disable an account (admin action)."""
    if status not in STATUSES:
        raise AccountError(f"status must be one of {', '.join(STATUSES)}")
    return _update(pool, account_id, "status = %s, session_epoch = session_epoch + 1", (status,))


def end_sessions(pool: ConnectionPool, account_id: int) -> Account:
    """Void every web session of an account (epoch + 1): what logging out does.

    Sessions are signed cookies that hold the epoch; without this, a copy of the
    cookie kept from before "log out" would still work until it expires. Logging
    out therefore ends the account's sessions in every browser. API tokens are
    separate and stay valid until revoked.
    """
    return _update(pool, account_id, "session_epoch = session_epoch + 1", ())


def _hash(password: str) -> str:
    """An argon2id PHC string of ``password``, computed in a slot (:func:`ladder.password_gate.slot`)."""
    with password_gate.slot():
        return _hasher.hash(password)


def _verify(digest: str | None, password: str) -> bool:
    """Whether ``password`` matches the PHC string ``digest`` (None: checked against a dummy hash, so an
    unknown username costs the same time); computed in a slot. Raises PasswordCheckBusyError."""
    with password_gate.slot():
        try:
            return bool(_hasher.verify(digest or _DUMMY_HASH, password)) and digest is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError, TypeError):
            return False


def authenticate(pool: ConnectionPool, username: str, password: str) -> Account | None:
    """The account if ``password`` is right, else ``None`` (unknown user, wrong password, not active).

    Not rate-limited: the web goes through :func:`login`. An unknown username still costs one
    argon2 verification, so the answer time does not tell which usernames exist.

    Raises:
        PasswordCheckBusyError: no argon2 slot came free (nothing was checked).
    """
    row = None
    if isinstance(username, str) and USERNAME_RE.fullmatch(username):  # no account has another name
        with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"SELECT {_COLUMNS}, password_hash FROM accounts WHERE lower(username) = lower(%s)",
                (username,),
            ).fetchone()
    if not _verify(row["password_hash"] if row else None, password) or row is None:
        return None
    if _hasher.check_needs_rehash(row["password_hash"]):
        digest = _hash(password)
        with connection(pool) as conn:
            conn.execute("UPDATE accounts SET password_hash = %s WHERE id = %s", (digest, row["id"]))
    account = _account(row)
    return account if account.active else None


def change_password(pool: ConnectionPool, account_id: int, old: str, new: str, *, address: str) -> Account:
    """Change a password after checking the old one; every other session is logged out (epoch + 1).

    The check of the old password is a login attempt (S-10), reserved like one (:func:`login`): it is
    refused while the login budgets of this account from ``address`` are spent (shared with logins),
    and a wrong old password stays recorded and logged as a failed login; otherwise a stolen session
    would be an unlimited, silent password-guessing oracle.

    Raises:
        RateLimitedError: too many failures for this account or address (nothing is checked).
        PasswordCheckBusyError: no argon2 slot came free (nothing is checked or recorded).
        AccountError: the old password is wrong or the new one is not acceptable.
        AccountNotFoundError: no such account.
    """
    with connection(pool) as conn:
        row = conn.execute("SELECT password_hash, username FROM accounts WHERE id = %s", (account_id,)).fetchone()
    if row is None:
        raise AccountNotFoundError(f"no account {account_id}")
    check_password(new)
    if not _checked_attempt(pool, address, row[1], lambda: _verify(row[0], old),
                            what="password change (wrong current password)"):
        raise AccountError("the current password is wrong")
    return _update(pool, account_id,
                   "password_hash = %s, password_changed_at = now(), session_epoch = session_epoch + 1",
                   (_hash(new),))


# -- rate limits and the log of attempts -------------------------------------------------


def _counted_name(username: object) -> str:
    """The form of a tried username that attempts are stored and counted under: at most 64
    characters, without NUL (PostgreSQL text cannot hold it); "" for a non-string."""
    return username[:64].replace("\x00", "") if isinstance(username, str) else ""


def _log_failure(name: str, address: str, what: str) -> None:
    log.warning("failed %s for username %r from %s", what, name, address[:64],
                extra={"event": "login_failed", "address": address[:64]})


def _count(conn: Any, kind: str, window_s: int, *,
           username: str | None = None, address: str | None = None) -> tuple[int, float]:
    """Events of ``kind`` in the last ``window_s`` s matching the given username
    (ignoring case) and/or address: (count, seconds until the oldest leaves the window)."""
    where, args = [], []
    if username is not None:
        where.append("lower(username) = lower(%s)")
        args.append(username)
    if address is not None:
        where.append("address = %s")
        args.append(address)
    row = conn.execute(
        "SELECT count(*), coalesce(extract(epoch FROM min(at) + make_interval(secs => %s) - now()), 0) "
        f"FROM auth_events WHERE kind = %s AND {' AND '.join(where)} AND at > now() - make_interval(secs => %s)",
        (window_s, kind, *args, window_s),
    ).fetchone()
    assert row is not None
    return int(row[0]), float(row[1])


def _lock(conn: Any, *keys: str) -> None:
    """Transaction-scoped advisory locks on ``keys``, taken in the order given (every caller gives the
    username's key before the address's, so two attempts never wait on each other in a cycle)."""
    for key in keys:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


def _login_limits(conn: Any, name: str, addr: str) -> None:
    for filters, limit in (({"username": name, "address": addr}, LOGIN_FAILURES_PER_ACCOUNT),
                           ({"username": name}, LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS),
                           ({"address": addr}, LOGIN_FAILURES_PER_ADDRESS)):
        n, wait = _count(conn, "login_failed", LOGIN_WINDOW_S, **filters)
        if n >= limit:
            raise RateLimitedError(f"too many failed logins; try again in {int(wait) + 1} s", int(wait) + 1)


def reserve_login(pool: ConnectionPool, address: str, username: str) -> int:
    """Reserve one login attempt of ``username`` from ``address``: within one transaction, serialised per
    username (ignoring case) and per address, check the budgets (the module's rate limits) and store the
    attempt as ``login_failed``. Returns the ``auth_events`` id; :func:`settle_login` records the outcome.

    Raises:
        RateLimitedError: a budget is spent (nothing is stored).
    """
    name, addr = _counted_name(username), address[:64]
    with connection(pool) as conn, conn.transaction():
        _lock(conn, "parterre:login-user:" + name.lower(), "parterre:login-address:" + addr)
        _login_limits(conn, name, addr)
        row = conn.execute("INSERT INTO auth_events (kind, address, username) VALUES ('login_failed', %s, %s) "
                           "RETURNING id", (addr, name)).fetchone()
    assert row is not None
    return int(row[0])


def settle_login(pool: ConnectionPool, event_id: int, outcome: str) -> None:
    """Record how a reserved attempt ended: ``ok`` (the row becomes ``login_ok``), ``failed`` (it stays)
    or ``unchecked`` (nothing was checked, e.g. no argon2 slot: the row is removed)."""
    if outcome == "failed":
        return
    sql = ("UPDATE auth_events SET kind = 'login_ok' WHERE id = %s" if outcome == "ok"
           else "DELETE FROM auth_events WHERE id = %s")
    with connection(pool) as conn:
        conn.execute(sql, (event_id,))


def _checked_attempt(pool: ConnectionPool, address: str, username: str, check: Any, *, what: str) -> bool:
    """Reserve an attempt, run ``check()`` (True: right password), settle and log it; returns the check."""
    event = reserve_login(pool, address, username)
    try:
        ok = bool(check())
    except password_gate.PasswordCheckBusyError:
        settle_login(pool, event, "unchecked")
        raise
    settle_login(pool, event, "ok" if ok else "failed")
    if not ok:
        _log_failure(_counted_name(username), address, what)
    return ok


def _signup_limit(conn: Any, addr: str) -> None:
    n, wait = _count(conn, "signup", SIGNUP_WINDOW_S, address=addr)
    if n >= SIGNUPS_PER_ADDRESS:
        raise RateLimitedError(f"too many sign-ups from this address; try again in {int(wait) + 1} s",
                               int(wait) + 1)


def login(pool: ConnectionPool, username: str, password: str, *, address: str) -> Account | None:
    """Rate-limited :func:`authenticate` that records the attempt (the password is never logged).

    The attempt is reserved before the password is checked (:func:`reserve_login`), so parallel
    attempts check at most the budget's number of passwords.

    Raises:
        RateLimitedError: too many failures for this account or address (nothing is checked).
        PasswordCheckBusyError: no argon2 slot came free (nothing is checked or counted).
    """
    found: list[Account | None] = [None]

    def check() -> bool:
        found[0] = authenticate(pool, username, password)
        return found[0] is not None

    _checked_attempt(pool, address, username, check, what="login")
    return found[0]


def sign_up(pool: ConnectionPool, username: str, password: str, *, address: str, mode: str = "open") -> Account:
    """Sign up as a participant (never anything else), rate-limited per address.

    The sign-up is counted before the password is hashed, in one transaction serialised per address,
    so parallel sign-ups cannot all pass the count.

    Args:
        mode: the operator's ``PARTERRE_SIGNUP``: ``open``, ``approval``
            (the account is ``pending`` until an admin approves it) or ``closed``.

    Raises:
        SignupClosedError, RateLimitedError, AccountError, AccountExistsError, PasswordCheckBusyError.
    """
    if mode == "closed":
        raise SignupClosedError("sign-up is closed on this site")
    check_username(username)
    check_password(password)
    addr = address[:64]
    with connection(pool) as conn, conn.transaction():
        _lock(conn, "parterre:signup-address:" + addr)
        _signup_limit(conn, addr)
        row = conn.execute("INSERT INTO auth_events (kind, address, username) VALUES ('signup', %s, %s) "
                           "RETURNING id", (addr, _counted_name(username))).fetchone()
    assert row is not None
    try:
        return create_account(pool, username, password, status="pending" if mode == "approval" else "active")
    except password_gate.PasswordCheckBusyError:
        settle_login(pool, int(row[0]), "unchecked")  # nothing was made: the sign-up is not counted
        raise


# -- personal API tokens -----------------------------------------------------------


def api_token_hash(token: str) -> str:
    """sha256 hex of an API token (the stored form)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_scopes(scopes: Iterable[Any]) -> tuple[str, ...]:
    """Deduplicated, ordered scopes; raise :class:`AccountError` on an unknown or empty list."""
    got = list(scopes) if not isinstance(scopes, str) else [scopes]
    bad = [s for s in got if s not in SCOPES]
    if bad or not got:
        raise AccountError(f"scopes must be a non-empty list of {', '.join(SCOPES)}")
    return tuple(s for s in SCOPES if s in got)


def create_api_token(
    pool: ConnectionPool, account_id: int, scopes: Iterable[str], *, label: str = ""
) -> tuple[int, str]:
    """Create a personal API token; returns ``(token id, token)``. The token is shown once, never stored.

    Raises:
        AccountError: bad scopes or a label over 64 characters.
    """
    wanted = check_scopes(scopes)
    if not isinstance(label, str) or len(label) > 64 or not label.isprintable():
        raise AccountError("a token label is at most 64 printable characters")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with connection(pool) as conn:
        row = conn.execute(
            "INSERT INTO api_tokens (account_id, token_hash, prefix, label, scopes) VALUES (%s, %s, %s, %s, %s) "
            "RETURNING id",
            (account_id, api_token_hash(token), token[:8], label, list(wanted)),
        ).fetchone()
    assert row is not None
    return int(row[0]), token


def _token(row: dict[str, Any]) -> ApiToken:
    return ApiToken(row["id"], row["account_id"], row["prefix"], row["label"], tuple(row["scopes"]),
                    row["created_at"], row["last_used_at"], row["revoked_at"])


def list_api_tokens(pool: ConnectionPool, account_id: int) -> list[ApiToken]:
    """The account's tokens (revoked ones too), newest first."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute("SELECT * FROM api_tokens WHERE account_id = %s ORDER BY id DESC", (account_id,)).fetchall()
    return [_token(r) for r in rows]


def revoke_api_token(pool: ConnectionPool, account_id: int, token_id: int) -> bool:
    """Revoke one of the account's own tokens; False if it has no such (live) token."""
    with connection(pool) as conn:
        row = conn.execute(
            "UPDATE api_tokens SET revoked_at = now() WHERE id = %s AND account_id = %s AND revoked_at IS NULL "
            "RETURNING id", (token_id, account_id)).fetchone()
    return row is not None


def account_for_token(pool: ConnectionPool, token: str) -> tuple[Account, tuple[str, ...]] | None:
    """The active account and scopes of a live API token, or ``None`` (unknown, revoked, account not active)."""
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 100:
        return None
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "UPDATE api_tokens t SET last_used_at = now() FROM accounts a "
            "WHERE t.token_hash = %s AND t.revoked_at IS NULL AND a.id = t.account_id AND a.status = 'active' "
            "RETURNING a.id, a.username, a.role, a.status, a.session_epoch, a.created_at, t.scopes",
            (api_token_hash(token),),
        ).fetchone()
    if row is None:
        return None
    return _account(row), tuple(row["scopes"])
