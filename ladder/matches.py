"""What workers call to run matches: claim, record a result, record a failed attempt.

The source of truth for "who runs this match" is the ``matches`` row: its
``status`` and ``attempt`` number (docs/architecture.md "Exactly-once recording"). A worker claims a ``planned``
match, which makes it ``running`` with ``attempt + 1`` and a lease; it then
records exactly one outcome for that attempt:

* :func:`record_result` — the match finished: seats, replay, ratings, all in
  one transaction, accepted only for the running attempt (docs/faults.md F-11, F-14,
  F-15, F-16, F-17);
* :func:`record_failed_attempt` — ``infra_error`` or ``aborted_no_show``:
  unrated, the match goes back to ``planned`` or, at the attempt limit, to
  ``failed`` / ``aborted_no_show`` (docs/faults.md F-07, F-08, F-10).

A retried attempt is dealt a new seed: the bots of the attempt that ended have seen
part of its deal (their hands, the cards shown), so the same seed again would show
them its future draws. :func:`claim_match` gives every attempt after the first a
fresh seed (:func:`ladder.match_plans.new_seed`), except after an ``aborted_no_show``
attempt, which showed nobody any card (a duplicate deal's rotations then keep sharing
their seed). The seed is recorded with the attempt
(``match_attempts.seed``, ``seed_commitment``) and made the match's own: the
``RunMatchRequest``, the bots' ``MatchStarted.seed_commitment`` and the replay
carry it. A claim given back before any bot was seated (no referee reachable:
:mod:`ladder.referee_wait`) is not an attempt and changes no seed.

A worker that dies leaves a ``running`` match whose lease runs out;
:func:`requeue_expired` (the reaper) or :func:`requeue_worker` (a worker
coming back under the same name, docs/faults.md F-13) mark that attempt
``infra_error`` and plan the match again.

Every write takes the ``matches`` row lock first, then (for results) the
rating rows in bot-id order.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder import elo, fair_play, rating_order, replay_store, seat_debug
from ladder import metrics as ladder_metrics
from ladder.db import connection, run_transaction
from ladder.errors import MatchNotFoundError, ResultError
from ladder.match_plans import new_seed

log = logging.getLogger(__name__)

VERDICTS = ("normal", "timeout", "illegal_action", "disconnect", "crash", "resigned", "no_show")
"""Per-seat verdicts of the referee (docs/architecture.md "Verdicts")."""

FAILED_ATTEMPT_STATUSES = ("infra_error", "aborted_no_show")
"""Outcomes of an attempt that end it without a result (never rated)."""

DEFAULT_LEASE_S = 600.0
"""Default lease of a claim, in seconds; extend it with :func:`extend_lease` for long matches."""

REPLAY_FORMAT = replay_store.FULL_FORMAT
"""Replay format assumed when the replay JSON has no ``format`` field."""

ZSTD_LEVEL = 3
"""zstd compression level of stored replays."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Everything a worker needs to run one attempt of a match (cf. ``RunMatchRequest``).

    Attributes:
        match_id: match id.
        attempt: attempt number this claim owns (1 for the first run).
        game_string: canonical game string, e.g. ``floriferous(players=3)``.
        seed: this attempt's seed (hex; a retried attempt is dealt a new one); secret until the match ends.
        seat_bot_ids: bot id per seat, seat 0 first.
        seat_bot_names: registered name per seat (``bots.name``): what opponents and the replay show.
        time_control: ``{"base_ms", "increment_ms", "cap_ms", "margin_ms"}`` in milliseconds.
        game: registry name of the game.
        seed_commitment: ``sha256(seed ascii)`` hex of this attempt's seed, published at its start.
        tournament_id: tournament of the match, or ``None``.
        lease_until: when the claim expires unless extended (UTC-aware).
    """

    match_id: int
    attempt: int
    game_string: str
    seed: str
    seat_bot_ids: tuple[int, ...]
    time_control: dict[str, int]
    game: str = ""
    seed_commitment: str = ""
    tournament_id: int | None = None
    lease_until: datetime | None = None
    seat_bot_names: tuple[str, ...] = ()


def claim_match(
    pool: ConnectionPool,
    match_id: int,
    worker: str,
    lease_s: float = DEFAULT_LEASE_S,
    *,
    max_attempts: int | None = None,
    now: datetime | None = None,
) -> MatchSpec | None:
    """Claim a match for one attempt: ``planned`` -> ``running``, ``attempt + 1``.

    Also inserts the ``match_attempts`` row (status ``running``, with its seed). The
    first attempt plays the planned seed; a later one is dealt a fresh seed (unless the
    one before was a no-show), which becomes the match's ``seed`` and ``seed_commitment``
    (module docstring). A match
    that is ``running`` with an expired lease is taken over: its old attempt
    becomes ``infra_error`` first (or, when that attempt was number
    ``max_attempts``, the match becomes ``failed`` and ``None`` is returned).

    Args:
        pool: ladder connection pool.
        match_id: the match.
        worker: name of the claiming worker (stored as ``claimed_by``).
        lease_s: seconds the claim lasts; longer than the longest match, or
            renewed with :func:`extend_lease`.
        max_attempts: attempt limit used when taking over an expired lease.
        now: the time a lease is judged expired at (timezone-aware); default
            the database's ``now()``.

    Returns:
        The :class:`MatchSpec` of the new attempt, or ``None`` when the match
        is finished, failed, aborted, or running under a live lease (a second
        delivery of the same task does nothing: docs/faults.md F-11).

    Raises:
        MatchNotFoundError: no such match.
    """

    def claim(conn: Any) -> MatchSpec | None:
        row = conn.execute(
            "SELECT status, attempt, lease_until IS NOT NULL AND lease_until < coalesce(%s::timestamptz, now()), "
            "game, rated FROM matches WHERE id = %s FOR UPDATE",
            (now, match_id),
        ).fetchone()
        if row is None:
            raise MatchNotFoundError(f"no match with id {match_id}")
        status, attempt, expired, game, rated = row
        if status == "running" and expired:
            _end_attempt(conn, match_id, attempt, "infra_error", f"lease expired; taken over by {worker}")
            if max_attempts is not None and attempt >= max_attempts:
                conn.execute(
                    "UPDATE matches SET status = 'failed', claimed_by = NULL, lease_until = NULL WHERE id = %s",
                    (match_id,),
                )
                if rated:  # it held the later results of its bots
                    rating_order.apply_ready(conn, game)
                return None
        elif status != "planned":
            return None
        # The first attempt plays the planned deal; a later one a new deal, unless the last attempt was
        # a no-show, which showed nobody anything (module docstring).
        seed, commitment = new_seed() if attempt >= 1 and _last_attempt_dealt(conn, match_id, attempt) \
            else (None, None)
        with conn.cursor(row_factory=dict_row) as cur:
            m = cur.execute(
                "UPDATE matches SET status = 'running', attempt = attempt + 1, claimed_by = %s, "
                "lease_until = now() + make_interval(secs => %s), started_at = now(), "
                "seed = coalesce(%s, seed), seed_commitment = coalesce(%s, seed_commitment) WHERE id = %s "
                "RETURNING attempt, game, game_string, seed, seed_commitment, time_control, tournament_id, "
                "lease_until",
                (worker, float(lease_s), seed, commitment, match_id),
            ).fetchone()
        conn.execute(
            "INSERT INTO match_attempts (match_id, attempt, status, worker, seed, seed_commitment) "
            "VALUES (%s, %s, 'running', %s, %s, %s)",
            (match_id, m["attempt"], worker, m["seed"], m["seed_commitment"]),
        )
        seats = conn.execute("SELECT s.bot_id, b.name FROM seats s JOIN bots b ON b.id = s.bot_id "
                             "WHERE s.match_id = %s ORDER BY s.seat", (match_id,)).fetchall()
        return MatchSpec(
            match_id=match_id,
            attempt=m["attempt"],
            game_string=m["game_string"],
            seed=m["seed"],
            seat_bot_ids=tuple(int(s[0]) for s in seats),
            time_control=dict(m["time_control"]),
            game=m["game"],
            seed_commitment=m["seed_commitment"],
            tournament_id=m["tournament_id"],
            lease_until=m["lease_until"],
            seat_bot_names=tuple(str(s[1]) for s in seats),
        )

    return run_transaction(pool, claim)


def _last_attempt_dealt(conn: Any, match_id: int, attempt: int) -> bool:
    """False when attempt ``attempt`` of the match ended ``aborted_no_show``: the referee sends
    ``MatchStarted`` and the first observations only once every seat is bound, so its bots saw no
    card of its deal. True otherwise (it may have been played in part)."""
    row = conn.execute("SELECT status FROM match_attempts WHERE match_id = %s AND attempt = %s",
                       (match_id, attempt)).fetchone()
    return row is None or row[0] != "aborted_no_show"


def extend_lease(pool: ConnectionPool, match_id: int, attempt: int, lease_s: float = DEFAULT_LEASE_S) -> bool:
    """Renew the lease of a running attempt to ``now + lease_s`` seconds.

    Returns:
        True if the match is still running under this attempt (lease renewed),
        False otherwise (the attempt was taken over or ended: stop running it).
    """
    with connection(pool) as conn:
        cur = conn.execute(
            "UPDATE matches SET lease_until = now() + make_interval(secs => %s) "
            "WHERE id = %s AND status = 'running' AND attempt = %s",
            (float(lease_s), match_id, attempt),
        )
        return cur.rowcount == 1


def _end_attempt(conn: Any, match_id: int, attempt: int, status: str, error: str | None) -> None:
    conn.execute(
        "UPDATE match_attempts SET status = %s, error = %s, ended_at = now() "
        "WHERE match_id = %s AND attempt = %s AND status = 'running'",
        (status, None if error is None else str(error)[:4000], match_id, attempt),
    )


# -- results ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SeatResult:
    seat: int
    bot_id: int
    rank: int
    score: float | None
    verdict: str
    time_used_ms: int | None
    decisions: int | None
    debug_notes: list[tuple[int, str]]


def _opt_int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ResultError(f"{what} must be a non-negative int or null, got {value!r}")
    return int(value)


def _parse_result(result: Mapping[str, Any]) -> tuple[list[_SeatResult], str, dict[str, Any]]:
    if not isinstance(result, Mapping):
        raise ResultError(f"result must be a dict, got {type(result).__name__}")
    if result.get("status") != "finished":
        raise ResultError(
            f"record_result takes finished matches, got status {result.get('status')!r}; "
            "use record_failed_attempt for infra_error / aborted_no_show"
        )
    raw_seats = result.get("seats")
    if not isinstance(raw_seats, list) or not raw_seats:
        raise ResultError("result['seats'] must be a non-empty list")
    seats = []
    for s in raw_seats:
        try:
            seat, bot_id, rank, verdict = s["seat"], s["bot_id"], s["rank"], s.get("verdict", "normal")
        except (KeyError, TypeError):
            raise ResultError(f"seat entry {s!r} lacks seat, bot_id or rank") from None
        for what, v in (("seat", seat), ("bot_id", bot_id), ("rank", rank)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ResultError(f"seat {what} must be an int, got {v!r}")
        # A solo seat ranks 1 (won) or 2 (the rules' automaton won): referee.verdicts.result_ranks.
        top = len(raw_seats) if len(raw_seats) > 1 else 2
        if not 1 <= rank <= top:
            raise ResultError(f"rank {rank} out of range 1..{top}")
        if verdict not in VERDICTS:
            raise ResultError(f"unknown verdict {verdict!r}; expected one of {', '.join(VERDICTS)}")
        score = s.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise ResultError(f"score must be a number or null, got {score!r}")
        seats.append(
            _SeatResult(
                seat,
                bot_id,
                rank,
                None if score is None else float(score),
                verdict,
                _opt_int(s.get("time_used_ms"), "time_used_ms"),
                _opt_int(s.get("decisions"), "decisions"),
                seat_debug.parse_notes(s.get("debug_notes"), seat),
            )
        )
    seats.sort(key=lambda x: x.seat)
    replay_json = result.get("replay_json")
    if not isinstance(replay_json, str):
        raise ResultError("result['replay_json'] must be the replay JSON text (str)")
    try:
        replay = json.loads(replay_json)
    except json.JSONDecodeError as exc:
        raise ResultError(f"replay_json is not valid JSON: {exc}") from None
    if not isinstance(replay, dict):
        raise ResultError("replay_json must hold a JSON object")
    return seats, replay_json, replay


def record_result(
    pool: ConnectionPool,
    match_id: int,
    attempt: int,
    result: Mapping[str, Any],
    *,
    k: float = elo.DEFAULT_K,
) -> bool:
    """Record a finished match exactly once, with its replay and rating update, in ONE transaction.

    Steps (one transaction, retried on serialization failure or deadlock,
    docs/faults.md F-17): lock the match row and check it is ``running`` with this
    ``attempt``; fill in the seats; store the replay (its compact form,
    :mod:`ladder.replay_store`, when it re-simulates to the same text, else zstd
    of the UTF-8 JSON text); take the next ``result_seq`` (the order results are recorded in);
    mark the match ``finished`` and the attempt ``finished``; then, for a
    rated match, apply the Elo updates that are ready in plan order
    (:func:`ladder.rating_order.apply_ready`: this one, unless an earlier
    match of one of its bots is still pending, and any held one this result
    released): rating rows locked in bot-id order (missing ones inserted at
    1500), pairwise Elo (:func:`ladder.elo.pairwise_deltas`), ``rating_history``
    and ``matches.rating_seq``. A casual match (``matches.rated`` false, e.g.
    a casual challenge) skips the ratings.

    Args:
        pool: ladder connection pool.
        match_id: the match.
        attempt: the attempt number the caller claimed.
        result: ``{"status": "finished", "seats": [{"seat", "bot_id", "rank",
            "score", "verdict", "time_used_ms", "decisions", "debug_notes"}], "replay_json": str}``
            (the referee's ``MatchResult``; ``debug_notes``, optional, ``[[step, text], ...]``, the
            seat's own debug text, stored apart from the replay: :mod:`ladder.seat_debug`); ranks are
            after the referee's verdicts (a faulting seat is last), 1 = best, ties share a rank.
        k: Elo K-factor (the ladder uses :data:`ladder.elo.DEFAULT_K`).

    Returns:
        True if recorded; False if the match is not running under this
        attempt (already recorded, requeued, or never claimed) — then nothing
        is written (docs/faults.md F-11).

    Raises:
        MatchNotFoundError: no such match.
        ResultError: malformed result, or seats/bots that differ from the
            planned ones, or a replay naming another match/attempt; nothing is written.
    """
    seats, replay_json, replay = _parse_result(result)
    raw = replay_json.encode("utf-8")
    replay_format, blob = replay_store.pack(replay_json, ZSTD_LEVEL)
    if "match_id" in replay and replay["match_id"] != match_id:
        raise ResultError(f"replay is for match {replay['match_id']}, not {match_id}")
    if "attempt" in replay and replay["attempt"] != attempt:
        raise ResultError(f"replay is for attempt {replay['attempt']}, not {attempt}")

    def write(conn: Any) -> bool:
        row = conn.execute(
            "SELECT status, attempt, game, rated FROM matches WHERE id = %s FOR UPDATE", (match_id,)
        ).fetchone()
        if row is None:
            raise MatchNotFoundError(f"no match with id {match_id}")
        status, current, game, rated = row
        recorded_game[:] = [game, rated]
        if status != "running" or current != attempt:
            log.info(
                "match %s: result for attempt %s ignored (status %s, attempt %s)", match_id, attempt, status, current,
                extra={"match_id": match_id, "attempt": attempt},
            )
            return False
        planned = dict(conn.execute("SELECT seat, bot_id FROM seats WHERE match_id = %s", (match_id,)).fetchall())
        got = {s.seat: s.bot_id for s in seats}
        if got != planned:
            raise ResultError(f"match {match_id}: result seats {got} differ from the planned seats {planned}")
        conn.cursor().executemany(
            "UPDATE seats SET rank = %s, score = %s, verdict = %s, time_used_ms = %s, decisions = %s "
            "WHERE match_id = %s AND seat = %s",
            [(s.rank, s.score, s.verdict, s.time_used_ms, s.decisions, match_id, s.seat) for s in seats],
        )
        _record_seat_details(conn, match_id, replay)
        seat_debug.store(conn, match_id, {s.seat: s.debug_notes for s in seats})  # apart from the replay
        conn.execute(
            "INSERT INTO replays (match_id, format, data, raw_bytes) VALUES (%s, %s, %s, %s)",
            (match_id, replay_format, blob, len(raw)),
        )
        if rated and fair_play.unrate_same_account(conn, [match_id]):  # before the stats trigger sees it rated
            rated = recorded_game[1] = False
        seq = int(conn.execute("SELECT nextval('match_result_seq')").fetchone()[0])
        conn.execute(
            "UPDATE matches SET status = 'finished', finished_at = now(), result_seq = %s, lease_until = NULL, "
            "referee_wait_since = NULL, referee_wait_tries = 0 WHERE id = %s",
            (seq, match_id),
        )
        if rated:  # applied now, or held until the earlier matches of its bots have ended
            rating_order.apply_ready(conn, game, k)
        _end_attempt(conn, match_id, attempt, "finished", None)
        return True

    recorded_game: list[Any] = []
    recorded = run_transaction(pool, write)
    if recorded:  # after the commit: a rolled-back try is not counted
        ladder_metrics.result_recorded(recorded_game[0], seats=len(seats) if recorded_game[1] else 0,
                                       replay_bytes=len(blob), raw_bytes=len(raw))
    return recorded


def _record_seat_details(conn: Any, match_id: int, replay: Mapping[str, Any]) -> None:
    """Copy each seat's announced bot version (``Hello.version``, the replay's ``players``) and the
    referee's fault reason (``fault_reasons``) onto ``seats`` (migration 0004)."""
    players: list[Any] = replay.get("players") or []
    reasons: list[Any] = replay.get("fault_reasons") or []
    if not isinstance(players, list) or not isinstance(reasons, list):
        return
    rows = []
    for p in players:
        if isinstance(p, Mapping) and isinstance(p.get("seat"), int):
            seat = p["seat"]
            reason = reasons[seat] if 0 <= seat < len(reasons) and isinstance(reasons[seat], str) else ""
            rows.append((str(p.get("version") or "")[:64] or None, reason[:500] or None, match_id, seat))
    if rows:
        conn.cursor().executemany(
            "UPDATE seats SET bot_version = %s, fault_reason = %s WHERE match_id = %s AND seat = %s", rows)


