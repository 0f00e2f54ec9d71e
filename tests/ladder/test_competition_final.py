"""A competition's final evaluation (ladder.competition_final; docs/competitions.md "The final evaluation").

Oracles: hand-computed places and tables; a Bradley-Terry model of known strengths deciding
results (the count of false separations of equal bots over many simulated evaluations is the
test's own); the seeds and seatings read back from the matches; and, end to end, a greedy bot
against two copies of a random bot through the real referee and the workers' task.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fixtures.competition_helpers import HOUR, T0, account, bot, competition, organiser
from fixtures.ladder_helpers import make_result

from ladder import competitions as comp
from ladder.competition_final import (
    advance_evaluation,
    batch_seed,
    batch_tables,
    critical_z,
    estimate,
    evaluation,
    final_table,
    pair_critical_z,
    pairs_apart,
    places,
    separations,
    start_evaluation,
)
from ladder.competition_season import fit, plan_season_round, rated_bot
from ladder.matches import claim_match, record_result
from ladder.stats.bradley_terry import MatchRecord, se_between

# -- the pure parts -------------------------------------------------------------------------------


def test_places_share_runs_of_neighbours_not_separated() -> None:
    assert places([]) == [(1, 1)]
    assert places([True, True]) == [(1, 1), (2, 2), (3, 3)]
    assert places([True, False]) == [(1, 1), (2, 3), (2, 3)]
    assert places([False, True, False, False]) == [(1, 2), (1, 2), (3, 5), (3, 5), (3, 5)]


def test_batch_tables_are_built_around_unseparated_neighbours() -> None:
    order = [1, 2, 3, 4, 5]
    rating = {1: 1900.0, 2: 1700.0, 3: 1600.0, 4: 1590.0, 5: 1000.0}
    account = {1: 10, 2: 20, 3: 30, 4: 30, 5: 50}
    # pairs (1,2) separated, (2,3) not, (3,4) not and of one account, (4,5) separated
    tables = batch_tables(order, [True, False, False, True], 2, account=account, rating=rating)
    # (2,3) meet; 3 and 4 each meet the same opponent closest to them of another account: 2
    assert tables == [[2, 3], [4, 2]]
    three = batch_tables(order, [False, True, True, True], 3, account=account, rating=rating)
    assert three == [[1, 2, 3]]  # the third seat: the closest to the pair's middle (1800) of a new account
    assert batch_tables([1, 2], [False], 2, account={1: 1, 2: 1}, rating={1: 0.0, 2: 0.0}) == []  # no opponent


def test_the_estimate_follows_its_model() -> None:
    """Hand computation: a 200-point gap is an expected score p = 1 / (1 + 10^-0.5) = 0.7597; its
    divergence from 1/2, ln 2 - H(p) = 0.6931 - 0.5515 = 0.1416 nats; with z = 2.807 (10 batches)
    + 0.8416 (80 % power) the pairwise results needed are 3.649^2 / (2 x 0.1416) = 47.0, so 47 to 48
    matches of two seats for the fitted gap of about 197 points; twice that for two bots of one account."""
    records = [MatchRecord((1, 2), (1, 2))] * 76 + [MatchRecord((1, 2), (2, 1))] * 24  # a 200-point gap
    result = fit(records, [1, 2])
    gap = result.ratings[0].elo - result.ratings[1].elo
    assert gap == pytest.approx(197, abs=3)
    est = estimate(result, {1: 1, 2: 2}, 2, critical_z(10))
    assert critical_z(10) == pytest.approx(2.807, abs=1e-3)
    assert 47 <= est["pairs"][0]["matches"] <= 49
    assert 94 <= estimate(result, {1: 1, 2: 1}, 2, critical_z(10))["pairs"][0]["matches"] <= 98
    flat = estimate(fit([], [1, 2]), {1: 1, 2: 2}, 2, critical_z(10))
    assert flat["pairs"][0]["matches"] is None and flat["unknown"] == 1


def _model_result(strength: dict[int, float], seats: list[int], rng: random.Random) -> list[int]:
    """Ranks of a 2-seat match under a Bradley-Terry model of ``strength`` (Elo points)."""
    a, b = seats
    p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
    return [1, 2] if rng.random() < p else [2, 1]


def _simulate(strength: dict[int, float], account: dict[int, int], max_batches: int, budget: int,
              rng: random.Random, z: float | None = None) -> list[tuple[int, int]]:
    """The evaluation's loop on its pure parts (tables, fit, separation, places) with model results;
    returns the places, in bot order. ``z``: the separation threshold (default the evaluation's)."""
    bots = sorted(strength)
    records: list[MatchRecord] = []
    z = critical_z(max_batches) if z is None else z
    planned = 0
    result = fit(records, bots)
    separated = [False] * (len(bots) - 1)
    for _ in range(max_batches):
        order = [rated_bot(line) for line in result.ratings]
        tables = batch_tables(order, separated, 2, account=account,
                              rating={rated_bot(line): line.elo for line in result.ratings})
        tables = tables[:(budget - planned) // 2]
        if not tables:
            break
        for table in tables:
            for seats in (table, table[::-1]):
                records.append(MatchRecord(tuple(seats), tuple(_model_result(strength, seats, rng))))
                planned += 1
        result = fit(records, bots)
        separated = separations(result, z)
        if all(separated):
            break
    by_bot = dict(zip((rated_bot(line) for line in result.ratings), places(separated), strict=True))
    return [by_bot[b] for b in bots]


def test_equal_bots_are_rarely_separated_however_many_batches() -> None:
    """The stopping rule's promise: two equal bots looked at after each of 10 batches are declared
    different in at most 5 % of evaluations (Bonferroni over the looks); 300 simulated evaluations
    with 60-match budgets stay under it. Testing each look at the plain 1.96 instead separates them
    far more often (the measure can fail)."""
    rng = random.Random(11)
    shared = [(1, 2), (1, 2)]
    split = sum(_simulate({1: 0.0, 2: 0.0}, {1: 1, 2: 2}, 10, 60, rng) != shared for _ in range(300))
    plain = sum(_simulate({1: 0.0, 2: 0.0}, {1: 1, 2: 2}, 10, 60, rng, z=1.96) != shared for _ in range(300))
    assert split / 300 <= 0.05
    assert plain > 2 * max(split, 5)


def test_clearly_different_bots_are_separated_within_a_small_budget() -> None:
    rng = random.Random(3)
    outcomes = Counter(tuple(_simulate({1: 600.0, 2: 0.0, 3: 0.0}, {1: 1, 2: 2, 3: 3}, 10, 60, rng))
                       for _ in range(20))
    assert outcomes[((1, 1), (2, 3), (2, 3))] >= 18, outcomes


# -- on the database, results from a model ----------------------------------------------------------


def _play(pool: Any, match_id: int, strength: dict[int, float], rng: random.Random,
          versions: dict[int, str] | None = None) -> None:
    spec = claim_match(pool, match_id, "w")
    assert spec is not None
    result = make_result(spec, _model_result(strength, list(spec.seat_bot_ids), rng))
    if versions:
        import json

        replay = json.loads(result["replay_json"])
        for p in replay["players"]:
            p["version"] = versions.get(p["bot_id"], p["version"])
        result["replay_json"] = json.dumps(replay, sort_keys=True)
    assert record_result(pool, match_id, spec.attempt, result)


def _season(pool: Any, c: Any, bots: list[int], strength: dict[int, float], rng: random.Random, rounds: int) -> None:
    for r in range(rounds):
        for mid in plan_season_round(pool, c.id, round_no=r, online=bots, now=T0 + r * timedelta(minutes=1)):
            _play(pool, mid, strength, rng)


def _evaluate(pool: Any, c: Any, strength: dict[int, float], rng: random.Random, **versions: Any) -> int:
    """Run the evaluation to its end, playing every batch with model results; returns the batches."""
    now = c.final_at
    _, batch = start_evaluation(pool, c.id, now=now)
    batches = 0
    while batch:
        batches += 1
        for mid in batch:
            _play(pool, mid, strength, rng, versions.get("versions"))
        now += timedelta(minutes=1)
        batch = advance_evaluation(pool, c.id, now=now)
    return batches


def _field(pool: Any, c: Any, n: int) -> tuple[list[int], list[int]]:
    owners = [account(pool, f"a{i}") for i in range(n)]
    bots = [bot(pool, o, f"e{i}") for i, o in enumerate(owners)]
    for b, o in zip(bots, owners, strict=True):
        comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
    return owners, bots


def test_the_evaluation_separates_what_differs_shares_what_does_not_and_freezes_it(pool: Any) -> None:
    """Four entrants: one far stronger, two equal, one far weaker (a model decides results). The
    evaluation stores its estimate before the first batch, records its progress after each, and
    freezes 1, 2-3 (shared), 4 when its batches are spent; a disqualification recomputes the frozen
    table without the bot and marks it."""
    org = organiser(pool)
    c = competition(pool, org, final_budget=200, final_max_batches=8)
    _, bots = _field(pool, c, 4)
    strength = dict(zip(bots, [700.0, 0.0, 0.0, -700.0], strict=True))
    rng = random.Random(5)
    _season(pool, c, bots, strength, rng, 3)
    ev, first = start_evaluation(pool, c.id, now=c.final_at)
    assert ev.status == "running" and ev.seed is None and len(ev.estimate["pairs"]) == 3 and ev.batches == 1
    assert len(first) == 6  # three neighbouring pairs, both seat orders
    with pytest.raises(Exception, match="running"):
        start_evaluation(pool, c.id, now=c.final_at)
    for mid in first:
        _play(pool, mid, strength, rng)
    now = c.final_at
    while True:
        now += timedelta(minutes=1)
        batch = advance_evaluation(pool, c.id, now=now)
        if not batch:
            break
        for mid in batch:
            _play(pool, mid, strength, rng)
    ev = evaluation(pool, c.id)
    assert ev is not None and ev.status == "finished" and ev.seed is not None
    assert ev.stop_reason == "batches" and ev.batches == 8 and len(ev.progress) == 8
    assert ev.progress[-1]["overlapping"] == ev.overlapping == 1
    assert ev.matches_played == ev.matches_planned <= 200
    table = final_table(pool, c.id)
    assert [(r.bot_id, r.place) for r in table][:1] == [(bots[0], "1")] and table[-1].bot_id == bots[3]
    assert [r.place for r in table] == ["1", "2-3", "2-3", "4"]
    assert {r.bot_id for r in table[1:3]} == {bots[1], bots[2]}
    assert comp.get_competition(pool, c.id).status(now) == "final"
    comp.disqualify(pool, c.id, actor_id=org, bot_id=bots[0], reason="shared code", now=now)
    again = final_table(pool, c.id)
    assert [(r.place, r.standing) for r in again] == [("1-2", "placed"), ("1-2", "placed"), ("3", "placed"),
                                                       ("-", "disqualified")]
    assert again[-1].bot_id == bots[0]
    after = evaluation(pool, c.id)
    assert after is not None and after.recomputed_reason is not None and "shared code" in after.recomputed_reason


def test_a_rerun_from_the_seed_deals_the_same_batches(pool: Any) -> None:
    """Run 1 plays to its end; re-running from its seed plans the same first batch (the same tables,
    from the same season table) on the same seed, and every batch's seed follows from it."""
    c = competition(pool, final_budget=24, final_max_batches=3)
    _, bots = _field(pool, c, 3)
    strength = dict(zip(bots, [400.0, 0.0, -400.0], strict=True))
    rng = random.Random(9)
    _season(pool, c, bots, strength, rng, 3)
    _evaluate(pool, c, strength, rng)
    first = evaluation(pool, c.id)
    assert first is not None and first.seed is not None

    def batch_plan(run: int, batch: int) -> set[tuple[str, tuple[int, ...]]]:
        with pool.connection() as conn:
            rows = conn.execute("SELECT m.seed, array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s "
                                "ON s.match_id = m.id WHERE starts_with(m.plan_key, %s) GROUP BY m.id",
                                (f"competition:{c.id}:e{run}:b{batch}:",)).fetchall()
        return {(seed, tuple(seats)) for seed, seats in rows}

    second, planned = comp.rerun(pool, c.id, actor_id=None, now=c.final_at + HOUR)
    assert second.run == 2 and second.seed_commitment == first.seed_commitment
    assert batch_plan(2, 1) == batch_plan(1, 1) and len(planned) == len(batch_plan(1, 1))
    assert {seed for seed, _ in batch_plan(1, 2)} == {batch_seed(first.seed, 2)}
    third, _ = comp.rerun(pool, c.id, actor_id=None, now=c.final_at + 2 * HOUR, fresh_seed=True)
    assert third.seed_commitment != first.seed_commitment
    assert {seed for seed, _ in batch_plan(3, 1)} != {seed for seed, _ in batch_plan(1, 1)}
    assert [e["kind"] for e in comp.events(pool, c.id)] == ["evaluation_rerun", "evaluation_rerun"]


def test_matches_not_played_by_the_locked_version_do_not_count(pool: Any) -> None:
    """Entrants' versions lock at the deadline (here: the version their last season match
    announced, "1"). Final matches whose seats announce another version are recorded but not
    counted: the table is built from the others only."""
    c = competition(pool, final_budget=8, final_max_batches=2)
    _, bots = _field(pool, c, 2)
    strength = {bots[0]: 0.0, bots[1]: 0.0}
    rng = random.Random(1)
    _season(pool, c, bots, strength, rng, 1)
    locked = comp.lock_versions(pool, c.id, now=c.deadline_at)
    assert [e.locked_version for e in locked] == ["1", "1"]
    _evaluate(pool, c, strength, rng, versions={bots[1]: "2"})
    ev = evaluation(pool, c.id)
    assert ev is not None and ev.matches_played == 4
    assert [p["counted"] for p in ev.progress] == [0, 0] and [p["mismatched"] for p in ev.progress] == [2, 4]
    assert [r.matches for r in final_table(pool, c.id)] == [0, 0]


# -- end to end: the workers' task, the real referee ------------------------------------------------


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch, migrated_url: str, pool: Any) -> Iterator[list[int]]:
    """The workers' task module on the test database; queued matches are collected, not sent."""
    import workers.tasks as tasks
    from referee.testing import SERVICE_TOKEN

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_NO_SHOW_TIMEOUT_MS", "5000")
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "0")
    monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
    monkeypatch.setenv("PARTERRE_REDIS_URL", "")
    monkeypatch.setattr(tasks, "_pool", pool)
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda args, countdown=0, **_: queued.append(args[0]))
    monkeypatch.setattr(tasks.run_match, "delay", lambda match_id: queued.append(match_id))
    yield queued
    monkeypatch.setattr(tasks, "_pool", None)


