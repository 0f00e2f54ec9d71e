"""Tournaments and round-robin planning (ladder.tournaments). docs/faults.md F-12."""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from typing import Any

import pytest
from fixtures.ladder_helpers import DUEL, GAME, count, make_bots

from games.api import InvalidOptionError, UnknownGameError
from ladder.bots import revoke_bot
from ladder.errors import BotNotFoundError, TournamentError, TournamentNotFoundError
from ladder.tournaments import (
    TimeControl,
    create_tournament,
    game_string_for,
    plan_match,
    plan_round_robin,
    tournament_status,
)

pytestmark = pytest.mark.usefixtures("games")


def _nothing_written(pool: Any) -> None:
    assert count(pool, "SELECT count(*) FROM tournaments") == 0
    assert count(pool, "SELECT count(*) FROM tournament_bots") == 0
    assert count(pool, "SELECT count(*) FROM matches") == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"game": "no_such_game"}, UnknownGameError, "no_such_game"),
        ({"game_options": {"variant": "z"}}, InvalidOptionError, "variant"),
        ({"game_options": {"colour": "red"}}, InvalidOptionError, "colour"),
        ({"game_options": {"players": 3}}, TournamentError, "player_counts"),
        ({"player_counts": (2, 5)}, InvalidOptionError, "5"),
        ({"player_counts": ()}, TournamentError, "empty"),
        ({"game": DUEL, "player_counts": (3,)}, InvalidOptionError, "3"),
        ({"player_counts": (2, 3, 4), "bots": 3}, TournamentError, "at least 4"),
        ({"rounds": 0}, TournamentError, "rounds"),
        ({"format": "swiss"}, TournamentError, "swiss"),
        ({"time_control": {"base_ms": -1}}, TournamentError, "base_ms"),
        ({"time_control": {"cap_s": 1}}, TournamentError, "cap_s"),
        ({"name": ""}, TournamentError, "name"),
        ({"duplicate": True}, TournamentError, "distinct"),
        ({"unknown_bot": True}, BotNotFoundError, "id"),
        ({"revoked": True}, TournamentError, "revoked"),
    ],
)
def test_create_tournament_errors_write_nothing(pool: Any, kwargs: dict[str, Any], error: type, match: str) -> None:
    bots = make_bots(pool, kwargs.pop("bots", 4))
    if kwargs.pop("duplicate", False):
        bots = [bots[0], *bots]
    if kwargs.pop("unknown_bot", False):
        bots = [*bots, 10**9]
    if kwargs.pop("revoked", False):
        revoke_bot(pool, bots[0])
    args = {"name": "cup", "game": GAME, "bot_ids": bots, "player_counts": (2,)} | kwargs
    with pytest.raises(error, match=match):
        create_tournament(pool, **args)
    _nothing_written(pool)


def test_create_stores_normalised_settings(pool: Any) -> None:
    bots = make_bots(pool, 3)
    tid = create_tournament(
        pool, name=" spring cup ", game=GAME, bot_ids=bots, player_counts=[3, 2, 2], rounds=2,
        time_control={"cap_ms": 200, "margin_ms": 50}, game_options={"variant": "b"},
    )
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT name, game, game_options, format, player_counts, rounds, time_control, status "
            "FROM tournaments WHERE id = %s", (tid,)
        ).fetchone()
        order = [r[0] for r in conn.execute(
            "SELECT bot_id FROM tournament_bots WHERE tournament_id = %s ORDER BY position", (tid,))]
    assert row == ("spring cup", GAME, {"variant": "b"}, "round_robin", [2, 3], 2,
                   {"base_ms": 0, "increment_ms": 0, "cap_ms": 200, "margin_ms": 50}, "created")
    assert order == bots


def test_game_strings_come_from_the_registry() -> None:
    assert game_string_for(GAME, {"variant": "b"}, 3) == "ladder_fixture(players=3,variant=b)"
    assert game_string_for(GAME, None, 2) == "ladder_fixture(players=2,variant=a)"
    assert game_string_for(DUEL, {}, 2) == "ladder_duel()"
    assert TimeControl.parse(None).to_json() == {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 100}


