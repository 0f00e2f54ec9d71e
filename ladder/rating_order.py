"""Elo updates applied in plan order, whatever order matches finish in (docs/faults.md F-26).

Online Elo depends on the order of the results. Matches that run at once on
several worker slots finish in an order nobody chose (one bot thinks longer,
a slot is slower, an attempt is retried), so applying each result when it is
recorded made two runs of the same tournament publish different ratings (up
to 8.4 Elo apart for 48 results). The rule here:

    **Each bot's rated results are applied in plan order** (the order of
    match ids: a tournament's plan order, the ladder's rounds in order): a
    finished match's Elo update is *held* while an earlier match (smaller
    id) of the same game that seats one of its bots is still ``planned`` or
    ``running``, or is itself held; it is applied as soon as those have ended.

Updates of matches with no bot in common touch different rating rows and
commute exactly, so every order of completion yields the numbers of applying
all results one by one in match-id order: the published ratings depend only
on the results, never on the timing. A match that ends without a result
(``failed``, ``aborted_no_show``) releases what it held. Casual matches are
never rated and never hold anything; a challenge's match waiting for its bots
(``waiting``) holds nothing until it is started.

``matches.rating_seq`` records when each update was applied (a value of
``match_result_seq``) and ``ratings rebuild`` replays that order
(:func:`ladder.ratings.rebuild_ratings`), so live ratings and a rebuild agree
bit for bit. Every transaction that applies updates or ends a rated match
takes the game's advisory lock (:func:`lock_game`) before looking at what is
pending, so two results recorded at once cannot both miss that the other
made a held match ready. Lock order: the match row, then the game's
advisory lock, then the rating rows in bot-id order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ladder import elo, fair_play

PENDING_STATUSES = ("planned", "running")
"""Statuses of a rated match that hold the later results of its bots."""


def lock_game(conn: Any, game: str) -> None:
    """Take the transaction-scoped advisory lock of ``game``'s ratings (released at commit)."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"parterre:ratings:{game}",))


def apply_ready(conn: Any, game: str, k: float = elo.DEFAULT_K) -> list[int]:
    """Apply every held result of ``game`` that no earlier pending match of its bots holds back.

    Call inside the transaction that records a result or ends a rated match
    for good, after the match row has its new status. Takes the game's lock.
    A held match whose seats share an account is made casual instead
    (:func:`ladder.fair_play.unrate_same_account`), and so is a two-seat match
    without a tournament between two accounts past their daily cap
    (:func:`ladder.fair_play.unrate_farmed_pairs`): this is the only place Elo
    updates are applied, so no planner can get such a match rated.

    Args:
        conn: an open connection inside a transaction.
        game: registry name.
        k: Elo K-factor.

    Returns:
        Ids of the matches whose Elo updates were applied, in the order applied.
    """
    lock_game(conn, game)
    held = [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM matches WHERE game = %s AND status = 'finished' AND rated AND rating_seq IS NULL "
            "ORDER BY id",
            (game,),
        ).fetchall()
    ]
    if not held:
        return []
    casual = fair_play.unrate_same_account(conn, held)  # the one gate every Elo update passes
    held = [mid for mid in held if mid not in casual]
    casual = fair_play.unrate_farmed_pairs(conn, game, held)
    held = [mid for mid in held if mid not in casual]
    if not held:
        return []
    waiting = {
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT c.match_id FROM matches m JOIN seats e ON e.match_id = m.id "
            "JOIN seats c ON c.bot_id = e.bot_id AND c.match_id > m.id "
            "WHERE m.status = ANY(%s::text[]) AND m.game = %s AND m.rated AND c.match_id = ANY(%s::bigint[])",
            (list(PENDING_STATUSES), game, held),
        ).fetchall()
    }
    seats: dict[int, list[tuple[int, int, float | None]]] = {mid: [] for mid in held}
    for mid, bot_id, rank, score in conn.execute(
        "SELECT match_id, bot_id, rank, score FROM seats WHERE match_id = ANY(%s::bigint[]) ORDER BY match_id, seat",
        (held,),
    ).fetchall():
        seats[int(mid)].append((int(bot_id), int(rank), score))
    blocked: set[int] = set()
    applied = []
    for mid in held:
        bots = {b for b, _, _ in seats[mid]}
        if mid in waiting or bots & blocked:
            blocked |= bots  # a later match of these bots must wait for this one
            continue
        _apply(conn, mid, game, seats[mid], k)
        applied.append(mid)
    return applied


def release_games(conn: Any, games: Iterable[str], k: float = elo.DEFAULT_K) -> list[int]:
    """:func:`apply_ready` for each game (sorted, so locks are taken in one order); ids applied."""
    out: list[int] = []
    for game in sorted(set(games)):
        out += apply_ready(conn, game, k)
    return out


def _apply(conn: Any, match_id: int, game: str, seats: list[tuple[int, int, float | None]], k: float) -> int:
    """Lock the rating rows in bot-id order, apply pairwise Elo, write the history; returns rating_seq.

    ``last_played`` is the match's ``finished_at`` (not the time a held update is applied), as in a rebuild.
    """
    bot_ids = sorted(b for b, _, _ in seats)
    conn.execute(
        "INSERT INTO ratings (bot_id, game, elo) SELECT b, %s, %s FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(b, o) "
        "ORDER BY o ON CONFLICT (bot_id, game) DO NOTHING",
        (game, elo.INITIAL_RATING, bot_ids),
    )
    current = dict(
        conn.execute(
            "SELECT bot_id, elo FROM ratings WHERE game = %s AND bot_id = ANY(%s::bigint[]) ORDER BY bot_id FOR UPDATE",
            (game, bot_ids),
        ).fetchall()
    )
    seq = int(conn.execute("SELECT nextval('match_result_seq')").fetchone()[0])
    before = [current[b] for b, _, _ in seats]
    ranks = [r for _, r, _ in seats]
    deltas = elo.pairwise_deltas(before, ranks, k)
    outcomes = elo.seat_outcomes(ranks)
    conn.cursor().executemany(
        "UPDATE ratings SET elo = %s, games = games + 1, wins = wins + %s, draws = draws + %s, "
        "losses = losses + %s, score_sum = score_sum + %s, "
        "last_played = greatest(last_played, (SELECT finished_at FROM matches WHERE id = %s)) "
        "WHERE bot_id = %s AND game = %s",
        [
            (b + d, int(o == "win"), int(o == "draw"), int(o == "loss"), score or 0.0, match_id, bot_id, game)
            for (bot_id, _, score), b, d, o in zip(seats, before, deltas, outcomes, strict=True)
        ],
    )
    conn.cursor().executemany(
        "INSERT INTO rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        [
            (match_id, bot_id, game, seq, b, b + d, d)
            for (bot_id, _, _), b, d in zip(seats, before, deltas, strict=True)
        ],
    )
    conn.execute("UPDATE matches SET rating_seq = %s WHERE id = %s", (seq, match_id))
    return seq
