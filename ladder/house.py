"""House bots: the bots the service itself keeps connected, for challenges and gauntlets.

A house bot is an ordinary bot (its ratings, matches and pages are like any
other's) named ``house-<kind>`` (``house-random``, ``house-greedy``), marked by
the flag ``bots.house`` (set here only, never by a name: migration 0010), with a
``house_bots`` row giving its kind and the games it plays. No other bot's name
reads as starting with ``house-`` (its skeleton, ``bot_name_skeleton``, starts
with ``house``: ``housegreedy``, ``h0use-greedy``; the database refuses it,
migration 0012), and a bot that holds the name of a house bot without the flag
is never adopted. The process that
keeps them connected (``parterre house``, started by ``parterre up`` and
``parterre demo``) calls :func:`ensure_house_bot` at start: it registers a
missing house bot, or rotates the token of an existing one (the process has
database access, so no token is ever stored anywhere), and records its games.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg_pool import ConnectionPool

from ladder.bots import HOUSE_PREFIX, TOKENS_KEY, issue_token, register_bot
from ladder.db import connection
from ladder.errors import BotExistsError, BotRevokedError, InvalidBotNameError

HOUSE_OWNER = "house"
"""``bots.owner`` of the house bots."""


@dataclass(frozen=True, slots=True)
class HouseBot:
    """A house bot: its id, name (``house-<kind>``), kind and the games it plays."""

    bot_id: int
    name: str
    kind: str
    games: tuple[str, ...]


def house_name(kind: str) -> str:
    """``house-<kind>``."""
    return f"{HOUSE_PREFIX}{kind}"


def ensure_house_bot(
    pool: ConnectionPool, kind: str, games: Sequence[str], *, version: str = "1", redis: Any = None,
    key: str = TOKENS_KEY,
) -> tuple[int, str]:
    """Register the house bot of ``kind``, or give the existing one a new token; record its games.

    The old token (if any) stops working at once (see :func:`ladder.bots.issue_token`);
    the bot keeps its id, ratings and history.

    Args:
        pool: ladder connection pool.
        kind: e.g. ``"random"``, ``"greedy"`` (lower-case letters, digits and ``-``).
        games: registry names of the games it plays (non-empty).
        version: version label for a new registration.
        redis: a redis-py client: the token hash is published at once.
        key: Redis hash of live tokens.

    Returns:
        ``(bot_id, token)``.

    Raises:
        InvalidBotNameError: a bad kind; no games.
        BotRevokedError: the house bot was revoked (an operator decision; un-revoke it by hand).
        BotExistsError: a bot that is not a house bot (``bots.house`` false) holds the name, or one
            equal to it under ``bot_name_key``: it is never adopted (an operator renames or retires it).
    """
    if not kind or not all(c.islower() or c.isdigit() or c == "-" for c in kind):
        raise InvalidBotNameError(f"house bot kind {kind!r}: lower-case letters, digits and '-' only")
    if not games:
        raise InvalidBotNameError(f"house bot {kind!r} plays no game")
    name = house_name(kind)
    with connection(pool) as conn:
        row = conn.execute("SELECT id, house, revoked_at FROM bots WHERE bot_name_key(name) = bot_name_key(%s) "
                           "ORDER BY NOT house, id LIMIT 1", (name,)).fetchone()
    if row is None:
        bot_id, token = register_bot(pool, name, version=version, owner=HOUSE_OWNER, redis=redis, key=key,
                                     house=True)
    else:
        bot_id, house, revoked_at = int(row[0]), bool(row[1]), row[2]
        if not house:
            raise BotExistsError(f"bot id {bot_id} holds the name {name!r} but is not a house bot; "
                                 "it is not adopted: rename or retire it")
        if revoked_at is not None:
            raise BotRevokedError(f"house bot {name} (id {bot_id}) is revoked")
        token = issue_token(pool, bot_id, redis=redis, key=key)
    with connection(pool) as conn:
        conn.execute(
            "INSERT INTO house_bots (bot_id, kind, games) VALUES (%s, %s, %s) "
            "ON CONFLICT (bot_id) DO UPDATE SET games = EXCLUDED.games",
            (bot_id, kind, sorted(set(games))),
        )
    return bot_id, token


def list_house_bots(pool: ConnectionPool, *, game: str | None = None) -> list[HouseBot]:
    """The live house bots, by kind; only those playing ``game`` when given."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT h.bot_id, b.name, h.kind, h.games FROM house_bots h JOIN bots b ON b.id = h.bot_id "
            "WHERE b.house AND b.revoked_at IS NULL AND (%s::text IS NULL OR %s = ANY(h.games)) ORDER BY h.kind",
            (game, game),
        ).fetchall()
    return [HouseBot(int(b), n, k, tuple(g)) for b, n, k, g in rows]


def house_bot_ids(pool: ConnectionPool) -> set[int]:
    """Ids of every house bot (``bots.house``; revoked ones included), to mark them in listings."""
    with connection(pool) as conn:
        return {int(r[0]) for r in conn.execute("SELECT id FROM bots WHERE house").fetchall()}
