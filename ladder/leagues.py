"""Leagues gated by the house bots: Wood, Bronze, Silver, Gold (docs/ladder.md "Leagues").

Every bot that is not a house bot starts each game in Wood. Each league above Wood has a
gate kept by a house bot, its *boss* (:data:`BOSSES`): Bronze's is ``house-random``, Silver's
``house-greedy``, Gold's ``house-search``. A game the boss of a league does not play
(``house_bots.games``) has no such league: a game without a search bot stops at Silver.

Promotion rule: a bot passes a gate when its rated head-to-head results against the boss in
the game (every finished, rated match whose Elo update was applied and that seated both, one
result per match: ranked above the boss = a win, level = a draw, counting half) number at least
:data:`MIN_GAMES` and the one-sided :data:`CONFIDENCE` Wilson score lower bound of its score
share is above one half (:func:`wilson_lower_bound`); a match counts only when each decision could take
at least the ladder's 1,000 ms (:data:`GATE_MIN_DECISION_MS`). Gates are passed in order only, never
revoked; a retired (revoked) bot keeps its promotions and is promoted no further; house bots
are never promoted.

:func:`promote` decides the promotions due at ``now`` and stores them in ``league_promotions``
(migration 0014), with the evidence; the workers' ``parterre.league_tick`` calls it. Its primary
key makes one row per promotion however many runs decide it at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.db import run_transaction
from ladder.match_plans import DEFAULT_CAP_MS
from ladder.stats.scales import phi_inv

__all__ = [
    "BOSSES",
    "CONFIDENCE",
    "LEAGUES",
    "MIN_GAMES",
    "BotLeague",
    "Evidence",
    "Gate",
    "NextGate",
    "Promotion",
    "bot_leagues",
    "game_gates",
    "head_to_head",
    "league_badges",
    "league_of",
    "leagues_by_bot",
    "next_bosses",
    "promote",
    "wilson_lower_bound",
]

LEAGUES: tuple[str, ...] = ("wood", "bronze", "silver", "gold")
"""The leagues, lowest first; every bot that is not a house bot starts in ``wood``."""

BOSSES: dict[str, str] = {"bronze": "random", "silver": "greedy", "gold": "search"}
"""League -> the kind of the house bot keeping its gate (the bot ``house-<kind>``)."""

MIN_GAMES = 20
"""Fewest rated head-to-head games against a boss before its gate can be passed."""

CONFIDENCE = 0.95
"""Confidence of the one-sided lower bound on the score share against a boss."""

Z = phi_inv(CONFIDENCE)
"""The standard normal quantile of :data:`CONFIDENCE` (1.6449)."""


def wilson_lower_bound(score: float, games: int, z: float = Z) -> float:
    """The one-sided Wilson score lower bound of a share ``score / games`` at quantile ``z``.

    The smallest share ``p`` that a one-sided score test at level ``z`` does not reject:
    ``(s + z²/2n - z sqrt(s(1-s)/n + z²/4n²)) / (1 + z²/n)`` with ``s = score / games``.

    Args:
        score: points scored (wins + draws / 2), 0 <= score <= games.
        games: games played; 0 gives 0.
        z: the normal quantile (default: one-sided 95 %).
    """
    if games <= 0:
        return 0.0
    n = float(games)
    s = min(1.0, max(0.0, score / n))
    z2 = z * z
    centre = s + z2 / (2 * n)
    spread = z * math.sqrt(s * (1 - s) / n + z2 / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z2 / n))


@dataclass(frozen=True, slots=True)
class Evidence:
    """A bot's rated head-to-head record against a boss in one game.

    Attributes:
        games: matches that seated both (rated, Elo update applied).
        wins / draws: matches the bot ranked above / level with the boss.
        score: (wins + draws / 2) / games; 0 without games.
        lower_bound: one-sided :data:`CONFIDENCE` Wilson lower bound of ``score``.
        passes: at least :data:`MIN_GAMES` games and ``lower_bound`` above one half.
    """

    games: int
    wins: int
    draws: int
    score: float
    lower_bound: float
    passes: bool

    @classmethod
    def of(cls, games: int, wins: int, draws: int) -> Evidence:
        """The evidence of ``games`` games, ``wins`` won and ``draws`` drawn."""
        points = wins + draws / 2
        bound = wilson_lower_bound(points, games)
        return cls(games, wins, draws, points / games if games else 0.0, bound,
                   games >= MIN_GAMES and bound > 0.5)


@dataclass(frozen=True, slots=True)
class Gate:
    """The gate into ``league`` in one game, kept by the house bot ``boss_id`` (``boss_name``)."""

    league: str
    boss_id: int
    boss_name: str


@dataclass(frozen=True, slots=True)
class Promotion:
    """A stored promotion: ``bot_id`` entered ``league`` in ``game`` at ``promoted_at`` on ``evidence``."""

    bot_id: int
    game: str
    league: str
    boss_id: int
    boss_name: str
    promoted_at: datetime
    evidence: Evidence


@dataclass(frozen=True, slots=True)
class NextGate:
    """The next gate of a bot in a game, and its current evidence against the boss."""

    league: str
    boss_id: int
    boss_name: str
    evidence: Evidence
    min_games: int


@dataclass(frozen=True, slots=True)
class BotLeague:
    """A bot's league in one game.

    Attributes:
        league: its league (``wood`` .. ``gold``).
        leagues: the game's leagues, lowest first (``wood`` plus one per gate).
        promotions: the gates it passed, in order, with date and evidence.
        next_gate: the next gate and the evidence so far; None at the top of the game.
        note: a sentence on what is missing (no house bot for the game, no Gold gate).
    """

    game: str
    league: str
    leagues: list[str]
    promotions: list[Promotion]
    next_gate: NextGate | None
    note: str | None


def game_gates(conn: Any, game: str) -> list[Gate]:
    """The gates of ``game``, lowest first: each league whose boss is a house bot playing ``game``.

    A revoked boss keeps its gate (its recorded games still count; it gets no new ones).
    """
    rows = conn.execute(
        "SELECT h.kind, b.id, b.name FROM house_bots h JOIN bots b ON b.id = h.bot_id "
        "WHERE b.house AND %s = ANY(h.games) AND h.kind = ANY(%s)",
        (game, list(BOSSES.values())),
    ).fetchall()
    by_kind = {str(k): (int(i), str(n)) for k, i, n in rows}
    return [Gate(league, *by_kind[kind]) for league, kind in BOSSES.items() if kind in by_kind]


GATE_MIN_DECISION_MS = DEFAULT_CAP_MS
"""A match counts towards a gate only when each decision could take at least this long (the ladder's
time control, 1,000 ms): a boss that thinks (house-search) plays weaker when rushed, and a challenger
who chooses a 100 ms time control must not pass Gold against a boss held to a millisecond of search."""

_COUNTED = (
    "m.game = %(game)s AND m.status = 'finished' AND m.rated "
    "AND m.rating_seq IS NOT NULL AND me.rank IS NOT NULL AND boss.rank IS NOT NULL "
    "AND (%(now)s::timestamptz IS NULL OR m.finished_at <= %(now)s::timestamptz) "
    # the boss had a decision's full time: its allowance per decision, the cap or (without one) the increment
    "AND CASE WHEN coalesce((m.time_control->>'cap_ms')::int, 0) > 0 THEN (m.time_control->>'cap_ms')::int "
    "ELSE coalesce((m.time_control->>'increment_ms')::int, 0) END >= %(min_ms)s"
)
"""The matches that count towards a gate (``m``: the match, ``me`` / ``boss``: the two seats)."""

_H2H_SQL = (
    "SELECT me.bot_id, count(*), count(*) FILTER (WHERE me.rank < boss.rank), "
    "count(*) FILTER (WHERE me.rank = boss.rank) "
    "FROM seats boss JOIN matches m ON m.id = boss.match_id "
    "JOIN seats me ON me.match_id = boss.match_id AND me.bot_id <> boss.bot_id "
    "WHERE boss.bot_id = %(boss)s AND (%(bots)s::bigint[] IS NULL OR me.bot_id = ANY(%(bots)s::bigint[])) "
    f"AND {_COUNTED} GROUP BY me.bot_id"
)
"""Every bot's record against a boss: from the boss's seats (``promote`` asks for every bot at once)."""

_ONE_BOT_H2H_SQL = (
    "SELECT count(*), count(*) FILTER (WHERE me.rank < boss.rank), count(*) FILTER (WHERE me.rank = boss.rank) "
    "FROM seats me CROSS JOIN LATERAL (SELECT b.rank FROM seats b WHERE b.match_id = me.match_id "
    "AND b.bot_id = %(boss)s LIMIT 1) boss JOIN matches m ON m.id = me.match_id "
    f"WHERE me.bot_id = %(bot)s AND me.bot_id <> %(boss)s AND {_COUNTED}"
)
"""One bot's record against a boss (the bot page): from the bot's own seats, the boss's seat of each looked up
(``seats (match_id, bot_id)``). From the boss's seats it read every match the boss played (a house boss plays
a few percent of the ladder's matches: 78,000 seats at 10^7 matches, for every bot page; docs/benchmarks.md)."""


