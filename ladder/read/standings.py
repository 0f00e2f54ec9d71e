"""A tournament's standings and crosstable, computed from stored seats (docs/faults.md F-14): one implementation
for the web site, the CLI and the workers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from ladder import elo
from ladder.db import connection
from ladder.errors import TournamentNotFoundError


@dataclass(frozen=True, slots=True)
class StandingEntry:
    """One line of a tournament's standings (see :func:`standings_and_crosstable`).

    Attributes:
        points: pairwise points (1 per opponent ranked below, 1/2 per tie).
    """

    position: int
    bot_id: int
    name: str
    points: float
    matches: int
    wins: int
    draws: int
    losses: int
    avg_score: float
    avg_rank: float


@dataclass(frozen=True, slots=True)
class CrossCell:
    """Pairwise record of the row bot against the column bot: points out of ``games`` pairings."""

    points: float
    games: int


TOURNAMENT_BOTS_SQL = (
    "SELECT tb.bot_id, b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
    "WHERE tb.tournament_id = %s ORDER BY tb.position"
)


TOURNAMENT_SEATS_SQL = (
    "SELECT s.match_id, s.bot_id, s.rank, s.score FROM seats s "
    "WHERE s.match_id = ANY(ARRAY(SELECT id FROM matches WHERE tournament_id = %s AND status = 'finished')) "
    "AND s.rank IS NOT NULL ORDER BY s.match_id, s.seat"
)
"""Seats of a tournament's finished matches: the match ids from ``matches_by_tournament``, then the
seats by their key (a join would have the planner scan every seat of the ladder)."""


def standings_and_crosstable(
    bots: Sequence[tuple[int, str]], seat_rows: Sequence[tuple[int, int, int, float | None]]
) -> tuple[list[StandingEntry], list[list[CrossCell | None]]]:
    """Standings and crosstable from the seats of finished matches, in one pass.

    Pairwise points: 1 per opponent ranked below, 1/2 per tie (the Elo
    decomposition's actual score); a win is a sole first place, a draw a
    shared one (:func:`ladder.elo.seat_outcomes`); order by points, then wins,
    then bot id; every bot of the tournament listed.

    Args:
        bots: ``(bot_id, name)`` of the tournament, in position order.
        seat_rows: ``(match_id, bot_id, rank, score)`` ordered by match.
    """
    names = dict(bots)
    ids = [b for b, _ in bots]
    index = {b: i for i, b in enumerate(ids)}
    for _, bid, _, _ in seat_rows:  # a seated bot missing from tournament_bots still counts
        if bid not in index:
            index[bid] = len(ids)
            ids.append(bid)
    n = len(ids)
    points = [0.0] * n
    played, wins, draws, losses, rank_sum = [0] * n, [0] * n, [0] * n, [0] * n, [0] * n
    score_sum = [0.0] * n
    pair_points = [[0.0] * n for _ in range(n)]
    pair_games = [[0] * n for _ in range(n)]
    by_match: dict[int, list[tuple[int, int, float | None]]] = defaultdict(list)
    for mid, bid, rank, score in seat_rows:
        by_match[mid].append((index[bid], rank, score))
    for seats in by_match.values():
        firsts = sum(1 for _, r, _ in seats if r == 1)  # as ladder.elo.seat_outcomes
        for i, rank, score in seats:
            played[i] += 1
            if rank != 1:
                losses[i] += 1
            elif firsts == 1:
                wins[i] += 1
            else:
                draws[i] += 1
            score_sum[i] += score or 0.0
            rank_sum[i] += rank
            row_p, row_g = pair_points[i], pair_games[i]
            for j, other_rank, _ in seats:
                if j != i:
                    p = elo.pair_score(rank, other_rank)
                    points[i] += p
                    row_p[j] += p
                    row_g[j] += 1
    order = sorted(range(n), key=lambda i: (-points[i], -wins[i], ids[i]))
    standings = [
        StandingEntry(
            position=pos, bot_id=ids[i], name=names.get(ids[i], str(ids[i])), points=points[i],
            matches=played[i], wins=wins[i], draws=draws[i], losses=losses[i],
            avg_score=(score_sum[i] / played[i]) if played[i] else 0.0,
            avg_rank=(rank_sum[i] / played[i]) if played[i] else 0.0,
        )
        for pos, i in enumerate(order, start=1)
    ]
    cross: list[list[CrossCell | None]] = [
        [None if a == b else CrossCell(pair_points[a][b], pair_games[a][b]) for b in order] for a in order
    ]
    return standings, cross


def tournament_standings(pool: ConnectionPool, tournament_id: int) -> list[StandingEntry]:
    """Standings of a tournament from the stored seats of its finished matches (docs/faults.md F-14).

    Every bot of the tournament is listed, with zeros before its first result
    (see :func:`standings_and_crosstable` for the rules).

    Raises:
        TournamentNotFoundError: no such tournament.
    """
    with connection(pool) as conn:
        if conn.execute("SELECT 1 FROM tournaments WHERE id = %s", (tournament_id,)).fetchone() is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        bots = conn.execute(TOURNAMENT_BOTS_SQL, (tournament_id,)).fetchall()
        seat_rows = conn.execute(TOURNAMENT_SEATS_SQL, (tournament_id,)).fetchall()
    return standings_and_crosstable(bots, seat_rows)[0]
