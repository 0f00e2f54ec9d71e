"""Shared helpers of the ladder tests (no tests here).

tests/conftest.py builds the ladder fixtures on these helpers: ``games``
(module scope: :func:`fixture_games`; a module asks for it with
``pytestmark = pytest.mark.usefixtures("games")``), ``ladder_db`` (module
scope: :func:`module_database`), ``migrated_url`` (:func:`empty_database`)
and ``pool`` (:func:`open_pool`).

Provides two tiny fixture games so the ladder tests do not depend on the
real rules engines: ``ladder_fixture`` (2-4 players, options ``players`` and
``variant``) and ``ladder_duel`` (exactly 2 seats, no ``players`` option).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

import psycopg

from games import registry
from games.api import Game, GameInfo, OptionSpec, State
from ladder import make_pool, migrate
from ladder.bots import register_bot
from ladder.matches import MatchSpec, claim_match, record_result

GAME = "ladder_fixture"
DUEL = "ladder_duel"


class LadderFixtureGame(Game):
    """A game with 2-4 seats and one extra option; never played (no states)."""

    INFO = GameInfo(
        name=GAME,
        long_name="Ladder fixture",
        min_players=2,
        max_players=4,
        options=(
            OptionSpec("players", int, 2, (2, 3, 4)),
            OptionSpec("variant", str, "a", ("a", "b")),
        ),
        max_game_length=10,
    )

    @property
    def num_players(self) -> int:
        return int(self.options["players"])

    def new_initial_state(self) -> State:
        raise NotImplementedError("fixture game: not playable")


class LadderDuelGame(Game):
    """A 2-seat game without a ``players`` option."""

    INFO = GameInfo(name=DUEL, long_name="Ladder duel", min_players=2, max_players=2, options=(), max_game_length=10)

    @property
    def num_players(self) -> int:
        return 2

    def new_initial_state(self) -> State:
        raise NotImplementedError("fixture game: not playable")


@contextmanager
def fixture_games() -> Iterator[None]:
    """Register the two fixture games for the duration of the block.

    Never at import time: other modules' tests iterate over every registered
    game (conformance, playthroughs) and must not see these unplayable ones.
    """
    registry.register(LadderFixtureGame)
    registry.register(LadderDuelGame)
    try:
        yield
    finally:
        registry.unregister(GAME)
        registry.unregister(DUEL)


def module_database(admin_url: str) -> Iterator[str]:
    """Generator for a module-scoped fixture: one migrated database per test module.

    Creating a database costs ~0.4 s, emptying one ~20 ms, so the ladder tests
    share one database per module and empty it before each test.
    """
    name = f"parterre_ladder_{secrets.token_hex(6)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = urlparse(admin_url)._replace(path="/" + name).geturl()
    migrate(url)
    yield url
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def empty_database(url: str) -> str:
    """Empty every table of a migrated database (all but alembic's version) and restart every
    sequence; returns ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '10s'")
        tables = [r[0] for r in conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename <> 'alembic_version' ORDER BY tablename")]
        conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        for (seq,) in conn.execute("SELECT quote_ident(sequencename) FROM pg_sequences"
                                   " WHERE schemaname = 'public'").fetchall():
            conn.execute(f"ALTER SEQUENCE {seq} RESTART")
    return url


def open_pool(url: str) -> Iterator[Any]:
    """Generator for a fixture: an open pool on ``url``, closed afterwards."""
    p = make_pool(url, max_size=8)
    yield p
    p.close()


def make_bots(pool: Any, n: int, prefix: str = "bot") -> list[int]:
    """Register ``n`` bots named ``prefix-0``...; returns their ids (ascending)."""
    return [register_bot(pool, f"{prefix}-{i}")[0] for i in range(n)]


def replay_text(spec: MatchSpec, ranks: Sequence[int], scores: Sequence[float]) -> str:
    """A small replay in the ``parterre-replay/1`` shape of docs/architecture.md."""
    n = len(spec.seat_bot_ids)
    return json.dumps(
        {
            "format": "parterre-replay/1",
            "match_id": spec.match_id,
            "attempt": spec.attempt,
            "game": spec.game,
            "game_string": spec.game_string,
            "seed_commitment": spec.seed_commitment,
            "seed": spec.seed,
            "players": [
                {"seat": i, "bot_id": b, "name": f"b{b}", "version": "1"} for i, b in enumerate(spec.seat_bot_ids)
            ],
            "time_control": spec.time_control,
            "steps": [
                {"i": i, "player": i % n, "action": {"kind": "pick", "index": i}, "label": f"pick {i}",
                 "time_ms": 3 + i, "fallback": False, "hash": None}
                for i in range(40)
            ],
            "verdicts": ["normal"] * n,
            "outcome": {
                "scores": list(scores), "ranks": list(ranks), "reason": "test", "tie_breaks": [], "details": {}
            },
            "result_ranks": list(ranks),
            "final_hash": "0" * 64,
            "started_at": "2025-01-01T00:00:00+00:00",
            "ended_at": "2025-01-01T00:01:00+00:00",
        },
        sort_keys=True,
    )


def make_result(spec: MatchSpec, ranks: Sequence[int], scores: Sequence[float] | None = None,
                verdicts: Sequence[str] | None = None) -> dict[str, Any]:
    """A referee ``MatchResult`` as a plain dict, ranks per seat."""
    scores = list(scores) if scores is not None else [float(10 * (len(ranks) - r)) for r in ranks]
    verdicts = list(verdicts) if verdicts is not None else ["normal"] * len(ranks)
    return {
        "status": "finished",
        "seats": [
            {"seat": i, "bot_id": b, "rank": r, "score": s, "verdict": v, "time_used_ms": 100 + i, "decisions": 20}
            for i, (b, r, s, v) in enumerate(zip(spec.seat_bot_ids, ranks, scores, verdicts, strict=True))
        ],
        "replay_json": replay_text(spec, ranks, scores),
    }


def play(pool: Any, match_id: int, ranks: Sequence[int], worker: str = "w1") -> MatchSpec:
    """Claim a match and record a result with ``ranks`` (per seat)."""
    spec = claim_match(pool, match_id, worker)
    assert spec is not None
    assert record_result(pool, match_id, spec.attempt, make_result(spec, ranks))
    return spec


def count(pool: Any, sql: str, params: Sequence[Any] = ()) -> int:
    """First column of the first row of ``sql`` as an int."""
    with pool.connection() as conn:
        return int(conn.execute(sql, params).fetchone()[0])
