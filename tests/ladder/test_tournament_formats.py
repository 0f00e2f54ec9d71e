"""Gauntlet planning, entry windows and the final tables per format (ladder/README.md; docs/participants.md)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from fixtures.ladder_helpers import GAME, count, make_bots

from ladder.bots import revoke_bot
from ladder.entries import close_due_entries, close_entries, enter_tournament
from ladder.errors import BotNotFoundError, TournamentClosedError, TournamentError, TournamentNotFoundError
from ladder.tournament_tables import final_table
from ladder.tournaments import create_tournament, plan_gauntlet, plan_round_robin, plan_tournament

pytestmark = pytest.mark.usefixtures("games")


def _plan_rows(pool: Any, tid: int) -> list[tuple[int, str, str, list[int]]]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, m.plan_key, m.seed, array_agg(s.bot_id ORDER BY s.seat) FROM matches m "
            "JOIN seats s ON s.match_id = m.id WHERE m.tournament_id = %s GROUP BY m.id ORDER BY m.id", (tid,)
        ).fetchall()
    return [(mid, k, seed, list(b)) for mid, k, seed, b in rows]


def _soon(s: float = 0.6) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=s)


# -- gauntlet -------------------------------------------------------------------------------------


def test_gauntlet_plays_the_candidate_against_every_pool_combination(pool) -> None:
    cand, *others = make_bots(pool, 5)
    tid = create_tournament(pool, name="g", game=GAME, format="gauntlet", candidate_bot_id=cand, bot_ids=others,
                            player_counts=(2, 3), rounds=2)
    ids = plan_tournament(pool, tid)
    # per round: C(4, 1) x 2 two-player + C(4, 2) x 3 three-player matches
    assert len(ids) == 2 * (4 * 2 + 6 * 3) == 52
    rows = _plan_rows(pool, tid)
    tables: dict[str, list[tuple[str, list[int]]]] = defaultdict(list)
    for _, key, seed, seats in rows:
        assert cand in seats  # pool bots never meet without the candidate
        tables[key.rsplit(":", 1)[0]].append((seed, seats))
    for key, group in tables.items():
        assert len({seed for seed, _ in group}) == 1  # the rotations of a table share one deal
        first = group[0][1]
        assert [seats for _, seats in group] == [first[k:] + first[:k] for k in range(len(first))]
        assert sorted(seats.index(cand) for _, seats in group) == list(range(len(first)))
        assert first[0] == cand and key.split(":")[2].startswith(f"{cand}-")
    pool_sets = {frozenset(s) - {cand} for _, _, _, s in rows}
    expected = {frozenset(c) for n in (1, 2) for c in itertools.combinations(others, n)}
    assert pool_sets == expected
    assert plan_gauntlet(pool, tid) == ids  # idempotent
    with pytest.raises(TournamentError, match="not round_robin"):
        plan_round_robin(pool, tid)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"format": "gauntlet"}, "candidate"),
        ({"format": "gauntlet", "candidate": 0, "pool": [0, 1]}, "candidate"),
        ({"format": "round_robin", "candidate": 0}, "only a gauntlet"),
        ({"format": "gauntlet", "candidate": 0, "pool": [], "player_counts": (2,)}, "at least 2"),
        ({"format": "gauntlet", "candidate": 0, "pool": [1], "player_counts": (2, 3)}, "at least 3"),
        ({"entry_deadline": datetime.now(UTC) - timedelta(seconds=1)}, "not in the future"),
        ({"entry_deadline": datetime.now() + timedelta(hours=1)}, "timezone-aware"),
    ],
)
def test_bad_formats_and_windows_are_refused(pool, kwargs: dict[str, Any], match: str) -> None:
    bots = make_bots(pool, 3)
    args: dict[str, Any] = {"name": "t", "game": GAME, "bot_ids": [bots[i] for i in kwargs.pop("pool", [0, 1, 2])]}
    if "candidate" in kwargs:
        args["candidate_bot_id"] = bots[kwargs.pop("candidate")]
    with pytest.raises(TournamentError, match=match):
        create_tournament(pool, **(args | kwargs))
    assert count(pool, "SELECT count(*) FROM tournaments") == 0


def test_gauntlet_table_scores_the_candidate_against_each_pool_bot(pool) -> None:
    cand, a, b = make_bots(pool, 3)
    tid = create_tournament(pool, name="g", game=GAME, format="gauntlet", candidate_bot_id=cand, bot_ids=[a, b],
                            player_counts=(2, 3))
    rows = _plan_rows(pool, plan_tournament(pool, tid) and tid)
    # the candidate wins every 2-player match against a, loses them against b; ties everyone at 3 players
    for mid, _, _, seats in rows:
        if len(seats) == 2:
            ranks = [1 if s == cand else 2 for s in seats] if a in seats else [2 if s == cand else 1 for s in seats]
        else:
            ranks = [1, 1, 1]
        h.play(pool, mid, ranks)
    table = final_table(pool, tid)
    assert table.format == "gauntlet" and table.complete
    g = table.gauntlet
    assert g is not None and g.candidate_id == cand
    by_bot = {r.bot_id: r for r in g.rows}
    # vs a: 2 wins (two rotations) + 3 ties (three rotations of the triple) out of 5 pairings
    assert (by_bot[a].points, by_bot[a].pairings, by_bot[a].wins, by_bot[a].draws, by_bot[a].losses) == (
        3.5, 5, 2, 3, 0)
    assert (by_bot[b].points, by_bot[b].pairings, by_bot[b].wins, by_bot[b].draws, by_bot[b].losses) == (
        1.5, 5, 0, 3, 2)
    assert by_bot[a].score == pytest.approx(0.7)
    assert by_bot[a].elo_diff == pytest.approx(-400 * __import__("math").log10(1 / 0.7 - 1))
    assert (g.points, g.pairings) == (5.0, 10)


def test_duplicate_table_gives_each_deal_its_points(pool) -> None:
    a, b, c = make_bots(pool, 3)
    tid = create_tournament(pool, name="d", game=GAME, format="duplicate", bot_ids=[a, b, c], player_counts=(2,),
                            rounds=2)
    rows = _plan_rows(pool, plan_tournament(pool, tid) and tid)
    assert len(rows) == 2 * 3 * 2
    for mid, key, _, seats in rows:
        if key.startswith("r1:"):  # deal 1: bot a beats everyone, b beats c
            order = {a: 0, b: 1, c: 2}
            ranks = [1 if order[s] == min(order[x] for x in seats) else 2 for s in seats]
        else:  # deal 2: seat 0 always wins (luck of the seat; each bot sits there once per pairing)
            ranks = [1, 2]
        h.play(pool, mid, ranks)
    table = final_table(pool, tid)
    d = table.duplicate
    assert d is not None and [x.key for x in d.deals] == ["r1:n2", "r2:n2"]
    r1, r2 = d.deals
    assert r1.points == {a: 4.0, b: 2.0, c: 0.0}
    assert r2.points == {a: 2.0, b: 2.0, c: 2.0}
    assert d.totals == {a: 6.0, b: 4.0, c: 2.0}
    assert r1.seed is not None and (r1.matches, r1.finished) == (6, 6)
    assert [s["bot_id"] for s in table.standings] == [a, b, c]


# -- entry windows ---------------------------------------------------------------------------------


def test_entries_until_the_deadline_then_it_is_planned(pool) -> None:
    cand, a, b, late = make_bots(pool, 4)
    tid = create_tournament(pool, name="open g", game=GAME, format="gauntlet", candidate_bot_id=cand,
                            entry_deadline=(deadline := _soon(600)), organiser_id=5)
    enter_tournament(pool, tid, a)
    enter_tournament(pool, tid, b)
    with pytest.raises(TournamentError, match="already entered"):
        enter_tournament(pool, tid, a)
    with pytest.raises(TournamentError, match="candidate"):
        enter_tournament(pool, tid, cand)
    with pytest.raises(BotNotFoundError):
        enter_tournament(pool, tid, 10**9)
    with pytest.raises(TournamentNotFoundError):
        enter_tournament(pool, 10**9, a)
    with pytest.raises(TournamentError, match="open for entries"):
        plan_tournament(pool, tid)
    assert close_entries(pool, tid) == "open"  # not yet
    assert close_due_entries(pool) == ([], [])
    assert close_entries(pool, tid, now=deadline - timedelta(milliseconds=1)) == "open"
    after = deadline + timedelta(seconds=1)
    with pytest.raises(TournamentClosedError, match="closed its entries"):
        enter_tournament(pool, tid, late, now=after)
    assert close_due_entries(pool, now=after) == ([tid], [])
    assert close_due_entries(pool, now=after) == ([tid], [])  # still to plan: planning is retried until done
    ids = plan_tournament(pool, tid)
    assert len(ids) == 2 * 2
    assert close_due_entries(pool) == ([], [])
    with pytest.raises(TournamentClosedError):
        enter_tournament(pool, tid, late)
    with pool.connection() as conn:
        row = conn.execute("SELECT status, organiser_id FROM tournaments WHERE id = %s", (tid,)).fetchone()
        order = [r[0] for r in conn.execute(
            "SELECT bot_id FROM tournament_bots WHERE tournament_id = %s ORDER BY position", (tid,))]
    assert row == ("planned", 5) and order == [cand, a, b]


def test_too_few_entrants_cancels_with_the_reason(pool) -> None:
    a, b, c = make_bots(pool, 3)
    tid = create_tournament(pool, name="lonely", game=GAME, format="round_robin", player_counts=(2, 3),
                            bot_ids=[a], entry_deadline=(deadline := _soon(600)))
    enter_tournament(pool, tid, b)
    revoke_bot(pool, c)
    with pytest.raises(TournamentError, match="revoked"):
        enter_tournament(pool, tid, c)
    after = deadline + timedelta(seconds=1)
    assert close_due_entries(pool, now=after) == ([], [tid])
    table = final_table(pool, tid)
    assert table.status == "cancelled"
    assert table.outcome == "too few entrants: 2 bots entered, at least 3 needed"
    with pytest.raises(TournamentClosedError, match="cancelled"):
        enter_tournament(pool, tid, a)
    with pytest.raises(TournamentError, match="cancelled"):
        plan_tournament(pool, tid)


def test_a_tournament_without_a_window_takes_no_entries_and_autostart_closes_at_once(pool) -> None:
    a, b, c = make_bots(pool, 3)
    fixed = create_tournament(pool, name="fixed", game=GAME, bot_ids=[a, b])
    with pytest.raises(TournamentClosedError, match="no entry window"):
        enter_tournament(pool, fixed, c)
    auto = create_tournament(pool, name="auto", game=GAME, format="duplicate", bot_ids=[a, b, c], autostart=True)
    assert close_due_entries(pool) == ([auto], [])
    assert len(plan_tournament(pool, auto)) == 6


def test_house_bots_enter_only_their_games(pool) -> None:
    a, house = make_bots(pool, 2)
    with pool.connection() as conn:
        # What ladder.house.ensure_house_bot writes: the operator's flag and the kind's games.
        conn.execute("UPDATE bots SET house = true WHERE id = %s", (house,))
        conn.execute("INSERT INTO house_bots (bot_id, kind, games) VALUES (%s, 'random', %s)", (house, ["flowar"]))
    tid = create_tournament(pool, name="t", game=GAME, entry_deadline=_soon(60))
    enter_tournament(pool, tid, a)
    with pytest.raises(TournamentError, match=f"does not play {GAME}"):
        enter_tournament(pool, tid, house)


def test_a_gauntlet_whose_candidate_was_revoked_is_cancelled(pool) -> None:
    cand, a = make_bots(pool, 2)
    tid = create_tournament(pool, name="g", game=GAME, format="gauntlet", candidate_bot_id=cand, bot_ids=[a],
                            entry_deadline=(deadline := _soon(600)))
    revoke_bot(pool, cand)
    assert close_due_entries(pool, now=deadline + timedelta(seconds=1)) == ([], [tid])
    assert final_table(pool, tid).outcome == f"the candidate (bot id {cand}) was revoked"