def head_to_head(conn: Any, game: str, boss_id: int, bot_ids: Iterable[int] | None = None,
                 now: datetime | None = None) -> dict[int, Evidence]:
    """Each bot's rated record against ``boss_id`` in ``game`` (bots without a game are absent).

    Args:
        conn: an open connection.
        game: registry name.
        boss_id: the boss.
        bot_ids: only these bots (None: every bot that met it).
        now: only matches finished at or before it (None: all).
    """
    bots = None if bot_ids is None else sorted({int(b) for b in bot_ids})
    params = {"boss": boss_id, "game": game, "bots": bots, "now": now, "min_ms": GATE_MIN_DECISION_MS}
    if bots is not None and len(bots) == 1:
        n, w, d = conn.execute(_ONE_BOT_H2H_SQL, {**params, "bot": bots[0]}).fetchone()
        return {bots[0]: Evidence.of(int(n), int(w), int(d))} if n else {}
    rows = conn.execute(_H2H_SQL, params).fetchall()
    return {int(b): Evidence.of(int(n), int(w), int(d)) for b, n, w, d in rows}


def _promoted(conn: Any, game: str, bot_ids: Sequence[int] | None = None) -> dict[int, set[str]]:
    rows = conn.execute(
        "SELECT bot_id, league FROM league_promotions WHERE game = %s "
        "AND (%s::bigint[] IS NULL OR bot_id = ANY(%s::bigint[]))",
        (game, bot_ids, bot_ids),
    ).fetchall()
    out: dict[int, set[str]] = {}
    for b, league in rows:
        out.setdefault(int(b), set()).add(str(league))
    return out


