"""Prometheus metrics of the referee.

Process-wide (prometheus_client's default registry); the ``parterre referee``
command exposes them over HTTP.
"""

from __future__ import annotations

import bisect

from prometheus_client import Counter, Gauge, Histogram

AUTH_FAILURES = Counter(
    "parterre_referee_auth_failures_total",
    "Bot streams refused: missing, unknown or revoked token (docs/faults.md F-06).",
    ["reason"],
)
PROTOCOL_ERRORS = Counter(
    "parterre_referee_protocol_errors_total",
    "Malformed or unexpected bot messages answered with an Error.",
    ["kind"],
)
REJECTED_DECISIONS = Counter(
    "parterre_referee_rejected_decisions_total",
    "Decisions answered with DecisionRejected (stale, duplicate, late, ...).",
    ["code"],
)
FAULTS = Counter(
    "parterre_referee_faults_total", "Seat verdicts other than normal.", ["game", "verdict"]
)
DECISION_SECONDS = Histogram(
    "parterre_referee_decision_seconds",
    "Server-measured time from sending a DecisionRequest to reading the answer.",
    ["game"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
MATCHES_RUNNING = Gauge("parterre_referee_matches_running", "Match rooms currently open.")
MATCHES_PLAYING = Gauge("parterre_referee_matches_playing",
                        "Match rooms in play: every bot seated and the match started (a subset of the open rooms).")
MATCHES_FINISHED = Counter(
    "parterre_referee_matches_finished_total", "Match attempts ended, by status.", ["game", "status"]
)
SESSIONS = Gauge("parterre_referee_sessions", "Authenticated bot streams currently open.")
VERDICTS = Counter(
    "parterre_referee_verdicts_total",
    "Seat verdicts of ended match attempts, normal included (faults / all = fault rate).",
    ["game", "verdict"],
)


class LatencyBatch:
    """Decision times of one match, counted locally and added to
    :data:`DECISION_SECONDS` in one go (:meth:`flush`), so the per-decision hot
    path costs a ``bisect`` instead of a locked histogram update.

    Args:
        game: the ``game`` label.
    """

    __slots__ = ("game", "bounds", "counts", "sum_s", "values")

    _BOUNDS_MS = tuple(b * 1000.0 for b in DECISION_SECONDS._upper_bounds)  # private: bucket bounds

    def __init__(self, game: str) -> None:
        self.game = game
        self.counts = [0] * len(self._BOUNDS_MS)
        self.sum_s = 0.0
        self.values: list[float] = []

    def observe(self, elapsed_ms: float) -> None:
        """Count one decision time (ms)."""
        self.counts[bisect.bisect_left(self._BOUNDS_MS, elapsed_ms)] += 1
        self.sum_s += elapsed_ms / 1000.0

    def flush(self) -> None:
        """Add the counted times to the histogram and reset."""
        child = DECISION_SECONDS.labels(self.game)
        buckets = getattr(child, "_buckets", None)
        total = getattr(child, "_sum", None)
        if buckets is not None and total is not None and len(buckets) == len(self.counts):
            for bucket, n in zip(buckets, self.counts, strict=True):
                if n:
                    bucket.inc(n)
            total.inc(self.sum_s)
        else:  # a prometheus_client without these internals: replay bucket bounds
            for bound, n in zip(self._BOUNDS_MS, self.counts, strict=True):
                for _ in range(n):
                    child.observe(min(bound, 1e12) / 1000.0)
        self.counts = [0] * len(self._BOUNDS_MS)
        self.sum_s = 0.0
