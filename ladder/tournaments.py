"""Tournaments: round-robin, gauntlet and duplicate planning (docs/faults.md F-12).

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

These seeds are what each match's first attempt is dealt. A match whose attempt
ended ``infra_error`` (after a no-show nobody saw a card) is played again on a
new seed (:func:`ladder.matches.claim_match`): its bots may have seen part of the
old deal. That match then no longer shares its deal with the other rotations; the
duplicate table still counts it under its plan key's deal (whose commitment is its
first match's).

The **gauntlet** format (:func:`plan_gauntlet`) plays one candidate against a
pool: per round and player count N, the candidate with every
combination of N - 1 pool bots, each table in every seat rotation on one seed,
with the round-robin's key shape (the candidate's id first).
:func:`plan_tournament` plans a tournament of any format. Entry windows
(tournaments that bots enter until a deadline) are in :mod:`ladder.entries`;
final tables per format in :mod:`ladder.tournament_tables`.

Single matches, deals, time controls and seeds are planned by
:mod:`ladder.match_plans`, the continuous ladder's rounds by
:mod:`ladder.ladder_rounds`; their public names are re-exported here.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_class
from ladder.db import connection, run_transaction
from ladder.errors import BotNotFoundError, TournamentError, TournamentNotFoundError
from ladder.ladder_rounds import LADDER_KEY_PREFIX, ladder_round_prefix, plan_ladder_round
from ladder.match_plans import (
    PlannedMatch,
    TimeControl,
    _insert_matches,
    _rotations,
    game_string_for,
    new_seed,
    plan_duplicate_deal,
    plan_match,
    seed_commitment,
)

__all__ = [
    "FORMATS", "LADDER_KEY_PREFIX", "MATCH_STATUSES", "PlannedMatch", "TimeControl", "bots_needed",
    "create_tournament", "game_string_for", "ladder_round_prefix", "new_seed", "pending_bots", "plan_duplicate",
    "plan_duplicate_deal", "plan_gauntlet", "plan_ladder_round", "plan_match", "plan_round_robin",
    "plan_tournament", "seed_commitment", "tournament_status", "unfinished_matches",
]

FORMATS = ("round_robin", "gauntlet", "duplicate")
"""Tournament formats this version can plan."""

MATCH_STATUSES = ("planned", "running", "finished", "aborted_no_show", "failed")
"""Every status a tournament's match can have (see the initial migration for the lifecycle); a
challenge's match may also be ``waiting`` (for its bots) or ``expired`` (:mod:`ladder.challenges`)."""


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
        time_control: :class:`TimeControl` or mapping of its ``*_ms`` fields, within the bounds of
            :func:`ladder.match_plans.check_time_control`; default 1 s cap per decision with a 100 ms margin.
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
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise TournamentError(f"a tournament name holds no control characters, got {name!r}")
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
    planning at once make one set of matches (docs/faults.md F-12).
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
    28). The N rotations of a combination always share one seed (docs/faults.md F-12).

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

    One candidate against a pool: per round and player count N,
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


def plan_duplicate(pool: ConnectionPool, tournament_id: int) -> list[int]:
    """Insert every match of a duplicate tournament (idempotent) and return all its match ids.

    The matches are those of a round-robin (every combination of N bots in
    every cyclic seat rotation, per round and player count N, with the same
    plan keys), but **one seed is dealt per round and player count** and
    shared by all of them (the same seed played once per seat
    rotation). Planning again reuses the seeds already dealt, so a plan
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


def unfinished_matches(pool: ConnectionPool, tournament_id: int, *, limit: int = 10) -> list[dict[str, Any]]:
    """The tournament's matches that did not finish (any status but ``finished``), with why.

    Returns:
        Up to ``limit`` dicts ``{"match_id", "plan_key", "status", "attempts", "error"}``
        ordered by match id; ``error`` is the last attempt's error, or the reason the
        match waits for a referee, or None.
    """
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT m.id, m.plan_key, m.status, m.attempt, coalesce(a.error, m.referee_wait_error) FROM matches m "
            "LEFT JOIN LATERAL (SELECT error FROM match_attempts x WHERE x.match_id = m.id ORDER BY attempt DESC "
            "LIMIT 1) a ON true WHERE m.tournament_id = %s AND m.status <> 'finished' ORDER BY m.id LIMIT %s",
            (tournament_id, int(limit)),
        ).fetchall()
    return [{"match_id": int(r[0]), "plan_key": r[1], "status": r[2], "attempts": int(r[3]), "error": r[4]}
            for r in rows]
