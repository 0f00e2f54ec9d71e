"""Every registered game's observations and actions are exactly its protobuf messages.

See docs/architecture.md, "proto: the wire".

One parametrised test over the registry (``games.registry``) instead of a copy
per game. For each game the typed messages are the ones the referee sends
(``referee.codec.TYPED``); their ``.proto`` file is compiled afresh
(descriptor set into a private pool), so the test checks the current file,
not a possibly stale generated module, and a second test checks that the
generated ``*_pb2`` module matches it.

Oracle: the protobuf library itself. An observation or action dict must go
through ``ParseDict`` (unknown keys and wrongly typed values raise) and come
back through ``MessageToDict`` unchanged; observations exactly, actions on the
fields the action has (one message holds the union of every kind's fields).
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseDict

from games.api import Game
from games.registry import game_class, game_names, load_game
from referee.codec import TYPED

ROOT = Path(__file__).resolve().parents[2]

GAMES = sorted(g for g in game_names() if game_class(g).__module__.startswith("games."))
"""The registered rules engines (test fixtures such as the toy game excluded)."""
VARIANTS = [v for g in GAMES for v in getattr(game_class(g), "VARIANTS", ())]
"""Every variant the conformance tests and golden files cover, of every game."""


def test_every_game_has_typed_messages_and_variants() -> None:
    assert GAMES, "no game registered"
    for game in GAMES:
        assert game in TYPED, f"{game} has no typed messages in referee.codec.TYPED"
        assert getattr(game_class(game), "VARIANTS", ()), f"{game} lists no VARIANTS"


def _proto_path(game: str) -> str:
    return TYPED[game].observation.DESCRIPTOR.file.name


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Each game's .proto compiled now, by game name."""
    from grpc_tools import protoc

    out: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for game in GAMES:
        path = _proto_path(game)
        target = tmp_path_factory.mktemp("proto") / f"{game}.pb"
        status = protoc.main(["grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"--descriptor_set_out={target}",
                              str(ROOT / "proto" / path)])
        assert status == 0, f"protoc failed on {path}"
        fds = descriptor_pb2.FileDescriptorSet.FromString(target.read_bytes())
        (out[game],) = [f for f in fds.file if f.name == path]
    return out


@pytest.fixture(scope="module")
def messages(compiled: dict[str, descriptor_pb2.FileDescriptorProto]) -> dict[str, tuple[Any, Any]]:
    """``game -> (observation class, action class)`` built from the freshly compiled files."""
    out = {}
    for game, fdp in compiled.items():
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        spec = TYPED[game]
        out[game] = tuple(message_factory.GetMessageClass(pool.FindMessageTypeByName(cls.DESCRIPTOR.full_name))
                          for cls in (spec.observation, spec.action))
    return out


@pytest.mark.parametrize("game", GAMES)
def test_package_and_messages(game: str, compiled: dict[str, descriptor_pb2.FileDescriptorProto]) -> None:
    fdp = compiled[game]
    spec = TYPED[game]
    assert fdp.package == "parterre.v1" and fdp.syntax == "proto3"
    assert {m.name for m in fdp.message_type} == {spec.observation.DESCRIPTOR.name, spec.action.DESCRIPTOR.name}


def _strip_json_names(types: Any) -> None:
    for t in types:
        for f in t.field:
            f.ClearField("json_name")
        _strip_json_names(t.nested_type)


@pytest.mark.parametrize("game", GAMES)
def test_generated_module_is_current(game: str, compiled: dict[str, descriptor_pb2.FileDescriptorProto]) -> None:
    module_file = TYPED[game].observation.DESCRIPTOR.file
    current = descriptor_pb2.FileDescriptorProto.FromString(module_file.serialized_pb)
    fresh = descriptor_pb2.FileDescriptorProto()
    fresh.CopyFrom(compiled[game])
    _strip_json_names(fresh.message_type)  # generated modules do not embed json_name
    assert current == fresh, "regenerate the stubs: python -m proto.generate"


@pytest.mark.parametrize("game", GAMES)
def test_every_action_kind_fits_the_message(game: str, messages: dict[str, tuple[Any, Any]]) -> None:
    fields = {f.name for f in messages[game][1].DESCRIPTOR.fields}
    cls: type[Game] = game_class(game)
    assert cls.ACTIONS
    for action_cls in cls.ACTIONS:
        names = {f.name for f in dataclasses.fields(action_cls)}
        assert names <= fields, (action_cls.KIND, names - fields)


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
        if field.is_repeated:
            assert isinstance(value, list), f"{path}.{name} must be a list"
        for i, v in enumerate(value if field.is_repeated else [value]):
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                assert isinstance(v, dict), f"{path}.{name}[{i}] must be an object"
                _check_shape(v, field.message_type, f"{path}.{name}[{i}]")
            else:
                assert field.type in _SCALARS, f"{path}.{name}: add field type {field.type} to _SCALARS"
                assert _SCALARS[field.type](v), f"{path}.{name}: bad value {v!r}"


def _back(cls: Any, data: dict[str, Any]) -> dict[str, Any]:
    msg = ParseDict(data, cls())  # raises on an unknown key or a wrongly typed value
    out: dict[str, Any] = MessageToDict(msg, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_observation_and_action_round_trips(variant: str, messages: dict[str, tuple[Any, Any]]) -> None:
    """One random playout: at every step every seat's and the spectator's observation
    has exactly the message's shape; at every decision the acting seat's observation
    (what a bot is sent) round-trips exactly, and so does every view at the end; every
    legal action (the first two at a chance node) round-trips on its own fields."""
    game = load_game(variant)
    obs_cls, act_cls = messages[game.name]
    seats = [None, *range(game.num_players)]
    rng = random.Random(variant)
    state = game.new_initial_state()
    kinds: set[str] = set()
    decisions = 0
    while True:
        for seat in seats:
            _check_shape(state.observation(seat), obs_cls.DESCRIPTOR, f"seat {seat}")
        if state.is_terminal():
            for seat in seats:
                assert _back(obs_cls, state.observation(seat)) == state.observation(seat)
            break
        legal = state.legal_actions()
        if not state.is_chance_node():
            decisions += 1
            obs = state.observation(state.current_player())
            assert _back(obs_cls, obs) == obs
        for a in legal if not state.is_chance_node() else legal[:2]:
            data = a.to_json()
            back = _back(act_cls, data)
            assert {k: back[k] for k in data} == data
            kinds.add(a.KIND)
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal))
    assert decisions > 0 and len(kinds) >= 2, (decisions, kinds)
