"""The workers' and beat's settings (docs/settings.md): one typed object, read from the environment.

:func:`settings` is what the tasks read; the values are checked when the object is made, so a bad
value is one clear error naming the variable (:class:`proto.env_settings.SettingsError`).
Hosted bots' settings are :func:`workers.hosting.validation.hosted_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from proto.env_settings import EnvSettings, SettingsError

__all__ = ["SettingsError", "WorkerSettings", "settings"]


class WorkerSettings(EnvSettings):
    """What ``parterre worker`` and ``parterre beat`` read; durations in seconds unless named ``_ms``."""

    TITLE: ClassVar[str] = "worker"
    KEEP_EMPTY: ClassVar[frozenset[str]] = frozenset({"PARTERRE_LADDER_GAMES", "PARTERRE_REFEREE_ADDRESS"})

    database_url: str = Field("", alias="PARTERRE_DATABASE_URL", description="PostgreSQL of the ladder",
                              json_schema_extra={"default_doc": "set by `parterre worker`"})
    redis_url: str = Field("", alias="PARTERRE_REDIS_URL", description="Redis: broker, cluster directory, tokens",
                           json_schema_extra={"default_doc": "set by `parterre worker`"})
    referee_address: str = Field("127.0.0.1:50051", alias="PARTERRE_REFEREE_ADDRESS",
                                 description="referees' MatchControl addresses, separated by `,`")
    referee_discovery: bool = Field(True, alias="PARTERRE_REFEREE_DISCOVERY",
                                    description="`0`: use only the configured referees, not the cluster directory")
    service_token: str = Field("", alias="PARTERRE_SERVICE_TOKEN", description="token presented to MatchControl",
                               json_schema_extra={"default_doc": "set by `parterre worker`"})
    referee_tls_ca: str = Field("", alias="PARTERRE_REFEREE_TLS_CA",
                                description="CA file for MatchControl over TLS (unset: plaintext)")
    queue: str = Field("parterre", alias="PARTERRE_QUEUE", description="Celery queue")
    cluster_namespace: str = Field("parterre", alias="PARTERRE_CLUSTER_NAMESPACE",
                                   description="prefix of the cluster's Redis keys")
    match_attempts: PositiveInt = Field(3, alias="PARTERRE_MATCH_ATTEMPTS",
                                        description="attempts of a match that started before it is given up")
    no_show_timeout_ms: PositiveInt = Field(30000, alias="PARTERRE_NO_SHOW_TIMEOUT_MS",
                                            description="how long a match waits for its bots to connect")
    retry_delay_s: NonNegativeFloat = Field(5.0, alias="PARTERRE_RETRY_DELAY_S",
                                            description="delay before a failed attempt is tried again")
    lease_s: PositiveFloat = Field(60.0, alias="PARTERRE_LEASE_S",
                                   description="a claimed match's lease, renewed while it runs")
    referee_wait_s: NonNegativeFloat = Field(3600.0, alias="PARTERRE_REFEREE_WAIT_S",
                                             description="how long a match waits for a referee (0 = no limit)")
    referee_backoff_s: PositiveFloat = Field(1.0, alias="PARTERRE_REFEREE_BACKOFF_S",
                                             description="first backoff while no referee answers (doubling)")
    referee_backoff_max_s: PositiveFloat = Field(15.0, alias="PARTERRE_REFEREE_BACKOFF_MAX_S",
                                                 description="longest backoff while no referee answers")
    referee_silence_s: PositiveFloat = Field(30.0, alias="PARTERRE_REFEREE_SILENCE_S",
                                             description="a referee silent this long in a match is lost (it "
                                                         "sends an event at least every 10 s)")
    max_match_duration_s: PositiveInt = Field(1800, alias="PARTERRE_MAX_MATCH_DURATION_S",
                                              description="longest a match may run")
    visibility_timeout_s: PositiveInt | None = Field(None, alias="PARTERRE_VISIBILITY_TIMEOUT_S",
                                                     description="broker's redelivery timeout",
                                                     json_schema_extra={
                                                         "default_doc": "2 × `PARTERRE_MAX_MATCH_DURATION_S` + 600"})
    stale_planned_s: NonNegativeFloat = Field(300.0, alias="PARTERRE_STALE_PLANNED_S",
                                              description="a planned match older than this is queued again")
    reap_period_s: PositiveFloat = Field(15.0, alias="PARTERRE_REAP_PERIOD_S", description="beat: reaper period")
    worker_reap_s: NonNegativeFloat | None = Field(None, alias="PARTERRE_WORKER_REAP_S",
                                                   description="each worker's own reaper period (0 = off)",
                                                   json_schema_extra={"default_doc": "`PARTERRE_REAP_PERIOD_S`"})
    ladder_games: str | None = Field(None, alias="PARTERRE_LADDER_GAMES",
                                     description="ladder's game strings, separated by `;` (\"\" = none)",
                                     json_schema_extra={"default_doc": "every registered game, 2 players"})
    ladder_period_s: PositiveFloat = Field(10.0, alias="PARTERRE_LADDER_PERIOD_S",
                                           description="beat: one ladder round per period")
    ladder_max_pending: PositiveInt = Field(2, alias="PARTERRE_LADDER_MAX_PENDING",
                                            description="a bot with this many planned/running matches is not paired")
    ladder_time_control: str = Field("0:0:1000:100", alias="PARTERRE_LADDER_TIME_CONTROL",
                                     pattern=r"^\d+:\d+:\d+:\d+$",
                                     description="ladder's time control, base:increment:cap:margin (ms)")
    challenge_period_s: PositiveFloat = Field(1.0, alias="PARTERRE_CHALLENGE_PERIOD_S",
                                              description="beat: challenges' tick")
    tournament_period_s: PositiveFloat = Field(5.0, alias="PARTERRE_TOURNAMENT_PERIOD_S",
                                               description="beat: tournaments' tick")
    competition_period_s: PositiveFloat = Field(30.0, alias="PARTERRE_COMPETITION_PERIOD_S",
                                                description="beat: competitions' tick (one season round per "
                                                            "period; locks; final batches)")
    hosted_period_s: PositiveFloat = Field(10.0, alias="PARTERRE_HOSTED_PERIOD_S",
                                           description="beat: hosted bots' validation tick")
    tokens_period_s: PositiveFloat = Field(5.0, alias="PARTERRE_TOKENS_PERIOD_S",
                                           description="beat: bot tokens' republication tick")
    tokens_watch_s: NonNegativeFloat = Field(5.0, alias="PARTERRE_TOKENS_WATCH_S",
                                             description="longest wait of the token watch between checks (0 = off)")
    bt_delay_s: NonNegativeFloat = Field(5.0, alias="PARTERRE_BT_DELAY_S",
                                         description="delay between a finished match and the ratings it queues")
    hosted_referee_address: str = Field("", alias="PARTERRE_HOSTED_REFEREE_ADDRESS",
                                        description="bot endpoint hosted bots connect to (unset: discovered)")

    @property
    def referees(self) -> list[str]:
        """The configured MatchControl addresses, in order."""
        return [a.strip() for a in self.referee_address.split(",") if a.strip()]

    @property
    def visibility_timeout(self) -> int:
        """The broker's visibility timeout, seconds (``PARTERRE_VISIBILITY_TIMEOUT_S`` or its default)."""
        if self.visibility_timeout_s is not None:
            return self.visibility_timeout_s
        return 2 * self.max_match_duration_s + 600

    @property
    def worker_reap_period_s(self) -> float:
        """Each worker's reaper period, seconds; 0 = off."""
        return self.reap_period_s if self.worker_reap_s is None else self.worker_reap_s

    @property
    def ladder_time_control_ms(self) -> dict[str, int]:
        """``PARTERRE_LADDER_TIME_CONTROL`` as ``{"base_ms", "increment_ms", "cap_ms", "margin_ms"}``."""
        values = [int(x) for x in self.ladder_time_control.split(":")]
        return dict(zip(("base_ms", "increment_ms", "cap_ms", "margin_ms"), values, strict=True))


def settings(env: Mapping[str, str] | None = None) -> WorkerSettings:
    """The workers' settings from ``env`` (default ``os.environ``), read once per environment.

    Raises:
        SettingsError: a variable has a bad value.
    """
    return WorkerSettings.load(env)
