"""The ladder at ten million matches (docs/benchmarks.md, migrations 0017 and 0020): what keeps the matchmaking, the bot
page and ``ratings rebuild`` from growing with the history, shown at small scale.

Oracles: the straightforward quadratic way of cutting tables (the rule as ``tables_of`` states it),
PostgreSQL's own plans (no sequential scan of ``matches``), head-to-head records aggregated directly
from the seats, Python's ``round`` for the thinned rating history, the catalog before and after a rebuild,
and the messages Redis holds after queueing.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import psycopg
import pytest
from fixtures.ladder_helpers import DUEL, GAME, make_bots, play

from ladder import fair_play
from ladder.bots import revoke_bot
from ladder.ladder_rounds import tables_of
from ladder.ratings import rebuild_ratings
from ladder.read import MAX_PLOT_POINTS, bot_page
from ladder.read.bots import BOT_HISTORY_SQL
from ladder.tournaments import plan_match
from parterre.embedded import celery_url

pytestmark = pytest.mark.usefixtures("games")

GS2, GS3 = f"{GAME}(players=2)", f"{GAME}(players=3)"


def _quadratic_tables(order: list[int], n: int, account: dict[int, int | None], fits: Any) -> list[list[int]]:
    """The rule of ``tables_of``'s docstring, written the obvious way (a new list after every table)."""
    left, tables = list(order), []
    while len(left) >= n:
        table: list[int] = []
        taken: set[int] = set()
        for bot in left:
            owner = account.get(bot)
            if owner is not None and owner in taken:
                continue
            if fits is not None and not all(fits(bot, other) for other in table):
                continue
            table.append(bot)
            if owner is not None:
                taken.add(owner)
            if len(table) == n:
                break
        if len(table) < n:
            left = left[1:]
            continue
        tables.append(table)
        left = [b for b in left if b not in table]
    return tables


def test_tables_of_cuts_the_tables_the_rule_says() -> None:
    rng = random.Random(17)
    for _ in range(2000):
        order = rng.sample(range(1, 300), rng.randint(0, 80))
        n = rng.randint(1, 4)
        owners = rng.randint(1, 12)
        account = {b: rng.randint(1, owners) if rng.random() < 0.9 else None for b in order}
        elo = {b: rng.gauss(1500, 300) for b in order}
        gap = rng.choice((50.0, 400.0, 1e9))
        fits = (lambda x, y, gap=gap, elo=elo: abs(elo[x] - elo[y]) <= gap) if rng.random() < 0.7 else None
        assert tables_of(order, n, account, fits) == _quadratic_tables(order, n, account, fits)


def test_tables_of_ten_thousand_online_bots_takes_milliseconds() -> None:
    """The tick cuts every online bot into tables each round; a new list after every table made that quadratic
    (1.5 s for 10^4 bots, 6 s for 2 x 10^4 on this machine). The bound is generous: a loaded machine."""
    import time

    rng = random.Random(5)
    order = list(range(1, 20_001))
    account = {b: 1 + b % 8000 for b in order}
    elo = {b: rng.gauss(1500, 200) for b in order}
    started = time.process_time()
    tables = tables_of(order, 2, account, lambda x, y: abs(elo[x] - elo[y]) <= 400)
    took = time.process_time() - started
    assert len(tables) == 10_000
    assert took < 1.0, f"{took:.2f} s of CPU to cut 20,000 bots into tables"


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(n for child in plan.get("Plans", []) for n in _plan_nodes(child))]


def _explain(conn: Any, sql: str, params: Any) -> list[dict[str, Any]]:
    (explained,) = conn.execute(f"EXPLAIN (FORMAT JSON) {sql}", params).fetchone()
    return _plan_nodes((json.loads(explained) if isinstance(explained, str) else explained)[0]["Plan"])


MATCHES = 30_000
"""Matches in the table for the plan tests: enough that a scan is what the planner would do without an index."""


