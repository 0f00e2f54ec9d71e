"""Finding a bot to challenge by its name: live bots, their owner, ratings and challenge policy.

The challenge picker of the web site (``/my/challenge``) and ``GET /api/bots/search`` list what
:func:`search_bots` finds (docs/participants.md "Challenges").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ladder.db import connection

MAX_QUERY = 64
"""Longest search text (a bot name is at most 64 characters)."""

MAX_RESULTS = 50
"""Most bots one search returns."""


@dataclass(frozen=True, slots=True)
class FoundBot:
    """A live bot as a challenger sees it.

    Attributes:
        owner: the owning account's username; None for a bot of no account (the house's, the operator's).
        house: a house bot (always accepts challenges).
        games: games it plays (empty = any; a house bot's, the games the house plays it in).
        challenge_policy: ``accept``, ``ask`` or ``none`` (``accept`` for a house bot).
        challenge_games: games it may be challenged in (None = all of ``games``).
        ratings: game -> (Elo, rated games played) for each game it has a rating in.
    """

    id: int
    name: str
    account_id: int | None
    owner: str | None
    house: bool
    games: tuple[str, ...]
    challenge_policy: str
    challenge_games: tuple[str, ...] | None
    ratings: dict[str, tuple[float, int]]

    def challengeable(self, game: str) -> bool:
        """True when another account may challenge it in ``game`` (its policy ``accept`` or ``ask``, the game
        one of its challenge games; a house bot in any game it plays)."""
        if game not in self.games and self.games:
            return False
        if self.house:
            return True
        allowed = self.challenge_games if self.challenge_games is not None else self.games
        return self.challenge_policy != "none" and (not allowed or game in allowed)


_SELECT = """
    SELECT b.id, b.name, b.account_id, a.username AS owner, b.house, coalesce(h.games, b.games) AS games,
           b.challenge_policy, b.challenge_games,
           coalesce((SELECT json_object_agg(r.game, json_build_array(r.elo, r.games)) FROM ratings r
                     WHERE r.bot_id = b.id), '{}'::json) AS ratings
    FROM bots b LEFT JOIN accounts a ON a.id = b.account_id LEFT JOIN house_bots h ON h.bot_id = b.id
    WHERE b.revoked_at IS NULL AND (b.account_id IS NULL OR a.status = 'active')
"""
"""The live bots of active accounts or of none, as :func:`_found` reads them (a house bot's games are
those it plays, ``house_bots.games``)."""


def _found(r: dict[str, Any]) -> FoundBot:
    return FoundBot(
        id=int(r["id"]), name=r["name"], account_id=r["account_id"], owner=r["owner"], house=bool(r["house"]),
        games=tuple(r["games"]), challenge_policy="accept" if r["house"] else r["challenge_policy"],
        challenge_games=None if r["challenge_games"] is None else tuple(r["challenge_games"]),
        ratings={g: (float(v[0]), int(v[1])) for g, v in r["ratings"].items()},
    )


def _like_pattern(text: str) -> str:
    """``%text%`` for ILIKE, with ``%``, ``_`` and ``\\`` of ``text`` matched as themselves."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search_bots(pool: ConnectionPool, query: str, *, game: str | None = None,
                limit: int = 20) -> list[FoundBot]:
    """Live bots whose name contains ``query`` (ignoring case), of active accounts or of none.

    Args:
        pool: ladder connection pool.
        query: part of the name, at most :data:`MAX_QUERY` characters; blank lists every live bot.
        game: only bots that play this game (registered for it, or for any game); the order is then by
            the rating in it.
        limit: most bots, 1 to :data:`MAX_RESULTS`.

    Returns:
        The exact name first, then names that start with ``query``, then the others; within each, the
        highest rating in ``game`` first (unrated last), then by name.

    Raises:
        ValueError: ``query`` too long or ``limit`` out of range.
    """
    text = query.strip()
    if len(text) > MAX_QUERY:
        raise ValueError(f"a search is at most {MAX_QUERY} characters")
    if not 1 <= limit <= MAX_RESULTS:
        raise ValueError(f"limit must be in 1..{MAX_RESULTS}, got {limit}")
    sql = _SELECT + """
          AND b.name ILIKE %(like)s
          AND (%(game)s::text IS NULL OR cardinality(coalesce(h.games, b.games)) = 0
               OR %(game)s = ANY(coalesce(h.games, b.games)))
        ORDER BY lower(b.name) = lower(%(text)s) DESC, b.name ILIKE %(prefix)s DESC,
                 (SELECT r.elo FROM ratings r WHERE r.bot_id = b.id AND r.game = %(game)s) DESC NULLS LAST,
                 b.name, b.id
        LIMIT %(limit)s
    """
    params = {"like": _like_pattern(text), "prefix": _like_pattern(text)[1:], "text": text, "game": game,
              "limit": limit}
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, params).fetchall()
    return [_found(r) for r in rows]


def found_bots(pool: ConnectionPool, ids: Sequence[int]) -> list[FoundBot]:
    """The live bots among ``ids``, in the order of ``ids`` (the opponents picked so far)."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_SELECT + " AND b.id = ANY(%s::bigint[])", (list(ids),)).fetchall()
    by_id = {int(r["id"]): _found(r) for r in rows}
    return [by_id[i] for i in ids if i in by_id]
