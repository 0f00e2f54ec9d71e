"""Rating farming, tried as a farmer would (docs/participants.md "Fair play"; docs/faults.md "House names
and rating farming").

Two bots of one account, both online, must never be rated against each other, whichever public path
seats them: the continuous ladder's matchmaking tick, a challenge, a tournament. Between two accounts,
a burst of rated challenges is rated only up to the daily cap per pair of accounts. Results are
recorded with ``record_result`` exactly as a worker records a referee's result.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from fixtures.ladder_helpers import GAME, count, play

from ladder import accounts as acc
from ladder import challenges, fair_play
from ladder import owned_bots as ob
from ladder.bots import register_bot
from ladder.matches import claim_match, record_result
from ladder.tournaments import create_tournament, plan_match, plan_tournament
from web import create_app
from web.auth import ParticipantConfig
from workers import directory

pytestmark = pytest.mark.usefixtures("games")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"
GS = f"{GAME}(players=2)"


_n = iter(range(1, 10**6))


def account(pool: Any, role: str = "participant") -> int:
    return acc.create_account(pool, f"farmer{next(_n)}", PASSWORD, role=role).id


def bot_of(pool: Any, account_id: int) -> int:
    return ob.create_bot(pool, account_id, f"farm-bot-{next(_n)}", accepts_challenges=True)[0].id


def rated_between(pool: Any, a: int, b: int) -> int:
    """Rating-history rows of matches seating both ``a`` and ``b``."""
    return count(pool, "SELECT count(*) FROM rating_history r WHERE r.bot_id IN (%s, %s) AND "
                       "EXISTS (SELECT 1 FROM seats s WHERE s.match_id = r.match_id AND s.bot_id = %s) AND "
                       "EXISTS (SELECT 1 FROM seats s WHERE s.match_id = r.match_id AND s.bot_id = %s)",
                 (a, b, a, b))


def test_the_ladder_tick_never_pairs_two_bots_of_one_account(pool, ladder_db, monkeypatch) -> None:
    """Both bots of one account online, with one stranger's: ten ticks of the continuous ladder play
    the stranger against each in turn and never the two siblings (they were paired and rated ten
    times in under two minutes)."""
    farmer, stranger = account(pool), account(pool)
    a1, a2 = bot_of(pool, farmer), bot_of(pool, farmer)
    s1 = bot_of(pool, stranger)
    ladder_ticks(pool, ladder_db, monkeypatch, [a1, a2, s1], 10)
    tables = [set(t) for (t,) in h_tables(pool)]
    assert len(tables) >= 5 and all(t != {a1, a2} for t in tables), tables
    assert rated_between(pool, a1, a2) == 0
    assert rated_between(pool, a1, s1) > 0 and rated_between(pool, a2, s1) > 0


def ladder_ticks(pool: Any, ladder_db: str, monkeypatch: pytest.MonkeyPatch, bots: list[int], ticks: int) -> None:
    """``bots`` online on one referee; ``ticks`` runs of ``parterre.ladder_tick``, 10 s of virtual time
    apart, each match it queues played at once (the first seat wins)."""
    import workers.periodic as periodic
    import workers.tasks as tasks

    online = {b: directory.BotPresence(1, 1, (GAME,)) for b in bots}
    monkeypatch.setenv("PARTERRE_DATABASE_URL", ladder_db)
    monkeypatch.setenv("PARTERRE_REDIS_URL", "redis://unused")
    monkeypatch.setenv("PARTERRE_LADDER_GAMES", GS)
    monkeypatch.setenv("PARTERRE_LADDER_PERIOD_S", "10")
    monkeypatch.setattr(tasks, "_pool", None)
    monkeypatch.setattr(directory, "read_referees", lambda *a, **k: [directory.RefereeInfo("r1", "a:1", "a:1", 0,
                                                                                             online)])
    queued: list[int] = []
    monkeypatch.setattr(periodic, "queue_matches", queued.extend)  # what the tick queues, in one batch
    try:
        for r in range(ticks):
            periodic.ladder_tick(now=1000.0 + 10 * r)
            for mid in sorted(set(queued)):
                if count(pool, "SELECT count(*) FROM matches WHERE id = %s AND status = 'planned'", (mid,)):
                    play(pool, mid, [1, 2])
    finally:
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None


def test_two_accounts_alone_on_the_ladder_are_rated_at_most_the_daily_cap(pool, ladder_db, monkeypatch) -> None:
    """Alice's and Bob's bots are the only ones online: the ladder paired them 47 times (rated) in ten
    minutes. Now, of 30 ticks, at most the daily cap per pair of accounts are played, all rated, and
    the ladder then pairs no one."""
    alice, bob = account(pool), account(pool)
    a, b = bot_of(pool, alice), bot_of(pool, bob)
    ladder_ticks(pool, ladder_db, monkeypatch, [a, b], fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY + 10)
    cap = fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY
    assert count(pool, "SELECT count(*) FROM matches") == cap
    assert rated_between(pool, a, b) == 2 * cap  # two rating-history rows per rated match


def test_the_ladder_never_pairs_two_accounts_across_the_rating_gap(pool, ladder_db, monkeypatch) -> None:
    """Alice's strong bot and Bob's weak one, more than 400 Elo apart (reached by playing an operator's
    bot), both online with nobody else: the ladder rated them against each other at a 450 gap. Now
    it plans nothing for them."""
    alice, bob = account(pool), account(pool)
    strong, weak = bot_of(pool, alice), bot_of(pool, bob)
    (sparring, _) = register_bot(pool, "sparring")
    n = 0
    while count(pool, "SELECT coalesce(max(elo) - min(elo), 0)::int FROM ratings WHERE game = %s "
                      "AND bot_id IN (%s, %s)", (GAME, strong, weak)) <= fair_play.MAX_RATED_GAP:
        n += 1
        play(pool, plan_match(pool, game_string=GS, bot_ids=[strong, sparring], plan_key=f"s:{n}"), [1, 2])
        play(pool, plan_match(pool, game_string=GS, bot_ids=[sparring, weak], plan_key=f"w:{n}"), [1, 2])
    ladder_ticks(pool, ladder_db, monkeypatch, [strong, weak], 5)
    assert rated_between(pool, strong, weak) == 0
    assert count(pool, "SELECT count(*) FROM matches WHERE starts_with(plan_key, 'ladder:')") == 0


def test_ladder_matches_then_a_burst_of_rated_challenges_past_the_cap_are_casual(pool, ladder_db, monkeypatch,
                                                                                 client) -> None:
    """Alice and Bob play the ladder up to the daily cap, then Alice fires 10 rated challenges at Bob's
    bot at one instant: the challenge rule rates 3 of them at creation, but the rating gate makes
    every one casual when its result is recorded, saying why."""
    alice, bob = account(pool), account(pool)
    a, b = bot_of(pool, alice), bot_of(pool, bob)
    cap = fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY
    ladder_ticks(pool, ladder_db, monkeypatch, [a, b], cap)
    assert rated_between(pool, a, b) == 2 * cap
    auth = token(client, pool, alice)
    barrier = threading.Barrier(10)
    answers: list[dict[str, Any]] = []

    def fire() -> None:
        barrier.wait()
        r = client.post("/api/challenges", json={"game": GS, "bots": [a, b], "rated": True}, headers=auth)
        assert r.status_code == 201, r.text
        answers.append(r.json())

    threads = [threading.Thread(target=fire) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answers) == 10 and sum(x["rated"] for x in answers) == fair_play.MAX_RATED_PER_ACCOUNT_PAIR
    mids = sorted(x["match_id"] for x in answers)
    challenges.dispatch_challenges(pool, {GAME: {a, b}})
    assert count(pool, "SELECT count(*) FROM matches WHERE id = ANY(%s) AND status = 'planned'", (mids,)) == 10
    for mid in mids:
        play(pool, mid, [1, 2])
    assert rated_between(pool, a, b) == 2 * cap
    for x in answers:
        info = challenges.challenge_status(pool, x["match_id"])
        assert not info.rated and info.unrated_reason and "casual" in info.unrated_reason
        if x["rated"]:
            assert f"at most {cap} ladder matches and challenges" in info.unrated_reason


def h_tables(pool: Any) -> list[tuple[list[int]]]:
    with pool.connection() as conn:
        return conn.execute("SELECT array_agg(bot_id ORDER BY seat) FROM seats GROUP BY match_id "
                            "ORDER BY match_id").fetchall()


def test_a_tournament_of_one_organisers_bots_rates_none_of_their_meetings(pool, client) -> None:
    """An organiser seats two of their own bots and a house bot in a round robin (``POST /api/tournaments``):
    every match is played and recorded, the siblings' meetings change no rating and say why."""
    from ladder.house import ensure_house_bot

    organiser = account(pool, "organiser")
    o1, o2 = bot_of(pool, organiser), bot_of(pool, organiser)
    other, _ = ensure_house_bot(pool, "random", [GAME])
    r = client.post("/api/tournaments", json={"name": "friends", "game": GAME, "rounds": 2, "bot_ids": [o1, o2, other]},
                    headers=token(client, pool, organiser, ("tournament:create",)))
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    for mid in plan_tournament(pool, tid):
        seats = play(pool, mid, [1, 2]).seat_bot_ids
        assert len(seats) == 2
    assert rated_between(pool, o1, o2) == 0
    assert rated_between(pool, o1, other) > 0 and rated_between(pool, o2, other) > 0
    with pool.connection() as conn:
        reasons = conn.execute(
            "SELECT m.rated, m.unrated_reason FROM matches m WHERE m.tournament_id = %s AND "
            "(SELECT count(*) FROM seats s WHERE s.match_id = m.id AND s.bot_id IN (%s, %s)) = 2",
            (tid, o1, o2)).fetchall()
    assert reasons and all(not rated and "one account" in why for rated, why in reasons)
    with pool.connection() as conn:
        sibling_match = conn.execute("SELECT match_id FROM seats WHERE bot_id = %s INTERSECT "
                                     "SELECT match_id FROM seats WHERE bot_id = %s LIMIT 1", (o1, o2)).fetchone()[0]
    page = TestClient(create_app(pool=pool)).get(f"/api/matches/{sibling_match}")
    assert page.status_code == 200 and "never rated against each other" in page.json()["unrated_reason"]