def _run_queued(queued: list[int]) -> list[str]:
    """Run every queued match with the workers' task, one after the other in id order: each random bot
    then draws its moves in one order, and a run is the same run every time."""
    import workers.tasks as tasks

    outcomes: list[str] = []
    while queued:
        batch, queued[:] = sorted(queued), []
        outcomes += [tasks.run_match(match_id) for match_id in batch]
    return outcomes


SEED = "5eed" * 16
"""The end-to-end evaluation's seed: with the bots' own seeds, it makes the run reproducible (how often
such a run separates what it should is measured on the model above, not here)."""


def test_greedy_is_placed_alone_and_two_random_bots_share_a_place_end_to_end(pool: Any, worker: list[int],
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Any) -> None:
    """Floriferous, three accounts: a greedy bot and two copies of a random bot, connected to the real
    referee. The final evaluation is played batch by batch through ``parterre.run_match``, the workers'
    competition tick refitting after each batch and planning the next: greedy ends first, alone; the two
    random bots share places 2-3. Its dataset (``parterre competition dataset``) then verifies file by
    file with ``parterre replay verify``, and a changed or missing file fails it. Every bot writes debug
    text with each answer (docs/bots.md, "Debug text"): the workers store it for the owners, and not a
    byte of it is in the dataset."""
    from bots.reference import GreedyBot, RandomBot
    from ladder.owned_bots import create_bot
    from referee.testing import ThreadedReferee
    from workers import periodic

    c = competition(pool, final_budget=60, final_max_batches=12, time_control={"cap_ms": 2000, "margin_ms": 200})
    owners = [account(pool, name) for name in ("gina", "rex", "rosa")]
    made = [create_bot(pool, o, name) for o, name in zip(owners, ("greedy", "random-a", "random-b"), strict=True)]
    bots = [b.id for b, _ in made]
    for b, o in zip(bots, owners, strict=True):
        comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
    players = [_noting(GreedyBot)(seed=1), _noting(RandomBot)(seed=2), _noting(RandomBot)(seed=3)]
    with ThreadedReferee({token: b.id for b, token in made},
                         bots={token: p for (_, token), p in zip(made, players, strict=True)}) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.address)
        ev, worker[:] = start_evaluation(pool, c.id, now=c.final_at, seed=SEED)
        assert ev.estimate["unknown"] == 2  # no season: nothing to estimate from
        tick = c.final_at.timestamp()
        for _ in range(20):
            assert set(_run_queued(worker)) == {"finished"}
            tick += 30
            periodic.competition_tick(now=tick, period_s=30)
            if not worker:
                break
    ev = evaluation(pool, c.id)
    assert ev is not None and ev.status == "finished", ev
    table = {r.bot_id: r.place for r in final_table(pool, c.id)}
    assert table == {bots[0]: "1", bots[1]: "2-3", bots[2]: "2-3"}, (ev.progress, table)
    assert ev.matches_played == ev.matches_planned <= 60
    _check_the_dataset(pool, c.id, tmp_path, ev.matches_played, now=c.final_at + timedelta(hours=1))


