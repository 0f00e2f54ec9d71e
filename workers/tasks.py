"""Celery tasks: planning, running one match, the reaper; the periodic ticks are in
:mod:`workers.periodic`.

Tasks take ids, never objects, and are idempotent: PostgreSQL's claim (status
and attempt number) decides whether a delivery does anything (docs/faults.md F-11).

Leases (docs/faults.md F-10, F-13, F-14): a claim lasts ``PARTERRE_LEASE_S`` (60 s);
the worker renews it on the referee's events while the match runs (the
referee sends one at least every 10 s), so only a *lost* worker's lease runs
out. The reaper (``parterre.reap``, scheduled by ``parterre beat``, and run
by every worker node itself every ``PARTERRE_WORKER_REAP_S``) ends
attempts whose lease ran out or that run past the longest match, and queues
the matches again. A worker names its claims ``<node name>#<pool process>``;
when it starts again under the same node name it ends its old attempts at
once instead of waiting for their leases (:func:`requeue_own_attempts`).

No referee reachable (docs/faults.md F-08 (b), F-22): when every referee answers the
``RunMatch`` call with ``UNAVAILABLE`` before the match started
(:class:`~workers.referee_client.RefereeUnavailableError`), that claim is
not an attempt: it is given back (:func:`ladder.referee_wait.release_unstarted`)
and the match is queued again after an exponential backoff with jitter
(:func:`referee_backoff_s`: ``PARTERRE_REFEREE_BACKOFF_S`` doubling per try up to
``PARTERRE_REFEREE_BACKOFF_MAX_S``, times a random factor in [0.5, 1]),
until a referee answers or ``PARTERRE_REFEREE_WAIT_S`` has passed since the
first try (then the match is ``failed``). Only attempts that started count
towards ``PARTERRE_MATCH_ATTEMPTS``.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from celery.signals import celeryd_init, worker_process_init, worker_ready
from psycopg_pool import ConnectionPool

from ladder import db as ladder_db
from ladder import matches as ladder_matches
from ladder import referee_wait
from ladder import tournaments as ladder_tournaments
from ladder.errors import DatabaseUnavailableError
from workers import directory
from workers import metrics as worker_metrics
from workers.app import MAX_MATCH_DURATION_S, app
from workers.hosting import seats as hosted_seats
from workers.hosting import validation as hosted
from workers.hosting.run_dirs import sweep_runs
from workers.hosting.validation import SandboxCapacityError
from workers.referee_client import InfraError, LeaseLostError, RefereeUnavailableError
from workers.referee_client import run_match as referee_run_match
from workers.settings import WorkerSettings
from workers.settings import settings as worker_settings

log = logging.getLogger(__name__)

_pool: ConnectionPool | None = None
_node: str = ""
"""Celery node name of this worker (``celeryd_init``), inherited by pool processes."""
_slot: str = ""
"""This pool process's slot in the node (``#0``, ``#1``...), set in the child."""


def get_pool() -> ConnectionPool:
    """The process's PostgreSQL connection pool (created on first use, after fork)."""
    global _pool
    if _pool is None:
        url = worker_settings().database_url
        if not url:
            raise RuntimeError("PARTERRE_DATABASE_URL is not set for the worker")
        _pool = ladder_db.make_pool(url, min_size=1, max_size=4)
    return _pool


def _worker_name() -> str:
    """The name claims are made under: ``node#slot`` in a Celery worker, else ``host:pid``."""
    if _node:
        if _slot:
            return f"{_node}#{_slot}"
        return f"{_node}#{threading.current_thread().name}"
    return f"{socket.gethostname()}:{os.getpid()}"


@celeryd_init.connect
def _remember_node(sender: Any = None, **_: Any) -> None:
    global _node
    _node = str(sender or "")


