"""Tournaments as listed on the home page, and the tournament page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.read.common import NotFound, game_info
from ladder.read.matches import MATCH_COLUMNS, MatchListItem, match_items
from ladder.read.standings import (
    TOURNAMENT_BOTS_SQL,
    TOURNAMENT_SEATS_SQL,
    CrossCell,
    StandingEntry,
    standings_and_crosstable,
)


@dataclass(frozen=True, slots=True)
class TournamentListItem:
    """A tournament as listed on the home page.

    Attributes:
        state: ``open`` (taking entries), ``not_started`` (no match yet),
            ``in_progress`` (matches planned or running), ``finished`` (none left) or ``cancelled``.
    """

    id: int
    name: str
    game: str
    format: str
    created_at: datetime
    state: str
    total: int
    finished: int


@dataclass(frozen=True, slots=True)
class TournamentPage:
    """Everything the tournament page shows.

    Attributes:
        time_control: ``{base_ms, increment_ms, cap_ms, margin_ms}`` in milliseconds.
        counts: matches by status (planned, running, finished, aborted_no_show, failed).
        crosstable: ``crosstable[i][j]`` = standings bot i against standings bot j
            (None on the diagonal), in standings order.
        matches: one page of the tournament's matches, by match id.
    """

    id: int
    name: str
    game: str
    long_name: str
    format: str
    player_counts: list[int]
    rounds: int
    time_control: dict[str, int]
    game_options: dict[str, Any]
    status: str
    state: str
    created_at: datetime
    counts: dict[str, int]
    standings: list[StandingEntry]
    crosstable: list[list[CrossCell | None]]
    matches: list[MatchListItem]
    page: int
    per_page: int
    pages: int


def tournament_state(status: str, total: int, open_: int) -> str:
    """``open`` (taking entries, ladder.entries), ``cancelled``, ``not_started``, ``in_progress`` or ``finished``."""
    if status in ("cancelled", "open"):
        return status
    if total == 0:
        return "not_started"
    return "in_progress" if open_ else "finished"


def tournaments_list(pool: ConnectionPool, limit: int = 20) -> list[TournamentListItem]:
    """The newest tournaments with their progress (index ``matches_by_tournament``)."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT t.id, t.name, t.game, t.format, t.created_at, t.status, c.total, c.finished, c.open "
            "FROM (SELECT * FROM tournaments ORDER BY id DESC LIMIT %s) t "
            "CROSS JOIN LATERAL (SELECT count(*) AS total, count(*) FILTER (WHERE m.status = 'finished') AS finished, "
            "count(*) FILTER (WHERE m.status IN ('planned', 'running')) AS open "
            "FROM matches m WHERE m.tournament_id = t.id) c ORDER BY t.id DESC",
            (limit,),
        ).fetchall()
    return [
        TournamentListItem(
            id=tid, name=name, game=game, format=fmt, created_at=created,
            state=tournament_state(status, int(total), int(open_)), total=int(total), finished=int(fin),
        )
        for tid, name, game, fmt, created, status, total, fin, open_ in rows
    ]


def tournament_page(pool: ConnectionPool, tournament_id: int, *, page: int = 1, per_page: int = 50) -> TournamentPage:
    """The tournament page: settings, progress, standings, crosstable, one page of matches.

    Raises:
        NotFound: no such tournament.
        ValueError: ``page`` < 1 or ``per_page`` out of 1..500.
    """
    if page < 1 or not 1 <= per_page <= 500:
        raise ValueError("page must be >= 1 and per_page in 1..500")
    with connection(pool) as conn:
        t = conn.execute(
            "SELECT id, name, game, format, player_counts, rounds, time_control, game_options, status, created_at "
            "FROM tournaments WHERE id = %s",
            (tournament_id,),
        ).fetchone()
        if t is None:
            raise NotFound(f"no tournament with id {tournament_id}")
        counts = {s: 0 for s in ("planned", "running", "finished", "aborted_no_show", "failed")}
        for status, n in conn.execute(
            "SELECT status, count(*) FROM matches WHERE tournament_id = %s GROUP BY status", (tournament_id,)
        ):
            counts[status] = int(n)
        bots = conn.execute(TOURNAMENT_BOTS_SQL, (tournament_id,)).fetchall()
        seat_rows = conn.execute(TOURNAMENT_SEATS_SQL, (tournament_id,)).fetchall()
        rows = conn.execute(
            f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE m.tournament_id = %s ORDER BY m.id LIMIT %s OFFSET %s",
            (tournament_id, per_page, (page - 1) * per_page),
        ).fetchall()
        matches = match_items(conn, rows)
    standings, cross = standings_and_crosstable(bots, seat_rows)
    total = sum(counts.values())
    open_ = counts["planned"] + counts["running"]
    return TournamentPage(
        id=t[0], name=t[1], game=t[2], long_name=game_info(t[2])[0], format=t[3], player_counts=list(t[4]),
        rounds=t[5], time_control=dict(t[6]), game_options=dict(t[7]), status=t[8],
        state=tournament_state(t[8], total, open_), created_at=t[9], counts=counts, standings=standings,
        crosstable=cross, matches=matches, page=page, per_page=per_page, pages=max(1, -(-total // per_page)),
    )
