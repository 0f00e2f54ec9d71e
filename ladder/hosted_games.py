"""A hosted version's validation and regression games, each with its replay (table ``hosted_games``, migration 0018).

The worker keeps every game it plays to validate or regression-test a hosted version as it is played
(``workers.hosting.validation.keep_games``): the game string, the deal's seed, the seat the uploaded
version sat in, the ranks, the fault and the replay, stored as the ladder stores replays
(:func:`ladder.replay_store.pack`). Only the version's owner reads them (``web/submissions.py`` checks
ownership first): ``GET /api/bots/{id}/versions/{n}/games``, the version page and ``parterre bot upload
--wait`` list them and link the replays (docs/hosted.md, "Submitting").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.api import canonical_json
from ladder.db import connection
from ladder.replay_store import pack, unpack

GAME_KINDS = ("validation", "regression")


@dataclass(frozen=True, slots=True)
class HostedGame:
    """One game a worker played for a hosted version (table ``hosted_games``, migration 0018).

    Attributes:
        kind: ``validation`` or ``regression``. n: the game's number within its kind, from 0.
        game: game string. seed: the deal's seed. seat: the uploaded version's seat (from 0).
        ranks: per seat. fault: ``{"side": "a"|"b", "verdict", "detail"?}`` (side ``a`` is the uploaded
            version), or None. has_replay: a replay is stored.
    """

    kind: str
    n: int
    game: str
    seed: str
    seat: int
    ranks: list[int]
    fault: dict[str, Any] | None
    has_replay: bool

    @property
    def rank(self) -> int:
        """The uploaded version's rank."""
        return self.ranks[self.seat]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "game": self.game, "seed": self.seed, "seat": self.seat,
                "rank": self.rank, "ranks": self.ranks, "fault": self.fault, "has_replay": self.has_replay}


def save_game(pool: ConnectionPool, version_id: int, kind: str, n: int, *, game: str, seed: str, seat: int,
              ranks: list[int], fault: dict[str, Any] | None, replay: dict[str, Any] | None) -> None:
    """Keep game ``n`` of ``kind`` of a version, with its replay (stored as the ladder stores replays:
    :func:`ladder.replay_store.pack`); a game played again (a version taken again) replaces it."""
    if kind not in GAME_KINDS:
        raise ValueError(kind)
    fmt, blob = pack(canonical_json(replay)) if replay is not None else (None, None)
    with connection(pool) as conn:
        conn.execute(
            "INSERT INTO hosted_games (version_id, kind, n, game, seed, seat, ranks, fault, replay_format, replay) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (version_id, kind, n) DO UPDATE SET "
            "game = EXCLUDED.game, seed = EXCLUDED.seed, seat = EXCLUDED.seat, ranks = EXCLUDED.ranks, "
            "fault = EXCLUDED.fault, replay_format = EXCLUDED.replay_format, replay = EXCLUDED.replay, "
            "played_at = now()",
            (version_id, kind, n, game, seed, seat, ranks, Jsonb(fault) if fault is not None else None, fmt, blob))


def version_games(pool: ConnectionPool, version_id: int) -> list[HostedGame]:
    """The version's games, validation first, each kind in play order (without the replays; ownership is the
    caller's to check)."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute("SELECT kind, n, game, seed, seat, ranks, fault, replay IS NOT NULL AS has_replay "
                           "FROM hosted_games WHERE version_id = %s ORDER BY kind = 'regression', n",
                           (version_id,)).fetchall()
    return [HostedGame(**r) for r in rows]


def game_replay(pool: ConnectionPool, version_id: int, kind: str, n: int) -> str | None:
    """The replay JSON text of a version's game, or None (no such game, or no replay kept).

    Raises:
        ladder.replay_store.StoredReplayError: a stored row that does not decode.
    """
    with connection(pool) as conn:
        row = conn.execute("SELECT replay_format, replay FROM hosted_games WHERE version_id = %s AND kind = %s "
                           "AND n = %s AND replay IS NOT NULL", (version_id, kind, n)).fetchone()
    return unpack(row[0], bytes(row[1])) if row is not None else None
