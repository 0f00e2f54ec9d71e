"""The DecisionRequest wire bytes written by hand (``GameCodec.decision_request``).

Oracles independent of the hand encoder: protobuf's own serialiser (the bytes
must equal the serialisation of the message built through the protobuf API,
its legal actions from the encoding rules of ``Hello.observation_encoding``)
and parser, and the engine's own observation dict and legal actions at
every decision of random playthroughs, reached by play.
"""

from __future__ import annotations

import json
import random

import pytest
from google.protobuf import json_format

from games.api import CHANCE, TERMINAL, canonical_json
from games.registry import load_game
from proto.parterre.v1 import floriferous_pb2, flowar_pb2, lafleur_pb2
from proto.parterre.v1 import referee_pb2 as pb
from referee.codec import ENC_BOTH, ENC_JSON, ENC_TYPED, GameCodec, _varint
from referee.server import serialize_referee_message

OBSERVATION = {"floriferous": floriferous_pb2.FloriferousObservation, "lafleur": lafleur_pb2.LaFleurObservation,
               "flowar": flowar_pb2.FlowarObservation}
ACTION = {"floriferous": floriferous_pb2.FloriferousAction, "lafleur": lafleur_pb2.LaFleurAction,
          "flowar": flowar_pb2.FlowarAction}
GAMES = ["floriferous(players=2)", "floriferous(players=4)", "lafleur(players=3)", "flowar(players=2)",
         "flowar(players=4)"]


def _typed(cls, data):
    """The typed message of a dict by protobuf's own JSON mapping (independent of the codec)."""
    msg = cls()
    json_format.ParseDict(data, msg)
    return msg


def _legal_action(game: str, action, index: int, encoding: int) -> pb.LegalAction:
    """A LegalAction from the rules of ``Hello.observation_encoding``: the label always, the canonical
    JSON unless typed only was asked (and the game has typed messages), the typed form unless JSON
    only was asked (and the game has one); an unknown encoding is both."""
    msg = pb.LegalAction(index=index, label=action.label())
    typed = ACTION.get(game)
    if encoding != ENC_TYPED or typed is None:
        msg.json = canonical_json(action.to_json())
    if encoding != ENC_JSON and typed is not None:
        getattr(msg, game).CopyFrom(_typed(typed, action.to_json()))
    return msg


def _object_path(codec, match_id, seq, obs, legal, time_left_ms, deadline_ms, seat, attempt, encoding) -> bytes:
    """The request built through the protobuf API: the observation as the referee has always filled it
    (``fill_observation``, checked against ``ParseDict`` in tests/referee/test_referee_encoding.py), each legal
    action from the encoding rules above, field by field; serialised by protobuf."""
    msg = pb.RefereeMessage()
    req = msg.decision_request
    req.match_id = match_id
    req.seq = seq
    codec.fill_observation(req.observation, obs, encoding)
    req.legal_actions.extend(_legal_action(codec.game, a, i, encoding) for i, a in enumerate(legal))
    req.time_left_ms = time_left_ms
    req.deadline_ms = deadline_ms
    req.seat = seat
    req.game = codec.game
    req.attempt = attempt
    return msg.SerializeToString()


