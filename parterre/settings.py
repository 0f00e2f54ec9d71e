"""Settings, all read from the environment (docs/settings.md), with clear errors.

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
    attempts before a match is given up (docs/architecture.md, "Exactly-once recording"); default ``3``.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlparse

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveInt

from proto.env_settings import EnvSettings, SettingsError, markdown_table

__all__ = ["CliSettings", "CommonSettings", "RefereeServerSettings", "Settings", "SettingsError", "load", "markdown"]


class CommonSettings(EnvSettings):
    """The variables every command reads (resolved by :func:`load`)."""

    TITLE: ClassVar[str] = "all"

    home: str = Field("", alias="PARTERRE_HOME", description="data directory: embedded PostgreSQL and Redis, logs",
                      json_schema_extra={"default_doc": "`$XDG_DATA_HOME/parterre` or `~/.local/share/parterre`"})
    database_url: str = Field("", alias="PARTERRE_DATABASE_URL", description="`postgresql://...`",
                              json_schema_extra={"default_doc": "embedded PostgreSQL in `$PARTERRE_HOME/pg`"})
    redis_url: str = Field("", alias="PARTERRE_REDIS_URL", description="`redis://host:port/db` or `redis+socket:///path`",
                           json_schema_extra={"default_doc": "embedded Redis in `$PARTERRE_HOME/redis`"})
    referee_address: str = Field("127.0.0.1:50051", alias="PARTERRE_REFEREE_ADDRESS",
                                 description="referee's bot endpoint (and MatchControl unless set apart); "
                                             "workers: several, separated by `,`")
    service_token: str = Field("", alias="PARTERRE_SERVICE_TOKEN", description="token workers present to MatchControl",
                               json_schema_extra={"default_doc": "generated into `$PARTERRE_HOME/service-token`"})
    match_attempts: PositiveInt = Field(3, alias="PARTERRE_MATCH_ATTEMPTS",
                                        description="attempts of a match that started before it is given up")


class RefereeServerSettings(EnvSettings):
    """What ``parterre referee`` reads besides :class:`CommonSettings`; command-line flags override."""

    TITLE: ClassVar[str] = "referee"

    control_address: str = Field("", alias="PARTERRE_REFEREE_CONTROL_ADDRESS",
                                 description="MatchControl's own host:port (unset: on the bot endpoint)")
    advertise_address: str = Field("", alias="PARTERRE_REFEREE_ADVERTISE_ADDRESS",
                                   description="bot endpoint published in the cluster directory (unset: the bound one)")
    advertise_control_address: str = Field("", alias="PARTERRE_REFEREE_ADVERTISE_CONTROL_ADDRESS",
                                           description="MatchControl address published in the cluster directory")
    tls_cert: str = Field("", alias="PARTERRE_TLS_CERT", description="certificate file: the bot endpoint over TLS")
    tls_key: str = Field("", alias="PARTERRE_TLS_KEY", description="key file of `PARTERRE_TLS_CERT`")
    cluster_namespace: str = Field("parterre", alias="PARTERRE_CLUSTER_NAMESPACE",
                                   description="prefix of the cluster's Redis keys")
    bind_retry_s: NonNegativeFloat = Field(90.0, alias="PARTERRE_BIND_RETRY_S",
                                           description="how long to keep trying to bind a port in use")
    max_declared_concurrency: PositiveInt | None = Field(
        None, alias="PARTERRE_MAX_DECLARED_CONCURRENCY", description="most matches one bot may declare at once",
        json_schema_extra={"default_doc": "`referee.core.RefereeSettings`"})
    max_streams_per_bot: NonNegativeInt | None = Field(
        None, alias="PARTERRE_MAX_STREAMS_PER_BOT", description="streams one bot may hold (0 = no limit)",
        json_schema_extra={"default_doc": "`referee.core.RefereeSettings`"})
    max_messages_per_s: NonNegativeInt | None = Field(
        None, alias="PARTERRE_MAX_MESSAGES_PER_S", description="messages per second one stream may send (0 = no limit)",
        json_schema_extra={"default_doc": "`referee.core.RefereeSettings`"})


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


def service_token_for(home: Path) -> str:
    """The service token stored in ``home``; created (mode 600) on first use."""
    return secret_for(home, "service-token")


def hosted_token_secret(home: Path) -> str:
    """The workers' secret for hosted bots' credentials (docs/hosted.md): ``PARTERRE_HOSTED_TOKEN_SECRET``,
    else the file ``home/hosted-token-secret`` (created on first use), so ``parterre up`` and a
    ``parterre worker`` started by hand on the same home derive the same credentials.

    Returns:
        The secret, or "" when the variable is unset and the home cannot hold the file (a read-only
        container): hosted bots are then validated but play no rated match (``workers.hosting.validation`` logs it).
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


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default ``os.environ``).

    Raises:
        SettingsError: a variable has a bad value.
    """
    raw = CommonSettings.load(env)
    home = Path(raw.home or default_home()).expanduser()
    db = raw.database_url or None
    if db is not None:
        _check_url("PARTERRE_DATABASE_URL", db, ("postgresql", "postgres"))
    redis_url = raw.redis_url or None
    if redis_url is not None:
        _check_url("PARTERRE_REDIS_URL", redis_url, ("redis", "rediss", "redis+socket", "unix"))
    referee = check_address("PARTERRE_REFEREE_ADDRESS", raw.referee_address)
    token = raw.service_token or service_token_for(home)
    return Settings(home, db, redis_url, referee, token, raw.match_attempts)


class CliSettings(EnvSettings):
    """What the participant's and operator's commands read; command-line flags override."""

    TITLE: ClassVar[str] = "cli"

    url: str = Field("http://127.0.0.1:8000", alias="PARTERRE_URL",
                     description="`parterre remote`, `bot upload`: the site")
    api_token: str = Field("", alias="PARTERRE_API_TOKEN",
                           description="`parterre remote`, `bot upload`: a personal API token")
    password: str = Field("", alias="PARTERRE_PASSWORD",
                          description="`remote signup`/`remote token`: the password (unset: asked)")
    admin_password: str = Field("", alias="PARTERRE_ADMIN_PASSWORD",
                                description="`admin create`: the password (unset: asked)")
    bot_token: str = Field("", alias="PARTERRE_BOT_TOKEN", description="`parterre bot`/`connect`: the bot's token")
    log_format: str = Field("json", alias="PARTERRE_LOG_FORMAT", description="`json` or `text` log lines")
    log_level: str = Field("INFO", alias="PARTERRE_LOG_LEVEL", description="root log level")


def cli_settings(env: Mapping[str, str] | None = None) -> CliSettings:
    """The commands' own settings from ``env`` (default ``os.environ``), read once per environment.

    Raises:
        SettingsError: a variable has a bad value.
    """
    return CliSettings.load(env)


def referee_settings(env: Mapping[str, str] | None = None) -> RefereeServerSettings:
    """``parterre referee``'s settings from ``env`` (default ``os.environ``), read once per environment.

    Raises:
        SettingsError: a variable has a bad value.
    """
    return RefereeServerSettings.load(env)


def markdown() -> str:
    """The table of every component's settings (docs/settings.md), rendered from their declarations."""
    from referee.settings import LiveSettings
    from web.settings import WebSettings
    from workers.settings import WorkerSettings

    return markdown_table([CommonSettings, RefereeServerSettings, LiveSettings, WorkerSettings, WebSettings,
                           CliSettings])


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m parterre.settings --markdown")
    sys.stdout.write(markdown())
