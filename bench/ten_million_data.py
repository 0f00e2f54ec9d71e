"""The ten-million-match data set of ``bench/bench_ten_million.py``: a year of a busy ladder, generated and loaded
with ``COPY`` (docs/benchmarks.md).

:class:`LadderYear` writes, shaped like real data (docs/ladder.md):

* ``n_bots`` bots (3 of them the house bots ``house-random``, ``house-greedy``, ``house-search``,
  with their ``house_bots`` rows), owned by about 0.4 accounts per bot (1 to 12 bots each, a few
  bots without an account), 1 % revoked; each bot has a hidden strength (Elo scale, sd 200),
  an activity weight (log-normal: some bots play ten times the median) and a life time (the
  month it arrived and the month it left); 10 % play only some of the games; an API token per
  account, and one argon2id password hash shared by every account (hashing each would take minutes);
* ``n_matches`` matches over the 365 days before now, in id order: 78 % continuous-ladder
  matches of two seats (plan keys ``ladder:<game string>:r<round>:<ids>`` as
  :mod:`ladder.ladder_rounds` makes them, two bots of different accounts at most 400 Elo
  apart, 3 % of them against a league's house boss), 16 % round-robin tournaments
  (two, three or four seats, their plan keys and shared seeds per table), 6 % challenges
  (``challenges`` rows, 40 % casual); 0.3 % of the ladder's matches failed (three
  ``infra_error`` attempts, no result) and 5 % of the challenges expired; 1.5 % of the finished
  matches had an ``infra_error`` attempt before the one that finished (each attempt its own seed);
  1 % of them a fault verdict (the seat ranked last, with the referee's reason);
* **replays are real**: the templates (``bench.ladder_data.play_templates``) are matches played in
  process with the engines and stored as the ladder stores them (compact form); each generated
  match reuses one of them verbatim, its seat order matched to the template's ranks (who finishes
  where is drawn from the bots' strengths), so the match page re-simulates a genuine game and each
  row has the bytes of a real replay. The replay's header keeps the ids and seed of the game as it
  was played, not those of the match reusing it: the match's own seed, ids and seats are in its rows;
* ratings and rating history with the ladder's own Elo (``ladder.elo``) in result order, as the
  online updates make them (a ``ratings rebuild`` afterwards changes nothing: the bench checks);
  ``bot_player_stats`` as its trigger counts (rated matches only); ``bot_head_to_head`` by its
  migration's ``REBUILD``; league promotions decided by ``ladder.leagues.promote`` itself.

It is loaded with binary ``COPY ... FREEZE`` (psycopg 3 ``cursor.copy``, six streams at once) into tables
whose indexes and keys are made again afterwards (``bench.ladder_data.BulkLoad``).
"""

from __future__ import annotations

import bisect
import hashlib
import importlib
import itertools
import json
import math
import random
import secrets
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg

from bench.ladder_data import BulkLoad, Template
from ladder import elo

GAMES = ("floriferous", "lafleur", "flowar")
GAME_WEIGHTS = (0.45, 0.30, 0.25)
LADDER_TC = {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 100}
"""The ladder's time control (``PARTERRE_LADDER_TIME_CONTROL`` default ``0:0:1000:100``)."""
TC_JSON = json.dumps(LADDER_TC)
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


