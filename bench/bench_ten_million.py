"""Ten million matches: the ladder's database at 10^7 matches, 10^4 bots, three games (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_ten_million.py [--matches 10000000] [--bots 10000] [--seconds 120]
                                                [--users 50] [--keep] [--skip-backup]

Creates the database ``--db`` (default ``parterre_bench_10m``) on ``--admin-url`` (default
``$PARTERRE_BENCH_DATABASE_URL`` or the machine's ``postgresql://postgres@127.0.0.1:5432/postgres``),
migrates it, fills it, measures, and drops it at the end (``--keep`` keeps it).

**The data set** (:func:`generate`), shaped like a year of a busy ladder (docs/ladder.md):

* ``--bots`` bots (3 of them the house bots ``house-random``, ``house-greedy``, ``house-search``,
  with their ``house_bots`` rows), owned by about 0.4 accounts per bot (1 to 12 bots each, a few
  bots without an account), 1 % revoked; each bot has a hidden strength (Elo scale, sd 200),
  an activity weight (log-normal: some bots play ten times the median) and a life time (the
  month it arrived and the month it left); 10 % play only some of the games;
* ``--matches`` matches over the 365 days before now, in id order: 78 % continuous-ladder
  matches of two seats (plan keys ``ladder:<game string>:r<round>:<ids>`` as
  :mod:`ladder.ladder_rounds` makes them, two bots of different accounts at most 400 Elo
  apart, 3 % of them against the next league's house boss), 16 % round-robin tournaments
  (two, three or four seats, their plan keys and shared seeds per table), 6 % challenges
  (``challenges`` rows, 40 % casual); 0.3 % of the ladder's matches failed (three
  ``infra_error`` attempts, no result) and 5 % of the challenges expired; 1.5 % of the finished
  matches had an ``infra_error`` attempt before the one that finished (each attempt its own seed);
  1 % of them a fault verdict (the seat ranked last, with the referee's reason);
* **replays are real**: ``--templates`` matches per game and seat count are played in process
  with the engines (random policies) and stored as the ladder stores them (compact form,
  ``ladder.replay_store.pack``); each generated match reuses one of them verbatim, its seat
  order matched to the template's ranks (who finishes where is drawn from the bots'
  strengths), so the match page re-simulates a genuine game and each row has the bytes of a
  real replay. The replay's header keeps the ids and seed of the game as it was played,
  not those of the match reusing it: the match's own seed, ids and seats are in its rows;
* ratings and rating history with the ladder's own Elo (``ladder.elo``) in result order, as the
  online updates make them (a ``ratings rebuild`` afterwards must change nothing: checked);
  ``bot_player_stats`` as its trigger counts (rated matches only); league promotions decided
  by ``ladder.leagues.promote`` itself once the matches are in.

It is loaded with ``COPY`` (psycopg 3 ``cursor.copy``, six streams at once, each ``FREEZE``
after a ``TRUNCATE`` in its transaction) into tables whose indexes and key constraints were
dropped (``bench.ladder_data.BulkLoad``), which are then built again from their own definitions
(two at a time) and the foreign keys validated; the schema is checked equal to the migrated one.

**Measured** (goals in docs/benchmarks.md; the exit status is 1 when one is missed):

* generation time (goal < 30 min) and bytes per match (``pg_total_relation_size`` of each table
  over the matches; informative, with the share of each table);
* ``EXPLAIN (ANALYZE, BUFFERS)`` of the hot queries: the pages', the matchmaking's, the rebuild's;
* the web site as deployed (``parterre web``: uvicorn, one process) under ``--users`` concurrent
  readers driven by Locust (``locust --headless``; each reader reads a leaderboard or a bot
  page, then waits ``--wait`` seconds, uniformly drawn): p99 of the leaderboard and of the bot
  page ≤ 50 ms, from Locust's own statistics;
* ``parterre ratings rebuild`` (the CLI, every game) ≤ 10 min;
* the continuous ladder's matchmaking tick (``workers.periodic.ladder_tick``, the Celery task's
  body, queueing its matches on a Redis broker) with every bot online ≤ 1 s. "Online" is what the
  tick reads: the referees' presence records in Redis (``workers.directory``); the bench writes
  two records in the form ``referee/cluster.py`` publishes, each listing half of the bots with one
  idle stream each (5,000 streams per referee at 10^4 bots) instead of connecting 10^4 streams.
  Each repeat plans a new round with every bot free (the matches of the round before are
  removed untimed), the worst case: every online bot is seated;
* retention: deleting the replays of the oldest month (a batched ``DELETE``, timed) and what it frees;
* backup and restore: ``pg_dump -Fc`` then ``pg_restore -j 2`` into the same database name
  after dropping it, timed, with the row counts checked equal.
"""

from __future__ import annotations

import argparse
import atexit
import bisect
import csv
import hashlib
import importlib
import itertools
import json
import math
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import psycopg  # noqa: E402 - after the sys.path setup above

from bench.harness import Goal, Result, report  # noqa: E402 - after the sys.path setup above
from bench.ladder_data import (  # noqa: E402 - after the sys.path setup above
    BulkLoad,
    Template,
    create_database,
    database_url,
    drop_database,
    explain,
    indexes_used,
    page_queries,
    play_templates,
)
from ladder import elo  # noqa: E402 - after the sys.path setup above