def _noting(cls: Any) -> Any:
    """``cls`` whose every answer also carries a debug text with :data:`DEBUG_SECRET` in it (its choice unchanged)."""

    class Noting(cls):  # type: ignore[misc]  # a class made at run time
        def choose(self, request: Any) -> int:
            index: int = super().choose(request)
            request.debug(f"{DEBUG_SECRET} seq {request.seq} chose {index}")
            return index

    return Noting


DEBUG_SECRET = "DEBUG-SECRET-7f3a"
"""What every bot of the end-to-end evaluation writes in its debug text: the owners' only."""


def _check_the_dataset(pool: Any, competition_id: int, tmp_path: Any, matches: int, *, now: Any) -> None:
    import hashlib
    import json
    import subprocess
    import sys

    import zstandard

    from ladder.competition_dataset import write_dataset

    folder = tmp_path / "dataset"
    manifest = write_dataset(pool, competition_id, folder, now=now)
    assert len(manifest["files"]) == matches and manifest["final_table"][0]["place"] == "1"
    assert {f["rules_revision"] for f in manifest["files"]} == {1}

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "parterre.cli", "replay", "verify", str(folder)],
                              capture_output=True, text=True, timeout=300)

    ok = verify()
    assert ok.returncode == 0 and sum(line.startswith("OK: matches/") for line in ok.stdout.splitlines()) == matches
    # the bots' debug text was stored (a row per seat of every match), and none of it is in the dataset
    with pool.connection() as conn:
        stored = conn.execute("SELECT count(*) FROM seat_debug d JOIN matches m ON m.id = d.match_id "
                              "WHERE m.competition_id = %s", (competition_id,)).fetchone()[0]
    assert stored == 2 * matches
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            text = zstandard.ZstdDecompressor().decompress(data) if path.suffix == ".zst" else data
            assert DEBUG_SECRET.encode() not in text, path
    with pytest.raises(comp.CompetitionError, match="not an empty folder"):
        write_dataset(pool, competition_id, folder, now=now)
    first = folder / manifest["files"][0]["path"]
    record = json.loads(zstandard.ZstdDecompressor().decompress(first.read_bytes()))
    record["replay"]["outcome"]["scores"][0] += 1  # a result changed, its checksum made to match
    data = zstandard.ZstdCompressor().compress(json.dumps(record).encode())
    first.write_bytes(data)
    manifest["files"][0].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (folder / "manifest.json").write_text(json.dumps(manifest))
    bad = verify()
    assert bad.returncode == 1 and f"FAILED: {manifest['files'][0]['path']}: " in bad.stdout, bad.stdout[-2000:]
    (folder / manifest["files"][1]["path"]).unlink()
    (folder / "matches" / "extra.json.zst").write_bytes(b"x")
    worse = verify()
    assert f"FAILED: {manifest['files'][1]['path']}: missing" in worse.stdout
    assert "FAILED: matches/extra.json.zst: not listed in the manifest" in worse.stdout


