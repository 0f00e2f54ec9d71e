"""Celery tasks: planning a round-robin and running one match (DESIGN §5).

Tasks take ids, never objects, and are idempotent: PostgreSQL's claim (status
and attempt number) decides whether a delivery does anything (FAULTS F-11).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from celery.signals import worker_process_init

from ladder import db as ladder_db
from ladder import matches as ladder_matches
from ladder import tournaments as ladder_tournaments
from workers.app import MAX_MATCH_DURATION_S, app
from workers.referee_client import InfraError, run_match as referee_run_match

log = logging.getLogger(__name__)

_pool: Any = None


def get_pool() -> Any:
    """The process's PostgreSQL connection pool (created on first use, after fork)."""
    global _pool
    if _pool is None:
        url = os.environ.get("PARTERRE_DATABASE_URL")
        if not url:
            raise RuntimeError("PARTERRE_DATABASE_URL is not set for the worker")
        _pool = ladder_db.make_pool(url, min_size=1, max_size=4)
    return _pool


@worker_process_init.connect
def _reset_pool(**_: Any) -> None:
    # A pool inherited through fork shares sockets with the parent: start afresh.
    global _pool
    _pool = None


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _settings() -> dict[str, Any]:
    return {
        "referee": os.environ.get("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:50051"),
        "service_token": os.environ.get("PARTERRE_SERVICE_TOKEN", ""),
        "max_attempts": int(os.environ.get("PARTERRE_MATCH_ATTEMPTS", "3")),
        "no_show_timeout_ms": int(os.environ.get("PARTERRE_NO_SHOW_TIMEOUT_MS", "30000")),
        "retry_delay_s": float(os.environ.get("PARTERRE_RETRY_DELAY_S", "5")),
    }


@app.task(name="parterre.plan_round_robin")
def plan_round_robin(tournament_id: int) -> int:
    """Plan every match of a round-robin tournament (idempotent) and queue them.

    Returns:
        The number of matches queued (matches still ``planned``).
    """
    pool = get_pool()
    match_ids = ladder_tournaments.plan_round_robin(pool, tournament_id)
    for match_id in match_ids:
        run_match.delay(match_id)
    return len(match_ids)


@app.task(name="parterre.run_match")
def run_match(match_id: int) -> str:
    """Claim match ``match_id``, have a referee play it, record the result once.

    Returns:
        What happened: ``skipped`` (already claimed or done), ``finished``,
        ``requeued`` (infra error or no-show, a new attempt is queued) or the
        final status when attempts are used up.
    """
    cfg = _settings()
    pool = get_pool()
    spec = ladder_matches.claim_match(
        pool, match_id, _worker_name(), lease_s=MAX_MATCH_DURATION_S + 60, max_attempts=cfg["max_attempts"]
    )
    if spec is None:
        return "skipped"
    log.info("match %s attempt %s: running", match_id, spec.attempt)
    try:
        outcome = referee_run_match(
            cfg["referee"],
            cfg["service_token"],
            match_id=spec.match_id,
            attempt=spec.attempt,
            game_string=spec.game_string,
            seed=spec.seed,
            seat_bot_ids=list(spec.seat_bot_ids),
            time_control=dict(spec.time_control),
            no_show_timeout_ms=cfg["no_show_timeout_ms"],
            max_duration_ms=MAX_MATCH_DURATION_S * 1000,
        )
    except InfraError as exc:
        log.warning("match %s attempt %s: infra error: %s", match_id, spec.attempt, exc)
        return _retry(pool, spec, "infra_error", str(exc), cfg)
    if outcome.status != "finished":
        return _retry(pool, spec, outcome.status, f"referee reported {outcome.status}", cfg)
    for delay in (0.5, 1, 2, 4, 8):
        try:
            recorded = ladder_matches.record_result(pool, match_id, spec.attempt, outcome.as_result())
            return "finished" if recorded else "skipped"
        except ladder_db.DatabaseUnavailableError as exc:
            # The lease expires and the reaper runs the match again if the database stays down.
            log.warning("match %s: database unavailable while recording: %s", match_id, exc)
            time.sleep(delay)
    return "unrecorded"


def _retry(pool: Any, spec: Any, status: str, error: str, cfg: dict[str, Any]) -> str:
    state = ladder_matches.record_failed_attempt(
        pool, spec.match_id, spec.attempt, status, error, cfg["max_attempts"]
    )
    if state == "planned":
        run_match.apply_async((spec.match_id,), countdown=cfg["retry_delay_s"] * spec.attempt)
        return "requeued"
    return state


@app.task(name="parterre.reap")
def reap() -> int:
    """End matches whose lease expired (their worker died or hung) and queue them again.

    DESIGN §5 "A reaper task ends matches stuck past their maximum duration";
    FAULTS F-10. The old attempt is marked ``infra_error``; a match that used up
    its attempts becomes ``failed``.

    Returns:
        The number of matches queued again.
    """
    cfg = _settings()
    changed = ladder_matches.requeue_expired(get_pool(), max_attempts=cfg["max_attempts"])
    queued = 0
    for match_id, status in changed.items():
        if status == "planned":
            run_match.delay(match_id)
            queued += 1
    return queued