class LadderYear:
    """The generator (see the module docstring): :meth:`load` fills a migrated, empty database."""

    def __init__(self, n_matches: int, n_bots: int, seed: int, templates: dict[tuple[str, int], list[Template]],
                 now: datetime) -> None:
        self.rng = random.Random(seed)
        self.seed, self.n_matches, self.templates, self.now = seed, n_matches, templates, now
        self.spec, self.n_accounts = make_bots(n_bots, self.rng)
        self.picker = Picker(self.spec)
        self.start = now - SPAN
        self.account_of: list[int | None] = [None] + [b.account for b in self.spec]
        self.house_ids = {b.house: b.id for b in self.spec if b.house}
        self.organisers = list(range(1, min(self.n_accounts, 40) + 1))
        # (elo, games, wins, draws, losses, score sum, last played) per (bot, game), as ratings rows
        self.ratings: dict[tuple[int, str], list[Any]] = {}
        # (games, wins, draws, losses, score sum, last played) per (game, seats, bot), as bot_player_stats rows
        self.stats: dict[tuple[str, int, int], list[Any]] = {}
        self.tournaments: list[Tournament] = []
        self.current: dict[str, Tournament | None] = {g: None for g in GAMES}
        self.round, self.round_keys = -1, set[str]()
        self.seq = 0
        self.counts = Counts()

    # -- who plays ------------------------------------------------------------------------------

    def _elo(self, b: int, g: str) -> float:
        r = self.ratings.get((b, g))
        return elo.INITIAL_RATING if r is None else float(r[0])

    def _other_accounts(self, a: int, b: int) -> bool:
        return b != a and (self.account_of[a] is None or self.account_of[a] != self.account_of[b])

    def _ladder_pair(self, g: str, epoch: int) -> list[int]:
        """Two bots of different accounts at most 400 Elo apart, as the ladder pairs them."""
        a = self.picker.pick(self.rng, g, epoch)
        ea = self._elo(a, g)
        for _ in range(12):
            b = self.picker.pick(self.rng, g, epoch)
            if self._other_accounts(a, b) and abs(self._elo(b, g) - ea) <= 400:
                return [a, b]
        while True:  # nobody near enough: anyone of another account (a later round would find one)
            b = self.picker.pick(self.rng, g, epoch)
            if self._other_accounts(a, b):
                return [a, b]

    def _tournament_match(self, g: str, when: datetime, epoch: int) -> Planned:
        t = self.current[g]
        p = next(t.plan, None) if t is not None else None
        if p is not None:
            return p
        rng = self.rng
        n = rng.choices((2, 3, 4), (60, 20, 20))[0]
        size = rng.randint(16, 40) if n == 2 else rng.choice((16, 20, 24))
        chosen: list[int] = []
        owners: set[int] = set()
        while len(chosen) < size:  # one bot per account: their matches are rated
            b = self.picker.pick(rng, g, epoch)
            o = self.account_of[b]
            if b in chosen or (o is not None and o in owners):
                continue
            chosen.append(b)
            if o is not None:
                owners.add(o)
        t = Tournament(len(self.tournaments) + 1, g, n, chosen, when, rng.choice(self.organisers))
        t.plan = tournament_plan(t, rng)
        self.tournaments.append(t)
        self.current[g] = t
        return next(t.plan)

    def _challenge(self, g: str, epoch: int) -> Planned:
        rng = self.rng
        n = 2 if rng.random() < 0.9 else rng.choice((3, 4))
        rated = rng.random() < 0.6
        if n == 2 and rated:
            bots = self._ladder_pair(g, epoch)
        else:
            bots = []
            while len(bots) < n:
                b = self.picker.pick(rng, g, epoch)
                if b not in bots:
                    bots.append(b)
            owners = [self.account_of[b] for b in bots if self.account_of[b] is not None]
            if len(set(owners)) != len(owners):
                rated = False  # a rated challenge cannot seat two bots of one account
        status = "expired" if rng.random() < 0.05 else "finished"
        return Planned("challenge", g, n, bots, None, "challenge:" + _hex(rng, 12), None, rated, status)

    def _ladder_match(self, g: str, when: datetime, epoch: int) -> Planned:
        rng = self.rng
        rnd = int(when.timestamp() // LADDER_PERIOD_S)
        if rnd != self.round:
            self.round = rnd
            self.round_keys.clear()
        while True:
            if rng.random() < 0.03:  # against a league's house boss
                bots = [self.picker.pick(rng, g, epoch), self.house_ids[rng.choice(("random", "greedy", "search"))]]
                kind = "boss"
            else:
                bots, kind = self._ladder_pair(g, epoch), "ladder"
            rng.shuffle(bots)
            key = f"ladder:{self.templates[g, 2][0].game_string}:r{rnd}:{'-'.join(str(b) for b in sorted(bots))}"
            if key not in self.round_keys:  # the same two bots twice in one round: the round planned it once
                self.round_keys.add(key)
                failed = rng.random() < 0.003
                return Planned(kind, g, 2, bots, None, key, None, True, "failed" if failed else "finished")

    def _plan(self, when: datetime, epoch: int) -> Planned:
        x = self.rng.random()
        g = self.rng.choices(GAMES, GAME_WEIGHTS)[0]
        if x < 0.16:
            return self._tournament_match(g, when, epoch)
        if x < 0.22:
            return self._challenge(g, epoch)
        return self._ladder_match(g, when, epoch)

    # -- the results -------------------------------------------------------------------------------

    def _seat_order(self, p: Planned, tpl: Template) -> list[int]:
        """The bots per seat of ``tpl``: who finishes where is drawn from their strengths."""
        if p.n != 2:
            return _rank_seats(self.rng, tpl, p.bots, self.spec)
        if tpl.ranks[0] == tpl.ranks[1]:
            return list(p.bots)
        a, b = p.bots
        pa = 1 / (1 + 10 ** ((self.spec[b - 1].strength - self.spec[a - 1].strength) / 400))
        winner, loser = (a, b) if self.rng.random() < pa else (b, a)
        return [winner, loser] if tpl.ranks[0] < tpl.ranks[1] else [loser, winner]

    def _rate(self, history: Any, m: int, g: str, seq: int, bots: list[int], tpl: Template, finished: datetime) -> None:
        """The online Elo update of a rated result (``ladder.rating_order._apply``) and its derived rows."""
        ranks = list(tpl.ranks)
        states = []
        for b in bots:
            st = self.ratings.get((b, g))
            if st is None:
                st = self.ratings[b, g] = [elo.INITIAL_RATING, 0, 0, 0, 0, 0.0, None]
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
            history.write_row((m, b, g, seq, before[s], before[s] + d, d))
            ps = self.stats.get((g, tpl.players, b))
            if ps is None:
                ps = self.stats[g, tpl.players, b] = [0, 0, 0, 0, 0.0, None]
            ps[0] += 1
            if ranks[s] == 1:
                ps[1 if firsts == 1 else 2] += 1
            else:
                ps[3] += 1
            ps[4] += tpl.scores[s]
            ps[5] = finished
        self.counts.history += len(bots)

    def _write_match(self, out: dict[str, Any], m: int) -> None:
        rng, counts = self.rng, self.counts
        finished = self.start + timedelta(seconds=m * SPAN.total_seconds() / max(1, self.n_matches))
        p = self._plan(finished, min(EPOCHS - 1, int((m - 1) * EPOCHS / self.n_matches)))
        counts.by_kind[p.kind] += 1
        g, n = p.game, p.n
        tpl = rng.choice(self.templates[g, n])
        m_seed = p.seed or _hex(rng, 32)
        commit = hashlib.sha256(m_seed.encode()).hexdigest()
        created = finished - timedelta(seconds=90 + 5 * tpl.steps // 10)
        started = created + timedelta(seconds=rng.randint(1, 20))
        worker = f"worker-{m % 4 + 1}@parterre-worker-{m % 2 + 1}"
        attempts = 1
        if p.status == "failed":
            attempts = 3
            for a in (1, 2, 3):
                out["match_attempts"].write_row((m, a, "infra_error", worker, "no referee answered "
                                                 "(StartMatch: UNAVAILABLE)", started,
                                                 started + timedelta(seconds=5), _hex(rng, 32), None))
            counts.attempts += 3
        elif p.status == "finished" and rng.random() < 0.015:
            attempts = 2
            s1 = _hex(rng, 32)
            out["match_attempts"].write_row((m, 1, "infra_error", worker, "referee restarted during the match",
                                             started, started + timedelta(seconds=30), s1,
                                             hashlib.sha256(s1.encode()).hexdigest()))
            counts.attempts += 1
        counts.matches += 1
        if p.status != "finished":  # seats without a result, no replay, no rating
            attempts = 0 if p.status == "expired" else attempts
            for s, b in enumerate(p.bots):
                out["seats"].write_row((m, s, b, None, None, None, None, None, None, None))
            counts.seats += n
            out["matches"].write_row((m, p.tournament, p.plan_key, g, tpl.game_string, m_seed, commit, TC_JSON,
                                      p.status, attempts, worker if attempts else None, None, created,
                                      started if attempts else None, None, None, p.rated, None, None))
            if p.kind == "challenge":
                out["challenges"].write_row((m, self.account_of[p.bots[0]], p.rated, "expired",
                                             "not every bot was connected in time", created,
                                             created + timedelta(minutes=10), None))
                counts.challenges += 1
            return
        bots = self._seat_order(p, tpl)
        verdicts = ["normal"] * n
        reasons: list[str | None] = [None] * n
        if rng.random() < 0.01:
            worst = tpl.ranks.index(max(tpl.ranks))
            verdicts[worst], reasons[worst] = rng.choice(FAULTS)
        self.seq += 1
        result_seq, rating_seq = self.seq, None
        if p.rated:
            self.seq += 1
            rating_seq = self.seq
            self._rate(out["rating_history"], m, g, rating_seq, bots, tpl, finished)
        for s, b in enumerate(bots):
            out["seats"].write_row((m, s, b, tpl.ranks[s], tpl.scores[s], verdicts[s],
                                    tpl.decisions[s] * rng.randint(20, 400), tpl.decisions[s],
                                    self.spec[b - 1].version, reasons[s]))
        counts.seats += n
        out["match_attempts"].write_row((m, attempts, "finished", worker, None, started, finished, m_seed, commit))
        counts.attempts += 1
        out["replays"].write_row((m, tpl.format, "zstd", tpl.blob, tpl.raw_bytes, finished))
        counts.replays += 1
        out["matches"].write_row((m, p.tournament, p.plan_key, g, tpl.game_string, m_seed, commit, TC_JSON,
                                  "finished", attempts, worker, None, created, started, finished, result_seq,
                                  p.rated, rating_seq, None))
        if p.kind == "challenge":
            out["challenges"].write_row((m, self.account_of[p.bots[0]], p.rated, "started", None, created,
                                         created + timedelta(minutes=10), started))
            counts.challenges += 1
        counts.finished += 1

    # -- the load ------------------------------------------------------------------------------------

    def load(self, url: str, log: Any = print) -> Counts:
        """Fill the migrated, empty database at ``url``; returns what it holds, with the time of each step."""
        timings = self.counts.timings
        bulk = BulkLoad(url, [*BIG_TABLES, *SMALL_TABLES])
        bulk.drop()
        t0 = time.perf_counter()
        copies = {t: bulk.copy(t, _columns(t)) for t in BIG_TABLES}
        out = {t: cm.__enter__() for t, cm in copies.items()}
        ok = False
        try:
            for m in range(1, self.n_matches + 1):
                self._write_match(out, m)
                if m % 1_000_000 == 0:
                    took = time.perf_counter() - t0
                    log(f"  {m:,} matches written in {took:.0f} s ({m / took:,.0f} matches/s)")
            ok = True
        finally:
            for cm in copies.values():
                cm.__exit__(*((None, None, None) if ok else sys.exc_info()))
        timings["COPY of the matches (six streams)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._write_people_and_results(bulk)
        timings["COPY of bots, accounts, tournaments, ratings"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        bulk.restore(workers=2, log=log)
        bulk.check()
        timings["indexes and constraints made again"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        with psycopg.connect(url) as conn:  # derived from the seats, as its trigger would have (migration 0017)
            conn.execute("SET work_mem = '256MB'")
            conn.execute(importlib.import_module("ladder.migrations.versions.0017_head_to_head").REBUILD)
            conn.commit()
        timings["bot_head_to_head (migration 0017's REBUILD)"] = time.perf_counter() - t0
        with psycopg.connect(url, autocommit=True) as conn:
            for sq, table in (("bots_id_seq", "bots"), ("tournaments_id_seq", "tournaments"),
                              ("matches_id_seq", "matches"), ("accounts_id_seq", "accounts"),
                              ("api_tokens_id_seq", "api_tokens")):
                conn.execute(f"SELECT setval('{sq}', (SELECT max(id) FROM {table}))")
            conn.execute("SELECT setval('match_result_seq', %s)", (self.seq,))
            t0 = time.perf_counter()
            conn.execute("ANALYZE")
            timings["ANALYZE"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        from ladder.db import make_pool
        from ladder.leagues import promote

        pool = make_pool(url, min_size=1, max_size=2)
        try:
            promoted = promote(pool, now=self.now)
        finally:
            pool.close()
        timings[f"league promotions (ladder.leagues.promote: {len(promoted)})"] = time.perf_counter() - t0
        self.counts.tournaments, self.counts.accounts = len(self.tournaments), self.n_accounts
        self.counts.bots = len(self.spec)
        return self.counts

    def _write_people_and_results(self, bulk: BulkLoad) -> None:
        """Accounts, tokens, bots, house bots, tournaments, and the ratings and statistics the matches made."""
        start, rng = self.start, self.rng
        pw_hash = _password_hash()
        with bulk.copy("accounts", _columns("accounts")) as c:
            for a in range(1, self.n_accounts + 1):
                role = "admin" if a == 1 else "organiser" if a in self.organisers else "participant"
                c.write_row((a, f"player{a:05d}", pw_hash, role, "active", start - timedelta(days=30, seconds=-a)))
        with bulk.copy("api_tokens", _columns("api_tokens")) as c:
            for a in range(1, self.n_accounts + 1):
                token = "ptk_" + secrets.token_urlsafe(32)
                c.write_row((a, a, hashlib.sha256(token.encode()).hexdigest(), token[:8], "ci",
                             ["bot:manage", "challenge"], start, self.now - timedelta(hours=rng.randint(1, 2000))))
        with bulk.copy("bots", _columns("bots")) as c:
            for b in self.spec:
                c.write_row((b.id, b.name, b.version, "house" if b.house else None,
                             hashlib.sha256(f"token-{b.id}-{self.seed}".encode()).hexdigest(),
                             start + SPAN * (b.last + 1) / EPOCHS if b.revoked else None,
                             start + SPAN * b.first / EPOCHS - timedelta(days=1), b.account,
                             "" if b.house else f"a bot of player{b.account or 0:05d}", list(b.games), b.accepts,
                             b.house is not None))
        with bulk.copy("house_bots", _columns("house_bots")) as c:
            for b in self.spec:
                if b.house:
                    c.write_row((b.id, b.house, list(GAMES)))
        with bulk.copy("tournaments", _columns("tournaments")) as c:
            for t in self.tournaments:
                c.write_row((t.id, f"{t.game.capitalize()} round robin {t.id}", t.game, "{}", "round_robin", [t.n],
                             2 if t.n == 2 else 12, TC_JSON, "planned", t.created, t.organiser))
        with bulk.copy("tournament_bots", _columns("tournament_bots")) as c:
            for t in self.tournaments:
                for pos, b in enumerate(t.bots):
                    c.write_row((t.id, b, pos))
        with bulk.copy("ratings", _columns("ratings")) as c:
            for (b, g), st in sorted(self.ratings.items()):
                c.write_row((b, g, *st))
        with bulk.copy("bot_player_stats", _columns("bot_player_stats")) as c:
            for (g, n, b), st in sorted(self.stats.items()):
                c.write_row((g, n, b, *st))


def _password_hash() -> str:
    """One argon2id hash (as ``ladder.accounts`` stores them) shared by every generated account: hashing
    each would take minutes, and the hash's bytes are what matter here."""
    from ladder.accounts import _hasher

    return str(_hasher.hash("bench-password"))


