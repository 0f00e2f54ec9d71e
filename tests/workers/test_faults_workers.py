"""Workers under faults: leases, the reaper, a worker coming back, referee failover,
a database that goes away (docs/architecture.md, "Exactly-once recording"; docs/faults.md F-08, F-10, F-13, F-14).

Tasks are called directly (Celery's own machinery is exercised in
tests/workers/test_workers.py and, with SIGKILLs, in tests/e2e/test_faults_e2e.py); the
referee is real (in-process, gRPC over loopback, in a background thread).
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import wait_until

from bots.misbehaving import SlowBot
from bots.reference import RandomBot
from ladder import bots as ladder_bots
from ladder import db as ladder_db
from ladder import matches as ladder_matches
from ladder import tournaments
from referee.testing import SERVICE_TOKEN, ThreadedReferee

register_toy()

TC = {"base_ms": 0, "increment_ms": 0, "cap_ms": 5000, "margin_ms": 200}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, migrated_url: str) -> Iterator[list[int]]:
    """Point the task module at the test database; capture queued tasks instead of sending them."""
    import workers.tasks as tasks

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_NO_SHOW_TIMEOUT_MS", "3000")
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "0")
    monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
    monkeypatch.setattr(tasks, "_pool", None)
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda args, countdown=0, **_: queued.append(args[0]))
    monkeypatch.setattr(tasks.run_match, "delay", lambda match_id: queued.append(match_id))
    yield queued
    if tasks._pool is not None:
        tasks._pool.close()
        tasks._pool = None


def two_bots(pool: Any) -> tuple[tuple[int, str], tuple[int, str]]:
    return ladder_bots.register_bot(pool, "fw-a"), ladder_bots.register_bot(pool, "fw-b")


def duel(pool: Any, a: int, b: int, game: str = "toy(players=2,turns=4)") -> int:
    return tournaments.plan_match(pool, game_string=game, bot_ids=[a, b], plan_key=secrets.token_hex(6),
                                  time_control=TC)


def row(pool: Any, sql: str, *params: Any) -> Any:
    with pool.connection() as conn:
        return conn.execute(sql, params).fetchone()


def test_f10_the_lease_is_renewed_while_a_match_runs_so_the_reaper_leaves_it_alone(pool, env, monkeypatch):
    """A 2-second lease and a match of ~4 s: the worker renews the lease on the referee's
    events; the reaper, run meanwhile, requeues nothing; one result."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    monkeypatch.setenv("PARTERRE_LEASE_S", "2")
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: SlowBot(delay_ms=250)},
                         progress_interval_ms=200) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        mid = duel(pool, a, b, "toy(players=2,turns=16)")
        out: list[str] = []
        worker = threading.Thread(target=lambda: out.append(tasks.run_match(mid)))
        worker.start()
        leases = set()
        reaped = []
        while worker.is_alive():
            time.sleep(0.5)
            leases.add(row(pool, "SELECT lease_until FROM matches WHERE id = %s", mid)[0])
            reaped.append(tasks.reap())
        worker.join()
    assert out == ["finished"]
    assert len(leases - {None}) >= 3  # renewed several times
    assert all(r["expired"] == 0 and r["overdue"] == 0 for r in reaped)
    assert row(pool, "SELECT count(*) FROM match_attempts WHERE match_id = %s", mid)[0] == 1


