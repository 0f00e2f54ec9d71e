"""Claiming and recording matches (ladder.matches). docs/faults.md F-08, F-10, F-11, F-13, F-14, F-15, F-16, F-17."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import psycopg.errors
import pytest
from fixtures.ladder_helpers import GAME, count, make_bots, make_result

import ladder.matches as matches_mod
import ladder.rating_order as rating_order_mod
from ladder import make_pool
from ladder.db import is_unavailable
from ladder.errors import DatabaseUnavailableError, MatchNotFoundError, ResultError
from ladder.matches import (
    claim_match,
    extend_lease,
    record_failed_attempt,
    record_result,
    requeue_expired,
    requeue_worker,
)
from ladder.read import export_replay, replay_json, tournament_standings
from ladder.tournaments import create_tournament, plan_match, plan_round_robin, tournament_status

pytestmark = pytest.mark.usefixtures("games")


def _duel(pool: Any, a: int, b: int, key: str) -> int:
    return plan_match(pool, game_string=f"{GAME}(players=2)", bot_ids=[a, b], plan_key=key)


def _rating(pool: Any, bot: int) -> tuple[float, int]:
    with pool.connection() as conn:
        row = conn.execute("SELECT elo, games FROM ratings WHERE bot_id = %s AND game = %s", (bot, GAME)).fetchone()
    return row


def _history(pool: Any) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT match_id, bot_id, result_seq, elo_before, elo_after, delta FROM rating_history "
            "ORDER BY result_seq, bot_id"
        ).fetchall()


def test_claim_gives_the_spec_and_a_second_claim_gets_nothing(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1", lease_s=60)
    assert spec is not None
    assert (spec.match_id, spec.attempt, spec.seat_bot_ids, spec.game) == (mid, 1, (a, b), GAME)
    assert spec.game_string == "ladder_fixture(players=2,variant=a)"
    assert len(spec.seed) == 64 and len(spec.seed_commitment) == 64
    assert spec.time_control == {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 100}
    assert claim_match(pool, mid, "w2") is None  # F-11: redelivered task does nothing
    assert claim_match(pool, mid, "w1") is None
    with pool.connection() as conn:
        assert conn.execute("SELECT status, attempt, claimed_by FROM matches").fetchone() == ("running", 1, "w1")
        assert conn.execute("SELECT attempt, status, worker FROM match_attempts").fetchall() == [(1, "running", "w1")]
    with pytest.raises(MatchNotFoundError):
        claim_match(pool, 10**9, "w1")


def test_concurrent_claims_only_one_wins(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    barrier = threading.Barrier(4)
    got: list[Any] = []

    def claim(i: int) -> None:
        barrier.wait()
        got.append(claim_match(pool, mid, f"w{i}"))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(1 for g in got if g is not None) == 1
    assert count(pool, "SELECT count(*) FROM match_attempts") == 1


def test_record_twice_gives_one_result(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    result = make_result(spec, [1, 2])
    assert record_result(pool, mid, spec.attempt, result) is True
    assert record_result(pool, mid, spec.attempt, result) is False  # F-11
    assert count(pool, "SELECT count(*) FROM replays") == 1
    assert count(pool, "SELECT count(*) FROM rating_history") == 2
    assert _rating(pool, a) == (1516.0, 1)
    assert _rating(pool, b) == (1484.0, 1)
    assert claim_match(pool, mid, "w2") is None
    with pool.connection() as conn:
        m = conn.execute("SELECT status, result_seq IS NOT NULL, lease_until FROM matches").fetchone()
        att = conn.execute("SELECT status, ended_at IS NOT NULL FROM match_attempts").fetchall()
        seats = conn.execute(
            "SELECT seat, bot_id, rank, score, verdict, time_used_ms, decisions FROM seats ORDER BY seat"
        ).fetchall()
    assert m == ("finished", True, None)
    assert att == [("finished", True)]
    assert seats == [(0, a, 1, 10.0, "normal", 100, 20), (1, b, 2, 0.0, "normal", 101, 20)]
    assert replay_json(pool, mid) == result["replay_json"]


def test_concurrent_duplicate_results_record_once(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    barrier = threading.Barrier(3)
    outcomes: list[bool] = []

    def record() -> None:
        barrier.wait()
        outcomes.append(record_result(pool, mid, spec.attempt, make_result(spec, [2, 1])))

    threads = [threading.Thread(target=record) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == [False, False, True]
    assert _rating(pool, b) == (1516.0, 1)
    assert count(pool, "SELECT count(*) FROM replays") == 1


def test_stale_attempt_is_refused(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    first = claim_match(pool, mid, "w1")
    assert first is not None
    assert record_failed_attempt(pool, mid, 1, "infra_error", "referee died", max_attempts=3) == "planned"
    second = claim_match(pool, mid, "w2")
    assert second is not None and second.attempt == 2
    assert record_result(pool, mid, 1, make_result(first, [1, 2])) is False
    assert count(pool, "SELECT count(*) FROM ratings") == 0
    assert record_result(pool, mid, 2, make_result(second, [2, 1])) is True
    assert _rating(pool, b) == (1516.0, 1)
    # A late failure report for the old attempt changes nothing.
    assert record_failed_attempt(pool, mid, 1, "infra_error", "late", max_attempts=3) == "finished"


def test_unclaimed_match_refuses_results(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    fake = matches_mod.MatchSpec(mid, 0, "x", "s", (a, b), {})
    assert record_result(pool, mid, 0, make_result(fake, [1, 2])) is False
    assert count(pool, "SELECT count(*) FROM replays") == 0
    ghost = matches_mod.MatchSpec(10**9, 1, "x", "s", (a, b), {})
    with pytest.raises(MatchNotFoundError):
        record_result(pool, 10**9, 1, make_result(ghost, [1, 2]))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r["seats"][0].update(bot_id=r["seats"][1]["bot_id"]),
        lambda r: r["seats"].pop(),
        lambda r: r["seats"][0].update(rank=0),
        lambda r: r["seats"][0].update(verdict="asleep"),
        lambda r: r["seats"][0].update(time_used_ms=-5),
        lambda r: r.update(replay_json="{not json"),
        lambda r: r.update(replay_json=json.dumps({"match_id": -1})),
        lambda r: r.update(status="infra_error"),
        lambda r: r.pop("replay_json"),
        lambda r: r["seats"][0].update(debug_notes="a text, not notes"),
        lambda r: r["seats"][0].update(debug_notes=[[3, "ok"], [4]]),
        lambda r: r["seats"][0].update(debug_notes=[[-1, "before the first step"]]),
        lambda r: r["seats"][0].update(debug_notes=[[True, "a bool is no step"]]),
        lambda r: r["seats"][1].update(debug_notes=[[2, b"bytes"]]),
    ],
)
def test_malformed_results_write_nothing(pool: Any, mutate: Callable[[dict[str, Any]], None]) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    result = make_result(spec, [1, 2])
    mutate(result)
    with pytest.raises(ResultError):
        record_result(pool, mid, spec.attempt, result)
    assert count(pool, "SELECT count(*) FROM replays") == 0
    assert count(pool, "SELECT count(*) FROM ratings") == 0
    assert count(pool, "SELECT count(*) FROM seats WHERE rank IS NOT NULL") == 0
    assert count(pool, "SELECT count(*) FROM matches WHERE status = 'running'") == 1
    assert count(pool, "SELECT count(*) FROM seat_debug") == 0
    # The attempt can still record a good result.
    assert record_result(pool, mid, spec.attempt, make_result(spec, [1, 2])) is True


def test_a_seats_debug_notes_are_stored_apart_from_the_replay_cut_to_the_cap(pool: Any) -> None:
    """docs/bots.md, "Debug text": ``debug_notes`` go to ``seat_debug`` (one row per seat that has any),
    each text cut to 1,000 bytes again; the stored replay and its export hold none of it."""
    from ladder.seat_debug import notes_for_seat

    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "debug")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    result = make_result(spec, [1, 2])
    result["seats"][1]["debug_notes"] = [[1, "NOTE-one"], [3, "NOTE-" + "ü" * 900], [5, ""]]
    assert record_result(pool, mid, spec.attempt, result) is True
    with pool.connection() as conn:
        assert notes_for_seat(conn, mid, 0) == {}
        kept = notes_for_seat(conn, mid, 1)
        assert count(pool, "SELECT count(*) FROM seat_debug WHERE match_id = %s", (mid,)) == 1
    assert sorted(kept) == [1, 3] and kept[1] == "NOTE-one"
    assert len(kept[3].encode()) <= 1000 and kept[3].startswith("NOTE-üü") and kept[3].endswith("…[cut]")
    assert "NOTE-" not in (replay_json(pool, mid) or "") and "NOTE-" not in json.dumps(export_replay(pool, mid))


def test_a_seats_debug_notes_stop_at_the_seat_cap_whatever_the_worker_hands_over(pool: Any) -> None:
    """docs/bots.md, "Debug text": of one seat in one match at most 100,000 bytes of notes are kept, the
    note that would go beyond says so, and later ones are not kept. The referee does it; the ladder, which
    does not trust the wire, holds a result to the same cap: 3,000 notes of 1,000 bytes (3 MB) handed
    over for one seat store 100 full notes and the marker, and the stored frame stays within what
    ``notes_for_seat`` reads."""
    from ladder.seat_debug import MAX_RAW_BYTES, notes_for_seat
    from proto.contract import DEBUG_MAX_SEAT_BYTES

    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "debug-flood")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    result = make_result(spec, [1, 2])
    result["seats"][0]["debug_notes"] = [[i, "x" * 1000] for i in range(3000)]
    assert record_result(pool, mid, spec.attempt, result) is True
    with pool.connection() as conn:
        kept = notes_for_seat(conn, mid, 0)
        (raw_bytes,) = conn.execute("SELECT raw_bytes FROM seat_debug WHERE match_id = %s", (mid,)).fetchone()
    assert sorted(kept) == list(range(101))  # 100 notes of 1,000 bytes fill the cap; the 101st says so
    assert all(kept[i] == "x" * 1000 for i in range(100))
    assert kept[100] == f"[debug text over {DEBUG_MAX_SEAT_BYTES} bytes in this match: the rest is not kept]"
    assert raw_bytes <= MAX_RAW_BYTES


def _wait_for_lock_waiters(url: str, n: int, timeout_s: float = 10.0,
                           finished: Callable[[], int] = lambda: 0) -> None:
    """Wait until ``n`` other backends of this database wait on a lock, counting as one each job
    that ``finished()`` says is already done (a result held back by the plan order, ladder/rating_order.py,
    commits without touching the ratings, so it never waits)."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            waiting = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            ).fetchone()[0]
            if waiting + finished() >= n:
                return
            time.sleep(0.01)
        rows = conn.execute("SELECT pid, state, wait_event_type, wait_event, left(query, 80) FROM pg_stat_activity "
                            "WHERE datname = current_database()").fetchall()
    raise AssertionError(f"{n} transactions never waited on the lock together: {rows}")