@worker_process_init.connect
def _child_started(sender: Any = None, **_: Any) -> None:
    # A pool inherited through fork shares sockets with the parent: start afresh.
    global _pool, _node, _slot
    _pool = None
    if sender:
        _node = str(sender)
    try:
        from billiard.process import current_process

        index = getattr(current_process(), "index", None)
    except Exception:
        index = None
    _slot = str(index) if index is not None else str(os.getpid())
    if index is not None:
        # A replacement for a pool process that died (SIGKILL, OOM): its attempt is
        # dead; end it now rather than after its lease (docs/faults.md F-13).
        requeue_own_attempts(f"{_node}#{_slot}", prefix=False)


@worker_ready.connect
def _node_ready(sender: Any = None, **_: Any) -> None:
    node = getattr(sender, "hostname", "") or _node
    if node:
        requeue_own_attempts(f"{node}#", prefix=True)
    sweep_hosted_runs()
    hosted.sandbox_refusal()  # logged as an error when this worker cannot hold the sandbox's limits
    start_worker_reaper()
    from workers.token_cache import start_token_watch

    start_token_watch()  # Redis may have come back empty: its first check publishes the tokens again


def sweep_hosted_runs() -> list[str]:
    """Remove the hosted run folders that dead workers left (``workers.hosting.run_dirs.sweep_runs``; never one a
    live run holds). Run at a worker's start and by its reaper; returns the names removed."""
    try:
        return sweep_runs(hosted.hosted_settings()["dir"] / "run")
    except Exception as exc:  # never keep a worker from starting
        log.warning("could not sweep the hosted run folders: %s", exc)
        return []


def requeue_own_attempts(name: str, *, prefix: bool) -> dict[int, str]:
    """End the running attempts claimed under ``name`` (a worker coming back) and queue them again.

    Args:
        name: a claim name, or a node prefix ``node#`` when ``prefix``.
        prefix: match every claim name starting with ``name``.

    Returns:
        ``{match_id: new status}``; empty (logged) when the database is unreachable.
    """
    try:
        cfg = _settings()
        changed = ladder_matches.requeue_worker(get_pool(), name, max_attempts=cfg.match_attempts, prefix=prefix)
    except Exception as exc:  # never keep a worker from starting
        log.warning("could not requeue the attempts of %s: %s", name, exc)
        return {}
    for match_id, status in changed.items():
        if status == "planned":
            run_match.delay(match_id)
    if changed:
        log.warning("worker %s came back: attempts of matches %s marked infra_error and requeued", name,
                    sorted(changed))
    return changed


def _settings() -> WorkerSettings:
    return worker_settings()


def referee_backoff_s(tries: int, base_s: float, max_s: float, rng: random.Random | None = None) -> float:
    """Seconds before the next try of a match that found no referee ``tries`` times in a row.

    Exponential with jitter: ``min(max_s, base_s * 2 ** (tries - 1))`` times a
    uniform factor in [0.5, 1] (so matches queued together spread out instead
    of hitting a referee that comes back all at once).
    """
    ceiling = min(max_s, base_s * 2 ** min(max(tries - 1, 0), 30))
    return float(ceiling * (rng or random).uniform(0.5, 1.0))


def _referee_addresses(cfg: WorkerSettings, seat_bot_ids: list[int],
                       referees: list[directory.RefereeInfo] | None = None) -> list[str]:
    """Referees to try for a match: discovered ones (best first) then the configured ones."""
    if referees is None:
        referees = _discovered(cfg)
    return directory.choose_referees(cfg.referees, referees, seat_bot_ids)


def _discovered(cfg: WorkerSettings) -> list[directory.RefereeInfo]:
    if cfg.referee_discovery and cfg.redis_url:
        return directory.read_referees(cfg.redis_url)
    return []


@app.task(name="parterre.plan_tournament")
def plan_tournament(tournament_id: int) -> int:
    """Plan every match of a tournament in its format (idempotent) and queue them.

    Round-robin, gauntlet or duplicate (:func:`ladder.tournaments.plan_tournament`).
    Queuing a match that is already running or finished is harmless (docs/faults.md F-11).

    Returns:
        The number of matches queued (all the tournament's matches).
    """
    pool = get_pool()
    match_ids = ladder_tournaments.plan_tournament(pool, tournament_id)
    for match_id in match_ids:
        run_match.delay(match_id)
    return len(match_ids)