def test_f10_a_lost_worker_is_reaped_and_its_match_played_once(pool, env, monkeypatch):
    """A worker claims and vanishes (no renewals): after the lease the reaper marks the attempt
    infra_error and queues the match; the next run records the one result."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    mid = duel(pool, a, b)
    ladder_matches.claim_match(pool, mid, "ghost#0", lease_s=0.5)
    # the reaper runs once the lease is over by the database's clock (the one it judges leases by)
    wait_until(lambda: row(pool, "SELECT lease_until < now() FROM matches WHERE id = %s", mid)[0], 10)
    assert tasks.reap()["expired"] == 1 and env == [mid]
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert tasks.run_match(mid) == "finished"
        assert tasks.run_match(mid) == "skipped"
    attempts = [r for r in pool.connection().__enter__().execute(
        "SELECT attempt, status, worker FROM match_attempts WHERE match_id = %s ORDER BY attempt", (mid,))]
    assert [(x[0], x[1]) for x in attempts] == [(1, "infra_error"), (2, "finished")]
    assert row(pool, "SELECT count(*) FROM rating_history WHERE match_id = %s", mid)[0] == 2


def test_f10_a_worker_whose_claim_was_taken_over_stops_and_records_nothing(pool, env, monkeypatch):
    """The reaper requeued an overdue match while its worker still ran it: at its next lease
    renewal the worker cancels the referee call; only the newer attempt may record."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    monkeypatch.setenv("PARTERRE_LEASE_S", "2")
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: SlowBot(delay_ms=200)},
                         progress_interval_ms=100) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        mid = duel(pool, a, b, "toy(players=2,turns=30)")
        out: list[str] = []
        worker = threading.Thread(target=lambda: out.append(tasks.run_match(mid)))
        worker.start()
        # the worker has claimed it more than 0.1 s ago and the referee is playing it
        wait_until(lambda: mid in ref.core.rooms and row(
            pool, "SELECT status = 'running' AND started_at < now() - interval '0.1 s' FROM matches WHERE id = %s",
            mid)[0], 30, 0.05, what="match under way at the referee")
        assert ladder_matches.requeue_overdue(pool, 0.1) == {mid: "planned"}
        worker.join(20)
        assert out == ["superseded"]
        wait_until(lambda: not ref.core.rooms, 5, 0.05, what="the referee to end that attempt")
    assert row(pool, "SELECT status FROM matches WHERE id = %s", mid)[0] == "planned"
    assert row(pool, "SELECT count(*) FROM rating_history")[0] == 0


def test_f13_a_worker_back_under_its_name_requeues_its_old_attempts_at_once(pool, env, monkeypatch):
    """F-13: a worker that lost its connections (or was restarted) comes back as the same
    node: its old attempts are ended (infra_error) and queued at start-up, not refused
    and not left waiting for their leases; it then claims them like any other work."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    m1, m2, m3 = duel(pool, a, b), duel(pool, b, a), duel(pool, a, b)
    ladder_matches.claim_match(pool, m1, "node-7#0", lease_s=600)
    ladder_matches.claim_match(pool, m2, "node-7#1", lease_s=600)
    ladder_matches.claim_match(pool, m3, "node-70#0", lease_s=600)  # another node: untouched
    # the whole node restarts: celery's worker_ready signal
    monkeypatch.setattr(tasks, "_node", "node-7")

    class Sender:
        hostname = "node-7"

    tasks._node_ready(sender=Sender())
    assert sorted(env) == [m1, m2]
    assert [row(pool, "SELECT status FROM matches WHERE id = %s", m)[0] for m in (m1, m2, m3)] == [
        "planned", "planned", "running"]
    assert row(pool, "SELECT error FROM match_attempts WHERE match_id = %s", m1)[0] == "worker node-7#* restarted"
    # one pool process is replaced (its predecessor was SIGKILLed): worker_process_init in the child
    ladder_matches.claim_match(pool, m1, "node-7#0", lease_s=600)
    monkeypatch.setattr(tasks, "_slot", "")
    import billiard.process

    class Proc:
        index = 0

    monkeypatch.setattr(billiard.process, "current_process", lambda: Proc())
    tasks._child_started(sender="node-7")
    assert tasks._worker_name() == "node-7#0"
    assert row(pool, "SELECT status, attempt FROM matches WHERE id = %s", m1) == ("planned", 2)
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert tasks.run_match(m1) == "finished"  # the same name claims it again
    assert row(pool, "SELECT claimed_by, attempt FROM matches WHERE id = %s", m1) == ("node-7#0", 3)


def test_reaper_requeues_overdue_and_lost_planned_matches(pool, env, monkeypatch):
    import workers.tasks as tasks

    (a, _), (b, _) = two_bots(pool)
    overdue, lost, fresh = duel(pool, a, b), duel(pool, b, a), duel(pool, a, b)
    ladder_matches.claim_match(pool, overdue, "w#0", lease_s=3600)
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET started_at = now() - interval '2 hours' WHERE id = %s", (overdue,))
        conn.execute("UPDATE matches SET created_at = now() - interval '1 hour' WHERE id = %s", (lost,))
    monkeypatch.setenv("PARTERRE_MAX_MATCH_DURATION_S", "60")
    monkeypatch.setattr(tasks, "MAX_MATCH_DURATION_S", 60)
    monkeypatch.setattr(tasks, "_queue_length", lambda queue: 0)
    out = tasks.reap()
    assert out == {"expired": 0, "overdue": 1, "stale_planned": 1, "queued": 2}
    assert sorted(env) == sorted([overdue, lost]) and fresh not in env
    assert row(pool, "SELECT status, error FROM match_attempts WHERE match_id = %s", overdue)[0] == "infra_error"
    env.clear()
    monkeypatch.setattr(tasks, "_queue_length", lambda queue: 5)  # a busy queue: planned ones are just waiting
    assert tasks.reap()["stale_planned"] == 0 and env == []


def test_f08_failover_to_the_next_referee_and_no_referee_at_all(pool, env, monkeypatch):
    """Several referee addresses: an unreachable one is skipped (nothing was played there);
    none reachable is not an attempt (docs/faults.md F-22): the claim is given back, unrated,
    no verdict, and the match queued again."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    mid = duel(pool, a, b)
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", f"127.0.0.1:1,{ref.address}")
        assert tasks.run_match(mid) == "finished"
    other = duel(pool, b, a)
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:1,127.0.0.1:2")
    assert tasks.run_match(other) == "waiting_for_referee"
    assert env == [other]
    state = row(pool, "SELECT status, attempt, referee_wait_tries FROM matches WHERE id = %s", other)
    assert state == ("planned", 0, 1)
    assert "no referee reachable" in row(pool, "SELECT referee_wait_error FROM matches WHERE id = %s", other)[0]
    assert row(pool, "SELECT count(*) FROM match_attempts WHERE match_id = %s", other)[0] == 0
    assert row(pool, "SELECT count(*) FROM seats WHERE match_id = %s AND verdict IS NOT NULL", other)[0] == 0


