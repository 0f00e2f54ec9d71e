"""Owners' answers to challenges: a bot with the challenge policy ``ask`` plays a challenge only once its owner accepts.

As lichess's challenges: the challenged owner sees each incoming challenge and accepts or declines
it; the challenger sees the answer in the challenge's status (docs/participants.md "Challenges").

A challenge seating bots of another account whose policy is ``ask`` is created ``asked``
(:func:`ladder.challenges.create_challenge`), with one ``challenge_answers`` row per such bot
(answer NULL). Then:

```
every asked owner accepts   -> challenge "waiting" (for its bots to connect: dispatch_challenges)
one owner declines          -> challenge "declined", match "declined": never played
expires_at passes first     -> challenge and match "expired" (dispatch_challenges names who did not answer)
```

An owner answers for all of their asked bots in a challenge at once. An answer is taken under a
lock of the challenge's row, so of two answers sent at once (accept and decline, or one twice)
exactly one is taken and the other is :class:`~ladder.errors.ChallengeAnswerError`. Only the
owner of an asked bot may answer: for anyone else, the challenger included, the challenge is
:class:`~ladder.errors.MatchNotFoundError`, as if it did not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import run_transaction
from ladder.errors import ChallengeAnswerError, MatchNotFoundError

ANSWERS = ("accepted", "declined")
"""What an owner answers (``challenge_answers.answer``; NULL while pending)."""

ANSWERS_JSON_SQL = (
    "SELECT coalesce(json_agg(json_build_object('bot_id', x.bot_id, 'answer', x.answer, "
    "'answered_at', x.answered_at) ORDER BY x.bot_id), '[]'::json) "
    "FROM challenge_answers x WHERE x.match_id = c.match_id"
)
"""SQL (a scalar subquery of a query over ``challenges c``): the challenge's answers as a JSON list."""


@dataclass(frozen=True, slots=True)
class ChallengeAnswer:
    """One asked bot of a challenge: ``answer`` is ``accepted``, ``declined`` or None (not yet)."""

    bot_id: int
    answer: str | None
    answered_at: datetime | None


def parse_answers(rows: Any) -> tuple[ChallengeAnswer, ...]:
    """The answers of :data:`ANSWERS_JSON_SQL`'s list."""
    return tuple(
        ChallengeAnswer(int(r["bot_id"]), r["answer"],
                        None if r["answered_at"] is None else datetime.fromisoformat(r["answered_at"]))
        for r in rows or ()
    )


def ask_owners(conn: Any, match_id: int, bot_ids: Sequence[int]) -> None:
    """Inside the transaction that creates challenge ``match_id``: its ``bot_ids`` wait for their owners."""
    conn.cursor().executemany("INSERT INTO challenge_answers (match_id, bot_id) VALUES (%s, %s)",
                              [(match_id, b) for b in bot_ids])


def answer_challenge(pool: ConnectionPool, match_id: int, account_id: int, *, accept: bool,
                     now: datetime | None = None) -> str:
    """The owner ``account_id`` accepts or declines challenge ``match_id`` for all of their asked bots in it.

    Args:
        pool: ladder connection pool.
        match_id: the challenge's match.
        account_id: the answering account.
        accept: True to accept, False to decline.
        now: the time the expiry is judged at and the answer stamped with (timezone-aware; default
            the database's ``now()``).

    Returns:
        The challenge's status after the answer: ``asked`` (other owners have yet to answer),
        ``waiting`` (every owner accepted: it waits for its bots) or ``declined``.

    Raises:
        MatchNotFoundError: no challenge ``match_id`` asked a bot of ``account_id``.
        ChallengeAnswerError: this owner answered already, another owner declined, or it expired.
    """

    def write(conn: Any) -> str:
        head = conn.execute(
            "SELECT status, reason, expires_at, expires_at <= coalesce(%s::timestamptz, now()) "
            "FROM challenges WHERE match_id = %s FOR UPDATE", (now, match_id)).fetchone()
        mine = conn.execute(
            "SELECT x.bot_id, b.name, x.answer FROM challenge_answers x JOIN bots b ON b.id = x.bot_id "
            "WHERE x.match_id = %s AND b.account_id = %s ORDER BY x.bot_id", (match_id, account_id)).fetchall()
        if head is None or not mine:
            raise MatchNotFoundError(f"no challenge {match_id} asks a bot of yours")
        status, reason, expires_at, past = head
        given = sorted({a for _, _, a in mine if a is not None})
        if given:
            raise ChallengeAnswerError(f"you {' and '.join(given)} challenge {match_id} already")
        if status != "asked":
            raise ChallengeAnswerError(f"challenge {match_id} is {status}" + (f": {reason}" if reason else ""))
        if past:
            raise ChallengeAnswerError(f"challenge {match_id} expired at {expires_at:%Y-%m-%d %H:%M:%S %Z}")
        conn.execute(
            "UPDATE challenge_answers x SET answer = %s, answered_at = coalesce(%s::timestamptz, now()) "
            "WHERE x.match_id = %s AND x.bot_id = ANY(%s::bigint[])",
            ("accepted" if accept else "declined", now, match_id, [b for b, _, _ in mine]))
        if not accept:
            bots = ", ".join(f"bot {name} (id {b})" for b, name, _ in mine)
            conn.execute("UPDATE challenges SET status = 'declined', reason = %s WHERE match_id = %s",
                         (f"the owner of {bots} declined", match_id))
            conn.execute("UPDATE matches SET status = 'declined' WHERE id = %s AND status = 'waiting'", (match_id,))
            return "declined"
        (left,) = conn.execute("SELECT count(*) FROM challenge_answers WHERE match_id = %s AND answer IS NULL",
                               (match_id,)).fetchone()
        if left:
            return "asked"
        conn.execute("UPDATE challenges SET status = 'waiting' WHERE match_id = %s", (match_id,))
        return "waiting"

    return run_transaction(pool, write)
