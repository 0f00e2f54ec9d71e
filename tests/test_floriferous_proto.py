"""Observations and actions are exactly the protobuf messages of floriferous.proto.

The .proto is compiled afresh (descriptor set into a private pool), so the test
checks the current file, not a possibly stale generated module; a second test
checks that the generated ``floriferous_pb2`` matches it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseDict

from games.floriferous.game import FloriferousGame
from games.registry import load_game

ROOT = Path(__file__).resolve().parent.parent
PROTO = "proto/parterre/v1/floriferous.proto"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorProto:
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("proto") / "floriferous.pb"
    status = protoc.main(["grpc_tools.protoc", f"-I{ROOT}", f"--descriptor_set_out={out}", str(ROOT / PROTO)])
    assert status == 0, "protoc failed on floriferous.proto"
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    (fdp,) = [f for f in fds.file if f.name == PROTO]
    return fdp


@pytest.fixture(scope="module")
def messages(compiled: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(compiled)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"parterre.v1.{name}"))
        for name in ("FloriferousObservation", "FloriferousAction")
    }


def test_package_and_messages(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    assert compiled.package == "parterre.v1"
    assert compiled.syntax == "proto3"
    assert {m.name for m in compiled.message_type} == {"FloriferousObservation", "FloriferousAction"}


def test_generated_module_is_current(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    from proto.parterre.v1 import floriferous_pb2

    current = descriptor_pb2.FileDescriptorProto.FromString(floriferous_pb2.DESCRIPTOR.serialized_pb)
    fresh = descriptor_pb2.FileDescriptorProto()
    fresh.CopyFrom(compiled)
    _strip_json_names(fresh.message_type)  # generated modules do not embed json_name
    assert current == fresh, "regenerate the stubs: python -m proto.generate"


def _strip_json_names(types: Any) -> None:
    for t in types:
        for f in t.field:
            f.ClearField("json_name")
        _strip_json_names(t.nested_type)


def _roundtrip(cls: Any, data: dict[str, Any], exact: bool) -> None:
    msg = ParseDict(data, cls())  # raises on an unknown key or a wrongly typed value
    back = MessageToDict(msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    if exact:
        assert back == data
    else:
        assert {k: back[k] for k in data} == data


_SCALARS = {
    FieldDescriptor.TYPE_INT32: lambda v: isinstance(v, int) and not isinstance(v, bool) and -2**31 <= v < 2**31,
    FieldDescriptor.TYPE_BOOL: lambda v: isinstance(v, bool),
    FieldDescriptor.TYPE_STRING: lambda v: isinstance(v, str),
}


def _check_shape(data: dict[str, Any], desc: Any, path: str = "") -> None:
    """Fast exact-shape check: the dict has every field of the message and nothing
    else, with the right JSON types (what ParseDict + MessageToDict verify, much faster)."""
    assert set(data) == set(desc.fields_by_name), f"{path}: keys differ from {desc.full_name}"
    for name, field in desc.fields_by_name.items():
        value = data[name]
        values = value if field.is_repeated else [value]
        if field.is_repeated:
            assert isinstance(value, list), f"{path}.{name} must be a list"
        for i, v in enumerate(values):
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                assert isinstance(v, dict), f"{path}.{name}[{i}] must be an object"
                _check_shape(v, field.message_type, f"{path}.{name}[{i}]")
            else:
                assert _SCALARS[field.type](v), f"{path}.{name}: bad value {v!r}"


@pytest.mark.parametrize("variant", FloriferousGame.VARIANTS)
def test_every_observation_and_action_parses(variant: str, messages: dict[str, Any]) -> None:
    """Every observation (spectator and seats) of two random playouts has exactly the
    message's shape; in the first playout every observation a bot receives, the final
    one, and every legal action go through ParseDict and back through MessageToDict
    unchanged."""
    obs_cls, act_cls = messages["FloriferousObservation"], messages["FloriferousAction"]
    obs_desc = obs_cls.DESCRIPTOR
    game = load_game(variant)
    seats = [None, *range(game.num_players)]
    kinds_seen: set[str] = set()
    expected_kinds = {"reveal_bounty", "deal", "take"} | ({"reveal_crow", "toss_tea"} if game.num_players == 1
                                                           else {"start_player"})
    for seed in (0, 1):
        rng = random.Random(seed)
        state = game.new_initial_state()
        step = 0
        while True:
            for seat in seats:
                _check_shape(state.observation(seat), obs_desc)
            if state.is_terminal():
                _roundtrip(obs_cls, state.observation(None), exact=True)
                break
            legal = state.legal_actions()
            player = state.current_player()
            if not state.is_chance_node() and seed == 0:  # ParseDict is slow (~5 ms): one playout
                _roundtrip(obs_cls, state.observation(player), exact=True)
            for a in legal if not state.is_chance_node() else legal[:2]:
                _roundtrip(act_cls, a.to_json(), exact=False)
                kinds_seen.add(a.KIND)
            action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal)
            _roundtrip(act_cls, action.to_json(), exact=False)
            state.apply_action(action)
            step += 1
    assert expected_kinds <= kinds_seen
