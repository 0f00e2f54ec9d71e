"""A competition's season: its matchmaking policy measured, its tables, its own leaderboard
(ladder.competition_season; docs/competitions.md "The season").

Oracles: counts of matches per bot and per table kept by the test itself, a Bradley-Terry model
of known strengths that decides results, and the accounts the test gave each bot.
"""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from fixtures.competition_helpers import HOUR, T0, account, bot, competition
from fixtures.ladder_helpers import play

from ladder import competitions as comp
from ladder.competition_season import plan_season_round, season_table, season_tables
from ladder.tournaments import plan_match


def _simulate(accounts: list[int], n: int, rounds: int, seed: int) -> tuple[int, list[list[int]]]:
    """Rounds of :func:`season_tables` with every bot online and results of a strength model; returns the
    largest spread of matches per bot seen after any round, and every table."""
    rng = random.Random(seed)
    bots = list(range(1, len(accounts) + 1))
    account_of = dict(zip(bots, accounts, strict=True))
    strength = {b: rng.gauss(1500, 200) for b in bots}
    games: Counter[int] = Counter()
    met: Counter[frozenset[int]] = Counter()
    worst, seen = 0, []
    for r in range(rounds):
        rating = {b: strength[b] + rng.gauss(0, 60) for b in bots}  # a season fit is noisy
        tables = season_tables(bots, n, games=games, rating=rating, account=account_of, met=met,
                               rng=random.Random(f"round {r}"))
        for table in tables:
            games.update({b: n for b in table})  # every table plays every seat rotation: n matches
            met.update(frozenset((a, b)) for a in table for b in table if a < b)
        seen += tables
        worst = max(worst, max(games[b] for b in bots) - min(games[b] for b in bots))
    return worst, seen


