"""Competitions: a season of rated matches until a deadline, then a final evaluation (docs/competitions.md).

The object and what a web page or the CLI calls. Every function takes the pool and plain
values, the clock included (``now``: no wall clock inside), returns dataclasses, and raises
the errors of :mod:`ladder.errors` (``Competition*Error``; ``BotNotFoundError`` for a bot that
is not the caller's). Nothing is written when a call raises.

* :func:`create_competition` (an organiser or an admin), :func:`get_competition`,
  :func:`list_competitions`, :func:`entrants`;
* :func:`enter_competition` (an account enters one of its bots); the daily cap on new hosted
  versions of entrants is :func:`ladder.competition_season.check_version_quota`, which
  :func:`ladder.submissions.create_version` calls;
* :func:`lock_versions` (at the deadline; the workers' tick, ``parterre competition lock``);
* organiser tools: :func:`disqualify`, :func:`extend_deadline`, :func:`rerun` (the final
  evaluation again, from its seed), each checked (:class:`CompetitionPermissionError`) and
  recorded (:func:`events`);
* :func:`match_versions`: the hosted versions a match's seats play (a final evaluation's: the
  locked ones);
* the season (:mod:`ladder.competition_season`: ``plan_season_round``, ``season_table``) and
  the final evaluation (:mod:`ladder.competition_final`: ``start_evaluation``,
  ``advance_evaluation``, ``evaluation``, ``final_table``).

The status is not stored; it follows from the clock (:meth:`Competition.status`):
``upcoming`` (before ``opens_at``), ``open`` (entries and season until ``deadline_at``),
``locked`` (versions locked, until ``final_at``), ``evaluating`` (from ``final_at`` until
the evaluation finishes) and ``final`` (the final table is frozen).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_class
from ladder import submissions
from ladder.bots import held_sql
from ladder.competition_final import MAX_BATCHES, MAX_BUDGET, Evaluation, recompute_final, rerun_in
from ladder.competition_season import lock_entrants, pinned_sql
from ladder.db import connection, run_transaction
from ladder.errors import (
    BotNotFoundError,
    CompetitionClosedError,
    CompetitionError,
    CompetitionLimitError,
    CompetitionNotFoundError,
    CompetitionPermissionError,
)
from ladder.match_plans import TimeControl, game_string_for
from ladder.submissions import HostedVersion

STATUSES = ("upcoming", "open", "locked", "evaluating", "final")
"""A competition's statuses, in the order they come (:meth:`Competition.status`)."""
ENTRY_MODES = ("hosted", "any")
"""``hosted``: hosted bots only (their versions are the platform's to lock); ``any``: connected bots too."""
MAX_TEXT = 20_000
"""Longest description or rules of conduct (characters of Markdown, stored raw)."""
MAX_ENTRANTS_PER_ACCOUNT = 20
"""Most entrant bots per account a competition may allow (an account's bots are capped at 20 anyway)."""
MAX_VERSIONS_PER_DAY = 1000
"""Most new hosted versions a day a competition may allow each account."""
DEFAULT_BUDGET = 2000
"""Matches the final evaluation may play unless the organiser says otherwise."""
DEFAULT_MAX_BATCHES = 20
"""Batches the final evaluation may play unless the organiser says otherwise."""


