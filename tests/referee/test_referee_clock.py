"""Time control and verdict ranking, pure.

See docs/architecture.md, "The clock" and "Verdicts"; docs/faults.md F-01, F-03.
"""

from __future__ import annotations

import pytest

from referee.clock import MAX_MS, SeatClock, TimeControl, TimeControlError, allowance, bank_after, on_time
from referee.verdicts import Verdict, result_ranks

N, T, IL, D, R, C, S = (Verdict.NORMAL, Verdict.TIMEOUT, Verdict.ILLEGAL_ACTION, Verdict.DISCONNECT,
                       Verdict.RESIGNED, Verdict.CRASH, Verdict.NO_SHOW)


def test_f03_cap_plus_margin_boundary_is_inclusive():
    # given 200 ms per decision + 50 ms margin
    tc = TimeControl(cap_ms=200, margin_ms=50)
    a = allowance(tc, 0)
    assert (a.allowed_ms, a.limit_ms, a.time_left_ms) == (200, 250, 200)
    # then 230 ms is accepted, 260 ms is a timeout, and exactly 250 ms is still on time
    assert on_time(230.0, a)
    assert not on_time(260.0, a)
    assert on_time(250.0, a)
    assert not on_time(250.001, a)


def test_f01_one_second_per_decision_no_bank():
    tc = TimeControl(cap_ms=1000, margin_ms=50)
    clock = SeatClock(tc)
    for elapsed in (10.0, 990.0, 1040.0):
        a = clock.next_allowance()
        assert a.allowed_ms == 1000 and a.limit_ms == 1050
        clock.charge(elapsed)
    assert clock.used_ms == pytest.approx(2040.0)
    assert clock.bank_ms == 0.0  # nothing carries over without a bank


def test_increment_only_is_a_per_decision_limit():
    tc = TimeControl(increment_ms=300, margin_ms=20)
    assert allowance(tc, 12345).allowed_ms == 300
    assert bank_after(tc, 0, 10) == 0.0  # unused time is not banked
    assert allowance(TimeControl(increment_ms=300, cap_ms=100), 0).allowed_ms == 100


def test_bank_increment_and_cap():
    tc = TimeControl(base_ms=1000, increment_ms=100, cap_ms=500, margin_ms=50)
    clock = SeatClock(tc)
    a = clock.next_allowance()
    # bank 1000 + 100 = 1100, capped at 500
    assert (a.allowed_ms, a.limit_ms, a.time_left_ms) == (500, 550, 1100)
    clock.charge(400.0)
    assert clock.bank_ms == pytest.approx(700.0)
    clock.charge(540.0)  # within the margin: bank 800 - 540
    assert clock.bank_ms == pytest.approx(260.0)
    a = clock.next_allowance()
    assert (a.allowed_ms, a.time_left_ms) == (360, 360)
    clock.charge(1000.0)  # over: the bank stops at 0
    assert clock.bank_ms == 0.0
    assert clock.next_allowance().allowed_ms == 100


def test_bank_without_cap_uses_the_whole_bank():
    tc = TimeControl(base_ms=5000, margin_ms=0)
    assert allowance(tc, 5000).allowed_ms == 5000
    assert bank_after(tc, 5000, 1234.5) == pytest.approx(3765.5)


@pytest.mark.parametrize("kwargs", [{}, {"margin_ms": 50}, {"cap_ms": -1}, {"base_ms": -5, "cap_ms": 10}])
def test_unusable_time_controls_are_refused(kwargs):
    with pytest.raises(TimeControlError):
        TimeControl(**kwargs)


@pytest.mark.parametrize(
    ("verdicts", "outcome", "expected"),
    [
        ((N, N), (2, 1), (2, 1)),
        ((N, N), (1, 1), (1, 1)),
        ((N, T), None, (1, 2)),  # 2-player: the faulting bot loses
        ((IL, N), None, (2, 1)),
        ((R, N), None, (2, 1)),
        ((N, T, N), (3, 1, 2), (2, 3, 1)),  # ranked by play among the others, fault last
        ((N, D, N, N), (4, 1, 2, 2), (3, 4, 1, 1)),  # ties among the others kept
        ((C, N, T, N), (1, 2, 3, 4), (3, 1, 3, 2)),  # two faults share the last rank
        ((N, T, R), None, (1, 2, 2)),
    ],
)
def test_result_ranks(verdicts, outcome, expected):
    assert result_ranks(verdicts, outcome) == expected


def test_verdict_names_are_the_wire_names():
    assert [v.value for v in Verdict] == [
        "normal", "timeout", "illegal_action", "disconnect", "crash", "resigned", "no_show",
    ]
    assert not N.is_fault and all(v.is_fault for v in (T, IL, D, R, C, S))


def test_a_value_above_max_ms_is_refused_and_max_ms_itself_is_a_clock():
    """Bounded so that every clock value stays an exact int64 on the wire (a bank of 2**63 - 1 ms would be
    sent as a float rounded above int64 after one decision)."""
    for name in ("base_ms", "increment_ms", "cap_ms", "margin_ms"):
        with pytest.raises(TimeControlError, match=name):
            TimeControl(**{"cap_ms": 1000, name: MAX_MS + 1})
    clock = SeatClock(TimeControl(base_ms=MAX_MS, increment_ms=MAX_MS, cap_ms=MAX_MS, margin_ms=MAX_MS))
    for _ in range(1000):
        a = clock.next_allowance()
        assert a.allowed_ms == MAX_MS and a.limit_ms == 2 * MAX_MS and a.time_left_ms < 2**53
        clock.charge(1.5)
