"""A competition's final evaluation: duplicate deals in batches until neighbours are separated.

The rules are in docs/competitions.md ("The final evaluation"); this module is their code.

From ``final_at`` the locked versions (:func:`ladder.competition_season.lock_entrants`) play
**batches**. Batch ``b`` is one duplicate deal (:func:`ladder.match_plans.plan_deal_in`): its
seed is ``sha256("<evaluation seed>:batch:<b>")``, every table plays it in every cyclic seat
rotation, and its player count is ``player_counts[(b - 1) mod len]``, or the next count in the list
when that one cannot seat a pair left (too few entrants of distinct accounts). Its tables are built
around the **neighbouring pairs not yet separated** in the current order, top of the table
first (:func:`batch_tables`): a pair of two accounts sits at one table; two bots of one account
never share a table, so each sits at its own table with the same opponents, on the same deal.
A batch is cut to the match budget left.

After each batch the Bradley-Terry fit of the evaluation's counted matches (every seat played
by its locked version, disqualified and withdrawn entrants' seats left out) gives an order and,
for each neighbouring pair, ``z``: the signed root of the likelihood-ratio statistic of the two
being equal (:mod:`ladder.stats.bradley_terry`, ``z_next``). The pair is **separated** when
``z >= critical_z(B) = phi_inv(1 - 0.05 / (2 B))``, ``B`` the most batches the evaluation may
play: each pair is looked at after every batch, and testing each look at 5 % / B (Bonferroni)
keeps the chance of ever separating two equal bots under 5 % however many looks it takes.
The evaluation stops when every neighbouring pair is separated, after ``B`` batches, when no
further table fits the budget, or when no table can seat the pairs left. Places are then
frozen (:func:`places`): an entrant is placed above another when a separated neighbouring pair
lies between them, or when the two are apart on their own evidence (:func:`pairs_apart`, Wald z
from the fit's covariance, at :func:`pair_critical_z`: Bonferroni over every pair and every
look); an entrant's places run from 1 + those above it to ``n`` less those below it
(``place_low``-``place_high``), never a false order.

Before it starts the evaluation stores its **estimate** (:func:`estimate`): per neighbouring
pair of the season's table, the matches seating both that would bring the expected ``z`` of
their season gap to ``critical_z(B) + 0.84`` (80 % power), and the sum; a pair without a
season gap cannot be estimated and is expected to stay shared.

Everything follows from the seed and the results: re-running from the same seed
(:func:`rerun_evaluation`) deals the same seeds batch by batch and, from the same season
table, plans the same first batch.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from ladder.competition_season import (
    INTERVAL,
    EntrantRow,
    TableRow,
    fit,
    key_prefix,
    load_entrants,
    load_records,
    lock_entrants,
    rated_bot,
    rows_of,
)
from ladder.db import connection, run_transaction
from ladder.errors import CompetitionClosedError, CompetitionError, CompetitionNotFoundError
from ladder.match_plans import game_string_for, new_seed, plan_deal_in, seed_commitment
from ladder.stats.bradley_terry import BTFit, se_between
from ladder.stats.scales import phi_inv

ALPHA = 0.05
"""Chance, per neighbouring pair, that the evaluation separates two equal bots (over all its looks)."""
POWER = 0.8
"""The estimate's power: the matches at which an assumed true gap is separated four times out of five."""
MAX_BUDGET = 1_000_000
"""Most matches an evaluation's budget may allow."""
MAX_BATCHES = 1000
"""Most batches an evaluation may play."""


def critical_z(max_batches: int) -> float:
    """The z a neighbouring pair must reach after a batch: ``phi_inv(1 - ALPHA / (2 max_batches))``."""
    return phi_inv(1.0 - ALPHA / (2.0 * max_batches))


def batch_seed(seed: str, batch: int) -> str:
    """The deal seed of batch ``batch`` of an evaluation with seed ``seed`` (64 hex characters)."""
    return hashlib.sha256(f"{seed}:batch:{int(batch)}".encode("ascii")).hexdigest()


def deal_key(competition_id: int, run: int, batch: int) -> str:
    """The deal key of one batch: ``competition:<id>:e<run>:b<batch>``."""
    return f"{key_prefix(competition_id)}e{int(run)}:b{int(batch)}"


