"""Per-seat verdicts and the ranks after them (docs/architecture.md "Verdicts").

The rules' own result (:class:`games.api.Outcome`) is kept apart from the
referee's verdicts, as python-chess keeps ``Termination`` apart from the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class Verdict(StrEnum):
    """How a seat's participation in a match ended (docs/architecture.md "Verdicts").

    ``normal`` is the only non-fault. Every other verdict ranks the seat last.
    """

    NORMAL = "normal"
    TIMEOUT = "timeout"
    """No answer within allowed + margin (the referee's own timer)."""
    ILLEGAL_ACTION = "illegal_action"
    """Index out of range, negative, or missing."""
    DISCONNECT = "disconnect"
    """The stream closed or vanished and the bot did not return within the grace window."""
    CRASH = "crash"
    """The stream failed with an error (e.g. undecodable bytes) and the bot did not return."""
    RESIGNED = "resigned"
    NO_SHOW = "no_show"
    """No connected session before the match could start."""

    @property
    def is_fault(self) -> bool:
        """True for every verdict but ``normal``."""
        return self is not Verdict.NORMAL


class MatchStatus(StrEnum):
    """Status of one attempt of a match, as returned in ``MatchResult.status``."""

    FINISHED = "finished"
    """Played to the end, or ended by faults; rated."""
    ABORTED_NO_SHOW = "aborted_no_show"
    """A seat's bot never had a connected session; unrated, rescheduled."""
    INFRA_ERROR = "infra_error"
    """Referee-side failure, cancellation or watchdog; unrated, run again, never a bot's fault."""


def result_ranks(verdicts: Sequence[Verdict], outcome_ranks: Sequence[int] | None) -> tuple[int, ...]:
    """Ranks per seat after the referee's verdicts (docs/architecture.md "Verdicts").

    Seats with a fault are ranked last and share that rank (competition
    ranking: with 4 seats and one fault the ranks are some order of 1, 2, 3
    among the others and 4 for the fault; two faults share rank 3). Seats
    without a fault are ranked among themselves by the rules' ranks; when the
    game did not reach its end (``outcome_ranks`` is None: a 2-player fault, or
    every opponent retired) they share rank 1.

    A solo match (one seat against the rules' automaton: La Fleur's solo
    opponent, Flowar's Taxus, Floriferous' crow) keeps the rules' rank, 1 for a
    win and 2 when the automaton won; a faulting solo seat loses (rank 2), as a
    faulting seat loses a 2-player game. So a lost solo game is never reported
    as rank 1.

    Args:
        verdicts: verdict per seat.
        outcome_ranks: the rules' rank per seat (1 = best), or None.

    Returns:
        Rank per seat, 1-based.

    Examples:
        >>> result_ranks([Verdict.NORMAL, Verdict.TIMEOUT], None)
        (1, 2)
        >>> result_ranks([Verdict.NORMAL, Verdict.TIMEOUT, Verdict.NORMAL], [3, 1, 2])
        (2, 3, 1)
        >>> result_ranks([Verdict.NORMAL], [2]), result_ranks([Verdict.TIMEOUT], None)
        ((2,), (2,))
    """
    if len(verdicts) == 1:
        return (2 if verdicts[0].is_fault or outcome_ranks is None else outcome_ranks[0],)
    active = [s for s, v in enumerate(verdicts) if not v.is_fault]
    last = len(active) + 1
    ranks: list[int] = []
    for seat, verdict in enumerate(verdicts):
        if verdict.is_fault:
            ranks.append(last)
        elif outcome_ranks is None:
            ranks.append(1)
        else:
            mine = outcome_ranks[seat]
            ranks.append(1 + sum(1 for o in active if outcome_ranks[o] < mine))
    return tuple(ranks)
