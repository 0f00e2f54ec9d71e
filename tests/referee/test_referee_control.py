"""``MatchControl.RunMatch`` as a worker sees it: the event stream's keepalive, a worker that
goes away, and the games a match spec loads (docs/architecture.md, "Referee ↔ worker"; the per-match cost)."""

from __future__ import annotations

import asyncio
import time

import pytest
from fixtures.toy_game import ToyGame, register_toy

from bots.misbehaving import SlowBot
from bots.reference import RandomBot
from games.api import GameInfo, OptionSpec
from games.registry import register, unregister
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import referee_pb2 as pb
from referee.headers import SERVICE_TOKEN_HEADER
from referee.match_spec import MatchSpec, MatchSpecError
from referee.testing import Harness

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2}


async def test_a_quiet_match_sends_keepalive_progress_until_its_result():
    """With ``progress_interval_ms`` = 100 and no per-decision progress, a match whose bot thinks
    250 ms a decision still sends a Progress event about every 100 ms, then exactly one result."""
    async with Harness(TOKENS, progress_interval_ms=100, progress_every=1_000_000) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(SlowBot(delay_ms=250), "tok-b")
        t0 = time.monotonic()
        events = await h.run_match_events(1, "toy(players=2,turns=3)", [1, 2], cap_ms=5000)
        elapsed_s = time.monotonic() - t0
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "result" and kinds.count("result") == 1
    assert events[-1].result.status == "finished"
    assert elapsed_s >= 0.75  # 3 decisions of 250 ms by the slow seat
    # one keepalive a 100 ms at most, and not many fewer (a loaded machine may merge some)
    assert 3 <= kinds.count("progress") <= elapsed_s / 0.1 + 1
    decisions = [e.progress.decisions for e in events if e.HasField("progress")]
    assert decisions == sorted(decisions) and decisions[-1] <= 6


async def test_a_worker_that_goes_away_ends_the_room():
    """Cancelling the RunMatch call (the worker died) cancels the room; the bots get MatchEnded
    and the referee forgets the match."""
    async with Harness(TOKENS) as h:
        slow = SlowBot(delay_ms=5000)
        slow.received = []
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(slow, "tok-b")
        req = control_pb.RunMatchRequest(
            match_id=7, attempt=1, game_string="toy(players=2,turns=3)", seed="s", seat_bot_ids=[2, 1],
            time_control=pb.TimeControl(cap_ms=10_000, margin_ms=50), no_show_timeout_ms=3000)
        call = h.match_control().RunMatch(req, metadata=[(SERVICE_TOKEN_HEADER, h.service_token)])
        first = await call.read()
        assert first.HasField("started")
        assert 7 in h.core.rooms
        call.cancel()
        deadline = time.monotonic() + 5
        while h.core.rooms and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not h.core.rooms
        while time.monotonic() < deadline and not any(m.HasField("match_ended") for m in slow.received):
            await asyncio.sleep(0.02)
        ended = [m.match_ended for m in slow.received if m.HasField("match_ended")]
        assert len(ended) == 1 and ended[0].status == "infra_error"


def _spec(game_string: str) -> MatchSpec:
    req = control_pb.RunMatchRequest(match_id=1, attempt=1, game_string=game_string, seat_bot_ids=[1, 2],
                                     time_control=pb.TimeControl(cap_ms=1000))
    return MatchSpec.from_request(req, default_no_show_ms=1000, default_max_duration_ms=1000)


def test_a_game_registered_again_under_the_same_name_is_loaded_anew():
    """Match specs share a loaded game per game string, but never one of a class the registry no
    longer maps the name to (a test game re-registered, a plugin reloaded)."""

    class First(ToyGame):
        INFO = GameInfo("cachetoy", "cache test", 2, 2, (
            OptionSpec("players", int, 2, (2,), "seats"), OptionSpec("turns", int, 1, (1,), "plays per seat"),
            OptionSpec("hand", int, 1, (1,), "cards dealt to each seat")), max_game_length=10)

    class Second(First):
        pass

    register(First)
    try:
        a, b = _spec("cachetoy(players=2)"), _spec("cachetoy(players=2)")
        assert type(a.game) is First and b.game is a.game  # shared: a Game is immutable
        unregister("cachetoy")
        register(Second)
        assert type(_spec("cachetoy(players=2)").game) is Second
        unregister("cachetoy")
        with pytest.raises(MatchSpecError, match="unknown game 'cachetoy'"):
            _spec("cachetoy(players=2)")
    finally:
        unregister("cachetoy")


def test_a_padded_game_string_is_loaded_but_not_kept():
    from referee import match_spec

    padded = "toy(players=2" + " " * 100_000 + ")"
    assert _spec(padded).game.game_string() == "toy(hand=3,players=2,turns=5)"
    assert padded not in match_spec._GAMES


def test_bad_game_strings_are_refused_every_time():
    for _ in range(2):  # the second time too: a refusal is never cached as a game
        with pytest.raises(MatchSpecError, match="game_string"):
            _spec("toy(players=9)")