def test_f08_database_down_when_claiming_is_retried_not_lost(pool, env, monkeypatch):
    """The database is unreachable when the task starts: the task asks Celery for a retry with
    backoff (instead of failing and leaving the match planned with no task), and the retried
    delivery plays the match once the database is back."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    mid = duel(pool, a, b)
    real = ladder_matches.claim_match
    down = {"on": True}

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if down["on"]:
            raise ladder_db.DatabaseUnavailableError("connection refused (test)")
        return real(*args, **kwargs)

    class Retry(Exception):
        pass

    asked: list[float] = []

    def retry(countdown: float = 0, exc: BaseException | None = None, **_: Any) -> Exception:
        asked.append(countdown)
        assert isinstance(exc, ladder_db.DatabaseUnavailableError)
        return Retry()

    monkeypatch.setattr(ladder_matches, "claim_match", flaky)
    monkeypatch.setattr(tasks.run_match, "retry", retry)
    with pytest.raises(Retry):
        tasks.run_match(mid)
    assert len(asked) == 1 and 0.5 <= asked[0] <= 40
    assert row(pool, "SELECT status, attempt FROM matches WHERE id = %s", mid) == ("planned", 0)
    down["on"] = False
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert tasks.run_match(mid) == "finished"


def test_f01_a_silent_bot_through_the_worker_one_result_one_rating_update(pool, env, monkeypatch):
    """F-01 end to end: the silent bot gets `timeout` at the referee's deadline, the match is
    recorded once with one rating update, and the referee goes on with the next queued match."""
    import workers.tasks as tasks
    from bots.misbehaving import SilentBot

    (a, ta), (b, tb) = two_bots(pool)
    c, tc = ladder_bots.register_bot(pool, "fw-c")
    bots = {ta: RandomBot(seed=1, max_concurrent_matches=2), tb: SilentBot(), tc: RandomBot(seed=3)}
    with ThreadedReferee({ta: a, tb: b, tc: c}, bots=bots) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        silent_match = tournaments.plan_match(pool, game_string="toy(players=2,turns=4)", bot_ids=[a, b],
                                              plan_key="silent", time_control={"cap_ms": 1000, "margin_ms": 100})
        nxt = duel(pool, a, c)
        t0 = time.monotonic()
        assert tasks.run_match(silent_match) == "finished"
        # the referee waited out the 1 s cap (not less); that it then ended the decision, rather than wait on
        # the bot's pace, is the `timeout` verdict below
        assert time.monotonic() - t0 >= 1.0
        assert tasks.run_match(silent_match) == "skipped"
        assert tasks.run_match(nxt) == "finished"
    with pool.connection() as conn:
        seats = conn.execute("SELECT bot_id, rank, verdict FROM seats WHERE match_id = %s ORDER BY seat",
                             (silent_match,)).fetchall()
        history = conn.execute("SELECT bot_id, delta FROM rating_history WHERE match_id = %s ORDER BY bot_id",
                               (silent_match,)).fetchall()
    assert seats == [(a, 1, "normal"), (b, 2, "timeout")]
    assert len(history) == 2 and history[0][1] == pytest.approx(16.0) and history[1][1] == pytest.approx(-16.0)
    assert row(pool, "SELECT count(*) FROM replays WHERE match_id = %s", silent_match)[0] == 1


def test_f08_infra_errors_back_off_and_stop_at_the_attempt_limit(pool, env, monkeypatch):
    """F-08: each new attempt waits longer (retry delay x attempt number); the limit ends it as `failed`.
    The referee is reachable but refuses the call (a wrong service token): an error of the call
    other than UNAVAILABLE counts as an attempt."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    countdowns: list[float] = []
    monkeypatch.setattr(tasks.run_match, "apply_async",
                        lambda args, countdown=0, **_: countdowns.append(countdown))
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "5")
    monkeypatch.setenv("PARTERRE_MATCH_ATTEMPTS", "3")
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", "not-the-service-token")
    mid = duel(pool, a, b)
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert [tasks.run_match(mid) for _ in range(3)] == ["requeued", "requeued", "failed"]
    assert countdowns == [5.0, 10.0]
    assert row(pool, "SELECT count(*) FROM ratings")[0] == 0
    errors = row(pool, "SELECT array_agg(error ORDER BY attempt) FROM match_attempts WHERE match_id = %s", mid)[0]
    assert len(errors) == 3 and all("UNAUTHENTICATED" in e for e in errors)