def test_the_matchmaking_finds_its_round_and_the_days_matches_through_indexes(pool: Any) -> None:
    with pool.connection() as conn:
        # 200 bots of 50 accounts; a match every 5 minutes for 100 days, two random bots each
        conn.execute("INSERT INTO accounts (id, username, password_hash) SELECT a, 'player' || a, 'x' "
                     "FROM generate_series(1, 50) a")
        conn.execute("INSERT INTO bots (id, name, token_hash, account_id) SELECT b, 'scale-' || b, "
                     "encode(sha256(b::text::bytea), 'hex'), 1 + b % 50 FROM generate_series(1, 200) b")
        conn.execute(
            "INSERT INTO matches (plan_key, game, game_string, seed, seed_commitment, time_control, status, "
            "finished_at, result_seq, created_at) SELECT 'ladder:' || %s || ':r' || (g / 10) || ':' || g, %s, %s, "
            "'s' || g, 'c', '{}'::jsonb, 'finished', now(), g, now() - make_interval(mins => 5 * g) "
            "FROM generate_series(1, %s) g", (GS2, GAME, GS2, MATCHES))
        conn.execute("INSERT INTO seats (match_id, seat, bot_id, rank) SELECT id, 0, 1 + id % 200, 1 FROM matches")
        conn.execute("INSERT INTO seats (match_id, seat, bot_id, rank) SELECT id, 1, 1 + (id * 7 + 3) % 200, 2 "
                     "FROM matches WHERE (id * 7 + 3) % 200 <> id % 200")
        conn.execute("ANALYZE")
        prefix = f"ladder:{GS2}:r77:"
        round_sql = "SELECT id FROM matches WHERE tournament_id IS NULL AND starts_with(plan_key, %s) ORDER BY id"
        assert len(conn.execute(round_sql, (prefix,)).fetchall()) == 10  # matches 770..779
        nodes = _explain(conn, round_sql, (prefix,))
        assert [n for n in nodes if n["Node Type"] == "Seq Scan"] == []
        assert "matches_plan_key_without_tournament" in {n.get("Index Name") for n in nodes}
        pairs = fair_play._PAIR_COUNT_SQL.format(when="m.status = ANY(%(statuses)s) "
                                                 "AND m.created_at > now() - make_interval(secs => %(window)s)")
        params = {"accounts": list(range(1, 51)), "game": GAME, "statuses": ["finished"],
                  "window": fair_play.ACCOUNT_PAIR_WINDOW_S}
        assert conn.execute(pairs, params).fetchall()  # the day's 288 matches between accounts
        nodes = _explain(conn, pairs, params)
    # from the day's matches (the index), not from every match of every seat of the accounts' bots; at this
    # size the planner may still hash the seats table (60,000 rows), which it does not at 10^6 (the bench's plans)
    scans = [n.get("Relation Name") for n in nodes if n["Node Type"] == "Seq Scan"]
    assert "matches" not in scans, f"the day's matches read every match: {scans}"
    assert "matches_free_by_created" in {n.get("Index Name") for n in nodes}


def _h2h_from_seats(conn: Any) -> set[tuple[Any, ...]]:
    return {tuple(r) for r in conn.execute(
        "SELECT me.bot_id, m.game, o.bot_id, count(*), count(*) FILTER (WHERE me.rank < o.rank), "
        "count(*) FILTER (WHERE me.rank = o.rank), count(*) FILTER (WHERE me.rank > o.rank) FROM seats me "
        "JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id JOIN matches m ON m.id = me.match_id "
        "WHERE me.rank IS NOT NULL AND o.rank IS NOT NULL GROUP BY 1, 2, 3").fetchall()}


def test_head_to_head_rows_follow_every_finished_match(pool: Any) -> None:
    bots = make_bots(pool, 5)
    rng = random.Random(3)
    for i in range(30):
        three = i % 3 == 0
        seats = rng.sample(bots, 3 if three else 2)
        mid = plan_match(pool, game_string=GS3 if three else GS2, bot_ids=seats, plan_key=f"h2h:{i}")
        if i % 5 == 0:  # casual ones count too, as the bot page always showed them
            with pool.connection() as conn:
                conn.execute("UPDATE matches SET rated = false WHERE id = %s", (mid,))
        play(pool, mid, [rng.randint(1, 2) for _ in seats])  # draws included
    plan_match(pool, game_string=GS2, bot_ids=bots[:2], plan_key="h2h:never-played")
    import importlib

    rebuild = importlib.import_module("ladder.migrations.versions.0017_head_to_head").REBUILD
    with pool.connection() as conn:
        expected = _h2h_from_seats(conn)
        kept = {tuple(r) for r in conn.execute("SELECT bot_id, game, opponent_id, matches, wins, draws, losses "
                                               "FROM bot_head_to_head").fetchall()}
        conn.execute(rebuild)
        rebuilt = {tuple(r) for r in conn.execute("SELECT bot_id, game, opponent_id, matches, wins, draws, losses "
                                                  "FROM bot_head_to_head").fetchall()}
    assert len(expected) > 10
    assert kept == expected == rebuilt
    page = bot_page(pool, bots[0], opponents=2)
    assert page.opponents == {GAME: len({o for b, _, o, *_ in expected if b == bots[0]})}
    assert len(page.head_to_head) == 2
    full = bot_page(pool, bots[0])
    assert [h.opponent_id for h in full.head_to_head[:2]] == [h.opponent_id for h in page.head_to_head]
    assert [h.matches for h in full.head_to_head] == sorted((h.matches for h in full.head_to_head), reverse=True)
    assert {(bots[0], h.game, h.opponent_id, h.matches, h.wins, h.draws, h.losses) for h in full.head_to_head} == {
        e for e in expected if e[0] == bots[0]}


