"""Tournaments: round-robin, gauntlet and duplicate planning (DESIGN §5; FAULTS F-12).

A round-robin of ``rounds`` rounds over bots B with player counts P plans, for
each round r and each N in P, every combination of N bots, each in every
cyclic seat rotation (N matches per combination). **The N rotations of one
combination in one round share one seed**, so each bot sits in every seat of
the same deal and the luck of the deal is shared (a duplicate-style pairing).
Plan keys are ``r{r}:n{N}:{id-id-...}:rot{k}`` (bot ids in tournament order),
unique per tournament, so planning is idempotent: running it twice, or from
two processes at once, makes one set of matches.

The **duplicate** format (:func:`plan_duplicate`) plans the same matches but
deals **one seed per round and player count**: every combination, in every
seat rotation, plays the same deal, as the tables of a duplicate bridge
session do, so differences between bots are not differences of luck. Its plan
keys are the round-robin's. :func:`plan_duplicate_deal` plans one deal for
arbitrary tables (``parterre regress`` uses it: the candidate's table and the
baseline's table, each in every rotation, on one seed).

The **gauntlet** format (:func:`plan_gauntlet`) plays one candidate against a
pool (DESIGN §5): per round and player count N, the candidate with every
combination of N - 1 pool bots, each table in every seat rotation on one seed,
with the round-robin's key shape (the candidate's id first).
:func:`plan_tournament` plans a tournament of any format. Entry windows
(tournaments that bots enter until a deadline) are in :mod:`ladder.entries`;
final tables per format in :mod:`ladder.tournament_tables`.

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
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_class, load_game
from ladder.db import connection, run_transaction
from ladder.errors import BotNotFoundError, TournamentError, TournamentNotFoundError

FORMATS = ("round_robin", "gauntlet", "duplicate")
"""Tournament formats this version can plan."""

MATCH_STATUSES = ("planned", "running", "finished", "aborted_no_show", "failed")
"""Every status a tournament's match can have (see the initial migration for the lifecycle); a
challenge's match may also be ``waiting`` (for its bots) or ``expired`` (:mod:`ladder.challenges`)."""


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


def _format_name(format: str) -> str:
    """``round-robin`` and ``round_robin`` are the same format; returns the stored spelling."""
    fmt = format.replace("-", "_") if isinstance(format, str) else format
    if fmt not in FORMATS:
        raise TournamentError(f"unsupported tournament format {format!r}; supported: {', '.join(FORMATS)}")
    return str(fmt)


def bots_needed(format: str, player_counts: Sequence[int]) -> int:
    """Fewest bots a tournament can be played with: the largest player count (a gauntlet's
    candidate included)."""
    return max(player_counts)


