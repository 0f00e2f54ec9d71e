"""Faults at the referee: clocks, illegal and stale answers, drops, no-shows,
resignation, watchdog (docs/architecture.md, "Verdicts"; docs/faults.md F-01, F-02, F-03, F-04, F-05, F-07).

Time controls are scaled down (a few hundred ms) to keep the suite fast; the
exact boundary arithmetic is tested on the pure clock in test_referee_clock.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for

from bots.misbehaving import DropBot, GarbageBot, IllegalBot, SilentBot, SlowBot
from bots.reference import RandomBot
from bots.sdk import Bot
from games.api import CHANCE
from proto.parterre.v1 import referee_pb2 as pb
from referee.replay import verify
from referee.testing import Harness, replay_of

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3, "tok-d": 4, "tok-e": 5, "tok-f": 6}
TOKEN_OF = {v: k for k, v in TOKENS.items()}


def decisions_by_seat(replay):
    out: dict[int, list[dict]] = {}
    for step in replay["steps"]:
        if step["player"] != CHANCE:
            out.setdefault(step["player"], []).append(step)
    return out


# -- F-01 silent bot -----------------------------------------------------------------------

async def test_f01_silent_bot_two_players_loses_at_the_deadline_and_the_referee_goes_on():
    async with Harness(TOKENS) as h:
        a, silent = RandomBot(seed=1), SilentBot()
        h.start_bot(a, "tok-a")
        h.start_bot(silent, "tok-b")
        t0 = time.monotonic()
        result = await h.run_match(100, "toy(players=2,turns=5)", [1, 2], cap_ms=300, margin_ms=50)
        elapsed_ms = (time.monotonic() - t0) * 1000
        assert result.status == "finished"
        assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("timeout", 2)]
        # the referee's own timer fired at cap + margin, not later than a generous bound
        assert 350 <= result.seats[1].time_used_ms <= 700
        assert elapsed_ms < 1500
        replay = replay_of(result)
        verify(replay)
        assert replay["verdicts"] == ["normal", "timeout"]
        assert replay["outcome"] is None and replay["result_ranks"] == [1, 2]
        assert 1 not in decisions_by_seat(replay)
        # the referee stays up: the next match starts and finishes
        h.start_bot(RandomBot(seed=3), "tok-c")
        nxt = await h.run_match(101, "toy(players=2,turns=3)", [1, 3])
        assert nxt.status == "finished" and [s.verdict for s in nxt.seats] == ["normal", "normal"]
    assert [r.verdict for r in silent.stats.results] == ["timeout"]


@pytest.mark.parametrize("players", [3, 4])
async def test_f01_silent_bot_multiplayer_is_last_and_the_fallback_plays_to_the_end(players):
    async with Harness(TOKENS) as h:
        ids = list(range(1, players + 1))
        for bot_id in ids:
            bot = SilentBot() if bot_id == 2 else RandomBot(seed=bot_id)
            h.start_bot(bot, TOKEN_OF[bot_id])
        result = await h.run_match(110 + players, f"toy(players={players},turns=4)", ids, cap_ms=300, margin_ms=50)
    replay = replay_of(result)
    verify(replay)
    assert result.status == "finished"
    assert [s.verdict for s in result.seats] == ["normal", "timeout"] + ["normal"] * (players - 2)
    assert result.seats[1].rank == players
    # the game was played to its end, the silent seat by the fallback policy
    assert replay["outcome"] is not None
    seat1 = decisions_by_seat(replay)[1]
    assert len(seat1) == 4  # the timed-out decision and the rest were played by the fallback
    assert all(s["fallback"] and s["time_ms"] is None for s in seat1)
    # the others are ranked by play among themselves
    others = [s for s in range(players) if s != 1]
    rules = replay["outcome"]["ranks"]
    for x in others:
        for y in others:
            assert (rules[x] < rules[y]) == (result.seats[x].rank < result.seats[y].rank)


async def test_f01_late_answer_is_rejected_and_never_enters_the_replay():
    async with Harness(TOKENS) as h:
        slow = SlowBot(extra_ms=150, at_decision=2)
        h.start_bot(slow, "tok-b")
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=3), "tok-c")
        result = await h.run_match(120, "toy(players=3,turns=4)", [1, 2, 3], cap_ms=200, margin_ms=50)
        await wait_for(lambda: slow.stats.rejections)
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal", "timeout", "normal"]
    (rejected,) = slow.stats.rejections
    assert rejected.code == pb.REJECTION_CODE_LATE and rejected.match_id == 120
    seat1 = decisions_by_seat(replay)[1]
    # decision 2 timed out: the late answer was never applied, the fallback played it and the rest
    assert [s["fallback"] for s in seat1] == [False, True, True, True]
    assert len(replay["steps"]) == len({s["i"] for s in replay["steps"]})


async def test_f01_late_answer_after_a_two_player_match_ended_gets_an_explicit_rejection():
    async with Harness(TOKENS) as h:
        slow = SlowBot(extra_ms=100)
        h.start_bot(slow, "tok-b")
        h.start_bot(RandomBot(seed=1), "tok-a")
        result = await h.run_match(121, "toy(players=2,turns=3)", [1, 2], cap_ms=150, margin_ms=20)
        await wait_for(lambda: slow.stats.rejections)
    assert [s.verdict for s in result.seats] == ["normal", "timeout"]
    assert [r.code for r in slow.stats.rejections] == [pb.REJECTION_CODE_LATE]


async def test_the_retired_seat_gets_its_own_match_ended_reason():
    """The seat that timed out is told so, not "opponents retired" like the winner."""
    async with Harness(TOKENS) as h:
        slow, fast = SlowBot(extra_ms=100), RandomBot(seed=1)
        h.start_bot(slow, "tok-b")
        h.start_bot(fast, "tok-a")
        result = await h.run_match(122, "toy(players=2,turns=3)", [1, 2], cap_ms=150, margin_ms=20)
        await wait_for(lambda: slow.stats.results and fast.stats.results)
    assert [s.verdict for s in result.seats] == ["normal", "timeout"]
    assert fast.stats.results[0].reason == result.reason == "opponents retired"
    assert slow.stats.results[0].reason.startswith("you (seat 1) were retired: timeout")
    assert slow.stats.results[0].reason.endswith("; the match: opponents retired")


async def test_the_timeout_reason_states_the_allowance_and_the_margin_apart():
    """The reason said "no answer within 1100 ms" and the pages added "allowed (plus the margin)":
    the margin counted twice. It now names both parts: 150 ms allowed + 20 ms margin."""
    from web.owner import reason_in_words

    async with Harness(TOKENS) as h:
        slow, fast = SlowBot(extra_ms=100), RandomBot(seed=1)
        h.start_bot(slow, "tok-b")
        h.start_bot(fast, "tok-a")
        result = await h.run_match(123, "toy(players=2,turns=3)", [1, 2], cap_ms=150, margin_ms=20)
        await wait_for(lambda: slow.stats.results)
    assert [s.verdict for s in result.seats] == ["normal", "timeout"]
    fault = replay_of(result)["fault_reasons"][1]
    assert fault == "decision 2: no answer within 150 ms + 20 ms margin", fault
    assert slow.stats.results[0].reason.startswith(f"you (seat 1) were retired: timeout {fault}; ")
    assert reason_in_words("timeout", fault) == "timeout on decision 2: no answer within 150 ms + 20 ms margin"


# -- F-03 where time is measured ----------------------------------------------------------------

class _ClaimsZero(SlowBot):
    """Thinks for a while and claims 0 ms in the one timing field a bot may send."""

    def make_decision(self, request, index):
        return pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq,
                                                  action_index=index, reported_time_ms=0))


async def test_f03_cap_and_margin_live_with_a_safe_gap():
    # 200 ms + 50 ms margin; answers at ~120 ms are on time, at ~400 ms they are late
    async with Harness(TOKENS) as h:
        ok, late = _ClaimsZero(delay_ms=120, at_decision=1), _ClaimsZero(delay_ms=400, at_decision=1)
        h.start_bot(ok, "tok-b")
        h.start_bot(late, "tok-c")
        h.start_bot(RandomBot(seed=1, max_concurrent_matches=2), "tok-a")
        r_ok, r_late = await asyncio.gather(
            h.run_match(130, "toy(players=2,turns=2)", [1, 2], cap_ms=200, margin_ms=50),
            h.run_match(131, "toy(players=2,turns=2)", [1, 3], cap_ms=200, margin_ms=50),
        )
    assert [s.verdict for s in r_ok.seats] == ["normal", "normal"]
    first = decisions_by_seat(replay_of(r_ok))[1][0]
    assert 120 <= first["time_ms"] < 250  # the referee's measurement, not the bot's claim of 0
    assert [s.verdict for s in r_late.seats] == ["normal", "timeout"]
    assert r_late.seats[1].time_used_ms >= 250


async def test_f03_bank_runs_out():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(SlowBot(delay_ms=120), "tok-b")
        # bank 300 ms, no increment: the third 120 ms answer overdraws it (margin 30)
        result = await h.run_match(132, "toy(players=2,turns=5)", [1, 2], base_ms=300, cap_ms=0, margin_ms=30)
    assert [s.verdict for s in result.seats] == ["normal", "timeout"]
    assert result.seats[1].decisions == 2


# -- F-04 illegal or malformed answers ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["out_of_range", "negative", "missing"])
@pytest.mark.parametrize("at", [1, 40])
async def test_f04_illegal_index_loses_and_nothing_is_applied(mode, at):
    async with Harness(TOKENS) as h:
        bad = IllegalBot(mode=mode, at_decision=at)
        h.start_bot(bad, "tok-a")  # seat 0 moves first: at decision 1 the replay holds zero decisions
        h.start_bot(RandomBot(seed=2), "tok-b")
        h.start_bot(RandomBot(seed=3), "tok-c")
        h.start_bot(RandomBot(seed=4), "tok-d")
        other = asyncio.create_task(h.run_match(141, "toy(players=2,turns=40)", [3, 4]))
        result = await h.run_match(140, "toy(players=2,turns=40)", [1, 2])
        other_result = await other
    replay = replay_of(result)
    verify(replay)  # nothing half-applied: the replay re-simulates exactly
    assert [(s.verdict, s.rank) for s in result.seats] == [("illegal_action", 2), ("normal", 1)]
    by_seat = decisions_by_seat(replay)
    assert len(by_seat.get(0, [])) == at - 1
    assert result.seats[0].decisions == at - 1
    if at == 1:
        assert sum(len(v) for v in by_seat.values()) == 0 and replay["steps"]  # chance deals only
    # the other match on the same referee is unaffected
    assert other_result.status == "finished"
    assert [s.verdict for s in other_result.seats] == ["normal", "normal"]


@pytest.mark.parametrize("at", [1, 40])
async def test_f04_answer_for_a_match_not_seated_in_is_an_error_not_a_verdict(at):
    async with Harness(TOKENS) as h:
        bad = IllegalBot(mode="other_match", at_decision=at)
        h.start_bot(bad, "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        result = await h.run_match(142, "toy(players=2,turns=40)", [1, 2])
    verify(replay_of(result))
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert [s.decisions for s in result.seats] == [40, 40]
    (err,) = bad.stats.errors
    assert err.code == pb.ERROR_CODE_NOT_SEATED and err.match_id == 142 + 1_000_000


# -- F-05 stale and duplicate answers ------------------------------------------------------------------

async def test_f05_duplicate_and_other_seat_answers_are_rejected_and_applied_once():
    """Three players; B answers its 3rd decision twice, and C answers that same seq while it is B's turn."""
    c = RandomBot(seed=3)

    class B(Bot):
        def __init__(self):
            super().__init__()
            self.n = 0

        async def choose(self, request):
            self.n += 1
            if self.n == 3:
                self.seq = request.seq
                c.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq, action_index=0)))
                await asyncio.sleep(0.05)  # C's answer reaches the referee first
                self.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq,
                                                             action_index=0)))
            return 0

    b = B()
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(b, "tok-b")
        h.start_bot(c, "tok-c")
        result = await h.run_match(150, "toy(players=3,turns=6)", [1, 2, 3])
        await wait_for(lambda: b.stats.rejections and c.stats.rejections)
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal"] * 3
    assert [r.code for r in c.stats.rejections] == [pb.REJECTION_CODE_NOT_YOUR_TURN]
    assert c.stats.rejections[0].seq == b.seq
    assert [r.code for r in b.stats.rejections] == [pb.REJECTION_CODE_DUPLICATE]
    decisions = [s for s in replay["steps"] if s["player"] != CHANCE]
    assert len(decisions) == 18 and [s.decisions for s in result.seats] == [6, 6, 6]


