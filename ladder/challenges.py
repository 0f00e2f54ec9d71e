"""Challenges: one match between chosen bots, rated or casual, played once they are connected.

A challenge is a match without a tournament (plan key ``challenge:<random>``)
plus a ``challenges`` row. Its life:

```
create_challenge -> match "waiting", challenge "waiting"
                    (challenge "asked" when a bot of another account has the policy "ask")
   asked: every asked owner accepts (ladder.challenge_answers) -> challenge "waiting"
          an owner declines -> match "declined", challenge "declined", never played
   every seated bot connected (dispatch_challenges) -> match "planned", challenge "started"
        -> a worker claims and runs it like any match (planned -> running -> finished ...)
   expires_at passes first (asked or waiting) -> match "expired", challenge "expired", reason in words
```

One expiry covers both waits: the owners' answers and then the bots' connections.

A ``waiting`` match is never claimed by a worker (:func:`ladder.matches.claim_match`
takes ``planned`` matches only) and the reaper does not touch it. This module
decides nothing about *who* is connected: the workers read the referees'
presence and pass it in (docs/architecture.md "Packages and arrows": ladder never imports workers).

A casual challenge (``rated=False``) is recorded and replayed but changes no
rating (``matches.rated``; see :func:`ladder.matches.record_result` and
:func:`ladder.ratings.rebuild_ratings`).

Who may challenge whom (ownership, scopes, the bots' challenge policies) is checked
by the caller, the web site's API, before :func:`create_challenge`, and again here.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.api import GameError
from games.registry import load_game
from ladder import challenge_answers, fair_play
from ladder.challenge_answers import ChallengeAnswer
from ladder.db import connection, run_transaction
from ladder.errors import ChallengeError, ChallengeLimitError, MatchNotFoundError, TournamentError
from ladder.tournaments import TimeControl, new_seed

CHALLENGE_KEY_PREFIX = "challenge:"
"""Plan keys of challenge matches start with this (matches without a tournament)."""

DEFAULT_EXPIRY_S = 300.0
"""How long a challenge waits for its bots by default, in seconds."""

MAX_EXPIRY_S = 7 * 24 * 3600.0
"""Longest a challenge may wait, in seconds (a week)."""

DEFAULT_MAX_OPEN = 2
"""Most challenges one account may have pending or running at once by default (``PARTERRE_MAX_OPEN_CHALLENGES``):
each running one holds a worker slot for as long as its clock allows (S-22)."""

OPEN_MATCH_STATUSES = ("waiting", "planned", "running")
"""Match statuses of a challenge that counts against its challenger's cap (not yet over)."""

CHALLENGE_STATUSES = ("asked", "waiting", "started", "expired", "declined")
"""Stored statuses of a challenge row; once ``started``, the match's own status tells the rest."""


@dataclass(frozen=True, slots=True)
class ChallengeInfo:
    """A challenge as its challenger sees it (in the list of their matches).

    Attributes:
        match_id: the challenge's match.
        game: registry name; ``game_string`` the full game string.
        bot_ids / bot_names: bot per seat, seat 0 first.
        rated: False for a casual match (never rated).
        challenger_id: account id of the challenger, or None.
        status: ``asked`` (for owners' answers, see ``answers``), ``waiting`` (for its bots),
            ``declined`` or ``expired`` (see ``reason``), or, once started, the match's status
            (``planned``, ``running``, ``finished``, ``aborted_no_show``, ``failed``).
        reason: why it expired or was declined (e.g. "bot house-greedy (id 3) was not connected
            within 300 s", "the owner of bot moonlit (id 7) declined"); for a challenge that started
            and ended ``aborted_no_show`` or
            ``failed``, its last attempt's error (e.g. "no_show: seat 1 (bot 12)"); else None.
        created_at / expires_at / started_at / finished_at: UTC-aware times.
        time_control: ``{base_ms, increment_ms, cap_ms, margin_ms}`` in milliseconds.
        ranks: rank per seat once finished (1 = best), else None.
        unrated_reason: why a challenge asked to be rated is casual (docs/participants.md
            "Fair play", :mod:`ladder.fair_play`), else None.
        challenger_name: the challenger's username, or None.
        answers: one per bot whose owner was asked (policy ``ask``), by bot id; empty when none was.
    """

    match_id: int
    game: str
    game_string: str
    bot_ids: tuple[int, ...]
    bot_names: tuple[str, ...]
    rated: bool
    challenger_id: int | None
    status: str
    reason: str | None
    created_at: datetime
    expires_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    time_control: dict[str, int]
    ranks: tuple[int, ...] | None
    unrated_reason: str | None = None
    challenger_name: str | None = None
    answers: tuple[ChallengeAnswer, ...] = ()


