"""Settings, all read from the environment (DESIGN §8), with clear errors.

Every setting is an environment variable; command-line flags override them.

``PARTERRE_HOME``
    data directory of the embedded PostgreSQL and Redis, and logs;
    default ``$XDG_DATA_HOME/parterre`` or ``~/.local/share/parterre``.
``PARTERRE_DATABASE_URL``
    ``postgresql://...``; default: the embedded PostgreSQL in ``$PARTERRE_HOME/pg``.
``PARTERRE_REDIS_URL``
    ``redis://host:port/db`` or ``redis+socket:///path``; default: the embedded Redis in ``$PARTERRE_HOME/redis``.
``PARTERRE_REFEREE_ADDRESS``
    bot endpoint (``Referee.Connect``) and, unless set apart, ``MatchControl``; default ``127.0.0.1:50051``.
``PARTERRE_SERVICE_TOKEN``
    token workers present to ``MatchControl``; default: generated once into ``$PARTERRE_HOME/service-token``.
``PARTERRE_MATCH_ATTEMPTS``
    attempts before a match is given up (DESIGN §4); default ``3``.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


def default_home() -> Path:
    """The per-user data directory used when ``PARTERRE_HOME`` is unset."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "parterre"


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings. ``database_url``/``redis_url`` are ``None`` when the
    embedded default is to be used."""

    home: Path
    database_url: str | None
    redis_url: str | None
    referee_address: str
    service_token: str
    match_attempts: int


def _check_url(name: str, value: str, schemes: tuple[str, ...]) -> str:
    scheme = urlparse(value).scheme
    if scheme not in schemes:
        raise SettingsError(
            f"{name}={value!r}: expected a URL starting with {' or '.join(s + '://' for s in schemes)}"
        )
    return value


def check_address(name: str, value: str) -> str:
    """Check a ``host:port`` address.

    Raises:
        SettingsError: not of the form host:port with port 0..65535.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise SettingsError(f"{name}={value!r}: expected host:port, e.g. 127.0.0.1:50051")
    return value


def _positive_int(name: str, value: str) -> int:
    try:
        out = int(value)
    except ValueError:
        raise SettingsError(f"{name}={value!r}: expected a positive integer") from None
    if out < 1:
        raise SettingsError(f"{name}={value!r}: expected a positive integer")
    return out


def service_token_for(home: Path) -> str:
    """The service token stored in ``home``; created (mode 600) on first use."""
    return secret_for(home, "service-token")


def hosted_token_secret(home: Path) -> str:
    """The workers' secret for hosted bots' credentials (docs/hosted.md): ``PARTERRE_HOSTED_TOKEN_SECRET``,
    else the file ``home/hosted-token-secret`` (created on first use), so ``parterre up`` and a
    ``parterre worker`` started by hand on the same home derive the same credentials.

    Returns:
        The secret, or "" when the variable is unset and the home cannot hold the file (a read-only
        container): hosted bots are then validated but play no rated match (``workers.hosted`` logs it).
    """
    value = os.environ.get("PARTERRE_HOSTED_TOKEN_SECRET")
    if value:
        return value
    try:
        return secret_for(home, "hosted-token-secret")
    except OSError as exc:
        logging.getLogger(__name__).warning(
            "no PARTERRE_HOSTED_TOKEN_SECRET and cannot keep one in %s (%s): hosted bots play no rated match",
            home, exc)
        return ""


def secret_for(home: Path, name: str) -> str:
    """A secret kept in the file ``home/name`` (``secrets.token_urlsafe(32)``, mode 600), created on first use.

    Processes starting at once (``parterre demo``'s bots) agree on one secret: it is written to a
    file of its own and linked into place (``link`` fails when the name exists), so the name only
    ever holds a whole secret, and the process that loses the race reads the winner's.
    """
    path = home / name
    if path.exists():
        return path.read_text().strip()
    home.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = home / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(token)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return path.read_text().strip()
        except OSError:  # a file system without hard links: the name is created as before, then written
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(token)
    finally:
        tmp.unlink(missing_ok=True)
    return token


def load(env: dict[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default ``os.environ``).

    Raises:
        SettingsError: a variable has a bad value.
    """
    env = dict(os.environ if env is None else env)
    home = Path(env.get("PARTERRE_HOME") or default_home()).expanduser()
    db = env.get("PARTERRE_DATABASE_URL") or None
    if db is not None:
        _check_url("PARTERRE_DATABASE_URL", db, ("postgresql", "postgres"))
    redis_url = env.get("PARTERRE_REDIS_URL") or None
    if redis_url is not None:
        _check_url("PARTERRE_REDIS_URL", redis_url, ("redis", "rediss", "redis+socket", "unix"))
    referee = check_address(
        "PARTERRE_REFEREE_ADDRESS", env.get("PARTERRE_REFEREE_ADDRESS") or "127.0.0.1:50051"
    )
    attempts = _positive_int("PARTERRE_MATCH_ATTEMPTS", env.get("PARTERRE_MATCH_ATTEMPTS") or "3")
    token = env.get("PARTERRE_SERVICE_TOKEN") or service_token_for(home)
    return Settings(home, db, redis_url, referee, token, attempts)
