"""What every page of the read model shares: games, the "not found" error, replay decoding."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from games import registry
from games.api import GameError
from ladder import replay_store
from ladder.db import connection


class NotFound(LookupError):
    """The requested bot, tournament, match, game or page does not exist."""


def game_info(name: str) -> tuple[str, int, int, bool]:
    """(long_name, min_players, max_players, registered) of a game name."""
    try:
        info = registry.game_class(name).INFO
    except GameError:  # not registered; a registered game whose module fails to import raises
        return name, 1, 8, False
    return info.long_name, info.min_players, info.max_players, True


def player_counts(name: str) -> list[int]:
    """Player counts the leaderboard filter offers for a game (its rulebook range)."""
    _, lo, hi, _ = game_info(name)
    return list(range(lo, hi + 1))


def known_games(pool: ConnectionPool) -> list[str]:
    """Registered games plus any game that has ratings in the database, sorted."""
    with connection(pool) as conn:
        rows = conn.execute(
            "WITH RECURSIVE g AS ("
            " (SELECT game FROM ratings ORDER BY game LIMIT 1)"
            " UNION ALL SELECT (SELECT r.game FROM ratings r WHERE r.game > g.game ORDER BY r.game LIMIT 1)"
            " FROM g WHERE g.game IS NOT NULL) SELECT game FROM g WHERE game IS NOT NULL"
        ).fetchall()
    return sorted(set(registry.game_names()) | {r[0] for r in rows})


def game_exists(pool: ConnectionPool, name: str) -> bool:
    """True when ``name`` is a registered game or has ratings in the database."""
    if name in registry.game_names():
        return True
    with connection(pool) as conn:
        return conn.execute("SELECT 1 FROM ratings WHERE game = %s LIMIT 1", (name,)).fetchone() is not None


def decompress_replay(data: bytes, fmt: str | None = None) -> str:
    """The replay JSON text of a stored row (``replays.data``, ``replays.format``).

    A compact row (``parterre-replay-compact/1``) is re-simulated into the
    text it was made from; any other row holds zstd of the UTF-8 JSON text.
    See :mod:`ladder.replay_store`.

    Raises:
        ladder.replay_store.StoredReplayError: a compact row that does not decode or verify.
    """
    return replay_store.unpack(fmt, data)
