"""Stalls and retried attempts through the worker (docs/faults.md, "Clocks, stalls and retried deals").

Given a migrated database, bots over the real wire on an in-process referee and the worker's
``run_match`` task (the match watchdog, ``PARTERRE_MAX_MATCH_DURATION_S``, made 2 s):

* a bot that answers 11 decisions and sits on the 12th under the longest clock the ladder allows
  (60 s a decision) loses on time: the match is finished and rated at the first attempt (it was
  ended ``infra_error`` by the watchdog, retried on the same deal, then ``failed``, unrated);
* an attempt that the infrastructure ends (the referee stops mid-match) is retried on a NEW deal:
  the bots' ``MatchStarted.seed_commitment`` and their first observation differ, each attempt row
  records its own seed, and the finished replay carries the new one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.toy_game import register_toy

from bots.misbehaving import SlowBot
from bots.reference import RandomBot
from bots.sdk import Bot, DecisionRequest
from ladder import bots as ladder_bots
from ladder import tournaments
from ladder.read.replays import export_replay
from referee.testing import SERVICE_TOKEN, ThreadedReferee

register_toy()

LONGEST = {"base_ms": 0, "increment_ms": 0, "cap_ms": 60_000, "margin_ms": 100}
"""The longest time a decision may be given (ladder.match_plans.MAX_DECISION_MS)."""


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch, migrated_url: str) -> Iterator[Any]:
    import workers.tasks as tasks

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "0")
    monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
    monkeypatch.setattr(tasks, "_pool", None)
    monkeypatch.setattr(tasks, "MAX_MATCH_DURATION_S", 2)  # the watchdog: 2,000 ms
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda args, countdown=0, **_: queued.append(args[0]))
    yield tasks, queued
    if tasks._pool is not None:
        tasks._pool.close()
        tasks._pool = None


def test_a_bot_that_sits_on_its_12th_decision_loses_the_rated_match_at_the_first_attempt(pool, worker,
                                                                                           monkeypatch):
    tasks, queued = worker
    honest_id, honest_token = ladder_bots.register_bot(pool, "honest-" + secrets.token_hex(3))
    staller_id, staller_token = ladder_bots.register_bot(pool, "staller-" + secrets.token_hex(3))
    staller = SlowBot(delay_ms=3_600_000, at_decision=12)
    with ThreadedReferee({honest_token: honest_id, staller_token: staller_id},
                         bots={honest_token: RandomBot(seed=1), staller_token: staller}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        match_id = tournaments.plan_match(pool, game_string="toy(players=2,turns=20)",
                                          bot_ids=[honest_id, staller_id], plan_key=secrets.token_hex(4),
                                          time_control=LONGEST)
        assert tasks.run_match(match_id) == "finished"
    assert queued == []  # no retry
    with pool.connection() as conn:
        seats = conn.execute("SELECT bot_id, rank, verdict, decisions FROM seats WHERE match_id = %s ORDER BY seat",
                             (match_id,)).fetchall()
        attempts = conn.execute("SELECT attempt, status FROM match_attempts WHERE match_id = %s",
                                (match_id,)).fetchall()
        rated = conn.execute("SELECT count(*) FROM rating_history WHERE match_id = %s", (match_id,)).fetchone()[0]
    assert seats == [(honest_id, 1, "normal", 12), (staller_id, 2, "timeout", 11)]
    assert attempts == [(1, "finished")]
    assert rated == 2  # both bots' ratings moved: the staller took its loss


class Recorder(Bot):
    """Plays the first legal action and keeps what it was shown, by attempt: the seed commitment and
    its first observation (what a bot that wants to replay a deal would keep). With ``stall_at`` it
    stops answering at that decision of attempt 1 and sets ``stalled``."""

    def __init__(self, seen: dict[int, tuple[str, str]], stall_at: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen = seen
        self.stall_at = stall_at
        self.stalled = threading.Event()
        self.count = 0

    async def choose(self, request: DecisionRequest) -> int:
        assert request.match is not None
        self.seen.setdefault(request.attempt, (request.match.seed_commitment,
                                               json.dumps(request.observation, sort_keys=True)))
        self.count += 1
        if request.attempt == 1 and self.count == self.stall_at:
            self.stalled.set()
            await asyncio.Event().wait()  # held here until the referee goes away
        return 0


def test_an_attempt_after_an_infra_error_is_dealt_a_new_seed(pool, worker, monkeypatch):
    tasks, queued = worker
    a_id, a_token = ladder_bots.register_bot(pool, "deal-a-" + secrets.token_hex(3))
    b_id, b_token = ladder_bots.register_bot(pool, "deal-b-" + secrets.token_hex(3))
    tokens = {a_token: a_id, b_token: b_id}
    seen: dict[int, tuple[str, str]] = {}
    match_id = tournaments.plan_match(pool, game_string="toy(players=2,turns=10)", bot_ids=[a_id, b_id],
                                      plan_key=secrets.token_hex(4), time_control=LONGEST)
    with pool.connection() as conn:
        planned_commitment = conn.execute("SELECT seed_commitment FROM matches WHERE id = %s",
                                          (match_id,)).fetchone()[0]

    # Attempt 1: the referee stops in the middle of the match (the infrastructure, not a bot).
    first = Recorder(seen, stall_at=3)
    ref = ThreadedReferee(tokens, bots={a_token: RandomBot(seed=1), b_token: first},
                          reconnect_grace_ms=10_000).start()
    stopper = threading.Thread(target=lambda: (first.stalled.wait(30), ref.stop()), daemon=True)
    stopper.start()
    try:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        assert tasks.run_match(match_id) == "requeued"
    finally:
        stopper.join(30)
        ref.stop()
    assert queued == [match_id]

    # Attempt 2, on a referee that stays up.
    with ThreadedReferee(tokens, bots={a_token: RandomBot(seed=1), b_token: Recorder(seen)}) as ref2:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref2.address)
        assert tasks.run_match(match_id) == "finished"

    # What the bot was shown: a different deal.
    assert sorted(seen) == [1, 2]
    assert seen[1][0] == planned_commitment
    assert seen[2][0] != seen[1][0]
    assert seen[2][1] != seen[1][1]  # its first hand: the new deal's, not the one it saw
    with pool.connection() as conn:
        attempts = conn.execute("SELECT attempt, status, seed, seed_commitment FROM match_attempts "
                                "WHERE match_id = %s ORDER BY attempt", (match_id,)).fetchall()
    assert [(n, st) for n, st, _, _ in attempts] == [(1, "infra_error"), (2, "finished")]
    for (_, _, seed, commitment), (bot_commitment, _) in zip(attempts, (seen[1], seen[2]), strict=True):
        assert commitment == hashlib.sha256(seed.encode("ascii")).hexdigest() == bot_commitment
    page = export_replay(pool, match_id)
    assert page["match"]["seed"] == attempts[1][2]  # the finished match shows the seed it was played on
    assert page["match"]["seed_commitment"] == page["replay"]["seed_commitment"] == seen[2][0]
    assert [a["seed_commitment"] for a in page["attempts"]] == [seen[1][0], seen[2][0]]
