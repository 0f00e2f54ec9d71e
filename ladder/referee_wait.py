"""A claim that found no referee is not an attempt (docs/faults.md F-08 (b), F-22).

The worker claims a match (:func:`ladder.matches.claim_match`), then asks a
referee to run it. When no referee can be reached — every address answers
``UNAVAILABLE`` (refused, unresolvable, shutting down) before the match has
started — nothing was played and no bot saw anything: the claim is given
back with :func:`release_unstarted` and the worker asks again later, backing
off (``workers.tasks``), until a referee is back or the operator's deadline
(``PARTERRE_REFEREE_WAIT_S``) passes. Only attempts that started count
towards ``PARTERRE_MATCH_ATTEMPTS``.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import ConnectionPool

from ladder import rating_order
from ladder.db import run_transaction
from ladder.errors import MatchNotFoundError
from ladder.matches import _end_attempt


def release_unstarted(
    pool: ConnectionPool, match_id: int, attempt: int, error: str, *, wait_s: float
) -> tuple[str, int, float]:
    """Give back a claim whose match never started because no referee could be reached.

    Not finding a referee is not an attempt of the match: the claim is
    undone (``attempt`` back to its value before the claim, the attempt's
    ``match_attempts`` row deleted, the match ``planned`` again) and the
    match records that it waits for a referee (``referee_wait_since``, the
    first such claim of this run; ``referee_wait_tries``; the last error).
    When it has waited ``wait_s`` seconds or more (``PARTERRE_REFEREE_WAIT_S``;
    0 = no deadline), this claim ends as an ``infra_error`` attempt instead
    and the match becomes ``failed``.

    Args:
        pool: ladder connection pool.
        match_id: the match.
        attempt: the attempt number the caller claimed.
        error: why no referee was reachable (stored, truncated to 4000 characters).
        wait_s: the deadline, seconds since the first claim that found no referee.

    Returns:
        ``(status, tries, waited_s)``: the match status afterwards (``planned``
        or ``failed``; when the match is not running under this attempt,
        nothing is written and its current status is returned), claims so far
        that found no referee, and seconds waited since the first.

    Raises:
        MatchNotFoundError: no such match.
    """

    def write(conn: Any) -> tuple[str, int, float]:
        row = conn.execute(
            "SELECT status, attempt, game, rated, referee_wait_tries, "
            "extract(epoch FROM now() - coalesce(referee_wait_since, now()))::float8 "
            "FROM matches WHERE id = %s FOR UPDATE",
            (match_id,),
        ).fetchone()
        if row is None:
            raise MatchNotFoundError(f"no match with id {match_id}")
        status, current, game, rated, tries, waited = row
        if status != "running" or current != attempt:
            return str(status), int(tries), float(waited)
        tries = int(tries) + 1
        if wait_s > 0 and waited >= wait_s:
            _end_attempt(conn, match_id, attempt, "infra_error",
                         f"no referee reachable for {waited:.0f} s ({tries} tries; "
                         f"PARTERRE_REFEREE_WAIT_S={wait_s:g}): {error}")
            conn.execute(
                "UPDATE matches SET status = 'failed', claimed_by = NULL, lease_until = NULL, referee_wait_tries = %s, "
                "referee_wait_last = now(), referee_wait_error = %s WHERE id = %s",
                (tries, str(error)[:4000], match_id),
            )
            if rated:
                rating_order.apply_ready(conn, game)
            return "failed", tries, float(waited)
        conn.execute("DELETE FROM match_attempts WHERE match_id = %s AND attempt = %s AND status = 'running'",
                     (match_id, attempt))
        conn.execute(
            "UPDATE matches SET status = 'planned', attempt = attempt - 1, claimed_by = NULL, lease_until = NULL, "
            "referee_wait_since = coalesce(referee_wait_since, now()), referee_wait_tries = %s, "
            "referee_wait_last = now(), referee_wait_error = %s WHERE id = %s",
            (tries, str(error)[:4000], match_id),
        )
        return "planned", tries, float(waited)

    return run_transaction(pool, write)