def _decisions(game_string: str, games: int, seed: int):
    """(state, seat, legal actions) at every decision of ``games`` random playthroughs."""
    game = load_game(game_string)
    rng = random.Random(seed)
    for _ in range(games):
        state = game.new_initial_state()
        while (player := state.current_player()) != TERMINAL:
            if player == CHANCE:
                state.apply_action(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            yield state, player, legal
            state.apply_action(rng.choice(legal))


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("encoding", [ENC_BOTH, ENC_JSON, ENC_TYPED])
def test_the_bytes_are_the_request_the_rules_give(game_string, encoding):
    game = load_game(game_string)
    codec = GameCodec(game.name, strict=True)
    n = 0
    for seq, (state, seat, legal) in enumerate(_decisions(game_string, 2, seed=len(game_string)), start=1):
        obs = state.observation(seat)
        data = codec.decision_request(9_000_000_001, seq, obs, legal, 123_456, 2_000, seat, 3, encoding)
        msg = pb.RefereeMessage.FromString(data)
        assert msg.WhichOneof("kind") == "decision_request"
        req = msg.decision_request
        assert (req.match_id, req.seq, req.time_left_ms, req.deadline_ms, req.seat, req.game, req.attempt) == \
            (9_000_000_001, seq, 123_456, 2_000, seat, game.name, 3)
        # the observation: the engine's dict, in the encodings asked for
        if encoding != ENC_TYPED:
            assert json.loads(req.observation.json) == json.loads(json.dumps(obs))
        else:
            assert req.observation.json == ""
        if encoding != ENC_JSON:
            assert getattr(req.observation, game.name) == _typed(OBSERVATION[game.name], obs)
        else:
            assert req.observation.WhichOneof("game") is None
        # the legal actions: index, label, JSON and typed form of each engine action
        assert [a.index for a in req.legal_actions] == list(range(len(legal)))
        for wire, action in zip(req.legal_actions, legal, strict=True):
            assert wire.label == action.label()
            if encoding != ENC_TYPED:
                assert json.loads(wire.json) == action.to_json()
            else:
                assert wire.json == ""
            if encoding != ENC_JSON:
                assert getattr(wire, game.name) == _typed(ACTION[game.name], action.to_json())
            else:
                assert wire.WhichOneof("typed") is None
        # byte for byte what protobuf writes for the message built through its API
        assert _object_path(codec, 9_000_000_001, seq, obs, legal, 123_456, 2_000, seat, 3, encoding) == data
        n += 1
    assert n > 20


def test_a_game_without_typed_messages_gets_json_whatever_is_asked():
    import fixtures.toy_game  # noqa: F401  registers "toy"

    game = load_game("toy(players=2,turns=3)")
    codec = GameCodec(game.name)
    for state, seat, legal in _decisions("toy(players=2,turns=3)", 3, seed=5):
        for encoding in (ENC_BOTH, ENC_JSON, ENC_TYPED):
            req = pb.RefereeMessage.FromString(
                codec.decision_request(1, 1, state.observation(seat), legal, 10, 10, seat, 1, encoding)
            ).decision_request
            assert json.loads(req.observation.json) == json.loads(json.dumps(state.observation(seat)))
            assert [json.loads(a.json) for a in req.legal_actions] == [a.to_json() for a in legal]


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16_383, 16_384, 2**31 - 1, 2**63 - 1, -1, -2**31, -2**63])
def test_varints_are_protobufs(value):
    """Each int64 value, negative ones included (10 bytes, two's complement), as protobuf writes it."""
    expected = pb.DecisionRequest(match_id=value).SerializeToString()
    assert (b"\x08" + _varint(value) if value else b"") == expected


def test_zero_fields_are_left_out_and_equal_but_distinct_actions_get_their_own_bytes():
    """proto3 leaves zeros out (seq 0, seat 0, attempt 0); every step's fresh action objects (equal
    to earlier ones or not) are encoded as themselves."""
    game = load_game("floriferous(players=2)")
    codec = GameCodec(game.name)
    state, seat, legal = next(_decisions("floriferous(players=2)", 1, seed=1))
    data = codec.decision_request(0, 0, state.observation(seat), legal, 0, 0, 0, 0, ENC_JSON)
    built = pb.RefereeMessage()
    req = built.decision_request
    req.observation.json = pb.RefereeMessage.FromString(data).decision_request.observation.json
    req.game = game.name
    for i, a in enumerate(legal):
        req.legal_actions.add(index=i, label=a.label(), json=json.dumps(a.to_json(), sort_keys=True,
                                                                       separators=(",", ":"), ensure_ascii=False))
    assert data == built.SerializeToString()
    for state, seat, legal in _decisions("floriferous(players=2)", 3, seed=2):  # fresh action objects each step
        req = pb.RefereeMessage.FromString(
            codec.decision_request(1, 1, state.observation(seat), legal, 1, 1, seat, 1, ENC_JSON)).decision_request
        assert [json.loads(a.json) for a in req.legal_actions] == [a.to_json() for a in legal]


