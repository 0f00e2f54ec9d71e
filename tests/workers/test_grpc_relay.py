"""The relay of hosted gRPC bots (docs/hosted.md; ``workers.hosting.grpc_relay``), tried from its socket as a bot would.

A real referee (``referee.testing.Harness``, MatchControl on the same port as the bot service, which is
what a byte relay would expose) and a relay in front of it. Oracles: the referee's own registry (which
bot id a session is, how many sessions), its results, and the gRPC status codes the caller receives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import grpc
import grpc.aio
import pytest
from fixtures.waiting import async_wait_until

from bots.reference import GreedyBot, RandomBot
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import control_pb2_grpc as control_grpc
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee.headers import SERVICE_TOKEN_HEADER
from referee.testing import SERVICE_TOKEN, Harness
from workers.hosting.grpc_relay import LINGER_S, GrpcRelay

TOKENS = {"credential-of-7": 7, "tok-house": 2}
GAME = "floriferous(players=2)"


async def _hello(stub: pb_grpc.RefereeStub, token: str) -> tuple[object, pb.RefereeMessage]:
    call = stub.Connect()
    await call.write(pb.BotMessage(hello=pb.Hello(token=token, bot_name="x", max_concurrent_matches=50)))
    first = await asyncio.wait_for(call.read(), 5)
    return call, first


async def test_the_relay_swaps_the_token_and_serves_nothing_but_connect(tmp_path: Path) -> None:
    async with Harness(TOKENS) as h:
        relay = GrpcRelay(str(tmp_path / "referee.sock"), h.address, "credential-of-7")
        await relay.start()
        try:
            async with grpc.aio.insecure_channel(f"unix:{tmp_path / 'referee.sock'}") as ch:
                stub = pb_grpc.RefereeStub(ch)
                # The bot's own token is a placeholder: the referee sees the platform's credential (bot 7).
                call, first = await _hello(stub, "hosted")
                assert first.HasField("welcome") and first.welcome.bot_id == 7
                await h.wait_sessions(7)
                assert h.core is not None
                sessions = list(h.core.registry.by_bot[7])
                assert len(sessions) == 1
                # A second stream at once is refused: one referee session per hosted seat.
                call2, _ = stub.Connect(), None
                await call2.write(pb.BotMessage(hello=pb.Hello(token="hosted")))
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await asyncio.wait_for(call2.read(), 5)
                assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert len(h.core.registry.by_bot[7]) == 1
                # MatchControl through the socket, even with the referee's real service token: not served.
                control = control_grpc.MatchControlStub(ch)
                req = control_pb.RunMatchRequest(match_id=1, game_string=GAME, seat_bot_ids=[7, 2], seed="s")
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    async for _ in control.RunMatch(req, metadata=[(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]):
                        pass
                assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
                health = ch.unary_unary("/grpc.health.v1.Health/Check")
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await health(b"")
                assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
                call.cancel()
            # The same MatchControl call straight to the referee's port works: what the relay withholds.
            async with grpc.aio.insecure_channel(h.address) as direct:
                health = direct.unary_unary("/grpc.health.v1.Health/Check")
                await health(b"")
        finally:
            await relay.stop()
    assert not (tmp_path / "referee.sock").exists()


async def test_a_relay_whose_socket_path_is_too_long_for_bind_still_listens_there(tmp_path: Path) -> None:
    # A run folder under a deep PARTERRE_HOSTED_DIR: the socket's path is over the 107 bytes of sun_path.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    socket_path = deep / "referee.sock"
    assert len(str(socket_path)) > 107
    async with Harness(TOKENS) as h:
        relay = GrpcRelay(str(socket_path), h.address, "credential-of-7")
        await relay.start()
        try:
            assert socket_path.is_socket()
            # A client reaches it the way the sandbox does: the folder bound at a short path.
            short = tmp_path / "s"
            short.symlink_to(deep)
            async with grpc.aio.insecure_channel(f"unix:{short / 'referee.sock'}") as ch:
                call, first = await _hello(pb_grpc.RefereeStub(ch), "hosted")
                assert first.HasField("welcome") and first.welcome.bot_id == 7
                call.cancel()
        finally:
            await relay.stop()
    assert not socket_path.exists()


async def test_a_seat_relay_plays_one_match_then_closes(tmp_path: Path) -> None:
    sock = tmp_path / "referee.sock"
    async with Harness(TOKENS) as h:
        relay = GrpcRelay(str(sock), h.address, "credential-of-7", max_matches=1, only_match_id=1)
        await relay.start()
        try:
            bot = GreedyBot(seed=1)
            # the bot's own Hello asks for another match: the relay puts the one it was started for
            task = asyncio.create_task(bot.arun(f"unix:{sock}", "anything", initial_backoff_s=0.05, only_match_id=5))
            h.start_bot(RandomBot(seed=2), "tok-house")
            await h.wait_sessions(7)
            await h.wait_sessions(2)
            assert h.core is not None
            assert [(s.only_match_id, s.max_matches) for s in h.core.registry.by_bot[7]] == [(1, 1)]
            result = await h.run_match(1, GAME, [7, 2], seed="relay")
            assert result.status == "finished" and [s.verdict for s in result.seats] == ["normal", "normal"]
            await asyncio.wait_for(relay.done.wait(), 5)
            assert relay.matches_ended == 1
            # The stream is ended after its match; the bot's reconnects are refused, no second session.
            core = h.core
            assert core is not None
            await async_wait_until(lambda: not core.registry.by_bot.get(7), 10, what="bot 7's stream ended")
            async with grpc.aio.insecure_channel(f"unix:{sock}") as ch:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await _hello(pb_grpc.RefereeStub(ch), "hosted")
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            bot.stop()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        finally:
            await relay.stop()


async def test_a_refused_credential_is_reported(tmp_path: Path) -> None:
    async with Harness(TOKENS) as h:
        relay = GrpcRelay(str(tmp_path / "referee.sock"), h.address, "revoked")
        await relay.start()
        try:
            async with grpc.aio.insecure_channel(f"unix:{tmp_path / 'referee.sock'}") as ch:
                call, first = await _hello(pb_grpc.RefereeStub(ch), "credential-of-7")  # the bot's token: ignored
                assert first.HasField("error") and first.error.code == pb.ERROR_CODE_UNAUTHENTICATED
                with contextlib.suppress(grpc.aio.AioRpcError):
                    # the type: ignore below: _hello types the call as object
                    assert await call.read() is grpc.aio.EOF  # type: ignore[attr-defined]
                # the type: ignore below: _hello types the call as object
                assert await call.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
            await asyncio.wait_for(relay.done.wait(), 5)
            assert relay.refused
        finally:
            await relay.stop()


ROOT = Path(__file__).resolve().parents[2]
# A stand-in for the sandboxed bot (no bwrap needed): an SDK bot thinking ``delay_ms`` per decision on the socket.
CHILD = ("import asyncio, sys\nfrom bots.misbehaving import SlowBot\n"
         "asyncio.run(SlowBot(delay_ms=float(sys.argv[2])).arun(sys.argv[1], 'placeholder'))\n")


async def _seat(tmp_path: Path, address: str, token: str, delay_ms: int) -> asyncio.subprocess.Process:
    sock_dir = tmp_path / "run"
    sock_dir.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "PARTERRE_BOT_TOKEN": token}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.hosting.seat", "--address", address, "--log-dir", str(tmp_path / "notes"),
        "--grpc-dir", str(sock_dir), "--", sys.executable, "-c", CHILD, f"unix:{sock_dir / 'referee.sock'}",
        str(delay_ms), env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)


async def test_the_grpc_seat_plays_one_match_drains_on_sigterm_and_reports_a_refused_credential(
        tmp_path: Path) -> None:
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=2), "tok-house")
        await h.wait_sessions(2)
        seat = await _seat(tmp_path, h.address, "credential-of-7", delay_ms=50)
        await h.wait_sessions(7, timeout_s=30)
        match = asyncio.create_task(h.run_match(1, GAME, [7, 2], seed="seat", cap_ms=5000))
        assert h.core is not None
        async with asyncio.timeout(30):  # until the referee has seated its session
            while not any(sess.seats for sess in h.core.registry.by_bot.get(7, ())):
                await asyncio.sleep(0.01)
        assert not match.done()
        seat.send_signal(signal.SIGTERM)  # the worker's stop while the seat plays: it finishes the match first
        result = await asyncio.wait_for(match, 120)
        assert result.status == "finished" and [s.verdict for s in result.seats] == ["normal", "normal"]
        started = time.monotonic()
        out, _ = await asyncio.wait_for(seat.communicate(), 30)
        assert seat.returncode == 0, out
        assert time.monotonic() - started < LINGER_S + 10
        assert b"1 match(es) played (gRPC, 1 stream(s))" in out and b"SIGTERM: draining" in out, out
        assert not (tmp_path / "run" / "referee.sock").exists()

        refused = await _seat(tmp_path, h.address, "not-a-credential", delay_ms=0)
        out, _ = await asyncio.wait_for(refused.communicate(), 60)
        assert refused.returncode == 3, out  # as the stdio seat: the referee refused the credential


async def test_a_late_refusal_of_a_spent_credential_leaves_the_next_games_gate_open(tmp_path: Path) -> None:
    """A trial side's stream carries game N's credential; the referee's refusal of it arrives after the runner
    armed the gate with game N+1's. The refusal closes the gate only for the credential it refused: the side
    reconnects at once with the new one (it used to wait at a closed gate and be a no-show in game N+1)."""
    async with Harness(TOKENS) as h:
        assert h.core is not None
        store, release = h.core.token_store, asyncio.Event()
        real_lookup = store.lookup

        async def slow_lookup(token: str) -> int | None:
            if token == "spent":
                await release.wait()  # the refusal of game N's credential comes late
            return await real_lookup(token)

        store.lookup = slow_lookup  # type: ignore[method-assign]  # the referee's own store, slowed for one token
        gate = asyncio.Event()
        relay = GrpcRelay(str(tmp_path / "referee.sock"), h.address, "spent", gate=gate)
        await relay.start()
        try:
            gate.set()
            async with grpc.aio.insecure_channel(f"unix:{tmp_path / 'referee.sock'}") as ch:
                call = pb_grpc.RefereeStub(ch).Connect()
                await call.write(pb.BotMessage(hello=pb.Hello(token="hosted", bot_name="x")))
                await async_wait_until(lambda: relay.streams == 1, what="the stream passes the gate")
                relay.credential = "credential-of-7"  # the runner arms game N+1
                gate.set()
                release.set()
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await asyncio.wait_for(call.read(), 5)
                assert await asyncio.wait_for(call.code(), 5) == grpc.StatusCode.UNAVAILABLE
                assert gate.is_set()
                again, first = await _hello(pb_grpc.RefereeStub(ch), "hosted")
                assert first.HasField("welcome") and first.welcome.bot_id == 7
                again.cancel()  # type: ignore[attr-defined]  # _hello types the call as object
        finally:
            await relay.stop()
