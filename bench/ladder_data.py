"""What the benches over a large ladder database share (``bench_web.py``, ``bench_ten_million.py``).

* :func:`play_templates`: real matches played through the engines in process (random
  policies), each kept as the replay row the ladder stores (:func:`ladder.replay_store.pack`:
  compact when it round-trips) with its ranks, scores and decisions per seat. A generated
  match reuses one of them verbatim, so its stored replay is genuine (the match page's
  viewer re-simulates a real game) and its bytes are those of a real replay; the replay's
  header keeps the ids and seed of the match it was played as.
* a database of the bench's own: :func:`database_url`, :func:`create_database`, :func:`drop_database`;
* :class:`BulkLoad`: the indexes and key constraints of the tables to fill are dropped,
  the rows loaded with ``COPY ... FREEZE`` (rows frozen and pages all-visible at once: no
  ``VACUUM`` before index-only scans), then every index and constraint is made again from
  its own definition (``pg_get_indexdef`` / ``pg_get_constraintdef``) and checked equal
  to the schema before the load;
* :func:`page_queries`, :func:`explain`, :func:`indexes_used`: the web pages' main queries
  and their plans; :func:`percentile`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(1, str(ROOT / "tests"))

import psycopg  # noqa: E402 - after the sys.path setup above
from psycopg.adapt import Dumper  # noqa: E402 - after the sys.path setup above
from psycopg.pq import Format  # noqa: E402 - after the sys.path setup above

from ladder import read as wq  # noqa: E402 - after the sys.path setup above
from ladder.matches import MatchSpec  # noqa: E402 - after the sys.path setup above

BENCH_TIME_CONTROL = {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 50}
"""Time control recorded in the templates' replays."""


@dataclass(frozen=True)
class Template:
    """A real played match: its stored replay row and its result, reused by generated matches.

    Attributes:
        game: registry name.
        players: seats.
        game_string: the canonical game string it was played as.
        format / blob: ``replays.format`` and ``replays.data`` as ``record_result`` stores them.
        raw_bytes: length of the replay JSON text (``replays.raw_bytes``).
        ranks / scores / decisions: per seat.
        steps: steps of the replay.
    """

    game: str
    players: int
    game_string: str
    format: str
    blob: bytes
    raw_bytes: int
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    decisions: tuple[int, ...]
    steps: int


def play_templates(games: Sequence[str], counts: Sequence[int], per_count: int,
                   seed: int) -> dict[tuple[str, int], list[Template]]:
    """Play ``per_count`` real matches of each game of ``games`` at each seat count of ``counts`` (random policies).

    Returns:
        ``(game, seats) -> templates``.
    """
    from fixtures.web_helpers import play_replay

    from games.registry import load_game
    from ladder.matches import ZSTD_LEVEL
    from ladder.replay_store import pack

    out: dict[tuple[str, int], list[Template]] = {}
    for gi, game in enumerate(games):
        for n in counts:
            gs = load_game(f"{game}(players={n})").game_string()
            for k in range(per_count):
                s = f"{seed:08x}{gi}{n}{k:04x}".ljust(64, "0")
                spec = MatchSpec(match_id=0, attempt=1, game_string=gs, seed=s, seat_bot_ids=tuple(range(1, n + 1)),
                                 time_control=BENCH_TIME_CONTROL, game=game,
                                 seed_commitment=hashlib.sha256(s.encode()).hexdigest())
                result = play_replay(spec, [f"bot{i}" for i in range(n)], ["random"] * n)
                text = result["replay_json"]
                fmt, blob = pack(text, ZSTD_LEVEL)  # stored as record_result stores it (compact when it round-trips)
                seats = result["seats"]
                out.setdefault((game, n), []).append(Template(
                    game, n, gs, fmt, blob, len(text.encode()), tuple(st["rank"] for st in seats),
                    tuple(float(st["score"]) for st in seats), tuple(int(st["decisions"]) for st in seats),
                    len(json.loads(text)["steps"])))
    return out