def create_tournament(
    pool: ConnectionPool,
    *,
    name: str,
    game: str,
    game_options: Mapping[str, Any] | None = None,
    format: str = "round_robin",
    player_counts: Iterable[int] = (2,),
    rounds: int = 1,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    bot_ids: Sequence[int] = (),
    candidate_bot_id: int | None = None,
    entry_deadline: datetime | None = None,
    organiser_id: int | None = None,
    autostart: bool = False,
) -> int:
    """Create a tournament, with or without an entry window; plan it with :func:`plan_tournament`.

    Everything is validated before anything is written. Three ways to start:

    * no ``entry_deadline``, ``autostart`` False: status ``created``; whoever
      created it plans it (``parterre tournament run``, ``parterre regress``);
    * ``entry_deadline``: status ``open``; bots enter with
      :func:`ladder.entries.enter_tournament` until the deadline; then the
      workers' beat closes the entries and plans and runs it, or cancels it
      when too few bots entered (:func:`ladder.entries.close_due_entries`);
    * ``autostart`` without a deadline: an entry window that closes at once:
      the workers plan and run it at their next tick (within seconds).

    Args:
        pool: ladder connection pool.
        name: display name (1-200 characters).
        game: registry name (``"floriferous"``).
        game_options: game options other than ``players`` (e.g. ``{"variant": "b"}``).
        format: ``"round_robin"`` (every combination of bots in every seat
            rotation), ``"gauntlet"`` (the candidate against every combination
            of the other bots) or ``"duplicate"`` (the round-robin's matches on
            one deal per round and player count); ``-`` may replace ``_``.
        player_counts: seat counts to play, each allowed by the game (e.g. ``(2, 3, 4)``).
        rounds: number of rounds (>= 1).
        time_control: :class:`TimeControl` or mapping of its ``*_ms`` fields;
            default 1 s cap per decision with a 50 ms margin.
        bot_ids: participating bots (a gauntlet's pool), distinct, not revoked;
            their order is the order used in plan keys and seat rotations.
            With an entry window these are the first entrants (may be empty).
        candidate_bot_id: a gauntlet's candidate (required for, and only for, a gauntlet).
        entry_deadline: end of the entry window (timezone-aware, in the future), or None.
        organiser_id: account id of the organiser (stored as is), or None.
        autostart: see above.

    Returns:
        The tournament id.

    Raises:
        games.api.UnknownGameError: unknown game.
        games.api.InvalidOptionError: bad game option or a player count the game does not allow.
        TournamentError: bad name, format, rounds, time control, deadline, duplicate bots, a
            revoked bot, a missing or misplaced candidate, or (without an entry window) fewer
            bots than the largest player count.
        BotNotFoundError: a bot id does not exist.
    """
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 200:
        raise TournamentError(f"tournament name must be 1-200 characters, got {name!r}")
    fmt = _format_name(format)
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
    if fmt == "gauntlet":
        if candidate_bot_id is None:
            raise TournamentError("a gauntlet needs a candidate bot (candidate_bot_id)")
        candidate = int(candidate_bot_id)
        if candidate in ids:
            raise TournamentError(f"the candidate {candidate} cannot also be in the gauntlet's pool")
        ids = [candidate, *ids]
    elif candidate_bot_id is not None:
        raise TournamentError(f"only a gauntlet has a candidate, not a {fmt.replace('_', '-')} tournament")
    if entry_deadline is not None:
        if not isinstance(entry_deadline, datetime) or entry_deadline.tzinfo is None:
            raise TournamentError(f"entry_deadline must be a timezone-aware datetime, got {entry_deadline!r}")
        if entry_deadline <= datetime.now(UTC):
            raise TournamentError(f"entry deadline {entry_deadline.isoformat()} is not in the future")
    window = entry_deadline is not None or bool(autostart)
    needed = bots_needed(fmt, counts)
    if not window and len(ids) < needed:
        raise TournamentError(
            f"{len(ids)} bot(s) cannot fill a {counts[-1]}-player match; need at least {needed}"
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
            "INSERT INTO tournaments (name, game, game_options, format, player_counts, rounds, time_control, "
            "status, entry_deadline, organiser_id, candidate_bot_id) "
            "VALUES (%s, %s, %s, %s, %s::int[], %s, %s, %s, coalesce(%s, CASE WHEN %s THEN now() END), %s, %s) "
            "RETURNING id",
            (name.strip(), game, Jsonb(normalized), fmt, counts, rounds, Jsonb(tc.to_json()),
             "open" if window else "created", entry_deadline, bool(autostart), organiser_id,
             ids[0] if fmt == "gauntlet" else None),
        ).fetchone()
        tid = int(row[0])
        conn.cursor().executemany(
            "INSERT INTO tournament_bots (tournament_id, bot_id, position) VALUES (%s, %s, %s)",
            [(tid, b, i) for i, b in enumerate(ids)],
        )
        return tid

    return run_transaction(pool, write)


PlannedMatch = tuple[str, str, str, str, list[int]]
"""``(plan_key, game_string, seed, seed_commitment, bot id per seat)`` of one match of a plan."""


def _rotations(table: Sequence[int]) -> list[list[int]]:
    """The N cyclic seat rotations of a table of N bots (rotation k puts ``table[k]`` in seat 0)."""
    t = list(table)
    return [t[k:] + t[:k] for k in range(len(t))]


def _tables(fmt: str, bots: Sequence[int], n: int) -> list[tuple[int, ...]]:
    """The tables (bots in rotation-0 seat order) of one round and player count N.

    Round-robin and duplicate: every combination of N bots, in tournament
    order. Gauntlet: ``bots[0]`` (the candidate) with every combination of
    N - 1 of the others.
    """
    if fmt == "gauntlet":
        return [(bots[0], *combo) for combo in itertools.combinations(bots[1:], n - 1)]
    return list(itertools.combinations(bots, n))