@app.task(name="parterre.plan_round_robin")
def plan_round_robin(tournament_id: int) -> int:
    """The former name of :func:`plan_tournament` (messages already queued under it still work)."""
    return int(plan_tournament(tournament_id))


class _LeaseKeeper:
    """Renews the claim on each referee event, at most every ``lease_s / 4`` seconds."""

    def __init__(self, pool: ConnectionPool, spec: Any, lease_s: float) -> None:
        self.pool, self.spec, self.lease_s = pool, spec, lease_s
        self.last = time.monotonic()
        self.renewals = 0

    def __call__(self, event: Any) -> bool:
        now = time.monotonic()
        if now - self.last < self.lease_s / 4:
            return True
        self.last = now
        try:
            ok = ladder_matches.extend_lease(self.pool, self.spec.match_id, self.spec.attempt, self.lease_s)
        except DatabaseUnavailableError as exc:
            log.warning("match %s: cannot extend the lease (database unavailable): %s", self.spec.match_id, exc)
            # keep playing, and renew as soon as the database is back (2 s on, not a quarter lease): the
            # reaper gives a claim a whole lease of reachable database time after an outage
            self.last = now - self.lease_s / 4 + min(2.0, self.lease_s / 4)
            return True  # the result is recorded if the claim still holds then
        self.renewals += ok
        if not ok:
            log.warning("match %s attempt %s: claim taken over; stopping", self.spec.match_id, self.spec.attempt)
        return ok


@app.task(name="parterre.run_match", bind=True, max_retries=20)
def run_match(self: Any, match_id: int) -> str:
    """Claim match ``match_id``, have a referee play it, record the result once.

    Returns:
        What happened: ``skipped`` (already claimed or done), ``finished``,
        ``requeued`` (infra error or no-show, a new attempt is queued),
        ``waiting_for_referee`` (no referee reachable: not an attempt, queued again after a backoff),
        ``superseded`` (the claim was taken over while it ran) or the final
        status when attempts are used up.

    Raises:
        celery.exceptions.Retry: the database is unreachable; retried with backoff.
    """
    try:
        return _run_match(match_id)
    except DatabaseUnavailableError as exc:
        delay = min(30.0, 1.0 * 2 ** min(self.request.retries, 5)) * random.uniform(0.8, 1.2)
        log.warning("match %s: database unavailable, retrying in %.1f s: %s", match_id, delay, exc)
        raise self.retry(countdown=delay, exc=exc) from None


QUEUE_BATCH = 1000
"""Messages per Redis pipeline in :func:`queue_matches`."""


def queue_matches(match_ids: Sequence[int]) -> None:
    """Queue :func:`run_match` for each of ``match_ids``, in one batch on the broker (kombu's Redis pipeline).

    One ``run_match.delay`` is a round trip to Redis each (0.4 to 1.2 ms on a loaded two-core machine:
    seconds for a ladder round of 10^4 online bots, docs/benchmarks.md); here the messages go in
    pipelines of :data:`QUEUE_BATCH`. A batch that fails is not retried (its delivery is uncertain): the
    matches stay planned and the reaper queues them again (docs/architecture.md "Exactly-once recording").
    """
    if not match_ids:
        return
    with app.producer_or_acquire() as producer, producer.batch(max_size=QUEUE_BATCH):
        for match_id in match_ids:
            run_match.apply_async((match_id,), producer=producer)



