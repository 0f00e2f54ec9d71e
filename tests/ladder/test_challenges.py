"""Challenges and casual matches (ladder.challenges; docs/participants.md).

Given registered bots, when a challenge is created, then its match waits
(never claimed, never requeued) until every seated bot is connected, or
expires with the missing bots named; a casual match is recorded and replayed
but changes no rating, online or in a rebuild.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from fixtures.ladder_helpers import DUEL, GAME, count, make_bots, make_result

from ladder import matches as ladder_matches
from ladder import ratings, read
from ladder.bots import revoke_bot
from ladder.challenges import challenge_status, create_challenge, dispatch_challenges, list_challenges
from ladder.errors import ChallengeError, MatchNotFoundError
from ladder.matches import claim_match, record_result
from ladder.tournaments import plan_match

pytestmark = pytest.mark.usefixtures("games")

GS = f"{GAME}(players=2)"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"game_string": "no_such_game"}, "no_such_game"),
        ({"game_string": f"{GAME}(variant=z)"}, "variant"),
        ({"game_string": f"{GAME}(players=3)"}, "3 player"),
        ({"bots": 1}, "2 player"),
        ({"game_string": DUEL, "bots": 3}, "2 player"),
        ({"repeat": True}, "two seats"),
        ({"unknown": True}, "no bot"),
        ({"revoked": True}, "revoked"),
        ({"time_control": {"cap_ms": -5}}, "cap_ms"),
        ({"time_control": {"cap_s": 5}}, "cap_s"),
        ({"time_control": {"base_ms": 0, "increment_ms": 0, "cap_ms": 0}}, "no time"),
        ({"expires_after_s": 0}, "expires_after_s"),
        ({"expires_after_s": 10**9}, "expires_after_s"),
        ({"rated": "yes"}, "rated"),
    ],
)
def test_bad_challenges_are_refused_and_write_nothing(pool, kwargs: dict[str, Any], match: str) -> None:
    bots = make_bots(pool, 3)
    seats = bots[: kwargs.pop("bots", 2)]
    if kwargs.pop("repeat", False):
        seats = [bots[0], bots[0]]
    if kwargs.pop("unknown", False):
        seats = [bots[0], 10**9]
    if kwargs.pop("revoked", False):
        revoke_bot(pool, bots[1])
    args: dict[str, Any] = {"game_string": GS, "bot_ids": seats, "rated": True} | kwargs
    with pytest.raises(ChallengeError, match=match) as err:
        create_challenge(pool, **args)
    assert isinstance(err.value, ValueError)
    assert count(pool, "SELECT count(*) FROM matches") == 0
    assert count(pool, "SELECT count(*) FROM challenges") == 0


def test_a_challenge_waits_for_its_bots_then_runs(pool) -> None:
    a, b, c = make_bots(pool, 3)
    mid = create_challenge(pool, game_string=GS, bot_ids=[b, a], rated=True, challenger_id=77,
                           time_control={"cap_ms": 300})
    info = challenge_status(pool, mid)
    assert (info.status, info.rated, info.challenger_id, info.bot_ids, info.game_string) == (
        "waiting", True, 77, (b, a), f"{GAME}(players=2,variant=a)")
    assert info.time_control == {"base_ms": 0, "increment_ms": 0, "cap_ms": 300, "margin_ms": 100}
    assert (info.expires_at - info.created_at).total_seconds() == 300
    # a waiting match is not claimable, and the reaper's stale-planned sweep ignores it
    assert claim_match(pool, mid, "w1") is None
    assert mid not in ladder_matches.stale_planned(pool, 0)
    # one of its bots online (and others): nothing starts
    assert dispatch_challenges(pool, {GAME: {a, c}}) == ([], [])
    assert challenge_status(pool, mid).status == "waiting"
    # online for another game only: still waiting
    assert dispatch_challenges(pool, {DUEL: {a, b}}) == ([], [])
    assert dispatch_challenges(pool, lambda game: {a, b} if game == GAME else set()) == ([mid], [])
    assert challenge_status(pool, mid).status == "planned"
    assert dispatch_challenges(pool, {GAME: {a, b}}) == ([], [])  # started once
    h.play(pool, mid, [2, 1])
    info = challenge_status(pool, mid)
    assert (info.status, info.ranks, info.reason) == ("finished", (2, 1), None)
    assert count(pool, "SELECT count(*) FROM rating_history WHERE match_id = %s", (mid,)) == 2


def test_a_challenge_expires_naming_the_missing_bots(pool) -> None:
    a, b = make_bots(pool, 2, prefix="home")  # house- names are the house bots'
    mid = create_challenge(pool, game_string=GS, bot_ids=[a, b], rated=False, expires_after_s=0.5)
    created = challenge_status(pool, mid).created_at
    assert dispatch_challenges(pool, {GAME: {a}}, now=created + timedelta(seconds=0.49)) == ([], [])  # not yet
    assert dispatch_challenges(pool, {GAME: {a}}, now=created + timedelta(seconds=0.5)) == ([], [mid])
    info = challenge_status(pool, mid)
    assert info.status == "expired"
    assert info.reason == f"bot home-1 (id {b}) was not connected within 0.5 s"
    with pool.connection() as conn:
        assert conn.execute("SELECT status FROM matches WHERE id = %s", (mid,)).fetchone()[0] == "expired"
    assert claim_match(pool, mid, "w1") is None
    # too late: connecting now starts nothing
    assert dispatch_challenges(pool, {GAME: {a, b}}) == ([], [])
    both = create_challenge(pool, game_string=GS, bot_ids=[a, b], rated=True, expires_after_s=0.2)
    dispatch_challenges(pool, {}, now=challenge_status(pool, both).created_at + timedelta(seconds=0.3))
    assert challenge_status(pool, both).reason == (
        f"bot home-0 (id {a}), bot home-1 (id {b}) were not connected within 0.2 s")


def test_a_challenge_that_ends_in_no_shows_says_who_was_missing(pool) -> None:
    """A started challenge whose attempts all ended ``aborted_no_show`` reports the last attempt's
    words (a new user saw ``reason: null`` after three no-shows)."""
    a, b = make_bots(pool, 2)
    mid = create_challenge(pool, game_string=GS, bot_ids=[a, b], rated=False)
    assert dispatch_challenges(pool, {GAME: {a, b}}) == ([mid], [])
    for attempt in (1, 2):
        spec = claim_match(pool, mid, "w1")
        assert spec is not None and spec.attempt == attempt
        ladder_matches.record_failed_attempt(pool, mid, attempt, "aborted_no_show",
                                             f"no_show: seat 1 (bot {b}), try {attempt}", max_attempts=2)
    info = challenge_status(pool, mid)
    assert (info.status, info.reason) == ("aborted_no_show", f"no_show: seat 1 (bot {b}), try 2")
    assert [c.reason for c in list_challenges(pool) if c.match_id == mid] == [info.reason]


def test_challenges_are_listed_for_their_challenger(pool) -> None:
    a, b, c = make_bots(pool, 3)
    m1 = create_challenge(pool, game_string=GS, bot_ids=[a, b], rated=True, challenger_id=1)
    m2 = create_challenge(pool, game_string=DUEL, bot_ids=[c, a], rated=False, challenger_id=2)
    m3 = create_challenge(pool, game_string=GS, bot_ids=[b, c], rated=True, challenger_id=1)
    assert [i.match_id for i in list_challenges(pool, challenger_id=1)] == [m3, m1]
    assert [i.match_id for i in list_challenges(pool, bot_id=a)] == [m2, m1]
    assert [i.match_id for i in list_challenges(pool)] == [m3, m2, m1]
    assert [i.match_id for i in list_challenges(pool, before=m3, limit=1)] == [m2]
    assert list_challenges(pool, challenger_id=1)[0].bot_names == ("bot-1", "bot-2")
    with pytest.raises(MatchNotFoundError):
        challenge_status(pool, 10**9)


def test_casual_matches_leave_ratings_alone_and_rebuild_agrees(pool) -> None:
    a, b, c = make_bots(pool, 3)
    rated = [plan_match(pool, game_string=GS, bot_ids=p, plan_key=f"r{i}") for i, p in
             enumerate([[a, b], [b, c], [c, a]])]
    casual = [create_challenge(pool, game_string=GS, bot_ids=p, rated=False) for p in ([a, b], [a, c], [b, c])]
    started, _ = dispatch_challenges(pool, {GAME: {a, b, c}})
    assert started == casual
    # interleave rated and casual results: the casual ones (bot a wins all) must change nothing
    for r, k in zip(rated, casual, strict=True):
        h.play(pool, r, [1, 2])
        before = {(x.bot_id, x.elo, x.games, x.wins) for x in read.leaderboard(pool, GAME)}
        spec = claim_match(pool, k, "w1")
        assert spec is not None
        assert record_result(pool, k, spec.attempt, make_result(spec, [1, 2]))
        assert {(x.bot_id, x.elo, x.games, x.wins) for x in read.leaderboard(pool, GAME)} == before
    assert count(pool, "SELECT count(*) FROM rating_history WHERE match_id = ANY(%s)", (casual,)) == 0
    assert count(pool, "SELECT count(*) FROM replays WHERE match_id = ANY(%s)", (casual,)) == 3  # recorded, replayable
    assert count(pool, "SELECT sum(games) FROM ratings") == 6  # 3 rated 2-seat matches
    assert count(pool, "SELECT coalesce(sum(games), 0) FROM bot_player_stats") == 6
    online = {x.bot_id: x.elo for x in read.leaderboard(pool, GAME)}
    summary = ratings.rebuild_ratings(pool, GAME)
    assert summary["matches"] == 3 and summary["changed"] == 0
    assert {x.bot_id: x.elo for x in read.leaderboard(pool, GAME)} == online
    assert count(pool, "SELECT count(*) FROM rating_history") == 6


def test_a_challenge_needs_the_consent_of_other_accounts_bots_and_their_games(pool) -> None:
    """docs/participants.md: a bot of an account plays a challenge only when it accepts challenges in
    the game (its owner's setting), and only in the games it is registered for. Both are checked when
    the challenge is made, whoever makes it (the operator's ``parterre challenge create`` too), with a
    reason naming the bot and the setting, instead of a challenge that expires at the next tick."""
    from ladder.accounts import create_account
    from ladder.owned_bots import create_bot

    alice = create_account(pool, "alice", "correct horse battery staple").id
    bob = create_account(pool, "bob", "correct horse battery staple").id
    shy, _ = create_bot(pool, bob, "shy-bot", games=[GAME])  # created refusing challenges
    keen, _ = create_bot(pool, bob, "keen-bot", games=[GAME], accepts_challenges=True)
    duel_only, _ = create_bot(pool, alice, "duel-only", games=[DUEL], accepts_challenges=True)
    mine, _ = create_bot(pool, alice, "mine", games=[GAME])
    (operators,) = make_bots(pool, 1)
    for challenger in (None, alice):
        with pytest.raises(ChallengeError, match=r"shy-bot \(id \d+\) does not accept challenges in .*bot-set"):
            create_challenge(pool, game_string=GS, bot_ids=[shy.id, operators], rated=False,
                             challenger_id=challenger)
    with pytest.raises(ChallengeError, match=rf"not registered for {GAME}: duel-only"):
        create_challenge(pool, game_string=GS, bot_ids=[duel_only.id, operators], rated=False, challenger_id=alice)
    assert count(pool, "SELECT count(*) FROM challenges") == 0
    create_challenge(pool, game_string=GS, bot_ids=[shy.id, operators], rated=False, challenger_id=bob)
    create_challenge(pool, game_string=GS, bot_ids=[keen.id, mine.id], rated=False, challenger_id=alice)
    assert count(pool, "SELECT count(*) FROM challenges") == 2
