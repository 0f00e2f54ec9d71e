"""Fair play: which matches are rated, whoever asked for a rated one (docs/participants.md "Fair play").

Four rules, each with its reason stored in ``matches.unrated_reason`` (migration 0010) when it
turns a rated match into a casual one:

* **Seats of one account are never rated against each other**, whatever planned the match (the
  continuous ladder, a challenge, a tournament, an operator's tool). Enforced where every Elo
  update is applied (:func:`ladder.rating_order.apply_ready` calls :func:`unrate_same_account`
  before it applies anything), so no path around it exists: a finished match whose seats share
  an account is recorded and replayable, and changes no rating. :func:`ladder.matches.record_result`
  calls it too, before the match is marked finished, so the leaderboard's per-player-count figures
  (``bot_player_stats``, rated matches only) leave it out as well. The continuous ladder does not
  pair such bots at all (:func:`ladder.ladder_rounds.plan_ladder_round`).
* **At most** :data:`MAX_RATED_PER_ACCOUNT_PAIR` **rated challenges per pair of accounts per
  day** (:data:`ACCOUNT_PAIR_WINDOW_S`): a second account's bot resigning at once handed its
  opponent +56 Elo in four rated challenges. Beyond the cap a rated challenge is created casual
  and says why (:func:`challenge_unrated_reason`).
* **A rated challenge is rated only between bots at most** :data:`MAX_RATED_GAP` **Elo apart**
  in its game: beyond that gap the stronger bot gains almost nothing and the weaker one's loss
  is the whole point of the match. The continuous ladder never pairs bots further apart than
  that either (:func:`ladder.ladder_rounds.plan_ladder_round`).
* **At most** :data:`MAX_RATED_PER_ACCOUNT_PAIR_DAY` **rated matches per pair of accounts per
  game per day**, ladder and challenges together (matches without a tournament or competition; an
  organiser's tournament stays rated: its seating is the organiser's responsibility, and a
  competition's matchmaking chooses its tables, not the entrants: docs/competitions.md). The continuous ladder
  stops pairing two accounts that reached it (:func:`ladder_pair_counts`), and the rating gate
  (:func:`unrate_farmed_pairs`, called by :func:`ladder.rating_order.apply_ready`) makes casual
  a finished two-seat match between accounts that already have that many rated results in the
  game within :data:`ACCOUNT_PAIR_WINDOW_S`, whatever planned it: two accounts' bots online on a
  quiet ladder were paired and rated 47 times in ten minutes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from ladder import elo

MAX_RATED_PER_ACCOUNT_PAIR = 3
"""Most rated challenges seating bots of the same two accounts that are counted in
:data:`ACCOUNT_PAIR_WINDOW_S` (waiting, planned, running or finished ones; expired, failed and
no-show ones do not count); the next ones are played casual."""

ACCOUNT_PAIR_WINDOW_S = 24 * 3600
"""The window of :data:`MAX_RATED_PER_ACCOUNT_PAIR`, in seconds (a day, sliding)."""

MAX_RATED_GAP = 400.0
"""Largest Elo gap between two seats of a rated challenge (the stronger is then expected to
score about 0.91); a wider gap makes the challenge casual."""

MAX_RATED_PER_ACCOUNT_PAIR_DAY = 20
"""Most rated matches without a tournament or competition (continuous ladder and challenges together) between
bots of the same two accounts in one game in :data:`ACCOUNT_PAIR_WINDOW_S`. Twenty keeps a thin
but honest ladder playing (two accounts alone online still meet twenty times a day) while
bounding what a colluding pair can move a rating by; once reached the ladder pairs others or no
one, and the rating gate makes any further such match casual."""

PAIR_CAP_REASON = ("accounts {a} and {b} have had {n} rated matches in {game} in the last 24 hours; at most "
                   f"{MAX_RATED_PER_ACCOUNT_PAIR_DAY} ladder matches and challenges between two accounts are "
                   "rated per day, so this one is casual")
"""``matches.unrated_reason`` of a match made casual by the daily cap per pair of accounts."""

SAME_ACCOUNT_REASON = "seats of one account ({bots}) are never rated against each other"
"""``matches.unrated_reason`` of a match whose seats share an account."""

_COUNTED_STATUSES = ["waiting", "planned", "running", "finished"]

_PAIR_COUNT_SQL = (
    "SELECT x.account_id, y.account_id, count(DISTINCT m.id) FROM bots x "
    "JOIN seats s ON s.bot_id = x.id JOIN matches m ON m.id = s.match_id "
    "JOIN seats t ON t.match_id = m.id JOIN bots y ON y.id = t.bot_id "
    "WHERE x.account_id = ANY(%(accounts)s::bigint[]) AND y.account_id = ANY(%(accounts)s::bigint[]) "
    "AND x.account_id < y.account_id AND m.game = %(game)s AND m.rated AND m.tournament_id IS NULL "
    "AND m.competition_id IS NULL AND {when} "
    "GROUP BY x.account_id, y.account_id"
)
"""Rated matches without a tournament or competition seating two of ``accounts``, per pair: from the accounts'
bots (``bots_by_account``) through their seats (``seats_by_bot``) to the match (its key)."""


def unrate_same_account(conn: Any, match_ids: Sequence[int]) -> set[int]:
    """Make casual every match of ``match_ids`` with two seats of one account; returns their ids.

    Call inside the transaction that applies rating updates, before applying them (the rating
    rows are untouched; ``matches.rated`` and ``challenges.rated`` become false and
    ``matches.unrated_reason`` says which bots share an account).

    Args:
        conn: an open connection inside a transaction.
        match_ids: matches about to be rated.
    """
    if not match_ids:
        return set()
    rows = conn.execute(
        "SELECT s.match_id, string_agg(b.name || ' (id ' || b.id || ')', ', ' ORDER BY s.seat) FROM seats s "
        "JOIN bots b ON b.id = s.bot_id WHERE s.match_id = ANY(%s::bigint[]) AND b.account_id IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM seats t JOIN bots c ON c.id = t.bot_id WHERE t.match_id = s.match_id "
        "AND t.bot_id <> s.bot_id AND c.account_id = b.account_id) GROUP BY s.match_id",
        (list(match_ids),),
    ).fetchall()
    reasons = {int(mid): SAME_ACCOUNT_REASON.format(bots=names) for mid, names in rows}
    for mid, why in reasons.items():
        conn.execute("UPDATE matches SET rated = false, unrated_reason = %s WHERE id = %s", (why, mid))
        conn.execute("UPDATE challenges SET rated = false WHERE match_id = %s", (mid,))
    return set(reasons)


def challenge_unrated_reason(conn: Any, game: str, bot_ids: Sequence[int]) -> str | None:
    """Why a rated challenge between ``bot_ids`` in ``game`` must be played casual, or ``None``.

    Takes a transaction-scoped advisory lock per account seated (in id order), so parallel
    challenges between the same accounts are counted one after the other: exactly
    :data:`MAX_RATED_PER_ACCOUNT_PAIR` of a burst are rated. Call inside the transaction that
    writes the challenge, before any row lock.

    Args:
        conn: an open connection inside a transaction.
        game: registry name (ratings are per game).
        bot_ids: bot per seat (distinct, existing).

    Returns:
        The reason in words (stored in ``matches.unrated_reason``), or ``None``: it is rated.
    """
    seats = conn.execute(
        "SELECT b.id, b.account_id, coalesce(r.elo, %s) FROM bots b "
        "LEFT JOIN ratings r ON r.bot_id = b.id AND r.game = %s WHERE b.id = ANY(%s::bigint[]) ORDER BY b.id",
        (elo.INITIAL_RATING, game, list(bot_ids)),
    ).fetchall()
    accounts = sorted({int(a) for _, a, _ in seats if a is not None})
    for account in accounts:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"parterre:fair-play:{account}",))
    for a, b in combinations(accounts, 2):
        (n,) = conn.execute(
            "SELECT count(*) FROM challenges c JOIN matches m ON m.id = c.match_id "
            "WHERE m.rated AND m.status = ANY(%s) AND c.created_at > now() - make_interval(secs => %s) "
            "AND EXISTS (SELECT 1 FROM seats s JOIN bots x ON x.id = s.bot_id WHERE s.match_id = m.id "
            "AND x.account_id = %s) "
            "AND EXISTS (SELECT 1 FROM seats s JOIN bots x ON x.id = s.bot_id WHERE s.match_id = m.id "
            "AND x.account_id = %s)",
            (_COUNTED_STATUSES, ACCOUNT_PAIR_WINDOW_S, a, b),
        ).fetchone()
        if n >= MAX_RATED_PER_ACCOUNT_PAIR:
            return (f"accounts {a} and {b} have had {n} rated challenges in the last 24 hours; at most "
                    f"{MAX_RATED_PER_ACCOUNT_PAIR} are rated, so this one is casual")
    ratings = [float(r) for _, _, r in seats]
    if ratings and max(ratings) - min(ratings) > MAX_RATED_GAP:
        return (f"the seats' ratings in {game} are {max(ratings) - min(ratings):.0f} Elo apart; a challenge is "
                f"rated only within {MAX_RATED_GAP:.0f}, so this one is casual")
    return None


def ladder_pair_counts(conn: Any, game: str, accounts: Iterable[int]) -> dict[frozenset[int], int]:
    """Rated matches without a tournament or competition in ``game`` per pair of ``accounts`` in the last 24 hours.

    Counts matches waiting, planned, running or finished (made within :data:`ACCOUNT_PAIR_WINDOW_S`),
    so matches the ladder has planned but not played yet count as well.

    Args:
        conn: an open connection.
        game: registry name.
        accounts: account ids (bots without an account have none and are never counted).

    Returns:
        ``frozenset({a, b})`` -> count, for pairs with at least one such match.
    """
    ids = sorted({int(a) for a in accounts})
    if len(ids) < 2:
        return {}
    rows = conn.execute(
        _PAIR_COUNT_SQL.format(when="m.status = ANY(%(statuses)s) "
                                    "AND m.created_at > now() - make_interval(secs => %(window)s)"),
        {"accounts": ids, "game": game, "statuses": _COUNTED_STATUSES, "window": ACCOUNT_PAIR_WINDOW_S},
    ).fetchall()
    return {frozenset((int(a), int(b))): int(n) for a, b, n in rows}


def unrate_farmed_pairs(conn: Any, game: str, match_ids: Sequence[int]) -> set[int]:
    """Make casual each two-seat match of ``match_ids`` past the daily cap per pair of accounts; their ids.

    A finished, not yet applied, rated match of ``game`` without a tournament or competition whose two seats belong
    to two accounts is made casual (``matches.rated`` and ``challenges.rated`` false,
    ``matches.unrated_reason`` :data:`PAIR_CAP_REASON`) when those accounts already have
    :data:`MAX_RATED_PER_ACCOUNT_PAIR_DAY` rated results in ``game`` applied within
    :data:`ACCOUNT_PAIR_WINDOW_S`, counting the earlier of ``match_ids`` that stay rated (in id order,
    the order their updates are applied). Call inside the transaction that applies rating updates,
    after :func:`ladder.rating_order.lock_game` (so two results are counted one after the other).

    Args:
        conn: an open connection inside a transaction holding ``game``'s rating lock.
        game: registry name.
        match_ids: matches of ``game`` about to be rated.
    """
    if not match_ids:
        return set()
    rows = conn.execute(
        "SELECT m.id, array_agg(b.account_id ORDER BY s.seat) FROM matches m JOIN seats s ON s.match_id = m.id "
        "JOIN bots b ON b.id = s.bot_id WHERE m.id = ANY(%s::bigint[]) AND m.tournament_id IS NULL "
        "AND m.competition_id IS NULL "
        "GROUP BY m.id ORDER BY m.id",
        (list(match_ids),),
    ).fetchall()
    pairs = {int(mid): frozenset(int(a) for a in owners) for mid, owners in rows
             if len(owners) == 2 and None not in owners and owners[0] != owners[1]}
    if not pairs:
        return set()
    accounts = sorted(set().union(*pairs.values()))
    counts = {frozenset((int(a), int(b))): int(n) for a, b, n in conn.execute(
        _PAIR_COUNT_SQL.format(when="m.rating_seq IS NOT NULL "
                                    "AND m.finished_at > now() - make_interval(secs => %(window)s)"),
        {"accounts": accounts, "game": game, "window": ACCOUNT_PAIR_WINDOW_S},
    ).fetchall()}
    casual = set()
    for mid, pair in sorted(pairs.items()):
        n = counts.get(pair, 0)
        if n < MAX_RATED_PER_ACCOUNT_PAIR_DAY:
            counts[pair] = n + 1
            continue
        a, b = sorted(pair)
        why = PAIR_CAP_REASON.format(a=a, b=b, n=n, game=game)
        conn.execute("UPDATE matches SET rated = false, unrated_reason = %s WHERE id = %s", (why, mid))
        conn.execute("UPDATE challenges SET rated = false WHERE match_id = %s", (mid,))
        casual.add(mid)
    return casual
