"""The committed protobuf stubs match their .proto files (docs/architecture.md, "proto: the wire")."""

from __future__ import annotations

from proto import generate


def test_committed_stubs_are_up_to_date(tmp_path):
    # when the stubs are regenerated into a temporary directory
    written = generate.generate(tmp_path)
    assert written, "no .proto files found"
    # then every generated file equals the committed one
    stale = []
    for path in written:
        rel = path.relative_to(tmp_path)
        committed = generate.ROOT / rel
        if not committed.exists() or committed.read_bytes() != path.read_bytes():
            stale.append(str(rel))
    assert not stale, f"stale or missing stubs {stale}: run `python -m proto.generate`"


def test_every_proto_has_stubs():
    for proto in generate.proto_files():
        for name in generate.stub_names(proto):
            assert (generate.ROOT / proto.parent / name).exists(), name


def test_referee_messages_have_the_documented_shape():
    from proto.parterre.v1 import referee_pb2 as pb

    assert [f.name for f in pb.BotMessage.DESCRIPTOR.oneofs_by_name["kind"].fields] == [
        "hello", "decision", "resign", "pong"]
    assert [f.name for f in pb.RefereeMessage.DESCRIPTOR.oneofs_by_name["kind"].fields] == [
        "welcome", "match_started", "decision_request", "decision_rejected", "match_ended", "ping", "error"]
    assert pb.Observation.DESCRIPTOR.fields_by_name["json"].number == 15
    assert pb.Observation.DESCRIPTOR.fields_by_name["floriferous"].number == 1
    assert pb.LegalAction.DESCRIPTOR.fields_by_name["floriferous"].number == 10
    assert pb.Decision.DESCRIPTOR.fields_by_name["action_index"].has_presence
    from proto.parterre.v1 import control_pb2

    services = pb.DESCRIPTOR.services_by_name
    assert list(services) == ["Referee"], "the bot-facing file carries only the bot-facing service"
    assert services["Referee"].methods_by_name["Connect"].client_streaming
    assert control_pb2.DESCRIPTOR.services_by_name["MatchControl"].methods_by_name["RunMatch"].server_streaming