def league_of(passed: Iterable[str]) -> str:
    """The league of a bot that passed the gates into ``passed``: the highest of them, else Wood."""
    done = set(passed)
    return max((lg for lg in LEAGUES if lg in done), key=LEAGUES.index, default=LEAGUES[0])


def _next_gate(gates: Sequence[Gate], league: str) -> Gate | None:
    """The first gate above ``league``."""
    rank = LEAGUES.index(league)
    return next((g for g in gates if LEAGUES.index(g.league) > rank), None)


def leagues_by_bot(conn: Any, game: str, bot_ids: Sequence[int]) -> dict[int, str]:
    """The league of each of ``bot_ids`` in ``game`` (Wood for a bot without promotions)."""
    ids = sorted({int(b) for b in bot_ids})
    promoted = _promoted(conn, game, ids)
    return {b: league_of(promoted.get(b, ())) for b in ids}


def league_badges(conn: Any, game: str, bot_ids: Sequence[int]) -> dict[int, str | None]:
    """The league of each of ``bot_ids`` in ``game``, None for a house bot (it has no league)."""
    ids = sorted({int(b) for b in bot_ids})
    if not ids:
        return {}
    house = {int(r[0]) for r in conn.execute(
        "SELECT id FROM bots WHERE id = ANY(%s::bigint[]) AND house", (ids,)).fetchall()}
    return {b: None if b in house else lg for b, lg in leagues_by_bot(conn, game, ids).items()}


def next_bosses(conn: Any, game: str, bot_ids: Sequence[int]) -> dict[int, int]:
    """Bot id -> the house bot keeping its next gate in ``game``, for those of ``bot_ids`` that have one."""
    gates = game_gates(conn, game)
    if not gates:
        return {}
    out = {}
    for bot, league in leagues_by_bot(conn, game, bot_ids).items():
        gate = _next_gate(gates, league)
        if gate is not None:
            out[bot] = gate.boss_id
    return out