def _record_together(pool: Any, url: str, block_bot: int, jobs: list[tuple[int, int, dict[str, Any]]]) -> list[Any]:
    """Run record_result for every job in its own thread, all inside their transactions at once.

    A blocker transaction inserts the rating row of ``block_bot`` without
    committing, so every job's transaction stops on it; once all are waiting
    the blocker rolls back and they race for the rows for real.
    """
    out: list[Any] = [None] * len(jobs)
    blocker = psycopg.connect(url)
    blocker.execute("INSERT INTO ratings (bot_id, game, elo) VALUES (%s, %s, 1500)", (block_bot, GAME))

    def run(i: int) -> None:
        mid, attempt, result = jobs[i]
        try:
            out[i] = record_result(pool, mid, attempt, result)
        except Exception as exc:  # pragma: no cover - reported by the assertion
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    try:
        _wait_for_lock_waiters(url, len(jobs), finished=lambda: sum(not t.is_alive() for t in threads))
    finally:
        blocker.rollback()
        blocker.close()
    for t in threads:
        t.join(30)
    return out


def test_f16_concurrent_wins_of_one_bot(pool: Any, migrated_url: str) -> None:
    x, y, z = make_bots(pool, 3)
    m1, m2 = _duel(pool, x, y, "x-y"), _duel(pool, x, z, "x-z")
    s1, s2 = claim_match(pool, m1, "w1"), claim_match(pool, m2, "w2")
    assert s1 is not None and s2 is not None
    out = _record_together(pool, migrated_url, x, [(m1, 1, make_result(s1, [1, 2])), (m2, 1, make_result(s2, [1, 2]))])
    assert out == [True, True]
    elo_x, games_x = _rating(pool, x)
    assert games_x == 2
    assert elo_x == pytest.approx(1531.26, abs=0.01)
    history = _history(pool)
    by_match: dict[int, list[tuple[Any, ...]]] = {}
    for row in history:
        by_match.setdefault(row[0], []).append(row)
    assert set(by_match) == {m1, m2}
    for rows in by_match.values():
        assert sum(r[5] for r in rows) == pytest.approx(0.0, abs=1e-9)
        assert len({r[2] for r in rows}) == 1
    x_rows = [r for r in history if r[1] == x]  # in result_seq order
    assert [r[3] for r in x_rows] == [1500.0, 1516.0]  # stored elo_before = rating when applied
    assert x_rows[0][4] == x_rows[1][3] and x_rows[1][4] == elo_x
    first = x_rows[0][0]
    loser_first = y if first == m1 else z
    loser_second = z if first == m1 else y
    assert _rating(pool, loser_first)[0] == 1484.0
    assert _rating(pool, loser_second)[0] == pytest.approx(1500 - (elo_x - 1516.0))


