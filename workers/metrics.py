"""Prometheus metrics of the Celery workers.

Task durations and outcomes are measured for every task through Celery's
``task_prerun`` / ``task_postrun`` signals (nothing to add to a task); match
attempts and retries are counted by :mod:`workers.tasks` where it knows them.

The prefork pool records in child processes: ``parterre worker`` runs
prometheus_client in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, see
``parterre/observe.py``) and serves the sum over its processes. Gauges here
say how they add up across processes (``multiprocess_mode``).

| metric | labels | meaning |
|---|---|---|
| ``parterre_worker_task_seconds`` | task, outcome | wall time of one task run, histogram |
| ``parterre_worker_tasks_in_progress`` | task | tasks running now |
| ``parterre_worker_match_attempts_total`` | status | match attempts a worker ran, by how they ended |
| ``parterre_worker_match_retries_total`` | reason | matches queued again for a new attempt |
| ``parterre_hosted_verdicts_total`` | status, cause | hosted versions decided: rejected, active, failed_test |
| ``parterre_hosted_sandboxes`` | — | sandboxed bot processes trees running on this machine now |
| ``parterre_hosted_sandbox_rss_bytes`` / ``_cpu_seconds`` | — | their resident memory and CPU time, summed |
"""

from __future__ import annotations

import os
import time
from typing import Any

from celery import signals
from prometheus_client import Counter, Gauge, Histogram

TASK_OUTCOMES = frozenset(
    {"finished", "skipped", "requeued", "superseded", "unrecorded", "failed", "aborted_no_show", "infra_error",
     "waiting_for_referee"}
)
"""``run_match``'s return values, used as the ``outcome`` label as they are. Any other
successful return is ``success``; an exception is ``error``; a Celery retry ``retry``."""

TASK_SECONDS = Histogram(
    "parterre_worker_task_seconds",
    "Wall time of one task run (seconds), by task and outcome.",
    ["task", "outcome"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
)
TASKS_IN_PROGRESS = Gauge(
    "parterre_worker_tasks_in_progress", "Tasks running now.", ["task"], multiprocess_mode="livesum"
)
MATCH_ATTEMPTS = Counter(
    "parterre_worker_match_attempts_total",
    "Match attempts run by a worker (claimed and sent to a referee), by how they ended: "
    "finished, infra_error, aborted_no_show, superseded (the claim was taken over).",
    ["status"],
)
MATCH_RETRIES = Counter(
    "parterre_worker_match_retries_total",
    "Matches queued again for a new attempt after an unrated attempt, by reason.",
    ["reason"],
)

HOSTED_VERDICTS = Counter(
    "parterre_hosted_verdicts_total",
    "Hosted bot versions decided by a worker, by status (rejected, active, failed_test) and cause.",
    ["status", "cause"],
)
HOSTED_SANDBOXES = Gauge("parterre_hosted_sandboxes", "Sandboxes (hosted bot process trees) running on this "
                         "machine.", multiprocess_mode="max")
HOSTED_SANDBOX_RSS = Gauge("parterre_hosted_sandbox_rss_bytes", "Resident memory of the running sandboxes, "
                           "summed (bytes).", multiprocess_mode="max")
HOSTED_SANDBOX_CPU = Gauge("parterre_hosted_sandbox_cpu_seconds", "CPU time of the running sandboxes' "
                           "processes, summed (seconds).", multiprocess_mode="max")

_started: dict[str, tuple[float, str]] = {}


def outcome_of(retval: Any, state: str | None) -> str:
    """The ``outcome`` label of a finished task run."""
    if state == "FAILURE":
        return "error"
    if state == "RETRY":
        return "retry"
    if isinstance(retval, str) and retval in TASK_OUTCOMES:
        return retval
    return "success"


@signals.task_prerun.connect(weak=False, dispatch_uid="parterre-metrics-prerun")
def _task_prerun(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    if task_id is None or task is None:
        return
    _started[task_id] = (time.perf_counter(), task.name)
    TASKS_IN_PROGRESS.labels(task.name).inc()


@signals.task_postrun.connect(weak=False, dispatch_uid="parterre-metrics-postrun")
def _task_postrun(task_id: str | None = None, retval: Any = None, state: str | None = None, **_: Any) -> None:
    started = _started.pop(task_id or "", None)
    if started is None:
        return
    t0, name = started
    TASKS_IN_PROGRESS.labels(name).dec()
    TASK_SECONDS.labels(name, outcome_of(retval, state)).observe(time.perf_counter() - t0)


@signals.worker_process_shutdown.connect(weak=False, dispatch_uid="parterre-metrics-child-exit")
def _child_exit(pid: int | None = None, **_: Any) -> None:
    # A prefork child leaves: its live gauges must stop counting (multiprocess mode only).
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