def test_disqualifying_every_entrant_leaves_a_table_without_places(pool: Any) -> None:
    org = organiser(pool)
    c = competition(pool, org, final_budget=8, final_max_batches=1)
    owners, bots = _field(pool, c, 2)
    rng = random.Random(2)
    _evaluate(pool, c, {bots[0]: 0.0, bots[1]: 0.0}, rng)
    for o in owners:
        comp.disqualify(pool, c.id, actor_id=org, account_id=o, reason="both", now=c.final_at + HOUR)
    assert [(r.place, r.standing) for r in final_table(pool, c.id)] == [("-", "disqualified")] * 2


def test_two_bots_of_one_account_alone_cannot_be_separated(pool: Any) -> None:
    """Never at one table, and no other opponent: the evaluation stops at once, the two share 1-2."""
    c = competition(pool, max_entrants_per_account=2)
    alice = account(pool, "alice")
    for b in (bot(pool, alice), bot(pool, alice)):
        comp.enter_competition(pool, c.id, b, account_id=alice, now=T0)
    ev, planned = start_evaluation(pool, c.id, now=c.final_at)
    assert planned == [] and ev.status == "finished" and ev.stop_reason == "no_table"
    assert [r.place for r in final_table(pool, c.id)] == ["1-2", "1-2"]


