"""Planning single matches and deals: time controls, seeds, game strings, inserts (docs/faults.md F-12).

The building blocks every planner uses (:mod:`ladder.tournaments` for the
tournament formats, :mod:`ladder.ladder_rounds` for the continuous ladder,
:mod:`ladder.challenges`, ``parterre regress``): :class:`TimeControl`, fresh
seeds and their commitments, canonical game strings, :func:`plan_match` (one
match, idempotent on its plan key) and :func:`plan_duplicate_deal` (one deal:
tables in every seat rotation on one seed).

Seeds are 32 random bytes from :mod:`secrets`, as 64 hex characters; the
commitment is ``sha256(seed.encode("ascii")).hexdigest()``, published before the
match while the seed stays secret until the end (ladder/README.md, "Seeds").
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_class, load_game
from ladder.db import run_transaction
from ladder.errors import TournamentError

MIN_DECISION_MS = 100
"""Least time a time control may give a decision: the first decision's ``min(base + increment, cap)``
with a bank, ``min(increment, cap)`` of the non-zero ones without (what the referee allows)."""
MAX_DECISION_MS = 60_000
"""Most time a time control may give one decision (and most ``increment_ms`` and ``cap_ms``): far below
the match watchdog (``PARTERRE_MAX_MATCH_DURATION_S``), so one decision can never outlast it."""
MAX_BANK_MS = 3_600_000
"""Most ``base_ms`` (one hour); a bank larger than :data:`MAX_DECISION_MS` needs a ``cap_ms``."""
MAX_MARGIN_MS = 10_000
"""Most ``margin_ms`` (the least is 0)."""
DEFAULT_CAP_MS = 1000
"""Time per decision of the default time control (no bank, no increment)."""
DEFAULT_MARGIN_MS = 100
"""Margin of the default time control, and the ladder's (``PARTERRE_LADDER_TIME_CONTROL``)."""


def decision_bounds_ms(base_ms: int, increment_ms: int, cap_ms: int) -> tuple[int, int | None]:
    """The least and the most time the referee can give one decision under a time control.

    The referee's rule (docs/bots.md "The clock and the verdicts"): with no bank each decision gets
    ``min`` of the non-zero ``increment_ms`` and ``cap_ms``; with a bank the first gets
    ``min(base_ms + increment_ms, cap_ms)`` (no ``min`` when ``cap_ms`` is 0) and a later one at
    most ``cap_ms``, or the whole bank, which grows by ``increment_ms`` a decision, when uncapped.

    Returns:
        ``(least, most)`` in ms; ``most`` is None when nothing bounds it (an uncapped bank with an
        increment). A bank's later decisions may get less than ``least``: the bot spent its bank.
    """
    if base_ms == 0:
        limit = min(v for v in (increment_ms, cap_ms) if v > 0) if increment_ms or cap_ms else 0
        return limit, limit
    first = base_ms + increment_ms
    if cap_ms:
        return min(first, cap_ms), cap_ms
    return first, (base_ms if increment_ms == 0 else None)