# -- a database of the bench's own -------------------------------------------------------------


def database_url(admin: str, name: str) -> str:
    """``admin`` (a libpq URL) with the database ``name``."""
    return urlparse(admin)._replace(path="/" + name).geturl()


def create_database(admin_url: str, name: str, *, replace: bool = True) -> bool:
    """Create ``name`` (dropping it first when ``replace``); returns whether it existed before."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None
        if exists and replace:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        if not exists or replace:
            conn.execute(f'CREATE DATABASE "{name}"')
    return exists


def drop_database(admin_url: str, name: str) -> None:
    """Drop ``name`` if it exists (its sessions are ended)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- bulk load ---------------------------------------------------------------------------------


_FKS_SQL = """
SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
FROM pg_constraint c
WHERE c.contype = 'f' AND (c.conrelid = ANY(%(t)s::regclass[]) OR c.confrelid = ANY(%(t)s::regclass[]))
ORDER BY 1, 2
"""
_KEYS_SQL = """
SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
FROM pg_constraint c
WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY(%(t)s::regclass[])
ORDER BY c.contype, 1, 2
"""
_INDEXES_SQL = """
SELECT i.indrelid::regclass::text, x.relname, pg_get_indexdef(i.indexrelid)
FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
WHERE i.indrelid = ANY(%(t)s::regclass[])
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
ORDER BY 1, 2
"""
_SCHEMA_SQL = """
SELECT 'index', x.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = x.relnamespace WHERE n.nspname = 'public'
UNION ALL
SELECT 'constraint', c.conrelid::regclass::text || '.' || c.conname,
       pg_get_constraintdef(c.oid) || ' valid=' || c.convalidated
FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public'
ORDER BY 1, 2
"""


def schema_snapshot(conn: Any) -> list[tuple[str, str, str]]:
    """Every index and constraint of the public schema, with its definition (to compare before and after)."""
    return [tuple(r) for r in conn.execute(_SCHEMA_SQL).fetchall()]