CONSENTS_SQL = ("(b.revoked_at IS NULL AND b.challenge_policy <> 'none' AND "
                "(cardinality(coalesce(b.challenge_games, b.games)) = 0 "
                "OR %s = ANY(coalesce(b.challenge_games, b.games))))")
"""SQL: bot ``b`` (live) may be challenged (policy ``accept`` or ``ask``) in the game given as its one
parameter; the rule of :meth:`ladder.owned_bots.OwnedBot.challengeable` (no games listed: every game)."""


def create_challenge(
    pool: ConnectionPool,
    *,
    game_string: str,
    bot_ids: Sequence[int],
    rated: bool,
    time_control: Mapping[str, Any] | None = None,
    challenger_id: int | None = None,
    expires_after_s: float = DEFAULT_EXPIRY_S,
    max_open: int | None = None,
) -> int:
    """Create a challenge: one match between ``bot_ids``, played as soon as all of them are connected.

    Validates everything before writing anything. The match waits (status
    ``waiting``) until the workers see every seated bot connected to a
    referee (:func:`dispatch_challenges`), or expires after ``expires_after_s``.
    When a bot of another account than ``challenger_id`` has the policy ``ask``, the
    challenge is ``asked`` first: it waits for its owner's answer
    (:func:`ladder.challenge_answers.answer_challenge`) within the same expiry.

    Args:
        pool: ladder connection pool.
        game_string: game and options, e.g. ``"floriferous(players=2)"`` or
            ``"lafleur"`` (canonicalised by the registry).
        bot_ids: bot per seat, seat 0 first; as many as the game has seats.
        rated: True for a rated match, False for a casual one (recorded, never rated).
        time_control: mapping of the ``*_ms`` fields of
            :class:`ladder.tournaments.TimeControl` (missing ones default), or None.
        challenger_id: account id of the challenger (stored as is), or None.
        expires_after_s: seconds to wait for the bots, in (0, one week].
        max_open: most challenges ``challenger_id`` may have pending or running
            (:data:`OPEN_MATCH_STATUSES`) once this one is made; None: no cap
            (operator tools). Checked under a lock of the account row, so two
            concurrent requests cannot both slip under it.

    Returns:
        The match id. A rated challenge is written casual (``matches.unrated_reason`` says why) past
        the limits of :mod:`ladder.fair_play` (rated challenges per pair of accounts per day, rating gap).

    Raises:
        ChallengeError: unknown game or option; wrong number of bots for the
            game's seats; a bot repeated, unknown or revoked; a bot not registered for the game (its
            ``games``); a bot of another account than ``challenger_id`` (any account's, when the
            operator challenges) whose policy is ``none`` or that is not challenged in the game; a bad time
            control or expiry; ``rated`` not a bool; a rated challenge
            seating two bots of one account (Elo farming, S-21).
        ChallengeLimitError: the challenger is at ``max_open`` already.
    """
    try:
        loaded = load_game(game_string)
    except GameError as exc:
        raise ChallengeError(f"game {game_string!r}: {exc}") from None
    if not isinstance(rated, bool):
        raise ChallengeError(f"rated must be true or false, got {rated!r}")
    try:
        seats = [int(b) for b in bot_ids]
    except (TypeError, ValueError):
        raise ChallengeError(f"bot ids must be integers, got {bot_ids!r}") from None
    if len(seats) != loaded.num_players:
        raise ChallengeError(
            f"{loaded.game_string()} is played by {loaded.num_players} player(s); {len(seats)} bot(s) given"
        )
    if len(set(seats)) != len(seats):
        raise ChallengeError(f"a bot cannot hold two seats of one match: {seats}")
    try:
        tc = TimeControl.parse(time_control)  # the bounds of ladder.match_plans.check_time_control
    except (TournamentError, TypeError) as exc:
        raise ChallengeError(str(exc)) from None
    if isinstance(expires_after_s, bool) or not isinstance(expires_after_s, (int, float)) or not (
        0 < expires_after_s <= MAX_EXPIRY_S
    ):
        raise ChallengeError(f"expires_after_s must be in (0, {MAX_EXPIRY_S:.0f}] seconds, got {expires_after_s!r}")
    seed, commitment = new_seed()
    plan_key = CHALLENGE_KEY_PREFIX + secrets.token_hex(12)

    def write(conn: Any) -> int:
        rows = conn.execute(f"SELECT id, name, revoked_at, account_id, games, {CONSENTS_SQL}, challenge_policy "
                            "FROM bots b WHERE id = ANY(%s::bigint[])", (loaded.name, seats)).fetchall()
        found = {r[0]: (r[1], r[2]) for r in rows}
        missing = [b for b in seats if b not in found]
        if missing:
            raise ChallengeError(f"no bot with id(s) {missing}")
        revoked = [f"{found[b][0]} (id {b})" for b in seats if found[b][1] is not None]
        if revoked:
            raise ChallengeError(f"revoked bot(s) cannot play: {', '.join(revoked)}")
        unregistered = [f"{r[1]} (id {r[0]}: {', '.join(r[4])})" for r in rows if r[4] and loaded.name not in r[4]]
        if unregistered:
            raise ChallengeError(f"not registered for {loaded.name}: {'; '.join(unregistered)}")
        others = [r for r in rows if r[3] is not None and r[3] != challenger_id]
        unwilling = [f"{r[1]} (id {r[0]})" for r in others if not r[5]]
        if unwilling:
            raise ChallengeError(
                f"{', '.join(unwilling)} does not accept challenges in {loaded.name}: its owner can turn them on "
                "(`parterre remote bot-set ID --challenge-policy accept` or `ask`, or the bot's page)")
        asked = sorted(r[0] for r in others if r[6] == "ask")
        owners = [r[3] for r in rows if r[3] is not None]
        if rated and len(set(owners)) != len(owners):
            raise ChallengeError("a rated challenge cannot seat two bots of one account (their ratings would be "
                                 "one owner's to give away); make it casual (rated: false)")
        unrated_reason = fair_play.challenge_unrated_reason(conn, loaded.name, seats) if rated else None
        is_rated = rated and unrated_reason is None
        if max_open is not None and challenger_id is not None:
            conn.execute("SELECT 1 FROM accounts WHERE id = %s FOR UPDATE", (challenger_id,))
            (open_now,) = conn.execute(
                "SELECT count(*) FROM challenges c JOIN matches m ON m.id = c.match_id "
                "WHERE c.challenger_id = %s AND m.status = ANY(%s)", (challenger_id, list(OPEN_MATCH_STATUSES)),
            ).fetchone()
            if open_now >= max_open:
                raise ChallengeLimitError(
                    f"you have {open_now} challenge(s) waiting or being played; at most {max_open} at once: "
                    "wait until one is over")
        row = conn.execute(
            "INSERT INTO matches (tournament_id, plan_key, game, game_string, seed, seed_commitment, time_control, "
            "status, rated, unrated_reason) VALUES (NULL, %s, %s, %s, %s, %s, %s, 'waiting', %s, %s) RETURNING id",
            (plan_key, loaded.name, loaded.game_string(), seed, commitment, Jsonb(tc.to_json()), is_rated,
             unrated_reason),
        ).fetchone()
        match_id = int(row[0])
        conn.cursor().executemany(
            "INSERT INTO seats (match_id, seat, bot_id) VALUES (%s, %s, %s)",
            [(match_id, i, b) for i, b in enumerate(seats)],
        )
        conn.execute(
            "INSERT INTO challenges (match_id, challenger_id, rated, status, expires_at) "
            "VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s))",
            (match_id, challenger_id, is_rated, "asked" if asked else "waiting", float(expires_after_s)),
        )
        challenge_answers.ask_owners(conn, match_id, asked)
        return match_id

    return run_transaction(pool, write)