# -- the pure parts: places, tables, the estimate -------------------------------------------------


def pair_critical_z(max_batches: int, entrants: int) -> float:
    """The z two entrants must reach to be placed apart on their own evidence, neighbours or not:
    ``phi_inv(1 - ALPHA / (2 B K))`` with ``K = n (n - 1) / 2`` pairs and ``B`` looks (Bonferroni over
    every pair and every batch: the chance that any two equal entrants are ever placed apart stays under
    ``ALPHA``)."""
    pairs = max(1, entrants * (entrants - 1) // 2)
    return phi_inv(1.0 - ALPHA / (2.0 * max(1, max_batches) * pairs))


def pairs_apart(result: BTFit, z: float) -> set[tuple[int, int]]:
    """Positions ``(a, b)`` of ``result.ratings``, ``a`` above ``b``, whose rating difference over its
    standard error (Wald, from the fit's covariance) reaches ``z``; empty for a fit without covariance."""
    if not result.covariance:
        return set()
    lines = result.ratings
    out = set()
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            se = se_between(result, a, b)
            if se > 0.0 and (lines[a].elo - lines[b].elo) / se >= z:
                out.add((a, b))
    return out


def separations(result: BTFit, z: float) -> list[bool]:
    """For each line of ``result`` (a fit with ``information``) but the last: whether it is separated from
    the next one down (its ``z_next`` reaches ``z``)."""
    return [line.z_next is not None and line.z_next >= z for line in result.ratings[:-1]]


def places(separated: Sequence[bool], apart: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """``(place_low, place_high)`` of each line. Line ``a`` is placed above line ``b`` (``a < b``) when a
    neighbouring pair between them is separated, or ``(a, b)`` is in ``apart`` (placed apart on their own
    evidence, :func:`pairs_apart`); a line's best place is 1 + the lines placed above it, its worst the
    number of lines less those placed below it. With ``apart`` empty, a run of lines joined by pairs not
    separated shares the places it spans (``[True, False]`` -> ``[(1, 1), (2, 3), (2, 3)]``)."""
    n = len(separated) + 1
    cut = [0]  # separated neighbouring pairs above each line
    for s in separated:
        cut.append(cut[-1] + (1 if s else 0))
    extra = set(apart)

    def above(a: int, b: int) -> bool:
        return cut[b] > cut[a] or (a, b) in extra

    return [(1 + sum(above(a, i) for a in range(i)), n - sum(above(i, b) for b in range(i + 1, n)))
            for i in range(n)]


def batch_tables(order: Sequence[int], separated: Sequence[bool], n: int, *, account: Mapping[int, int],
                 rating: Mapping[int, float]) -> list[list[int]]:
    """The tables of a batch (see the module doc; pure), top of the table first, without repeats.

    Each neighbouring pair ``(order[i], order[i + 1])`` not separated gets: one table with both and
    ``n - 2`` other bots, or, when the two share an account, two tables, each with one of them and
    the same ``n - 1`` other bots. The other bots are the ones closest in rating to the pair, of
    accounts not at the table yet; a pair without enough of them gets no table (it stays shared).
    """
    tables: list[list[int]] = []
    seen: set[frozenset[int]] = set()
    for i, done in enumerate(separated):
        if done:
            continue
        a, b = order[i], order[i + 1]
        middle = (rating[a] + rating[b]) / 2.0
        shared = account[a] == account[b]
        others = [x for x in sorted(order, key=lambda x: (abs(rating[x] - middle), order.index(x)))
                  if x not in (a, b)]
        fill: list[int] = []
        owners = {account[a], account[b]}
        for x in others:
            if len(fill) == (n - 1 if shared else n - 2):
                break
            if account[x] not in owners:
                fill.append(x)
                owners.add(account[x])
        if len(fill) < (n - 1 if shared else n - 2):
            continue
        for table in ([[a, *fill], [b, *fill]] if shared else [[a, b, *fill]]):
            if frozenset(table) not in seen:
                seen.add(frozenset(table))
                tables.append(table)
    return tables


def estimate(result: BTFit, account: Mapping[int, int], n: int, z: float) -> dict[str, Any]:
    """The matches needed to separate each neighbouring pair of ``result`` (the season's fit).

    Model: two bots ``d`` Elo apart score ``p = 1 / (1 + 10^(-d / 400))`` against each other;
    after ``k`` pairwise results the expected likelihood-ratio statistic of "equal" is
    ``2 k KL(p || 1/2)`` (``KL(p || 1/2) = ln 2 - H(p)``, in nats), so the expected ``z`` is
    ``sqrt(2 k KL)`` and reaches ``z + phi_inv(POWER)`` at ``k = (z + phi_inv(POWER))^2 / (2 KL)``.
    A match of ``n`` seats seating both gives ``1 / (n - 1)`` of a pairwise result; two bots of one
    account meet only through common opponents (counted as twice the matches).

    Returns:
        ``{"pairs": [{"upper", "lower", "gap", "matches"}], "total_matches", "unknown", "model"}``;
        ``matches`` is None (and the pair counted in ``unknown``) for a gap under 1 Elo point.
    """
    target = z + phi_inv(POWER)
    pairs: list[dict[str, Any]] = []
    for a, b in zip(result.ratings, result.ratings[1:], strict=False):
        gap = a.elo - b.elo
        needed: int | None = None
        if gap >= 1.0:
            p = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
            divergence = math.log(2.0) + p * math.log(p) + (1.0 - p) * math.log(1.0 - p)
            results = target ** 2 / (2.0 * divergence)
            needed = math.ceil(results * (n - 1) * (2 if account[rated_bot(a)] == account[rated_bot(b)] else 1))
        pairs.append({"upper": rated_bot(a), "lower": rated_bot(b), "gap": round(gap, 1), "matches": needed})
    return {"pairs": pairs, "total_matches": sum(p["matches"] or 0 for p in pairs),
            "unknown": sum(p["matches"] is None for p in pairs),
            "model": f"expected z of the season gap reaches {target:.2f} ({POWER:.0%} power), "
                     f"{n} seats a match"}


# -- storage -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One run of a competition's final evaluation, as a page shows it.

    Attributes:
        seed: the evaluation's seed; None (hidden) while it runs: it deals every batch.
        seed_commitment: sha256 of the seed, shown from the start.
        params: ``budget``, ``max_batches``, ``alpha``, ``critical_z``, ``player_counts``, ``interval``.
        estimate: :func:`estimate` of the season's table, made before the first batch.
        status: ``running``, ``finished`` or ``superseded`` (a re-run replaced it).
        batches / matches_planned / matches_played: progress; ``overlapping``: neighbouring pairs
            not separated after the last batch (None before the first refit).
        progress: one entry per refit: ``{"batch", "matches", "counted", "mismatched", "overlapping"}``.
        stop_reason: ``separated``, ``batches``, ``budget``, ``no_table`` (no table of any of the player counts
            can seat a pair left, e.g. two bots of one account and no other opponent) or ``entrants`` (fewer
            than two to place).
        recomputed_at / recomputed_reason: the frozen table was recomputed (a disqualification).
    """

    id: int
    competition_id: int
    run: int
    seed: str | None
    seed_commitment: str
    params: dict[str, Any]
    estimate: dict[str, Any]
    status: str
    batches: int
    matches_planned: int
    matches_played: int
    overlapping: int | None
    progress: list[dict[str, Any]]
    stop_reason: str | None
    started_at: datetime
    finished_at: datetime | None
    recomputed_at: datetime | None
    recomputed_reason: str | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times ISO-8601)."""
        out = asdict(self)
        for k in ("started_at", "finished_at", "recomputed_at"):
            out[k] = out[k].isoformat() if out[k] is not None else None
        return out


@dataclass(frozen=True, slots=True)
class FinalRow:
    """One line of a frozen final table; ``place_low == place_high`` unless the place is shared.

    Attributes:
        low / high: the rating's 95 % interval (Wald); places are decided by ``z_next`` (the evidence
            against the next place down), not by whether two intervals overlap.
        standing: ``placed``, ``disqualified`` or ``withdrawn`` (its bot was retired before the evaluation).
    """

    place_low: int | None
    place_high: int | None
    bot_id: int
    name: str
    account: str
    rating: float | None
    low: float | None
    high: float | None
    z_next: float | None
    matches: int
    standing: str

    @property
    def place(self) -> str:
        """``"3"``, ``"2-4"`` (shared) or ``"-"``."""
        if self.place_low is None:
            return "-"
        return str(self.place_low) if self.place_low == self.place_high else f"{self.place_low}-{self.place_high}"


_EVAL_COLS = ("id, competition_id, run, seed, params, estimate, status, batches, matches_planned, matches_played, "
              "overlapping, progress, stop_reason, started_at, finished_at, recomputed_at, recomputed_reason")


def _evaluation(row: Sequence[Any]) -> Evaluation:
    (eid, cid, run, seed, params, est, status, batches, planned, played, overlapping, progress, reason, started,
     finished, recomputed, why) = row
    return Evaluation(int(eid), int(cid), int(run), seed if status != "running" else None, seed_commitment(seed),
                      dict(params), dict(est), status, int(batches), int(planned), int(played), overlapping,
                      list(progress), reason, started, finished, recomputed, why)


def evaluation(pool: ConnectionPool, competition_id: int) -> Evaluation | None:
    """The competition's current evaluation (running or finished), or None."""
    with connection(pool) as conn:
        row = conn.execute(f"SELECT {_EVAL_COLS} FROM competition_evaluations WHERE competition_id = %s "
                           "AND status <> 'superseded'", (competition_id,)).fetchone()
    return None if row is None else _evaluation(row)


def final_table(pool: ConnectionPool, competition_id: int) -> list[FinalRow]:
    """The frozen final table of the competition's finished evaluation, best first (placed entrants by
    place and rating, then the others); empty before it finished."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT r.place_low, r.place_high, r.bot_id, b.name, coalesce(a.username, ''), r.rating, r.rating_low, "
            "r.rating_high, r.z_next, r.matches, r.standing FROM competition_final_rows r "
            "JOIN competition_evaluations v ON v.id = r.evaluation_id AND v.status = 'finished' "
            "JOIN bots b ON b.id = r.bot_id LEFT JOIN accounts a ON a.id = b.account_id "
            "WHERE v.competition_id = %s ORDER BY r.place_low NULLS LAST, r.rating DESC NULLS LAST, r.bot_id",
            (competition_id,)).fetchall()
    return [FinalRow(*r) for r in rows]


# -- running it -------------------------------------------------------------------------------


def _locked_competition(conn: Any, competition_id: int) -> tuple[Any, ...]:
    row = conn.execute(
        "SELECT game, game_options, player_counts, time_control, deadline_at, final_at, locked_at, final_budget, "
        "final_max_batches FROM competitions WHERE id = %s FOR UPDATE", (competition_id,)).fetchone()
    if row is None:
        raise CompetitionNotFoundError(f"no competition with id {competition_id}")
    return tuple(row)


@dataclass(frozen=True, slots=True)
class _State:
    """An evaluation's entrants and current fit, read inside its transaction."""

    placed: list[EntrantRow]
    excluded: list[EntrantRow]
    result: BTFit
    games: Mapping[int, int]
    counted: int
    mismatched: int


def _state(conn: Any, competition_id: int, run: int | None, *, covariance: bool = False) -> _State:
    """The entrants placed (neither disqualified nor retired) and the fit of their matches: the season's
    (``run`` None: the order the evaluation starts from), or those of evaluation run ``run`` that their
    locked versions played."""
    entrants = load_entrants(conn, competition_id)
    placed = [e for e in entrants if not e.out and not e.retired]
    excluded = [e for e in entrants if e.out or e.retired]
    if run is None:
        data = load_records(conn, competition_id, f"{key_prefix(competition_id)}s",
                            excluded=[e.bot_id for e in excluded])
    else:
        data = load_records(conn, competition_id, f"{key_prefix(competition_id)}e{run}:",
                            excluded=[e.bot_id for e in excluded],
                            locked={e.bot_id: e.locked_version for e in entrants})
    result = fit(data.records, [e.bot_id for e in placed], covariance=covariance)
    return _State(placed, excluded, result, data.games, len(data.records), data.mismatched)


def _order(state: _State) -> list[int]:
    return [rated_bot(line) for line in state.result.ratings]


def start_evaluation(pool: ConnectionPool, competition_id: int, *, now: datetime, seed: str | None = None,
                     budget: int | None = None, max_batches: int | None = None) -> tuple[Evaluation, list[int]]:
    """Start the final evaluation (the workers' tick does at ``final_at``): lock the versions if the tick
    has not yet, store the parameters and the estimate, plan the first batch.

    Args:
        pool: ladder connection pool.
        competition_id: the competition.
        now: the time the schedule is judged at (at or after ``final_at``).
        seed: 64 hex characters (a re-run passes the first run's); fresh when None.
        budget / max_batches: the evaluation's limits; default the competition's.

    Returns:
        The evaluation and the match ids of its first batch (to queue).

    Raises:
        CompetitionNotFoundError: no such competition.
        CompetitionClosedError: ``now`` is before ``final_at``.
        CompetitionError: an evaluation is running or finished (re-run it instead), or a bad seed or limit.
    """
    return run_transaction(pool, lambda conn: _start(conn, competition_id, now, seed, budget, max_batches))


def _start(conn: Any, competition_id: int, now: datetime, seed: str | None, budget: int | None,
           max_batches: int | None) -> tuple[Evaluation, list[int]]:
    """:func:`start_evaluation` inside the caller's transaction."""
    if seed is not None and (len(seed) != 64 or any(c not in "0123456789abcdef" for c in seed)):
        raise CompetitionError("an evaluation seed is 64 lowercase hex characters")
    _, _, counts, _, deadline, final_at, locked_at, default_budget, default_batches = (
        _locked_competition(conn, competition_id))
    if now < final_at:
        raise CompetitionClosedError(f"competition {competition_id}'s final evaluation starts at "
                                     f"{final_at.isoformat()}")
    live = conn.execute("SELECT run, status FROM competition_evaluations WHERE competition_id = %s "
                        "AND status <> 'superseded'", (competition_id,)).fetchone()
    if live is not None:
        raise CompetitionError(f"competition {competition_id}'s evaluation (run {live[0]}) is {live[1]}; "
                               "re-run it to start again")
    limit = int(budget if budget is not None else default_budget)
    batches = int(max_batches if max_batches is not None else default_batches)
    if not (1 <= limit <= MAX_BUDGET and 1 <= batches <= MAX_BATCHES):
        raise CompetitionError(f"the budget is 1-{MAX_BUDGET} matches and max_batches 1-{MAX_BATCHES}, "
                               f"got {limit} and {batches}")
    if locked_at is None:
        lock_entrants(conn, competition_id, deadline)
        conn.execute("UPDATE competitions SET locked_at = %s WHERE id = %s", (now, competition_id))
    z = critical_z(batches)
    state = _state(conn, competition_id, None)
    account = {e.bot_id: e.account_id for e in state.placed}
    params = {"budget": limit, "max_batches": batches, "alpha": ALPHA, "critical_z": round(z, 4),
              "player_counts": list(counts), "interval": INTERVAL}
    run = int(conn.execute("SELECT coalesce(max(run), 0) + 1 FROM competition_evaluations "
                           "WHERE competition_id = %s", (competition_id,)).fetchone()[0])
    eid = int(conn.execute(
        "INSERT INTO competition_evaluations (competition_id, run, seed, params, estimate, started_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
        (competition_id, run, seed or new_seed()[0], Jsonb(params),
         Jsonb(estimate(state.result, account, int(counts[0]), z)), now)).fetchone()[0])
    planned = _next_batch(conn, competition_id, eid, state, [False] * max(0, len(state.placed) - 1), now)
    return _read(conn, eid), planned


def advance_evaluation(pool: ConnectionPool, competition_id: int, *, now: datetime) -> list[int]:
    """After a batch has ended (no match of it planned or running): refit, record the progress, and plan
    the next batch or freeze the final table (see the module doc). Idempotent; the workers' tick calls it.

    Returns:
        The match ids of the batch planned now (to queue); empty when the batch is still playing, the
        evaluation has finished, or there is none.

    Raises:
        CompetitionNotFoundError: no such competition.
    """

    def advance(conn: Any) -> list[int]:
        _locked_competition(conn, competition_id)
        row = conn.execute("SELECT id, run, batches FROM competition_evaluations WHERE competition_id = %s "
                           "AND status = 'running'", (competition_id,)).fetchone()
        if row is None:
            return []
        eid, run, batch = int(row[0]), int(row[1]), int(row[2])
        playing = conn.execute(
            "SELECT count(*) FROM matches WHERE competition_id = %s AND starts_with(plan_key, %s) "
            "AND status IN ('planned', 'running', 'waiting')",
            (competition_id, deal_key(competition_id, run, batch) + ":")).fetchone()[0]
        if playing:
            return []
        state = _state(conn, competition_id, run)
        z = float(conn.execute("SELECT (params->>'critical_z')::float FROM competition_evaluations WHERE id = %s",
                               (eid,)).fetchone()[0])
        separated = separations(state.result, z)
        played = int(conn.execute(
            "SELECT count(*) FROM matches WHERE competition_id = %s AND starts_with(plan_key, %s) "
            "AND status = 'finished'", (competition_id, f"{key_prefix(competition_id)}e{run}:")).fetchone()[0])
        entry = {"batch": batch, "matches": played, "counted": state.counted, "mismatched": state.mismatched,
                 "overlapping": separated.count(False)}
        conn.execute("UPDATE competition_evaluations SET matches_played = %s, overlapping = %s, "
                     "progress = progress || %s WHERE id = %s", (played, entry["overlapping"], Jsonb([entry]), eid))
        return _next_batch(conn, competition_id, eid, state, separated, now)

    return run_transaction(pool, advance)


def _next_batch(conn: Any, competition_id: int, eid: int, state: _State, separated: list[bool],
                now: datetime) -> list[int]:
    """Plan the evaluation's next batch, or freeze its table when it stops; the new match ids."""
    game, options, counts, tc, *_ = _locked_competition(conn, competition_id)
    run, seed, batch, planned, params = conn.execute(
        "SELECT run, seed, batches, matches_planned, params FROM competition_evaluations WHERE id = %s",
        (eid,)).fetchone()
    stop = None
    tables: list[list[int]] = []
    if len(state.placed) < 2:
        stop = "entrants"
    elif all(separated):
        stop = "separated"
    elif batch >= int(params["max_batches"]):
        stop = "batches"
    else:
        order = _order(state)
        account = {e.bot_id: e.account_id for e in state.placed}
        rating = {rated_bot(line): line.elo for line in state.result.ratings}
        for k in range(len(counts)):  # the batch's count, or the next one in the list that can seat a pair
            n = int(counts[(batch + k) % len(counts)])
            tables = batch_tables(order, separated, n, account=account, rating=rating)
            if tables:
                break
        affordable = tables[:max(0, (int(params["budget"]) - int(planned)) // n)]
        stop = "no_table" if not tables else "budget" if not affordable else None
        tables = affordable
    if stop is not None:
        _freeze(conn, eid, _state(conn, competition_id, run, covariance=True), separated,
                int(params["max_batches"]))
        conn.execute("UPDATE competition_evaluations SET status = 'finished', stop_reason = %s, finished_at = %s "
                     "WHERE id = %s", (stop, now, eid))
        return []
    ids = plan_deal_in(conn, game_string=game_string_for(game, options, n), tables=tables,
                       deal_key=deal_key(competition_id, run, batch + 1), time_control=tc,
                       seed=batch_seed(seed, batch + 1), competition_id=competition_id)
    new = sorted(mid for table in ids for mid in table)
    conn.execute("UPDATE competition_evaluations SET batches = batches + 1, matches_planned = matches_planned + %s "
                 "WHERE id = %s", (len(new), eid))
    return new


def _freeze(conn: Any, eid: int, state: _State, separated: list[bool], max_batches: int) -> None:
    """Write the final table of evaluation ``eid`` from ``state`` (a fit with its covariance; replacing any
    written before): places from the separated neighbours and from every pair apart on its own evidence."""
    names = {int(b): (n, "") for b, n in conn.execute(
        "SELECT id, name FROM bots WHERE id = ANY(%s::bigint[])",
        ([e.bot_id for e in state.placed + state.excluded],)).fetchall()}
    rows: list[TableRow] = rows_of(state.result, names, state.games, [])
    conn.execute("DELETE FROM competition_final_rows WHERE evaluation_id = %s", (eid,))
    apart = sorted(pairs_apart(state.result, pair_critical_z(max_batches, len(state.result.ratings))))
    for (low, high), row in zip(places(separated, apart) if rows else [], rows, strict=True):
        conn.execute("INSERT INTO competition_final_rows (evaluation_id, bot_id, place_low, place_high, rating, "
                     "rating_low, rating_high, z_next, matches, standing) "
                     "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'placed')",
                     (eid, row.bot_id, low, high, row.rating, row.low, row.high, row.z_next, row.matches))
    for e in state.excluded:
        conn.execute("INSERT INTO competition_final_rows (evaluation_id, bot_id, matches, standing) "
                     "VALUES (%s, %s, %s, %s)",
                     (eid, e.bot_id, int(state.games.get(e.bot_id, 0)), "disqualified" if e.out else "withdrawn"))


def recompute_final(conn: Any, competition_id: int, reason: str, now: datetime) -> bool:
    """Refreeze a finished evaluation's table from its matches as they count now (after a disqualification:
    the bot's seats leave the fit, its row stays, marked), inside the caller's transaction. No match is
    played; places that the remaining results no longer separate become shared.

    Returns:
        Whether a finished evaluation was recomputed.
    """
    row = conn.execute("SELECT id, run, (params->>'critical_z')::float, (params->>'max_batches')::int "
                       "FROM competition_evaluations WHERE competition_id = %s AND status = 'finished'",
                       (competition_id,)).fetchone()
    if row is None:
        return False
    eid, run, z, batches = int(row[0]), int(row[1]), float(row[2]), int(row[3])
    state = _state(conn, competition_id, run, covariance=True)
    _freeze(conn, eid, state, separations(state.result, z), batches)
    conn.execute("UPDATE competition_evaluations SET recomputed_at = %s, recomputed_reason = %s WHERE id = %s",
                 (now, reason, eid))
    return True


def rerun_evaluation(pool: ConnectionPool, competition_id: int, *, now: datetime, fresh_seed: bool = False
                     ) -> tuple[Evaluation, list[int]]:
    """Replace the current evaluation by a new run from the same seed (or a fresh one) and the same limits;
    the old run becomes ``superseded`` (its matches stay recorded; those still planned play and do not count).
    Organisers go through :func:`ladder.competitions.rerun` (their check, and the event recorded).

    Returns:
        The new run and the match ids of its first batch (to queue).

    Raises:
        CompetitionNotFoundError: no such competition.
        CompetitionError: there is no evaluation to re-run.
        CompetitionClosedError: as :func:`start_evaluation`.
    """
    return run_transaction(pool, lambda conn: rerun_in(conn, competition_id, now=now, fresh_seed=fresh_seed))


def rerun_in(conn: Any, competition_id: int, *, now: datetime, fresh_seed: bool) -> tuple[Evaluation, list[int]]:
    """:func:`rerun_evaluation` inside the caller's transaction."""
    _locked_competition(conn, competition_id)
    row = conn.execute("SELECT id, seed, params FROM competition_evaluations WHERE competition_id = %s "
                       "AND status <> 'superseded'", (competition_id,)).fetchone()
    if row is None:
        raise CompetitionError(f"competition {competition_id} has no final evaluation to re-run")
    conn.execute("UPDATE competition_evaluations SET status = 'superseded' WHERE id = %s", (row[0],))
    params = dict(row[2])
    return _start(conn, competition_id, now, None if fresh_seed else row[1], int(params["budget"]),
                  int(params["max_batches"]))


def _read(conn: Any, eid: int) -> Evaluation:
    return _evaluation(conn.execute(f"SELECT {_EVAL_COLS} FROM competition_evaluations WHERE id = %s",
                                    (eid,)).fetchone())