def test_f22_no_referee_backs_off_exponentially_and_the_match_plays_once_one_is_back(pool, env, monkeypatch):
    """Five claims that find no referee are five backoffs (exponential, with
    jitter, capped), not attempts; when a referee answers, the match plays as attempt 1 and its
    waiting is cleared."""
    import workers.tasks as tasks
    from parterre.demo import free_port

    (a, ta), (b, tb) = two_bots(pool)
    countdowns: list[float] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda args, countdown=0, **_: countdowns.append(countdown))
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", f"127.0.0.1:{free_port()}")  # nothing listens there
    monkeypatch.setenv("PARTERRE_MATCH_ATTEMPTS", "2")
    mid = duel(pool, a, b)
    assert [tasks.run_match(mid) for _ in range(5)] == ["waiting_for_referee"] * 5
    ceilings = [1, 2, 4, 8, 15]  # 1 s doubling, capped at 15 s (the defaults)
    assert all(c / 2 <= got <= c for got, c in zip(countdowns, ceilings, strict=True)), countdowns
    assert row(pool, "SELECT status, attempt, referee_wait_tries, referee_wait_since IS NOT NULL FROM matches "
                     "WHERE id = %s", mid) == ("planned", 0, 5, True)
    assert row(pool, "SELECT count(*) FROM match_attempts")[0] == 0
    with ThreadedReferee({ta: a, tb: b}, bots={ta: RandomBot(seed=1), tb: RandomBot(seed=2)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert tasks.run_match(mid) == "finished"
    assert row(pool, "SELECT status, attempt, referee_wait_tries, referee_wait_since FROM matches WHERE id = %s",
               mid) == ("finished", 1, 0, None)
    assert row(pool, "SELECT array_agg(status) FROM match_attempts WHERE match_id = %s", mid)[0] == ["finished"]


def test_f22_a_match_that_started_and_then_lost_its_referee_is_an_attempt(pool, env, monkeypatch):
    """The other side of the line: the referee stops after the match started (bots seated, the
    first request sent): that attempt counts (infra_error, attempt 1), no verdict against a bot."""
    import workers.tasks as tasks

    (a, ta), (b, tb) = two_bots(pool)
    mid = duel(pool, a, b)
    monkeypatch.setenv("PARTERRE_MATCH_ATTEMPTS", "3")
    out: list[str] = []
    ref = ThreadedReferee({ta: a, tb: b}, bots={ta: SlowBot(delay_ms=3000), tb: SlowBot(delay_ms=3000)}).start()
    try:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        worker = threading.Thread(target=lambda: out.append(tasks.run_match(mid)))
        worker.start()
        deadline = time.monotonic() + 10
        while not ref.call(lambda: any(room.started for room, _ in ref.core.rooms.values())):
            assert time.monotonic() < deadline, "the match never started"
            time.sleep(0.05)
    finally:
        ref.stop()
    worker.join(20)
    assert out == ["requeued"]
    assert row(pool, "SELECT status, attempt FROM matches WHERE id = %s", mid) == ("planned", 1)
    assert row(pool, "SELECT array_agg(status) FROM match_attempts WHERE match_id = %s", mid)[0] == ["infra_error"]
    assert row(pool, "SELECT count(*) FROM ratings")[0] == 0


class _Blackhole:
    """A TCP forwarder that can go silent: after :meth:`cut`, bytes in either direction are read and
    dropped, and no connection is closed (no FIN, no RST), as when a node loses power or its
    container's network namespace is torn down by ``kill -9``."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.cut_event = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        self.cut_event.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            if not self.cut_event.is_set():
                try:
                    dst.sendall(data)
                except OSError:
                    return

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def test_f08_a_referee_that_vanishes_without_closing_is_found_by_its_silence_not_the_match_deadline():
    """The referee's host goes silent mid-match (no FIN, no RST: a killed container, a lost node).
    The referee sends an event at least every progress interval (here 300 ms); the worker cancels a
    call silent for 1.5 s: ``UNAVAILABLE`` after the match started, an :class:`InfraError` (an
    attempt, no verdict), not a wait for the call's deadline (``max_duration_ms`` + 30 s = 90 s)."""
    from workers.referee_client import InfraError, RefereeUnavailableError, run_match

    bots = {"tok-a": SlowBot(delay_ms=300), "tok-b": SlowBot(delay_ms=300)}
    with ThreadedReferee({"tok-a": 1, "tok-b": 2}, bots=bots, progress_interval_ms=300) as ref:
        hole = _Blackhole(ref.address)
        events: list[str] = []
        errors: list[BaseException] = []

        def call() -> None:
            try:
                run_match(hole.address, SERVICE_TOKEN, match_id=1, attempt=1, game_string="toy(players=2,turns=50)",
                          seed="s", seat_bot_ids=[1, 2], time_control=TC, no_show_timeout_ms=3000,
                          max_duration_ms=60_000, on_event=lambda ev: events.append(ev.WhichOneof("event")) or True,
                          silence_ms=1500)
            except BaseException as exc:  # the assertion below names it
                errors.append(exc)

        worker = threading.Thread(target=call)
        worker.start()
        try:
            wait_until(lambda: "started" in events, 10, what="the match started")
            hole.cut()
            cut_at = time.monotonic()
            worker.join(30)
            found_s = time.monotonic() - cut_at
        finally:
            hole.close()
    assert not worker.is_alive(), "the worker still waits on a referee that vanished"
    assert len(errors) == 1 and isinstance(errors[0], InfraError), errors
    assert not isinstance(errors[0], RefereeUnavailableError), "the match had started: it is an attempt"
    assert "silent for 1.5 s" in str(errors[0]) and "referee" in str(errors[0]), errors[0]
    assert found_s < 10, f"found after {found_s:.1f} s"


def test_d02_a_result_held_through_an_outage_is_tried_at_most_2_s_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The result arrived, then the database went away: no referee event renews the lease any more, and
    the reaper gives a claim a whole lease (6 s in the outage test) of reachable time. The tries were 0.5,
    1, 2, 4, 8 and 15 s apart, so a try could come 15 s after the outage, after the reaper had expired the
    live worker's claim. Now at most 2 s apart, for RECORD_WAIT_S in all (a virtual clock)."""
    import workers.tasks as tasks
    from ladder.errors import DatabaseUnavailableError

    now = [0.0]
    slept: list[float] = []
    down_until = 20.0  # a 20 s outage from the moment the result arrived

    def record(pool: Any, match_id: int, attempt: int, result: Any) -> bool:
        if now[0] < down_until:
            raise DatabaseUnavailableError("cut")
        return True

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    monkeypatch.setattr(tasks.ladder_matches, "record_result", record)
    spec = type("Spec", (), {"match_id": 7, "attempt": 1})()
    outcome = type("Outcome", (), {"as_result": lambda self: {}})()
    assert tasks._record(None, spec, outcome, {}, sleep=sleep, clock=lambda: now[0]) == "finished"
    assert max(slept) <= 2.0 and now[0] - down_until <= 2.0, slept
    now[0], slept[:] = 0.0, []
    down_until = 10_000.0  # never back: give up once RECORD_WAIT_S has passed, the lease runs out
    assert tasks._record(None, spec, outcome, {}, sleep=sleep, clock=lambda: now[0]) == "unrecorded"
    assert tasks.RECORD_WAIT_S - 2.0 <= now[0] <= tasks.RECORD_WAIT_S