_INFO_SQL = f"""
SELECT m.id, m.game, m.game_string, m.status AS match_status, m.time_control, m.finished_at,
       m.unrated_reason, c.rated, c.challenger_id, c.status, c.reason, c.created_at, c.expires_at, c.started_at,
       array_agg(s.bot_id ORDER BY s.seat) AS bot_ids, array_agg(b.name ORDER BY s.seat) AS bot_names,
       array_agg(s.rank ORDER BY s.seat) AS ranks,
       (SELECT a.error FROM match_attempts a WHERE a.match_id = m.id AND a.error IS NOT NULL
        ORDER BY a.attempt DESC LIMIT 1) AS last_error,
       (SELECT u.username FROM accounts u WHERE u.id = c.challenger_id) AS challenger_name,
       ({challenge_answers.ANSWERS_JSON_SQL}) AS answers
FROM challenges c JOIN matches m ON m.id = c.match_id
JOIN seats s ON s.match_id = m.id JOIN bots b ON b.id = s.bot_id
"""


def _info(row: dict[str, Any]) -> ChallengeInfo:
    status = row["status"] if row["status"] != "started" else row["match_status"]
    ranks = tuple(row["ranks"]) if row["match_status"] == "finished" else None
    reason = row["reason"]
    if reason is None and status in ("aborted_no_show", "failed"):
        reason = row["last_error"]  # the last attempt's words, e.g. "no_show: seat 1 (bot 12)"
    return ChallengeInfo(
        match_id=int(row["id"]), game=row["game"], game_string=row["game_string"],
        bot_ids=tuple(int(b) for b in row["bot_ids"]), bot_names=tuple(row["bot_names"]), rated=bool(row["rated"]),
        challenger_id=row["challenger_id"], status=status, reason=reason, created_at=row["created_at"],
        expires_at=row["expires_at"], started_at=row["started_at"], finished_at=row["finished_at"],
        time_control=dict(row["time_control"]), ranks=ranks, unrated_reason=row["unrated_reason"],
        challenger_name=row["challenger_name"], answers=challenge_answers.parse_answers(row["answers"]),
    )


