"""Who is asking: signed session cookies for pages, Bearer/Basic for the API, CSRF, settings (docs/participants.md).

* **Pages** use a session cookie ``parterre_session`` signed by Starlette's
  ``SessionMiddleware`` (itsdangerous, HMAC-SHA1 over the JSON payload; HttpOnly
  and SameSite=Lax always; Secure when ``PARTERRE_SECURE_COOKIES=1``; 14 days).
  It holds the account id, the account's ``session_epoch`` (a password change
  or a status change voids older sessions) and the CSRF token.
* **CSRF**: every form carries a hidden ``csrf`` field equal to the session's
  token (a per-session random value, compared in constant time); a POST
  without it is refused with 403. Cookies never authenticate the API, so the
  API needs no CSRF token.
* **API**: ``Authorization: Bearer <personal API token>`` (:func:`bearer`); only
  ``POST /api/tokens`` takes HTTP Basic (username and password, rate-limited
  like the login form).

Routes take who is asking as a FastAPI dependency: ``account: SessionAccount`` (a page:
the logged-in account, else a redirect to the login page), ``caller: ApiCaller`` (the API:
any live token) or a scoped caller (:data:`BotManager`, :data:`Challenger`,
:data:`TournamentCreator`: 403 without the scope).

Settings (environment; see README "Settings"): ``PARTERRE_SESSION_SECRET``
(default: generated once into ``$PARTERRE_HOME/session-secret``, mode 600),
``PARTERRE_SIGNUP`` (``open`` / ``approval`` / ``closed``),
``PARTERRE_SECURE_COOKIES``, ``PARTERRE_REDIS_URL`` (where new bot-token
hashes are published for the referee).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request

from ladder import accounts as acc
from ladder.bots import TOKENS_KEY
from ladder.challenges import DEFAULT_MAX_OPEN
from ladder.owned_bots import MAX_BOTS_PER_ACCOUNT
from web.deps import app_pool
from web.settings import DEFAULT_PUBLIC_REFEREE
from web.settings import settings as web_settings

SESSION_COOKIE = "parterre_session"
SIGNUP_MODES = ("open", "approval", "closed")


def _home() -> Path:
    home = web_settings().home
    if home:
        return Path(home).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "parterre"


def session_secret(env: dict[str, str] | None = None) -> str:
    """``PARTERRE_SESSION_SECRET``, or the secret in ``$PARTERRE_HOME/session-secret`` (created, mode 600)."""
    cfg = web_settings(env)
    if cfg.session_secret:
        return cfg.session_secret
    path = _home() / "session-secret"
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(secret)
    return secret


@dataclass
class ParticipantConfig:
    """What the participant routes need beyond the pool (``app.state.participants``).

    Attributes:
        signup: ``open``, ``approval`` (accounts wait for an admin) or ``closed``.
        redis: redis-py client where bot-token hashes are published (None: not published,
            the referee then learns them only from ``parterre bot publish``-style resyncs).
        tokens_key: the Redis hash the referee reads (``ladder.bots.TOKENS_KEY``).
        max_open_challenges: most challenges one account may have waiting, planned or running
            (``PARTERRE_MAX_OPEN_CHALLENGES``, default 2; S-22).
        max_bots: most bots one account may have, retired ones included
            (``PARTERRE_MAX_BOTS_PER_ACCOUNT``, default :data:`ladder.owned_bots.MAX_BOTS_PER_ACCOUNT`).
        public_referee: the referee's ``host:port`` as bots reach it, shown on the owner's bot pages with
            the connect command (``PARTERRE_PUBLIC_REFEREE``).
    """

    signup: str = "open"
    redis: Any = None
    tokens_key: str = TOKENS_KEY
    secure_cookies: bool = False
    max_open_challenges: int = DEFAULT_MAX_OPEN
    max_bots: int = MAX_BOTS_PER_ACCOUNT
    public_referee: str = DEFAULT_PUBLIC_REFEREE
    extra: dict[str, Any] = field(default_factory=dict)


def config_from_env(env: dict[str, str] | None = None) -> ParticipantConfig:
    """Read ``PARTERRE_SIGNUP``, ``PARTERRE_SECURE_COOKIES``, ``PARTERRE_REDIS_URL``,
    ``PARTERRE_MAX_OPEN_CHALLENGES``, ``PARTERRE_MAX_BOTS_PER_ACCOUNT``, ``PARTERRE_PUBLIC_REFEREE``.

    Raises:
        ValueError: ``PARTERRE_SIGNUP`` is not open/approval/closed,
            ``PARTERRE_MAX_OPEN_CHALLENGES`` / ``PARTERRE_MAX_BOTS_PER_ACCOUNT`` is not a whole number >= 1,
            or ``PARTERRE_PUBLIC_REFEREE`` is not ``host:port``.
    """
    cfg = web_settings(env)
    redis_client = None
    url = cfg.redis_url
    if url:
        import redis

        if url.startswith("redis+socket://"):
            url = "unix://" + url[len("redis+socket://"):]
        redis_client = redis.Redis.from_url(url)
    return ParticipantConfig(signup=cfg.signup, redis=redis_client, secure_cookies=cfg.secure_cookies,
                             max_open_challenges=cfg.max_open_challenges, max_bots=cfg.max_bots_per_account,
                             public_referee=cfg.public_referee)


def config(request: Request) -> ParticipantConfig:
    cfg: ParticipantConfig = request.app.state.participants
    return cfg


def client_address(request: Request) -> str:
    """The peer address that rate limits count by (and logs name): an IPv4 address as it is, an IPv6
    address as its /64 network (``"2001:db8:1:2::/64"``; one subscriber is routinely given a whole /64,
    so counting single IPv6 addresses would give an attacker 2**64 fresh budgets, RFC 6177 §2), an
    IPv4-mapped IPv6 address as the IPv4 one; ``"unknown"`` without a peer, anything unparsable as it is."""
    host = request.client.host if request.client else "unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


# -- pages: the session --------------------------------------------------------------


def csrf_token(request: Request) -> str:
    """This session's CSRF token (created on first use)."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, form: Any) -> None:
    """Raise 403 unless the form's ``csrf`` field equals the session's token."""
    sent = form.get("csrf") if form is not None else None
    expected = request.session.get("csrf")
    if not isinstance(sent, str) or not isinstance(expected, str) or not secrets.compare_digest(sent, expected):
        raise HTTPException(403, "the form's CSRF token is missing or wrong; reload the page and try again")