def _python_thin(total: int, most: int) -> list[int]:
    """Indexes the bot page keeps of ``total`` points: every one up to ``most``, else ``round(i * step)``."""
    if total <= most:
        return list(range(total))
    step = (total - 1) / (most - 1)
    return [round(i * step) for i in range(most)]


@pytest.mark.parametrize("total", [1, 2, MAX_PLOT_POINTS, MAX_PLOT_POINTS + 1, 2 * MAX_PLOT_POINTS - 1,
                                   2 * MAX_PLOT_POINTS, 2 * MAX_PLOT_POINTS + 1, 1234, 4321])
def test_the_server_thins_the_rating_history_as_python_would(pool: Any, total: int) -> None:
    (bot, other) = make_bots(pool, 2)
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO matches (id, plan_key, game, game_string, seed, seed_commitment, time_control, status, "
            "finished_at, result_seq, rating_seq) SELECT g, 'thin:' || g, %s, %s, 's', 'c', '{}'::jsonb, 'finished', "
            "now(), 2 * g, 2 * g + 1 FROM generate_series(1, %s) g", (GAME, GS2, total))
        conn.execute(
            "INSERT INTO rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) "
            "SELECT g, %s, %s, 2 * g + 1, 1500, 1500 + g, g FROM generate_series(1, %s) g", (bot, GAME, total))
        rows = conn.execute(BOT_HISTORY_SQL, {"bot": bot, "most": MAX_PLOT_POINTS}).fetchall()
    assert [int(n) - 1 for _, n, _, _, _ in rows] == _python_thin(total, MAX_PLOT_POINTS)
    assert {int(t) for *_, t in rows} == {total}
    assert [float(e) for _, n, _, e, _ in rows] == [1500.0 + n for _, n, _, _, _ in rows]  # the n-th point's Elo
    del other


def test_thinning_matches_python_for_every_length_up_to_ten_thousand(pool: Any) -> None:
    """The same rule on numbers alone (no table), for every history length from 1 to 10,000."""
    cond = BOT_HISTORY_SQL.split(" WHERE h.total <= ", 1)[1].rsplit(" ORDER BY", 1)[0]
    with pool.connection() as conn:
        rows = conn.execute(
            f"SELECT h.total, array_agg(h.n - 1 ORDER BY h.n) FROM (SELECT t AS total, n FROM generate_series(1, "
            f"10000) t, generate_series(1, t) n) h WHERE h.total <= {cond} GROUP BY h.total ORDER BY h.total",
            {"most": MAX_PLOT_POINTS}).fetchall()
    assert len(rows) == 10000
    for total, kept in rows:
        assert list(kept) == _python_thin(int(total), MAX_PLOT_POINTS), total


_CATALOG = """
SELECT 'index', c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'rating_history'::regclass
UNION ALL SELECT 'constraint', conname, pg_get_constraintdef(oid) || ' ' || convalidated FROM pg_constraint
WHERE conrelid = 'rating_history'::regclass
UNION ALL SELECT 'column', attname, format_type(atttypid, atttypmod) || ' ' || attnotnull || ' ' || attnum
FROM pg_attribute WHERE attrelid = 'rating_history'::regclass AND attnum > 0 AND NOT attisdropped
UNION ALL SELECT 'comment', 'column ' || objsubid, description FROM pg_description
WHERE objoid = 'rating_history'::regclass
ORDER BY 1, 2
"""


