"""Competitions: creating, entering, the limits, the lock at the deadline, the organiser's tools
(ladder.competitions; docs/competitions.md).

Oracles: the schedule and limits as the tests set them (the clock is passed in), counts of rows
read back with SQL, and which of two uploaded versions was active when.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from fixtures.competition_helpers import HOUR, T0, account, archive, bot, competition, hosted_version, organiser
from fixtures.ladder_helpers import count, play

from games.api import InvalidOptionError, UnknownGameError
from ladder import competitions as comp
from ladder import submissions as sub
from ladder.bots import revoke_bot
from ladder.competition_final import advance_evaluation, evaluation, start_evaluation
from ladder.competition_season import VersionQuotaError
from ladder.errors import (
    BotNotFoundError,
    CompetitionClosedError,
    CompetitionError,
    CompetitionLimitError,
    CompetitionNotFoundError,
    CompetitionPermissionError,
)
from ladder.tournaments import plan_match


def _nothing(pool: Any) -> None:
    assert count(pool, "SELECT count(*) FROM competitions") == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"deadline_at": T0 - HOUR, "opens_at": T0 - 2 * HOUR}, CompetitionError, "already passed"),
        ({"opens_at": T0 + 25 * HOUR}, CompetitionError, "after the opening"),
        ({"final_at": T0 + 23 * HOUR}, CompetitionError, "before the deadline"),
        ({"deadline_at": T0.replace(tzinfo=None)}, CompetitionError, "timezone-aware"),
        ({"game": "no_such_game"}, UnknownGameError, "no_such_game"),
        ({"player_counts": (2, 7)}, InvalidOptionError, "7"),
        ({"player_counts": (1,)}, CompetitionError, "2 or more"),
        ({"entry_mode": "connected"}, CompetitionError, "entry mode"),
        ({"max_entrants_per_account": 0}, CompetitionError, "max_entrants_per_account"),
        ({"max_entrants_per_account": 21}, CompetitionError, "max_entrants_per_account"),
        ({"max_versions_per_day": 0}, CompetitionError, "max_versions_per_day"),
        ({"final_budget": 0}, CompetitionError, "final_budget"),
        ({"final_max_batches": True}, CompetitionError, "final_max_batches"),
        ({"time_control": {"cap_ms": 5}}, CompetitionError, "decision"),
        ({"description": "x" * 20_001}, CompetitionError, "description"),
        ({"rules": "no \x00 here"}, CompetitionError, "control"),
        ({"name": ""}, CompetitionError, "name"),
    ],
)
def test_bad_competitions_are_refused_and_write_nothing(pool: Any, kwargs: dict[str, Any], error: type,
                                                        match: str) -> None:
    org = organiser(pool)
    with pytest.raises(error, match=match):
        competition(pool, org, **kwargs)
    _nothing(pool)


def test_only_an_active_organiser_or_admin_organises(pool: Any) -> None:
    for role, status in (("participant", "active"), ("organiser", "disabled")):
        with pytest.raises(CompetitionPermissionError):
            competition(pool, account(pool, f"{role}-{status}", role=role, status=status))
    _nothing(pool)
    assert competition(pool, account(pool, "boss", role="admin")).organiser == "boss"


def test_a_competition_is_stored_as_given_and_its_status_follows_the_clock(pool: Any) -> None:
    c = competition(pool, opens_at=T0 + HOUR, deadline_at=T0 + 10 * HOUR, final_at=T0 + 12 * HOUR,
                    player_counts=(3, 2), game_options={"variant": "a"} if False else None,
                    time_control={"cap_ms": 500, "margin_ms": 50}, max_entrants_per_account=2,
                    max_versions_per_day=3, description="# Spring\n\nPlay *well*.", rules="Be kind.")
    again = comp.get_competition(pool, c.id)
    assert again == c
    assert (c.player_counts, c.time_control["cap_ms"], c.max_entrants_per_account, c.max_versions_per_day) == (
        (2, 3), 500, 2, 3)
    assert c.description == "# Spring\n\nPlay *well*." and c.rules == "Be kind."
    assert [c.status(T0 + h * HOUR) for h in (0, 1, 9, 10, 11, 12, 99)] == [
        "upcoming", "open", "open", "locked", "locked", "evaluating", "evaluating"]
    assert [x.id for x in comp.list_competitions(pool)] == [c.id]
    with pytest.raises(CompetitionNotFoundError):
        comp.get_competition(pool, c.id + 1)


# -- entries --------------------------------------------------------------------------------------


def test_an_owner_enters_a_bot_and_every_bad_entry_is_refused(pool: Any) -> None:
    c = competition(pool, opens_at=T0 + HOUR, entry_mode="hosted")
    alice, bob = account(pool, "alice"), account(pool, "bob")
    good = bot(pool, alice, "good")
    hosted_version(pool, good)
    plain = bot(pool, alice, "plain")  # not hosted
    lafleur = bot(pool, alice, "lafleur-only", games=("lafleur",))
    other_game = bot(pool, alice, "other-version")
    hosted_version(pool, other_game, games=("flowar",))
    retired = bot(pool, alice, "retired")
    hosted_version(pool, retired)
    revoke_bot(pool, retired)
    bobs = bot(pool, bob, "bobs")
    hosted_version(pool, bobs)
    cases = [
        (good, alice, T0, CompetitionClosedError, "opens for entries"),
        (good, alice, T0 + 24 * HOUR, CompetitionClosedError, "closed its entries"),
        (bobs, alice, T0 + 2 * HOUR, BotNotFoundError, "no bot"),
        (10**9, alice, T0 + 2 * HOUR, BotNotFoundError, "no bot"),
        (plain, alice, T0 + 2 * HOUR, CompetitionError, "hosted bots only"),
        (lafleur, alice, T0 + 2 * HOUR, CompetitionError, "plays lafleur, not floriferous"),
        (other_game, alice, T0 + 2 * HOUR, CompetitionError, "active version .* plays flowar"),
        (retired, alice, T0 + 2 * HOUR, CompetitionError, "retired"),
    ]
    for bot_id, who, now, error, match in cases:
        with pytest.raises(error, match=match):
            comp.enter_competition(pool, c.id, bot_id, account_id=who, now=now)
    assert count(pool, "SELECT count(*) FROM competition_entrants") == 0
    e = comp.enter_competition(pool, c.id, good, account_id=alice, now=T0 + 2 * HOUR)
    assert (e.bot_id, e.account, e.entered_at, e.locked_version) == (good, "alice", T0 + 2 * HOUR, None)
    with pytest.raises(CompetitionError, match="already entered"):
        comp.enter_competition(pool, c.id, good, account_id=alice, now=T0 + 3 * HOUR)
    second = bot(pool, alice, "second")
    hosted_version(pool, second)
    with pytest.raises(CompetitionLimitError, match="at most 1"):
        comp.enter_competition(pool, c.id, second, account_id=alice, now=T0 + 3 * HOUR)
    with pytest.raises(CompetitionNotFoundError):
        comp.enter_competition(pool, c.id + 1, good, account_id=alice, now=T0 + 3 * HOUR)
    assert [x.bot_id for x in comp.entrants(pool, c.id)] == [good]


def test_a_burst_of_entries_lets_exactly_the_allowed_number_in(pool: Any) -> None:
    """Eight bots of one account enter at once where two are allowed (threads against PostgreSQL):
    exactly two succeed and six are refused by the limit; another account's bots all get in."""
    c = competition(pool, max_entrants_per_account=2)
    alice, bob = account(pool, "alice"), account(pool, "bob")
    mine = [bot(pool, alice, f"a{i}") for i in range(8)]
    theirs = [bot(pool, bob, f"b{i}") for i in range(2)]
    start = threading.Barrier(10)
    outcomes: list[str] = []

    def enter(bot_id: int, who: int) -> None:
        start.wait()
        try:
            comp.enter_competition(pool, c.id, bot_id, account_id=who, now=T0 + HOUR)
            outcomes.append("in")
        except CompetitionLimitError:
            outcomes.append("limit")

    threads = [threading.Thread(target=enter, args=(b, alice)) for b in mine]
    threads += [threading.Thread(target=enter, args=(b, bob)) for b in theirs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["in"] * 4 + ["limit"] * 6
    assert count(pool, "SELECT count(*) FROM competition_entrants WHERE account_id = %s", (alice,)) == 2
    assert count(pool, "SELECT count(*) FROM competition_entrants WHERE account_id = %s", (bob,)) == 2


def test_the_daily_cap_on_new_versions_counts_an_accounts_entrants(pool: Any) -> None:
    """``max_versions_per_day`` 2: the entrant's account uploads two versions, the third is refused
    (nothing stored); a bot that is not entered is not capped. The cap holds while entries are open,
    by the database's clock, as uploads are."""
    now = datetime.now(UTC)
    c = competition(pool, now=now - HOUR, opens_at=now - HOUR, deadline_at=now + HOUR, final_at=now + 2 * HOUR,
                    max_versions_per_day=2)
    alice = account(pool, "alice")
    entered, free = bot(pool, alice, "entered"), bot(pool, alice, "free")
    comp.enter_competition(pool, c.id, entered, account_id=alice, now=now)
    sub.create_version(pool, entered, archive(label="1"))
    sub.create_version(pool, entered, archive(label="2"))
    with pytest.raises(VersionQuotaError, match="allows 2 new version"):
        sub.create_version(pool, entered, archive(label="3"))
    assert count(pool, "SELECT count(*) FROM hosted_versions WHERE bot_id = %s", (entered,)) == 2
    for label in "abc":
        sub.create_version(pool, free, archive(label=label), limit=10)


# -- the deadline lock ------------------------------------------------------------------------------


def test_the_version_active_at_the_deadline_is_locked_not_a_later_upload(pool: Any) -> None:
    """v1 is active before the deadline; v2 is uploaded and made active after it: the lock keeps v1
    (its id, and "1", the label its seats record), and locking again changes nothing."""
    real = datetime.now(UTC)  # versions are stamped by the database's clock
    c = competition(pool, now=real - HOUR, opens_at=real - HOUR, deadline_at=real + HOUR,
                    final_at=real + 2 * HOUR, entry_mode="hosted")
    alice = account(pool, "alice")
    b = bot(pool, alice, "hosted")
    v1 = hosted_version(pool, b)
    comp.enter_competition(pool, c.id, b, account_id=alice, now=real)
    with pytest.raises(CompetitionClosedError, match="lock at its deadline"):
        comp.lock_versions(pool, c.id, now=real)
    v2 = hosted_version(pool, b)
    with pool.connection() as conn:  # v2 became active after the deadline (its verdict's time)
        conn.execute("UPDATE hosted_versions SET decided_at = %s WHERE id = %s", (c.deadline_at + HOUR / 2, v2.id))
    assert sub.active_version(pool, b).id == v2.id
    (e,) = comp.lock_versions(pool, c.id, now=c.deadline_at + HOUR)
    assert (e.locked_version_id, e.locked_version) == (v1.id, "1")
    assert comp.lock_versions(pool, c.id, now=c.deadline_at + 2 * HOUR) == [e]


# -- organiser tools --------------------------------------------------------------------------------


def test_the_deadline_moves_only_forward_and_only_before_the_evaluation(pool: Any) -> None:
    org = organiser(pool)
    c = competition(pool, org)
    stranger = account(pool, "stranger", role="organiser")
    with pytest.raises(CompetitionPermissionError):
        comp.extend_deadline(pool, c.id, actor_id=stranger, deadline_at=c.deadline_at + HOUR, now=T0)
    with pytest.raises(CompetitionError, match="only moves later"):
        comp.extend_deadline(pool, c.id, actor_id=org, deadline_at=c.deadline_at - HOUR, now=T0)
    moved = comp.extend_deadline(pool, c.id, actor_id=org, deadline_at=c.deadline_at + 2 * HOUR, now=T0)
    assert (moved.deadline_at, moved.final_at) == (c.deadline_at + 2 * HOUR, c.final_at + 2 * HOUR)
    with pytest.raises(CompetitionError, match="cannot start before"):
        comp.extend_deadline(pool, c.id, actor_id=org, deadline_at=moved.deadline_at + HOUR,
                             final_at=moved.deadline_at, now=T0)
    with pytest.raises(CompetitionClosedError, match="has started"):
        comp.extend_deadline(pool, c.id, actor_id=None, deadline_at=moved.final_at + 3 * HOUR,
                             now=moved.final_at)
    admin = account(pool, "root", role="admin")
    comp.extend_deadline(pool, c.id, actor_id=admin, deadline_at=moved.deadline_at + HOUR,
                         now=moved.deadline_at + timedelta(minutes=1))  # after the deadline, before final_at
    assert [e["kind"] for e in comp.events(pool, c.id)] == ["deadline_extended", "deadline_extended"]


def test_disqualifying_an_account_takes_all_its_entrants_and_it_cannot_enter_again(pool: Any) -> None:
    org = organiser(pool)
    c = competition(pool, org, max_entrants_per_account=3)
    alice, bob = account(pool, "alice"), account(pool, "bob")
    a1, a2, a3, b1 = bot(pool, alice), bot(pool, alice), bot(pool, alice), bot(pool, bob)
    for b, who in ((a1, alice), (a2, alice), (b1, bob)):
        comp.enter_competition(pool, c.id, b, account_id=who, now=T0)
    with pytest.raises(CompetitionPermissionError):
        comp.disqualify(pool, c.id, actor_id=bob, account_id=alice, reason="collusion", now=T0)
    with pytest.raises(CompetitionError, match="one bot or one account"):
        comp.disqualify(pool, c.id, actor_id=org, reason="x", now=T0)
    assert comp.disqualify(pool, c.id, actor_id=org, account_id=alice, reason="collusion", now=T0) == sorted([a1, a2])
    with pytest.raises(CompetitionError, match="disqualified"):
        comp.enter_competition(pool, c.id, a3, account_id=alice, now=T0)
    with pytest.raises(CompetitionError, match="no entrant left"):
        comp.disqualify(pool, c.id, actor_id=org, bot_id=a1, reason="again", now=T0)
    rows = {e.bot_id: e.disqualified_reason for e in comp.entrants(pool, c.id)}
    assert rows == {a1: "collusion", a2: "collusion", b1: None}


def test_the_locked_hosted_version_keeps_its_credential_and_plays_the_final_evaluation(
        pool: Any, redis_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """v1 was active at the deadline, v2 was made active after it. The referees' token hash keeps v1's
    credential (and v2's) while the final evaluation runs, a final match seats v1 while any other
    match seats v2 (the versions the worker starts: ``workers.hosting.seats.seats_for_match``), and
    once the table is frozen v1's credential is revoked."""
    import workers.hosting.seats as seats
    from workers.hosting.validation import SECRET_ENV

    started: dict[int, dict[int, int]] = {}

    def record(_pool: Any, versions: dict[int, sub.HostedVersion], **kw: Any) -> None:
        started[kw["match_id"]] = {k: v.id for k, v in versions.items()}

    monkeypatch.setattr(seats, "HostedSeats", record)
    secret = secrets.token_hex(20)
    r = redis.Redis.from_url(redis_base_url)
    key = f"parterre-test-{secrets.token_hex(4)}:bot_tokens"

    def live(version: sub.HostedVersion) -> bool:
        digest = hashlib.sha256(sub.hosted_token(secret, version.id, version.sha256).encode()).hexdigest()
        return r.hget(key, digest) is not None

    real = datetime.now(UTC)  # credentials are judged by the database's clock
    c = competition(pool, now=real - HOUR, opens_at=real - HOUR, deadline_at=real + HOUR,
                    final_at=real + 2 * HOUR, entry_mode="hosted", final_max_batches=1)
    alice, bob = account(pool, "alice"), account(pool, "bob")
    a, b = bot(pool, alice, "ana"), bot(pool, bob, "bea")
    v1, w1 = hosted_version(pool, a), hosted_version(pool, b)
    for v in (v1, w1):
        assert sub.activate_credential(pool, v.id, secret, r, key)
    comp.enter_competition(pool, c.id, a, account_id=alice, now=real)
    comp.enter_competition(pool, c.id, b, account_id=bob, now=real)
    with pool.connection() as conn:  # the deadline passes (by the database's clock)
        conn.execute("UPDATE competitions SET deadline_at = now(), final_at = now() "
                     "WHERE id = %s", (c.id,))
    v2 = hosted_version(pool, a)
    assert sub.activate_credential(pool, v2.id, secret, r, key)
    try:
        assert live(v1) and live(v2)  # not locked yet: v1 may be the one the lock takes
        locked = {e.bot_id: e.locked_version_id for e in comp.lock_versions(pool, c.id, now=real + 2 * HOUR)}
        assert locked == {a: v1.id, b: w1.id}
        sub.sync_credentials(pool, r, key)
        assert live(v1) and live(v2)
        _, batch = start_evaluation(pool, c.id, now=real + 2 * HOUR)
        assert {k: v.id for k, v in comp.match_versions(pool, batch[0], [a, b]).items()} == {a: v1.id, b: w1.id}
        other = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[a, b], plan_key="casual:1")
        assert {k: v.id for k, v in comp.match_versions(pool, other, [a, b]).items()} == {a: v2.id, b: w1.id}
        monkeypatch.setenv(SECRET_ENV, secret)
        for mid in (batch[0], other):
            seats.seats_for_match(pool, [a, b], match_id=mid, attempt=1, control_addresses=["127.0.0.1:1"],
                                  referees=[], drain_s=1.0)
        assert started == {batch[0]: {a: v1.id, b: w1.id}, other: {a: v2.id, b: w1.id}}
        for mid in batch:
            play(pool, mid, [1, 2])
        advance_evaluation(pool, c.id, now=real + 3 * HOUR)
        assert evaluation(pool, c.id).status == "finished"
        sub.sync_credentials(pool, r, key)
        assert not live(v1) and live(v2) and live(w1)
    finally:
        r.delete(key, f"{key}:published")
