"""Flowar observations and actions are exactly the protobuf messages of flowar.proto.

The .proto is compiled afresh (descriptor set into a private pool), so the test
checks the current file, not a possibly stale generated module; a second test
checks that the generated ``flowar_pb2`` matches it.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict, ParseDict

from games.flowar.game import FlowarGame
from games.registry import load_game

ROOT = Path(__file__).resolve().parent.parent
PROTO = "proto/parterre/v1/flowar.proto"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorProto:
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("proto") / "flowar.pb"
    status = protoc.main(["grpc_tools.protoc", f"-I{ROOT}", f"--descriptor_set_out={out}", str(ROOT / PROTO)])
    assert status == 0, "protoc failed on flowar.proto"
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    (fdp,) = [f for f in fds.file if f.name == PROTO]
    return fdp


@pytest.fixture(scope="module")
def messages(compiled: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(compiled)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"parterre.v1.{name}"))
        for name in ("FlowarObservation", "FlowarAction")
    }


def test_package_and_messages(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    assert compiled.package == "parterre.v1"
    assert compiled.syntax == "proto3"
    assert {m.name for m in compiled.message_type} == {"FlowarObservation", "FlowarAction"}


def test_generated_module_is_current(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    from proto.parterre.v1 import flowar_pb2

    current = descriptor_pb2.FileDescriptorProto.FromString(flowar_pb2.DESCRIPTOR.serialized_pb)
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


def test_every_action_kind_fits(messages: dict[str, Any]) -> None:
    fields = {f.name for f in messages["FlowarAction"].DESCRIPTOR.fields}
    for cls in FlowarGame.ACTIONS:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        assert names <= fields, (cls.KIND, names - fields)


@pytest.mark.parametrize("variant", FlowarGame.VARIANTS)
def test_every_observation_and_action_parses(variant: str, messages: dict[str, Any]) -> None:
    obs_cls, act_cls = messages["FlowarObservation"], messages["FlowarAction"]
    game = load_game(variant)
    seats = [None, *range(game.num_players)]
    for seed in (FlowarGame.VARIANTS.index(variant),):
        rng = random.Random(seed)
        state = game.new_initial_state()
        step = 0
        while True:
            # At every decision every seat's observation parses (at chance nodes the spectator's);
            # every 10th step (and the end) all of them round-trip exactly.
            exact = step % 10 == 0 or state.is_terminal()
            for seat in seats if exact or not state.is_chance_node() else seats[:1]:
                _roundtrip(obs_cls, state.observation(seat), exact=exact)
            if state.is_terminal():
                break
            legal = state.legal_actions()
            for a in legal if not state.is_chance_node() or step % 20 == 0 else legal[:1]:
                _roundtrip(act_cls, a.to_json(), exact=False)
            action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal)
            _roundtrip(act_cls, action.to_json(), exact=False)
            state.apply_action(action)
            step += 1
