"""The test "another match on this seed is not over yet" (``ladder.read.TWIN_OPEN_SQL``, S-20) is an index
look-up, not a scan of every match.

Every match page, every replay the site serves, each rules page's example replays and every file of a
competition's dataset ask it (docs/web.md, docs/competitions.md "The results archive"). Without an index on
the open matches' seeds each question read the whole ``matches`` table: 0.1 s at 305,000 matches, so a
4,000-match dataset took four minutes to write. Oracles: the statuses the test gives the twins (which
answer is right), and PostgreSQL's own plan for the question (no sequential scan of ``matches``).
"""

from __future__ import annotations

import json
from typing import Any

from ladder.read.replays import TWIN_OPEN_SQL

FINISHED = 50_000
"""Finished matches in the table: enough that a scan is what the planner would do without an index."""


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(n for child in plan.get("Plans", []) for n in _plan_nodes(child))]


def test_the_twin_check_finds_open_twins_through_an_index(pool: Any) -> None:
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO matches (plan_key, game, game_string, seed, seed_commitment, time_control, status, "
            "finished_at, result_seq) SELECT 'twin-test:' || g, 'floriferous', 'floriferous(players=2)', "
            "'seed-' || (g / 2), 'c', '{}'::jsonb, 'finished', now(), g FROM generate_series(1, %s) g",
            (FINISHED,))
        # seed-0 has a twin still to be played; seed-1's twins are both finished
        open_twin = conn.execute(
            "INSERT INTO matches (plan_key, game, game_string, seed, seed_commitment, time_control, status) "
            "VALUES ('twin-test:open', 'floriferous', 'floriferous(players=2)', 'seed-0', 'c', '{}'::jsonb, "
            "'planned') RETURNING id").fetchone()[0]
        conn.execute("ANALYZE matches")
        held_id, free_id = (conn.execute("SELECT id FROM matches WHERE plan_key = %s", (key,)).fetchone()[0]
                            for key in ("twin-test:1", "twin-test:2"))
        question = f"SELECT {TWIN_OPEN_SQL.format(m='m')} FROM matches m WHERE m.id = %s"
        assert conn.execute(question, (held_id,)).fetchone()[0] is True  # its twin is planned
        assert conn.execute(question, (free_id,)).fetchone()[0] is False  # both of seed-1 are finished
        assert conn.execute(question, (open_twin,)).fetchone()[0] is False  # its one twin is finished
        (explained,) = conn.execute(f"EXPLAIN (FORMAT JSON) {question}", (held_id,)).fetchone()
    plan = (json.loads(explained) if isinstance(explained, str) else explained)[0]["Plan"]
    scans = [n for n in _plan_nodes(plan) if n["Node Type"] == "Seq Scan" and n.get("Relation Name") == "matches"]
    assert scans == [], f"the twin check scans matches: {json.dumps(plan)[:800]}"