# -- failed attempts and the reaper ----------------------------------------------------------


def record_failed_attempt(
    pool: ConnectionPool, match_id: int, attempt: int, status: str, error: str | None, max_attempts: int
) -> str:
    """End an attempt without a result (never rated; docs/faults.md F-07, F-08).

    The attempt row gets ``status`` and ``error``. The match goes back to
    ``planned`` for a new attempt, or — when ``attempt >= max_attempts`` — to
    ``failed`` (for ``infra_error``) or ``aborted_no_show`` for good.

    Args:
        pool: ladder connection pool.
        match_id: the match.
        attempt: the attempt number the caller claimed.
        status: ``"infra_error"`` or ``"aborted_no_show"``.
        error: what happened (stored, truncated to 4000 characters).
        max_attempts: attempts allowed in total (``PARTERRE_MATCH_ATTEMPTS``).

    Returns:
        The match status afterwards: ``"planned"``, ``"failed"`` or
        ``"aborted_no_show"``; when the match is not running under this
        attempt, nothing is written and its current status is returned.

    Raises:
        ValueError: bad ``status`` or ``max_attempts`` < 1.
        MatchNotFoundError: no such match.
    """
    if status not in FAILED_ATTEMPT_STATUSES:
        raise ValueError(f"status must be one of {', '.join(FAILED_ATTEMPT_STATUSES)}, got {status!r}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")

    def write(conn: Any) -> str:
        row = conn.execute(
            "SELECT status, attempt, game, rated FROM matches WHERE id = %s FOR UPDATE", (match_id,)
        ).fetchone()
        if row is None:
            raise MatchNotFoundError(f"no match with id {match_id}")
        current_status, current, game, rated = row
        if current_status != "running" or current != attempt:
            return str(current_status)
        _end_attempt(conn, match_id, attempt, status, error)
        exhausted = "failed" if status == "infra_error" else "aborted_no_show"
        new = exhausted if attempt >= max_attempts else "planned"
        conn.execute(
            "UPDATE matches SET status = %s, claimed_by = NULL, lease_until = NULL, referee_wait_since = NULL, "
            "referee_wait_tries = 0 WHERE id = %s",
            (new, match_id),
        )
        if new != "planned" and rated:  # ended for good: it no longer holds the later results of its bots
            rating_order.apply_ready(conn, game)
        return new

    return run_transaction(pool, write)


