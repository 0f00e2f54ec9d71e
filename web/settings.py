"""The web site's settings (docs/settings.md): one typed object, read from the environment.

:func:`settings` is what ``parterre web`` and the app read; a bad value is one clear error naming
the variable (:class:`proto.env_settings.SettingsError`, a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field, NonNegativeFloat, PositiveInt, field_validator

from ladder.challenges import DEFAULT_MAX_OPEN
from ladder.owned_bots import MAX_BOTS_PER_ACCOUNT
from proto.env_settings import EnvSettings, SettingsError
from web.live_hub import PER_CLIENT, TOTAL

__all__ = ["DEFAULT_PUBLIC_REFEREE", "SettingsError", "WebSettings", "settings"]

DEFAULT_PUBLIC_REFEREE = "127.0.0.1:50051"
"""The referee's own default address (``parterre referee``, ``parterre up``): right for a site on one machine."""


class WebSettings(EnvSettings):
    """What ``parterre web`` reads."""

    TITLE: ClassVar[str] = "web"

    home: str = Field("", alias="PARTERRE_HOME", description="data directory (the session secret's file)",
                      json_schema_extra={"default_doc": "`$XDG_DATA_HOME/parterre` or `~/.local/share/parterre`"})
    redis_url: str = Field("", alias="PARTERRE_REDIS_URL",
                           description="Redis: bot tokens published, live matches relayed (unset: neither)")
    session_secret: str = Field("", alias="PARTERRE_SESSION_SECRET",
                                description="signs session cookies; the same on every web replica",
                                json_schema_extra={"default_doc": "generated into `$PARTERRE_HOME/session-secret`"})
    signup: Literal["open", "approval", "closed"] = Field(
        "open", alias="PARTERRE_SIGNUP",
        description="`open`; `approval` (accounts wait for `parterre admin approve`); `closed`")
    secure_cookies: bool = Field(False, alias="PARTERRE_SECURE_COOKIES",
                                 description="`1` marks session cookies `Secure` (behind HTTPS)")
    max_open_challenges: PositiveInt = Field(DEFAULT_MAX_OPEN, alias="PARTERRE_MAX_OPEN_CHALLENGES",
                                             description="challenges one account may have pending or running")
    max_bots_per_account: PositiveInt = Field(MAX_BOTS_PER_ACCOUNT, alias="PARTERRE_MAX_BOTS_PER_ACCOUNT",
                                              description="bots one account may have, retired ones included")
    live_delay_s: NonNegativeFloat = Field(30.0, alias="PARTERRE_LIVE_DELAY",
                                           description="seconds before a live step is shown to spectators")
    live_max_per_address: PositiveInt = Field(PER_CLIENT, alias="PARTERRE_LIVE_MAX_PER_ADDRESS",
                                              description="live viewers from one address")
    live_max_viewers: PositiveInt = Field(TOTAL, alias="PARTERRE_LIVE_MAX_VIEWERS",
                                          description="live viewers of one web process")
    cluster_namespace: str = Field("parterre", alias="PARTERRE_CLUSTER_NAMESPACE",
                                   description="prefix of the cluster's Redis keys")
    web_max_connections: PositiveInt = Field(1000, alias="PARTERRE_WEB_MAX_CONNECTIONS",
                                             description="open connections beyond which a request is 503")
    trusted_proxies: str = Field("", alias="PARTERRE_TRUSTED_PROXIES",
                                 description="proxies whose `X-Forwarded-For` is honoured (`,`-separated, or `*`)")
    public_referee: str = Field(DEFAULT_PUBLIC_REFEREE, alias="PARTERRE_PUBLIC_REFEREE",
                                description="the referee's `host:port` as bots reach it: shown on the owner's bot "
                                            "pages with the connect command")

    @field_validator("public_referee")
    @classmethod
    def _host_port(cls, value: str) -> str:
        host, sep, port = value.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
            raise ValueError("expected host:port, e.g. play.example.org:50051")
        return value.strip()


def settings(env: Mapping[str, str] | None = None) -> WebSettings:
    """The web site's settings from ``env`` (default ``os.environ``), read once per environment.

    Raises:
        SettingsError: a variable has a bad value.
    """
    return WebSettings.load(env)
