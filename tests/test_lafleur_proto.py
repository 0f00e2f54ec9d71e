"""Observations and actions are exactly the protobuf messages of lafleur.proto (DESIGN §3).

The .proto is compiled afresh (descriptor set into a private pool), so the test
checks the current file, not a possibly stale generated module; a second test
checks that the generated ``lafleur_pb2`` matches it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict, ParseDict

from games.lafleur.game import LaFleurGame
from games.registry import load_game

ROOT = Path(__file__).resolve().parent.parent
PROTO = "proto/parterre/v1/lafleur.proto"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorProto:
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("proto") / "lafleur.pb"
    status = protoc.main(["grpc_tools.protoc", f"-I{ROOT}", f"--descriptor_set_out={out}", str(ROOT / PROTO)])
    assert status == 0, "protoc failed on lafleur.proto"
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    (fdp,) = [f for f in fds.file if f.name == PROTO]
    return fdp


@pytest.fixture(scope="module")
def messages(compiled: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(compiled)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"parterre.v1.{name}"))
        for name in ("LaFleurObservation", "LaFleurAction")
    }


def test_package_and_messages(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    assert compiled.package == "parterre.v1" and compiled.syntax == "proto3"
    assert {m.name for m in compiled.message_type} == {"LaFleurObservation", "LaFleurAction"}


def test_generated_module_is_current(compiled: descriptor_pb2.FileDescriptorProto) -> None:
    from proto.parterre.v1 import lafleur_pb2

    current = descriptor_pb2.FileDescriptorProto.FromString(lafleur_pb2.DESCRIPTOR.serialized_pb)
    fresh = descriptor_pb2.FileDescriptorProto()
    fresh.CopyFrom(compiled)
    _strip_json_names(fresh.message_type)  # generated modules do not embed json_name
    assert current == fresh, "regenerate the stubs: python -m proto.generate"


def _strip_json_names(types: Any) -> None:
    for t in types:
        for f in t.field:
            f.ClearField("json_name")
        _strip_json_names(t.nested_type)


def test_every_action_kind_fits_the_message(messages: dict[str, Any]) -> None:
    fields = {f.name for f in messages["LaFleurAction"].DESCRIPTOR.fields}
    import dataclasses

    for cls in LaFleurGame.ACTIONS:
        assert {f.name for f in dataclasses.fields(cls)} <= fields, cls.KIND  # type: ignore[arg-type]


def _roundtrip(cls: Any, data: dict[str, Any], exact: bool) -> None:
    msg = ParseDict(data, cls())  # raises on an unknown key or a wrongly typed value
    if not exact:
        return
    back = MessageToDict(msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    assert back == data


@pytest.mark.parametrize("variant", LaFleurGame.VARIANTS)
def test_every_observation_and_action_parses(variant: str, messages: dict[str, Any]) -> None:
    obs_cls, act_cls = messages["LaFleurObservation"], messages["LaFleurAction"]
    game = load_game(variant)
    seats = [None, *range(game.num_players)]
    rng = random.Random(variant)
    state = game.new_initial_state()
    step = 0
    while True:
        # The acting seat's observation (what a bot is sent) parses at every decision; every
        # seat's and the spectator's every 6th step, when they also round-trip exactly.
        exact = step % 6 == 0 or state.is_terminal()
        if exact:
            for seat in seats:
                _roundtrip(obs_cls, state.observation(seat), exact=True)
        elif not state.is_chance_node():
            _roundtrip(obs_cls, state.observation(state.current_player()), exact=False)
        if state.is_terminal():
            break
        legal = state.legal_actions()
        for a in legal if not state.is_chance_node() or step % 20 == 0 else legal[:1]:
            data = a.to_json()
            back = MessageToDict(ParseDict(data, act_cls()), preserving_proto_field_name=True,
                                 always_print_fields_with_no_presence=True)
            assert {k: back[k] for k in data} == data  # the message holds the union of all fields
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal))
        step += 1
