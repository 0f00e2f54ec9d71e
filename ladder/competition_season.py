"""A competition's season: its matchmaking, its own leaderboard, and the lock of versions at its end.

The rules are in docs/competitions.md; this module is their code. From ``opens_at`` to
``deadline_at`` the workers' competition tick plans one **round** per period
(:func:`plan_season_round`, idempotent per round): tables of the competition's entrants that
are online and have no competition match planned or running, each table in every cyclic seat
rotation on one seed (a duplicate deal, :func:`ladder.match_plans.plan_deal_in`), rated. Who
meets whom is :func:`season_tables`:

1. order the eligible bots by season matches played (planned ones included), fewest first,
   ties in a random order drawn from the round's key;
2. the most-played bots sit the round out until the others divide into tables and no
   account holds more of them than there are tables (then every one of them can be seated);
3. the first bot still unseated heads a table, which takes a bot of each account that must
   be at it (one with as many bots left as tables left) and then the unseated bots of other
   accounts whose season ratings are closest to the table's, each earlier meeting with a bot
   of the table counting as :data:`REMATCH_ELO` more points of distance.

Two bots of one account are never at one table (their seats would be casual anyway:
:mod:`ladder.fair_play`). The player count of round ``r`` is the competition's
``player_counts[r mod len]``.

The competition's leaderboard (:func:`season_table`) is a Bradley-Terry fit of its finished
season matches only (:func:`ladder.stats.bradley_terry.fit_bradley_terry` with the observed
information), every entrant rated, disqualified entrants' seats left out of every match.

During the season an account may upload at most ``max_versions_per_day`` new hosted versions
of its entrants in any 24 hours (:func:`check_version_quota`, Kaggle's daily submission cap).
At the deadline the entrants' versions are locked (:func:`lock_entrants`): a hosted bot's
version is the one active at ``deadline_at``, a connected bot's the version its last season
match before the deadline announced. The final evaluation (:mod:`ladder.competition_final`)
counts only matches played by the locked versions.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.archive_read import SubmissionError
from ladder.db import connection, run_transaction
from ladder.errors import CompetitionNotFoundError
from ladder.match_plans import game_string_for, plan_deal_in
from ladder.stats.bradley_terry import BTFit, BTRating, MatchRecord, fit_bradley_terry
from ladder.stats.scales import phi_inv

REMATCH_ELO = 100.0
"""Points of rating distance each earlier season meeting adds between two bots when a table is filled:
close ratings first, but not the same opponent every round."""

INTERVAL = 0.95
"""Coverage of the intervals the competition's tables show (Wald: rating +- 1.96 standard errors)."""
QUOTA_WINDOW_S = 24 * 3600
"""The window of a competition's ``max_versions_per_day`` (a day, sliding)."""


def key_prefix(competition_id: int) -> str:
    """``competition:<id>:``: every plan key of the competition's matches starts with it."""
    return f"competition:{int(competition_id)}:"


def season_deal_key(competition_id: int, round_no: int) -> str:
    """The deal key of one season round (its plan keys are ``<deal key>:<table>:rot<k>``)."""
    return f"{key_prefix(competition_id)}s{int(round_no)}"


@dataclass(frozen=True, slots=True)
class EntrantRow:
    """What the season and the evaluation need of an entrant (the web's view is
    :class:`ladder.competitions.Entrant`).

    Attributes:
        entry: order of entry (0 = first), the last tie-break of every order.
        out: disqualified (its seats leave every table).
        retired: its bot is retired (revoked).
        locked_version: the version label its seats must record in the final evaluation (None: not
            locked, or nothing to check it against).
    """

    bot_id: int
    account_id: int
    entry: int
    out: bool
    retired: bool
    locked_version: str | None


def load_entrants(conn: Any, competition_id: int) -> list[EntrantRow]:
    """The competition's entrants in order of entry."""
    rows = conn.execute(
        "SELECT e.bot_id, e.account_id, e.disqualified_at IS NOT NULL, b.revoked_at IS NOT NULL, e.locked_version "
        "FROM competition_entrants e JOIN bots b ON b.id = e.bot_id WHERE e.competition_id = %s "
        "ORDER BY e.entered_at, e.bot_id",
        (competition_id,),
    ).fetchall()
    return [EntrantRow(int(b), int(a), i, bool(out), bool(ret), v) for i, (b, a, out, ret, v) in enumerate(rows)]


