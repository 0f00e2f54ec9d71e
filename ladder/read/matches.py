"""Matches as listed on pages and by ``parterre matches``: seats and results, no seed, no replay."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import connection


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a match: the bot and, once finished, its result.

    Attributes:
        time_used_ms: server-measured thinking time of the whole match, milliseconds.
        decisions: decisions the seat took.
    """

    seat: int
    bot_id: int
    name: str
    version: str
    rank: int | None = None
    score: float | None = None
    verdict: str | None = None
    time_used_ms: int | None = None
    decisions: int | None = None


@dataclass(frozen=True, slots=True)
class MatchListItem:
    """A match as listed on a page (no seed, no replay).

    Attributes:
        players: seat count.
        finished_at: None unless finished.
    """

    id: int
    game: str
    game_string: str
    players: int
    tournament_id: int | None
    tournament: str | None
    status: str
    finished_at: datetime | None
    seats: list[SeatResult]


SEAT_COLUMNS = (
    "s.match_id, s.seat, s.bot_id, b.name, b.version, s.rank, s.score, s.verdict, s.time_used_ms, s.decisions"
)
"""Columns of a seat row as :func:`seat_map` reads them (``seats s JOIN bots b``)."""


def seat_map(rows: Sequence[tuple[Any, ...]]) -> dict[int, list[SeatResult]]:
    """Seat rows (:data:`SEAT_COLUMNS`, ordered by match and seat) by match id."""
    out: dict[int, list[SeatResult]] = defaultdict(list)
    for mid, seat, bid, name, ver, rank, score, verdict, used, dec in rows:
        out[mid].append(SeatResult(seat, bid, name, ver, rank, score, verdict, used, dec))
    return out


def seats_of(conn: Any, match_ids: Sequence[int]) -> dict[int, list[SeatResult]]:
    if not match_ids:
        return defaultdict(list)
    rows = conn.execute(
        f"SELECT {SEAT_COLUMNS} FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.match_id = ANY(%s::bigint[]) "
        "ORDER BY s.match_id, s.seat",
        (list(match_ids),),
    ).fetchall()
    return seat_map(rows)


MATCH_COLUMNS = (
    "m.id, m.game, m.game_string, m.tournament_id, t.name, m.status, m.finished_at"
)


def match_items(conn: Any, rows: Sequence[tuple[Any, ...]],
                seats: dict[int, list[SeatResult]] | None = None) -> list[MatchListItem]:
    """List items of match rows (:data:`MATCH_COLUMNS`); their seats are read unless given."""
    if seats is None:
        seats = seats_of(conn, [r[0] for r in rows])
    return [
        MatchListItem(
            id=mid, game=g, game_string=gs, players=len(seats.get(mid, [])), tournament_id=tid,
            tournament=tname, status=st, finished_at=fin, seats=seats.get(mid, []),
        )
        for mid, g, gs, tid, tname, st, fin in rows
    ]


def latest_results(pool: ConnectionPool, game: str, limit: int = 10) -> list[MatchListItem]:
    """The most recently finished matches of ``game`` (index ``matches_game_finished``)."""
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE m.game = %s AND m.finished_at IS NOT NULL ORDER BY m.finished_at DESC LIMIT %s",
            (game, limit),
        ).fetchall()
        return match_items(conn, rows)


def recent_matches(
    pool: ConnectionPool, game: str | None = None, limit: int = 20, *, status: str | None = None,
    tournament_id: int | None = None, bot_id: int | None = None,
) -> list[MatchListItem]:
    """Most recent matches first (finished ones by finish time, others by start or planning time).

    Args:
        pool: ladder connection pool.
        game: only this game (registry name), or all.
        limit: most matches returned.
        status: only matches with this status (e.g. ``"finished"``), or all.
        tournament_id: only this tournament's matches.
        bot_id: only matches where this bot holds a seat.
    """
    conds: list[str] = []
    params: list[Any] = []
    for column, value in (("m.game", game), ("m.status", status), ("m.tournament_id", tournament_id)):
        if value is not None:
            conds.append(f"{column} = %s")
            params.append(value)
    if bot_id is not None:
        conds.append("EXISTS (SELECT 1 FROM seats x WHERE x.match_id = m.id AND x.bot_id = %s)")
        params.append(bot_id)
    where = ("WHERE " + " AND ".join(conds)) if conds else ""
    sql = (
        f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id {where} "
        "ORDER BY coalesce(m.finished_at, m.started_at, m.created_at) DESC, m.id DESC LIMIT %s"
    )
    with connection(pool) as conn:
        rows = conn.execute(sql, [*params, limit]).fetchall()
        return match_items(conn, rows)