@pytest.mark.parametrize("fields", [
    dict(match_id=-5, seq=-1, time_left_ms=-(2**63), deadline_ms=2**63 - 1, seat=2**31 - 1, attempt=-(2**31)),
    dict(match_id=0, seq=0, time_left_ms=0, deadline_ms=0, seat=0, attempt=0),
    dict(match_id=2**40, seq=300, time_left_ms=2**35, deadline_ms=128, seat=3, attempt=127),
])
@pytest.mark.parametrize("encoding", [ENC_BOTH, ENC_JSON, ENC_TYPED, 3, 99])
def test_edge_values_and_unknown_encodings_are_what_protobuf_writes(fields, encoding):
    """int64/int32 extremes, negatives and zeros, and encodings outside the enum (treated as both)."""
    for game_string in ("lafleur(players=2)", "toy(players=2,turns=2)"):
        import fixtures.toy_game  # noqa: F401  registers "toy"

        game = load_game(game_string)
        codec = GameCodec(game.name)
        state, seat, legal = next(_decisions(game_string, 1, seed=3))
        obs = state.observation(seat)
        args = (fields["match_id"], fields["seq"], obs, legal, fields["time_left_ms"], fields["deadline_ms"],
                fields["seat"], fields["attempt"], encoding)
        assert codec.decision_request(*args) == _object_path(codec, *args)


@pytest.mark.parametrize("name, value, error", [
    ("match_id", 2**63, ValueError), ("time_left_ms", -(2**63) - 1, ValueError), ("time_left_ms", 2**70, ValueError),
    ("seat", 2**31, ValueError), ("attempt", -(2**31) - 1, ValueError), ("deadline_ms", True, TypeError),
    ("deadline_ms", 5.0, TypeError),
])
def test_a_value_protobuf_refuses_is_refused_not_wrapped(name, value, error):
    """What the protobuf object raises on (out of int32/int64 range, not an int) is raised, never sent wrapped."""
    game = load_game("floriferous(players=2)")
    codec = GameCodec(game.name)
    state, seat, legal = next(_decisions("floriferous(players=2)", 1, seed=4))
    fields = {**dict(match_id=1, seq=1, time_left_ms=10, deadline_ms=10, seat=seat, attempt=1), name: value}
    args = (fields["match_id"], fields["seq"], state.observation(seat), legal, fields["time_left_ms"],
            fields["deadline_ms"], fields["seat"], fields["attempt"])
    with pytest.raises(error):
        _object_path(codec, *args, ENC_JSON)
    with pytest.raises(error):
        codec.decision_request(*args, ENC_JSON)


def test_a_strict_codec_still_refuses_an_observation_that_does_not_fit():
    """A typed mismatch is a CodecError on a strict codec through the bytes path too (engine/proto drift)."""
    from referee.codec import CodecError

    game = load_game("floriferous(players=2)")
    codec = GameCodec(game.name, strict=True)
    state, seat, legal = next(_decisions("floriferous(players=2)", 1, seed=4))
    bad = {**state.observation(seat), "no_such_field": 1}
    with pytest.raises(CodecError):
        codec.decision_request(1, 1, bad, legal, 10, 10, seat, 1, ENC_BOTH)
    assert pb.RefereeMessage.FromString(codec.decision_request(1, 1, bad, legal, 10, 10, seat, 1, ENC_JSON))


def test_an_empty_game_name_is_left_out_as_protobuf_does():
    codec = GameCodec("")
    assert codec.decision_request(1, 1, {}, [], 0, 0, 0, 1, ENC_JSON) == _object_path(codec, 1, 1, {}, [], 0, 0, 0, 1,
                                                                                     ENC_JSON)


def test_the_serializer_passes_bytes_and_serialises_messages():
    msg = pb.RefereeMessage(ping=pb.Ping(nonce=7))
    assert serialize_referee_message(msg) == msg.SerializeToString()
    assert serialize_referee_message(b"\x01\x02") == b"\x01\x02"
