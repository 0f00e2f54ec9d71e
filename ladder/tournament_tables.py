"""Final tables per tournament format, from the stored seats of finished matches (docs/faults.md F-14).

* every format: the standings (:func:`ladder.read.standings.tournament_standings`:
  pairwise points, 1 per opponent ranked below, ½ per tie);
* **gauntlet**: the candidate's score against each pool bot: over every
  finished match seating both, the pairwise result of the candidate against
  that bot (win 1, tie ½, loss 0), its sum, the number of pairings and the
  score rate, with the logistic Elo difference it implies
  (``-400 log10(1/s - 1)``, none at 0 % or 100 %);
* **duplicate**: per deal (one seed per round and player count, plan keys
  ``r{r}:n{N}:...``) each bot's pairwise points on that deal, the deal's seed
  commitment (and seed once all its matches are finished), and the totals.
  Bots that play the same deal in the same seats are compared on equal luck.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import elo
from ladder.db import connection
from ladder.errors import TournamentNotFoundError
from ladder.read.tournaments import tournament_state

_DEAL = re.compile(r"^r(\d+):n(\d+):")


@dataclass(frozen=True, slots=True)
class GauntletRow:
    """The candidate against one pool bot.

    Attributes:
        points: the candidate's pairwise points against this bot (1 per match
            where it ranked above it, ½ per tie).
        pairings: matches seating both (finished).
        score: ``points / pairings`` (None before the first pairing).
        elo_diff: logistic Elo difference candidate minus bot implied by
            ``score`` (None at 0 or 1, or without pairings).
    """

    bot_id: int
    name: str
    points: float
    pairings: int
    wins: int
    draws: int
    losses: int
    score: float | None
    elo_diff: float | None


@dataclass(frozen=True, slots=True)
class GauntletTable:
    """A gauntlet's final table: the candidate's score against each pool bot, in pool order."""

    candidate_id: int
    candidate_name: str
    rows: list[GauntletRow]
    points: float
    pairings: int
    score: float | None


@dataclass(frozen=True, slots=True)
class DealResult:
    """One deal of a duplicate tournament (every match of one round and player count).

    Attributes:
        key: ``r{round}:n{players}``.
        seed: the deal's seed once all its matches are finished, else None.
        points: bot id -> pairwise points on this deal (bots of the deal only).
        matches / finished: the deal's matches, and how many are finished.
    """

    key: str
    round: int
    players: int
    seed_commitment: str
    seed: str | None
    matches: int
    finished: int
    points: dict[int, float]


@dataclass(frozen=True, slots=True)
class DuplicateTable:
    """A duplicate tournament's per-deal results and totals (bots in tournament order)."""

    bots: list[tuple[int, str]]
    deals: list[DealResult]
    totals: dict[int, float]