def test_a_rebuild_swaps_in_a_table_with_the_same_schema(pool: Any) -> None:
    bots = make_bots(pool, 4)
    for i in range(12):
        mid = plan_match(pool, game_string=GS2 if i % 2 else DUEL,  # two games
                         bot_ids=[bots[i % 4], bots[(i + 1) % 4]], plan_key=f"swap:{i}")
        play(pool, mid, [1, 2] if i % 3 else [2, 1])
    with pool.connection() as conn:
        before = conn.execute(_CATALOG).fetchall()
        history = conn.execute("SELECT * FROM rating_history ORDER BY match_id, bot_id").fetchall()
        oid = conn.execute("SELECT 'rating_history'::regclass::oid").fetchone()[0]
    summary = rebuild_ratings(pool)
    assert summary["changed"] == 0 and summary["matches"] == 12
    with pool.connection() as conn:
        assert conn.execute(_CATALOG).fetchall() == before  # names, definitions, validated keys, comments
        assert conn.execute("SELECT * FROM rating_history ORDER BY match_id, bot_id").fetchall() == history
        assert conn.execute("SELECT 'rating_history'::regclass::oid").fetchone()[0] != oid  # a new table
        # written with COPY FREEZE: all-visible at once, so the bot page's history is an index-only scan
        assert conn.execute("SELECT relallvisible = relpages AND relpages > 0 FROM pg_class "
                            "WHERE relname = 'rating_history'").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'rating_history_rebuilt%'"
                            ).fetchone()[0] == 0
        gone = conn.execute("DELETE FROM matches WHERE id = (SELECT min(id) FROM matches WHERE game = %s) "
                            "RETURNING id", (GAME,)).fetchone()[0]
        # the swapped-in table's foreign keys act: the deleted match's history went with it
        assert conn.execute("SELECT count(*) FROM rating_history WHERE match_id = %s", (gone,)).fetchone()[0] == 0
    with pool.connection() as conn:
        duel = conn.execute("SELECT * FROM rating_history WHERE game = %s ORDER BY match_id, bot_id",
                            (DUEL,)).fetchall()
    assert rebuild_ratings(pool, GAME)["matches"] == 5  # one game: the other's history is kept as it was
    with pool.connection() as conn:
        assert conn.execute("SELECT * FROM rating_history WHERE game = %s ORDER BY match_id, bot_id",
                            (DUEL,)).fetchall() == duel
        assert conn.execute(_CATALOG).fetchall() == before


def test_revoked_bots_leave_the_counts_of_the_leaderboard_and_the_ranks(pool: Any) -> None:
    from ladder.read import leaderboard_page

    bots = make_bots(pool, 4)
    for i, (w, lo) in enumerate([(0, 1), (0, 2), (1, 2), (3, 2), (0, 3)]):
        mid = plan_match(pool, game_string=GS2, bot_ids=[bots[w], bots[lo]], plan_key=f"rank:{i}")
        play(pool, mid, [1, 2])
    before = {e.bot_id: e.rank for e in leaderboard_page(pool, GAME).rows}
    assert leaderboard_page(pool, GAME).total == 4
    revoke_bot(pool, bots[0])
    board = leaderboard_page(pool, GAME)
    assert board.total == 3 and bots[0] not in {e.bot_id for e in board.rows}
    for e in board.rows:  # everyone below the revoked leader moves up one place, on the board and the bot page
        assert e.rank == before[e.bot_id] - 1
        (rating,) = bot_page(pool, e.bot_id).ratings
        assert rating.rank == e.rank
    from ladder.read.bots import BOT_RATINGS_SQL

    with pool.connection() as conn:  # the revoked bots are found by their own index, not by reading every bot
        conn.execute("SET enable_seqscan = off")  # a four-bot table: show the plan the index allows
        nodes = _explain(conn, BOT_RATINGS_SQL, (bots[1],))
    assert "bots_revoked" in {n.get("Index Name") for n in nodes}