def test_a_match_planned_by_an_operator_tool_is_gated_too(pool) -> None:
    """``plan_match`` (operator tools, regressions) seats whatever it is given: the gate where Elo is
    applied still refuses to rate two bots of one account."""
    farmer = account(pool)
    a1, a2 = bot_of(pool, farmer), bot_of(pool, farmer)
    mid = plan_match(pool, game_string=GS, bot_ids=[a1, a2], plan_key="tool:1")
    play(pool, mid, [1, 2])
    assert rated_between(pool, a1, a2) == 0
    assert count(pool, "SELECT count(*) FROM ratings WHERE bot_id IN (%s, %s)", (a1, a2)) == 0
    # nor counted in the leaderboard's per-player-count figures, which count rated matches only
    assert count(pool, "SELECT count(*) FROM bot_player_stats WHERE bot_id IN (%s, %s)", (a1, a2)) == 0


@pytest.fixture
def client(pool: Any, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    app = create_app(pool=pool)
    app.state.participants = ParticipantConfig(signup="open", max_open_challenges=50)
    return TestClient(app, client=("203.0.113.9", 50000))


def token(client: TestClient, pool: Any, account_id: int,
          scopes: tuple[str, ...] = ("challenge", "bot:manage")) -> dict[str, str]:
    found = acc.get_account(pool, account_id)
    assert found is not None
    r = client.post("/api/tokens", json={"scopes": list(scopes)}, auth=(found.username, PASSWORD))
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def test_a_rated_challenge_between_two_bots_of_one_account_is_refused(pool, client) -> None:
    farmer = account(pool)
    a1, a2 = bot_of(pool, farmer), bot_of(pool, farmer)
    auth = token(client, pool, farmer)
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [a1, a2], "rated": True}, headers=auth)
    assert r.status_code == 400 and "one account" in r.json()["detail"]
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [a1, a2]}, headers=auth)
    assert r.status_code == 201 and r.json()["rated"] is False


