"""The referee with the real engines (Floriferous first, La Fleur and Flowar too):
typed observations and actions on the wire, full matches, hidden information,
fallback to the end (docs/architecture.md, "Verdicts"; docs/faults.md F-01, F-20)."""

from __future__ import annotations

import json
import logging
import random

import pytest
from google.protobuf import json_format

from bots.misbehaving import SilentBot
from bots.reference import GreedyBot, RandomBot
from bots.sdk import decode_action, decode_observation
from games.api import CHANCE
from games.registry import load_game
from referee.codec import TYPED, CodecError, GameCodec, to_typed
from referee.replay import verify
from referee.testing import Harness, replay_of

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3}


def _playthrough(game_string: str, seed: int):
    """Yield (state, seat) at every decision of a random playthrough."""
    game = load_game(game_string)
    state = game.new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        yield state, state.current_player()
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])


@pytest.mark.parametrize("game_string", ["floriferous(players=2)", "floriferous(players=4)",
                                         "floriferous(players=1,extended=true)", "lafleur(players=2)",
                                         "flowar(players=2)"])
def test_typed_encoding_equals_parse_dict_and_round_trips(game_string):
    name = game_string.split("(")[0]
    codec = GameCodec(name, strict=True)
    spec = TYPED[name]
    decisions = 0
    for state, seat in _playthrough(game_string, seed=7):
        decisions += 1
        for who in {seat, None}:
            obs = state.observation(who)
            msg = codec.observation(obs)
            assert msg.WhichOneof("game") == spec.field
            assert getattr(msg, spec.field) == json_format.ParseDict(obs, spec.observation())
            assert json.loads(msg.json) == obs
            assert decode_observation(msg) == obs
        for i, action in enumerate(state.legal_actions()):
            la = codec.legal_action(action, i)
            assert (la.index, la.label) == (i, action.label())
            assert getattr(la, spec.field) == json_format.ParseDict(action.to_json(), spec.action())
            assert decode_action(la) == action.to_json()
            assert to_typed(name, "action", action.to_json()) == getattr(la, spec.field)
    assert decisions > 10


async def test_two_player_floriferous_match_through_the_referee():
    a, b = GreedyBot(seed=1), RandomBot(seed=2)
    a.observation_encoding = "both"  # what a bot that does not say gets (the SDK asks for JSON only)
    a.received = []
    async with Harness(TOKENS) as h:
        h.start_bot(a, "tok-a")
        h.start_bot(b, "tok-b")
        result = await h.run_match(500, "floriferous(players=2)", [1, 2], seed="flor-500")
    replay = replay_of(result)
    verify(replay)
    assert result.status == "finished"
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert replay["outcome"]["ranks"] == replay["result_ranks"]
    assert [s.score for s in result.seats] == [float(x) for x in replay["outcome"]["scores"]]
    requests = [m.decision_request for m in a.received if m.HasField("decision_request")]
    assert requests and all(r.observation.WhichOneof("game") == "floriferous" for r in requests)
    assert all(la.WhichOneof("typed") == "floriferous" for r in requests for la in r.legal_actions)
    # F-20: what seat 0 received is exactly its own observation at that point, and never the seed
    game = load_game(replay["game_string"])
    state = game.new_initial_state()
    seq = 0
    by_seq = {r.seq: r for r in requests}
    for step in replay["steps"]:
        if step["player"] != CHANCE:
            seq += 1
            if step["player"] == 0:
                req = by_seq.pop(seq)
                assert json.loads(req.observation.json) == state.observation(0)
                assert [la.json for la in req.legal_actions] == [x.canonical() for x in state.legal_actions()]
        state.apply_action(game.action_from_json(step["action"]))
    assert not by_seq
    for m in a.received[:-1]:
        assert b"flor-500" not in m.SerializeToString()
    assert a.received[-1].match_ended.seed == "flor-500"


async def test_three_player_floriferous_silent_seat_is_played_by_the_fallback_to_the_end():
    async with Harness(TOKENS) as h:
        h.start_bot(GreedyBot(seed=1), "tok-a")
        h.start_bot(SilentBot(), "tok-b")
        h.start_bot(RandomBot(seed=3), "tok-c")
        result = await h.run_match(501, "floriferous(players=3)", [1, 2, 3], cap_ms=250, margin_ms=30)
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal", "timeout", "normal"]
    assert result.seats[1].rank == 3 and sorted(s.rank for s in result.seats) in ([1, 2, 3], [1, 1, 3])
    assert replay["outcome"] is not None
    assert all(s["fallback"] for s in replay["steps"] if s["player"] == 1)


@pytest.mark.parametrize("game_string", ["lafleur(players=2)", "flowar(players=2)"])
async def test_other_games_play_through_the_referee(game_string):
    a = RandomBot(seed=1)
    a.observation_encoding = "both"
    a.received = []
    async with Harness(TOKENS) as h:
        h.start_bot(a, "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        result = await h.run_match(510, game_string, [1, 2])
    verify(replay_of(result))
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    name = game_string.split("(")[0]
    requests = [m.decision_request for m in a.received if m.HasField("decision_request")]
    assert requests and all(r.observation.WhichOneof("game") == name for r in requests)


async def test_observation_mismatch_is_sent_as_json_only_not_a_crash(caplog):
    codec = GameCodec("floriferous")
    with caplog.at_level(logging.ERROR, logger="referee.codec"):
        msg = codec.observation({"no_such_field": 1})
        codec.observation({"no_such_field": 2})
    assert msg.WhichOneof("game") is None and json.loads(msg.json) == {"no_such_field": 1}
    # the mismatch is logged once per codec, not once per message
    assert [r.getMessage().startswith("typed encoding of floriferous failed") for r in caplog.records] == [True]
    with pytest.raises(CodecError):
        GameCodec("floriferous", strict=True).observation({"no_such_field": 1})
