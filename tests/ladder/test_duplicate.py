"""The duplicate tournament format and single duplicate deals (ladder.tournaments; ladder/README.md)."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

import pytest
from fixtures.ladder_helpers import GAME, count, make_bots

from ladder.errors import TournamentError, TournamentNotFoundError
from ladder.tournaments import (
    create_tournament,
    plan_duplicate,
    plan_duplicate_deal,
    plan_round_robin,
    plan_tournament,
    seed_commitment,
)

pytestmark = pytest.mark.usefixtures("games")


def _matches(pool: Any, tid: int) -> list[tuple[str, str, str, list[int]]]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.plan_key, m.seed, m.seed_commitment, array_agg(s.bot_id ORDER BY s.seat) FROM matches m "
            "JOIN seats s ON s.match_id = m.id WHERE m.tournament_id = %s GROUP BY m.id ORDER BY m.id",
            (tid,),
        ).fetchall()
    return [(k, s, c, list(b)) for k, s, c, b in rows]


def test_duplicate_plans_the_round_robin_matches_on_one_deal_per_round_and_player_count(pool):
    bots = make_bots(pool, 4)
    tid = create_tournament(pool, name="dup", game=GAME, bot_ids=bots, player_counts=(2, 3, 4), rounds=2,
                            format="duplicate")
    ids = plan_duplicate(pool, tid)
    assert len(ids) == 2 * (12 + 12 + 4)  # the round-robin's count: C(4,N) x N per N, per round
    rows = _matches(pool, tid)
    seeds: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key, seed, commitment, seats in rows:
        r, n, combo, rot = key.split(":")
        seeds[(r, n)].add(seed)
        assert commitment == seed_commitment(seed)
        members = [int(b) for b in combo.split("-")]
        k = int(rot[3:])
        assert seats == members[k:] + members[:k]  # cyclic rotation k
    assert len(seeds) == 6 and all(len(s) == 1 for s in seeds.values())  # one deal per (round, N)
    assert len({next(iter(s)) for s in seeds.values()}) == 6  # and different deals
    assert plan_duplicate(pool, tid) == ids  # idempotent
    assert plan_tournament(pool, tid) == ids
    with pool.connection() as conn:
        assert conn.execute("SELECT status FROM tournaments WHERE id = %s", (tid,)).fetchone()[0] == "planned"


def test_each_bot_sits_in_every_seat_of_the_deal(pool):
    bots = make_bots(pool, 3)
    tid = create_tournament(pool, name="dup", game=GAME, bot_ids=bots, player_counts=(3,), format="duplicate")
    plan_duplicate(pool, tid)
    seats_of = defaultdict(set)
    for _, _, _, seats in _matches(pool, tid):
        for seat, bot in enumerate(seats):
            seats_of[bot].add(seat)
    assert all(seats_of[b] == {0, 1, 2} for b in bots)


def test_completing_a_partial_plan_keeps_the_deal(pool):
    bots = make_bots(pool, 3)
    tid = create_tournament(pool, name="dup", game=GAME, bot_ids=bots, player_counts=(2,), format="duplicate")
    plan_duplicate(pool, tid)
    with pool.connection() as conn:
        seed = conn.execute("SELECT seed FROM matches WHERE tournament_id = %s LIMIT 1", (tid,)).fetchone()[0]
        conn.execute("DELETE FROM matches WHERE tournament_id = %s AND plan_key LIKE %s", (tid, "%:rot1"))
    plan_duplicate(pool, tid)
    assert {s for _, s, _, _ in _matches(pool, tid)} == {seed}
    assert count(pool, "SELECT count(*) FROM matches WHERE tournament_id = %s", (tid,)) == 6


def test_formats_are_kept_apart(pool):
    bots = make_bots(pool, 2)
    rr = create_tournament(pool, name="rr", game=GAME, bot_ids=bots)
    dup = create_tournament(pool, name="dup", game=GAME, bot_ids=bots, format="duplicate")
    with pytest.raises(TournamentError, match="not round_robin"):
        plan_round_robin(pool, dup)
    with pytest.raises(TournamentError, match="not duplicate"):
        plan_duplicate(pool, rr)
    assert len(plan_tournament(pool, rr)) == 2
    with pytest.raises(TournamentNotFoundError):
        plan_tournament(pool, 999_999)
    with pytest.raises(TournamentError, match="format"):
        create_tournament(pool, name="s", game=GAME, bot_ids=bots, format="swiss")
    # a gauntlet is planned by its own planner only (tests/ladder/test_tournament_formats.py plans one)
    g = create_tournament(pool, name="g", game=GAME, bot_ids=bots[1:], candidate_bot_id=bots[0], format="gauntlet")
    with pytest.raises(TournamentError, match="not round_robin"):
        plan_round_robin(pool, g)
    with pytest.raises(TournamentError, match="not duplicate"):
        plan_duplicate(pool, g)


def test_plan_duplicate_deal_puts_both_bots_in_the_same_seats_on_one_seed(pool):
    cand, base, x, y = make_bots(pool, 4)
    tid = create_tournament(pool, name="regress", game=GAME, bot_ids=[cand, base, x, y], player_counts=(3,),
                            format="duplicate")
    gs = f"{GAME}(players=3,variant=a)"
    ids = plan_duplicate_deal(pool, game_string=gs, tables=[[cand, x, y], [base, x, y]], deal_key="d0",
                              tournament_id=tid, seed="ab" * 32)
    assert [len(row) for row in ids] == [3, 3]
    with pool.connection() as conn:
        rows = {
            mid: (seed, seats)
            for mid, seed, seats in conn.execute(
                "SELECT m.id, m.seed, array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s "
                "ON s.match_id = m.id WHERE m.tournament_id = %s GROUP BY m.id", (tid,)
            ).fetchall()
        }
    assert {seed for seed, _ in rows.values()} == {"ab" * 32}
    for k in range(3):
        a_seats, b_seats = rows[ids[0][k]][1], rows[ids[1][k]][1]
        assert a_seats.index(cand) == b_seats.index(base) == (3 - k) % 3
        assert [b for b in a_seats if b != cand] == [b for b in b_seats if b != base]  # same opponents, same seats
    # idempotent: the same deal again, even with another seed, is the same matches on the first seed
    again = plan_duplicate_deal(pool, game_string=gs, tables=[[cand, x, y], [base, x, y]], deal_key="d0",
                                tournament_id=tid, seed="cd" * 32)
    assert again == ids
    assert count(pool, "SELECT count(*) FROM matches WHERE seed = %s", ("cd" * 32,)) == 0
    other = plan_duplicate_deal(pool, game_string=gs, tables=[[cand, x, y]], deal_key="d1", tournament_id=tid)
    assert other[0][0] not in {m for row in ids for m in row}


def test_plan_duplicate_deal_validates_tables(pool):
    a, b, c = make_bots(pool, 3)
    gs = f"{GAME}(players=2,variant=a)"
    for tables in ([], [[a, b, c]], [[a, a]]):
        with pytest.raises(TournamentError):
            plan_duplicate_deal(pool, game_string=gs, tables=tables, deal_key="bad")


def test_concurrent_planning_of_one_deal_without_a_tournament_makes_one_deal(pool):
    a, b = make_bots(pool, 2)
    gs = f"{GAME}(players=2,variant=a)"
    results: list[list[list[int]]] = []
    errors: list[BaseException] = []

    def plan() -> None:
        try:
            results.append(plan_duplicate_deal(pool, game_string=gs, tables=[[a, b]], deal_key="solo-deal"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=plan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == results[0] for r in results)
    assert count(pool, "SELECT count(DISTINCT seed) FROM matches WHERE tournament_id IS NULL") == 1