@dataclass(frozen=True, slots=True)
class FinalTable:
    """Everything a tournament's final table shows.

    Attributes:
        format: ``round_robin``, ``gauntlet`` or ``duplicate``.
        status: stored status (``open``, ``created``, ``planned``, ``cancelled``).
        complete: every match ended (finished, failed or aborted) and there is at least one.
        outcome: why it was cancelled (e.g. too few entrants), else None.
        entry_deadline: end of its entry window (ISO-8601), or None.
        standings: ``ladder.read.standings.StandingEntry`` values as dicts, best first.
        gauntlet / duplicate: the format's own table, or None.
    """

    tournament_id: int
    name: str
    game: str
    format: str
    status: str
    complete: bool
    outcome: str | None
    entry_deadline: str | None
    entrants: int
    standings: list[dict[str, Any]]
    gauntlet: GauntletTable | None = None
    duplicate: DuplicateTable | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (dict keys of bot ids become strings in JSON)."""
        return asdict(self)


def _elo_diff(score: float | None) -> float | None:
    if score is None or score <= 0.0 or score >= 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def final_table(pool: ConnectionPool, tournament_id: int) -> FinalTable:
    """The final (or, while it runs, current) table of a tournament in its format.

    Raises:
        TournamentNotFoundError: no such tournament.
    """
    from ladder.read.standings import tournament_standings

    with connection(pool) as conn:
        t = conn.execute(
            "SELECT name, game, format, status, outcome, entry_deadline, candidate_bot_id FROM tournaments "
            "WHERE id = %s",
            (tournament_id,),
        ).fetchone()
        if t is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        name, game, fmt, status, outcome, deadline, candidate = t
        bots = [(int(b), n) for b, n in conn.execute(
            "SELECT tb.bot_id, b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
            "WHERE tb.tournament_id = %s ORDER BY tb.position",
            (tournament_id,),
        ).fetchall()]
        matches = conn.execute(
            "SELECT id, plan_key, status, seed_commitment, seed FROM matches WHERE tournament_id = %s ORDER BY id",
            (tournament_id,),
        ).fetchall()
        seats: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for mid, bid, rank in conn.execute(
            "SELECT s.match_id, s.bot_id, s.rank FROM seats s JOIN matches m ON m.id = s.match_id "
            "WHERE m.tournament_id = %s AND m.status = 'finished' ORDER BY s.match_id, s.seat",
            (tournament_id,),
        ).fetchall():
            seats[int(mid)].append((int(bid), int(rank)))
    counts: dict[str, int] = defaultdict(int)
    for _, _, st, _, _ in matches:
        counts[st] += 1
    complete = bool(matches) and not counts.get("planned") and not counts.get("running")
    standings = [asdict(r) for r in tournament_standings(pool, tournament_id)]
    table = FinalTable(
        tournament_id=tournament_id, name=name, game=game, format=fmt, status=status, complete=complete,
        outcome=outcome, entry_deadline=deadline.isoformat() if deadline else None, entrants=len(bots),
        standings=standings, counts=dict(counts),
        gauntlet=_gauntlet(bots, candidate, seats) if fmt == "gauntlet" and candidate is not None else None,
        duplicate=_duplicate(bots, matches, seats) if fmt == "duplicate" else None,
    )
    return table


def _gauntlet(bots: list[tuple[int, str]], candidate: int, seats: dict[int, list[tuple[int, int]]]) -> GauntletTable:
    names = dict(bots)
    tally: dict[int, list[float]] = {b: [0.0, 0, 0, 0, 0] for b, _ in bots if b != candidate}
    for rows in seats.values():
        mine = [r for b, r in rows if b == candidate]
        if not mine:
            continue
        for bid, rank in rows:
            if bid == candidate:
                continue
            t = tally.setdefault(bid, [0.0, 0, 0, 0, 0])
            p = elo.pair_score(mine[0], rank)
            t[0] += p
            t[1] += 1
            t[2 if p == 1.0 else 3 if p == 0.5 else 4] += 1
    out = []
    for bid, (points, n, w, d, lo) in tally.items():
        score = points / n if n else None
        out.append(GauntletRow(bid, names.get(bid, str(bid)), points, int(n), int(w), int(d), int(lo), score,
                               _elo_diff(score)))
    total = sum(r.points for r in out)
    pairings = sum(r.pairings for r in out)
    return GauntletTable(candidate, names.get(candidate, str(candidate)), out, total, pairings,
                         total / pairings if pairings else None)


def _duplicate(bots: list[tuple[int, str]], matches: list[tuple[Any, ...]],
               seats: dict[int, list[tuple[int, int]]]) -> DuplicateTable:
    deals: dict[str, dict[str, Any]] = {}
    for mid, key, st, commitment, seed in matches:
        m = _DEAL.match(key or "")
        if m is None:  # a deal planned by `parterre regress` (d{index}:...) is a deal too
            deal_key = key.split(":", 1)[0]
            rnd, players = 0, len(seats.get(int(mid), [])) or 0
        else:
            deal_key, rnd, players = f"r{m.group(1)}:n{m.group(2)}", int(m.group(1)), int(m.group(2))
        d = deals.setdefault(deal_key, {"round": rnd, "players": players, "commitment": commitment, "seed": seed,
                                        "matches": 0, "finished": 0, "points": defaultdict(float)})
        d["matches"] += 1
        if st == "finished":
            d["finished"] += 1
            rows = seats.get(int(mid), [])
            ranks = [r for _, r in rows]
            for bid, rank in rows:
                d["points"][bid] += sum(elo.pair_score(rank, o) for o in ranks) - 0.5  # minus itself (a tie)
    results = [
        DealResult(key, d["round"], d["players"], d["commitment"], d["seed"] if d["finished"] == d["matches"] else None,
                   d["matches"], d["finished"], dict(d["points"]))
        for key, d in deals.items()
    ]
    totals: dict[int, float] = {b: 0.0 for b, _ in bots}
    for r in results:
        for bid, p in r.points.items():
            totals[bid] = totals.get(bid, 0.0) + p
    return DuplicateTable(bots, results, totals)


@dataclass(frozen=True, slots=True)
class TournamentSummary:
    """A tournament as listed (``parterre tournament list``, the web site's tournament list).

    Attributes:
        state: ``open`` (taking entries), ``not_started`` (no match yet),
            ``in_progress`` (matches planned or running), ``finished`` or ``cancelled``.
        entry_deadline: end of its entry window, or None.
        entrants: bots entered (a gauntlet's candidate included).
        total / finished: its matches, and how many are finished.
        outcome: why it was cancelled, else None.
    """

    id: int
    name: str
    game: str
    format: str
    state: str
    status: str
    created_at: datetime
    entry_deadline: datetime | None
    entrants: int
    total: int
    finished: int
    outcome: str | None
    candidate_bot_id: int | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times ISO-8601)."""
        out = asdict(self)
        for k in ("created_at", "entry_deadline"):
            out[k] = out[k].isoformat() if out[k] is not None else None
        return out


def list_tournaments(pool: ConnectionPool, *, limit: int = 50, before: int | None = None,
                     game: str | None = None, state: str | None = None) -> list[TournamentSummary]:
    """The newest tournaments first, with their progress (index ``matches_by_tournament``).

    Args:
        pool: ladder connection pool.
        limit: most rows (1..500).
        before: only tournaments with a smaller id (paging).
        game: only this game.
        state: only ``open`` or ``cancelled`` ones (the stored statuses); other states are derived.

    Raises:
        ValueError: ``limit`` out of range.
    """
    if not 1 <= limit <= 500:
        raise ValueError(f"limit must be in 1..500, got {limit}")
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT t.id, t.name, t.game, t.format, t.status, t.created_at, t.entry_deadline, t.outcome, "
            "t.candidate_bot_id, c.total, c.finished, c.open, "
            "(SELECT count(*) FROM tournament_bots tb WHERE tb.tournament_id = t.id) "
            "FROM (SELECT * FROM tournaments WHERE (%s::bigint IS NULL OR id < %s) AND (%s::text IS NULL OR game = %s) "
            "AND (%s::text IS NULL OR status = %s) ORDER BY id DESC LIMIT %s) t "
            "CROSS JOIN LATERAL (SELECT count(*) AS total, count(*) FILTER (WHERE m.status = 'finished') AS finished, "
            "count(*) FILTER (WHERE m.status IN ('planned', 'running')) AS open "
            "FROM matches m WHERE m.tournament_id = t.id) c ORDER BY t.id DESC",
            (before, before, game, game, state, state, limit),
        ).fetchall()
    return [
        TournamentSummary(
            id=int(tid), name=name, game=g, format=fmt, state=tournament_state(st, int(total), int(open_)),
            status=st, created_at=created, entry_deadline=deadline, entrants=int(entrants), total=int(total),
            finished=int(fin), outcome=outcome, candidate_bot_id=cand,
        )
        for tid, name, g, fmt, st, created, deadline, outcome, cand, total, fin, open_, entrants in rows
    ]
