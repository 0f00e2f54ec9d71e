"""Hello.observation_encoding: one encoding of the observation on the wire.

Oracles independent of the referee's encoder: the engine's own observation
dict and legal actions at each step (re-simulated from the replay), the
protobuf constructor / ``ParseDict`` of that dict for the typed form.
"""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format

from bots.reference import RandomBot
from games.api import CHANCE
from games.registry import load_game
from proto.parterre.v1 import floriferous_pb2, flowar_pb2, lafleur_pb2
from proto.parterre.v1 import referee_pb2 as pb
from referee.codec import GameCodec
from referee.replay import verify
from referee.testing import Harness, replay_of

TOKENS = {"tok-a": 1, "tok-b": 2}
OBSERVATION = {"floriferous": floriferous_pb2.FloriferousObservation, "lafleur": lafleur_pb2.LaFleurObservation,
               "flowar": flowar_pb2.FlowarObservation}
ACTION = {"floriferous": floriferous_pb2.FloriferousAction, "lafleur": lafleur_pb2.LaFleurAction,
          "flowar": flowar_pb2.FlowarAction}


async def _requests(game_string: str, encoding: str | None):
    """Play a match with seat 0 asking for ``encoding`` (None: a Hello without the field);
    yield (request seen by seat 0, the engine's state at that point)."""
    a = RandomBot(seed=1)
    if encoding is not None:
        a.observation_encoding = encoding
    else:
        a.hello = lambda token: pb.BotMessage(hello=pb.Hello(token=token, bot_name="old", instance_id="x1"))
    a.received = []
    async with Harness(TOKENS) as h:
        h.start_bot(a, "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        result = await h.run_match(700, game_string, [1, 2], seed="enc-700")
    replay = replay_of(result)
    verify(replay)
    assert result.status == "finished"
    requests = {m.decision_request.seq: m.decision_request for m in a.received if m.HasField("decision_request")}
    game = load_game(game_string)
    state = game.new_initial_state()
    seq = 0
    out = []
    for step in replay["steps"]:
        if step["player"] != CHANCE:
            seq += 1
            if step["player"] == 0:
                out.append((requests.pop(seq), state.clone()))
        state.apply_action(game.action_from_json(step["action"]))
    assert out and not requests
    return out


@pytest.mark.parametrize("game_string", ["floriferous(players=2)", "flowar(players=2)"])
async def test_json_only_carries_no_typed_message(game_string):
    name = game_string.split("(")[0]
    for req, state in await _requests(game_string, "json"):
        assert req.observation.WhichOneof("game") is None
        assert json.loads(req.observation.json) == state.observation(0)
        legal = state.legal_actions()
        assert [la.json for la in req.legal_actions] == [a.canonical() for a in legal]
        assert [la.label for la in req.legal_actions] == [a.label() for a in legal]
        assert all(la.WhichOneof("typed") is None for la in req.legal_actions)
        assert [la.index for la in req.legal_actions] == list(range(len(legal)))
    # the SDK builds the typed view from the JSON on demand, equal to the message of the same dict
    from bots.wire import DecisionRequest

    view = DecisionRequest(req, None, 0.0)
    assert view.typed_observation == json_format.ParseDict(state.observation(0), OBSERVATION[name]())


@pytest.mark.parametrize("game_string", ["lafleur(players=2)", "flowar(players=2)"])
async def test_typed_only_carries_no_json(game_string):
    name = game_string.split("(")[0]
    for req, state in await _requests(game_string, "typed"):
        assert req.observation.json == ""
        assert req.observation.WhichOneof("game") == name
        assert getattr(req.observation, name) == json_format.ParseDict(state.observation(0), OBSERVATION[name]())
        legal = state.legal_actions()
        assert [la.json for la in req.legal_actions] == [""] * len(legal)
        assert [getattr(la, name) for la in req.legal_actions] == [
            json_format.ParseDict(a.to_json(), ACTION[name]()) for a in legal]


async def test_a_hello_without_the_field_gets_both_encodings():
    for req, state in await _requests("floriferous(players=2)", None):
        assert json.loads(req.observation.json) == state.observation(0)
        assert req.observation.floriferous == json_format.ParseDict(state.observation(0),
                                                                    floriferous_pb2.FloriferousObservation())
        assert all(la.json and la.WhichOneof("typed") == "floriferous" for la in req.legal_actions)


def test_a_game_without_typed_messages_is_sent_as_json_even_when_typed_is_asked():
    codec = GameCodec("toy")
    msg = pb.Observation()
    codec.fill_observation(msg, {"x": 1}, pb.OBSERVATION_ENCODING_TYPED)
    assert json.loads(msg.json) == {"x": 1} and msg.WhichOneof("game") is None