@dataclass(frozen=True, slots=True)
class Competition:
    """A competition as stored (see the module doc for the status).

    Attributes:
        player_counts: seat counts it plays (season rounds and final batches cycle through them).
        time_control: ``{"base_ms", "increment_ms", "cap_ms", "margin_ms"}``.
        entry_mode: one of :data:`ENTRY_MODES`.
        description / rules: Markdown as the organiser wrote it (not rendered here).
        final_budget / final_max_batches: the final evaluation's limits.
        locked_at: when the entrants' versions were locked (None before).
        evaluation: the status of its current evaluation (``running``, ``finished``) or None.
        entrants: bots entered (disqualified ones included).
    """

    id: int
    name: str
    game: str
    game_options: dict[str, Any]
    player_counts: tuple[int, ...]
    time_control: dict[str, int]
    opens_at: datetime
    deadline_at: datetime
    final_at: datetime
    entry_mode: str
    max_entrants_per_account: int
    max_versions_per_day: int
    description: str
    rules: str
    organiser_id: int
    organiser: str
    final_budget: int
    final_max_batches: int
    locked_at: datetime | None
    created_at: datetime
    evaluation: str | None
    entrants: int

    def status(self, now: datetime) -> str:
        """The status at ``now`` (one of :data:`STATUSES`)."""
        if self.evaluation == "finished":
            return "final"
        if self.evaluation == "running" or now >= self.final_at:
            return "evaluating"
        if now >= self.deadline_at:
            return "locked"
        return "open" if now >= self.opens_at else "upcoming"

    def to_json(self, now: datetime) -> dict[str, Any]:
        """A JSON-ready dict with the status at ``now`` (times ISO-8601)."""
        out = asdict(self)
        for k in ("opens_at", "deadline_at", "final_at", "locked_at", "created_at"):
            out[k] = out[k].isoformat() if out[k] is not None else None
        out["status"] = self.status(now)
        return out


_COLS = ("c.id, c.name, c.game, c.game_options, c.player_counts, c.time_control, c.opens_at, c.deadline_at, "
         "c.final_at, c.entry_mode, c.max_entrants_per_account, c.max_versions_per_day, c.description, c.rules, "
         "c.organiser_id, a.username, c.final_budget, c.final_max_batches, c.locked_at, c.created_at, "
         "(SELECT v.status FROM competition_evaluations v WHERE v.competition_id = c.id AND v.status <> 'superseded'), "
         "(SELECT count(*) FROM competition_entrants e WHERE e.competition_id = c.id)")
_FROM = "FROM competitions c JOIN accounts a ON a.id = c.organiser_id"


def _competition(row: Sequence[Any]) -> Competition:
    values = list(row)
    values[3], values[4], values[5] = dict(values[3]), tuple(values[4]), dict(values[5])
    values[-1] = int(values[-1])
    return Competition(*values)


def _text(label: str, text: Any) -> str:
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise CompetitionError(f"the {label} is text of at most {MAX_TEXT} characters")
    bad = next((c for c in text if (ord(c) < 32 and c not in "\t\n\r") or 127 <= ord(c) < 160), None)
    if bad is not None:
        raise CompetitionError(f"the {label} holds no control characters (found U+{ord(bad):04X})")
    return text


def _when(label: str, value: Any) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise CompetitionError(f"{label} must be a timezone-aware datetime, got {value!r}")
    return value