def promote(pool: ConnectionPool, *, now: datetime, games: Sequence[str] | None = None) -> list[Promotion]:
    """Store every promotion due at ``now``; the new ones, by game, bot and league.

    For each game with a gate (default: every game a house boss plays) and each live bot
    that is not a house bot and has a rating in it, the gates above its league are tried in
    order against its rated head-to-head results up to ``now`` (:func:`head_to_head`); each
    one passed is stored with ``promoted_at = now`` and the evidence, and the next is tried
    (a bot with enough evidence against two bosses passes both gates in one run, in order).
    Idempotent: a promotion already stored is kept as it is (first date, first evidence),
    and two runs at once store it once (the table's primary key).

    Args:
        pool: ladder connection pool.
        now: the date of the run (aware datetime); matches finished later are not counted.
        games: registry names to consider (None: all that have a gate).
    """

    def run(conn: Any) -> list[Promotion]:
        names = games
        if names is None:
            names = [str(r[0]) for r in conn.execute(
                "SELECT DISTINCT unnest(h.games) FROM house_bots h JOIN bots b ON b.id = h.bot_id "
                "WHERE b.house AND h.kind = ANY(%s) ORDER BY 1", (list(BOSSES.values()),)).fetchall()]
        new: list[Promotion] = []
        for game in names:
            gates = game_gates(conn, game)
            if not gates:
                continue
            bots = [int(r[0]) for r in conn.execute(
                "SELECT r.bot_id FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = %s "
                "AND NOT b.house AND b.revoked_at IS NULL ORDER BY r.bot_id", (game,)).fetchall()]
            if not bots:
                continue
            promoted = _promoted(conn, game, bots)
            evidence = {g.league: head_to_head(conn, game, g.boss_id, bots, now) for g in gates}
            for bot in bots:
                league = league_of(promoted.get(bot, ()))
                while (gate := _next_gate(gates, league)) is not None:
                    ev = evidence[gate.league].get(bot)
                    if ev is None or not ev.passes:
                        break
                    row = conn.execute(
                        "INSERT INTO league_promotions (bot_id, game, league, boss_id, promoted_at, games, wins, "
                        "draws, score, lower_bound) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT (bot_id, game, league) DO NOTHING RETURNING bot_id",
                        (bot, game, gate.league, gate.boss_id, now, ev.games, ev.wins, ev.draws, ev.score,
                         ev.lower_bound),
                    ).fetchone()
                    if row is not None:
                        new.append(Promotion(bot, game, gate.league, gate.boss_id, gate.boss_name, now, ev))
                    league = gate.league
        return new

    return run_transaction(pool, run)


def _promotion_rows(conn: Any, bot_id: int) -> dict[str, list[Promotion]]:
    rows = conn.execute(
        "SELECT p.game, p.league, p.boss_id, b.name, p.promoted_at, p.games, p.wins, p.draws, p.score, "
        "p.lower_bound FROM league_promotions p JOIN bots b ON b.id = p.boss_id WHERE p.bot_id = %s",
        (bot_id,),
    ).fetchall()
    out: dict[str, list[Promotion]] = {}
    for game, league, boss, name, at, n, w, d, s, lb in rows:
        ev = Evidence(int(n), int(w), int(d), float(s), float(lb), True)
        out.setdefault(str(game), []).append(Promotion(bot_id, str(game), str(league), int(boss), str(name), at, ev))
    for promotions in out.values():
        promotions.sort(key=lambda p: LEAGUES.index(p.league))
    return out


def bot_leagues(conn: Any, bot_id: int, games: Sequence[str]) -> list[BotLeague]:
    """A bot's league in each of ``games`` (and in each game it was promoted in), by game.

    Empty for a house bot (it keeps gates; it has no league). The next gate's evidence counts
    every rated match recorded so far.
    """
    house = conn.execute("SELECT house FROM bots WHERE id = %s", (bot_id,)).fetchone()
    if house is None or house[0]:
        return []
    promotions = _promotion_rows(conn, bot_id)
    out = []
    for game in sorted(set(games) | set(promotions)):
        gates = game_gates(conn, game)
        passed = promotions.get(game, [])
        league = league_of(p.league for p in passed)
        gate = _next_gate(gates, league)
        nxt = None
        if gate is not None:
            ev = head_to_head(conn, game, gate.boss_id, [bot_id]).get(bot_id, Evidence.of(0, 0, 0))
            nxt = NextGate(gate.league, gate.boss_id, gate.boss_name, ev, MIN_GAMES)
        leagues = ["wood", *(g.league for g in gates)]
        missing = [lg for lg in LEAGUES[1:] if lg not in leagues]
        note = None
        if not gates:
            note = "no house bot plays this game: it has only the Wood league"
        elif missing:
            note = (f"no {', '.join(lg.capitalize() for lg in missing)} league in this game: "
                    f"house-{', house-'.join(BOSSES[lg] for lg in missing)} does not play it")
        out.append(BotLeague(game, league, leagues, passed, nxt, note))
    return out
