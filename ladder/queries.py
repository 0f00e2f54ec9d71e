"""Read side of the ladder: leaderboards, recent matches, replays, standings, rating rebuilds.

Everything here is computed from stored rows (FAULTS F-14): a worker's own
counts are never trusted. :func:`rebuild_ratings` recomputes every rating
from the seats of finished matches in ``result_seq`` order and gives the same
numbers as the online updates (DESIGN §6).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import zstandard
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder import elo
from ladder.db import connection, run_transaction
from ladder.errors import MatchNotFoundError, TournamentNotFoundError


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One bot's line on a game's leaderboard.

    Attributes:
        rank: position, 1 = highest Elo (ties broken by fewer games, then bot id).
        bot_id / name / version: the bot.
        elo: current Elo rating (points).
        games / wins / draws / losses: rated matches; a win is a sole first
            place, a draw a shared first place, anything else a loss.
        avg_score: mean game score (the game's own points) per match.
        last_played: when its last rated match finished.
    """

    rank: int
    bot_id: int
    name: str
    version: str
    elo: float
    games: int
    wins: int
    draws: int
    losses: int
    avg_score: float
    last_played: datetime | None


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat of a match: the bot, and (once finished) its rank, score and verdict."""

    seat: int
    bot_id: int
    name: str
    rank: int | None
    score: float | None
    verdict: str | None


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A match as listed on a page (no seed, no replay)."""

    id: int
    tournament_id: int | None
    tournament: str | None
    game: str
    game_string: str
    status: str
    attempt: int
    finished_at: datetime | None
    seats: tuple[SeatSummary, ...]


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One bot's line in a tournament's standings, computed from finished seats.

    Attributes:
        position: 1 = best (by points, then wins, then bot id).
        points: pairwise points: per match, 1 per opponent ranked below, 1/2
            per opponent ranked equal (the Elo decomposition's actual score).
        matches / wins / draws / losses: finished matches (win = sole first).
        score_sum: total game score.
        avg_rank: mean rank.
    """

    position: int
    bot_id: int
    name: str
    points: float
    matches: int
    wins: int
    draws: int
    losses: int
    score_sum: float
    avg_rank: float


def leaderboard(
    pool: ConnectionPool, game: str, *, limit: int | None = None, include_revoked: bool = False
) -> list[LeaderboardRow]:
    """Rated bots of ``game`` ordered by Elo, highest first (index ``ratings_leaderboard``).

    Args:
        pool: ladder connection pool.
        game: registry name.
        limit: most rows, or all when ``None``.
        include_revoked: also list bots whose token was revoked.
    """
    where = "" if include_revoked else "AND b.revoked_at IS NULL"
    sql = (
        "SELECT r.bot_id, b.name, b.version, r.elo, r.games, r.wins, r.draws, r.losses, r.score_sum, r.last_played "
        f"FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = %s {where} "
        "ORDER BY r.elo DESC, r.games ASC, r.bot_id ASC"
    )
    params: list[Any] = [game]
    if limit is not None:
        sql += " LIMIT %s"
        params.append(limit)
    with connection(pool) as conn:
        rows = conn.execute(sql, params).fetchall()
    return [
        LeaderboardRow(i, bid, name, ver, e, g, w, d, lo, (ss / g) if g else 0.0, lp)
        for i, (bid, name, ver, e, g, w, d, lo, ss, lp) in enumerate(rows, start=1)
    ]


def _seat_summaries(conn: Any, match_ids: list[int]) -> dict[int, list[SeatSummary]]:
    out: dict[int, list[SeatSummary]] = defaultdict(list)
    if not match_ids:
        return out
    rows = conn.execute(
        "SELECT s.match_id, s.seat, s.bot_id, b.name, s.rank, s.score, s.verdict FROM seats s "
        "JOIN bots b ON b.id = s.bot_id WHERE s.match_id = ANY(%s::bigint[]) ORDER BY s.match_id, s.seat",
        (match_ids,),
    ).fetchall()
    for mid, seat, bid, name, rank, score, verdict in rows:
        out[mid].append(SeatSummary(seat, bid, name, rank, score, verdict))
    return out


def recent_matches(
    pool: ConnectionPool, game: str | None = None, limit: int = 20, *, status: str | None = None,
    tournament_id: int | None = None, bot_id: int | None = None,
) -> list[MatchSummary]:
    """Most recent matches first (finished ones by finish time, others by start or planning time).

    Args:
        pool: ladder connection pool.
        game: only this game (registry name), or all.
        limit: most matches returned.
        status: only matches with this status (e.g. ``"finished"``), or all.
        tournament_id: only this tournament's matches.
        bot_id: only matches where this bot holds a seat.
    """
    conds, params = [], []
    for column, value in (("m.game", game), ("m.status", status), ("m.tournament_id", tournament_id)):
        if value is not None:
            conds.append(f"{column} = %s")
            params.append(value)
    if bot_id is not None:
        conds.append("EXISTS (SELECT 1 FROM seats x WHERE x.match_id = m.id AND x.bot_id = %s)")
        params.append(bot_id)
    where = ("WHERE " + " AND ".join(conds)) if conds else ""
    sql = (
        "SELECT m.id, m.tournament_id, t.name, m.game, m.game_string, m.status, m.attempt, m.finished_at "
        f"FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id {where} "
        "ORDER BY coalesce(m.finished_at, m.started_at, m.created_at) DESC, m.id DESC LIMIT %s"
    )
    with connection(pool) as conn:
        rows = conn.execute(sql, [*params, limit]).fetchall()
        seats = _seat_summaries(conn, [r[0] for r in rows])
    return [
        MatchSummary(
            id=mid, tournament_id=tid, tournament=tname, game=g, game_string=gs, status=st, attempt=att,
            finished_at=fin, seats=tuple(seats.get(mid, [])),
        )
        for mid, tid, tname, g, gs, st, att, fin in rows
    ]


def export_replay(pool: ConnectionPool, match_id: int) -> dict[str, Any]:
    """The stored record of a match: its row, seats, attempts and decompressed replay.

    The seed is included only once the match is ``finished`` (before that
    only its commitment is public, DESIGN §6 / FAULTS F-20).

    Returns:
        ``{"match": {id, tournament_id, plan_key, game, game_string,
        seed_commitment, seed (finished only), time_control, status, attempt,
        created_at, started_at, finished_at, result_seq} (timestamps ISO-8601),
        "seats": [{seat, bot_id, name, version, rank, score, verdict,
        time_used_ms, decisions}], "attempts": [{attempt, status, worker,
        error, started_at, ended_at}], "replay": <the replay JSON object> or
        None, "replay_raw_bytes": int or None}``.

    Raises:
        MatchNotFoundError: no such match.
    """
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        m = cur.execute(
            "SELECT id, tournament_id, plan_key, game, game_string, seed_commitment, seed, time_control, status, "
            "attempt, created_at, started_at, finished_at, result_seq FROM matches WHERE id = %s",
            (match_id,),
        ).fetchone()
        if m is None:
            raise MatchNotFoundError(f"no match with id {match_id}")
        seats = cur.execute(
            "SELECT s.seat, s.bot_id, b.name, b.version, s.rank, s.score, s.verdict, s.time_used_ms, s.decisions "
            "FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.match_id = %s ORDER BY s.seat",
            (match_id,),
        ).fetchall()
        attempts = cur.execute(
            "SELECT attempt, status, worker, error, started_at, ended_at FROM match_attempts "
            "WHERE match_id = %s ORDER BY attempt",
            (match_id,),
        ).fetchall()
        rep = cur.execute("SELECT data, raw_bytes FROM replays WHERE match_id = %s", (match_id,)).fetchone()
    if m["status"] != "finished":
        m.pop("seed")
    replay = None
    if rep is not None:
        replay = json.loads(zstandard.ZstdDecompressor().decompress(bytes(rep["data"])).decode("utf-8"))
    return {
        "match": _iso(m),
        "seats": [_iso(s) for s in seats],
        "attempts": [_iso(a) for a in attempts],
        "replay": replay,
        "replay_raw_bytes": None if rep is None else rep["raw_bytes"],
    }


def replay_json(pool: ConnectionPool, match_id: int) -> str | None:
    """The stored replay JSON text of a match exactly as recorded, or ``None`` if it has none."""
    with connection(pool) as conn:
        row = conn.execute("SELECT data FROM replays WHERE match_id = %s", (match_id,)).fetchone()
    return None if row is None else zstandard.ZstdDecompressor().decompress(bytes(row[0])).decode("utf-8")


def _iso(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def tournament_standings(pool: ConnectionPool, tournament_id: int) -> list[StandingRow]:
    """Standings of a tournament from the stored seats of its finished matches (FAULTS F-14).

    Every bot of the tournament is listed, with zeros before its first result.

    Raises:
        TournamentNotFoundError: no such tournament.
    """
    with connection(pool) as conn:
        if conn.execute("SELECT 1 FROM tournaments WHERE id = %s", (tournament_id,)).fetchone() is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        bots = conn.execute(
            "SELECT tb.bot_id, b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
            "WHERE tb.tournament_id = %s ORDER BY tb.position",
            (tournament_id,),
        ).fetchall()
        rows = conn.execute(
            "SELECT s.match_id, s.bot_id, s.rank, s.score FROM seats s JOIN matches m ON m.id = s.match_id "
            "WHERE m.tournament_id = %s AND m.status = 'finished' ORDER BY s.match_id, s.seat",
            (tournament_id,),
        ).fetchall()
    by_match: dict[int, list[tuple[int, int, float | None]]] = defaultdict(list)
    for mid, bid, rank, score in rows:
        by_match[mid].append((bid, rank, score))
    acc: dict[int, _Tally] = {bid: _Tally() for bid, _ in bots}
    for seats in by_match.values():
        ranks = [r for _, r, _ in seats]
        for (bid, rank, score), outcome in zip(seats, elo.seat_outcomes(ranks), strict=True):
            t = acc.setdefault(bid, _Tally())
            t.points += sum(elo.pair_score(rank, other) for other in ranks) - 0.5  # minus itself (a tie)
            t.matches += 1
            t.wins += outcome == "win"
            t.draws += outcome == "draw"
            t.losses += outcome == "loss"
            t.score_sum += score or 0.0
            t.rank_sum += rank
    names = dict(bots)
    order = sorted(acc, key=lambda b: (-acc[b].points, -acc[b].wins, b))
    return [
        StandingRow(
            position=i,
            bot_id=b,
            name=names.get(b, str(b)),
            points=acc[b].points,
            matches=acc[b].matches,
            wins=acc[b].wins,
            draws=acc[b].draws,
            losses=acc[b].losses,
            score_sum=acc[b].score_sum,
            avg_rank=(acc[b].rank_sum / acc[b].matches) if acc[b].matches else 0.0,
        )
        for i, b in enumerate(order, start=1)
    ]


@dataclass
class _Tally:
    points: float = 0.0
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    score_sum: float = 0.0
    rank_sum: int = 0


def rebuild_ratings(pool: ConnectionPool, game: str | None = None, *, k: float = elo.DEFAULT_K) -> dict[str, Any]:
    """Recompute ratings and rating history from the seats of finished matches, in ``result_seq`` order.

    Casual matches (``matches.rated`` false) are skipped, as online. Runs in one transaction holding ``EXCLUSIVE`` locks on ``ratings`` and
    ``rating_history`` (results being recorded meanwhile wait, then apply on
    top of the rebuilt numbers). Uses the same arithmetic as
    :func:`ladder.matches.record_result`, so the numbers are identical to the
    online ones (DESIGN §6); a rebuild also repairs ratings after a change of K
    or a deleted match.

    Args:
        pool: ladder connection pool.
        game: rebuild only this game, or every game.
        k: Elo K-factor.

    Returns:
        ``{"games": {game: {"matches": n, "bots": m}}, "matches": total, "changed": rows whose
        elo differed from the stored value}``.
    """

    def rebuild(conn: Any) -> dict[str, Any]:
        conn.execute("LOCK TABLE ratings, rating_history IN EXCLUSIVE MODE")
        cond, params = ("AND m.game = %s", [game]) if game is not None else ("", [])
        old = {
            (b, g): e
            for b, g, e in conn.execute(
                "SELECT bot_id, game, elo FROM ratings" + (" WHERE game = %s" if game else ""), params
            ).fetchall()
        }
        rows = conn.execute(
            "SELECT m.id, m.game, m.result_seq, m.finished_at, s.bot_id, s.rank, s.score FROM matches m "
            f"JOIN seats s ON s.match_id = m.id WHERE m.status = 'finished' AND m.rated {cond} "
            "ORDER BY m.result_seq, s.seat",
            params,
        ).fetchall()
        matches: list[tuple[int, str, int, Any, list[tuple[int, int, float | None]]]] = []
        for mid, g, seq, fin, bid, rank, score in rows:
            if not matches or matches[-1][0] != mid:
                matches.append((mid, g, seq, fin, []))
            matches[-1][4].append((bid, rank, score))
        ratings: dict[tuple[int, str], dict[str, Any]] = {}
        history = []
        per_game: dict[str, dict[str, Any]] = defaultdict(lambda: {"matches": 0, "bots": set()})
        for mid, g, seq, fin, seats in matches:
            states = [
                ratings.setdefault(
                    (bid, g),
                    {"elo": elo.INITIAL_RATING, "games": 0, "win": 0, "draw": 0, "loss": 0, "score": 0.0, "last": None},
                )
                for bid, _, _ in seats
            ]
            before = [st["elo"] for st in states]
            ranks = [r for _, r, _ in seats]
            deltas = elo.pairwise_deltas(before, ranks, k)
            outcomes = elo.seat_outcomes(ranks)
            for (bid, _, score), st, b, d, outcome in zip(seats, states, before, deltas, outcomes, strict=True):
                st["elo"] = b + d
                st["games"] += 1
                st[outcome] += 1
                st["score"] += score or 0.0
                st["last"] = fin if st["last"] is None or fin > st["last"] else st["last"]
                history.append((mid, bid, g, seq, b, b + d, d))
                per_game[g]["bots"].add(bid)
            per_game[g]["matches"] += 1
        where = " WHERE game = %s" if game is not None else ""
        conn.execute("DELETE FROM rating_history" + where, params)
        conn.execute("DELETE FROM ratings" + where, params)
        with conn.cursor().copy(
            "COPY ratings (bot_id, game, elo, games, wins, draws, losses, score_sum, last_played) FROM STDIN"
        ) as copy:
            for (bid, g), st in sorted(ratings.items()):
                copy.write_row(
                    (bid, g, st["elo"], st["games"], st["win"], st["draw"], st["loss"], st["score"], st["last"])
                )
        with conn.cursor().copy(
            "COPY rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) FROM STDIN"
        ) as copy:
            for row in history:
                copy.write_row(row)
        changed = sum(1 for key, st in ratings.items() if old.get(key) != st["elo"]) + sum(
            1 for key in old if key not in ratings
        )
        return {
            "games": {g: {"matches": v["matches"], "bots": len(v["bots"])} for g, v in sorted(per_game.items())},
            "matches": len(matches),
            "changed": changed,
        }

    return run_transaction(pool, rebuild)