def _run_match(match_id: int) -> str:
    cfg = _settings()
    pool = get_pool()
    spec = ladder_matches.claim_match(pool, match_id, _worker_name(), lease_s=cfg.lease_s,
                                      max_attempts=cfg.match_attempts)
    if spec is None:
        return "skipped"
    ctx = {"match_id": match_id, "attempt": spec.attempt}
    log.info("match %s attempt %s: running", match_id, spec.attempt, extra=ctx)
    keeper = _LeaseKeeper(pool, spec, cfg.lease_s)
    tls_ca = None
    if cfg.referee_tls_ca:
        with open(cfg.referee_tls_ca, "rb") as fh:
            tls_ca = fh.read()
    referees = _discovered(cfg)
    addresses = _referee_addresses(cfg, list(spec.seat_bot_ids), referees)
    # Hosted bots seated here are started in their sandboxes for this attempt, and stopped only after
    # the result is recorded (their drain may outlast the lease; docs/hosted.md).
    seats = hosted_seats.seats_for_match(pool, list(spec.seat_bot_ids), match_id=spec.match_id,
                                          attempt=spec.attempt, control_addresses=addresses, referees=referees,
                                          drain_s=MAX_MATCH_DURATION_S + 30.0)
    try:
        with seats:
            return _play_and_record(pool, cfg, spec, addresses, keeper, tls_ca)
    except SandboxCapacityError as exc:
        log.warning("match %s attempt %s: %s", match_id, spec.attempt, exc, extra=ctx)
        worker_metrics.MATCH_ATTEMPTS.labels("infra_error").inc()
        return _retry(pool, spec, "infra_error", str(exc), cfg)


def _play_and_record(pool: ConnectionPool, cfg: WorkerSettings, spec: Any, addresses: list[str], keeper: _LeaseKeeper,
                     tls_ca: bytes | None) -> str:
    match_id = spec.match_id
    ctx = {"match_id": match_id, "attempt": spec.attempt}
    try:
        outcome = _run_on_referee(cfg, spec, addresses, keeper, tls_ca)
    except LeaseLostError:
        worker_metrics.MATCH_ATTEMPTS.labels("superseded").inc()
        return "superseded"
    except RefereeUnavailableError as exc:
        return _wait_for_referee(pool, spec, str(exc), cfg)
    except InfraError as exc:
        log.warning("match %s attempt %s: infra error: %s", match_id, spec.attempt, exc, extra=ctx)
        worker_metrics.MATCH_ATTEMPTS.labels("infra_error").inc()
        return _retry(pool, spec, "infra_error", str(exc), cfg)
    worker_metrics.MATCH_ATTEMPTS.labels(outcome.status).inc()
    if outcome.status != "finished":
        return _retry(pool, spec, outcome.status, outcome.error_text(), cfg)
    return _record(pool, spec, outcome, ctx)


RECORD_WAIT_S = 120.0
"""How long a worker holding a result tries to record it while the database is unreachable."""


