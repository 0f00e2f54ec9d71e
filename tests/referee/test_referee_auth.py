"""Who is on the other end: tokens, impersonation, malformed streams, heartbeat
(docs/architecture.md, "Bot identity and tokens"; docs/faults.md F-06, F-09)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
import redis
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until

from bots.reference import RandomBot
from bots.sdk import AuthenticationError, Bot
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee.replay import verify
from referee.testing import Harness, replay_of
from referee.tokens import RedisTokenStore, StaticTokenStore, token_hash

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3}


async def raw_connect(address: str, first: pb.BotMessage, *, read: int = 1):
    """Open a stream, send ``first``, read up to ``read`` messages; return (messages, status code)."""
    async with grpc.aio.insecure_channel(address) as ch:
        call = pb_grpc.RefereeStub(ch).Connect()
        await call.write(first)
        got = []
        code = None
        try:
            for _ in range(read):
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    code = await call.code()
                    break
                got.append(msg)
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
        call.cancel()
        return got, code


def hello(token: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, bot_name="x", bot_version="1", max_concurrent_matches=1))


@pytest.mark.parametrize(("token", "words"), [("", "missing"), ("not-a-token", "unknown or revoked")])
async def test_f06_missing_or_wrong_token_is_unauthenticated_and_counted(token, words):
    async with Harness(TOKENS) as h:
        got, code = await raw_connect(h.address, hello(token), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        (msg,) = got
        assert msg.error.code == pb.ERROR_CODE_UNAUTHENTICATED and words in msg.error.message
        assert h.core is not None and h.core.counters.auth_failures == 1
        assert len(h.core.registry) == 0


async def test_f06_sdk_raises_authentication_error_and_does_not_retry():
    async with Harness(TOKENS) as h:
        bot = RandomBot()
        with pytest.raises(AuthenticationError):
            await asyncio.wait_for(bot.arun(h.address, "bad-token", initial_backoff_s=0.01), 5)
        assert h.core is not None and h.core.counters.auth_failures == 1


async def test_f06_revoked_token_in_redis(redis_base_url, redis_prefix):
    key = redis_prefix + "bot_tokens"
    sync = redis.Redis.from_url(redis_base_url)
    sync.hset(key, token_hash("live-token"), 7)
    sync.set(key + ":published", "1")  # the whole set, as ladder.bots.publish_tokens marks it
    store = RedisTokenStore(redis_base_url, key=key)
    try:
        assert await store.lookup("live-token") == 7
        assert await store.lookup("other") is None
        async with Harness(token_store=store, token_recheck_ms=100, ping_interval_ms=50) as h:
            got, _ = await raw_connect(h.address, hello("live-token"))
            assert got[0].welcome.bot_id == 7
            # a live session is closed when its token is revoked
            bot = RandomBot()
            task = h.start_bot(bot, "live-token")
            await h.wait_sessions(7)
            sync.hdel(key, token_hash("live-token"))
            with pytest.raises(AuthenticationError):
                await asyncio.wait_for(task, 5)
            assert any(e.code == pb.ERROR_CODE_UNAUTHENTICATED for e in bot.stats.errors)
            # and a new connection with it is refused
            got, code = await raw_connect(h.address, hello("live-token"), read=2)
            assert code == grpc.StatusCode.UNAUTHENTICATED
            assert h.core is not None and h.core.counters.auth_failures >= 2
    finally:
        sync.delete(key, key + ":published")
        sync.close()


async def test_token_store_down_is_unavailable_not_unauthenticated():
    store = RedisTokenStore("redis://127.0.0.1:1/0", socket_timeout_s=0.5)
    async with Harness(token_store=store) as h:
        got, code = await raw_connect(h.address, hello("anything"), read=2)
        assert code == grpc.StatusCode.UNAVAILABLE
        assert got[0].error.code == pb.ERROR_CODE_UNAVAILABLE
        assert h.core is not None and h.core.counters.auth_failures == 0


async def test_f06_valid_token_of_another_bot_cannot_answer_for_a_seat():
    """C holds a valid token and sends a Decision for B's pending request: an Error for C, no change."""

    class Meddler(Bot):
        def choose(self, request):
            return 0

    c = Meddler()
    c.received = []

    class B(Bot):
        n = 0

        async def choose(self, request):
            self.n += 1
            if self.n == 2:
                c.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq,
                                                          action_index=request.num_actions - 1)))
                c.send(pb.BotMessage(resign=pb.Resign(match_id=request.match_id)))
                await asyncio.sleep(0.1)
            return 0

    b = B()
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(b, "tok-b")
        h.start_bot(c, "tok-c")
        result = await h.run_match(200, "toy(players=2,turns=4)", [1, 2])
        assert h.core is not None and h.core.counters.not_seated == 2  # counted
    replay = replay_of(result)
    verify(replay)
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert [e.code for e in c.stats.errors] == [pb.ERROR_CODE_NOT_SEATED, pb.ERROR_CODE_NOT_SEATED]
    # B's own answer (index 0, after ~100 ms on its running clock) is the one applied
    b_steps = [s for s in replay["steps"] if s["player"] == 1]
    assert b_steps[1]["time_ms"] >= 100
    first_b = [m for m in c.received if m.HasField("decision_request") or m.HasField("match_started")]
    assert first_b == []  # C never received anything of that match


async def test_decision_before_hello_is_refused_clearly_and_the_referee_stays_up():
    async with Harness(TOKENS) as h:
        first = pb.BotMessage(decision=pb.Decision(match_id=1, seq=1, action_index=0))
        got, code = await raw_connect(h.address, first, read=2)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert got[0].error.code == pb.ERROR_CODE_PROTOCOL and "first message must be Hello" in got[0].error.message
        got, code = await raw_connect(h.address, pb.BotMessage(), read=2)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "empty BotMessage" in got[0].error.message
        # still serving
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        assert (await h.run_match(210, "toy(players=2,turns=2)", [1, 2])).status == "finished"


async def test_silent_stream_without_hello_is_closed():
    async with Harness(TOKENS, hello_timeout_ms=200) as h, grpc.aio.insecure_channel(h.address) as ch:
        call = pb_grpc.RefereeStub(ch).Connect()
        msg = await asyncio.wait_for(call.read(), 3)
        assert msg.error.code == pb.ERROR_CODE_PROTOCOL and "no Hello" in msg.error.message
        assert await asyncio.wait_for(call.code(), 3) == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_heartbeat_keeps_answering_bots_and_closes_dead_streams():
    async with Harness(TOKENS, ping_interval_ms=50, ping_timeout_ms=300) as h:
        alive = RandomBot()
        h.start_bot(alive, "tok-a")
        await h.wait_sessions(1)
        async with grpc.aio.insecure_channel(h.address) as ch:
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(hello("tok-b"))  # then never reads nor answers a Ping
            await h.wait_sessions(2)
            assert h.core is not None
            core = h.core
            await async_wait_until(lambda: 2 not in core.registry.by_bot, 10, what="the silent stream closed")
            assert len(h.core.registry.by_bot[1]) == 1 and alive.stats.welcomes == 1
            assert h.core.counters.sessions_killed == 1
            call.cancel()


async def test_static_token_store():
    store = StaticTokenStore({"a": 1})
    assert await store.lookup("a") == 1
    assert await store.lookup("") is None
    store.add("b", 2)
    store.revoke("a")
    assert (await store.lookup("a"), await store.lookup("b")) == (None, 2)
    assert token_hash("a") == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