def session_account(request: Request) -> acc.Account | None:
    """The logged-in, active account of this session, or None (an old epoch or a disabled account logs out)."""
    aid = request.session.get("aid")
    if not isinstance(aid, int):
        return None
    account = acc.get_account(app_pool(request), aid)
    if account is None or not account.active or account.session_epoch != request.session.get("ep"):
        request.session.pop("aid", None)
        return None
    return account


def login_session(request: Request, account: acc.Account) -> None:
    """Start a fresh session for ``account`` (a new CSRF token too: no session fixation)."""
    request.session.clear()
    request.session.update({"aid": account.id, "ep": account.session_epoch, "csrf": secrets.token_urlsafe(32)})


def require_session(request: Request) -> acc.Account:
    """The logged-in account, or a redirect to the login page (303)."""
    account = session_account(request)
    if account is None:
        raise HTTPException(303, "log in first", headers={"Location": "/login"})
    return account


SessionAccount = Annotated[acc.Account, Depends(require_session)]
"""A page route's parameter: the logged-in account (:func:`require_session`)."""


# -- the API: Bearer and Basic ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """An API caller: the account and the scopes of the token it presented."""

    account: acc.Account
    scopes: tuple[str, ...]

    def need(self, scope: str) -> None:
        if scope not in self.scopes:
            raise HTTPException(403, f"this token lacks the scope {scope!r}")


_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="parterre"'}


def bearer(request: Request, scope: str | None = None) -> Caller:
    """The caller of an API request from ``Authorization: Bearer``; 401 without a live token, 403 without ``scope``."""
    header = request.headers.get("authorization", "")
    kind, _, token = header.partition(" ")
    if kind.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "send a personal API token: Authorization: Bearer <token>", headers=_UNAUTHORIZED)
    found = acc.account_for_token(app_pool(request), token.strip())
    if found is None:
        raise HTTPException(401, "the API token is unknown or revoked", headers=_UNAUTHORIZED)
    caller = Caller(*found)
    if scope is not None:
        caller.need(scope)
    return caller


def api_caller(scope: str | None = None) -> Callable[[Request], Caller]:
    """A FastAPI dependency: the caller of an API request (:func:`bearer`), with ``scope`` when given."""

    def caller(request: Request) -> Caller:
        return bearer(request, scope)

    return caller


ApiCaller = Annotated[Caller, Depends(api_caller())]
"""An API route's parameter: the caller of any live token."""
BotManager = Annotated[Caller, Depends(api_caller("bot:manage"))]
"""An API route's parameter: the caller of a token with the scope ``bot:manage``."""
Challenger = Annotated[Caller, Depends(api_caller("challenge"))]
"""An API route's parameter: the caller of a token with the scope ``challenge``."""
TournamentCreator = Annotated[Caller, Depends(api_caller("tournament:create"))]
"""An API route's parameter: the caller of a token with the scope ``tournament:create``."""


def basic(request: Request) -> acc.Account:
    """The account from HTTP Basic credentials (rate-limited and logged like the login form).

    Raises:
        HTTPException: 401 wrong or missing credentials, 429 too many failures.
    """
    header = request.headers.get("authorization", "")
    kind, _, value = header.partition(" ")
    challenge = {"WWW-Authenticate": 'Basic realm="parterre"'}
    try:
        username, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        sep = ""
    if kind.lower() != "basic" or not sep:
        raise HTTPException(401, "send your username and password with HTTP Basic", headers=challenge)
    try:
        account = acc.login(app_pool(request), username, password, address=client_address(request))
    except acc.RateLimitedError as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(exc.retry_after_s)}) from None
    if account is None:
        raise HTTPException(401, "wrong username or password, or the account is not active", headers=challenge)
    return account