def _requeue(
    pool: ConnectionPool, condition: str, params: dict[str, Any], error: str, max_attempts: int | None
) -> dict[int, str]:
    sql = f"""
        WITH stale AS (
            SELECT id, attempt FROM matches
            WHERE status = 'running' AND {condition}
            ORDER BY id FOR UPDATE SKIP LOCKED
        ), ended AS (
            UPDATE match_attempts a SET status = 'infra_error', error = %(error)s, ended_at = now()
            FROM stale s WHERE a.match_id = s.id AND a.attempt = s.attempt AND a.status = 'running'
        )
        UPDATE matches m
        SET status = CASE WHEN %(max)s::int IS NOT NULL AND m.attempt >= %(max)s::int THEN 'failed' ELSE 'planned' END,
            claimed_by = NULL, lease_until = NULL
        FROM stale s WHERE m.id = s.id
        RETURNING m.id, m.status, m.game, m.rated
    """

    def write(conn: Any) -> dict[int, str]:
        rows = conn.execute(sql, {**params, "error": error, "max": max_attempts}).fetchall()
        rating_order.release_games(conn, [g for _, st, g, rated in rows if st == "failed" and rated])
        return {int(mid): str(st) for mid, st, _, _ in sorted(rows)}

    return run_transaction(pool, write)