def test_a_player_count_that_cannot_seat_a_pair_gives_way_to_the_next_count(pool: Any) -> None:
    """Two entrants in a competition played at 3 and then 2 seats: a 3-seat table cannot be filled, so
    each batch is played at 2 seats (the next count in the list) instead of stopping with no_table."""
    c = competition(pool, player_counts=[3, 2], final_budget=12, final_max_batches=3)
    _, bots = _field(pool, c, 2)
    strength = {bots[0]: 0.0, bots[1]: 0.0}
    ev, first = start_evaluation(pool, c.id, now=c.final_at)
    assert ev.status == "running" and len(first) == 2  # one 2-seat table, both seat orders
    with pool.connection() as conn:
        seats = conn.execute("SELECT count(*) FROM seats WHERE match_id = ANY(%s) GROUP BY match_id",
                             (first,)).fetchall()
    assert [n for (n,) in seats] == [2, 2]
    rng = random.Random(4)
    for mid in first:
        _play(pool, mid, strength, rng)
    now = c.final_at
    while batch := advance_evaluation(pool, c.id, now=(now := now + timedelta(minutes=1))):
        for mid in batch:
            _play(pool, mid, strength, rng)
    done = evaluation(pool, c.id)
    assert done is not None and done.stop_reason == "batches" and done.batches == 3