@dataclass(frozen=True, slots=True)
class Records:
    """A competition's finished matches of one phase, ready for the fit.

    Attributes:
        records: one per counted match, without the seats of excluded bots.
        games: counted matches per bot.
        mismatched: finished matches left out because a seat was not played by its locked version.
    """

    records: list[MatchRecord]
    games: Counter[int]
    mismatched: int


def load_records(conn: Any, competition_id: int, prefix: str, *, excluded: Iterable[int] = (),
                 locked: Mapping[int, str | None] | None = None) -> Records:
    """The finished matches of ``competition_id`` whose plan key starts with ``prefix``, in match order.

    Args:
        excluded: bots whose seats are removed from every match (disqualified, withdrawn); a match
            left with fewer than two seats is not counted.
        locked: bot -> locked version label; a match with a seat whose recorded version differs
            from its bot's label (when the label is not None) is not counted.
    """
    out = set(excluded)
    rows = conn.execute(
        "SELECT m.id, s.bot_id, s.rank, s.bot_version FROM matches m JOIN seats s ON s.match_id = m.id "
        "WHERE m.competition_id = %s AND m.status = 'finished' AND starts_with(m.plan_key, %s) ORDER BY m.id, s.seat",
        (competition_id, prefix),
    ).fetchall()
    by_match: dict[int, list[tuple[int, int, str | None]]] = {}
    for mid, bot, rank, version in rows:
        by_match.setdefault(int(mid), []).append((int(bot), int(rank), version))
    records, games, mismatched = [], Counter[int](), 0
    for seats in by_match.values():
        if locked is not None and any(locked.get(b) is not None and v != locked[b] for b, _, v in seats):
            mismatched += 1
            continue
        kept = [(b, r) for b, r, _ in seats if b not in out]
        if len(kept) < 2:
            continue
        records.append(MatchRecord(tuple(b for b, _ in kept), tuple(r for _, r in kept)))
        games.update(b for b, _ in kept)
    return Records(records, games, mismatched)


def fit(records: Sequence[MatchRecord], bots: Sequence[int], *, covariance: bool = False) -> BTFit:
    """The competition's Bradley-Terry fit: every bot of ``bots`` rated (in that order for ties), point
    estimates with the observed information (no bootstrap); ``covariance`` for the final table's pairs."""
    return fit_bradley_terry(records, bootstrap=0, bots=list(bots), information=True, covariance=covariance)


class FitMemo:
    """Each competition's season fit last computed, by its data: a table view costs its database reads, not a fit.

    A competition of 64 entrants takes about 0.8 s of CPU to fit, and anyone may look at its table,
    so each competition's last fit is kept with a digest of its exact input (the records and the bots
    rated) and computed once however many readers ask at once: the first computes, the others wait for
    it. A finished match or a disqualification changes the input, and the next view fits again. One fit
    is kept per competition, so readers going round many competitions' tables cost no fit either (a memo
    of the few last inputs of any competition recomputed each one of a round longer than it), and the
    records are not kept (a 32-byte digest each). At most ``size`` competitions are kept, the least
    recently read going first.
    """

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._fits: OrderedDict[int, tuple[bytes, BTFit]] = OrderedDict()
        self._computing: dict[tuple[int, bytes], threading.Lock] = {}
        self.computed = 0
        """Fits computed so far (the rest were served from memory)."""

    @staticmethod
    def digest(records: Sequence[MatchRecord], bots: Sequence[int]) -> bytes:
        """The fit's whole input, digested: the bots rated (in order) and each record's seats and ranks."""
        return hashlib.sha256(repr((list(bots), [(r.bots, r.ranks) for r in records])).encode()).digest()

    def _held(self, competition_id: int, digest: bytes) -> BTFit | None:
        held = self._fits.get(competition_id)
        if held is None or held[0] != digest:
            return None
        self._fits.move_to_end(competition_id)
        return held[1]

    def get(self, competition_id: int, records: Sequence[MatchRecord], bots: Sequence[int]) -> BTFit:
        digest = self.digest(records, bots)
        with self._lock:
            done = self._held(competition_id, digest)
            if done is not None:
                return done
            computing = self._computing.setdefault((competition_id, digest), threading.Lock())
        with computing:
            with self._lock:
                done = self._held(competition_id, digest)
                if done is not None:
                    return done
            try:
                result = fit(records, bots)
                with self._lock:  # kept before the computing lock is dropped: no reader in between fits again
                    self._fits[competition_id] = (digest, result)
                    self._fits.move_to_end(competition_id)
                    self.computed += 1
                    while len(self._fits) > self.size:
                        self._fits.popitem(last=False)
            finally:
                with self._lock:
                    self._computing.pop((competition_id, digest), None)
        return result