def test_round_robin_plan_counts_seeds_and_rotations(pool: Any) -> None:
    bots = make_bots(pool, 4)
    tid = create_tournament(pool, name="rr", game=GAME, bot_ids=bots, player_counts=(2, 3, 4),
                            game_options={"variant": "b"})
    ids = plan_round_robin(pool, tid)
    assert len(ids) == 6 * 2 + 4 * 3 + 1 * 4 == 28
    assert ids == sorted(ids)
    status = tournament_status(pool, tid)
    assert (status["total"], status["planned"], status["finished"], status["status"], status["complete"]) == (
        28, 28, 0, "planned", False)
    assert count(pool, "SELECT count(*) FROM seats") == 6 * 2 * 2 + 4 * 3 * 3 + 1 * 4 * 4
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, m.plan_key, m.game_string, m.seed, m.seed_commitment, m.attempt, m.status, "
            "array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE m.tournament_id = %s GROUP BY m.id ORDER BY m.id", (tid,)
        ).fetchall()
    by_combo: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for _mid, key, gs, seed, commitment, attempt, st, seats in rows:
        n = len(seats)
        assert gs == f"ladder_fixture(players={n},variant=b)"
        assert commitment == hashlib.sha256(seed.encode("ascii")).hexdigest()
        assert len(seed) == 64 and (attempt, st) == (0, "planned")
        assert key.startswith(f"r1:n{n}:") and len(set(seats)) == n
        by_combo[key.rsplit(":", 1)[0]].append((key, seed, seats))
    assert len(by_combo) == 6 + 4 + 1
    seeds = set()
    for matches in by_combo.values():
        assert len({seed for _, seed, _ in matches}) == 1  # the rotations share one deal
        seeds.add(matches[0][1])
        seatings = [seats for _, _, seats in sorted(matches)]
        first = seatings[0]
        assert seatings == [first[k:] + first[:k] for k in range(len(first))]
        for seat in range(len(first)):  # every bot sits in every seat once
            assert sorted(s[seat] for s in seatings) == sorted(first)
    assert len(seeds) == len(by_combo)  # different combinations, different deals


def test_two_rounds_and_planning_twice_is_idempotent(pool: Any) -> None:
    bots = make_bots(pool, 3)
    tid = create_tournament(pool, name="rr", game=GAME, bot_ids=bots, rounds=2)
    first = plan_round_robin(pool, tid)
    assert len(first) == 2 * 3 * 2
    with pool.connection() as conn:
        seeds = conn.execute("SELECT id, seed FROM matches ORDER BY id").fetchall()
    assert plan_round_robin(pool, tid) == first
    with pool.connection() as conn:
        assert conn.execute("SELECT id, seed FROM matches ORDER BY id").fetchall() == seeds
    assert count(pool, "SELECT count(*) FROM seats") == 12 * 2


def test_two_schedulers_plan_at_once(pool: Any) -> None:
    bots = make_bots(pool, 4)
    tid = create_tournament(pool, name="rr", game=GAME, bot_ids=bots, player_counts=(2, 3, 4))
    barrier = threading.Barrier(3)
    results: list[Any] = []

    def plan() -> None:
        barrier.wait()
        try:
            results.append(plan_round_robin(pool, tid))
        except Exception as exc:  # pragma: no cover - reported by the assertion
            results.append(exc)

    threads = [threading.Thread(target=plan) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 3 and all(isinstance(r, list) for r in results), results
    assert results[0] == results[1] == results[2]
    assert count(pool, "SELECT count(*) FROM matches") == 28
    assert count(pool, "SELECT count(*) FROM seats") == 76
    assert count(pool, "SELECT count(DISTINCT seed) FROM matches") == 11


def test_plan_errors(pool: Any) -> None:
    with pytest.raises(TournamentNotFoundError):
        plan_round_robin(pool, 12345)
    with pytest.raises(TournamentNotFoundError):
        tournament_status(pool, 12345)


def test_plan_match_is_idempotent_on_its_key(pool: Any) -> None:
    a, b = make_bots(pool, 2)
    m1 = plan_match(pool, game_string="ladder_fixture(players=2)", bot_ids=[a, b], plan_key="ladder:1:a-b")
    m2 = plan_match(pool, game_string="ladder_fixture(players=2)", bot_ids=[a, b], plan_key="ladder:1:a-b")
    m3 = plan_match(pool, game_string=DUEL, bot_ids=[b, a], plan_key="ladder:1:b-a", seed="ab" * 32)
    assert m1 == m2 != m3
    with pool.connection() as conn:
        row = conn.execute("SELECT game, game_string, seed_commitment FROM matches WHERE id = %s", (m3,)).fetchone()
    assert row == (DUEL, "ladder_duel()", hashlib.sha256(("ab" * 32).encode()).hexdigest())
    with pytest.raises(TournamentError):
        plan_match(pool, game_string="ladder_fixture(players=3)", bot_ids=[a, b], plan_key="x")
    with pytest.raises(TournamentError):
        plan_match(pool, game_string="ladder_fixture(players=2)", bot_ids=[a, a], plan_key="y")
    assert count(pool, "SELECT count(*) FROM matches") == 2
