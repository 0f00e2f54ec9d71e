"""The gRPC bots' validation games as trials on a referee (``workers.hosting.trial_games``), without a sandbox.

Two worker-run sides (the house's SDK bots) play through their gated relays on a ``ThreadedReferee``
the worker's settings name, as a rated match finds its referee. Oracles: the referee's replays
(re-simulated by ``games.replay.verify_replay``), ``bots.local.deal_seed``, the referee's own state
after the run (no session, no trial, no ladder room), the control calls it served; and a closed port
for "no referee reachable".
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from fixtures.trial_referee import cluster_referee

from bots.local import deal_seed
from games.replay import verify_replay
from referee.testing import SERVICE_TOKEN, ThreadedReferee
from workers.hosting import trial_games
from workers.referee_client import InfraError, RefereeUnavailableError

GAME = "floriferous(players=2)"


@pytest.fixture
def referee(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedReferee]:
    yield from cluster_referee(monkeypatch)


def test_deals_are_played_as_trials_on_the_referee(referee: ThreadedReferee, tmp_path: Path) -> None:
    """In a run folder deep enough that its sockets' paths pass the 107 bytes a Unix socket address holds."""
    run = tmp_path / ("deep-" + "d" * 100)
    run.mkdir()
    assert len(str(run / "grpc-a" / "referee.sock")) > 107
    seats = {"players": {"a": {"bot_id": 41, "name": "tested", "version": "3"},
                         "b": {"bot_id": 42, "name": "other", "version": "1"}}, "match_id": 9000}
    opened: list[int] = []
    real_open = referee.core.trial_book.open if referee.core else None
    assert real_open is not None

    def counting_open(*args: object, **kwargs: object) -> tuple[int, list[int]]:
        opened.append(1)
        return real_open(*args, **kwargs)  # type: ignore[arg-type]  # passed through unchanged

    referee.call(lambda: setattr(referee.core.trial_book, "open", counting_open))
    deals = list(trial_games.play_trial_deals(GAME, "builtin:greedy", "builtin:random", run_seed="rs", deals=2,
                                              deadline_ms=500, run_dir=run, env={}, cwd=tmp_path, seats=seats))
    assert [d["deal"] for d in deals] == [0, 1]
    assert [d["seed"] for d in deals] == [deal_seed("rs", 0), deal_seed("rs", 1)]
    replays = [r for d in deals for r in d["replays"]]
    assert [r["match_id"] for r in replays] == [9000, 9001, 9002, 9003]
    assert [[p["bot_id"] for p in r["players"]] for r in replays] == [[41, 42], [42, 41]] * 2
    assert [r["seed"] for r in replays] == [d["seed"] for d in deals for _ in range(2)]
    for replay in replays:
        assert verify_replay(replay).ok, replay["reason"]
    for d in deals:
        assert d["faults"] == [None, None] and sorted(d["ranks"][0]) == [1, 2]
    assert len(opened) == 4  # one trial per game
    state = referee.call(lambda: (len(referee.core.registry.sessions()), dict(referee.core.trials),
                                  dict(referee.core.rooms), dict(referee.core.trial_book.by_digest)))
    assert state == (0, {}, {}, {})
    assert sorted(p.name for p in run.iterdir()) == ["grpc-a", "grpc-b", "logs"]
    assert not list((run / "grpc-a").iterdir())  # the relay's socket is gone


def test_no_referee_reachable_is_an_error_not_a_verdict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", dead)
    monkeypatch.setenv("PARTERRE_HOSTED_REFEREE_ADDRESS", dead)
    monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
    deals = trial_games.play_trial_deals(GAME, "builtin:greedy", "builtin:random", run_seed="rs", deals=1,
                                         deadline_ms=500, run_dir=tmp_path, env={}, cwd=tmp_path)
    with pytest.raises(RefereeUnavailableError):
        next(deals)



def test_a_game_the_referee_ends_as_infra_error_is_no_sides_fault(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """The referee fails the first game (its match loop raises: ``infra_error`` "referee error", every verdict
    ``normal``): the run raises InfraError (the version is not judged, it waits), it never yields a deal charging
    side a (seat 0) with an ``infra_error`` fault."""
    from referee.room import Room

    async def broken(_room: Room) -> str:
        raise RuntimeError("the referee's own bug")

    monkeypatch.setattr(Room, "_play", broken)
    with ThreadedReferee({}, control=True) as ref:
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.control_address)
        monkeypatch.setenv("PARTERRE_HOSTED_REFEREE_ADDRESS", ref.address)
        monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
        monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
        deals = trial_games.play_trial_deals(GAME, "builtin:greedy", "builtin:random", run_seed="rs", deals=1,
                                             deadline_ms=500, run_dir=tmp_path, env={}, cwd=tmp_path)
        refused = pytest.raises(InfraError, match="referee reported infra_error: referee error")
        with contextlib.closing(cast(Generator[Any, None, None], deals)), refused:
            next(deals)


async def test_a_house_bot_answering_after_its_stream_ended_keeps_running() -> None:
    """A validation game ends while the house bot (an SDK bot on the worker's loop) is still answering (it timed
    out; its relay ends the stream with OK after the relayed MatchEnded): gRPC's write on a finished call raises
    ``asyncio.InvalidStateError``. Before, that ended ``Bot.arun`` for good: the house side was a no-show in every
    later game, which the version under test then won without playing. The write is dropped, as on a broken stream."""
    import asyncio

    from bots.sdk import _Outbox

    class Finished:
        async def write(self, _msg: object) -> None:
            raise asyncio.InvalidStateError("RPC already finished.")  # grpc.aio's _write on a done call

    outbox = _Outbox(Finished())
    assert await outbox.put_now(b"late decision") is None  # the read loop's inline answer (it used to raise)
    writer = asyncio.create_task(outbox.run())
    outbox.put(b"pong")
    assert await asyncio.wait_for(writer, 5) is None  # ends quietly, as after a broken stream (it used to raise)
