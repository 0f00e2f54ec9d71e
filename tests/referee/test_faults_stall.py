"""A bot cannot escape a rated loss by stalling past the match watchdog (docs/faults.md, "Clocks,
stalls and retried deals"): real bots over the real wire on an in-process referee, with the
watchdog (``max_duration_ms``) made small instead of waiting an hour.

The attack as it was played: a challenge with ``base_ms`` 3,600,000 and ``cap_ms`` 0 (one decision
may use the whole hour), the attacker's bot answers 11 decisions and sits on the 12th; the
watchdog ended the attempt ``infra_error`` (unrated, retried on the same deal, three times, then
``failed``). Now each seat may use at most its share of the watchdog over the whole match
(``referee.clock.seat_share_ms``), so the stalling seat loses on time before the watchdog, and
the watchdog is left for what no bot controls (a seat whose relaying referee died).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for

from bots.misbehaving import DropBot, SlowBot
from bots.reference import RandomBot
from referee.clock import seat_share_ms
from referee.replay import verify
from referee.testing import Harness, replay_of

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2}


async def test_a_bot_that_sits_on_its_12th_decision_under_an_hour_bank_loses_on_time_before_the_watchdog():
    staller = SlowBot(delay_ms=3_600_000, at_decision=12)  # answers 11 decisions, then never
    honest = RandomBot(seed=1)
    async with Harness(TOKENS) as h:
        h.start_bot(honest, "tok-a")
        h.start_bot(staller, "tok-b")
        t0 = time.monotonic()
        result = await h.run_match(501, "toy(players=2,turns=30)", [1, 2], base_ms=3_600_000, cap_ms=0,
                                   margin_ms=100, max_duration_ms=2000)
        elapsed = time.monotonic() - t0
        await wait_for(lambda: honest.stats.results)
    assert result.status == "finished", result.reason
    by_seat = {s.seat: s for s in result.seats}
    assert (by_seat[1].verdict, by_seat[1].rank) == ("timeout", 2)  # the staller's own verdict: it loses
    assert (by_seat[0].verdict, by_seat[0].rank) == ("normal", 1)
    assert by_seat[1].decisions == 11
    assert elapsed < 2.0  # ended by the staller's clock, not by the 2,000 ms watchdog
    replay = replay_of(result)
    verify(replay)
    share = seat_share_ms(2000, 2)
    assert "share of the match's maximum duration" in replay["fault_reasons"][1]
    assert f"{share} ms" in replay["fault_reasons"][1]
    assert honest.stats.results[0].status == "finished"


async def test_a_bot_on_time_at_every_decision_but_too_slow_for_the_watchdog_loses_on_time():
    """Each answer (400 ms) is well inside the 1,000 ms cap, but 20 of them are more than the seat's
    1,350 ms share of a 3,000 ms watchdog: the slow seat loses on time at its 4th decision (its 3rd under
    load); the match is finished, not infra_error."""
    slow = SlowBot(delay_ms=400)
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(slow, "tok-b")
        result = await h.run_match(502, "toy(players=2,turns=20)", [1, 2], cap_ms=1000, max_duration_ms=3000)
    assert result.status == "finished", result.reason
    assert [(s.verdict, s.rank) for s in sorted(result.seats, key=lambda s: s.seat)] == [
        ("normal", 1), ("timeout", 2)]
    slow_seat = next(s for s in result.seats if s.seat == 1)
    # The 1,350 ms share holds three 400 ms answers, two when a loaded machine charges each over 450 ms;
    # never the 20 of the match, though every answer alone fits the 1,000 ms cap.
    assert 2 <= slow_seat.decisions <= 3, slow_seat
    assert slow_seat.time_used_ms <= seat_share_ms(3000, 2) + 100  # the share bounds what it used (+ timer slack)


async def test_the_watchdog_ends_a_match_the_infrastructure_holds_up_as_infra_error(monkeypatch):
    """What the watchdog is left for: a seat whose relaying referee died keeps its time while it is
    away (docs/bots.md), so a match waiting on it can run past ``max_duration_ms``; that is the
    infrastructure's doing and ends ``infra_error``, unrated, never a bot's fault. The relay's death
    is simulated as ``referee/connect.py`` marks an abruptly ended relay stream."""
    from referee.room import Room

    real = Room.on_session_lost

    def as_if_relayed(self: Room, seat: Any, kind: Any) -> None:
        if seat.session is not None and seat.bot_id == 2:
            seat.session.infra_lost = True
        real(self, seat, kind)

    monkeypatch.setattr(Room, "on_session_lost", as_if_relayed)
    drop = DropBot(at_decision=2)  # its relay dies at its 2nd decision; it does not come back
    async with Harness(TOKENS, reconnect_grace_ms=10_000) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(drop, "tok-b")
        t0 = time.monotonic()
        result = await h.run_match(503, "toy(players=2,turns=20)", [1, 2], cap_ms=1000, max_duration_ms=600)
        assert time.monotonic() - t0 < 3.0
    assert result.status == "infra_error" and "watchdog" in result.reason, result.reason
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 0), ("normal", 0)]  # never a bot's fault
    replay = replay_of(result)
    verify(replay)
    assert replay["steps"] and replay["outcome"] is None


@pytest.mark.parametrize("seats", [1, 2, 3, 4])
def test_the_seats_shares_together_end_before_the_watchdog(seats: int):
    """An independent bound: every seat using all of its share, plus every seat's margin at the
    last decision, still leaves a tenth of the watchdog for the referee."""
    for watchdog in (300, 1_800_000, 3_600_000):
        share = seat_share_ms(watchdog, seats)
        assert share * seats <= watchdog * 0.9
        assert share * seats > watchdog * 0.9 - seats