def _limit(label: str, value: Any, top: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top:
        raise CompetitionError(f"{label} must be a whole number from 1 to {top}, got {value!r}")
    return value


def create_competition(
    pool: ConnectionPool,
    *,
    organiser_id: int,
    name: str,
    game: str,
    deadline_at: datetime,
    now: datetime,
    opens_at: datetime | None = None,
    final_at: datetime | None = None,
    game_options: Mapping[str, Any] | None = None,
    player_counts: Sequence[int] = (2,),
    time_control: TimeControl | Mapping[str, Any] | None = None,
    entry_mode: str = "hosted",
    max_entrants_per_account: int = 1,
    max_versions_per_day: int = 5,
    description: str = "",
    rules: str = "",
    final_budget: int = DEFAULT_BUDGET,
    final_max_batches: int = DEFAULT_MAX_BATCHES,
) -> Competition:
    """Create a competition; everything is checked before anything is written.

    Args:
        pool: ladder connection pool.
        organiser_id: the account organising it (role ``organiser`` or ``admin``, active).
        name: 1-200 characters.
        game: registry name; ``game_options`` its options other than ``players``.
        deadline_at: end of entries and of new versions (after ``now`` and ``opens_at``).
        now: the time the schedule is judged at.
        opens_at: start of entries and of the season; default ``now``.
        final_at: start of the final evaluation (not before ``deadline_at``); default ``deadline_at``.
        player_counts: seat counts, each of at least 2 and allowed by the game.
        time_control: as for tournaments (:class:`ladder.match_plans.TimeControl`).
        entry_mode: one of :data:`ENTRY_MODES`.
        max_entrants_per_account: bots one account may enter (1 to :data:`MAX_ENTRANTS_PER_ACCOUNT`).
        max_versions_per_day: new hosted versions of its entrants one account may upload in any
            24 hours of the season (1 to :data:`MAX_VERSIONS_PER_DAY`).
        description / rules: Markdown, at most :data:`MAX_TEXT` characters each.
        final_budget / final_max_batches: the final evaluation's limits.

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game, option or player count.
        CompetitionError: a bad name, schedule (dates in the wrong order, a deadline passed), entry
            mode, limit, text or time control.
        CompetitionPermissionError: the organiser is not an active organiser or admin.
    """
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 200:
        raise CompetitionError(f"a competition name is 1-200 characters, got {name!r}")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise CompetitionError(f"a competition name holds no control characters, got {name!r}")
    counts = sorted({int(n) for n in player_counts})
    if not counts or counts[0] < 2:
        raise CompetitionError(f"player counts must be 2 or more seats, got {list(player_counts)}")
    options = dict(game_options or {})
    for n in counts:
        game_string_for(game, options, n)
    specs = {spec.name: spec for spec in game_class(game).INFO.options}
    options = {k: specs[k].coerce(v) for k, v in options.items()}
    try:
        tc = TimeControl.parse(time_control)
    except ValueError as exc:
        raise CompetitionError(str(exc)) from None
    now = _when("now", now)
    opens = _when("opens_at", opens_at if opens_at is not None else now)
    deadline = _when("deadline_at", deadline_at)
    final = _when("final_at", final_at if final_at is not None else deadline)
    if not opens < deadline:
        raise CompetitionError(f"the deadline ({deadline.isoformat()}) must come after the opening "
                               f"({opens.isoformat()})")
    if not deadline <= final:
        raise CompetitionError(f"the final evaluation ({final.isoformat()}) cannot start before the deadline "
                               f"({deadline.isoformat()})")
    if deadline <= now:
        raise CompetitionError(f"the deadline {deadline.isoformat()} has already passed")
    if entry_mode not in ENTRY_MODES:
        raise CompetitionError(f"entry mode must be one of {', '.join(ENTRY_MODES)}, got {entry_mode!r}")
    per_account = _limit("max_entrants_per_account", max_entrants_per_account, MAX_ENTRANTS_PER_ACCOUNT)
    per_day = _limit("max_versions_per_day", max_versions_per_day, MAX_VERSIONS_PER_DAY)
    budget = _limit("final_budget", final_budget, MAX_BUDGET)
    batches = _limit("final_max_batches", final_max_batches, MAX_BATCHES)
    text, conduct = _text("description", description), _text("rules of conduct", rules)

    def write(conn: Any) -> Competition:
        row = conn.execute("SELECT role, status FROM accounts WHERE id = %s", (organiser_id,)).fetchone()
        if row is None or row[0] not in ("organiser", "admin") or row[1] != "active":
            raise CompetitionPermissionError("only an active organiser or admin account organises a competition")
        cid = conn.execute(
            "INSERT INTO competitions (name, game, game_options, player_counts, time_control, opens_at, deadline_at, "
            "final_at, entry_mode, max_entrants_per_account, max_versions_per_day, description, rules, organiser_id, "
            "final_budget, final_max_batches, created_at) "
            "VALUES (%s, %s, %s, %s::int[], %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (name.strip(), game, Jsonb(options), counts, Jsonb(tc.to_json()), opens, deadline, final, entry_mode,
             per_account, per_day, text, conduct, organiser_id, budget, batches, now)).fetchone()[0]
        return _get(conn, int(cid))

    return run_transaction(pool, write)


def _get(conn: Any, competition_id: int, *, lock: bool = False) -> Competition:
    if lock:
        conn.execute("SELECT 1 FROM competitions WHERE id = %s FOR UPDATE", (competition_id,))
    row = conn.execute(f"SELECT {_COLS} {_FROM} WHERE c.id = %s", (competition_id,)).fetchone()
    if row is None:
        raise CompetitionNotFoundError(f"no competition with id {competition_id}")
    return _competition(row)


