"""Leagues gated by the house bots (docs/ladder.md "Leagues"): promotions decided from recorded
matches, against a lower bound computed here by an independent method (bisection on the one-sided
score test), in order only, never for house bots, once per promotion under parallel ticks."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from statistics import NormalDist
from typing import Any

import pytest
from fixtures.ladder_helpers import GAME, count, make_bots, play, record_duel

from ladder.bots import revoke_bot
from ladder.db import connection
from ladder.house import ensure_house_bot
from ladder.ladder_rounds import BOSS_EVERY, BOSS_MAX_PENDING
from ladder.leagues import MIN_GAMES, bot_leagues, leagues_by_bot, promote, wilson_lower_bound
from ladder.tournaments import plan_ladder_round, plan_match

pytestmark = pytest.mark.usefixtures("games")

DUO = f"{GAME}(players=2)"
TRIO = f"{GAME}(players=3)"


def score_test_lower_bound(points: float, n: int, confidence: float = 0.95) -> float:
    """The smallest share p the one-sided score test does not reject, found by bisection on
    (s - p)² = z² p (1 - p) / n for p <= s: the definition of the bound, not its closed form."""
    z = NormalDist().inv_cdf(confidence)
    s = points / n
    lo, hi = 0.0, s
    for _ in range(200):
        mid = (lo + hi) / 2
        if (s - mid) ** 2 > z * z * mid * (1 - mid) / n:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def record(pool: Any, bot: int, boss: int, wins: int, losses: int = 0, draws: int = 0) -> None:
    """Plan and record rated 2-seat matches of ``bot`` against ``boss`` (seats alternating)."""
    record_duel(pool, DUO, bot, boss, wins=wins, losses=losses, draws=draws)


def promotions(pool: Any) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT bot_id, game, league, boss_id, games, wins, draws, score, lower_bound, promoted_at "
            "FROM league_promotions ORDER BY bot_id, promoted_at, "
            "array_position(ARRAY['bronze', 'silver', 'gold'], league)").fetchall()]


def later(days: int = 1) -> datetime:
    """A virtual date after every match recorded by the test."""
    return datetime.now(UTC) + timedelta(days=days)


@pytest.mark.parametrize(("points", "n"), [(14, 20), (13, 20), (27.5, 41), (20, 20), (0, 20), (10, 20), (1, 1)])
def test_the_wilson_bound_is_the_score_tests_boundary(points: float, n: int) -> None:
    assert wilson_lower_bound(points, n) == pytest.approx(score_test_lower_bound(points, n), abs=1e-9)


def test_a_bot_is_promoted_to_bronze_once_its_record_against_house_random_proves_it(pool) -> None:
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    record(pool, bot, rnd, wins=MIN_GAMES - 1)  # every game won, one game short of the minimum
    assert score_test_lower_bound(MIN_GAMES - 1, MIN_GAMES - 1) > 0.5
    assert promote(pool, now=later()) == [] and promotions(pool) == []
    record(pool, bot, rnd, wins=0, losses=13)  # 19 of 32: bound below one half
    assert score_test_lower_bound(19, 32) < 0.5
    assert promote(pool, now=later()) == []
    record(pool, bot, rnd, wins=6)  # 25 of 38
    assert score_test_lower_bound(25, 38) > 0.5
    assert promote(pool, now=datetime.now(UTC) - timedelta(days=1)) == []  # a date before the matches
    when = later(3)
    (new,) = promote(pool, now=when)
    assert (new.bot_id, new.league, new.boss_id) == (bot, "bronze", rnd)
    ((b, game, league, boss, n, w, d, s, lb, at),) = promotions(pool)
    assert (b, game, league, boss, n, w, d, at) == (bot, GAME, "bronze", rnd, 38, 25, 0, when)
    assert s == pytest.approx(25 / 38) and lb == pytest.approx(score_test_lower_bound(25, 38), abs=1e-9)
    assert promote(pool, now=later(5)) == []  # idempotent: the first date and evidence stay
    assert promotions(pool)[0][-1] == when
    with connection(pool) as conn:
        assert leagues_by_bot(conn, GAME, [bot]) == {bot: "bronze"}


def test_draws_count_half_and_casual_matches_do_not_count(pool) -> None:
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    record(pool, bot, rnd, wins=5, draws=30)  # 20 points of 35
    assert score_test_lower_bound(20, 35) < 0.5
    assert promote(pool, now=later()) == []
    mid = plan_match(pool, game_string=DUO, bot_ids=[bot, rnd], plan_key="casual")
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET rated = false WHERE id = %s", (mid,))
    play(pool, mid, [1, 2])
    with connection(pool) as conn:
        (league,) = bot_leagues(conn, bot, [GAME])
    assert league.next_gate is not None
    ev = league.next_gate.evidence
    assert (ev.games, ev.wins, ev.draws) == (35, 5, 30)  # the casual win is not evidence
    assert ev.score == pytest.approx(20 / 35) and ev.lower_bound == pytest.approx(score_test_lower_bound(20, 35))


def test_gates_are_passed_in_order_only(pool) -> None:
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    search, _ = ensure_house_bot(pool, "search", [GAME])
    record(pool, bot, greedy, wins=30)
    record(pool, bot, search, wins=30)
    record(pool, bot, rnd, wins=10, losses=10)
    assert promote(pool, now=later()) == []  # crushing Silver's and Gold's bosses does not skip Bronze
    record(pool, bot, rnd, wins=20)
    when = later(2)
    new = promote(pool, now=when)
    assert [(p.league, p.boss_id) for p in new] == [("bronze", rnd), ("silver", greedy), ("gold", search)]
    assert [(r[2], r[-1]) for r in promotions(pool)] == [("bronze", when), ("silver", when), ("gold", when)]
    with connection(pool) as conn:
        (league,) = bot_leagues(conn, bot, [GAME])
    assert league.league == "gold" and league.next_gate is None and league.note is None
    assert [p.league for p in league.promotions] == ["bronze", "silver", "gold"]


def test_house_bots_are_never_promoted_and_have_no_league(pool) -> None:
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    record(pool, greedy, rnd, wins=40)
    assert promote(pool, now=later()) == [] and promotions(pool) == []
    with connection(pool) as conn:
        assert bot_leagues(conn, greedy, [GAME]) == []


def test_a_game_the_search_bot_does_not_play_has_no_gold_gate(pool) -> None:
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    ensure_house_bot(pool, "search", ["flowar"])
    record(pool, bot, rnd, wins=25)
    record(pool, bot, greedy, wins=25)
    assert [p.league for p in promote(pool, now=later())] == ["bronze", "silver"]
    with connection(pool) as conn:
        (league,) = bot_leagues(conn, bot, [GAME])
    assert league.league == "silver" and league.leagues == ["wood", "bronze", "silver"]
    assert league.next_gate is None and league.note is not None and "Gold" in league.note


def test_a_retired_bot_keeps_its_promotions_and_is_promoted_no_further(pool) -> None:
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    record(pool, bot, rnd, wins=25)
    assert len(promote(pool, now=later())) == 1
    record(pool, bot, greedy, wins=25)
    revoke_bot(pool, bot)
    assert promote(pool, now=later(2)) == []
    assert [r[2] for r in promotions(pool)] == ["bronze"]


def test_a_multiplayer_match_is_one_result_against_the_boss(pool) -> None:
    a, other = make_bots(pool, 2)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    for i in range(MIN_GAMES):
        mid = plan_match(pool, game_string=TRIO, bot_ids=[a, rnd, other], plan_key=f"trio:{i}")
        play(pool, mid, [2, 3, 1])  # a above the boss, below the other bot
    new = promote(pool, now=later())
    assert sorted((p.bot_id, p.evidence.games, p.evidence.wins) for p in new) == [(a, MIN_GAMES, MIN_GAMES),
                                                                                 (other, MIN_GAMES, MIN_GAMES)]


def test_parallel_runs_store_each_promotion_once(pool) -> None:
    bots = make_bots(pool, 3)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    for b in bots:
        record(pool, b, rnd, wins=22)
        record(pool, b, greedy, wins=22)
    barrier = threading.Barrier(6)
    stored: list[int] = []
    errors: list[BaseException] = []

    def tick(i: int) -> None:
        try:
            barrier.wait()
            stored.append(len(promote(pool, now=later(1) + timedelta(seconds=i))))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=tick, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rows = promotions(pool)
    assert sorted((r[0], r[2]) for r in rows) == sorted((b, lg) for b in bots for lg in ("bronze", "silver"))
    assert sum(stored) == len(rows) == 6  # each promotion reported by the one run that stored it
    assert count(pool, "SELECT count(DISTINCT (bot_id, game, league)) FROM league_promotions") == 6


def test_the_league_tick_promotes_at_its_virtual_date(pool, migrated_url, monkeypatch) -> None:
    import workers.tasks as tasks
    from workers import periodic

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setattr(tasks, "_pool", pool)
    (bot,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    record(pool, bot, rnd, wins=21)
    past = (datetime.now(UTC) - timedelta(hours=1)).timestamp()
    assert periodic.league_tick(now=past) == {"promoted": 0}
    when = later(7).replace(microsecond=0)
    assert periodic.league_tick(now=when.timestamp()) == {"promoted": 1}
    assert periodic.league_tick(now=when.timestamp() + 10) == {"promoted": 0}
    assert [(r[0], r[2], r[-1]) for r in promotions(pool)] == [(bot, "bronze", when)]


def ladder_tables(pool: Any, rounds: range, bots: list[int], **kw: Any) -> list[frozenset[int]]:
    """The tables of ``rounds`` of the continuous ladder with ``bots`` online (nothing played between)."""
    out = []
    for r in rounds:
        ids = plan_ladder_round(pool, game_string=DUO, round_no=r, bot_ids=bots, **kw)
        with pool.connection() as conn:
            out += [frozenset(t) for (t,) in conn.execute(
                "SELECT array_agg(bot_id) FROM seats WHERE match_id = ANY(%s) GROUP BY match_id", (ids,))]
    return out


def test_the_ladder_gives_each_bot_games_against_its_next_boss(pool) -> None:
    wood = make_bots(pool, 4)
    (climber, top) = make_bots(pool, 2, prefix="up")
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    record(pool, climber, rnd, wins=25)
    record(pool, top, rnd, wins=25)
    record(pool, top, greedy, wins=25)
    promote(pool, now=later())
    with connection(pool) as conn:
        assert leagues_by_bot(conn, GAME, [*wood, climber, top]) == {
            **dict.fromkeys(wood, "wood"), climber: "bronze", top: "silver"}
    tables = ladder_tables(pool, range(100, 100 + BOSS_EVERY), [*wood, climber, top, rnd, greedy], max_pending=100)
    for bot in wood:  # within BOSS_EVERY rounds every bot meets its next boss, and no other
        assert frozenset((bot, rnd)) in tables and frozenset((bot, greedy)) not in tables
    assert frozenset((climber, greedy)) in tables and frozenset((climber, rnd)) not in tables
    assert not any(top in t and t & {rnd, greedy} for t in tables)  # no gate above Silver in this game
    assert frozenset((rnd, greedy)) not in tables


def test_a_boss_gets_at_most_its_share_of_matches_per_round(pool) -> None:
    wood = make_bots(pool, 3 * BOSS_MAX_PENDING + 3)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    tables = ladder_tables(pool, range(7, 10), [*wood, rnd], max_pending=100)
    assert sum(rnd in t for t in tables) == BOSS_MAX_PENDING  # the cap counts its pending matches
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET status = 'expired'")
    assert sum(rnd in t for t in ladder_tables(pool, range(10, 11), [*wood, rnd], max_pending=100)) >= 1


def test_the_boss_of_a_bot_offline_or_revoked_is_not_seated(pool) -> None:
    a, b = make_bots(pool, 2)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    assert all(rnd not in t for t in ladder_tables(pool, range(0, 3), [a, b], max_pending=100))
    revoke_bot(pool, rnd)
    assert all(rnd not in t for t in ladder_tables(pool, range(3, 6), [a, b, rnd], max_pending=100))


def test_a_bot_no_table_fits_plays_its_boss_in_any_round(pool) -> None:
    (lone,) = make_bots(pool, 1)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    rounds = [r for r in range(1, 10) if (r + lone) % BOSS_EVERY != 0][:2]
    for r in rounds:  # rounds it is not due for its boss: nobody else online, so it plays the boss
        assert ladder_tables(pool, range(r, r + 1), [lone, rnd], max_pending=100) == [frozenset((lone, rnd))]


def test_gate_matches_count_only_at_a_decisions_full_time(pool) -> None:
    """Thirty wins against house-search at 100 ms a decision (a boss that thinks, rushed to a millisecond
    of search) pass no gate; the same record at the ladder's time control (1,000 ms a decision) passes
    Gold (Bronze and Silver first, each earned at the ladder's time control)."""
    (bot,) = make_bots(pool, 1)
    bosses = {kind: ensure_house_bot(pool, kind, [GAME])[0] for kind in ("random", "greedy", "search")}
    rushed = {"base_ms": 0, "increment_ms": 0, "cap_ms": 100, "margin_ms": 100}
    for kind in ("random", "greedy", "search"):
        record_duel(pool, DUO, bot, bosses[kind], wins=30, key=f"rushed-{kind}", time_control=rushed)
    assert promote(pool, now=later()) == []
    for kind in ("random", "greedy", "search"):
        record_duel(pool, DUO, bot, bosses[kind], wins=30, key=f"full-{kind}")
    assert [p.league for p in promote(pool, now=later(2))] == ["bronze", "silver", "gold"]
    assert {r[2]: r[4] for r in promotions(pool)} == {"bronze": 30, "silver": 30, "gold": 30}  # rushed not counted