def _plan_rows(
    fmt: str, game: str, options: Mapping[str, Any], bots: Sequence[int], counts: Sequence[int], rounds: int,
    dealt: Mapping[str, str],
) -> list[PlannedMatch]:
    """Every match of a tournament's plan (see the module docstring for seeds and keys).

    ``dealt``: seeds already dealt, by plan-key prefix (a deal ``r{r}:n{N}:``
    for the duplicate format, a table ``r{r}:n{N}:{ids}:`` otherwise), so that
    completing a partial plan keeps its deals.
    """
    out: list[PlannedMatch] = []
    for r in range(1, rounds + 1):
        for n in counts:
            gs = game_string_for(game, options, n)
            deal = f"r{r}:n{n}:"
            deal_seed = (dealt.get(deal) or new_seed()[0]) if fmt == "duplicate" else None
            for table in _tables(fmt, bots, n):
                combo_key = "-".join(str(b) for b in table)
                seed = deal_seed or dealt.get(f"{deal}{combo_key}:") or new_seed()[0]
                commitment = seed_commitment(seed)
                for k, seats in enumerate(_rotations(table)):
                    out.append((f"{deal}{combo_key}:rot{k}", gs, seed, commitment, seats))
    return out


def _plan(pool: ConnectionPool, tournament_id: int, expected: str | None) -> list[int]:
    """Insert every match of a tournament's plan (idempotent); all its match ids, ascending.

    The tournament row is locked while planning and every insert is ``ON
    CONFLICT DO NOTHING`` on ``(tournament_id, plan_key)``, so two schedulers
    planning at once make one set of matches (FAULTS F-12).
    """

    def plan(conn: Any) -> list[int]:
        row = conn.execute(
            "SELECT game, game_options, format, player_counts, rounds, time_control, status, entry_deadline, "
            "candidate_bot_id FROM tournaments WHERE id = %s FOR UPDATE",
            (tournament_id,),
        ).fetchone()
        if row is None:
            raise TournamentNotFoundError(f"no tournament with id {tournament_id}")
        game, options, fmt, counts, rounds, tc, status, deadline, candidate = row
        if expected is not None and fmt != expected:
            raise TournamentError(f"tournament {tournament_id} is {fmt!r}, not {expected}")
        if fmt not in FORMATS:
            raise TournamentError(f"tournament {tournament_id} has format {fmt!r}, which this version cannot plan")
        if status == "open":
            raise TournamentError(
                f"tournament {tournament_id} is open for entries until {deadline.isoformat()}; "
                "it is planned when they close"
            )
        if status == "cancelled":
            raise TournamentError(f"tournament {tournament_id} is cancelled")
        bots = [
            r[0]
            for r in conn.execute(
                "SELECT bot_id FROM tournament_bots WHERE tournament_id = %s ORDER BY position",
                (tournament_id,),
            ).fetchall()
        ]
        if fmt == "gauntlet":  # the candidate first, whatever the entry order
            if candidate not in bots:
                raise TournamentError(f"gauntlet {tournament_id} has no candidate among its bots")
            bots = [candidate, *[b for b in bots if b != candidate]]
        existing = {
            r[0]
            for r in conn.execute("SELECT plan_key FROM matches WHERE tournament_id = %s", (tournament_id,))
        }
        dealt: dict[str, str] = {}
        for key, seed in conn.execute(
            "SELECT DISTINCT ON (1) CASE WHEN %s THEN substring(plan_key from '^r[0-9]+:n[0-9]+:') "
            "ELSE substring(plan_key from '^(.*:)rot[0-9]+$') END, seed FROM matches WHERE tournament_id = %s "
            "ORDER BY 1, id",
            (fmt == "duplicate", tournament_id),
        ).fetchall():
            if key:
                dealt[key] = seed
        todo = [m for m in _plan_rows(fmt, game, options, bots, counts, rounds, dealt) if m[0] not in existing]
        if todo:
            _insert_matches(conn, tournament_id, game, tc, todo)
        conn.execute("UPDATE tournaments SET status = 'planned' WHERE id = %s AND status = 'created'", (tournament_id,))
        return [
            r[0]
            for r in conn.execute("SELECT id FROM matches WHERE tournament_id = %s ORDER BY id", (tournament_id,))
        ]

    return run_transaction(pool, plan)