def test_f17_a_vs_b_and_b_vs_a_at_once(pool: Any, migrated_url: str) -> None:
    a, b = make_bots(pool, 2)
    m1, m2 = _duel(pool, a, b, "a-b"), _duel(pool, b, a, "b-a")
    s1, s2 = claim_match(pool, m1, "w1"), claim_match(pool, m2, "w2")
    assert s1 is not None and s2 is not None
    # Each match won by its seat 0: a wins one, b wins the other.
    out = _record_together(pool, migrated_url, a, [(m1, 1, make_result(s1, [1, 2])), (m2, 1, make_result(s2, [1, 2]))])
    assert out == [True, True]
    history = _history(pool)
    assert len(history) == 4
    for bot in (a, b):
        rows = [r for r in history if r[1] == bot]
        assert rows[0][3] == 1500.0 and rows[1][3] == rows[0][4]
        assert _rating(pool, bot) == (rows[1][4], 2)
    assert _rating(pool, a)[0] + _rating(pool, b)[0] == pytest.approx(3000.0)


def test_deadlock_is_retried_and_applied_once(pool: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    real = rating_order_mod._apply
    calls = {"n": 0}

    def flaky(*args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            raise psycopg.errors.DeadlockDetected("simulated deadlock")
        if calls["n"] == 2:
            raise psycopg.errors.SerializationFailure("simulated serialization failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(rating_order_mod, "_apply", flaky)
    assert record_result(pool, mid, spec.attempt, make_result(spec, [1, 2])) is True
    assert calls["n"] == 3
    assert _rating(pool, a) == (1516.0, 1)
    assert count(pool, "SELECT count(*) FROM replays") == 1
    assert count(pool, "SELECT count(*) FROM rating_history") == 2


def test_infra_errors_requeue_up_to_the_limit(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    statuses = []
    for attempt in (1, 2, 3):
        spec = claim_match(pool, mid, f"w{attempt}")
        assert spec is not None and spec.attempt == attempt
        statuses.append(record_failed_attempt(pool, mid, attempt, "infra_error", f"boom {attempt}", max_attempts=3))
    assert statuses == ["planned", "planned", "failed"]
    assert claim_match(pool, mid, "w9") is None
    with pool.connection() as conn:
        rows = conn.execute("SELECT attempt, status, error FROM match_attempts ORDER BY attempt").fetchall()
    assert rows == [(1, "infra_error", "boom 1"), (2, "infra_error", "boom 2"), (3, "infra_error", "boom 3")]
    assert count(pool, "SELECT count(*) FROM ratings") == 0  # never charged to a bot


def test_no_shows_requeue_then_abort(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    assert record_failed_attempt(pool, mid, 1, "aborted_no_show", "bot b absent", max_attempts=2) == "planned"
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    assert record_failed_attempt(pool, mid, 2, "aborted_no_show", "bot b absent", max_attempts=2) == "aborted_no_show"
    assert claim_match(pool, mid, "w1") is None
    assert count(pool, "SELECT count(*) FROM ratings") == 0
    with pytest.raises(ValueError):
        record_failed_attempt(pool, mid, 2, "finished", None, max_attempts=2)


def test_expired_lease_is_requeued_by_the_reaper(pool: Any) -> None:
    a, b, c = make_bots(pool, 3)
    m1, m2 = _duel(pool, a, b, "1"), _duel(pool, a, c, "2")
    assert claim_match(pool, m1, "w1", lease_s=0.05) is not None
    assert claim_match(pool, m2, "w1", lease_s=60) is not None
    later = datetime.now(UTC) + timedelta(seconds=1)  # the 50 ms lease is over, the 60 s one is not
    assert requeue_expired(pool, max_attempts=3, now=later) == {m1: "planned"}
    assert requeue_expired(pool, max_attempts=3, now=later) == {}
    spec = claim_match(pool, m1, "w2")
    assert spec is not None and spec.attempt == 2
    with pool.connection() as conn:
        rows = conn.execute("SELECT status FROM match_attempts WHERE match_id = %s ORDER BY attempt", (m1,)).fetchall()
    assert rows == [("infra_error",), ("running",)]


def test_reaper_stops_at_the_limit_and_claims_take_over_expired_leases(pool: Any) -> None:
    a, b, c = make_bots(pool, 3)
    m1, m2 = _duel(pool, a, b, "1"), _duel(pool, a, c, "2")
    assert claim_match(pool, m1, "w1", lease_s=0.01) is not None
    later = datetime.now(UTC) + timedelta(seconds=1)  # a 10 ms lease has expired by then
    assert requeue_expired(pool, max_attempts=1, now=later) == {m1: "failed"}
    # A claim finding an expired lease takes the match over as a new attempt.
    first = claim_match(pool, m2, "w1", lease_s=0.01)
    assert first is not None
    second = claim_match(pool, m2, "w2", lease_s=60, now=datetime.now(UTC) + timedelta(seconds=1))
    assert second is not None and second.attempt == 2
    assert record_result(pool, m2, 1, make_result(first, [1, 2])) is False
    assert extend_lease(pool, m2, 1) is False
    assert extend_lease(pool, m2, 2, lease_s=120) is True


def test_worker_coming_back_under_its_name(pool: Any) -> None:
    a, b, c = make_bots(pool, 3)
    m1, m2 = _duel(pool, a, b, "1"), _duel(pool, a, c, "2")
    assert claim_match(pool, m1, "worker-7", lease_s=600) is not None
    assert claim_match(pool, m2, "worker-8", lease_s=600) is not None
    assert requeue_worker(pool, "worker-7") == {m1: "planned"}  # F-13
    spec = claim_match(pool, m1, "worker-7")
    assert spec is not None and spec.attempt == 2


def test_f14_f15_worker_dies_after_six_of_ten(pool: Any, migrated_url: str) -> None:
    bots = make_bots(pool, 5)
    tid = create_tournament(pool, name="batch", game=GAME, bot_ids=bots)
    batch = plan_round_robin(pool, tid)[:10]
    specs = [claim_match(pool, mid, "w1", lease_s=0.3) for mid in batch]
    assert all(s is not None for s in specs)
    recorded = {}
    for i, spec in enumerate(specs[:6]):
        ranks = [1, 2] if i % 3 else [1, 1]
        result = make_result(spec, ranks)
        assert record_result(pool, spec.match_id, spec.attempt, result)
        recorded[spec.match_id] = (result, ranks)
    # The seventh write fails half-way (a malformed result): the six stay, nothing of the seventh is written.
    bad = make_result(specs[6], [1, 2])
    bad["seats"][1]["bot_id"] = bots[0] if specs[6].seat_bot_ids[1] != bots[0] else bots[1]
    with pytest.raises(ResultError):
        record_result(pool, specs[6].match_id, 1, bad)
    # ... and the worker dies. After a restart (new pool), everything finished is readable in full.
    pool.close()
    fresh = make_pool(migrated_url)
    try:
        requeued = requeue_expired(fresh, max_attempts=3, now=datetime.now(UTC) + timedelta(seconds=1))
        assert requeued == {s.match_id: "planned" for s in specs[6:]}
        for mid, (result, ranks) in recorded.items():
            record = export_replay(fresh, mid)
            assert record["replay"] == json.loads(result["replay_json"])
            assert replay_json(fresh, mid) == result["replay_json"]
            assert record["match"]["status"] == "finished" and record["match"]["seed"]
            assert [s["rank"] for s in record["seats"]] == ranks
            assert record["replay_raw_bytes"] == len(result["replay_json"].encode())
        status = tournament_status(fresh, tid)
        assert (status["finished"], status["planned"], status["running"]) == (6, 14, 0)
        # Standings come from rows: 6 matches, 4 won by seat 0 and 2 drawn.
        standings = tournament_standings(fresh, tid)
        assert sum(r.matches for r in standings) == 12
        assert sum(r.wins for r in standings) == 4 and sum(r.draws for r in standings) == 4
        assert sum(r.points for r in standings) == 6.0
        expected_points: dict[int, float] = {}
        for result, ranks in recorded.values():
            for seat, rank in zip(result["seats"], ranks, strict=True):
                other = ranks[1 - seat["seat"]]
                expected_points[seat["bot_id"]] = expected_points.get(seat["bot_id"], 0.0) + (
                    1.0 if rank < other else 0.5 if rank == other else 0.0)
        assert {r.bot_id: r.points for r in standings if r.matches} == expected_points
        assert count(fresh, "SELECT sum(games) FROM ratings") == 12
        # The four others run again as new attempts.
        again = [claim_match(fresh, s.match_id, "w2") for s in specs[6:]]
        assert [s.attempt for s in again if s is not None] == [2, 2, 2, 2]
        for s in again:
            assert s is not None
            assert record_result(fresh, s.match_id, s.attempt, make_result(s, [2, 1]))
        assert tournament_status(fresh, tid)["finished"] == 10
    finally:
        fresh.close()


def test_f8_database_lost_while_recording(pool: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "k")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    real = rating_order_mod._apply

    def die(conn: Any, *args: Any) -> int:
        conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")  # the server drops us mid-transaction
        return real(conn, *args)

    monkeypatch.setattr(rating_order_mod, "_apply", die)
    with pytest.raises(DatabaseUnavailableError):
        record_result(pool, mid, spec.attempt, make_result(spec, [1, 2]))
    assert count(pool, "SELECT count(*) FROM replays") == 0  # the pool replaced the broken connection
    assert count(pool, "SELECT count(*) FROM ratings") == 0
    monkeypatch.setattr(rating_order_mod, "_apply", real)
    assert record_result(pool, mid, spec.attempt, make_result(spec, [1, 2])) is True
    assert record_result(pool, mid, spec.attempt, make_result(spec, [1, 2])) is False
    assert count(pool, "SELECT count(*) FROM rating_history") == 2


def test_unavailability_is_told_apart_from_retryable_errors() -> None:
    assert is_unavailable(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert not is_unavailable(psycopg.errors.SerializationFailure("could not serialize"))
    assert not is_unavailable(psycopg.errors.DeadlockDetected("deadlock"))
    assert not is_unavailable(ValueError("x"))


def test_an_attempt_after_a_no_show_keeps_its_deal(pool: Any) -> None:
    """A no-show showed nobody a card (the referee starts a match only once every seat is bound), so
    the next attempt keeps the seed, and a duplicate deal's rotations keep sharing it; after an
    attempt that was played (``infra_error``) the next one is dealt a new seed (docs/bots.md)."""
    import hashlib

    a, b = make_bots(pool, 2)
    mid = _duel(pool, a, b, "deal")
    first = claim_match(pool, mid, "w1")
    assert first is not None
    assert record_failed_attempt(pool, mid, 1, "aborted_no_show", "bot b absent", max_attempts=4) == "planned"
    second = claim_match(pool, mid, "w1")
    assert second is not None and second.seed == first.seed
    assert record_failed_attempt(pool, mid, 2, "infra_error", "referee died", max_attempts=4) == "planned"
    third = claim_match(pool, mid, "w1")
    assert third is not None and third.seed != first.seed
    assert third.seed_commitment == hashlib.sha256(third.seed.encode("ascii")).hexdigest()
    with pool.connection() as conn:
        rows = conn.execute("SELECT attempt, seed FROM match_attempts WHERE match_id = %s ORDER BY attempt",
                            (mid,)).fetchall()
    assert rows == [(1, first.seed), (2, first.seed), (3, third.seed)]