_SEASON_FITS = FitMemo()


def rated_bot(line: BTRating) -> int:
    """The bot id of a line of a competition's fit (its bots are bot ids)."""
    bot = line.bot
    assert isinstance(bot, int)
    return bot


def season_tables(eligible: Sequence[int], n: int, *, games: Mapping[int, int], rating: Mapping[int, float],
                  account: Mapping[int, int], met: Mapping[frozenset[int], int],
                  rng: random.Random) -> list[list[int]]:
    """One round's tables (the policy in the module doc; pure).

    Args:
        eligible: the bots that may play this round.
        n: seats per table.
        games: season matches per bot (planned ones included).
        rating: season rating per bot.
        account: account per bot.
        met: season matches per pair of bots.
        rng: draws the order of bots with as many matches.

    Returns:
        The tables, each head first. Every bot that does not sit out is seated: ``k`` bots can fill
        ``k / n`` tables of distinct accounts exactly when no account holds more than ``k / n`` of
        them, so the most-played bots sit out until that holds, and each table first takes a bot
        of every account that must be at it (one with as many bots left as tables left).
    """
    tiebreak = {b: rng.random() for b in sorted(eligible)}
    left = sorted(eligible, key=lambda b: (games.get(b, 0), tiebreak[b]))
    while left:
        counts = Counter(account[b] for b in left)
        crowded = [a for a, c in counts.items() if c > len(left) // n]
        if not crowded and len(left) % n == 0:
            break
        out = [b for b in left if account[b] in crowded] if crowded else left
        left.remove(out[-1])  # the most-played: of an account with too many bots, else of all

    def distance(b: int, table: list[int]) -> tuple[float, int, float]:
        gap = sum(abs(rating[b] - rating[t]) + REMATCH_ELO * met.get(frozenset((b, t)), 0) for t in table)
        return gap / len(table), games.get(b, 0), tiebreak[b]

    tables = []
    while left:
        counts = Counter(account[b] for b in left)
        due = {a for a, c in counts.items() if c == len(left) // n}
        head = left[0] if len(due - {account[left[0]]}) < n else next(b for b in left if account[b] in due)
        table = [head]
        for a in sorted(due - {account[head]}):
            table.append(min((b for b in left if account[b] == a), key=lambda b: distance(b, table)))
        while len(table) < n:
            owners = {account[t] for t in table}
            table.append(min((b for b in left if account[b] not in owners), key=lambda b: distance(b, table)))
        tables.append(table)
        left = [b for b in left if b not in table]
    return tables


def plan_season_round(pool: ConnectionPool, competition_id: int, *, round_no: int, online: Iterable[int],
                      now: datetime) -> list[int]:
    """Plan one season round of a competition (the policy in the module doc); idempotent per round.

    Nothing is planned outside the season (``opens_at <= now < deadline_at``). The competition's
    row is locked while the round is planned, so two ticks plan one set of matches: a round that
    has any match already returns its matches.

    Args:
        pool: ladder connection pool.
        competition_id: the competition.
        round_no: the round (the tick uses ``floor(unix time / period)``).
        online: bots that can play now (connected to a referee, or hosted with a playing version).
        now: the time the schedule is judged at.

    Returns:
        The round's match ids, ascending (new or already planned); empty when no table fits.

    Raises:
        CompetitionNotFoundError: no such competition.
    """
    deal = season_deal_key(competition_id, round_no)
    ready = {int(b) for b in online}

    def plan(conn: Any) -> list[int]:
        row = conn.execute(
            "SELECT game, game_options, player_counts, time_control, opens_at <= %s AND %s < deadline_at "
            "FROM competitions WHERE id = %s FOR UPDATE", (now, now, competition_id)).fetchone()
        if row is None:
            raise CompetitionNotFoundError(f"no competition with id {competition_id}")
        game, options, counts, tc, in_season = row
        existing = [int(r[0]) for r in conn.execute(
            "SELECT id FROM matches WHERE competition_id = %s AND starts_with(plan_key, %s) ORDER BY id",
            (competition_id, deal + ":")).fetchall()]
        if existing or not in_season:
            return existing
        entrants = [e for e in load_entrants(conn, competition_id) if not e.out and not e.retired]
        pending = {int(b) for (b,) in conn.execute(
            "SELECT DISTINCT s.bot_id FROM seats s JOIN matches m ON m.id = s.match_id WHERE m.competition_id = %s "
            "AND m.status IN ('planned', 'running')", (competition_id,)).fetchall()}
        eligible = [e.bot_id for e in entrants if e.bot_id in ready and e.bot_id not in pending]
        n = int(counts[round_no % len(counts)])
        if len(eligible) < n:
            return []
        games, met = _season_meetings(conn, competition_id)
        season = fit(load_records(conn, competition_id, f"{key_prefix(competition_id)}s",
                                  excluded=_out(conn, competition_id)).records, [e.bot_id for e in entrants])
        rating = {rated_bot(line): line.elo for line in season.ratings}
        tables = season_tables(eligible, n, games=games, rating=rating,
                               account={e.bot_id: e.account_id for e in entrants}, met=met, rng=random.Random(deal))
        if not tables:
            return []
        ids = plan_deal_in(conn, game_string=game_string_for(game, options, n), tables=tables, deal_key=deal,
                           time_control=tc, competition_id=competition_id)
        return sorted(mid for table in ids for mid in table)

    return run_transaction(pool, plan)


def _out(conn: Any, competition_id: int) -> set[int]:
    return {int(b) for (b,) in conn.execute(
        "SELECT bot_id FROM competition_entrants WHERE competition_id = %s AND disqualified_at IS NOT NULL",
        (competition_id,)).fetchall()}


def _season_meetings(conn: Any, competition_id: int) -> tuple[Counter[int], Counter[frozenset[int]]]:
    """Season matches per bot and per pair of bots (finished, planned and running ones)."""
    rows = conn.execute(
        "SELECT m.id, array_agg(s.bot_id) FROM matches m JOIN seats s ON s.match_id = m.id "
        "WHERE m.competition_id = %s AND starts_with(m.plan_key, %s) "
        "AND m.status IN ('planned', 'running', 'finished') GROUP BY m.id",
        (competition_id, f"{key_prefix(competition_id)}s")).fetchall()
    games: Counter[int] = Counter()
    met: Counter[frozenset[int]] = Counter()
    for _, bots in rows:
        ids = [int(b) for b in bots]
        games.update(ids)
        met.update(frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1:])
    return games, met


@dataclass(frozen=True, slots=True)
class TableRow:
    """One line of a competition's leaderboard.

    Attributes:
        place: 1 = best; None for a disqualified entrant.
        rating: Bradley-Terry rating (logistic Elo points, mean of the placed entrants 1500); None when
            disqualified.
        low / high: its 95 % interval (Wald, from the observed information).
        z_next: evidence that it is stronger than the next entrant down (the likelihood-ratio ``z``
            of :mod:`ladder.stats.bradley_terry`); None for the last and the disqualified.
        matches: counted matches it played (its disqualified opponents' seats left out).
        disqualified: the organiser disqualified it (its matches stay recorded, its seats leave the fit).
    """

    place: int | None
    bot_id: int
    name: str
    account: str
    rating: float | None
    low: float | None
    high: float | None
    z_next: float | None
    matches: int
    disqualified: bool


@dataclass(frozen=True, slots=True)
class SeasonTable:
    """The competition's leaderboard during (and after) its season: its season matches only."""

    competition_id: int
    rows: tuple[TableRow, ...]
    matches: int
    model: str


def season_table(pool: ConnectionPool, competition_id: int) -> SeasonTable:
    """The competition's season leaderboard (see the module doc), best first, disqualified entrants last.

    Raises:
        CompetitionNotFoundError: no such competition.
    """
    prefix = f"{key_prefix(competition_id)}s"
    with connection(pool) as conn:
        if conn.execute("SELECT 1 FROM competitions WHERE id = %s", (competition_id,)).fetchone() is None:
            raise CompetitionNotFoundError(f"no competition with id {competition_id}")
        entrants = load_entrants(conn, competition_id)
        finished = conn.execute(SEASON_FINISHED_SQL, (competition_id, prefix)).fetchone()
        state = (tuple(finished or ()), tuple(entrants))
        with _SEASON_TABLES_LOCK:
            held = _SEASON_TABLES.get(competition_id)
        if held is not None and held[0] == state:
            return held[1]
        out = {e.bot_id for e in entrants if e.out}
        data = load_records(conn, competition_id, prefix, excluded=out)
        names = _names(conn, [e.bot_id for e in entrants])
    result = _SEASON_FITS.get(competition_id, data.records, [e.bot_id for e in entrants if not e.out])
    table = SeasonTable(competition_id, tuple(rows_of(result, names, data.games, sorted(out))), len(data.records),
                        result.model)
    with _SEASON_TABLES_LOCK:
        _SEASON_TABLES[competition_id] = (state, table)
        _SEASON_TABLES.move_to_end(competition_id)
        while len(_SEASON_TABLES) > _SEASON_FITS.size:
            _SEASON_TABLES.popitem(last=False)
    return table


SEASON_FINISHED_SQL = ("SELECT count(*), coalesce(max(result_seq), 0) FROM matches WHERE competition_id = %s "
                       "AND status = 'finished' AND starts_with(plan_key, %s)")
"""How many season matches have finished, and the last one's result number: with the entrants (their
disqualifications, retirements and locked versions) the whole input of the season table. A result gets
the next number of ``match_result_seq`` as its match finishes (``ladder.matches.record_result``)."""

_SEASON_TABLES: OrderedDict[int, tuple[tuple[Any, ...], SeasonTable]] = OrderedDict()
"""Each competition's last season table with the state it was read at (:data:`SEASON_FINISHED_SQL` and the
entrants): a view whose state is unchanged reads two small queries, not every season match again (0.8 s for
40,000 matches of 64 entrants)."""
_SEASON_TABLES_LOCK = threading.Lock()


def _names(conn: Any, bot_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    return {int(b): (n, u) for b, n, u in conn.execute(
        "SELECT b.id, b.name, coalesce(a.username, '') FROM bots b LEFT JOIN accounts a ON a.id = b.account_id "
        "WHERE b.id = ANY(%s::bigint[])", (list(bot_ids),)).fetchall()}


def rows_of(result: BTFit, names: Mapping[int, tuple[str, str]], games: Mapping[int, int],
            disqualified: Sequence[int]) -> list[TableRow]:
    """Leaderboard rows of a fit, places in its order, then the disqualified entrants."""
    z = phi_inv(0.5 + INTERVAL / 2)
    rows = []
    for line in result.ratings:
        bot = rated_bot(line)
        half = z * (line.se or 0.0)
        rows.append(TableRow(line.rank, bot, *names.get(bot, (str(bot), "")), line.elo, line.elo - half,
                             line.elo + half, line.z_next, int(games.get(bot, 0)), False))
    rows += [TableRow(None, b, *names.get(b, (str(b), "")), None, None, None, None, int(games.get(b, 0)), True)
             for b in disqualified]
    return rows


def lock_entrants(conn: Any, competition_id: int, deadline_at: datetime) -> None:
    """Store each entrant's version at the deadline (inside the caller's transaction; the rules are in the
    module doc). A hosted bot's: the newest version that was made active at or before ``deadline_at``
    (``locked_version_id``, and its number as the label its seats record); a connected bot's: the
    version its last season match finished by then announced (None when it played none)."""
    conn.execute(
        "UPDATE competition_entrants e SET locked_version_id = v.id, locked_version = v.number::text FROM ("
        " SELECT DISTINCT ON (h.bot_id) h.bot_id, h.id, h.number FROM hosted_versions h"
        " JOIN competition_entrants x ON x.bot_id = h.bot_id AND x.competition_id = %s"
        " WHERE h.status IN ('active', 'superseded') AND h.decided_at <= %s ORDER BY h.bot_id, h.number DESC) v "
        "WHERE e.competition_id = %s AND e.bot_id = v.bot_id",
        (competition_id, deadline_at, competition_id))
    conn.execute(
        "UPDATE competition_entrants e SET locked_version = (SELECT s.bot_version FROM seats s "
        " JOIN matches m ON m.id = s.match_id WHERE m.competition_id = e.competition_id AND s.bot_id = e.bot_id"
        " AND m.status = 'finished' AND m.finished_at <= %s ORDER BY m.finished_at DESC, m.id DESC LIMIT 1) "
        "WHERE e.competition_id = %s AND e.locked_version_id IS NULL",
        (deadline_at, competition_id))


class VersionQuotaError(SubmissionError):
    """A new hosted version is refused: the bot is entered in a competition whose daily cap on new
    versions its account has reached (:func:`check_version_quota`); a :class:`SubmissionError`, so the upload
    API refuses it as it refuses an archive (400, with the reason)."""


def check_version_quota(conn: Any, bot_id: int) -> None:
    """Refuse a new hosted version of ``bot_id`` when its account already uploaded ``max_versions_per_day``
    versions of its entrants in the last 24 hours (the database's clock, as the upload's) in a competition
    whose entries are open. Called by :func:`ladder.submissions.create_version` inside its transaction,
    under its lock per account, so a burst of uploads is counted one after the other.

    Raises:
        VersionQuotaError: the cap is reached; the message names the competition.
    """
    row = conn.execute(
        "SELECT c.id, c.name, c.max_versions_per_day, (SELECT count(*) FROM hosted_versions h "
        " JOIN competition_entrants x ON x.bot_id = h.bot_id AND x.competition_id = c.id "
        " WHERE x.account_id = e.account_id AND h.created_at > now() - make_interval(secs => %s)) "
        "FROM competition_entrants e JOIN competitions c ON c.id = e.competition_id "
        "WHERE e.bot_id = %s AND c.opens_at <= now() AND now() < c.deadline_at "
        "ORDER BY c.max_versions_per_day, c.id", (QUOTA_WINDOW_S, bot_id)).fetchall()
    for cid, name, cap, used in row:
        if used >= cap:
            raise VersionQuotaError(f"competition {cid} ({name}) allows {cap} new version(s) of its entrants per "
                                    f"account in any 24 hours, and this account has uploaded {used}; upload again "
                                    "later")


def pinned_sql(alias: str) -> str:
    """SQL true when hosted version ``alias`` must keep its credential for a competition whose final table is
    not frozen yet, although a newer version of its bot may be active: it is an entrant's locked version
    (not disqualified), or, past the deadline and before the lock, a version made active by the deadline
    (one of them is the one the lock takes). See :func:`ladder.submissions.sync_credentials` and
    :func:`ladder.competitions.match_versions`."""
    return (f"EXISTS (SELECT 1 FROM competition_entrants pe JOIN competitions pc ON pc.id = pe.competition_id "
            f"WHERE pe.bot_id = {alias}.bot_id AND pe.disqualified_at IS NULL AND (pe.locked_version_id = {alias}.id "
            f"OR (pc.locked_at IS NULL AND pc.deadline_at <= now() AND {alias}.decided_at <= pc.deadline_at)) "
            "AND NOT EXISTS (SELECT 1 FROM competition_evaluations pv WHERE pv.competition_id = pc.id "
            "AND pv.status = 'finished'))")