DEFAULT_ADMIN = os.environ.get("PARTERRE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
GAMES = ("floriferous", "lafleur", "flowar")
GAME_WEIGHTS = (0.45, 0.30, 0.25)
LADDER_TC = {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 100}
"""The ladder's time control (``PARTERRE_LADDER_TIME_CONTROL`` default ``0:0:1000:100``)."""
LADDER_PERIOD_S = 10
"""``PARTERRE_LADDER_PERIOD_S`` default: a ladder round's number is ``floor(unix time / period)``."""
SPAN = timedelta(days=365)
EPOCHS = 12
BIG_TABLES = ("matches", "seats", "match_attempts", "replays", "rating_history", "challenges")
SMALL_TABLES = ("accounts", "api_tokens", "bots", "house_bots", "tournaments", "tournament_bots", "ratings",
                "bot_player_stats")
COLUMNS: dict[str, str] = {
    "matches": "id int8, tournament_id int8, plan_key text, game text, game_string text, seed text, "
               "seed_commitment text, time_control jsonb, status text, attempt int4, claimed_by text, "
               "lease_until timestamptz, created_at timestamptz, started_at timestamptz, finished_at timestamptz, "
               "result_seq int8, rated bool, rating_seq int8, unrated_reason text",
    "seats": "match_id int8, seat int4, bot_id int8, rank int4, score float8, verdict text, time_used_ms int8, "
             "decisions int4, bot_version text, fault_reason text",
    "match_attempts": "match_id int8, attempt int4, status text, worker text, error text, started_at timestamptz, "
                      "ended_at timestamptz, seed text, seed_commitment text",
    "replays": "match_id int8, format text, compression text, data bytea, raw_bytes int4, stored_at timestamptz",
    "rating_history": "match_id int8, bot_id int8, game text, result_seq int8, elo_before float8, elo_after float8, "
                      "delta float8",
    "challenges": "match_id int8, challenger_id int8, rated bool, status text, reason text, created_at timestamptz, "
                  "expires_at timestamptz, started_at timestamptz",
    "accounts": "id int8, username text, password_hash text, role text, status text, created_at timestamptz",
    "api_tokens": "id int8, account_id int8, token_hash text, prefix text, label text, scopes text[], "
                  "created_at timestamptz, last_used_at timestamptz",
    "bots": "id int8, name text, version text, owner text, token_hash text, revoked_at timestamptz, "
            "created_at timestamptz, account_id int8, description text, games text[], accepts_challenges bool, "
            "house bool",
    "house_bots": "bot_id int8, kind text, games text[]",
    "tournaments": "id int8, name text, game text, game_options jsonb, format text, player_counts int4[], rounds int4, "
                   "time_control jsonb, status text, created_at timestamptz, organiser_id int8",
    "tournament_bots": "tournament_id int8, bot_id int8, position int4",
    "ratings": "bot_id int8, game text, elo float8, games int4, wins int4, draws int4, losses int4, score_sum float8, "
               "last_played timestamptz",
    "bot_player_stats": "game text, players int4, bot_id int8, games int4, wins int4, draws int4, losses int4, "
                        "score_sum float8, last_played timestamptz",
}
"""The columns each table is loaded with, and their types (binary ``COPY``)."""


def _columns(table: str) -> list[tuple[str, str]]:
    return [(c.split()[0], c.split()[1]) for c in COLUMNS[table].split(", ")]


HOUSE = (("random", 1200.0), ("greedy", 1550.0), ("search", 1800.0))
"""House bots (kind, hidden strength): the bosses of Bronze, Silver and Gold (ladder.leagues.BOSSES)."""
FAULTS = (("timeout", "no decision within the time allowed"), ("illegal_action", "action not in the legal list"),
          ("disconnect", "the bot's stream ended during the match"), ("crash", "the bot process exited"))

GOAL_GENERATION_S = 30 * 60
GOAL_PAGE_MS = 50.0
GOAL_REBUILD_S = 10 * 60
GOAL_TICK_S = 1.0


# -- the bots ----------------------------------------------------------------------------------


@dataclass
class BotSpec:
    """A generated bot: who owns it, how strong and how active it is, when it played."""

    id: int
    name: str
    version: str
    account: int | None
    strength: float
    weight: float
    first: int
    last: int
    games: tuple[str, ...] = ()
    house: str | None = None
    revoked: bool = False
    accepts: bool = False


def make_bots(n: int, rng: random.Random) -> tuple[list[BotSpec], int]:
    """``n`` bots (the first three the house bots) and the number of accounts owning them."""
    bots: list[BotSpec] = []
    for i, (kind, strength) in enumerate(HOUSE, start=1):
        bots.append(BotSpec(i, f"house-{kind}", "1", None, strength, 8.0, 0, EPOCHS - 1, house=kind))
    accounts = max(2, int(n * 0.4))
    words = ("fleur", "petal", "bloom", "thorn", "stem", "pollen", "bud", "root", "sprout", "meadow", "ivy", "moss")
    for i in range(len(bots) + 1, n + 1):
        # a few accounts own many bots: the account is drawn from a skewed law
        account = None if rng.random() < 0.03 else 1 + min(accounts - 1, int(accounts * rng.random() ** 1.6))
        first = 0 if rng.random() < 0.4 else rng.randrange(EPOCHS)
        last = EPOCHS - 1 if rng.random() < 0.7 else rng.randint(first, EPOCHS - 1)
        games: tuple[str, ...] = ()
        if rng.random() < 0.1:
            games = tuple(sorted(rng.sample(GAMES, rng.choice((1, 2)))))
        bots.append(BotSpec(i, f"{rng.choice(words)}-{i:05d}", str(rng.randint(1, 30)), account,
                            rng.gauss(1500.0, 200.0), math.exp(rng.gauss(0.0, 0.8)), first, last, games,
                            revoked=rng.random() < 0.01 and last < EPOCHS - 1, accepts=rng.random() < 0.3))
    return bots, accounts


class Picker:
    """Weighted draws of the bots active in a month and registered for a game."""

    def __init__(self, bots: list[BotSpec]) -> None:
        self.by: dict[tuple[str, int], tuple[list[int], list[float]]] = {}
        for g in GAMES:
            for e in range(EPOCHS):
                ids = [b.id for b in bots
                       if b.house is None and b.first <= e <= b.last and (not b.games or g in b.games)]
                self.by[g, e] = (ids, list(itertools.accumulate(bots[i - 1].weight for i in ids)))

    def pick(self, rng: random.Random, game: str, epoch: int) -> int:
        ids, cum = self.by[game, epoch]
        return ids[bisect.bisect_right(cum, rng.random() * cum[-1])]


# -- the stream of matches ---------------------------------------------------------------------


@dataclass
class Planned:
    """One match to write: what planned it and who sits where (results are drawn when it is written)."""

    kind: str  # ladder | boss | tournament | challenge
    game: str
    n: int
    bots: list[int]
    tournament: int | None = None
    plan_key: str | None = None
    seed: str | None = None
    rated: bool = True
    status: str = "finished"


@dataclass
class Tournament:
    """A round robin being played: its plan, consumed in order while ladder matches go on."""

    id: int
    game: str
    n: int
    bots: list[int]
    created: datetime
    organiser: int
    plan: Iterator[Planned] = field(default_factory=lambda: iter(()))


def tournament_plan(t: Tournament, rng: random.Random) -> Iterator[Planned]:
    """The matches of ``t`` in plan order: every table of ``t.n`` once per rotation, seeds shared per table."""
    rounds = 2 if t.n == 2 else 12
    for r in range(1, rounds + 1):
        if t.n == 2:
            tables = [list(p) for p in itertools.combinations(t.bots, 2)]
        else:
            order = rng.sample(t.bots, len(t.bots))
            tables = [order[i:i + t.n] for i in range(0, len(order) - t.n + 1, t.n)]
        for table in tables:
            seed = _hex(rng, 32)
            key = "-".join(str(b) for b in table)
            for k in range(t.n):
                seats = table[k:] + table[:k]
                yield Planned("tournament", t.game, t.n, seats, t.id, f"r{r}:n{t.n}:{key}:rot{k}", seed)


@dataclass
class Counts:
    """What was generated (printed, and used to pick request targets)."""

    matches: int = 0
    finished: int = 0
    seats: int = 0
    history: int = 0
    attempts: int = 0
    replays: int = 0
    challenges: int = 0
    tournaments: int = 0
    accounts: int = 0
    bots: int = 0
    by_kind: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    timings: dict[str, float] = field(default_factory=dict)


def _hex(rng: random.Random, nbytes: int) -> str:
    """``nbytes`` random bytes in hex, like ``secrets.token_hex`` (whose ``os.urandom`` costs 25 µs a call here)."""
    return f"{rng.getrandbits(8 * nbytes):0{2 * nbytes}x}"


def _rank_seats(rng: random.Random, tpl: Template, bots: list[int], spec: list[BotSpec]) -> list[int]:
    """Bots per seat of ``tpl``: the finishing order is drawn from the bots' strengths (Plackett-Luce) and the
    bot finishing k-th takes the template's seat ranked k-th, so the stored replay's result is the match's."""
    left = list(bots)
    order = []
    while left:
        w = [10 ** (spec[b - 1].strength / 400) for b in left]
        x = rng.random() * sum(w)
        for i, wi in enumerate(w):
            x -= wi
            if x <= 0 or i == len(w) - 1:
                order.append(left.pop(i))
                break
    seats_by_rank = sorted(range(tpl.players), key=lambda s: (tpl.ranks[s], rng.random()))
    out = [0] * tpl.players
    for b, s in zip(order, seats_by_rank, strict=True):
        out[s] = b
    return out


def generate(url: str, n_matches: int, n_bots: int, seed: int, templates: dict[tuple[str, int], list[Template]],
             now: datetime, log: Any = print) -> Counts:
    """Fill the migrated, empty database at ``url`` (see the module docstring); returns what it holds."""
    rng = random.Random(seed)
    counts = Counts()
    spec, n_accounts = make_bots(n_bots, rng)
    picker = Picker(spec)
    start = now - SPAN
    step = SPAN.total_seconds() / max(1, n_matches)
    tc_json = json.dumps(LADDER_TC)
    ratings: dict[tuple[int, str], list[Any]] = {}
    stats: dict[tuple[str, int, int], list[Any]] = {}
    tournaments: list[Tournament] = []
    house_ids = {b.house: b.id for b in spec if b.house}
    gate_kinds = ("random", "greedy", "search")
    account_of = [None] + [b.account for b in spec]
    seq = 0
    round_keys: set[str] = set()
    cur_round = -1
    current: dict[str, Tournament | None] = {g: None for g in GAMES}
    next_tid = 1
    organisers = list(range(1, min(n_accounts, 40) + 1))

    bulk = BulkLoad(url, [*BIG_TABLES, *SMALL_TABLES])
    bulk.drop()
    t_copy = time.perf_counter()

    def elo_of(b: int, g: str) -> float:
        r = ratings.get((b, g))
        return elo.INITIAL_RATING if r is None else float(r[0])

    def ladder_pair(g: str, epoch: int) -> list[int]:
        a = picker.pick(rng, g, epoch)
        ea = elo_of(a, g)
        for _ in range(12):
            b = picker.pick(rng, g, epoch)
            if b != a and (account_of[a] is None or account_of[a] != account_of[b]) and abs(elo_of(b, g) - ea) <= 400:
                return [a, b]
        while True:  # nobody near enough: anyone of another account (a later round would find one)
            b = picker.pick(rng, g, epoch)
            if b != a and (account_of[a] is None or account_of[a] != account_of[b]):
                return [a, b]

    def plan_one(m: int, when: datetime, epoch: int) -> Planned:
        nonlocal next_tid, cur_round
        x = rng.random()
        g = rng.choices(GAMES, GAME_WEIGHTS)[0]
        if x < 0.16:
            t = current[g]
            p = next(t.plan, None) if t is not None else None
            if p is None:
                n = rng.choices((2, 3, 4), (60, 20, 20))[0]
                size = rng.randint(16, 40) if n == 2 else rng.choice((16, 20, 24))
                chosen: list[int] = []
                owners: set[int] = set()
                while len(chosen) < size:
                    b = picker.pick(rng, g, epoch)
                    o = account_of[b]
                    if b in chosen or (o is not None and o in owners):
                        continue
                    chosen.append(b)
                    if o is not None:
                        owners.add(o)
                t = Tournament(next_tid, g, n, chosen, when, rng.choice(organisers))
                t.plan = tournament_plan(t, rng)
                next_tid += 1
                tournaments.append(t)
                current[g] = t
                p = next(t.plan)
            return p
        if x < 0.22:
            n = 2 if rng.random() < 0.9 else rng.choice((3, 4))
            rated = rng.random() < 0.6
            if n == 2 and rated:
                bots = ladder_pair(g, epoch)
            else:
                bots = []
                while len(bots) < n:
                    b = picker.pick(rng, g, epoch)
                    if b not in bots:
                        bots.append(b)
                owners_all = [account_of[b] for b in bots if account_of[b] is not None]
                if len(set(owners_all)) != len(owners_all):
                    rated = False  # a rated challenge cannot seat two bots of one account
            status = "expired" if rng.random() < 0.05 else "finished"
            return Planned("challenge", g, n, bots, None, "challenge:" + _hex(rng, 12), None, rated, status)
        rnd = int(when.timestamp() // LADDER_PERIOD_S)
        if rnd != cur_round:
            cur_round = rnd
            round_keys.clear()
        if rng.random() < 0.03:  # against a league's house boss
            bots = [picker.pick(rng, g, epoch), house_ids[rng.choice(gate_kinds)]]
            kind = "boss"
        else:
            bots = ladder_pair(g, epoch)
            kind = "ladder"
        rng.shuffle(bots)
        gs = templates[g, 2][0].game_string
        key = f"ladder:{gs}:r{rnd}:{'-'.join(str(b) for b in sorted(bots))}"
        if key in round_keys:  # the same two bots twice in one round: the round planned it once
            return plan_one(m, when, epoch)
        round_keys.add(key)
        status = "failed" if rng.random() < 0.003 else "finished"
        return Planned(kind, g, 2, bots, None, key, None, True, status)

    copies = {
        "matches": bulk.copy("matches", _columns("matches")),
        "seats": bulk.copy("seats", _columns("seats")),
        "match_attempts": bulk.copy("match_attempts", _columns("match_attempts")),
        "replays": bulk.copy("replays", _columns("replays")),
        "rating_history": bulk.copy("rating_history", _columns("rating_history")),
        "challenges": bulk.copy("challenges", _columns("challenges")),
    }
    entered = {name: cm.__enter__() for name, cm in copies.items()}
    cm_matches, cm_seats, cm_attempts = entered["matches"], entered["seats"], entered["match_attempts"]
    cm_replays, cm_history, cm_challenges = entered["replays"], entered["rating_history"], entered["challenges"]
    ok = False
    try:
        workers = [f"worker-{i}@parterre-worker-{i % 2 + 1}" for i in range(1, 5)]
        for m in range(1, n_matches + 1):
            finished = start + timedelta(seconds=m * step)
            epoch = min(EPOCHS - 1, int((m - 1) * EPOCHS / n_matches))
            p = plan_one(m, finished, epoch)
            counts.by_kind[p.kind] += 1
            g, n = p.game, p.n
            tpl = rng.choice(templates[g, n])
            m_seed = p.seed or _hex(rng, 32)
            commit = hashlib.sha256(m_seed.encode()).hexdigest()
            created = finished - timedelta(seconds=90 + 5 * tpl.steps // 10)
            started = created + timedelta(seconds=rng.randint(1, 20))
            worker = workers[m % 4]
            attempts = 1
            if p.status == "failed":
                attempts = 3
                for a in (1, 2, 3):
                    cm_attempts.write_row((m, a, "infra_error", worker, "no referee answered (StartMatch: UNAVAILABLE)",
                                           started, started + timedelta(seconds=5), _hex(rng, 32), None))
                counts.attempts += 3
            elif p.status == "finished" and rng.random() < 0.015:
                attempts = 2
                s1 = _hex(rng, 32)
                cm_attempts.write_row((m, 1, "infra_error", worker, "referee restarted during the match", started,
                                       started + timedelta(seconds=30), s1, hashlib.sha256(s1.encode()).hexdigest()))
                counts.attempts += 1
            if p.status == "expired":
                attempts = 0
            if p.status != "finished":  # seats without a result, no replay, no rating
                for s, b in enumerate(p.bots):
                    cm_seats.write_row((m, s, b, None, None, None, None, None, None, None))
                counts.seats += len(p.bots)
                cm_matches.write_row((m, p.tournament, p.plan_key, g, tpl.game_string, m_seed, commit, tc_json,
                                      p.status, attempts, worker if attempts else None, None, created,
                                      started if attempts else None, None, None, p.rated, None, None))
                if p.kind == "challenge":
                    cm_challenges.write_row((m, account_of[p.bots[0]], p.rated, "expired",
                                             "not every bot was connected in time", created,
                                             created + timedelta(minutes=10), None))
                    counts.challenges += 1
                counts.matches += 1
                continue
            if n != 2:
                bots = _rank_seats(rng, tpl, p.bots, spec)
            elif tpl.ranks[0] == tpl.ranks[1]:
                bots = list(p.bots)
            else:
                a, b = p.bots
                pa = 1 / (1 + 10 ** ((spec[b - 1].strength - spec[a - 1].strength) / 400))
                winner, loser = (a, b) if rng.random() < pa else (b, a)
                bots = [winner, loser] if tpl.ranks[0] < tpl.ranks[1] else [loser, winner]
            ranks = list(tpl.ranks)
            verdicts = ["normal"] * n
            reasons: list[str | None] = [None] * n
            if rng.random() < 0.01:
                worst = ranks.index(max(ranks))
                verdicts[worst], reasons[worst] = rng.choice(FAULTS)
            seq += 1
            result_seq = seq
            rating_seq = None
            if p.rated:
                seq += 1
                rating_seq = seq
                states = []
                for b in bots:
                    st = ratings.get((b, g))
                    if st is None:
                        st = ratings[b, g] = [elo.INITIAL_RATING, 0, 0, 0, 0, 0.0, None]
                    states.append(st)
                before = [st[0] for st in states]
                deltas = elo.pairwise_deltas(before, ranks)
                outcomes = elo.seat_outcomes(ranks)
                firsts = ranks.count(1)
                for s, (b, st, d, o) in enumerate(zip(bots, states, deltas, outcomes, strict=True)):
                    st[0] = before[s] + d
                    st[1] += 1
                    st[2 if o == "win" else 3 if o == "draw" else 4] += 1
                    st[5] += tpl.scores[s]
                    st[6] = finished
                    cm_history.write_row((m, b, g, rating_seq, before[s], before[s] + d, d))
                    ps = stats.get((g, n, b))
                    if ps is None:
                        ps = stats[g, n, b] = [0, 0, 0, 0, 0.0, None]
                    ps[0] += 1
                    if ranks[s] == 1:
                        ps[1 if firsts == 1 else 2] += 1
                    else:
                        ps[3] += 1
                    ps[4] += tpl.scores[s]
                    ps[5] = finished
                counts.history += n
            for s, b in enumerate(bots):
                cm_seats.write_row((m, s, b, ranks[s], tpl.scores[s], verdicts[s],
                                    tpl.decisions[s] * rng.randint(20, 400), tpl.decisions[s], spec[b - 1].version,
                                    reasons[s]))
            counts.seats += n
            cm_attempts.write_row((m, attempts, "finished", worker, None, started, finished, m_seed, commit))
            counts.attempts += 1
            cm_replays.write_row((m, tpl.format, "zstd", tpl.blob, tpl.raw_bytes, finished))
            counts.replays += 1
            cm_matches.write_row((m, p.tournament, p.plan_key, g, tpl.game_string, m_seed, commit, tc_json,
                                  "finished", attempts, worker, None, created, started, finished, result_seq,
                                  p.rated, rating_seq, None))
            if p.kind == "challenge":
                cm_challenges.write_row((m, account_of[p.bots[0]], p.rated, "started", None, created,
                                         created + timedelta(minutes=10), started))
                counts.challenges += 1
            counts.matches += 1
            counts.finished += 1
            if m % 500_000 == 0:
                el = time.perf_counter() - t_copy
                log(f"  {m:,} matches written in {el:.0f} s ({m / el:,.0f} matches/s)")
        ok = True
    finally:
        for cm in copies.values():
            cm.__exit__(*((None, None, None) if ok else sys.exc_info()))
    counts.timings["copy of the matches (six COPY streams)"] = time.perf_counter() - t_copy

    t_small = time.perf_counter()
    pw_hash = _password_hash()
    with bulk.copy("accounts", _columns("accounts")) as c:
        for a in range(1, n_accounts + 1):
            role = "organiser" if a in organisers else "participant"
            c.write_row((a, f"player{a:05d}", pw_hash, "admin" if a == 1 else role, "active",
                         start - timedelta(days=30) + timedelta(seconds=a)))
    with bulk.copy("api_tokens", _columns("api_tokens")) as c:
        for a in range(1, n_accounts + 1):
            token = "ptk_" + secrets.token_urlsafe(32)
            c.write_row((a, a, hashlib.sha256(token.encode()).hexdigest(), token[:8], "ci",
                         ["bot:manage", "challenge"], start, now - timedelta(hours=rng.randint(1, 2000))))
    with bulk.copy("bots", _columns("bots")) as c:
        for b in spec:
            created = start + SPAN * b.first / EPOCHS - timedelta(days=1)
            c.write_row((b.id, b.name, b.version, "house" if b.house else None,
                         hashlib.sha256(f"token-{b.id}-{seed}".encode()).hexdigest(),
                         start + SPAN * (b.last + 1) / EPOCHS if b.revoked else None, created, b.account,
                         "" if b.house else f"a bot of player{b.account or 0:05d}", list(b.games), b.accepts,
                         b.house is not None))
    with bulk.copy("house_bots", _columns("house_bots")) as c:
        for b in spec:
            if b.house:
                c.write_row((b.id, b.house, list(GAMES)))
    with bulk.copy("tournaments", _columns("tournaments")) as c:
        for t in tournaments:
            c.write_row((t.id, f"{t.game.capitalize()} round robin {t.id}", t.game, "{}", "round_robin", [t.n],
                         2 if t.n == 2 else 12, tc_json, "planned", t.created, t.organiser))
    with bulk.copy("tournament_bots", _columns("tournament_bots")) as c:
        for t in tournaments:
            for pos, b in enumerate(t.bots):
                c.write_row((t.id, b, pos))
    with bulk.copy("ratings", _columns("ratings")) as c:
        for (b, g), st in sorted(ratings.items()):
            c.write_row((b, g, *st))
    with bulk.copy("bot_player_stats", _columns("bot_player_stats")) as c:
        for (g, n, b), st in sorted(stats.items()):
            c.write_row((g, n, b, *st))
    counts.timings["copy of bots, accounts, tournaments, ratings"] = time.perf_counter() - t_small
    counts.tournaments, counts.accounts, counts.bots = len(tournaments), n_accounts, len(spec)

    t_idx = time.perf_counter()
    bulk.restore(workers=2, log=log)
    bulk.check()
    counts.timings["indexes and constraints made again"] = time.perf_counter() - t_idx
    t_h2h = time.perf_counter()
    with psycopg.connect(url) as conn:  # derived from the seats, as its trigger would have (migration 0017)
        conn.execute("SET work_mem = '256MB'")
        conn.execute(importlib.import_module("ladder.migrations.versions.0017_ladder_at_scale").REBUILD)
        conn.commit()
    counts.timings["bot_head_to_head filled (migration 0017's REBUILD)"] = time.perf_counter() - t_h2h
    with psycopg.connect(url, autocommit=True) as conn:
        for sq, table in (("bots_id_seq", "bots"), ("tournaments_id_seq", "tournaments"),
                          ("matches_id_seq", "matches"), ("accounts_id_seq", "accounts"),
                          ("api_tokens_id_seq", "api_tokens")):
            conn.execute(f"SELECT setval('{sq}', (SELECT max(id) FROM {table}))")
        conn.execute("SELECT setval('match_result_seq', %s)", (seq,))
        t_an = time.perf_counter()
        conn.execute("ANALYZE")
        counts.timings["ANALYZE"] = time.perf_counter() - t_an
    t_lg = time.perf_counter()
    from ladder.db import make_pool
    from ladder.leagues import promote

    pool = make_pool(url, min_size=1, max_size=2)
    try:
        promoted = promote(pool, now=now)
    finally:
        pool.close()
    counts.timings[f"league promotions (ladder.leagues.promote: {len(promoted)})"] = time.perf_counter() - t_lg
    return counts


def _password_hash() -> str:
    """One argon2id hash (as ``ladder.accounts`` stores them) shared by every generated account: hashing
    each would take minutes, and the hash's bytes are what matter here."""
    from ladder.accounts import _hasher

    return str(_hasher.hash("bench-password"))


# -- measurements ------------------------------------------------------------------------------


def table_bytes(url: str) -> list[tuple[str, int, int]]:
    """``(table, pg_total_relation_size, rows estimate)`` of every table of the public schema, biggest first."""
    with psycopg.connect(url) as conn:
        return [(str(t), int(b), int(r)) for t, b, r in conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid), greatest(c.reltuples, 0)::bigint FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' "
            "ORDER BY 2 DESC").fetchall()]


def hot_queries(url: str, rng: random.Random, n_bots: int) -> list[tuple[str, str, Any]]:
    """The pages' queries, the matchmaking's and the rebuild's (see :func:`bench.ladder_data.page_queries`)."""
    from ladder import fair_play
    from ladder.leagues import _H2H_SQL, GATE_MIN_DECISION_MS

    with psycopg.connect(url) as conn:
        bot = int(conn.execute("SELECT bot_id FROM ratings WHERE game = 'floriferous' ORDER BY games DESC "
                               "LIMIT 1").fetchone()[0])
        match = int(conn.execute("SELECT max(match_id) FROM replays").fetchone()[0])
        tid = conn.execute("SELECT max(id) FROM tournaments").fetchone()[0]
        boss = int(conn.execute("SELECT bot_id FROM house_bots WHERE kind = 'random'").fetchone()[0])
        accounts = [int(r[0]) for r in conn.execute(
            "SELECT DISTINCT account_id FROM bots WHERE account_id IS NOT NULL")]
    all_bots = list(range(1, n_bots + 1))
    out = page_queries("floriferous", bot, match, tid)
    out += [
        ("bot: league evidence against its next boss (ladder.leagues.head_to_head)", _H2H_SQL,
         {"boss": boss, "game": "floriferous", "bots": [bot], "now": None, "min_ms": GATE_MIN_DECISION_MS}),
        ("tick: the round's matches so far", "SELECT id FROM matches WHERE tournament_id IS NULL "
         "AND starts_with(plan_key, %s) ORDER BY id",
         ("ladder:floriferous(competitive_bounties=false,extended=false,players=2):r1:",)),
        ("tick: planned or running matches of the online bots",
         "SELECT s.bot_id, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
         "WHERE m.status IN ('planned', 'running') AND s.bot_id = ANY(%s::bigint[]) GROUP BY s.bot_id", (all_bots,)),
        ("tick: ratings of the online bots", "SELECT bot_id, games, elo FROM ratings WHERE game = %s "
         "AND bot_id = ANY(%s::bigint[])", ("floriferous", all_bots)),
        ("tick: rated matches per pair of accounts in 24 h (ladder.fair_play.ladder_pair_counts)",
         fair_play._PAIR_COUNT_SQL.format(when="m.status = ANY(%(statuses)s) "
                                               "AND m.created_at > now() - make_interval(secs => %(window)s)"),
         {"accounts": accounts, "game": "floriferous", "statuses": fair_play._COUNTED_STATUSES,
          "window": fair_play.ACCOUNT_PAIR_WINDOW_S}),
    ]
    return out


REBUILD_SCAN = ("ratings rebuild: the rated results in application order (plan only)",
                "SELECT m.id, m.game, m.rating_seq, m.finished_at, s.bot_id, s.rank, s.score FROM matches m "
                "JOIN seats s ON s.match_id = m.id WHERE m.status = 'finished' AND m.rated "
                "AND m.rating_seq IS NOT NULL ORDER BY m.rating_seq, s.seat", ())


def _free_port(lo: int, hi: int) -> int:
    for port in range(lo, hi + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {lo}-{hi}")


PARTERRE = [sys.executable, "-c", "import sys; from parterre.cli import main; sys.exit(main())"]
"""The ``parterre`` command of this checkout (its console script may be another checkout's)."""


def _env(url: str, home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")}
    env.update(PARTERRE_DATABASE_URL=url, PARTERRE_HOME=home, PYTHONPATH=str(ROOT))
    return env


def start_web(url: str, port: int, home: str) -> subprocess.Popen[bytes]:
    """``parterre web`` (uvicorn, one process, as deployed) on ``port``; returns once ``/api/health`` answers."""
    import httpx

    with open(os.path.join(home, "web.log"), "wb") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([*PARTERRE, "web", "--host", "127.0.0.1", "--port", str(port)],
                                cwd=ROOT, env=_env(url, home), stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"parterre web exited with {proc.returncode}")
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("the web server did not start")


def run_locust(base: str, users: int, seconds: int, n_bots: int, wait: str, out_dir: str, tag: str) -> dict[str, Any]:
    """One headless Locust run; returns ``{name: {"p50", "p99", "n", "failures", "rps"}}`` from its CSV statistics."""
    prefix = os.path.join(out_dir, tag)
    env = {**os.environ, "PARTERRE_BENCH_BOTS": str(n_bots), "PARTERRE_BENCH_WAIT": wait}
    locust = shutil.which("locust", path=os.path.dirname(sys.executable)) or "locust"
    cmd = [locust, "-f", str(ROOT / "bench" / "locust_readers.py"), "--headless", "--users", str(users),
           "--spawn-rate", str(users), "--run-time", f"{seconds}s", "--host", base, "--csv", prefix,
           "--only-summary", "--loglevel", "WARNING", "--stop-timeout", "5"]
    with open(prefix + ".log", "wb") as logf:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False, stdout=logf, stderr=subprocess.STDOUT)
    if proc.returncode not in (0, 1):  # 1: some requests failed (counted below)
        raise RuntimeError(f"locust exited with {proc.returncode}: {Path(prefix + '.log').read_text()[-2000:]}")
    out: dict[str, Any] = {}
    with open(prefix + "_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["Name"]] = {"p50": float(row["50%"]), "p99": float(row["99%"]), "n": int(row["Request Count"]),
                                "failures": int(row["Failure Count"]), "rps": float(row["Requests/s"])}
    return out


def time_rebuild(url: str, home: str) -> tuple[float, dict[str, Any], int]:
    """``parterre ratings rebuild`` (every game) in a process of its own.

    Returns:
        ``(seconds, its JSON summary, its peak RSS in KiB)``.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen([*PARTERRE, "ratings", "rebuild"], cwd=ROOT,
                            env=_env(url, home), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # its own resource usage (peak RSS), not that of every child
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    if proc.returncode != 0:
        raise RuntimeError(f"parterre ratings rebuild exited with {proc.returncode}")
    return took, json.loads(out), int(usage.ru_maxrss)


def presence_records(bot_ids: list[int], referees: int) -> dict[str, dict[str, Any]]:
    """Presence records as ``referee/cluster.py`` publishes them (``Cluster.snapshot``): the bots split over
    ``referees`` referees, one idle stream each (capacity 2, both free)."""
    out = {}
    for r in range(referees):
        rid = f"bench-referee-{r + 1}"
        bots = {str(b): {"free": 2, "open": 2, "pinned": [], "capacity": 2, "sessions": 1, "games": []}
                for b in bot_ids[r::referees]}
        out[rid] = {"id": rid, "address": f"127.0.0.1:{21550 + r}", "control_address": f"127.0.0.1:{21550 + r}",
                    "relay_address": f"127.0.0.1:{21560 + r}", "rooms": 0, "at": time.time(), "bots": bots}
    return out


def time_ticks(url: str, redis_url: str, bot_ids: list[int], repeats: int,
               log: Any = print) -> tuple[list[float], list[dict[str, Any]]]:
    """Run the ladder's tick ``repeats`` times with every bot of ``bot_ids`` online; wall seconds and details."""
    ns = f"bench10m-{secrets.token_hex(3)}"
    queue = f"bench10m-{secrets.token_hex(3)}"
    os.environ.update(PARTERRE_DATABASE_URL=url, PARTERRE_REDIS_URL=redis_url, PARTERRE_CLUSTER_NAMESPACE=ns,
                      PARTERRE_QUEUE=queue)
    import redis

    from ladder import tournaments as ladder_tournaments
    from workers import directory
    from workers import periodic as wp

    r = redis.Redis.from_url(redis_url)
    records = presence_records(bot_ids, 2)
    keys = [directory.REFEREE_KEY.format(ns=ns, id=rid) for rid in records]
    spent: dict[str, float] = defaultdict(float)
    real_plan, real_read, real_queue = ladder_tournaments.plan_ladder_round, directory.read_referees, wp.queue_matches

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        return wrapper

    ladder_tournaments.plan_ladder_round = timed("plan_ladder_round", real_plan)  # type: ignore[assignment]
    directory.read_referees = timed("read the presence", real_read)  # type: ignore[assignment]
    wp.queue_matches = timed("queue the matches", real_queue)  # type: ignore[assignment]
    times: list[float] = []
    details: list[dict[str, Any]] = []
    with psycopg.connect(url, autocommit=True) as conn:
        top = int(conn.execute("SELECT max(id) FROM matches").fetchone()[0])
    try:
        base_round = int(time.time() // LADDER_PERIOD_S)
        for i in range(repeats):
            with r.pipeline() as pipe:
                for rid, rec in records.items():
                    rec["at"] = time.time()
                    pipe.set(directory.REFEREE_KEY.format(ns=ns, id=rid), json.dumps(rec), px=60_000)
                    pipe.sadd(directory.REFEREES_KEY.format(ns=ns), rid)
                pipe.execute()
            spent.clear()
            now = (base_round + 1 + i) * LADDER_PERIOD_S + 0.5
            t0 = time.perf_counter()
            cpu0 = time.process_time()
            planned = wp.ladder_tick(now=now, period_s=LADDER_PERIOD_S)
            took = time.perf_counter() - t0
            times.append(took)
            details.append({"planned": planned, "cpu_s": time.process_time() - cpu0, **spent})
            log(f"  tick {i + 1}: {took:.3f} s ({', '.join(f'{k} {v:.3f} s' for k, v in spent.items())}); "
                f"matches planned {sum(planned.values())} {planned}")
            with psycopg.connect(url, autocommit=True) as conn:  # every bot free again for the next repeat
                conn.execute("DELETE FROM matches WHERE id > %s", (top,))
            r.delete(queue, f"{queue}.periodic")
    finally:
        ladder_tournaments.plan_ladder_round = real_plan  # type: ignore[assignment]
        directory.read_referees = real_read  # type: ignore[assignment]
        wp.queue_matches = real_queue  # type: ignore[assignment]
        r.delete(*keys, directory.REFEREES_KEY.format(ns=ns), queue, f"{queue}.periodic")
        for k in r.scan_iter(match="_kombu.binding.*"):
            if queue.encode() in r.smembers(k) or k.decode().endswith(queue):
                r.delete(k)
    return times, details


def time_retention(url: str, now: datetime, log: Any = print) -> dict[str, Any]:
    """Delete the replays of the oldest month in batches of 20,000 matches (a retention job's work), timed."""
    with psycopg.connect(url, autocommit=True) as conn:
        lo, hi, n, size = conn.execute(
            "SELECT min(match_id), max(match_id), count(*), sum(pg_column_size(data)) FROM replays "
            "WHERE stored_at < %s", (now - SPAN + timedelta(days=30),)).fetchone()
        before = int(conn.execute("SELECT pg_total_relation_size('replays')").fetchone()[0])
        t0 = time.perf_counter()
        deleted = 0
        for a in range(int(lo), int(hi) + 1, 20_000):
            cur = conn.execute("DELETE FROM replays WHERE match_id >= %s AND match_id < %s", (a, a + 20_000))
            deleted += cur.rowcount
        took = time.perf_counter() - t0
        t1 = time.perf_counter()
        conn.execute("VACUUM replays")
        vacuum = time.perf_counter() - t1
        after = int(conn.execute("SELECT pg_total_relation_size('replays')").fetchone()[0])
    log(f"  deleted {deleted:,} replays of the oldest 30 days ({int(size or 0) / 2**20:,.0f} MiB of data) in "
        f"{took:.1f} s ({deleted / max(took, 1e-9):,.0f}/s); VACUUM replays {vacuum:.1f} s; the table stays "
        f"{before / 2**30:.2f} -> {after / 2**30:.2f} GiB (the space is reused by new rows)")
    return {"deleted": deleted, "seconds": took, "vacuum_s": vacuum, "bytes": int(size or 0)}


COUNTED = ("matches", "seats", "match_attempts", "replays", "rating_history", "ratings", "bots", "accounts",
           "challenges", "tournaments", "bot_player_stats", "league_promotions")


def row_counts(url: str) -> dict[str, int]:
    """Exact row counts of the main tables."""
    with psycopg.connect(url) as conn:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}


def time_backup(admin_url: str, db: str, url: str, workdir: str, log: Any = print) -> dict[str, Any]:
    """``pg_dump -Fc``, drop, ``pg_restore -j 2`` into a new database of the same name; times and sizes."""
    counts = row_counts(url)
    dump = os.path.join(workdir, f"{db}.dump")
    u = psycopg.conninfo.conninfo_to_dict(url)
    conn_args = ["-h", str(u.get("host", "127.0.0.1")), "-p", str(u.get("port", 5432)),
                 "-U", str(u.get("user", "postgres"))]
    t0 = time.perf_counter()
    subprocess.run(["pg_dump", *conn_args, "-Fc", "-f", dump, db], check=True)
    t_dump = time.perf_counter() - t0
    size = os.path.getsize(dump)
    log(f"  pg_dump -Fc: {t_dump:.1f} s, {size / 2**30:.2f} GiB")
    create_database(admin_url, db, replace=True)
    t1 = time.perf_counter()
    subprocess.run(["pg_restore", *conn_args, "-j", "2", "-d", db, dump], check=True)
    t_restore = time.perf_counter() - t1
    log(f"  pg_restore -j 2: {t_restore:.1f} s")
    t2 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
    t_analyze = time.perf_counter() - t2
    again = row_counts(url)
    if again != counts:
        raise AssertionError(f"restored row counts differ: {counts} != {again}")
    os.remove(dump)
    return {"dump_s": t_dump, "restore_s": t_restore, "analyze_s": t_analyze, "dump_bytes": size, "rows": counts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--admin-url", default=DEFAULT_ADMIN, help="server where the bench may create a database")
    ap.add_argument("--db", default="parterre_bench_10m", help="database to create (dropped first and at the end)")
    ap.add_argument("--matches", type=int, default=10_000_000)
    ap.add_argument("--bots", type=int, default=10_000)
    ap.add_argument("--templates", type=int, default=24, help="real matches played per game and seat count")
    ap.add_argument("--users", type=int, default=50, help="concurrent Locust readers")
    ap.add_argument("--wait", default="0.5,1.5", help="a reader's wait between two pages: low,high seconds")
    ap.add_argument("--seconds", type=int, default=60, help="seconds of each Locust run")
    ap.add_argument("--repeats", type=int, default=3, help="Locust runs and ticks (the median is judged)")
    ap.add_argument("--redis-url", default=os.environ.get("PARTERRE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"),
                    help="the Redis the tick reads presence from and queues its matches on")
    ap.add_argument("--port-range", default="21500-21599", help="ports the web server may use")
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    ap.add_argument("--reuse", action="store_true", help="measure an already generated database (--keep before)")
    ap.add_argument("--skip-backup", action="store_true", help="no pg_dump / pg_restore")
    ap.add_argument("--plans", action="store_true", help="print the full plans, not only the indexes used")
    args = ap.parse_args(argv)

    url = database_url(args.admin_url, args.db)
    lo_port, hi_port = (int(x) for x in args.port_range.split("-"))
    now = datetime.now(UTC).replace(microsecond=0)
    results: list[Result] = []
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if not args.keep:  # dropped however the run ends (but a kill -9)
        atexit.register(drop_database, args.admin_url, args.db)
    if not args.reuse:
        create_database(args.admin_url, args.db, replace=True)
        from ladder import migrate

        migrate(url)
        print(f"generating {args.matches:,} matches, {args.bots:,} bots into {args.db} ...", flush=True)
        t0 = time.perf_counter()
        templates = play_templates(GAMES, (2, 3, 4), args.templates, args.seed)
        t_play = time.perf_counter() - t0
        per = {k: sum(len(t.blob) for t in v) / len(v) for k, v in templates.items()}
        print(f"  played {sum(len(v) for v in templates.values())} real matches in {t_play:.1f} s; mean stored "
              f"replay bytes: " + ", ".join(f"{g} {n}p {b:.0f}" for (g, n), b in per.items()), flush=True)
        counts = generate(url, args.matches, args.bots, args.seed, templates, now, log=lambda s: print(s, flush=True))
        gen_s = time.perf_counter() - t0
        for name, took in counts.timings.items():
            print(f"  {name}: {took:.1f} s")
        print(f"  generated in {gen_s:.0f} s: {counts.matches:,} matches ({counts.finished:,} finished; "
              f"{dict(counts.by_kind)}), {counts.seats:,} seats, {counts.history:,} rating history rows, "
              f"{counts.attempts:,} attempts, {counts.challenges:,} challenges, {counts.tournaments:,} tournaments, "
              f"{counts.bots:,} bots, {counts.accounts:,} accounts", flush=True)
        results.append(Result(Goal(f"generation of {args.matches:,} matches", "s", GOAL_GENERATION_S,
                                   higher_is_better=False), [gen_s], note="templates, COPY, indexes, ANALYZE, leagues"))
    with psycopg.connect(url) as conn:
        n_matches = int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
        n_bots = int(conn.execute("SELECT count(*) FROM bots").fetchone()[0])
        db_bytes = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])

    print(f"\nbytes per match ({n_matches:,} matches; pg_database_size {db_bytes / 2**30:.2f} GiB, "
          f"{db_bytes / n_matches:,.0f} B per match):")
    sizes = table_bytes(url)
    total = sum(b for _, b, _ in sizes)
    for t, b, rows in sizes[:12]:
        print(f"  {t:24s} {b / 2**20:10,.1f} MiB {b / n_matches:8,.1f} B/match {100 * b / total:5.1f} %  "
              f"~{rows:,} rows")
    print(f"  {'all tables':24s} {total / 2**20:10,.1f} MiB {total / n_matches:8,.1f} B/match")

    print("\nquery plans (EXPLAIN ANALYZE, BUFFERS):", flush=True)
    rng = random.Random(args.seed)
    plans = explain(url, hot_queries(url, rng, n_bots)) + explain(url, [REBUILD_SCAN], analyze=False)
    for name, plan in plans:
        took = re.search(r"Execution Time: ([\d.]+) ms", plan)
        print(f"- {name}: {took.group(1) + ' ms' if took else 'not run'}; indexes: "
              f"{', '.join(indexes_used(plan)) or 'none'}")
        if args.plans:
            print("    " + plan.replace("\n", "\n    "))

    home = tempfile.mkdtemp(prefix="parterre-bench-10m-")
    try:
        port = _free_port(lo_port, hi_port)
        print(f"\nweb: parterre web on port {port}; {args.users} Locust readers, wait {args.wait} s, "
              f"{args.repeats} runs of {args.seconds} s", flush=True)
        proc = start_web(url, port, home)
        base = f"http://127.0.0.1:{port}"
        page_p99: dict[str, list[float]] = {"leaderboard": [], "bot page": []}
        try:
            run_locust(base, args.users, max(10, args.seconds // 4), n_bots, args.wait, home, "warmup")
            for i in range(args.repeats):
                stats = run_locust(base, args.users, args.seconds, n_bots, args.wait, home, f"run{i}")
                for name in page_p99:
                    s = stats[name]
                    page_p99[name].append(s["p99"] if s["failures"] == 0 else float("inf"))
                    print(f"  run {i + 1}: {name}: {s['n']} requests, {s['failures']} failures, "
                          f"{s['rps']:.1f}/s, p50 {s['p50']:.0f} ms, p99 {s['p99']:.0f} ms", flush=True)
                print(f"  load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        finally:
            proc.terminate()
            proc.wait(20)
        note = f"{args.users} Locust readers, wait {args.wait} s, {n_matches:,} matches, {n_bots:,} bots"
        results.append(Result(Goal("web: leaderboard p99 under load", "ms (p99)", GOAL_PAGE_MS,
                                   higher_is_better=False), page_p99["leaderboard"], note=note))
        results.append(Result(Goal("web: bot page p99 under load", "ms (p99)", GOAL_PAGE_MS,
                                   higher_is_better=False), page_p99["bot page"], note=note))

        print("\nratings rebuild (parterre ratings rebuild, every game):", flush=True)
        took, summary, peak = time_rebuild(url, home)
        print(f"  {took:.1f} s, peak RSS {peak / 2**10:,.0f} MiB; {summary}")
        if summary.get("changed") != 0:
            print("  the rebuild changed ratings: the generated ratings are not those of the online updates")
        results.append(Result(Goal("ratings rebuild, every game", "s", GOAL_REBUILD_S, higher_is_better=False),
                              [took], note=f"{summary.get('matches', 0):,} rated matches; changed "
                              f"{summary.get('changed')}; peak RSS {peak / 2**10:,.0f} MiB"))

        print(f"\nmatchmaking tick (workers.periodic.ladder_tick), {n_bots:,} bots online:", flush=True)
        with psycopg.connect(url) as conn:
            ids = [int(r[0]) for r in conn.execute("SELECT id FROM bots WHERE revoked_at IS NULL ORDER BY id")]
        ticks, _ = time_ticks(url, args.redis_url, ids, args.repeats)
        results.append(Result(Goal("ladder tick, every bot online", "s", GOAL_TICK_S, higher_is_better=False),
                              ticks, note=f"{len(ids):,} bots online over 2 referees' presence records"))
    finally:
        shutil.rmtree(home, ignore_errors=True)

    print("\nretention:", flush=True)
    time_retention(url, now)
    if not args.skip_backup:
        print("\nbackup and restore:", flush=True)
        work = tempfile.mkdtemp(prefix="parterre-bench-10m-dump-")
        try:
            b = time_backup(args.admin_url, args.db, url, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"  rows checked equal after the restore: {b['rows']}")
    return report(results, f"ten million: {n_matches:,} matches, {n_bots:,} bots")


if __name__ == "__main__":
    raise SystemExit(main())