def plan_round_robin(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Insert every match of a round-robin tournament (idempotent) and return all its match ids.

    See the module docstring for the plan. Count per round and player count
    N over B bots: C(B, N) x N matches (4 bots, counts 2, 3, 4: 12 + 12 + 4 =
    28). The N rotations of a combination always share one seed (FAULTS F-12).

    Returns:
        Ids of all the tournament's matches (whatever their status now), ascending.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentError: the tournament's format is not ``round_robin``; it is
            still open for entries, or cancelled.
    """
    return _plan(pool, tournament_id, "round_robin")


def plan_gauntlet(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Insert every match of a gauntlet (idempotent) and return all its match ids.

    DESIGN §5 "one candidate against a pool": per round and player count N,
    the candidate with every combination of N - 1 pool bots, each table in
    every cyclic seat rotation on one seed (the candidate sits in every seat
    of the same deal). Pool bots never meet without the candidate. Count per
    round and N over P pool bots: C(P, N - 1) x N (3 pool bots, 2 players:
    3 x 2 = 6). Plan keys ``r{r}:n{N}:{candidate}-{pool ids}:rot{k}``.

    Returns:
        Ids of all the tournament's matches, ascending.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentError: the tournament's format is not ``gauntlet``; it is
            still open for entries, or cancelled.
    """
    return _plan(pool, tournament_id, "gauntlet")


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


def plan_duplicate(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Insert every match of a duplicate tournament (idempotent) and return all its match ids.

    The matches are those of a round-robin (every combination of N bots in
    every cyclic seat rotation, per round and player count N, with the same
    plan keys), but **one seed is dealt per round and player count** and
    shared by all of them (DESIGN §5 "the same seed played once per seat
    rotation"). Planning again reuses the seeds already dealt, so a plan
    completed later still plays one deal per round and player count.

    Returns:
        Ids of all the tournament's matches, ascending.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentError: the tournament's format is not ``duplicate``; it is
            still open for entries, or cancelled.
    """
    return _plan(pool, tournament_id, "duplicate")


def plan_tournament(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Plan a tournament in its own format (see :data:`FORMATS`); idempotent.

    Returns:
        Ids of all the tournament's matches, ascending.

    Raises:
        TournamentNotFoundError: no such tournament.
        TournamentError: a format this version cannot plan; open for entries; cancelled.
    """
    return _plan(pool, tournament_id, None)


def plan_duplicate_deal(
    pool: ConnectionPool,
    *,
    game_string: str,
    tables: Sequence[Sequence[int]],
    deal_key: str,
    tournament_id: int | None = None,
    time_control: TimeControl | Mapping[str, Any] | None = None,
    seed: str | None = None,
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

    Returns:
        Match ids per table, per rotation: ``ids[t][k]`` is table ``t`` in
        rotation ``k`` (``tables[t][k]`` in seat 0).

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game string.
        TournamentError: no table, a table of the wrong size or with a repeated bot.
    """
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

    def write(conn: Any) -> list[list[int]]:
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
        _insert_matches(conn, tournament_id, loaded.name, tc.to_json(), plan)
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

    return run_transaction(pool, write)


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


def pending_bots(pool: ConnectionPool, tournament_id: int) -> dict[int, str]:
    """The bots seated in the tournament's matches still to play (``planned`` or ``running``).

    Returns:
        ``{bot id: bot name}``, sorted by id; empty when nothing is pending.
    """
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT DISTINCT b.id, b.name FROM seats s JOIN matches m ON m.id = s.match_id "
            "JOIN bots b ON b.id = s.bot_id WHERE m.tournament_id = %s AND m.status IN ('planned', 'running') "
            "ORDER BY b.id",
            (tournament_id,),
        ).fetchall()
    return {int(bot_id): str(name) for bot_id, name in rows}


LADDER_KEY_PREFIX = "ladder:"
"""Plan keys of continuous-ladder matches start with this (matches without a tournament)."""


def ladder_round_prefix(game_string: str, round_no: int) -> str:
    """The plan-key prefix of one ladder round of one game string: ``ladder:<game string>:r<round>:``."""
    return f"{LADDER_KEY_PREFIX}{load_game(game_string).game_string()}:r{int(round_no)}:"


def plan_ladder_round(
    pool: ConnectionPool,
    *,
    game_string: str,
    round_no: int,
    bot_ids: Sequence[int],
    max_pending: int = 2,
    time_control: TimeControl | Mapping[str, Any] | None = None,
) -> list[int]:
    """Plan one round of the continuous ladder; idempotent per ``(game_string, round_no)`` (FAULTS F-12).

    Pairing (DESIGN §5 "fewest games first"): of ``bot_ids`` (the bots online
    now), drop revoked bots, house bots (:mod:`ladder.house`: they are there
    to be challenged and to fill gauntlets, not to play each other forever)
    and bots with ``max_pending`` or more planned or running matches (any
    match, ladder or not); order the rest by games
    played in this game (rated games, plus their pending matches), ties in a
    random order drawn from the round's key; cut that list into tables of the
    game's seat count (a remainder waits for the next round); each table's
    seats in a random order. Every match is a match without a tournament,
    with the plan key ``ladder:<game string>:r<round>:<sorted bot ids>``.

    Two schedulers planning the same round (two ``parterre beat`` processes)
    make one set of matches: the transaction takes an advisory lock on the
    round's key and, if any match of the round exists, returns the existing
    ones without planning anything.

    Args:
        pool: ladder connection pool.
        game_string: the game and its options, e.g. ``floriferous(players=2)``.
        round_no: the round (the ladder uses ``floor(unix time / period)``).
        bot_ids: candidate bots (online now).
        max_pending: cap on a bot's planned/running matches.
        time_control: as for :func:`plan_match`.

    Returns:
        The round's match ids, ascending (new or already planned).

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game string.
        TournamentError: ``max_pending`` < 1.
    """
    import random

    if max_pending < 1:
        raise TournamentError(f"max_pending must be at least 1, got {max_pending}")
    loaded = load_game(game_string)
    canonical = loaded.game_string()
    prefix = ladder_round_prefix(canonical, round_no)
    tc = TimeControl.parse(time_control)
    candidates = sorted({int(b) for b in bot_ids})

    def plan(conn: Any) -> list[int]:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (prefix,))
        existing = [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM matches WHERE tournament_id IS NULL AND starts_with(plan_key, %s) ORDER BY id",
                (prefix,),
            ).fetchall()
        ]
        if existing or len(candidates) < loaded.num_players:
            return existing
        live = {
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM bots WHERE id = ANY(%s::bigint[]) AND revoked_at IS NULL "
                "AND NOT EXISTS (SELECT 1 FROM house_bots h WHERE h.bot_id = bots.id)", (candidates,)
            ).fetchall()
        }
        pending = dict(
            conn.execute(
                "SELECT s.bot_id, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                "WHERE m.status IN ('planned', 'running') AND s.bot_id = ANY(%s::bigint[]) GROUP BY s.bot_id",
                (candidates,),
            ).fetchall()
        )
        played = dict(
            conn.execute(
                "SELECT bot_id, games FROM ratings WHERE game = %s AND bot_id = ANY(%s::bigint[])",
                (loaded.name, candidates),
            ).fetchall()
        )
        rng = random.Random(prefix)
        eligible = [b for b in candidates if b in live and int(pending.get(b, 0)) < max_pending]
        keyed = [(int(played.get(b, 0)) + int(pending.get(b, 0)), rng.random(), b) for b in eligible]
        order = [b for *_, b in sorted(keyed)]
        n = loaded.num_players
        todo = []
        for i in range(0, len(order) - n + 1, n):
            table = order[i : i + n]
            seats = list(table)
            rng.shuffle(seats)
            seed, commitment = new_seed()
            key = prefix + "-".join(str(b) for b in sorted(table))
            todo.append((key, canonical, seed, commitment, seats))
        if todo:
            _insert_matches(conn, None, loaded.name, tc.to_json(), todo)
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM matches WHERE tournament_id IS NULL AND starts_with(plan_key, %s) ORDER BY id",
                (prefix,),
            ).fetchall()
        ]

    return run_transaction(pool, plan)
