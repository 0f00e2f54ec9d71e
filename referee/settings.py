"""The referee package's own settings (docs/settings.md): the live feed's switches.

``parterre referee``'s other variables are :class:`parterre.settings.RefereeServerSettings`, passed
to :func:`referee.server.serve` as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from proto.env_settings import EnvSettings

__all__ = ["LiveSettings", "live_settings"]


class LiveSettings(EnvSettings):
    """The live feed of running matches (``referee/live.py``)."""

    TITLE: ClassVar[str] = "referee"

    live: bool = Field(True, alias="PARTERRE_LIVE", description="`0`: the referee publishes no live steps")
    live_redis_url: str = Field("", alias="PARTERRE_LIVE_REDIS_URL",
                                description="Redis the live steps go to when the referee is not given one",
                                json_schema_extra={"default_doc": "the cluster's Redis"})


def live_settings(env: Mapping[str, str] | None = None) -> LiveSettings:
    """The live feed's settings from ``env`` (default ``os.environ``), read once per environment.

    Raises:
        proto.env_settings.SettingsError: a variable has a bad value.
    """
    return LiveSettings.load(env)