LEASE_EXPIRED = "lease expired (worker lost, or cut off from the database)"
"""The error of an attempt the reaper ended because its lease was not renewed: the reaper knows only
that no renewal came, not whether the worker died or could not reach the database (a reaper that
itself lost the database gives leases a whole lease of reachable time first: ``workers/tasks.py``)."""


def requeue_expired(pool: ConnectionPool, *, max_attempts: int | None = None,
                    now: datetime | None = None) -> dict[int, str]:
    """The reaper: end running attempts whose lease expired, and plan their matches again.

    Each such attempt becomes ``infra_error`` (a dead worker is never the
    bots' fault: docs/architecture.md "Verdicts"); its match goes back to ``planned``, or to
    ``failed`` when ``max_attempts`` is given and reached (docs/faults.md F-10, F-14,
    F-15). Matches whose row is locked at that moment (a result being
    recorded) are skipped. Leases are judged at ``now`` (timezone-aware;
    default the database's ``now()``).

    Returns:
        ``{match_id: new status}`` of the matches changed.
    """
    return _requeue(pool, "lease_until < coalesce(%(now)s::timestamptz, now())", {"now": now},
                    LEASE_EXPIRED, max_attempts)


def requeue_worker(
    pool: ConnectionPool, worker: str, *, max_attempts: int | None = None, prefix: bool = False
) -> dict[int, str]:
    """End every running attempt claimed by ``worker`` and plan those matches again.

    For a worker that restarts (or reconnects after losing its connections)
    under the same name: its abandoned attempts become ``infra_error`` at once
    instead of waiting for their leases (docs/faults.md F-13). Same rules as
    :func:`requeue_expired`.

    Args:
        pool: ladder connection pool.
        worker: the claim name (``claimed_by``).
        max_attempts: attempt limit (``failed`` when reached).
        prefix: match every claim name that starts with ``worker`` (a
            worker node and all its pool processes, e.g. ``"node1#"``).

    Returns:
        ``{match_id: new status}`` of the matches changed.
    """
    if prefix:
        return _requeue(pool, "starts_with(claimed_by, %(worker)s)", {"worker": worker},
                        f"worker {worker}* restarted", max_attempts)
    return _requeue(pool, "claimed_by = %(worker)s", {"worker": worker}, f"worker {worker} restarted", max_attempts)


