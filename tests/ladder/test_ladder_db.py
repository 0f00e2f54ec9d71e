"""Connections and migrations (ladder.db)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from ladder.db import (
    alembic_config,
    current_revision,
    head_revision,
    make_pool,
    migrate,
    redact_url,
    sqlalchemy_url,
)
from ladder.errors import DatabaseUnavailableError

ROOT = Path(__file__).resolve().parents[2]

TABLES = {
    "alembic_version", "bots", "tournaments", "tournament_bots", "matches", "match_attempts",
    "seats", "replays", "ratings", "rating_history",
    "bot_player_stats",  # 0002: per player-count aggregates for the web leaderboard
    "ratings_bt", "ratings_bt_fits",  # 0003: cached Bradley-Terry fits
    "accounts", "api_tokens", "auth_events",  # 0004: participants
    "challenges", "house_bots",  # 0005: challenges and house bots
    "hosted_versions", "hosted_settings",  # 0006: hosted bots
    "hosted_match_logs",  # 0007: hosted bots in rated matches
    "competitions", "competition_entrants", "competition_evaluations", "competition_final_rows",
    "competition_events",  # 0013: competitions
    "league_promotions",  # 0014: leagues
    "seat_debug",  # 0015: bots' debug text per decision, apart from the replay
    "bot_head_to_head",  # 0017: the bot page's head-to-head, one row per opponent
}


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def test_migrate_from_empty_to_head_and_again(database_url: str) -> None:
    assert current_revision(database_url) is None
    assert _tables(database_url) == set()
    assert migrate(database_url) == head_revision()
    assert current_revision(database_url) == head_revision()
    assert _tables(database_url) == TABLES
    assert migrate(database_url) == head_revision()  # idempotent
    assert _tables(database_url) == TABLES
    with psycopg.connect(database_url) as conn:
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
    assert {"ratings_leaderboard", "matches_game_finished", "seats_by_bot", "matches_tournament_plan_key"} <= indexes


def test_migrate_from_another_working_directory(database_url: str, tmp_path: Path) -> None:
    code = "import sys; from ladder.db import migrate; print(migrate(sys.argv[1]))"
    out = subprocess.run(
        [sys.executable, "-c", code, database_url], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == head_revision()


def test_two_processes_migrate_at_once(database_url: str) -> None:
    code = "import sys; from ladder.db import migrate; print(migrate(sys.argv[1]))"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, database_url], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ROOT)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert [o[0].strip() for o in outs] == [head_revision()] * 2
    assert current_revision(database_url) == head_revision()


def test_two_threads_migrate_at_once(database_url: str) -> None:
    results: list[object] = []
    barrier = threading.Barrier(2)

    def run() -> None:
        barrier.wait()
        try:
            results.append(migrate(database_url))
        except Exception as exc:  # pragma: no cover - reported below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [head_revision()] * 2


def test_downgrade_to_base_with_plain_alembic_config(database_url: str) -> None:
    from alembic import command

    migrate(database_url)
    command.downgrade(alembic_config(database_url), "base")
    assert current_revision(database_url) is None
    assert _tables(database_url) == {"alembic_version"}
    migrate(database_url)
    assert _tables(database_url) == TABLES


def test_unreachable_server_gives_a_clear_error_without_the_password() -> None:
    url = "postgresql://alice:s3cret@127.0.0.1:1/parterre"
    with pytest.raises(DatabaseUnavailableError) as err:
        make_pool(url, timeout_s=2)
    message = str(err.value)
    assert "127.0.0.1:1" in message
    assert "s3cret" not in message
    assert isinstance(err.value, ConnectionError)
    for call in (migrate, current_revision):
        with pytest.raises(DatabaseUnavailableError) as err:
            call(url)
        assert "s3cret" not in str(err.value)


def test_pool_connections_autocommit(migrated_url: str) -> None:
    pool = make_pool(migrated_url, min_size=1, max_size=2)
    try:
        with pool.connection() as conn:
            assert conn.autocommit
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.close()


def test_url_helpers() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redact_url("postgresql://postgres:@/db?host=/tmp/x") == "postgresql://postgres:@/db?host=/tmp/x"
    assert "pw" not in redact_url("postgresql:///db?host=/tmp/x&password=pw")
    assert redact_url("host=h password=pw dbname=d") == "host=h password=*** dbname=d"
    assert sqlalchemy_url("postgresql://postgres:@/db?host=/tmp/x") == "postgresql+psycopg://postgres:@/db?host=/tmp/x"
    assert sqlalchemy_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(ValueError):
        sqlalchemy_url("mysql://u@h/db")
