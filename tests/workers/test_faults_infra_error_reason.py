"""docs/faults.md F-27, the worker's side: an attempt the referee ends as
``infra_error`` keeps the referee's own reason in ``match_attempts.error``
(before: only "referee reported infra_error").

Given a migrated database and bots on an in-process referee, when the worker's
``run_match`` plays a match that the referee's watchdog ends (the worker's
``max_duration_ms`` made 1 s, a seat whose relaying referee died keeps its clock
while it is away: the infrastructure holds the match up, no bot does), then the
attempt row says ``infra_error`` with the watchdog's reason, the seats carry no
verdict and nothing is rated. (A bot that merely thinks too long loses on time
before the watchdog: tests/referee/test_faults_stall.py.)
"""

from __future__ import annotations

import secrets
from typing import Any

from bots.misbehaving import DropBot
from bots.reference import RandomBot
from ladder import bots as ladder_bots
from ladder import tournaments
from referee.testing import SERVICE_TOKEN, ThreadedReferee

TC = {"base_ms": 0, "increment_ms": 5000, "cap_ms": 5000, "margin_ms": 200}


def test_f27_the_referees_infra_error_reason_is_kept_in_the_attempt_row(pool, migrated_url, monkeypatch):
    import workers.tasks as tasks
    from referee.room import Room

    real = Room.on_session_lost

    def as_if_relayed(self: Room, seat: Any, kind: Any) -> None:  # as referee/connect.py marks a dead relay
        if seat.session is not None and seat.bot_id == slow_id:
            seat.session.infra_lost = True
        real(self, seat, kind)

    monkeypatch.setattr(Room, "on_session_lost", as_if_relayed)

    fast_id, fast_token = ladder_bots.register_bot(pool, "fast-" + secrets.token_hex(3))
    slow_id, slow_token = ladder_bots.register_bot(pool, "slow-" + secrets.token_hex(3))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "0")
    monkeypatch.setattr(tasks, "_pool", None)
    monkeypatch.setattr(tasks, "MAX_MATCH_DURATION_S", 1)  # the referee's watchdog: 1,000 ms
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda args, countdown=0, **_: queued.append(args[0]))
    ref = ThreadedReferee({fast_token: fast_id, slow_token: slow_id},
                          bots={fast_token: RandomBot(seed=1), slow_token: DropBot(at_decision=2)},
                          reconnect_grace_ms=10_000).start()
    try:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        match_id = tournaments.plan_match(pool, game_string="floriferous(players=2)", bot_ids=[slow_id, fast_id],
                                          plan_key=secrets.token_hex(4), time_control=TC)
        assert tasks.run_match(match_id) == "requeued"
    finally:
        ref.stop()
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
    with pool.connection() as conn:
        status, error = conn.execute(
            "SELECT status, error FROM match_attempts WHERE match_id = %s AND attempt = 1", (match_id,)).fetchone()
        verdicts = conn.execute("SELECT count(*) FROM seats WHERE match_id = %s AND verdict IS NOT NULL",
                                (match_id,)).fetchone()[0]
        rated = conn.execute("SELECT count(*) FROM rating_history WHERE match_id = %s", (match_id,)).fetchone()[0]
    assert status == "infra_error"
    # the reason the referee gives for its watchdog (referee/room.py), with the limit the worker sent
    assert error == "referee reported infra_error: watchdog: over max_duration_ms=1000"
    assert (verdicts, rated) == (0, 0)
    assert queued == [match_id]