class BulkLoad:
    """Drop the indexes and key constraints of ``tables``, load them with ``COPY FREEZE``, make them again.

    Usage::

        bulk = BulkLoad(url, ["matches", "seats"])
        bulk.drop()                       # foreign keys to and from them, keys, indexes
        with bulk.copy("seats", "COPY seats (...) FROM STDIN") as copy: ...   # any number, any thread
        bulk.restore(workers=2)           # keys, indexes, then foreign keys (validated), as before
        bulk.check()                      # the schema equals the one before drop(), definitions and all

    Each :meth:`copy` runs on a connection of its own in one transaction that truncates the table
    first, so ``COPY ... FREEZE`` applies (PostgreSQL: the table was truncated in the same
    transaction); several copies can be open at once (the server parses each in its own backend).
    """

    def __init__(self, url: str, tables: Sequence[str], *, maintenance_work_mem: str = "512MB") -> None:
        self.url = url
        self.tables = list(tables)
        self.mem = maintenance_work_mem
        with psycopg.connect(url) as conn:
            self.before = schema_snapshot(conn)
            p = {"t": self.tables}
            self.fks = [tuple(r) for r in conn.execute(_FKS_SQL, p).fetchall()]
            self.keys = [tuple(r) for r in conn.execute(_KEYS_SQL, p).fetchall()]
            self.indexes = [tuple(r) for r in conn.execute(_INDEXES_SQL, p).fetchall()]
        self.timings: dict[str, float] = {}

    def drop(self) -> None:
        """Drop the foreign keys to and from the tables, then their keys and other indexes."""
        with psycopg.connect(self.url) as conn:
            for table, name, _ in self.fks:
                conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
            for table, name, _ in self.keys:
                conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
            for _, name, _ in self.indexes:
                conn.execute(f'DROP INDEX "{name}"')
            conn.commit()

    def copy(self, table: str, columns: Sequence[tuple[str, str]], *, queued: bool = False) -> _FrozenCopy:
        """A context manager giving a psycopg ``Copy`` into ``table``: binary ``COPY ... FREEZE`` of ``columns``
        (``(name, PostgreSQL type)`` pairs; a ``jsonb`` value is given as its JSON text). ``queued``: a thread of
        psycopg's sends the data while the caller formats the next rows."""
        return _FrozenCopy(self.url, table, columns, queued)

    def restore(self, workers: int = 2, log: Callable[[str], None] = print) -> None:
        """Make the keys, then the indexes, then the foreign keys (each validated) again, ``workers`` at a time."""
        import time

        def run(statements: list[tuple[str, str]], phase: str) -> None:
            t0 = time.perf_counter()
            todo = list(reversed(statements))
            lock = threading.Lock()
            errors: list[BaseException] = []

            def work() -> None:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"SET maintenance_work_mem = '{self.mem}'")
                    conn.execute("SET max_parallel_maintenance_workers = 0")  # the workers are the parallelism
                    while True:
                        with lock:
                            if not todo or errors:
                                return
                            name, sql = todo.pop()
                        t = time.perf_counter()
                        try:
                            conn.execute(sql)
                        except BaseException as exc:  # reported by the caller's thread
                            errors.append(exc)
                            return
                        self.timings[name] = time.perf_counter() - t

            threads = [threading.Thread(target=work) for _ in range(max(1, workers))]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            if errors:
                raise errors[0]
            log(f"  {phase}: {len(statements)} in {time.perf_counter() - t0:.1f} s")

        # the biggest first, so the two workers end together
        run(sorted(((n, f'ALTER TABLE {t} ADD CONSTRAINT "{n}" {d}') for t, n, d in self.keys),
                   key=lambda x: _weight(x[1])), "primary keys and unique constraints")
        run(sorted(((n, d) for _, n, d in self.indexes), key=lambda x: _weight(x[1])), "indexes")
        # adding a foreign key locks both tables in SHARE ROW EXCLUSIVE mode: two on one table wait for each other
        run([(n, f'ALTER TABLE {t} ADD CONSTRAINT "{n}" {d}') for t, n, d in self.fks], "foreign keys (validated)")

    def check(self) -> None:
        """Raise AssertionError unless every index and constraint is back with its definition."""
        with psycopg.connect(self.url) as conn:
            after = schema_snapshot(conn)
        missing = sorted(set(self.before) - set(after))
        extra = sorted(set(after) - set(self.before))
        if missing or extra:
            raise AssertionError(f"schema differs after the bulk load: missing {missing}, extra {extra}")


def _weight(name: str) -> int:
    """Order of index builds: the biggest tables' first (a rough guess by name)."""
    for i, prefix in enumerate(("seats", "rating_history", "matches", "match_attempts", "replays")):
        if name.startswith(prefix):
            return i
    return 9


class _JsonbText(Dumper):
    """Binary ``jsonb`` from JSON text as it is (for ``COPY`` after ``set_types``): version 1, then the text."""

    format = Format.BINARY
    oid = 3802  # jsonb

    def dump(self, obj: Any) -> bytes:
        return b"\x01" + str(obj).encode()


class _FrozenCopy:
    """``BEGIN; TRUNCATE t; COPY t ... FREEZE; COMMIT`` on a connection of its own (see :class:`BulkLoad`)."""

    def __init__(self, url: str, table: str, columns: Sequence[tuple[str, str]], queued: bool) -> None:
        self.url, self.table, self.queued = url, table, queued
        self.statement = (f"COPY {table} ({', '.join(c for c, _ in columns)}) FROM STDIN "
                          "WITH (FREEZE, FORMAT BINARY)")
        self.types = [t for _, t in columns]
        self.conn: Any = None
        self.cm: Any = None

    def __enter__(self) -> Any:
        from psycopg.copy import QueuedLibpqWriter

        self.conn = psycopg.connect(self.url)
        self.conn.adapters.register_dumper(None, _JsonbText)
        self.conn.execute(f"TRUNCATE {self.table}")
        cur = self.conn.cursor()
        self.cm = cur.copy(self.statement, writer=QueuedLibpqWriter(cur) if self.queued else None)
        copy = self.cm.__enter__()
        copy.set_types(self.types)
        return copy

    def __exit__(self, *exc: Any) -> None:
        try:
            self.cm.__exit__(*exc)
            if exc[0] is None:
                self.conn.commit()
        finally:
            self.conn.close()


