"""Tournaments and round-robin planning (DESIGN §5; FAULTS F-12).

A round-robin of ``rounds`` rounds over bots B with player counts P plans, for
each round r and each N in P, every combination of N bots, each in every
cyclic seat rotation (N matches per combination). **The N rotations of one
combination in one round share one seed**, so each bot sits in every seat of
the same deal and the luck of the deal is shared (a duplicate-style pairing).
Plan keys are ``r{r}:n{N}:{id-id-...}:rot{k}`` (bot ids in tournament order),
unique per tournament, so planning is idempotent: running it twice, or from
two processes at once, makes one set of matches.

Seeds are 32 random bytes from :mod:`secrets`, as 64 hex characters; the
commitment is ``sha256(seed.encode("ascii")).hexdigest()``, published before the
match while the seed stays secret until the end (DESIGN §6).
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_class, load_game
from ladder.db import connection, run_transaction
from ladder.errors import BotNotFoundError, TournamentError, TournamentNotFoundError

FORMATS = ("round_robin",)
"""Tournament formats this version can plan."""

MATCH_STATUSES = ("planned", "running", "finished", "aborted_no_show", "failed")
"""Every status a match can have (see the initial migration for the lifecycle)."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A time control, all in milliseconds (DESIGN §4).

    Attributes:
        base_ms: time bank at the start of the match.
        increment_ms: added to the bank after each decision.
        cap_ms: most time one decision may take (0 = no cap beyond the bank).
        margin_ms: grace the referee adds before its timer fires.
    """

    base_ms: int = 0
    increment_ms: int = 0
    cap_ms: int = 1000
    margin_ms: int = 50

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TournamentError(f"time control {name} must be a non-negative int (ms), got {value!r}")
        if self.base_ms == 0 and self.increment_ms == 0 and self.cap_ms == 0:
            raise TournamentError("time control gives no time at all (base, increment and cap are 0)")

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


def create_tournament(
    pool: ConnectionPool,
    *,
    name: str,
    game: str,
    bot_ids: Sequence[int],
    player_counts: Iterable[int] = (2,),
    rounds: int = 1,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    game_options: Mapping[str, Any] | None = None,
    format: str = "round_robin",
) -> int:
    """Create a tournament (status ``created``); plan it with :func:`plan_round_robin`.

    Everything is validated before anything is written.

    Args:
        pool: ladder connection pool.
        name: display name (1-200 characters).
        game: registry name (``"floriferous"``).
        bot_ids: participating bots, distinct, not revoked; their order is the
            order used in plan keys and seat rotations.
        player_counts: seat counts to play, each allowed by the game (e.g. ``(2, 3, 4)``).
        rounds: number of round-robin rounds (>= 1).
        time_control: :class:`TimeControl` or mapping of its ``*_ms`` fields;
            default 1 s cap per decision with a 50 ms margin.
        game_options: game options other than ``players`` (e.g. ``{"variant": "b"}``).
        format: ``"round_robin"`` (the only format planned by this version).

    Returns:
        The tournament id.

    Raises:
        games.api.UnknownGameError: unknown game.
        games.api.InvalidOptionError: bad game option or a player count the game does not allow.
        TournamentError: bad name, format, rounds, time control, duplicate bots, or
            fewer bots than the largest player count; a revoked bot.
        BotNotFoundError: a bot id does not exist.
    """
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 200:
        raise TournamentError(f"tournament name must be 1-200 characters, got {name!r}")
    if format not in FORMATS:
        raise TournamentError(f"unsupported tournament format {format!r}; supported: {', '.join(FORMATS)}")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise TournamentError(f"rounds must be a positive int, got {rounds!r}")
    counts = sorted(set(int(n) for n in player_counts))
    if not counts:
        raise TournamentError("player_counts is empty")
    options = dict(game_options or {})
    # Validates the game, every option, and every player count (raises games.api errors).
    normalized: dict[str, Any] = {}
    for n in counts:
        game_string_for(game, options, n)
    if options:
        # Store options coerced to their declared kinds (e.g. "true" -> True).
        specs = {spec.name: spec for spec in game_class(game).INFO.options}
        normalized = {k: specs[k].coerce(v) for k, v in options.items()}
    tc = TimeControl.parse(time_control)
    ids = [int(b) for b in bot_ids]
    if len(set(ids)) != len(ids):
        raise TournamentError(f"bot ids must be distinct, got {ids}")
    if len(ids) < counts[-1]:
        raise TournamentError(
            f"{len(ids)} bot(s) cannot fill a {counts[-1]}-player match; need at least {counts[-1]}"
        )

    def write(conn: Any) -> int:
        rows = conn.execute("SELECT id, revoked_at FROM bots WHERE id = ANY(%s::bigint[])", (ids,)).fetchall()
        found = {r[0]: r[1] for r in rows}
        missing = [b for b in ids if b not in found]
        if missing:
            raise BotNotFoundError(f"no bot with id(s) {missing}")
        revoked = [b for b in ids if found[b] is not None]
        if revoked:
            raise TournamentError(f"bot(s) {revoked} are revoked")
        row = conn.execute(
            "INSERT INTO tournaments (name, game, game_options, format, player_counts, rounds, time_control) "
            "VALUES (%s, %s, %s, %s, %s::int[], %s, %s) RETURNING id",
            (name.strip(), game, Jsonb(normalized), format, counts, rounds, Jsonb(tc.to_json())),
        ).fetchone()
        tid = int(row[0])
        conn.cursor().executemany(
            "INSERT INTO tournament_bots (tournament_id, bot_id, position) VALUES (%s, %s, %s)",
            [(tid, b, i) for i, b in enumerate(ids)],
        )
        return tid

    return run_transaction(pool, write)


def _round_robin_plan(
    game: str, options: Mapping[str, Any], bot_ids: Sequence[int], counts: Sequence[int], rounds: int
) -> list[tuple[str, str, str, str, list[int]]]:
    """(plan_key, game_string, seed, commitment, seat bot ids) for every match of the plan."""
    out = []
    for r in range(1, rounds + 1):
        for n in counts:
            gs = game_string_for(game, options, n)
            for combo in itertools.combinations(bot_ids, n):
                seed, commitment = new_seed()
                combo_key = "-".join(str(b) for b in combo)
                for k in range(n):
                    seats = list(combo[k:] + combo[:k])
                    out.append((f"r{r}:n{n}:{combo_key}:rot{k}", gs, seed, commitment, seats))
    return out


def plan_round_robin(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Insert every match of a round-robin tournament (idempotent) and return all its match ids.

    See the module docstring for the plan. Count per round and player count
    N over B bots: C(B, N) x N matches (4 bots, counts 2, 3, 4: 12 + 12 + 4 =
    28). The tournament row is locked while planning and every insert is
    ``ON CONFLICT DO NOTHING`` on ``(tournament_id, plan_key)``, so two
    schedulers planning at once make one set of matches (FAULTS F-12), and
    the N rotations of a combination always share one seed.

    Returns:
        Ids of all the tournament's matches (whatever their status now), ascending.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentError: the tournament's format is not ``round_robin``.
    """

    def plan(conn: Any) -> list[int]:
        row = conn.execute(
            "SELECT game, game_options, format, player_counts, rounds, time_control "
            "FROM tournaments WHERE id = %s FOR UPDATE",
            (tournament_id,),
        ).fetchone()
        if row is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        game, options, fmt, counts, rounds, tc = row
        if fmt != "round_robin":
            raise TournamentError(f"tournament {tournament_id} is {fmt!r}, not round_robin")
        bots = [
            r[0]
            for r in conn.execute(
                "SELECT bot_id FROM tournament_bots WHERE tournament_id = %s ORDER BY position",
                (tournament_id,),
            ).fetchall()
        ]
        existing = {
            r[0]
            for r in conn.execute("SELECT plan_key FROM matches WHERE tournament_id = %s", (tournament_id,))
        }
        todo = [m for m in _round_robin_plan(game, options, bots, counts, rounds) if m[0] not in existing]
        if todo:
            _insert_matches(conn, tournament_id, game, tc, todo)
        conn.execute("UPDATE tournaments SET status = 'planned' WHERE id = %s AND status = 'created'", (tournament_id,))
        return [
            r[0]
            for r in conn.execute("SELECT id FROM matches WHERE tournament_id = %s ORDER BY id", (tournament_id,))
        ]

    return run_transaction(pool, plan)