def _record(pool: ConnectionPool, spec: Any, outcome: Any, ctx: dict[str, Any],
            sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> str:
    """Record a finished attempt's result, trying again while the database is unreachable: at most 2 s
    apart, so that the first try after an outage comes well within the whole lease of reachable time the
    reaper gives a claim (docs/faults.md D-02); the result arrived, so no referee event renews the lease
    meanwhile. Past :data:`RECORD_WAIT_S` the lease runs out and the reaper plays the match again."""
    deadline, delay = clock() + RECORD_WAIT_S, 0.5
    while True:
        try:
            recorded = ladder_matches.record_result(pool, spec.match_id, spec.attempt, outcome.as_result())
            return "finished" if recorded else "skipped"
        except DatabaseUnavailableError as exc:
            log.warning("match %s: database unavailable while recording: %s", spec.match_id, exc, extra=ctx)
        if clock() + delay > deadline:
            return "unrecorded"
        sleep(delay)
        delay = min(2.0, delay * 2)


def _wait_for_referee(pool: ConnectionPool, spec: Any, error: str, cfg: WorkerSettings) -> str:
    """No referee reachable before the match started: give the claim back and try again later."""
    state, tries, waited = referee_wait.release_unstarted(pool, spec.match_id, spec.attempt, error,
                                                          wait_s=cfg.referee_wait_s)
    ctx = {"match_id": spec.match_id, "attempt": spec.attempt}
    if state != "planned":
        if state == "failed":
            worker_metrics.MATCH_ATTEMPTS.labels("infra_error").inc()
            log.error("match %s: no referee reachable for %.0f s (%d tries): failed: %s", spec.match_id, waited,
                      tries, error, extra=ctx)
        return state
    delay = referee_backoff_s(tries, cfg.referee_backoff_s, cfg.referee_backoff_max_s)
    log.warning("match %s: no referee reachable (try %d, waiting %.0f s so far); not an attempt, trying again "
                "in %.1f s: %s", spec.match_id, tries, waited, delay, error, extra=ctx)
    run_match.apply_async((spec.match_id,), countdown=delay)
    return "waiting_for_referee"


def _run_on_referee(cfg: WorkerSettings, spec: Any, addresses: list[str], keeper: _LeaseKeeper,
                    tls_ca: bytes | None) -> Any:
    return referee_run_match(
        addresses,
        cfg.service_token,
        match_id=spec.match_id,
        attempt=spec.attempt,
        game_string=spec.game_string,
        seed=spec.seed,
        seat_bot_ids=list(spec.seat_bot_ids),
        seat_bot_names=list(spec.seat_bot_names),
        time_control=dict(spec.time_control),
        no_show_timeout_ms=cfg.no_show_timeout_ms,
        max_duration_ms=MAX_MATCH_DURATION_S * 1000,
        on_event=keeper,
        tls_root_cert=tls_ca,
        silence_ms=int(cfg.referee_silence_s * 1000),
    )


def _retry(pool: ConnectionPool, spec: Any, status: str, error: str, cfg: WorkerSettings) -> str:
    state = ladder_matches.record_failed_attempt(
        pool, spec.match_id, spec.attempt, status, error, cfg.match_attempts
    )
    if state == "planned":
        worker_metrics.MATCH_RETRIES.labels(status).inc()
        run_match.apply_async((spec.match_id,), countdown=cfg.retry_delay_s * spec.attempt)
        return "requeued"
    return state


def _queue_length(queue: str) -> int | None:
    """Messages waiting in a Celery queue (None when the broker cannot say)."""
    try:
        with app.connection_for_write() as conn:
            # the transport's own Channel class; the stubs' StdChannel declares no queue_declare
            channel: Any = conn.default_channel
            size = getattr(channel, "_size", None)  # kombu's Redis transport: LLEN over priorities
            if size is not None:
                return int(size(queue))
            return int(channel.queue_declare(queue=queue, passive=True).message_count)
    except Exception as exc:
        log.info("cannot read the length of queue %s: %s", queue, exc)
        return None


_outage: dict[str, Any] = {"down": False, "back_at": None}
"""What this process's reaper saw of the database: unreachable at its last try (``down``), and the
``time.monotonic()`` it was reachable again (``back_at``)."""


def _requeue_expired(pool: ConnectionPool, cfg: WorkerSettings) -> dict[int, str]:
    """:func:`ladder.matches.requeue_expired`, except for a whole lease after this process found the
    database reachable again: a lease that ran out while no one could reach the database is not a
    lost worker, and its worker renews it once the database is back (``_LeaseKeeper``)."""
    if _outage["down"]:
        _outage["down"], _outage["back_at"] = False, time.monotonic()
        log.warning("reaper: the database is reachable again; leases get %.0f s to be renewed before any "
                    "is expired", cfg.lease_s)
    back_at = _outage["back_at"]
    if back_at is not None and time.monotonic() - back_at < cfg.lease_s:
        return {}
    _outage["back_at"] = None
    return ladder_matches.requeue_expired(pool, max_attempts=cfg.match_attempts)


@app.task(name="parterre.reap")
def reap() -> dict[str, int]:
    """The reaper task (sent by ``parterre beat``); see :func:`reap_with`."""
    return reap_with(get_pool())


def reap_with(pool: ConnectionPool) -> dict[str, int]:
    """The reaper: run again the matches a lost worker or referee left behind.

    The reaper ends matches stuck past their maximum duration
    (docs/faults.md F-10, F-14). Three kinds of stuck match:

    * running with an expired lease (its worker died, hung or lost the database) -- except during
      a whole lease after this process found the database reachable again after an outage: a
      lease that ran out while nobody could reach the database does not blame a worker, whose
      renewal comes once it is back (:func:`_requeue_expired`);
    * running for longer than the longest match can (``PARTERRE_MAX_MATCH_DURATION_S``
      + the no-show wait + 2 minutes), even with a renewed lease;
    * planned for longer than ``PARTERRE_STALE_PLANNED_S`` (300 s) while the
      queue is empty: its task was lost (the broker restarted, a retry was
      dropped); queued again, which is harmless if it was not lost (F-11).

    The old attempts become ``infra_error``; a match that used up its
    attempts becomes ``failed``. Every worker also runs this itself, beat or
    no beat (:func:`start_worker_reaper`), so a killed worker's matches come
    back without ``parterre beat`` (docs/faults.md F-23).

    Returns:
        Counts: ``{"expired", "overdue", "stale_planned", "queued"}``.
    """
    cfg = _settings()
    try:
        return _reap(pool, cfg)
    except DatabaseUnavailableError:
        _outage["down"] = True
        raise


def _reap(pool: ConnectionPool, cfg: WorkerSettings) -> dict[str, int]:
    overdue_s = MAX_MATCH_DURATION_S + cfg.no_show_timeout_ms / 1000.0 + 120
    overdue = ladder_matches.requeue_overdue(pool, overdue_s, max_attempts=cfg.match_attempts)
    expired = _requeue_expired(pool, cfg)  # after a call that reached the database
    queued = 0
    for match_id, status in {**expired, **overdue}.items():
        if status == "planned":
            run_match.delay(match_id)
            queued += 1
    stale: list[int] = []
    stale_s = worker_settings().stale_planned_s
    if _queue_length(app.conf.task_default_queue) == 0:
        stale = ladder_matches.stale_planned(pool, stale_s)
        for match_id in stale:
            run_match.delay(match_id)
    if expired or overdue or stale:
        log.warning("reaper: %d expired, %d overdue, %d stale planned matches queued again",
                    len(expired), len(overdue), len(stale))
    return {"expired": len(expired), "overdue": len(overdue), "stale_planned": len(stale),
            "queued": queued + len(stale)}


_reaper_pool: ConnectionPool | None = None
"""The worker reaper thread's own pool, in the worker's main process (never used, nor closed, by a
pool process forked from it: dropping inherited connections there would close the parent's)."""
_reaper_thread: threading.Thread | None = None


def worker_reap_period_s() -> float:
    """``PARTERRE_WORKER_REAP_S`` (default ``PARTERRE_REAP_PERIOD_S``, 15 s); 0 turns the worker reaper off."""
    return worker_settings().worker_reap_period_s


def start_worker_reaper(period_s: float | None = None) -> threading.Thread | None:
    """Run :func:`reap_with` every ``period_s`` seconds (±20 %) in a daemon thread of this process.

    Started by every worker node when it is ready (``worker_ready``), so that
    leases that ran out are recovered even when ``parterre beat`` is not
    running (docs/faults.md F-23; the setup of docs/bots.md runs no beat). Several
    workers and beat reaping at once is harmless: each match row is changed
    under its row lock (``FOR UPDATE SKIP LOCKED``), once.

    Returns:
        The thread, or None when off (period 0) or already started in this process.
    """
    global _reaper_thread
    period = worker_reap_period_s() if period_s is None else float(period_s)
    if period <= 0 or _reaper_thread is not None:
        return None

    def loop() -> None:
        global _reaper_pool
        while True:
            time.sleep(period * random.uniform(0.8, 1.2))
            sweep_hosted_runs()
            try:
                if _reaper_pool is None:
                    url = worker_settings().database_url
                    if not url:
                        continue
                    _reaper_pool = ladder_db.make_pool(url, min_size=1, max_size=1)
                reap_with(_reaper_pool)
            except Exception as exc:  # the database may be down: try again next period
                log.warning("worker reaper: %s", exc)

    _reaper_thread = threading.Thread(target=loop, name="parterre-worker-reaper", daemon=True)
    _reaper_thread.start()
    return _reaper_thread
