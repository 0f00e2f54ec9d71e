"""Time control: bank, increment, per-decision cap and margin (docs/architecture.md "The clock").

Pure functions and a small per-seat clock; no I/O, no asyncio, so the rules are
unit-tested with exact numbers (docs/faults.md F-01, F-03).

The rules, for one seat and one decision:

* **Bank mode** (``base_ms > 0``): the bank starts at ``base_ms``. Before each
  decision ``increment_ms`` is added (Fischer). The time *allowed* for the
  decision is ``min(bank, cap_ms)``, or the whole bank when ``cap_ms == 0``.
  After the answer the bank loses the measured time, never going below 0.
* **No bank** (``base_ms == 0``): every decision gets the same limit,
  ``min`` of the positive values among ``increment_ms`` and ``cap_ms``; nothing
  carries over between decisions. "1 s per decision" is
  ``TimeControl(cap_ms=1000)`` (or ``increment_ms=1000``).
* **Margin and the boundary**: an answer is on time iff
  ``elapsed_ms <= allowed_ms + margin_ms`` — the boundary is **inclusive**:
  an answer measured at exactly allowed + margin is accepted, one measured a
  microsecond later is a ``timeout``. ``elapsed_ms`` is the referee's monotonic
  time from handing the request to the transport to reading the answer; timing
  a bot reports is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass


class TimeControlError(ValueError):
    """A time control that cannot be used (negative or too large values, or no limit at all)."""


WATCHDOG_RESERVE = 0.1
"""Part of a match's ``max_duration_ms`` kept for the referee's own work (engine, transport, seating
a bot that reconnects): the seats share the rest (:func:`seat_share_ms`)."""

MAX_MS = 2**31 - 1
"""Largest value of any time-control field (about 24.8 days): every clock value of a match stays an
exact integer far inside protobuf's int64 and a float's 53 bits, whatever a RunMatch request says."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A match's time control; all values in milliseconds.

    Attributes:
        base_ms: bank at the start of the match; 0 = no bank.
        increment_ms: added to the bank before each decision; with no bank,
            the per-decision limit (unless ``cap_ms`` is smaller).
        cap_ms: upper bound on one decision; 0 = no cap.
        margin_ms: transport grace added to every deadline.

    Raises:
        TimeControlError: a negative value or one above :data:`MAX_MS`, or no limit at all
            (all of ``base_ms``, ``increment_ms`` and ``cap_ms`` are 0).
    """

    base_ms: int = 0
    increment_ms: int = 0
    cap_ms: int = 0
    margin_ms: int = 0

    def __post_init__(self) -> None:
        for name in ("base_ms", "increment_ms", "cap_ms", "margin_ms"):
            value = getattr(self, name)
            if value < 0:
                raise TimeControlError(f"time control: {name} must be >= 0, got {value}")
            if value > MAX_MS:
                raise TimeControlError(f"time control: {name} must be <= {MAX_MS} ms (about 24.8 days), got {value}")
        if self.base_ms == 0 and self.increment_ms == 0 and self.cap_ms == 0:
            raise TimeControlError("time control: set base_ms, increment_ms or cap_ms (no limit at all)")

    @property
    def has_bank(self) -> bool:
        """True when the time control carries a bank between decisions."""
        return self.base_ms > 0

    def to_json(self) -> dict[str, int]:
        """JSON-able dict with the four ``_ms`` fields (replay format)."""
        return {
            "base_ms": self.base_ms,
            "increment_ms": self.increment_ms,
            "cap_ms": self.cap_ms,
            "margin_ms": self.margin_ms,
        }


@dataclass(frozen=True, slots=True)
class Allowance:
    """What one decision may use.

    Attributes:
        allowed_ms: time allowed, margin not included (sent as ``deadline_ms``).
        limit_ms: ``allowed_ms + margin_ms``: answers measured above it are late.
        time_left_ms: the bank after the increment (sent as ``time_left_ms``);
            equals ``allowed_ms`` with no bank.
        share_capped: True when the seat's share of the match's maximum duration
            (:func:`seat_share_ms`), not the time control, set ``limit_ms``.
    """

    allowed_ms: int
    limit_ms: int
    time_left_ms: int
    share_capped: bool = False


def seat_share_ms(max_duration_ms: int, seats: int) -> int:
    """The most time one seat may use over a whole match whose watchdog is ``max_duration_ms``.

    ``max_duration_ms`` less :data:`WATCHDOG_RESERVE` of it, divided by ``seats``: the seats'
    thinking together always ends before the watchdog, so a match that still reaches it is
    the infrastructure's doing.

    Args:
        max_duration_ms: the match's watchdog (ms, > 0).
        seats: seats of the match (>= 1).

    Returns:
        The share in whole ms.
    """
    return int(max_duration_ms * (1.0 - WATCHDOG_RESERVE)) // max(1, seats)


def allowance(tc: TimeControl, bank_ms: float) -> Allowance:
    """The allowance of the next decision given the bank before it.

    Args:
        tc: the time control.
        bank_ms: bank before this decision's increment (ignored with no bank).

    Returns:
        The :class:`Allowance`; ``allowed_ms`` is truncated to whole ms.
    """
    if tc.has_bank:
        left = bank_ms + tc.increment_ms
        allowed = min(left, tc.cap_ms) if tc.cap_ms > 0 else left
    else:
        limits = [v for v in (tc.increment_ms, tc.cap_ms) if v > 0]
        allowed = left = min(limits)
    allowed_i = int(allowed)
    return Allowance(allowed_i, allowed_i + tc.margin_ms, int(left))


def on_time(elapsed_ms: float, allowance_: Allowance) -> bool:
    """True iff an answer measured at ``elapsed_ms`` is accepted (inclusive boundary)."""
    return elapsed_ms <= allowance_.limit_ms


def bank_after(tc: TimeControl, bank_ms: float, elapsed_ms: float) -> float:
    """The bank after a decision that took ``elapsed_ms`` (never below 0).

    Args:
        tc: the time control.
        bank_ms: bank before the decision's increment.
        elapsed_ms: measured time of the decision.

    Returns:
        The new bank in ms; always 0 with no bank.
    """
    if not tc.has_bank:
        return 0.0
    return max(0.0, bank_ms + tc.increment_ms - elapsed_ms)


class SeatClock:
    """The clock of one seat during a match.

    Args:
        tc: the match's time control.
        share_ms: the most this seat may use over the match (:func:`seat_share_ms`); None = no bound.

    Attributes:
        tc: the match's time control.
        share_ms: as given.
        bank_ms: current bank (before the next increment).
        used_ms: total measured time of this seat's decisions.
    """

    __slots__ = ("tc", "share_ms", "bank_ms", "used_ms", "_fixed")

    def __init__(self, tc: TimeControl, share_ms: int | None = None) -> None:
        self.tc = tc
        self.share_ms = share_ms
        self.bank_ms: float = float(tc.base_ms)
        self.used_ms: float = 0.0
        self._fixed = None if tc.has_bank else allowance(tc, 0.0)  # the same every decision

    def next_allowance(self) -> Allowance:
        """Allowance of the next decision (does not change the clock).

        Its ``limit_ms`` (allowed + margin) is at most what is left of the seat's share: when the
        time control would give more, ``limit_ms`` is that rest (0 once it is spent),
        ``allowed_ms`` the rest less the margin (never below 0) and ``share_capped`` is True.
        """
        a = self._fixed or allowance(self.tc, self.bank_ms)
        if self.share_ms is None:
            return a
        left = int(self.share_ms - self.used_ms)
        if a.limit_ms <= left:
            return a
        limit = max(0, left)
        allowed = max(0, limit - self.tc.margin_ms)
        return Allowance(allowed, limit, min(a.time_left_ms, allowed), share_capped=True)

    def share_note(self, allowance_: Allowance) -> str:
        """What a timeout reason adds when the seat's share of the match (not its clock) set the limit."""
        if not allowance_.share_capped:
            return ""
        return f" (the rest of this seat's {self.share_ms} ms share of the match's maximum duration)"

    def charge(self, elapsed_ms: float) -> None:
        """Record a decision that took ``elapsed_ms`` (on time or not; never less than 0).

        The timer of a decision runs from when it was queued, its clock from when
        it was sent: under a very short limit the timer can fire before the
        request was written, so the measured span is clamped at 0 (a negative
        ``time_used_ms`` made the ladder refuse the result).
        """
        elapsed_ms = max(0.0, elapsed_ms)
        if self._fixed is None:
            self.bank_ms = bank_after(self.tc, self.bank_ms, elapsed_ms)
        self.used_ms += elapsed_ms