def _insert_matches(
    conn: Any,
    tournament_id: int | None,
    game: str,
    time_control: Mapping[str, Any],
    plan: Sequence[tuple[str, str, str, str, list[int]]],
) -> dict[str, int]:
    """Insert planned matches and their seats in two statements; returns plan_key -> id of new rows."""
    conflict = (
        "ON CONFLICT (tournament_id, plan_key) DO NOTHING"
        if tournament_id is not None
        else "ON CONFLICT (plan_key) WHERE tournament_id IS NULL DO NOTHING"
    )
    rows = conn.execute(
        "INSERT INTO matches (tournament_id, plan_key, game, game_string, seed, seed_commitment, time_control) "
        "SELECT %s, k, %s, g, s, c, %s FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS t(k, g, s, c) "
        f"{conflict} RETURNING id, plan_key",
        (
            tournament_id,
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
            same key again returns the existing match (FAULTS F-12).
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


def tournament_status(pool: ConnectionPool, tournament_id: int) -> dict[str, Any]:
    """Counts of the tournament's matches by status.

    Returns:
        ``{"tournament_id", "name", "game", "status" (stored: created|planned|cancelled),
        "total", "planned", "running", "finished", "aborted_no_show", "failed",
        "complete" (no match planned or running, and at least one match)}``.

    Raises:
        TournamentNotFoundError: no such tournament.
    """
    with connection(pool) as conn:
        row = conn.execute("SELECT name, game, status FROM tournaments WHERE id = %s", (tournament_id,)).fetchone()
        if row is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        counts = dict(
            conn.execute(
                "SELECT status, count(*) FROM matches WHERE tournament_id = %s GROUP BY status", (tournament_id,)
            ).fetchall()
        )
    out: dict[str, Any] = {"tournament_id": tournament_id, "name": row[0], "game": row[1], "status": row[2]}
    for status in MATCH_STATUSES:
        out[status] = int(counts.get(status, 0))
    out["total"] = sum(out[s] for s in MATCH_STATUSES)
    out["complete"] = out["total"] > 0 and out["planned"] == 0 and out["running"] == 0
    return out