@pytest.mark.parametrize(("accounts", "n"), [
    (list(range(10)), 2),
    (list(range(11)), 2),
    ([0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9], 2),
    ([0, 0, 0, 1, 1, 2, 3], 2),
    ([0, 0, 0, 1, 2, 3, 4, 5, 6], 3),
    ([0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9], 4),
    ([i // 2 for i in range(20)], 3),
])
def test_matches_per_bot_stay_within_one_round_and_accounts_never_share_a_table(accounts: list[int],
                                                                                n: int) -> None:
    """The stated spread (docs/competitions.md): after every one of 60 rounds with every entrant
    online, the matches per bot differ by at most one round's (n, each table playing its n seat
    rotations), whenever no account has more entrants than there are tables."""
    for seed in range(3):
        worst, tables = _simulate(accounts, n, 60, seed)
        assert worst <= n, (accounts, n, seed, worst)
        assert all(len({accounts[b - 1] for b in t}) == n for t in tables)


def test_the_spread_measure_can_fail() -> None:
    """An account holding more entrants than there are tables cannot keep up: its bots sit out in
    turn, and the measure says so (the bound above is stated for the other case)."""
    worst, _ = _simulate([0, 0, 0, 0, 1, 2], 2, 30, 0)
    assert worst > 2


def test_rounds_on_the_database_rotate_seats_on_one_deal_and_keep_the_spread(pool: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight rounds of a floriferous competition with 7 entrants of 5 accounts, every match played
    (results from a strength model): each round is one deal (one seed) of tables in both seat orders,
    no two bots of one account ever meet, matches per bot stay within 2 (one round) after every
    round, and the season table holds every entrant and counts the competition's matches only."""
    c = competition(pool, max_entrants_per_account=2)
    owners = [account(pool, f"acc{i}") for i in range(5)]
    plan = [0, 0, 1, 1, 2, 3, 4]
    bots = [bot(pool, owners[a], f"s{i}") for i, a in enumerate(plan)]
    owner_of = dict(zip(bots, plan, strict=True))
    for b in bots:
        comp.enter_competition(pool, c.id, b, account_id=owners[owner_of[b]], now=T0)
    strength = {b: 200.0 * i for i, b in enumerate(bots)}
    rng = random.Random(7)
    played: Counter[int] = Counter()
    for r in range(1, 9):
        ids = plan_season_round(pool, c.id, round_no=r, online=bots, now=T0 + r * timedelta(minutes=5))
        assert plan_season_round(pool, c.id, round_no=r, online=bots, now=T0) == ids  # idempotent
        with pool.connection() as conn:
            rows = conn.execute("SELECT m.id, m.seed, array_agg(s.bot_id ORDER BY s.seat) FROM matches m "
                                "JOIN seats s ON s.match_id = m.id WHERE m.id = ANY(%s) GROUP BY m.id",
                                (ids,)).fetchall()
        assert len({seed for _, seed, _ in rows}) == 1
        seatings = {tuple(seats) for _, _, seats in rows}
        assert all((s[1], s[0]) in seatings for s in seatings)  # every table in both seat orders
        assert all(owner_of[s[0]] != owner_of[s[1]] for s in seatings)
        assert len(rows) == 6  # 7 bots: 3 tables, one bot sits out
        for mid, _, seats in rows:
            p = 1 / (1 + 10 ** ((strength[seats[1]] - strength[seats[0]]) / 400))
            play(pool, mid, [1, 2] if rng.random() < p else [2, 1])
            played.update(seats)
        assert max(played.values()) - min(played[b] for b in bots) <= 2
    ladder_match = plan_match(pool, game_string="floriferous(players=2)", bot_ids=bots[:2], plan_key="x:1")
    play(pool, ladder_match, [1, 2])  # not the competition's: its table ignores it
    table = season_table(pool, c.id)
    assert table.matches == sum(played.values()) // 2
    assert {row.bot_id: row.matches for row in table.rows} == dict(played)
    assert table.rows[0].rating > table.rows[-1].rating and all(r.low < r.rating < r.high for r in table.rows)
    # anyone may read the table: a burst of readers costs one fit, and a new result is a new fit
    from ladder import competition_season as cs

    before = cs._SEASON_FITS.computed
    with ThreadPoolExecutor(16) as readers:
        burst = list(readers.map(lambda _: season_table(pool, c.id), range(16)))
    assert all(t == table for t in burst)
    assert cs._SEASON_FITS.computed == before  # the same data: the fit made above
    extra = plan_season_round(pool, c.id, round_no=9, online=bots, now=T0 + 9 * timedelta(minutes=5))
    play(pool, extra[0], [1, 2])
    after = season_table(pool, c.id)
    assert after.matches == table.matches + 1 and cs._SEASON_FITS.computed == before + 1
    # nor, with nothing new, do views read every season match again: only a result or an entrant's change does
    reads: list[int] = []
    real = cs.load_records
    monkeypatch.setattr(cs, "load_records", lambda *a, **k: reads.append(1) or real(*a, **k))
    assert [season_table(pool, c.id) for _ in range(5)] == [after] * 5 and reads == []
    comp.disqualify(pool, c.id, actor_id=None, reason="collusion found", now=T0 + HOUR, bot_id=bots[0])
    late = season_table(pool, c.id)
    assert reads == [1] and [r.bot_id for r in late.rows][-1] == bots[0] and late != after


def test_no_round_outside_the_season_nor_for_busy_or_offline_bots(pool: Any) -> None:
    c = competition(pool)
    owners = [account(pool, f"acc{i}") for i in range(4)]
    bots = [bot(pool, o) for o in owners]
    for b, o in zip(bots, owners, strict=True):
        comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
    assert plan_season_round(pool, c.id, round_no=1, online=bots, now=T0 - HOUR) == []
    assert plan_season_round(pool, c.id, round_no=1, online=bots, now=c.deadline_at) == []
    first = plan_season_round(pool, c.id, round_no=1, online=bots[:3], now=T0)
    assert len(first) == 2  # three online: one table (both seat orders), one bot sits out
    second = plan_season_round(pool, c.id, round_no=2, online=bots, now=T0)
    with pool.connection() as conn:
        def seated(ids: list[int]) -> set[int]:
            return {r[0] for r in conn.execute("SELECT bot_id FROM seats WHERE match_id = ANY(%s)", (ids,))}
        busy, idle = seated(first), seated(second)
    assert len(second) == 2 and not busy & idle and busy | idle == set(bots)


def test_the_workers_tick_plays_the_season_locks_at_the_deadline_and_starts_the_evaluation(
        pool: Any, migrated_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``parterre.competition_tick`` at times the test picks: in the season it plans one round per
    period among the bots the referees see (twice in one period: one round), at the deadline it
    locks the versions, at ``final_at`` it starts the final evaluation; each queues what it planned."""
    import workers.tasks as tasks
    from workers import directory, periodic

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_REDIS_URL", "")
    monkeypatch.setattr(tasks, "_pool", pool)
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "delay", queued.append)
    c = competition(pool)
    owners = [account(pool, f"acc{i}") for i in range(4)]
    bots = [bot(pool, o) for o in owners]
    for b, o in zip(bots, owners, strict=True):
        comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
    monkeypatch.setattr(directory, "online_bots", lambda referees, game: bots if game == "floriferous" else [])
    start = (T0 + HOUR).timestamp()
    assert periodic.competition_tick(now=start, period_s=30) == {"season": 4, "locked": 0, "final": 0}
    assert periodic.competition_tick(now=start + 1, period_s=30)["season"] == 4  # the same round, queued again
    with pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM matches WHERE competition_id = %s", (c.id,)).fetchone()[0] == 4
    assert len(set(queued)) == 4
    assert periodic.competition_tick(now=c.deadline_at.timestamp() + 1, period_s=30)["locked"] == 1
    assert comp.get_competition(pool, c.id).locked_at is not None
    assert periodic.competition_tick(now=c.deadline_at.timestamp() + 2, period_s=30)["locked"] == 0
    out = periodic.competition_tick(now=c.final_at.timestamp(), period_s=30)
    assert out["final"] == 6 and comp.get_competition(pool, c.id).evaluation == "running"


def test_competition_matches_stay_rated_past_the_daily_cap_per_pair_of_accounts(pool: Any) -> None:
    """Two accounts' entrants meet 22 times in a day of season rounds: every match is rated (the cap of 20
    a day per pair of accounts is for the ladder and challenges, whose meetings the accounts choose)."""
    c = competition(pool)
    owners = [account(pool, f"acc{i}") for i in range(2)]
    bots = [bot(pool, o) for o in owners]
    for b, o in zip(bots, owners, strict=True):
        comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
    for r in range(11):
        for mid in plan_season_round(pool, c.id, round_no=r, online=bots, now=T0):
            play(pool, mid, [1, 2])
    with pool.connection() as conn:
        rated = conn.execute("SELECT count(*) FILTER (WHERE rated), count(*) FROM matches").fetchone()
        games = conn.execute("SELECT games FROM ratings WHERE bot_id = %s", (bots[0],)).fetchone()[0]
    assert tuple(rated) == (22, 22) and games == 22


def test_readers_going_round_many_competitions_cost_one_fit_each(pool: Any) -> None:
    """An anonymous reader goes round the tables of more competitions than a memo of the last few fits holds
    (nine here, each with its played matches). Each competition's fit is computed once, whatever the order of
    the views: going round again costs no fit (before, the memo kept the 8 most recent inputs of any
    competitions, so a round of nine recomputed every one, each 0.8 s of CPU at 64 entrants), and a new
    result in one competition costs one fit, of that one."""
    from ladder import competition_season as cs

    owners = [account(pool, f"round{i}") for i in range(2)]
    comps = []
    for i in range(9):
        c = competition(pool, name=f"round cup {i}")
        pair = [bot(pool, o) for o in owners]
        for b, o in zip(pair, owners, strict=True):
            comp.enter_competition(pool, c.id, b, account_id=o, now=T0)
        for mid in plan_season_round(pool, c.id, round_no=1, online=pair, now=T0 + timedelta(minutes=5)):
            play(pool, mid, [1, 2])
        comps.append((c, pair))
    first = [season_table(pool, c.id) for c, _ in comps]
    before = cs._SEASON_FITS.computed
    for _ in range(3):
        assert [season_table(pool, c.id) for c, _ in comps] == first
    assert cs._SEASON_FITS.computed == before
    c, pair = comps[4]
    extra = plan_season_round(pool, c.id, round_no=2, online=pair, now=T0 + timedelta(minutes=10))
    play(pool, extra[0], [2, 1])
    assert [season_table(pool, c.id).matches for c, _ in comps] == [t.matches + (i == 4) for i, t in enumerate(first)]
    assert cs._SEASON_FITS.computed == before + 1