async def test_f05_unrequested_seq_and_protocol_garbage_are_rejected_and_play_goes_on():
    garbage = GarbageBot(modes=("empty", "hello_again", "unknown_match", "future_seq", "duplicate"), at_decision=2)
    async with Harness(TOKENS) as h:
        h.start_bot(garbage, "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        result = await h.run_match(151, "toy(players=2,turns=5)", [1, 2])
        await wait_for(lambda: len(garbage.stats.rejections) >= 2 and len(garbage.stats.errors) >= 3)
        assert h.core is not None and h.core.counters.protocol_errors >= 2
    verify(replay_of(result))
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert sorted(r.code for r in garbage.stats.rejections) == sorted(
        [pb.REJECTION_CODE_UNKNOWN_SEQ, pb.REJECTION_CODE_DUPLICATE])
    assert sorted(e.code for e in garbage.stats.errors) == sorted(
        [pb.ERROR_CODE_PROTOCOL, pb.ERROR_CODE_PROTOCOL, pb.ERROR_CODE_NOT_SEATED])
    assert all(e.message for e in garbage.stats.errors)


# -- F-02 / F-07 drops, no-shows, resignation, watchdog ---------------------------------------------------

async def test_f07_no_show_aborts_the_match_unrated_with_a_replay():
    async with Harness(TOKENS) as h:
        a = RandomBot(seed=1)
        h.start_bot(a, "tok-a")
        await h.wait_sessions(1)
        t0 = time.monotonic()
        # the match's own 300 ms, not the referee's 30 s default: it ends well inside 15 s
        result = await asyncio.wait_for(h.run_match(160, "toy(players=2)", [1, 2], no_show_timeout_ms=300), 15)
        assert time.monotonic() - t0 >= 0.28  # and not before its 300 ms
        assert result.status == "aborted_no_show"
        assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 0), ("no_show", 0)]
        replay = replay_of(result)
        assert replay["steps"] == [] and replay["status"] == "aborted_no_show"
        assert replay["verdicts"] == ["normal", "no_show"]
        # the present bot was not told about a match that never started, and is free again
        assert a.stats.matches == {} and a.stats.results == []
        h.start_bot(RandomBot(seed=2), "tok-b")
        assert (await h.run_match(161, "toy(players=2,turns=2)", [1, 2])).status == "finished"


