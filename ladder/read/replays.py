"""One match: the match page (seats, seed, attempts, the replay's steps), the replay cache, and the export.

A seed is published only once its match is ``finished`` (docs/faults.md
F-20); before that only its sha256 commitment is. The seat rotations of one
deal (round-robin, gauntlet, duplicate) share a seed, so a finished match's
seed, replay, steps, boards and outcome are withheld too while another match
dealt the same seed is still waiting, planned or running (S-20): its seed is
that twin's whole deal. :data:`TWIN_OPEN_SQL` is the one test of it, used by
:func:`match_page`, :meth:`ReplayCache.get` (every replay the site serves goes
through it) and :func:`export_replay`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder.db import connection
from ladder.errors import MatchNotFoundError
from ladder.read.common import NotFound, decompress_replay, game_info
from ladder.read.matches import MATCH_COLUMNS, MatchListItem, SeatResult, match_items, seats_of

OPEN_STATUSES = ("waiting", "planned", "running")
"""Statuses of a match that is not over yet (``finished``, ``failed``, ``aborted_no_show`` and ``expired`` are)."""

TWIN_OPEN_SQL = (
    "EXISTS (SELECT 1 FROM matches tw WHERE tw.seed = {m}.seed AND tw.id <> {m}.id "
    f"AND tw.status IN ({', '.join(repr(s) for s in OPEN_STATUSES)}))"
)
"""SQL (format ``m=`` the alias of the match): another match on the same seed is not over yet (S-20)."""


def example_replays(pool: ConnectionPool, game: str, limit: int = 5) -> list[MatchListItem]:
    """The most recently finished matches of ``game`` whose replay the site shows: stored, and not held
    while another match on its deal is unfinished (:data:`TWIN_OPEN_SQL`, S-20). The rules pages link them."""
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT {MATCH_COLUMNS} FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE m.game = %s AND m.status = 'finished' AND m.finished_at IS NOT NULL "
            "AND EXISTS (SELECT 1 FROM replays r WHERE r.match_id = m.id) "
            f"AND NOT {TWIN_OPEN_SQL.format(m='m')} ORDER BY m.finished_at DESC, m.id DESC LIMIT %s",
            (game, limit),
        ).fetchall()
        return match_items(conn, rows)


def twins_open(pool: ConnectionPool, match_id: int) -> bool:
    """Another match dealt the same seed as ``match_id`` is still waiting, planned or running (S-20).

    While it is, nothing derived from the deal of ``match_id`` may be published:
    not its seed, replay, steps, boards, outcome, nor a live feed.
    """
    with connection(pool) as conn:
        row = conn.execute(f"SELECT {TWIN_OPEN_SQL.format(m='m')} FROM matches m WHERE m.id = %s",
                           (match_id,)).fetchone()
    return bool(row and row[0])


@dataclass(frozen=True, slots=True)
class AttemptInfo:
    """One attempt of a match (worker names and error texts are not published)."""

    attempt: int
    status: str
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One replay step as listed beside the viewer.

    Attributes:
        i: step index, 0-based.
        player: seat, or -1 for a chance outcome.
        label: the action's short human label.
        time_ms: server-measured decision time (None for chance and fallback moves).
        fallback: the referee played it for a retired seat.
    """

    i: int
    player: int
    label: str
    time_ms: float | None
    fallback: bool


@dataclass(frozen=True, slots=True)
class MatchPage:
    """Everything the match page shows, replay steps included (no board states).

    Attributes:
        seed_commitment: sha256 hex of the seed, public from the start.
        seed: the seed, only once the match is finished (ladder/README.md, "Seeds").
        seed_verified: sha256(seed) equals the commitment (None before the seed is public).
        outcome: the rules' own result from the replay (scores, ranks, reason,
            tie_breaks, details), or None.
        steps: the replay's steps; empty without a replay.
        has_replay: a replay is stored and may be shown.
        held: the match is finished but another match on its seed is not over yet:
            seed, replay, steps and outcome are withheld until it is (S-20).
        unrated_reason: why a match that was to be rated changes no rating (seats of one account,
            the limits on rated challenges: docs/participants.md "Fair play"), else None.
    """

    id: int
    game: str
    long_name: str
    game_string: str
    players: int
    tournament_id: int | None
    tournament: str | None
    status: str
    attempt: int
    time_control: dict[str, int]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    seed_commitment: str
    seed: str | None
    seed_verified: bool | None
    seats: list[SeatResult]
    attempts: list[AttemptInfo]
    outcome: dict[str, Any] | None
    has_replay: bool
    replay_bytes: int | None
    steps: list[StepInfo] = field(default_factory=list)
    held: bool = False
    unrated_reason: str | None = None