def test_queue_matches_puts_one_run_match_message_per_match_on_the_broker(redis_base_url: str) -> None:
    import redis

    from workers import tasks
    from workers.app import app

    queue = f"parterre-test-{random.randrange(1 << 30)}"
    old = (app.conf.broker_url, app.conf.task_default_queue)
    app.conf.update(broker_url=celery_url(redis_base_url))
    app.conf.task_default_queue = queue
    client = redis.Redis.from_url(redis_base_url)
    try:
        tasks.queue_matches(list(range(1, 2502)))  # three pipelines
        messages = [json.loads(m) for m in client.lrange(queue, 0, -1)]
    finally:
        app.conf.broker_url, app.conf.task_default_queue = old
        client.delete(queue)
    assert len(messages) == 2501
    assert {m["headers"]["task"] for m in messages} == {"parterre.run_match"}
    assert [json.loads(base64.b64decode(m["body"]))[0][0] for m in messages][::-1] == list(range(1, 2502))


def test_bot_page_history_total_counts_every_point(pool: Any) -> None:
    """``history_total`` is the bot's rated games even when the plot gets fewer points."""
    (a, b) = make_bots(pool, 2)
    with psycopg.connect(pool.conninfo, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO matches (id, plan_key, game, game_string, seed, seed_commitment, time_control, status, "
            "finished_at, result_seq, rating_seq) SELECT g, 'total:' || g, %s, %s, 's', 'c', '{}'::jsonb, "
            "'finished', now(), 2 * g, 2 * g + 1 FROM generate_series(1, 1000) g", (GAME, GS2))
        conn.execute(
            "INSERT INTO rating_history (match_id, bot_id, game, result_seq, elo_before, elo_after, delta) "
            "SELECT g, %s, %s, 2 * g + 1, 1500, 1500 + g, g FROM generate_series(1, 1000) g", (a, GAME))
        conn.execute("INSERT INTO ratings (bot_id, game, elo, games) VALUES (%s, %s, 2500, 1000)", (a, GAME))
    (rating,) = bot_page(pool, a).ratings
    assert rating.history_total == 1000 and len(rating.history) == MAX_PLOT_POINTS
    assert (rating.history[0].n, rating.history[-1].n, rating.history[-1].elo) == (1, 1000, 2500.0)
    del b


def test_one_bots_league_evidence_is_read_from_its_own_seats(pool: Any) -> None:
    """The bot page asks for one bot's record against its next boss: the same numbers as the record of every
    bot at once (``promote``'s query), read from the bot's seats with the boss's seat looked up per match,
    not from every match the boss played."""
    from ladder.house import ensure_house_bot
    from ladder.leagues import _ONE_BOT_H2H_SQL, GATE_MIN_DECISION_MS, head_to_head

    bots = make_bots(pool, 4)
    boss, _ = ensure_house_bot(pool, "random", [GAME])
    rng = random.Random(9)
    rushed = {"base_ms": 0, "increment_ms": 0, "cap_ms": 100, "margin_ms": 100}
    for i in range(40):
        three = i % 4 == 0
        seats = [boss, *rng.sample(bots, 2 if three else 1)]
        rng.shuffle(seats)
        mid = plan_match(pool, game_string=GS3 if three else GS2, bot_ids=seats, plan_key=f"ev:{i}",
                         time_control=rushed if i % 7 == 0 else None)  # rushed matches do not count
        if i % 9 == 0:
            with pool.connection() as conn:
                conn.execute("UPDATE matches SET rated = false WHERE id = %s", (mid,))  # nor casual ones
        play(pool, mid, [rng.randint(1, len(seats)) for _ in seats])
    with pool.connection() as conn:
        every = head_to_head(conn, GAME, boss)
        assert len(every) == 4
        for b in bots:
            assert head_to_head(conn, GAME, boss, [b]) == {b: every[b]}
        assert head_to_head(conn, GAME, boss, [boss]) == {}
        conn.execute("SET enable_seqscan = off")  # a small table: show the plan the indexes allow
        nodes = _explain(conn, _ONE_BOT_H2H_SQL, {"boss": boss, "bot": bots[0], "game": GAME, "now": None,
                                                  "min_ms": GATE_MIN_DECISION_MS})
    seats = [n for n in nodes if n.get("Relation Name") == "seats"]
    assert any("match_id" in n.get("Index Cond", "") for n in seats), "the boss's seat is not looked up by match"
    assert not any(f"bot_id = '{boss}'" in n.get("Index Cond", "") and "match_id" not in n.get("Index Cond", "")
                   for n in seats), "the boss's seats are read by bot"