async def test_f07_bot_that_disappears_before_its_first_decision_loses_after_the_grace_window():
    async with Harness(TOKENS, reconnect_grace_ms=200) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(DropBot(at_decision=1, reconnect_after_s=None), "tok-b")
        result = await h.run_match(162, "toy(players=2,turns=4)", [1, 2], cap_ms=10_000)
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("disconnect", 2)]
    verify(replay_of(result))


async def test_f02_killed_bot_with_a_long_limit_is_disconnected_after_grace_not_after_the_clock():
    async with Harness(TOKENS, reconnect_grace_ms=200) as h:
        for bot_id in (1, 3):
            h.start_bot(RandomBot(seed=bot_id), TOKEN_OF[bot_id])
        h.start_bot(DropBot(at_decision=2, reconnect_after_s=None), "tok-b")
        t0 = time.monotonic()
        result = await h.run_match(163, "toy(players=3,turns=4)", [1, 2, 3], cap_ms=600_000)
        assert time.monotonic() - t0 < 3.0
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal", "disconnect", "normal"]
    assert result.seats[1].rank == 3
    assert [s["fallback"] for s in decisions_by_seat(replay)[1]] == [False, True, True, True]


async def test_reconnect_within_grace_gets_the_pending_request_again_and_the_clock_keeps_running():
    drop = DropBot(at_decision=3, reconnect_after_s=0.15)
    async with Harness(TOKENS, reconnect_grace_ms=3000) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(drop, "tok-b", initial_backoff_s=0.01)
        result = await h.run_match(164, "toy(players=2,turns=5)", [1, 2], cap_ms=2000)
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert drop.stats.welcomes == 2 and drop.dropped == 1
    third = decisions_by_seat(replay)[1][2]
    assert third["time_ms"] >= 150 and not third["fallback"]  # time away was charged
    assert [r.status for r in drop.stats.results] == ["finished"]