def test_places_count_every_pair_placed_apart_not_only_neighbours() -> None:
    """A line's best place is 1 + the lines placed above it, its worst the count less those placed below
    (worked by hand): four lines, no neighbour separated, only the first and the last apart."""
    assert places([False, False, False], [(0, 3)]) == [(1, 3), (1, 4), (1, 4), (2, 4)]
    assert places([True, False], []) == places([True, False])  # neighbours alone: runs, as before
    assert places([False, False, False], [(0, 2), (0, 3), (1, 3)]) == [(1, 2), (1, 3), (2, 4), (3, 4)]


def test_tiers_of_equal_entrants_are_placed_apart_though_the_neighbour_rule_shares_them() -> None:
    """Five tiers of three equal entrants, 40 Elo apart (a model decides results; 100 games between every
    two). Equal entrants interleave across each tier boundary, so the neighbour rule alone does not place
    the top tier above the bottom one; counted pair by pair (corrected for every pair and every look), it
    is, in each of four deals of the results, and no entrant is ever placed above a stronger one (the
    model is the oracle)."""
    tiers, size, gap = 5, 3, 40.0
    strength = {b: gap * (tiers - 1) - gap * ((b - 1) // size) for b in range(1, tiers * size + 1)}
    bots = sorted(strength)
    top = [b for b in bots if strength[b] == gap * (tiers - 1)]
    bottom = [b for b in bots if strength[b] == 0.0]
    for seed in (11, 12, 13, 14):
        rng = random.Random(seed)
        records = [MatchRecord((a, b), tuple(_model_result(strength, [a, b], rng)))
                   for _ in range(100) for a in bots for b in bots if a < b]
        result = fit(records, bots, covariance=True)
        order = [rated_bot(line) for line in result.ratings]
        separated = separations(result, critical_z(20))
        before = dict(zip(order, places(separated), strict=True))
        after = dict(zip(order, places(separated, sorted(pairs_apart(result, pair_critical_z(20, len(bots))))),
                         strict=True))
        assert not max(before[b][1] for b in top) < min(before[b][0] for b in bottom), (seed, before)
        assert max(after[b][1] for b in top) < min(after[b][0] for b in bottom), (seed, after)
        for a in bots:
            for b in bots:
                if after[a][1] < after[b][0]:
                    assert strength[a] > strength[b], (seed, a, b, after)


def test_the_covariance_gives_the_neighbours_standard_errors() -> None:
    """The pairwise standard error from the covariance equals ``se_next``, computed from the information
    by another route (one triangular solve per neighbouring pair)."""
    rng = random.Random(3)
    strength = {1: 100.0, 2: 50.0, 3: 0.0, 4: -60.0}
    records = [MatchRecord((a, b), tuple(_model_result(strength, [a, b], rng)))
               for _ in range(30) for a in strength for b in strength if a < b]
    result = fit(records, sorted(strength), covariance=True)
    for pos, line in enumerate(result.ratings[:-1]):
        assert line.se_next is not None and abs(se_between(result, pos, pos + 1) - line.se_next) < 1e-6
    assert all(abs(result.covariance[i][j] - result.covariance[j][i]) < 1e-9 for i in range(4) for j in range(4))
