"""Leaderboards, recent matches, replays, standings and rating rebuilds (ladder.read, ladder.ratings).

ladder/README.md, docs/faults.md F-14.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from fixtures.ladder_helpers import DUEL, GAME, count, make_bots, make_result, play

from ladder.bots import revoke_bot
from ladder.errors import MatchNotFoundError, TournamentNotFoundError
from ladder.matches import claim_match, record_result
from ladder.ratings import rebuild_ratings
from ladder.read import export_replay, leaderboard, recent_matches, tournament_standings
from ladder.tournaments import create_tournament, plan_match, plan_round_robin

pytestmark = pytest.mark.usefixtures("games")


def _snapshot(pool: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with pool.connection() as conn:
        ratings = conn.execute(
            "SELECT bot_id, game, elo, games, wins, draws, losses, score_sum, last_played FROM ratings "
            "ORDER BY game, bot_id"
        ).fetchall()
        history = conn.execute(
            "SELECT match_id, bot_id, game, result_seq, elo_before, elo_after, delta FROM rating_history "
            "ORDER BY result_seq, bot_id"
        ).fetchall()
    return ratings, history


def _random_ranks(rng: random.Random, n: int) -> list[int]:
    scores = [rng.randint(0, 3) for _ in range(n)]  # few values: ties are common
    return [1 + sum(1 for o in scores if o > s) for s in scores]


def test_leaderboard_orders_by_elo_and_counts_from_rows(pool: Any) -> None:
    a, b, c = make_bots(pool, 3)
    tid = create_tournament(pool, name="t", game=GAME, bot_ids=[a, b, c])
    ids = plan_round_robin(pool, tid)  # 6 duels
    for mid in ids:
        with pool.connection() as conn:
            seats = [r[0] for r in conn.execute("SELECT bot_id FROM seats WHERE match_id = %s ORDER BY seat", (mid,))]
        # a beats everyone; b and c draw
        ranks = [1, 2] if seats[0] == a else [2, 1] if seats[1] == a else [1, 1]
        play(pool, mid, ranks)
    board = leaderboard(pool, GAME)
    assert [r.bot_id for r in board] == [a, b, c] or [r.bot_id for r in board] == [a, c, b]
    top = board[0]
    assert (top.rank, top.name, top.games, top.wins, top.draws, top.losses) == (1, "bot-0", 4, 4, 0, 0)
    assert top.elo > 1500 > board[2].elo
    assert top.avg_score == 10.0 and top.last_played is not None
    assert sum(r.games for r in board) == 12
    assert sum(r.draws for r in board) == 4
    assert sum(r.elo for r in board) == pytest.approx(4500.0)
    assert leaderboard(pool, DUEL) == []
    assert len(leaderboard(pool, GAME, limit=2)) == 2
    revoke_bot(pool, a)
    assert [r.bot_id for r in leaderboard(pool, GAME)][0] != a
    assert leaderboard(pool, GAME, include_revoked=True)[0].bot_id == a


def test_ratings_are_per_game(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    m1 = plan_match(pool, game_string=f"{GAME}(players=2)", bot_ids=[a, b], plan_key="1")
    m2 = plan_match(pool, game_string=DUEL, bot_ids=[a, b], plan_key="2")
    play(pool, m1, [1, 2])
    play(pool, m2, [2, 1])
    assert [(r.bot_id, r.elo) for r in leaderboard(pool, GAME)] == [(a, 1516.0), (b, 1484.0)]
    assert [(r.bot_id, r.elo) for r in leaderboard(pool, DUEL)] == [(b, 1516.0), (a, 1484.0)]


def test_recent_matches(pool: Any) -> None:
    a, b, c = make_bots(pool, 3)
    m1 = plan_match(pool, game_string=f"{GAME}(players=3)", bot_ids=[a, b, c], plan_key="1")
    m2 = plan_match(pool, game_string=DUEL, bot_ids=[c, a], plan_key="2")
    m3 = plan_match(pool, game_string=DUEL, bot_ids=[b, c], plan_key="3")
    play(pool, m1, [2, 1, 3])
    play(pool, m2, [1, 2])
    claim_match(pool, m3, "w1")
    finished = recent_matches(pool, status="finished")
    assert [m.id for m in finished] == [m2, m1]
    assert [(s.name, s.rank, s.verdict) for s in finished[1].seats] == [
        ("bot-0", 2, "normal"), ("bot-1", 1, "normal"), ("bot-2", 3, "normal")]
    assert [m.id for m in recent_matches(pool, game=DUEL)] == [m3, m2]
    assert recent_matches(pool, game=DUEL, status="running")[0].seats[0].rank is None
    assert [m.id for m in recent_matches(pool, bot_id=a)] == [m2, m1]
    assert len(recent_matches(pool, limit=1)) == 1


def test_export_replay_hides_the_seed_until_the_end(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    mid = plan_match(pool, game_string=DUEL, bot_ids=[a, b], plan_key="1")
    before = export_replay(pool, mid)
    assert "seed" not in before["match"] and before["replay"] is None
    assert len(before["match"]["seed_commitment"]) == 64
    spec = claim_match(pool, mid, "w1")
    assert spec is not None
    assert "seed" not in export_replay(pool, mid)["match"]
    result = make_result(spec, [1, 2])
    assert record_result(pool, mid, spec.attempt, result)
    after = export_replay(pool, mid)
    assert after["match"]["seed"] == spec.seed
    assert after["replay"]["seed"] == spec.seed and after["replay"]["match_id"] == mid
    assert [(s["bot_id"], s["rank"], s["name"]) for s in after["seats"]] == [(a, 1, "bot-0"), (b, 2, "bot-1")]
    assert [(x["attempt"], x["status"], x["worker"]) for x in after["attempts"]] == [(1, "finished", "w1")]
    assert isinstance(after["match"]["finished_at"], str)
    with pytest.raises(MatchNotFoundError):
        export_replay(pool, 10**9)


def test_rebuild_gives_the_online_numbers(pool: Any) -> None:
    bots = make_bots(pool, 5)
    tid = create_tournament(pool, name="t", game=GAME, bot_ids=bots, player_counts=(2, 3, 4))
    ids = plan_round_robin(pool, tid)
    rng = random.Random(2024)
    rng.shuffle(ids)
    # Record from three threads at once so that commit order differs from planning order.
    chunks = [ids[i::3] for i in range(3)]

    def run(chunk: list[int], worker: str) -> None:
        for mid in chunk:
            spec = claim_match(pool, mid, worker)
            assert spec is not None
            ranks = _random_ranks(random.Random(mid), len(spec.seat_bot_ids))
            assert record_result(pool, mid, spec.attempt, make_result(spec, ranks))

    threads = [threading.Thread(target=run, args=(c, f"w{i}")) for i, c in enumerate(chunks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # Some DUEL matches too, so that a per-game rebuild leaves the other game alone.
    d = plan_match(pool, game_string=DUEL, bot_ids=bots[:2], plan_key="d")
    play(pool, d, [1, 2])
    assert count(pool, "SELECT count(*) FROM matches WHERE status = 'finished'") == len(ids) + 1
    online = _snapshot(pool)
    assert len(online[1]) == count(pool, "SELECT count(*) FROM seats WHERE rank IS NOT NULL")

    summary = rebuild_ratings(pool)
    assert summary["matches"] == len(ids) + 1 and summary["changed"] == 0
    assert summary["games"][GAME] == {"matches": len(ids), "bots": 5}
    assert _snapshot(pool) == online  # identical, bit for bit

    with pool.connection() as conn:  # damage the stored numbers; a rebuild repairs them
        conn.execute("UPDATE ratings SET elo = 0, games = 99 WHERE game = %s", (GAME,))
        conn.execute("DELETE FROM rating_history WHERE game = %s AND result_seq %% 2 = 0", (GAME,))
        conn.execute("UPDATE ratings SET elo = 7 WHERE game = %s", (DUEL,))
    summary = rebuild_ratings(pool, GAME)
    assert list(summary["games"]) == [GAME] and summary["changed"] == 5
    ratings, history = _snapshot(pool)
    assert history == online[1]
    assert [r for r in ratings if r[1] == GAME] == [r for r in online[0] if r[1] == GAME]
    assert {r[2] for r in ratings if r[1] == DUEL} == {7.0}  # other game untouched


def test_tournament_standings_from_rows(pool: Any) -> None:
    bots = make_bots(pool, 4)
    tid = create_tournament(pool, name="t", game=GAME, bot_ids=bots, player_counts=(4,))
    ids = plan_round_robin(pool, tid)  # one combination, 4 rotations
    for mid in ids[:3]:
        spec = claim_match(pool, mid, "w")
        assert spec is not None
        # whoever sits in seat 0 wins; seats 1 and 2 tie
        assert record_result(pool, mid, spec.attempt, make_result(spec, [1, 2, 2, 4]))
    standings = tournament_standings(pool, tid)
    assert len(standings) == 4
    assert sum(r.matches for r in standings) == 12
    assert sum(r.points for r in standings) == 3 * 6  # 6 pairs per 4-player match
    assert sum(r.wins for r in standings) == 3 and sum(r.draws for r in standings) == 0
    assert [r.position for r in standings] == [1, 2, 3, 4]
    assert standings[0].points >= standings[-1].points
    with pytest.raises(TournamentNotFoundError):
        tournament_standings(pool, 999)