def check_time_control(base_ms: Any, increment_ms: Any, cap_ms: Any, margin_ms: Any) -> None:
    """The one check of a time control, wherever one enters (challenges, tournaments, the ladder's
    setting, the web API, the CLI); the referee then holds every seat to its share of the match
    watchdog too (docs/bots.md).

    Every value is a whole number of ms; ``base_ms`` 0 to :data:`MAX_BANK_MS`, ``increment_ms`` and
    ``cap_ms`` 0 to :data:`MAX_DECISION_MS`, ``margin_ms`` 0 to :data:`MAX_MARGIN_MS`; and the time
    one decision gets (:func:`decision_bounds_ms`) is from :data:`MIN_DECISION_MS` to
    :data:`MAX_DECISION_MS`.

    Raises:
        TournamentError: the first bound broken, named with its value.
    """
    values = {"base_ms": base_ms, "increment_ms": increment_ms, "cap_ms": cap_ms, "margin_ms": margin_ms}
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise TournamentError(f"time control {name} must be a non-negative int (ms), got {value!r}")
    tops = {"base_ms": MAX_BANK_MS, "increment_ms": MAX_DECISION_MS, "cap_ms": MAX_DECISION_MS,
            "margin_ms": MAX_MARGIN_MS}
    for name, top in tops.items():
        if values[name] > top:
            raise TournamentError(f"time control {name} is at most {top} ms, got {values[name]}")
    if base_ms == 0 and increment_ms == 0 and cap_ms == 0:
        raise TournamentError("time control gives no time at all (base, increment and cap are 0)")
    least, most = decision_bounds_ms(base_ms, increment_ms, cap_ms)
    if least < MIN_DECISION_MS:
        raise TournamentError(
            f"time control gives a decision {least} ms; at least {MIN_DECISION_MS} ms (the referee allows "
            "min(base_ms + increment_ms, cap_ms) with a bank, min(increment_ms, cap_ms) of the non-zero ones without)")
    if most is None or most > MAX_DECISION_MS:
        raise TournamentError(
            f"time control lets one decision take {'ever more (the bank grows)' if most is None else f'{most} ms'}; "
            f"at most {MAX_DECISION_MS} ms: set cap_ms to at most {MAX_DECISION_MS}")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A time control, all in milliseconds, within the bounds of :func:`check_time_control`.

    Attributes:
        base_ms: time bank at the start of the match.
        increment_ms: added to the bank after each decision.
        cap_ms: most time one decision may take (0 = no cap beyond the bank).
        margin_ms: grace the referee adds before its timer fires.

    Raises:
        TournamentError: outside the bounds (:func:`check_time_control`).
    """

    base_ms: int = 0
    increment_ms: int = 0
    cap_ms: int = DEFAULT_CAP_MS
    margin_ms: int = DEFAULT_MARGIN_MS

    def __post_init__(self) -> None:
        check_time_control(self.base_ms, self.increment_ms, self.cap_ms, self.margin_ms)

    @classmethod
    def parse(cls, value: TimeControl | Mapping[str, Any] | None) -> TimeControl:
        """Accept a TimeControl, a mapping with the four ``*_ms`` keys (missing ones default), or None.

        Raises:
            TournamentError: unknown key or bad value.
        """
        if value is None:
            return cls()
        if isinstance(value, TimeControl):
            return value
        unknown = sorted(set(value) - {"base_ms", "increment_ms", "cap_ms", "margin_ms"})
        if unknown:
            raise TournamentError(f"time control: unknown key(s) {', '.join(unknown)}")
        return cls(**dict(value))

    def to_json(self) -> dict[str, int]:
        """``{"base_ms", "increment_ms", "cap_ms", "margin_ms"}``."""
        return asdict(self)


def new_seed() -> tuple[str, str]:
    """A fresh match seed and its commitment: ``(seed hex, sha256(seed ascii) hex)``."""
    seed = secrets.token_hex(32)
    return seed, seed_commitment(seed)


def seed_commitment(seed: str) -> str:
    """SHA-256 hex digest of the seed text (ASCII), the value published at match start."""
    return hashlib.sha256(seed.encode("ascii")).hexdigest()


def game_string_for(game: str, options: Mapping[str, Any] | None, players: int) -> str:
    """Canonical game string for ``players`` seats, validated by the game's registry entry.

    Games with a ``players`` option get it set; games without one must have
    exactly ``players`` seats.

    Raises:
        games.api.UnknownGameError: unknown game.
        games.api.InvalidOptionError: bad option, or a player count the game does not allow.
        TournamentError: ``players`` given in ``options`` (it comes from player counts).
    """
    from games.api import InvalidOptionError

    opts = dict(options or {})
    if "players" in opts:
        raise TournamentError("give the number of players through player_counts, not game_options")
    cls = game_class(game)
    info = cls.INFO
    if not info.min_players <= players <= info.max_players:
        raise InvalidOptionError(
            f"{game} is played by {info.min_players}-{info.max_players} players, not {players}"
        )
    if any(spec.name == "players" for spec in info.options):
        opts["players"] = players
    loaded = load_game(game, opts)
    if loaded.num_players != players:
        raise InvalidOptionError(f"{loaded.game_string()} has {loaded.num_players} seats, not {players}")
    return loaded.game_string()


PlannedMatch = tuple[str, str, str, str, list[int]]
"""``(plan_key, game_string, seed, seed_commitment, bot id per seat)`` of one match of a plan."""


def _rotations(table: Sequence[int]) -> list[list[int]]:
    """The N cyclic seat rotations of a table of N bots (rotation k puts ``table[k]`` in seat 0)."""
    t = list(table)
    return [t[k:] + t[:k] for k in range(len(t))]


def _seed_by_prefix(conn: Any, tournament_id: int | None, prefixes: Iterable[str]) -> dict[str, str]:
    """Seeds already dealt to matches whose plan key starts with one of ``prefixes``."""
    out: dict[str, str] = {}
    for prefix in prefixes:
        row = conn.execute(
            "SELECT seed FROM matches WHERE tournament_id IS NOT DISTINCT FROM %s AND starts_with(plan_key, %s) "
            "ORDER BY id LIMIT 1",
            (tournament_id, prefix),
        ).fetchone()
        if row is not None:
            out[prefix] = row[0]
    return out


def plan_duplicate_deal(
    pool: ConnectionPool,
    *,
    game_string: str,
    tables: Sequence[Sequence[int]],
    deal_key: str,
    tournament_id: int | None = None,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    seed: str | None = None,
    competition_id: int | None = None,
) -> list[list[int]]:
    """Plan one deal: each table in each of its cyclic seat rotations, all on one seed; idempotent.

    Plan keys are ``{deal_key}:{bot ids of the table joined by -}:rot{k}``.
    Planning the same deal again returns the same matches; a deal already
    partly planned keeps the seed it was dealt (``seed`` is then ignored).
    Used by ``parterre regress``: tables ``(candidate, O1, ...)`` and
    ``(baseline, O1, ...)`` put both bots in the same seat against the same
    opponents on the same deal.

    Args:
        pool: ladder connection pool.
        game_string: full game string (validated and canonicalised).
        tables: bots of each table in seat order of rotation 0, each of the
            game's seat count, distinct within a table (bots may sit at several tables).
        deal_key: unique prefix of the deal's plan keys (per tournament, or
            among matches without one), e.g. ``"regress:d17"``.
        tournament_id: tournament the matches belong to, or None.
        time_control: as for :func:`plan_match`.
        seed: the deal's seed (hex); fresh when None.
        competition_id: the competition the matches are planned for (``matches.competition_id``), or None.

    Returns:
        Match ids per table, per rotation: ``ids[t][k]`` is table ``t`` in
        rotation ``k`` (``tables[t][k]`` in seat 0).

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game string.
        TournamentError: no table, a table of the wrong size or with a repeated bot.
    """
    return run_transaction(pool, lambda conn: plan_deal_in(
        conn, game_string=game_string, tables=tables, deal_key=deal_key, tournament_id=tournament_id,
        time_control=time_control, seed=seed, competition_id=competition_id))


def plan_deal_in(
    conn: Any,
    *,
    game_string: str,
    tables: Sequence[Sequence[int]],
    deal_key: str,
    tournament_id: int | None = None,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    seed: str | None = None,
    competition_id: int | None = None,
) -> list[list[int]]:
    """:func:`plan_duplicate_deal` inside the caller's transaction ``conn`` (a planner that decides which
    tables to deal under its own row lock plans them in the same transaction); same arguments and result."""
    loaded = load_game(game_string)
    if not tables:
        raise TournamentError("a deal needs at least one table")
    norm = [[int(b) for b in t] for t in tables]
    for t in norm:
        if len(t) != loaded.num_players:
            raise TournamentError(f"{loaded.game_string()} has {loaded.num_players} seats, got a table of {len(t)}")
        if len(set(t)) != len(t):
            raise TournamentError(f"a bot cannot hold two seats of one match: {t}")
    tc = TimeControl.parse(time_control)
    prefix = f"{deal_key}:"
    if tournament_id is not None:
        conn.execute("SELECT 1 FROM tournaments WHERE id = %s FOR UPDATE", (tournament_id,))
    else:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (prefix,))
    deal_seed = _seed_by_prefix(conn, tournament_id, [prefix]).get(prefix) or seed or new_seed()[0]
    commitment = seed_commitment(deal_seed)
    plan = []
    for t in norm:
        table_key = "-".join(str(b) for b in t)
        for k, seats in enumerate(_rotations(t)):
            plan.append((f"{prefix}{table_key}:rot{k}", loaded.game_string(), deal_seed, commitment, seats))
    _insert_matches(conn, tournament_id, loaded.name, tc.to_json(), plan, competition_id=competition_id)
    keys = [m[0] for m in plan]
    found = dict(
        conn.execute(
            "SELECT plan_key, id FROM matches WHERE tournament_id IS NOT DISTINCT FROM %s "
            "AND plan_key = ANY(%s::text[])",
            (tournament_id, keys),
        ).fetchall()
    )
    n = loaded.num_players
    return [[int(found[keys[i * n + k]]) for k in range(n)] for i in range(len(norm))]


def _insert_matches(
    conn: Any,
    tournament_id: int | None,
    game: str,
    time_control: Mapping[str, Any],
    plan: Sequence[tuple[str, str, str, str, list[int]]],
    *,
    competition_id: int | None = None,
) -> dict[str, int]:
    """Insert planned matches and their seats in two statements; returns plan_key -> id of new rows."""
    conflict = (
        "ON CONFLICT (tournament_id, plan_key) DO NOTHING"
        if tournament_id is not None
        else "ON CONFLICT (plan_key) WHERE tournament_id IS NULL DO NOTHING"
    )
    rows = conn.execute(
        "INSERT INTO matches (tournament_id, competition_id, plan_key, game, game_string, seed, seed_commitment, "
        "time_control) "
        "SELECT %s, %s, k, %s, g, s, c, %s "
        "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS t(k, g, s, c) "
        f"{conflict} RETURNING id, plan_key",
        (
            tournament_id,
            competition_id,
            game,
            Jsonb(dict(time_control)),
            [m[0] for m in plan],
            [m[1] for m in plan],
            [m[2] for m in plan],
            [m[3] for m in plan],
        ),
    ).fetchall()
    new = {key: mid for mid, key in rows}
    seat_rows = [(new[m[0]], seat, bot) for m in plan if m[0] in new for seat, bot in enumerate(m[4])]
    if seat_rows:
        conn.execute(
            "INSERT INTO seats (match_id, seat, bot_id) "
            "SELECT * FROM unnest(%s::bigint[], %s::int[], %s::bigint[])",
            ([r[0] for r in seat_rows], [r[1] for r in seat_rows], [r[2] for r in seat_rows]),
        )
    return new


def plan_match(
    pool: ConnectionPool,
    *,
    game_string: str,
    bot_ids: Sequence[int],
    plan_key: str,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    tournament_id: int | None = None,
    seed: str | None = None,
) -> int:
    """Plan one match (continuous ladder, gauntlet, ad-hoc); idempotent on ``plan_key``.

    Args:
        pool: ladder connection pool.
        game_string: full game string; validated and canonicalised by the registry.
        bot_ids: bot per seat, in seat order, distinct.
        plan_key: unique key (per tournament, or among matches without a
            tournament), e.g. ``"ladder:2024-06-01T12:00:3-7"``; planning the
            same key again returns the existing match (docs/faults.md F-12).
        time_control: :class:`TimeControl` or mapping; default as in :class:`TimeControl`.
        tournament_id: tournament the match belongs to, or ``None``.
        seed: match seed (hex); a fresh one when ``None``.

    Returns:
        The match id (new or existing).

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game string.
        TournamentError: the seat count does not fit the game, duplicate bots.
    """
    loaded = load_game(game_string)
    seats = [int(b) for b in bot_ids]
    if len(seats) != loaded.num_players:
        raise TournamentError(f"{loaded.game_string()} has {loaded.num_players} seats, got {len(seats)} bots")
    if len(set(seats)) != len(seats):
        raise TournamentError(f"a bot cannot hold two seats of one match: {seats}")
    tc = TimeControl.parse(time_control)
    if seed is None:
        seed, commitment = new_seed()
    else:
        commitment = seed_commitment(seed)

    def write(conn: Any) -> int:
        new = _insert_matches(
            conn, tournament_id, loaded.name, tc.to_json(), [(plan_key, loaded.game_string(), seed, commitment, seats)]
        )
        if plan_key in new:
            return new[plan_key]
        row = conn.execute(
            "SELECT id FROM matches WHERE plan_key = %s AND tournament_id IS NOT DISTINCT FROM %s",
            (plan_key, tournament_id),
        ).fetchone()
        return int(row[0])

    return run_transaction(pool, write)