def requeue_overdue(pool: ConnectionPool, older_than_s: float, *, max_attempts: int | None = None) -> dict[int, str]:
    """End running attempts that started more than ``older_than_s`` seconds ago, and plan them again.

    The reaper's guard against a match stuck past its maximum duration even
    though its lease keeps being renewed. The worker running it
    learns at its next lease renewal (:func:`extend_lease` returns False) and
    stops. Same rules as :func:`requeue_expired`.

    Returns:
        ``{match_id: new status}`` of the matches changed.
    """
    return _requeue(pool, "started_at < now() - make_interval(secs => %(age)s)", {"age": float(older_than_s)},
                    f"running for more than {older_than_s:.0f} s (stuck past its maximum duration)", max_attempts)


def stale_planned(pool: ConnectionPool, older_than_s: float, *, limit: int = 1000) -> list[int]:
    """Planned matches nobody has touched for ``older_than_s`` seconds (their task may be lost).

    "Touched" is the latest of the match's creation, its last attempt's end and its last
    claim that found no referee (:func:`release_unstarted`).

    Returns:
        Match ids, oldest first, at most ``limit``.
    """
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT m.id FROM matches m "
            "LEFT JOIN LATERAL (SELECT max(coalesce(a.ended_at, a.started_at)) AS last FROM match_attempts a "
            "WHERE a.match_id = m.id) a ON true "
            "WHERE m.status = 'planned' "
            "AND greatest(m.created_at, a.last, m.referee_wait_last) < now() - make_interval(secs => %s) "
            "ORDER BY m.id LIMIT %s",
            (float(older_than_s), int(limit)),
        ).fetchall()
    return [int(r[0]) for r in rows]