class ReplayCache:
    """A small thread-safe LRU of decoded replays, by match id.

    A replay is written once, in the transaction that finishes its match
    (``ladder.matches.record_result``), and never changed, so caching the
    decoded JSON is safe. Only replays are cached, never match rows.
    A replay is loaded (and cached) only while it may be published: its match
    finished and no other match on its seed still to be played (S-20); until
    then :meth:`get` answers None, as for a match without a replay.
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[int, tuple[dict[str, Any], str, int]] = OrderedDict()

    def get(self, pool: ConnectionPool, match_id: int) -> tuple[dict[str, Any], str, int] | None:
        """``(replay dict, replay JSON text, raw bytes)`` of a match, or None when it has no replay
        or it is withheld (S-20)."""
        with self._lock:
            hit = self._items.get(match_id)
            if hit is not None:
                self._items.move_to_end(match_id)
                return hit
        with connection(pool) as conn:
            row = conn.execute(
                "SELECT r.data, r.raw_bytes, r.format FROM replays r JOIN matches m ON m.id = r.match_id "
                f"WHERE r.match_id = %s AND m.status = 'finished' AND NOT {TWIN_OPEN_SQL.format(m='m')}",
                (match_id,)).fetchone()
        if row is None:
            return None
        text = decompress_replay(row[0], row[2])
        item = (json.loads(text), text, int(row[1]))
        with self._lock:
            self._items[match_id] = item
            self._items.move_to_end(match_id)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return item


def match_page(pool: ConnectionPool, match_id: int, replays: ReplayCache) -> MatchPage:
    """The match page: seats and results, seed, attempts, outcome and the replay's step list.

    Raises:
        NotFound: no such match.
    """
    with connection(pool) as conn:
        m = conn.execute(
            "SELECT m.id, m.game, m.game_string, m.tournament_id, t.name, m.status, m.attempt, m.time_control, "
            f"m.created_at, m.started_at, m.finished_at, m.seed_commitment, m.seed, {TWIN_OPEN_SQL.format(m='m')}, "
            "m.unrated_reason "
            "FROM matches m LEFT JOIN tournaments t ON t.id = m.tournament_id WHERE m.id = %s",
            (match_id,),
        ).fetchone()
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        seats = seats_of(conn, [match_id]).get(match_id, [])
        attempts = [
            AttemptInfo(a, s, st, en)
            for a, s, st, en in conn.execute(
                "SELECT attempt, status, started_at, ended_at FROM match_attempts WHERE match_id = %s ORDER BY attempt",
                (match_id,),
            )
        ]
    (mid, game, gs, tid, tname, status, attempt, tc, created, started, finished, commitment, seed, twin, unrated) = m
    held = status == "finished" and bool(twin)
    if status != "finished" or held:
        seed = None  # secret until the match ends and every match on its seed too (S-20)
    verified = None if seed is None else hashlib.sha256(seed.encode("ascii")).hexdigest() == commitment
    cached = replays.get(pool, match_id) if status == "finished" and not held else None
    replay, raw = (cached[0], cached[2]) if cached else (None, None)
    steps = replay_steps(replay) if replay is not None else []
    outcome = replay.get("outcome") if replay is not None else None
    return MatchPage(
        id=mid, game=game, long_name=game_info(game)[0], game_string=gs, players=len(seats), tournament_id=tid,
        tournament=tname, status=status, attempt=attempt, time_control=dict(tc), created_at=created,
        started_at=started, finished_at=finished, seed_commitment=commitment, seed=seed, seed_verified=verified,
        seats=seats, attempts=attempts, outcome=outcome, has_replay=replay is not None, replay_bytes=raw,
        steps=steps, held=held, unrated_reason=unrated,
    )


def replay_steps(replay: dict[str, Any]) -> list[StepInfo]:
    """The step list of a replay, as listed beside the viewer."""
    return [
        StepInfo(i=i, player=int(st.get("player", -1)), label=str(st.get("label", "")),
                 time_ms=st.get("time_ms"), fallback=bool(st.get("fallback", False)))
        for i, st in enumerate(replay.get("steps", []))
    ]


def replay_file_page(replay: dict[str, Any], seat_rows: list[dict[str, Any]] | None, written_at: datetime,
                     match_id: int = 1) -> MatchPage:
    """The match page of a replay file alone, with no database (``parterre view``, docs/bots.md).

    The seats come from the file's seat rows when it is a full export (``parterre replay export``,
    ``parterre play``), else from the replay's players, verdicts and outcome. A replay file is the
    whole record of a played game, so its seed and steps are shown.

    Args:
        replay: a ``parterre-replay/1`` dict.
        seat_rows: the export's ``seats`` rows, or None.
        written_at: when the file was written; the match's time when the replay has none.
        match_id: the number the page shows the match under.
    """
    outcome = replay.get("outcome") if isinstance(replay.get("outcome"), dict) else None
    verdicts = list(replay.get("verdicts") or [])
    ranks = list(replay.get("result_ranks") or [])
    scores = list(outcome.get("scores") or []) if outcome else []
    rows = {int(r["seat"]): r for r in seat_rows or [] if isinstance(r, dict) and isinstance(r.get("seat"), int)}
    seats = []
    for p in sorted(replay.get("players") or [], key=lambda p: int(p["seat"])):
        seat = int(p["seat"])
        row = rows.get(seat, {})
        seats.append(SeatResult(
            seat=seat, bot_id=int(p.get("bot_id", seat + 1)), name=str(row.get("name", p.get("name", ""))),
            version=str(row.get("version", p.get("version", ""))),
            rank=row.get("rank", ranks[seat] if seat < len(ranks) else None),
            score=row.get("score", scores[seat] if seat < len(scores) else None),
            verdict=row.get("verdict", verdicts[seat] if seat < len(verdicts) else None),
            time_used_ms=row.get("time_used_ms"), decisions=row.get("decisions")))
    seed = replay.get("seed")
    commitment = str(replay.get("seed_commitment") or "")
    verified = None if seed is None else hashlib.sha256(str(seed).encode("ascii")).hexdigest() == commitment
    started, ended = (datetime.fromisoformat(replay[k]) if replay.get(k) else None for k in ("started_at", "ended_at"))
    game = str(replay.get("game", ""))
    return MatchPage(
        id=match_id, game=game, long_name=game_info(game)[0], game_string=str(replay.get("game_string", game)),
        players=len(seats), tournament_id=None, tournament=None, status=str(replay.get("status") or "finished"),
        attempt=int(replay.get("attempt") or 1), time_control=dict(replay.get("time_control") or {}),
        created_at=started or ended or written_at, started_at=started, finished_at=ended, seed_commitment=commitment,
        seed=seed, seed_verified=verified,
        seats=seats, attempts=[], outcome=outcome, has_replay=True, replay_bytes=None, steps=replay_steps(replay),
    )


def export_replay(pool: ConnectionPool, match_id: int, *, hold_twins: bool = False) -> dict[str, Any]:
    """The stored record of a match: its row, seats, attempts and decompressed replay.

    The seed is included only once the match is ``finished`` (before that
    only its commitment is public, docs/faults.md F-20), and the seed and
    replay only once no other match on its seed is still to be played when
    ``hold_twins`` (S-20: ``match["held"]`` is then True, no seed, ``replay``
    None). ``parterre replay export`` holds them (its output is meant to be
    published) unless ``--include-held``; the default here is the operator's
    full record, as :func:`replay_json`.

    Returns:
        ``{"match": {id, tournament_id, plan_key, game, game_string,
        seed_commitment, seed (finished only), time_control, status, attempt,
        created_at, started_at, finished_at, result_seq} (timestamps ISO-8601),
        "seats": [{seat, bot_id, name, version, rank, score, verdict,
        time_used_ms, decisions}], "attempts": [{attempt, status, worker,
        error, seed_commitment (each attempt's deal: a retried attempt is dealt a new seed),
        started_at, ended_at}], "replay": <the replay JSON object> or
        None, "replay_raw_bytes": int or None}``.

    Raises:
        MatchNotFoundError: no such match.
    """
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        m = cur.execute(
            "SELECT id, tournament_id, plan_key, game, game_string, seed_commitment, seed, time_control, status, "
            f"attempt, created_at, started_at, finished_at, result_seq, {TWIN_OPEN_SQL.format(m='matches')} AS held "
            "FROM matches WHERE id = %s",
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
            "SELECT attempt, status, worker, error, seed_commitment, started_at, ended_at FROM match_attempts "
            "WHERE match_id = %s ORDER BY attempt",
            (match_id,),
        ).fetchall()
        rep = cur.execute("SELECT data, raw_bytes, format FROM replays WHERE match_id = %s",
                          (match_id,)).fetchone()
    m["held"] = hold_twins and bool(m["held"]) and m["status"] == "finished"
    if m["status"] != "finished" or m["held"]:
        m.pop("seed")
    replay = None
    if rep is not None and not m["held"]:
        replay = json.loads(decompress_replay(rep["data"], rep["format"]))
    return {
        "match": _iso(m),
        "seats": [_iso(s) for s in seats],
        "attempts": [_iso(a) for a in attempts],
        "replay": replay,
        "replay_raw_bytes": None if rep is None or m["held"] else rep["raw_bytes"],
    }


def replay_json(pool: ConnectionPool, match_id: int) -> str | None:
    """The stored replay JSON text of a match exactly as recorded, or ``None`` if it has none."""
    with connection(pool) as conn:
        row = conn.execute("SELECT data, format FROM replays WHERE match_id = %s", (match_id,)).fetchone()
    return None if row is None else decompress_replay(row[0], row[1])


def _iso(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}