def challenge_status(pool: ConnectionPool, match_id: int) -> ChallengeInfo:
    """The challenge whose match is ``match_id``.

    Raises:
        MatchNotFoundError: no challenge has this match id.
    """
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(_INFO_SQL + "WHERE c.match_id = %s GROUP BY m.id, c.match_id", (match_id,)).fetchone()
    if row is None:
        raise MatchNotFoundError(f"no challenge with match id {match_id}")
    return _info(row)


def list_challenges(
    pool: ConnectionPool, *, challenger_id: int | None = None, bot_id: int | None = None, limit: int = 50,
    before: int | None = None, asked_of: int | None = None, pending: bool = False,
) -> list[ChallengeInfo]:
    """Challenges, newest first: all, or those of one challenger, seating one bot and/or asking one account.

    Args:
        pool: ladder connection pool.
        challenger_id: only this challenger's.
        bot_id: only challenges where this bot holds a seat.
        asked_of: only challenges that asked this account's answer for one of its bots (policy ``ask``).
        pending: with ``asked_of``, only those still waiting for that account's answer.
        limit: most rows (1..500).
        before: only challenges whose match id is below this (paging).

    Raises:
        ValueError: ``limit`` out of range.
    """
    if not 1 <= limit <= 500:
        raise ValueError(f"limit must be in 1..500, got {limit}")
    conds, params = [], []
    if challenger_id is not None:
        conds.append("c.challenger_id = %s")
        params.append(challenger_id)
    if bot_id is not None:
        conds.append("EXISTS (SELECT 1 FROM seats x WHERE x.match_id = c.match_id AND x.bot_id = %s)")
        params.append(bot_id)
    if before is not None:
        conds.append("c.match_id < %s")
        params.append(before)
    if asked_of is not None:
        unanswered = " AND x.answer IS NULL AND c.status = 'asked'" if pending else ""
        conds.append("EXISTS (SELECT 1 FROM challenge_answers x JOIN bots y ON y.id = x.bot_id "
                     f"WHERE x.match_id = c.match_id AND y.account_id = %s{unanswered})")
        params.append(asked_of)
    where = ("WHERE " + " AND ".join(conds)) if conds else ""
    sql = _INFO_SQL + f"{where} GROUP BY m.id, c.match_id ORDER BY c.match_id DESC LIMIT %s"
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, [*params, limit]).fetchall()
    return [_info(r) for r in rows]