async def test_stream_error_is_a_crash_after_the_grace_window():
    async with Harness(TOKENS, reconnect_grace_ms=150) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(GarbageBot(modes=("raw_bytes",), at_decision=2), "tok-b", reconnect=False)
        result = await h.run_match(165, "toy(players=2,turns=4)", [1, 2])
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("crash", 2)]


class _Resigner(Bot):
    """Resigns at its ``at``-th decision, or right at MatchStarted when ``at`` is 0."""

    def __init__(self, at=0):
        super().__init__()
        self.at, self.n = at, 0

    def on_match_started(self, match):
        if self.at == 0:
            self.send(pb.BotMessage(resign=pb.Resign(match_id=match.match_id)))

    def choose(self, request):
        self.n += 1
        if self.n == self.at:
            self.send(pb.BotMessage(resign=pb.Resign(match_id=request.match_id)))
            return -1
        return 0

    def make_decision(self, request, index):
        return None if index == -1 else super().make_decision(request, index)


async def test_f07_resignation_is_always_accepted():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, max_concurrent_matches=2), "tok-a")
        resigner = _Resigner(at=3)
        h.start_bot(resigner, "tok-b")
        h.start_bot(_Resigner(at=0), "tok-c")  # resigns before its turn, while another seat thinks
        h.start_bot(RandomBot(seed=4), "tok-d")
        r2, r3 = await asyncio.gather(
            h.run_match(170, "toy(players=2,turns=5)", [1, 2]),
            h.run_match(171, "toy(players=3,turns=3)", [1, 4, 3]),
        )
    assert [(s.verdict, s.rank) for s in r2.seats] == [("normal", 1), ("resigned", 2)]
    # Its own reason says it once (it read "resigned resigned").
    assert resigner.stats.results[0].reason.startswith("you (seat 1) were retired: resigned; the match: ")
    assert decisions_by_seat(replay_of(r2))[1].__len__() == 2
    assert [s.verdict for s in r3.seats] == ["normal", "normal", "resigned"]
    assert r3.seats[2].rank == 3
    replay = replay_of(r3)
    verify(replay)
    assert replay["outcome"] is not None
    assert all(s["fallback"] for s in decisions_by_seat(replay)[2])


