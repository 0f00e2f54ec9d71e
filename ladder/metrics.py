"""Prometheus metrics of the ladder's writes.

Recorded by :func:`ladder.matches.record_result` after its transaction
committed, in whichever process records results (the Celery workers, whose
``/metrics`` endpoint therefore shows them).

| metric | labels | meaning |
|---|---|---|
| ``parterre_ladder_results_total`` | game | finished matches recorded (rated or casual) |
| ``parterre_ladder_ratings_updated_total`` | game | rating rows updated (one per seat of a rated result; casual: 0) |
| ``parterre_ladder_replay_bytes`` | game | size of one stored replay, zstd-compressed (bytes), histogram |
| ``parterre_ladder_replay_raw_bytes_total`` | game | replay JSON bytes before compression |
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

RESULTS = Counter("parterre_ladder_results_total", "Finished matches recorded and rated.", ["game"])
RATINGS_UPDATED = Counter(
    "parterre_ladder_ratings_updated_total", "Rating rows updated by recorded results.", ["game"]
)
REPLAY_BYTES = Histogram(
    "parterre_ladder_replay_bytes",
    "Size of one stored replay after zstd compression (bytes).",
    ["game"],
    buckets=(1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 5_000_000),
)
REPLAY_RAW_BYTES = Counter(
    "parterre_ladder_replay_raw_bytes_total", "Replay JSON bytes before compression.", ["game"]
)


def result_recorded(game: str, *, seats: int, replay_bytes: int, raw_bytes: int) -> None:
    """Count one recorded result: ``seats`` rating rows updated, a replay of ``replay_bytes`` stored."""
    RESULTS.labels(game).inc()
    RATINGS_UPDATED.labels(game).inc(seats)
    REPLAY_BYTES.labels(game).observe(replay_bytes)
    REPLAY_RAW_BYTES.labels(game).inc(raw_bytes)