# -- the pages' queries ------------------------------------------------------------------------


def page_queries(game: str, bot_id: int, match_id: int, tournament_id: int | None) -> list[tuple[str, str, Any]]:
    """``[(name, sql, params)]``: the leaderboard's and the bot page's main queries, and a few others."""
    sql_top, p_top, _ = wq.leaderboard_query(game, None, wq.SortKey.RANK, wq.SortOrder.ASC, 1, 50)
    sql_all, p_all, _ = wq.leaderboard_query(game, None, wq.SortKey.WIN_RATE, wq.SortOrder.DESC, 3, 50)
    sql_p3, p_p3, _ = wq.leaderboard_query(game, 3, wq.SortKey.RANK, wq.SortOrder.ASC, 1, 50)
    out: list[tuple[str, str, Any]] = [
        ("leaderboard (rank order, page 1)", sql_top, p_top),
        ("leaderboard (sorted by win rate, page 3)", sql_all, p_all),
        ("leaderboard (players=3)", sql_p3, p_p3),
        ("bot: ratings and rank", wq.BOT_RATINGS_SQL, (bot_id,)),
        ("bot: rating history (thinned)", wq.BOT_HISTORY_SQL, {"bot": bot_id, "most": wq.MAX_PLOT_POINTS}),
        ("bot: verdicts", wq.BOT_VERDICTS_SQL, (bot_id,)),
        ("bot: per player count", wq.BOT_PLAYER_COUNTS_SQL, (bot_id,)),
        ("bot: head-to-head (25 per game)", wq.BOT_HEAD_TO_HEAD_SQL, {"bot": bot_id, "most": 25}),
        ("bot: recent matches", wq.BOT_RECENT_SQL, (bot_id, 2**63 - 1, 21)),
        ("match: replay", "SELECT data, raw_bytes FROM replays WHERE match_id = %s", (match_id,)),
        ("home: latest results", "SELECT id FROM matches WHERE game = %s AND finished_at IS NOT NULL "
         "ORDER BY finished_at DESC LIMIT 8", (game,)),
    ]
    if tournament_id is not None:
        out += [
            ("tournament: matches page", "SELECT id FROM matches WHERE tournament_id = %s ORDER BY id LIMIT 50",
             (tournament_id,)),
            ("tournament: counts", "SELECT status, count(*) FROM matches WHERE tournament_id = %s GROUP BY status",
             (tournament_id,)),
        ]
    return out


def explain(url: str, queries: Iterable[tuple[str, str, Any]], *, analyze: bool = True) -> list[tuple[str, str]]:
    """``EXPLAIN (ANALYZE, BUFFERS)`` (or plain ``EXPLAIN``) of each query: ``[(name, plan text)]``."""
    how = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " if analyze else "EXPLAIN (COSTS OFF) "
    out = []
    with psycopg.connect(url) as conn:
        for name, sql, params in queries:
            rows = conn.execute(how + sql, params).fetchall()
            out.append((name, "\n".join(r[0] for r in rows)))
        conn.rollback()
    return out


def indexes_used(plan: str) -> list[str]:
    """Index names in a plan (``Index Scan using X``, ``Index Only Scan using X``, ``Bitmap Index Scan on X``)."""
    names = re.findall(r"(?:Index(?: Only)? Scan(?: Backward)? using|Bitmap Index Scan on) (\w+)", plan)
    return sorted(set(names))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]