# The watchdog (F-07) is tested in test_faults_stall.py: a match the infrastructure holds up ends
# infra_error; a bot too slow for it loses on time first.


async def test_cancelled_run_match_ends_the_match_as_infra_error_for_the_bots():
    silent = SilentBot()
    async with Harness(TOKENS) as h:
        a = RandomBot(seed=1)
        h.start_bot(a, "tok-a")
        h.start_bot(silent, "tok-b")
        call = asyncio.create_task(h.run_match(173, "toy(players=2)", [1, 2], cap_ms=60_000))
        await wait_for(lambda: a.stats.decisions >= 1)
        call.cancel()
        # generous: on a machine whose cores all run tests the cancel, the room's end and both bots' reads
        # once took over 10 s
        await wait_for(lambda: silent.stats.results and a.stats.results, 30,
                       what="both bots told the match ended")
        assert h.core is not None
        await wait_for(lambda: not h.core.rooms, 30, what="the room removed")
    assert [r.status for r in a.stats.results] == ["infra_error"]


async def test_a_newer_attempt_supersedes_the_running_one():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, max_concurrent_matches=2), "tok-a")
        h.start_bot(SilentBot(max_concurrent_matches=2), "tok-b")
        first = asyncio.create_task(h.run_match(174, "toy(players=2)", [1, 2], cap_ms=60_000, attempt=1))
        assert h.core is not None
        await wait_for(lambda: 174 in h.core.rooms and h.core.rooms[174][0].started)
        import grpc

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.run_match(174, "toy(players=2)", [1, 2], attempt=1)
        assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
        second = asyncio.create_task(h.run_match(174, "toy(players=2)", [1, 2], cap_ms=200, margin_ms=10, attempt=2))
        r1 = await first
        r2 = await second
    assert (r1.status, r1.attempt) == ("infra_error", 1)
    assert (r2.status, r2.attempt) == ("finished", 2)