def get_competition(pool: ConnectionPool, competition_id: int) -> Competition:
    """The competition.

    Raises:
        CompetitionNotFoundError: no such competition.
    """
    with connection(pool) as conn:
        return _get(conn, competition_id)


def list_competitions(pool: ConnectionPool, *, limit: int = 50, before: int | None = None,
                      game: str | None = None) -> list[Competition]:
    """The newest competitions first (``before``: only smaller ids, for paging).

    Raises:
        ValueError: ``limit`` outside 1..500.
    """
    if not 1 <= limit <= 500:
        raise ValueError(f"limit must be in 1..500, got {limit}")
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT {_COLS} {_FROM} WHERE (%s::bigint IS NULL OR c.id < %s) AND (%s::text IS NULL OR c.game = %s) "
            "ORDER BY c.id DESC LIMIT %s", (before, before, game, game, limit)).fetchall()
    return [_competition(r) for r in rows]


def active_competitions(pool: ConnectionPool) -> list[Competition]:
    """Every competition whose final table is not frozen yet (what the workers' tick looks at), by id."""
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT {_COLS} {_FROM} WHERE NOT EXISTS (SELECT 1 FROM competition_evaluations v "
            "WHERE v.competition_id = c.id AND v.status = 'finished') ORDER BY c.id").fetchall()
    return [_competition(r) for r in rows]


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot in a competition.

    Attributes:
        account_id / account: the account that entered it (its owner).
        retired: the bot is retired (it plays no more).
        locked_version_id / locked_version: the version locked at the deadline (a hosted version's id
            and number; a connected bot's announced version), None before the lock.
        disqualified_at / disqualified_reason: set when the organiser disqualified it.
    """

    competition_id: int
    bot_id: int
    name: str
    account_id: int
    account: str
    entered_at: datetime
    retired: bool
    locked_version_id: int | None
    locked_version: str | None
    disqualified_at: datetime | None
    disqualified_reason: str | None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for k in ("entered_at", "disqualified_at"):
            out[k] = out[k].isoformat() if out[k] is not None else None
        return out


def _entrants(conn: Any, competition_id: int) -> list[Entrant]:
    rows = conn.execute(
        "SELECT e.competition_id, e.bot_id, b.name, e.account_id, a.username, e.entered_at, b.revoked_at IS NOT NULL, "
        "e.locked_version_id, e.locked_version, e.disqualified_at, e.disqualified_reason "
        "FROM competition_entrants e JOIN bots b ON b.id = e.bot_id JOIN accounts a ON a.id = e.account_id "
        "WHERE e.competition_id = %s ORDER BY e.entered_at, e.bot_id", (competition_id,)).fetchall()
    return [Entrant(*r) for r in rows]


def entrants(pool: ConnectionPool, competition_id: int) -> list[Entrant]:
    """The competition's entrants in order of entry (disqualified ones included).

    Raises:
        CompetitionNotFoundError: no such competition.
    """
    with connection(pool) as conn:
        _get(conn, competition_id)
        return _entrants(conn, competition_id)


def enter_competition(pool: ConnectionPool, competition_id: int, bot_id: int, *, account_id: int,
                      now: datetime) -> Entrant:
    """Enter ``account_id``'s bot into the competition.

    The competition's row is locked while the account's entrants are counted and the bot is
    added, so parallel entries cannot pass the limit together.

    Raises:
        CompetitionNotFoundError: no such competition.
        CompetitionClosedError: before ``opens_at``, or at or after ``deadline_at``.
        BotNotFoundError: no bot ``bot_id`` of this account (someone else's bot answers the same).
        CompetitionError: the account is not active or was disqualified from the competition; the bot is
            retired, of another game, not hosted in a hosted competition, or already entered.
        CompetitionLimitError: the account has ``max_entrants_per_account`` bots in it already.
    """

    def write(conn: Any) -> Entrant:
        c = _get(conn, competition_id, lock=True)
        if now < c.opens_at:
            raise CompetitionClosedError(f"competition {competition_id} opens for entries at {c.opens_at.isoformat()}")
        if now >= c.deadline_at:
            raise CompetitionClosedError(f"competition {competition_id} closed its entries at "
                                         f"{c.deadline_at.isoformat()}")
        account = conn.execute("SELECT status FROM accounts WHERE id = %s", (account_id,)).fetchone()
        if account is None or account[0] != "active":
            raise CompetitionError("only an active account enters a competition")
        bot = conn.execute(
            "SELECT b.name, b.revoked_at IS NOT NULL, b.games, h.manifest->'games' FROM bots b "
            "LEFT JOIN hosted_versions h ON h.bot_id = b.id AND h.status = 'active' "
            "WHERE b.id = %s AND b.account_id = %s", (bot_id, account_id)).fetchone()
        if bot is None:
            raise BotNotFoundError(f"you have no bot {bot_id}")
        name, retired, games, hosted_games = bot
        if retired:
            raise CompetitionError(f"bot {name} (id {bot_id}) is retired and cannot enter")
        if games and c.game not in games:
            raise CompetitionError(f"bot {name} (id {bot_id}) plays {', '.join(games)}, not {c.game}")
        if c.entry_mode == "hosted" and hosted_games is None:
            raise CompetitionError(f"competition {competition_id} takes hosted bots only, and bot {name} (id {bot_id}) "
                                   "has no active hosted version")
        if hosted_games and c.game not in hosted_games:
            raise CompetitionError(f"the active version of bot {name} (id {bot_id}) plays "
                                   f"{', '.join(hosted_games)}, not {c.game}")
        rows = conn.execute("SELECT bot_id, disqualified_at IS NOT NULL FROM competition_entrants "
                            "WHERE competition_id = %s AND account_id = %s", (competition_id, account_id)).fetchall()
        if any(out for _, out in rows):
            raise CompetitionError(f"this account was disqualified from competition {competition_id}")
        if any(b == bot_id for b, _ in rows):
            raise CompetitionError(f"bot {name} (id {bot_id}) has already entered competition {competition_id}")
        if len(rows) >= c.max_entrants_per_account:
            raise CompetitionLimitError(f"an account enters at most {c.max_entrants_per_account} bot(s) in "
                                        f"competition {competition_id}; this one has {len(rows)}")
        conn.execute("INSERT INTO competition_entrants (competition_id, bot_id, account_id, entered_at) "
                     "VALUES (%s, %s, %s, %s)", (competition_id, bot_id, account_id, now))
        return next(e for e in _entrants(conn, competition_id) if e.bot_id == bot_id)

    return run_transaction(pool, write)


def lock_versions(pool: ConnectionPool, competition_id: int, *, now: datetime) -> list[Entrant]:
    """Lock the entrants' versions once the deadline has passed (idempotent: a second call changes
    nothing). The rules are :func:`ladder.competition_season.lock_entrants`'s.

    Raises:
        CompetitionNotFoundError: no such competition.
        CompetitionClosedError: the deadline has not passed.
    """

    def lock(conn: Any) -> list[Entrant]:
        c = _get(conn, competition_id, lock=True)
        if now < c.deadline_at:
            raise CompetitionClosedError(f"competition {competition_id}'s versions lock at its deadline, "
                                         f"{c.deadline_at.isoformat()}")
        if c.locked_at is None:
            lock_entrants(conn, competition_id, c.deadline_at)
            conn.execute("UPDATE competitions SET locked_at = %s WHERE id = %s", (now, competition_id))
        return _entrants(conn, competition_id)

    return run_transaction(pool, lock)


def _organiser(conn: Any, c: Competition, actor_id: int | None) -> None:
    """Refuse unless ``actor_id`` is the competition's organiser or an admin (None: the operator, with
    database access, e.g. the CLI)."""
    if actor_id is None:
        return
    row = conn.execute("SELECT role, status FROM accounts WHERE id = %s", (actor_id,)).fetchone()
    if row is None or row[1] != "active" or (actor_id != c.organiser_id and row[0] != "admin"):
        raise CompetitionPermissionError(f"only the organiser of competition {c.id} (or an admin) may do this")


def _event(conn: Any, competition_id: int, now: datetime, actor_id: int | None, kind: str,
           detail: Mapping[str, Any]) -> None:
    conn.execute("INSERT INTO competition_events (competition_id, at, actor_id, kind, detail) "
                 "VALUES (%s, %s, %s, %s, %s)", (competition_id, now, actor_id, kind, Jsonb(dict(detail))))


def disqualify(pool: ConnectionPool, competition_id: int, *, actor_id: int | None, reason: str, now: datetime,
               bot_id: int | None = None, account_id: int | None = None) -> list[int]:
    """Disqualify one entrant bot, or every entrant of an account. Their matches stay recorded; their
    seats leave the season table and the final evaluation's fit, and a frozen final table is
    recomputed without them and marked (:func:`ladder.competition_final.recompute_final`).

    Args:
        actor_id: the account acting (its organiser or an admin); None for the operator.
        reason: why, in words (1-500 characters), shown with the entrant.
        bot_id / account_id: exactly one of them.

    Returns:
        The bots disqualified now (ascending).

    Raises:
        CompetitionNotFoundError, CompetitionPermissionError.
        CompetitionError: not exactly one of ``bot_id`` and ``account_id``, a bad reason, or no such entrant
            (or all of the account's are disqualified already).
    """
    if (bot_id is None) == (account_id is None):
        raise CompetitionError("disqualify one bot or one account")
    if not isinstance(reason, str) or not 1 <= len(reason.strip()) <= 500:
        raise CompetitionError("a disqualification needs a reason of 1-500 characters")

    def write(conn: Any) -> list[int]:
        c = _get(conn, competition_id, lock=True)
        _organiser(conn, c, actor_id)
        rows = conn.execute(
            "UPDATE competition_entrants SET disqualified_at = %s, disqualified_reason = %s, disqualified_by = %s "
            "WHERE competition_id = %s AND disqualified_at IS NULL AND (bot_id = %s OR account_id = %s) "
            "RETURNING bot_id", (now, reason.strip(), actor_id, competition_id, bot_id, account_id)).fetchall()
        bots = sorted(int(r[0]) for r in rows)
        if not bots:
            who = f"bot {bot_id}" if bot_id is not None else f"account {account_id}"
            raise CompetitionError(f"{who} has no entrant left to disqualify in competition {competition_id}")
        _event(conn, competition_id, now, actor_id, "disqualified",
               {"bots": bots, "account_id": account_id, "reason": reason.strip()})
        recompute_final(conn, competition_id, f"bot(s) {', '.join(map(str, bots))} disqualified: {reason.strip()}",
                        now)
        return bots

    return run_transaction(pool, write)


def extend_deadline(pool: ConnectionPool, competition_id: int, *, actor_id: int | None, deadline_at: datetime,
                    now: datetime, final_at: datetime | None = None) -> Competition:
    """Move the deadline later, before the final evaluation starts. ``final_at`` moves with it by the same
    amount unless given (it must then not come before the new deadline). Versions locked at the old
    deadline are unlocked (the lock runs again at the new one).

    Raises:
        CompetitionNotFoundError, CompetitionPermissionError.
        CompetitionClosedError: the final evaluation has started (or is due: ``now >= final_at``).
        CompetitionError: the new deadline is not later than the current one, or passed, or after ``final_at``; or
            ``final_at``, moved by as much as the deadline, would pass the year 9999.
    """
    deadline = _when("deadline_at", deadline_at)

    def write(conn: Any) -> Competition:
        c = _get(conn, competition_id, lock=True)
        _organiser(conn, c, actor_id)
        if c.evaluation is not None or now >= c.final_at:
            raise CompetitionClosedError(f"competition {competition_id}'s final evaluation has started; "
                                         "its deadline cannot move")
        if deadline <= c.deadline_at:
            raise CompetitionError(f"a deadline only moves later: {deadline.isoformat()} is not after "
                                   f"{c.deadline_at.isoformat()}")
        if deadline <= now:
            raise CompetitionError(f"the new deadline {deadline.isoformat()} has already passed")
        try:
            final = _when("final_at", final_at) if final_at is not None else c.final_at + (deadline - c.deadline_at)
        except OverflowError:  # moved past the year 9999, the last a datetime holds
            raise CompetitionError(f"moving the final evaluation ({c.final_at.isoformat()}) as far as the deadline "
                                   "takes it past the year 9999; give final_at") from None
        if final < deadline:
            raise CompetitionError(f"the final evaluation ({final.isoformat()}) cannot start before the deadline "
                                   f"({deadline.isoformat()})")
        conn.execute("UPDATE competitions SET deadline_at = %s, final_at = %s, locked_at = NULL WHERE id = %s",
                     (deadline, final, competition_id))
        conn.execute("UPDATE competition_entrants SET locked_version_id = NULL, locked_version = NULL "
                     "WHERE competition_id = %s", (competition_id,))
        _event(conn, competition_id, now, actor_id, "deadline_extended",
               {"from": c.deadline_at.isoformat(), "to": deadline.isoformat(), "final_at": final.isoformat()})
        return _get(conn, competition_id)

    return run_transaction(pool, write)


def events(pool: ConnectionPool, competition_id: int) -> list[dict[str, Any]]:
    """What the organiser did, oldest first: ``{"at", "actor_id", "kind", "detail"}`` (kinds:
    ``deadline_extended``, ``disqualified``, ``evaluation_rerun``)."""
    with connection(pool) as conn:
        rows = conn.execute("SELECT at, actor_id, kind, detail FROM competition_events WHERE competition_id = %s "
                            "ORDER BY id", (competition_id,)).fetchall()
    return [{"at": at.isoformat(), "actor_id": actor, "kind": kind, "detail": dict(detail)}
            for at, actor, kind, detail in rows]


def rerun(pool: ConnectionPool, competition_id: int, *, actor_id: int | None, now: datetime,
          fresh_seed: bool = False) -> tuple[Evaluation, list[int]]:
    """The organiser's re-run of the final evaluation from its seed (or a fresh one): the current run is
    superseded, a new one starts (:func:`ladder.competition_final.rerun_evaluation`), and the event is
    recorded.

    Returns:
        The new run and the match ids of its first batch (to queue).

    Raises:
        CompetitionNotFoundError, CompetitionPermissionError.
        CompetitionError: no evaluation to re-run. CompetitionClosedError: before ``final_at``.
    """

    def write(conn: Any) -> tuple[Evaluation, list[int]]:
        _organiser(conn, _get(conn, competition_id, lock=True), actor_id)
        result = rerun_in(conn, competition_id, now=now, fresh_seed=fresh_seed)
        _event(conn, competition_id, now, actor_id, "evaluation_rerun",
               {"run": result[0].run, "fresh_seed": fresh_seed})
        return result

    return run_transaction(pool, write)


def match_versions(pool: ConnectionPool, match_id: int, bot_ids: Sequence[int]) -> dict[int, HostedVersion]:
    """The hosted versions that play the seats ``bot_ids`` of match ``match_id``: each bot's playing version
    (:func:`ladder.submissions.playing_versions`), except in a competition's final evaluation, where an
    entrant plays the version locked at the deadline (while its credential is live:
    :func:`ladder.competition_season.pinned_sql`). The worker that runs a match starts these.

    Returns:
        ``{bot id: version}`` for the hosted seats; a seat without one is a connected bot.
    """
    versions = submissions.playing_versions(pool, list(bot_ids))
    with connection(pool) as conn:
        locked = conn.execute(
            "SELECT e.bot_id, e.locked_version_id FROM matches m JOIN competition_entrants e "
            "ON e.competition_id = m.competition_id JOIN hosted_versions h ON h.id = e.locked_version_id "
            "JOIN bots b ON b.id = e.bot_id WHERE m.id = %s "
            "AND starts_with(m.plan_key, 'competition:' || m.competition_id || ':e') AND e.bot_id = ANY(%s::bigint[]) "
            "AND h.token_hash IS NOT NULL AND h.token_revoked_at IS NULL AND b.revoked_at IS NULL "
            f"AND NOT {held_sql('b')} AND {pinned_sql('h')}", (match_id, list(bot_ids))).fetchall()
    for bot_id, version_id in locked:
        version = submissions.get_version(pool, int(version_id))
        if version is not None:
            versions[int(bot_id)] = version
    return versions
