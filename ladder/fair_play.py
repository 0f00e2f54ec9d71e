"""Fair play: which matches are rated, whoever asked for a rated one (docs/participants.md "Fair play").

Three rules, each with its reason stored in ``matches.unrated_reason`` (migration 0010) when it
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
  is the whole point of the match.
"""

from __future__ import annotations

from collections.abc import Sequence
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

SAME_ACCOUNT_REASON = "seats of one account ({bots}) are never rated against each other"
"""``matches.unrated_reason`` of a match whose seats share an account."""

_COUNTED_STATUSES = ["waiting", "planned", "running", "finished"]


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