def test_a_burst_of_rated_challenges_between_two_accounts_meets_the_daily_cap(pool, client) -> None:
    """Account B's bot resigns at once; account A fires 10 rated challenges at it at the same instant:
    exactly the cap are rated, the rest are played casual and the answer says so."""
    a, b = account(pool), account(pool)
    mine, theirs = bot_of(pool, a), bot_of(pool, b)
    auth = token(client, pool, a)
    barrier = threading.Barrier(10)
    answers: list[dict[str, Any]] = []

    def fire() -> None:
        barrier.wait()
        r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine, theirs], "rated": True},
                        headers=auth)
        assert r.status_code == 201, r.text
        answers.append(r.json())

    threads = [threading.Thread(target=fire) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answers) == 10
    rated = [x for x in answers if x["rated"]]
    assert len(rated) == fair_play.MAX_RATED_PER_ACCOUNT_PAIR
    assert all("24 hours" in x["unrated_reason"] for x in answers if not x["rated"])
    info = challenges.challenge_status(pool, next(x["match_id"] for x in answers if not x["rated"]))
    assert not info.rated and info.unrated_reason and "casual" in info.unrated_reason


def test_a_rated_challenge_across_a_wide_rating_gap_is_casual(pool) -> None:
    """Past the rating gap the ladder would never bridge, a rated challenge is played casual."""
    (strong, _), (weak, _) = register_bot(pool, "strong"), register_bot(pool, "weak")
    n = 0
    while count(pool, "SELECT coalesce(max(elo) - min(elo), 0)::int FROM ratings WHERE game = %s", (GAME,)) \
            <= fair_play.MAX_RATED_GAP:
        n += 1
        play(pool, plan_match(pool, game_string=GS, bot_ids=[strong, weak], plan_key=f"gap:{n}"), [1, 2])
    mid = challenges.create_challenge(pool, game_string=GS, bot_ids=[strong, weak], rated=True)
    info = challenges.challenge_status(pool, mid)
    assert not info.rated and info.unrated_reason and "Elo apart" in info.unrated_reason
    assert challenges.dispatch_challenges(pool, {GAME: {strong, weak}})[0] == [mid]
    spec = claim_match(pool, mid, "w")
    assert spec is not None and record_result(pool, mid, spec.attempt, h.make_result(spec, [1, 2]))
    assert count(pool, "SELECT count(*) FROM rating_history WHERE match_id = %s", (mid,)) == 0




def test_a_tournament_stays_rated_past_the_daily_cap(pool) -> None:
    """A tournament between bots of two accounts (an organiser's, here made with the operator's
    ``create_tournament``) is the organiser's responsibility: more meetings than the daily cap per pair
    of accounts are all rated."""
    alice, bob = account(pool), account(pool)
    a, b = bot_of(pool, alice), bot_of(pool, bob)
    tid = create_tournament(pool, name="derby", game=GAME, rounds=fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY + 2,
                            bot_ids=[a, b])
    mids = plan_tournament(pool, tid)
    assert len(mids) > fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY
    for mid in mids:
        play(pool, mid, [1, 2])
    assert rated_between(pool, a, b) == 2 * len(mids)