def involves(pool: ConnectionPool, match_id: int, account_id: int) -> bool:
    """True when ``account_id`` made challenge ``match_id`` or owns one of its seated bots."""
    with connection(pool) as conn:
        row = conn.execute(
            "SELECT 1 FROM challenges c WHERE c.match_id = %s AND (c.challenger_id = %s OR EXISTS ("
            "SELECT 1 FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.match_id = c.match_id "
            "AND b.account_id = %s))", (match_id, account_id, account_id)).fetchone()
    return row is not None


@dataclass(frozen=True, slots=True)
class WaitingChallenge:
    """A challenge waiting for its bots (or, ``asked``, for its owners' answers): its match, game name
    and bot per seat, and whether its expiry has passed."""

    match_id: int
    game: str
    bot_ids: tuple[int, ...]
    expired: bool
    asked: bool = False


def waiting_challenges(pool: ConnectionPool, *, limit: int = 1000,
                       now: datetime | None = None) -> list[WaitingChallenge]:
    """Challenges still waiting for their bots or their owners' answers, oldest first (index
    ``challenges_waiting``); ``expired`` is judged at ``now`` (timezone-aware; default the database's ``now()``)."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT c.match_id, m.game, array_agg(s.bot_id ORDER BY s.seat), "
            "c.expires_at <= coalesce(%s::timestamptz, now()), c.status = 'asked' "
            "FROM challenges c JOIN matches m ON m.id = c.match_id JOIN seats s ON s.match_id = c.match_id "
            "WHERE c.status IN ('asked', 'waiting') GROUP BY c.match_id, m.game "
            "ORDER BY c.expires_at, c.match_id LIMIT %s",
            (now, limit),
        ).fetchall()
    return [WaitingChallenge(int(m), g, tuple(int(b) for b in bots), bool(exp), bool(asked))
            for m, g, bots, exp, asked in rows]


def start_challenge(pool: ConnectionPool, match_id: int) -> bool:
    """A waiting challenge's bots are connected: its match becomes ``planned`` (a worker may run it).

    Returns:
        True if it was waiting and is now started; False if it had started or
        expired already (safe to call twice, from two schedulers).
    """

    def write(conn: Any) -> bool:
        row = conn.execute(
            "UPDATE challenges SET status = 'started', started_at = now() "
            "WHERE match_id = %s AND status = 'waiting' RETURNING match_id",
            (match_id,),
        ).fetchone()
        if row is None:
            return False
        conn.execute("UPDATE matches SET status = 'planned' WHERE id = %s AND status = 'waiting'", (match_id,))
        return True

    return run_transaction(pool, write)


def expire_challenge(pool: ConnectionPool, match_id: int, reason: str, *, now: datetime | None = None) -> bool:
    """End a waiting (or asked) challenge whose time ran out: match and challenge ``expired``, with
    ``reason``; its expiry is judged at ``now`` (timezone-aware; default the database's ``now()``).

    Returns:
        True if it was waiting or asked past its expiry and is now expired; False otherwise.
    """

    def write(conn: Any) -> bool:
        row = conn.execute(
            "UPDATE challenges SET status = 'expired', reason = %s WHERE match_id = %s "
            "AND status IN ('asked', 'waiting') AND expires_at <= coalesce(%s::timestamptz, now()) "
            "RETURNING match_id",
            (str(reason)[:1000], match_id, now),
        ).fetchone()
        if row is None:
            return False
        conn.execute("UPDATE matches SET status = 'expired' WHERE id = %s AND status = 'waiting'", (match_id,))
        return True

    return run_transaction(pool, write)


def _no_longer_consenting(pool: ConnectionPool, w: WaitingChallenge) -> str:
    """A bot of another account in ``w`` that has since stopped accepting challenges in its game.

    Consent is checked when a challenge is made (the web layer) and again at every tick while it
    asks or waits: an owner who sets the policy ``none``, or drops the game, is never made to play
    the challenges still asking or waiting (the challenger's own bots and bots of no account need
    no consent). Returns ``"bot NAME (id N)"`` or ``""``.
    """
    with connection(pool) as conn:
        row = conn.execute(
            "SELECT b.id, b.name FROM challenges c JOIN bots b ON b.id = ANY(%s::bigint[]) "
            "WHERE c.match_id = %s AND b.account_id IS NOT NULL "
            f"AND b.account_id IS DISTINCT FROM c.challenger_id AND NOT {CONSENTS_SQL} "
            "ORDER BY b.id LIMIT 1",
            (list(w.bot_ids), w.match_id, w.game),
        ).fetchone()
    return "" if row is None else f"bot {row[1]} (id {row[0]})"


def _cancel_challenge(pool: ConnectionPool, match_id: int, reason: str) -> bool:
    """End a waiting or asked challenge at once (match and challenge ``expired``) with ``reason``."""

    def write(conn: Any) -> bool:
        row = conn.execute(
            "UPDATE challenges SET status = 'expired', reason = %s "
            "WHERE match_id = %s AND status IN ('asked', 'waiting') RETURNING match_id",
            (reason[:1000], match_id),
        ).fetchone()
        if row is None:
            return False
        conn.execute("UPDATE matches SET status = 'expired' WHERE id = %s AND status = 'waiting'", (match_id,))
        return True

    return run_transaction(pool, write)


def dispatch_challenges(
    pool: ConnectionPool, online: Callable[[str], set[int] | frozenset[int]] | Mapping[str, set[int]],
    *, now: datetime | None = None,
) -> tuple[list[int], list[int]]:
    """Start the waiting challenges whose bots are all connected; expire those out of time.

    Called by the workers' frequent beat task with who is connected now. A
    challenge whose bots are all connected is started, even when its expiry
    passed since the last tick; one with a bot missing past its expiry is
    expired with the missing bots named in the reason. An ``asked`` challenge
    never starts here (its owners' answers make it ``waiting``); past its expiry
    it is expired with the owners who did not answer named.

    Args:
        pool: ladder connection pool.
        online: game name -> ids of the bots connected to a referee for that
            game (a mapping, or a function of the game name).
        now: the time expiries are judged at (timezone-aware); default the
            database's ``now()``.

    Returns:
        ``(started match ids, expired match ids)``; the caller queues the started ones.
    """
    lookup = online if callable(online) else (lambda game: online.get(game, set()))
    started, expired = [], []
    cache: dict[str, set[int] | frozenset[int]] = {}
    waiting = waiting_challenges(pool, now=now)
    names: dict[int, str] = {}
    if any(w.expired for w in waiting):
        with connection(pool) as conn:
            ids = sorted({b for w in waiting for b in w.bot_ids})
            names = dict(conn.execute("SELECT id, name FROM bots WHERE id = ANY(%s::bigint[])", (ids,)).fetchall())
    for w in waiting:
        refused = _no_longer_consenting(pool, w)
        if refused:
            if _cancel_challenge(pool, w.match_id, f"{refused} no longer accepts challenges in {w.game}"):
                expired.append(w.match_id)
            continue
        if w.asked:
            if w.expired and expire_challenge(pool, w.match_id, _unanswered(challenge_status(pool, w.match_id)),
                                              now=now):
                expired.append(w.match_id)
            continue
        if w.game not in cache:
            cache[w.game] = lookup(w.game)
        missing = [b for b in w.bot_ids if b not in cache[w.game]]
        if not missing:
            if start_challenge(pool, w.match_id):
                started.append(w.match_id)
        elif w.expired:
            info = challenge_status(pool, w.match_id)
            wait_s = (info.expires_at - info.created_at).total_seconds()
            who = ", ".join(f"bot {names.get(b, b)} (id {b})" for b in missing)
            verb = "was" if len(missing) == 1 else "were"
            if expire_challenge(pool, w.match_id, f"{who} {verb} not connected within {_seconds(wait_s)} s",
                                now=now):
                expired.append(w.match_id)
    return started, expired


def _unanswered(info: ChallengeInfo) -> str:
    """Why an asked challenge expired: "the owner of bot moonlit (id 7) did not answer within 300 s"."""
    names = dict(zip(info.bot_ids, info.bot_names, strict=True))
    pending = [f"bot {names[a.bot_id]} (id {a.bot_id})" for a in info.answers if a.answer is None]
    owners = "the owner of" if len(pending) == 1 else "the owners of"
    wait_s = (info.expires_at - info.created_at).total_seconds()
    return f"{owners} {', '.join(pending)} did not answer within {_seconds(wait_s)} s"


def _seconds(value: float) -> str:
    """``300`` for 300.0, ``0.5`` for 0.5: seconds as a person writes them."""
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"
