"""Entry windows: bots enter an ``open`` tournament until its deadline, then it runs.

```
create_tournament(entry_deadline=T)  -> status "open"
enter_tournament(...) until T        -> tournament_bots rows (position = order of entry)
T passes: close_due_entries (beat)   -> "created" (then planned and run by the workers)
                                        or "cancelled", outcome "too few entrants: ..."
```

A gauntlet's candidate is fixed at creation; entrants join its pool. Who may
enter which bot (ownership, scopes) is checked by the caller (the web API)
before :func:`enter_tournament`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import connection, run_transaction
from ladder.errors import BotNotFoundError, TournamentClosedError, TournamentError, TournamentNotFoundError
from ladder.tournaments import bots_needed


def enter_tournament(pool: ConnectionPool, tournament_id: int, bot_id: int, *, now: datetime | None = None) -> None:
    """Enter a bot into a tournament whose entry window is open.

    Args:
        pool: ladder connection pool.
        tournament_id: the tournament (status ``open``, deadline not passed).
        bot_id: the bot; it joins the end of the tournament's order (a
            gauntlet's pool).
        now: the time the entry deadline is judged at (timezone-aware);
            default the database's ``now()``.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentClosedError: its entry window has closed, it never had one,
            or it is running, finished or cancelled.
        BotNotFoundError: no such bot.
        TournamentError: the bot is revoked, already entered (or is the
            gauntlet's candidate), another bot of its account is in the
            tournament already (S-21), or a house bot that does not play the
            tournament's game.
    """

    def write(conn: Any) -> None:
        row = conn.execute(
            "SELECT status, entry_deadline, entry_deadline <= coalesce(%s::timestamptz, now()), game, "
            "candidate_bot_id, name FROM tournaments WHERE id = %s FOR UPDATE",
            (now, tournament_id),
        ).fetchone()
        if row is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        status, deadline, passed, game, candidate, name = row
        if status != "open" or passed:
            if status == "cancelled":
                why = "is cancelled"
            elif deadline is None:
                why = "has no entry window (its organiser chose its bots)"
            else:
                why = f"closed its entries at {deadline.isoformat()}"
            raise TournamentClosedError(f"tournament {tournament_id} ({name}) {why}")
        bot = conn.execute(
            "SELECT b.name, b.revoked_at, h.games, b.account_id FROM bots b "
            "LEFT JOIN house_bots h ON h.bot_id = b.id AND b.house WHERE b.id = %s",
            (bot_id,),
        ).fetchone()
        if bot is None:
            raise BotNotFoundError(f"no bot with id {bot_id}")
        bot_name, revoked_at, house_games, account_id = bot
        if account_id is not None:  # S-21: two bots of one account in one rated tournament farm Elo off each other
            sibling = conn.execute(
                "SELECT b.name, b.id FROM bots b WHERE b.account_id = %s AND b.id <> %s AND (b.id = %s OR EXISTS "
                "(SELECT 1 FROM tournament_bots tb WHERE tb.tournament_id = %s AND tb.bot_id = b.id)) LIMIT 1",
                (account_id, bot_id, candidate, tournament_id),
            ).fetchone()
            if sibling is not None:
                raise TournamentError(f"bot {sibling[0]} (id {sibling[1]}) of the same account already plays in "
                                      f"tournament {tournament_id}: one bot per account (its matches are rated)")
        if revoked_at is not None:
            raise TournamentError(f"bot {bot_name} (id {bot_id}) is revoked and cannot enter")
        if house_games is not None and game not in house_games:
            raise TournamentError(f"bot {bot_name} (id {bot_id}) does not play {game}")
        if candidate == bot_id:
            raise TournamentError(f"bot {bot_name} (id {bot_id}) is this gauntlet's candidate")
        inserted = conn.execute(
            "INSERT INTO tournament_bots (tournament_id, bot_id, position) "
            "SELECT %s, %s, coalesce(max(position) + 1, 0) FROM tournament_bots WHERE tournament_id = %s "
            "ON CONFLICT (tournament_id, bot_id) DO NOTHING RETURNING bot_id",
            (tournament_id, bot_id, tournament_id),
        ).fetchone()
        if inserted is None:
            raise TournamentError(f"bot {bot_name} (id {bot_id}) has already entered tournament {tournament_id}")

    run_transaction(pool, write)


def close_entries(pool: ConnectionPool, tournament_id: int, *, now: datetime | None = None) -> str:
    """Close a tournament's entry window once its deadline has passed (idempotent).

    With enough entrants (the largest player count, a gauntlet's candidate
    included) the tournament becomes ``created``, ready to plan; otherwise
    ``cancelled`` with ``outcome`` saying why ("too few entrants: 1 bot
    entered, at least 2 needed"; a gauntlet whose candidate was revoked).
    ``now`` is the time the deadline is judged at (timezone-aware); default
    the database's ``now()``.

    Returns:
        The status afterwards: ``open`` (deadline not passed yet),
        ``created``, ``cancelled``, or whatever it was when not ``open``.

    Raises:
        TournamentNotFoundError: no such tournament.
    """

    def write(conn: Any) -> str:
        row = conn.execute(
            "SELECT status, entry_deadline <= coalesce(%s::timestamptz, now()), format, player_counts, "
            "candidate_bot_id FROM tournaments WHERE id = %s FOR UPDATE",
            (now, tournament_id),
        ).fetchone()
        if row is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        status, passed, fmt, counts, candidate = row
        if status != "open" or not passed:
            return str(status)
        entrants = int(conn.execute(
            "SELECT count(*) FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
            "WHERE tb.tournament_id = %s AND b.revoked_at IS NULL",
            (tournament_id,),
        ).fetchone()[0])
        needed = bots_needed(fmt, counts)
        if candidate is not None and conn.execute(
            "SELECT revoked_at IS NOT NULL FROM bots WHERE id = %s", (candidate,)
        ).fetchone()[0]:
            conn.execute("UPDATE tournaments SET status = 'cancelled', outcome = %s WHERE id = %s",
                         (f"the candidate (bot id {candidate}) was revoked", tournament_id))
            return "cancelled"
        if entrants < needed:
            pool_note = " (the candidate included)" if fmt == "gauntlet" else ""
            outcome = (f"too few entrants: {entrants} bot{'s' if entrants != 1 else ''} entered, "
                       f"at least {needed} needed{pool_note}")
            conn.execute("UPDATE tournaments SET status = 'cancelled', outcome = %s WHERE id = %s",
                         (outcome, tournament_id))
            return "cancelled"
        # Bots revoked during the window leave it before planning.
        conn.execute(
            "DELETE FROM tournament_bots tb USING bots b WHERE tb.tournament_id = %s AND b.id = tb.bot_id "
            "AND b.revoked_at IS NOT NULL",
            (tournament_id,),
        )
        conn.execute("UPDATE tournaments SET status = 'created' WHERE id = %s", (tournament_id,))
        return "created"

    return run_transaction(pool, write)


def close_due_entries(pool: ConnectionPool, *, now: datetime | None = None) -> tuple[list[int], list[int]]:
    """Close every entry window past its deadline (the workers' beat calls this); ``now`` is the
    time deadlines are judged at (timezone-aware), default the database's ``now()``.

    Returns:
        ``(tournaments to plan, tournaments cancelled now)``. "To plan" also
        lists tournaments whose window closed earlier but that were never
        planned (a worker lost between closing and planning), so planning,
        which is idempotent, is retried until it happens.
    """
    with connection(pool) as conn:
        due = [int(r[0]) for r in conn.execute(
            "SELECT id FROM tournaments WHERE status = 'open' AND entry_deadline <= coalesce(%s::timestamptz, now()) "
            "ORDER BY id", (now,)
        ).fetchall()]
        stranded = [int(r[0]) for r in conn.execute(
            "SELECT id FROM tournaments WHERE status = 'created' AND entry_deadline IS NOT NULL ORDER BY id"
        ).fetchall()]
    ready, cancelled = list(stranded), []
    for tid in due:
        status = close_entries(pool, tid, now=now)
        if status == "created":
            ready.append(tid)
        elif status == "cancelled":
            cancelled.append(tid)
    return sorted(set(ready)), cancelled
