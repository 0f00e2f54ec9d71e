"""Faults and attacks at the referee's door: vanished streams, oversized and
flooding messages, revoked tokens, the internal endpoint, TLS, secrets in logs
(docs/architecture.md, "The clock" and "Security"; docs/faults.md F-02, F-06, F-09).

F-09's "vanish without a FIN or RST" is made by stopping the bots' process
with SIGSTOP: its sockets stay open (the kernel keeps ACKing what fits in the
buffers) but nothing answers any more, neither the HTTP/2 keepalive pings nor
the application's Pings, exactly as when a machine or a NAT drops off the
network. (Dropping packets in a network namespace needs CAP_NET_ADMIN, which
test machines usually lack.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from fixtures.toolchains import missing
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from bots.misbehaving import SilentBot
from bots.reference import RandomBot
from bots.sdk import AuthenticationError, Bot
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import control_pb2_grpc as control_grpc
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee import metrics
from referee.headers import RELAY_BOT_HEADER, SERVICE_TOKEN_HEADER
from referee.replay import verify
from referee.server import TlsConfig
from referee.testing import SERVICE_TOKEN, Harness, replay_of

register_toy()

ROOT = Path(__file__).resolve().parents[2]


def hello(token: str, capacity: int = 1) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, bot_name="raw", bot_version="1",
                                        max_concurrent_matches=capacity))


# -- F-09: dead streams are found -------------------------------------------------------------

VANISHING_BOTS = textwrap.dedent("""
    import asyncio, sys
    from bots.misbehaving import SlowBot
    from bots.reference import RandomBot

    async def main(address, tokens, slow):
        bots = [SlowBot(delay_ms=60_000) if i < slow else RandomBot(seed=i) for i in range(len(tokens))]
        tasks = [asyncio.create_task(b.arun(address, t)) for b, t in zip(bots, tokens)]
        while sum(b.stats.welcomes for b in bots) < len(bots):
            await asyncio.sleep(0.05)
        print("ready", flush=True)
        await asyncio.gather(*tasks)

    asyncio.run(main(sys.argv[1], sys.argv[3].split(","), int(sys.argv[2])))
""")


@pytest.mark.e2e
async def test_f09_fifty_streams_forty_vanish_without_fin_and_are_found_within_20_s():
    """50 bots hold streams, 40 of them in a process that is then SIGSTOPped (no FIN,
    no RST). With the default heartbeat (Ping every 5 s, 15 s of silence closes a
    stream) and HTTP/2 keepalive, the referee finds all 40 within 20 s, their handlers
    end, resources go back to the baseline, and the 5 matches they were thinking in end
    by the disconnect policy (the healthy opponent wins)."""
    tokens = {f"tok-{i}": 100 + i for i in range(50)}
    vanish = [f"tok-{i}" for i in range(40)]
    healthy = [f"tok-{i}" for i in range(40, 50)]
    async with Harness(tokens) as h:  # default heartbeat and keepalive settings
        assert h.core is not None
        for i, tok in enumerate(healthy):
            h.start_bot(RandomBot(seed=i, max_concurrent_matches=2), tok)
        await wait_for(lambda: len(h.core.registry) == 10)
        await asyncio.sleep(0.5)
        base_tasks = len(asyncio.all_tasks())
        import psutil

        me = psutil.Process()
        base_fds = me.num_fds()
        base_gauge = metrics.SESSIONS._value.get()
        child = subprocess.Popen(
            [sys.executable, "-c", VANISHING_BOTS, h.address, "5", ",".join(vanish)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 60)
            assert line.strip() == b"ready"
            await wait_for(lambda: len(h.core.registry) == 50, 20)
            # five matches: a healthy bot against a vanishing one that is thinking (10-minute limit, F-02)
            calls = [asyncio.create_task(h.run_match(500 + k, "toy(players=2,turns=4)", [140 + k, 100 + k],
                                                     cap_ms=600_000, no_show_timeout_ms=10_000))
                     for k in range(5)]
            await wait_for(lambda: all(500 + k in h.core.rooms and h.core.rooms[500 + k][0].pending is not None
                                       and h.core.rooms[500 + k][0].pending.seat.seat == 1 for k in range(5)), 20)
            await asyncio.sleep(0.3)
            os.kill(child.pid, signal.SIGSTOP)
            t0 = time.monotonic()
            await wait_for(lambda: len(h.core.registry) == 10, 40, 0.05)
            found_s = time.monotonic() - t0
            print(f"\n40 vanished streams found in {found_s:.1f} s")
            # docs/faults.md F-09: within 20 s (the heartbeat closes a stream silent for 15 s, checked every 5 s);
            # 3 s of allowance for a loaded 2-core machine, whose event loop runs late
            assert found_s <= 23.0
            results = await asyncio.wait_for(asyncio.gather(*calls), 30)
            for r in results:
                assert r.status == "finished"
                assert [(s.verdict, s.rank) for s in r.seats] == [("normal", 1), ("disconnect", 2)]
                verify(replay_of(r))
            assert h.core.counters.sessions_killed + 0 >= 1  # the heartbeat (or keepalive) did it
            assert sorted(h.core.registry.by_bot) == [140 + i for i in range(10)]
            assert not h.core.rooms and not h.core.registry.orphans
            await wait_for(lambda: len(asyncio.all_tasks()) <= base_tasks + 2)  # the 40 handlers and writers end
            assert len(asyncio.all_tasks()) <= base_tasks + 2
            assert metrics.SESSIONS._value.get() == base_gauge  # the open-sessions gauge is back too
            # (gRPC multiplexes the child's 40 streams on one connection, so descriptors prove nothing here)
            assert me.num_fds() <= base_fds + 6
            # the healthy bots still play
            r = await h.run_match(600, "toy(players=2,turns=3)", [140, 141])
            assert r.status == "finished" and [s.verdict for s in r.seats] == ["normal", "normal"]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGCONT)
            child.kill()
            child.wait(10)


async def test_f09_heartbeat_finds_a_frozen_bot_quickly_with_short_settings():
    """The same mechanism with short settings: an in-process bot whose reads stop (frozen)."""
    async with Harness({"tok-a": 1, "tok-b": 2}, ping_interval_ms=100, ping_timeout_ms=400,
                       reconnect_grace_ms=100) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        async with grpc.aio.insecure_channel(h.address) as ch:
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(hello("tok-b"))
            assert (await call.read()).HasField("welcome")
            await h.wait_sessions(2)
            run = asyncio.create_task(h.run_match(700, "toy(players=2,turns=3)", [1, 2], cap_ms=600_000))
            t0 = time.monotonic()
            result = await asyncio.wait_for(run, 10)  # the frozen stream never answers anything
            assert time.monotonic() - t0 < 5.0
            call.cancel()
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("disconnect", 2)]


# -- limits: message size and message rate ------------------------------------------------------


async def test_an_oversized_message_ends_that_stream_only():
    """A message over the limit (64 KiB by default) ends the sender's stream with
    RESOURCE_EXHAUSTED; its seat follows the disconnect policy; other matches go on."""
    async with Harness({"tok-a": 1, "tok-b": 2, "tok-c": 3, "tok-d": 4}, reconnect_grace_ms=200) as h:
        assert h.core is not None and h.core.settings.max_message_bytes == 64 << 10
        for tok in ("tok-a", "tok-c", "tok-d"):
            h.start_bot(RandomBot(seed=1), tok)
        async with grpc.aio.insecure_channel(h.address) as ch:
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(hello("tok-b"))
            await h.wait_sessions(2)
            await h.wait_sessions(4)
            other = asyncio.create_task(h.run_match(801, "toy(players=2,turns=6)", [3, 4]))
            run = asyncio.create_task(h.run_match(800, "toy(players=2,turns=3)", [1, 2], cap_ms=60_000))
            while True:
                msg = await asyncio.wait_for(call.read(), 5)
                if msg.HasField("decision_request"):
                    break
            await call.write(pb.BotMessage(hello=pb.Hello(bot_name="x" * 100_000)))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                while True:
                    m = await asyncio.wait_for(call.read(), 5)
                    if m is grpc.aio.EOF:
                        await call.code()
                        break
            code = err.value.code() if err.value is not None else None
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, code
            result = await asyncio.wait_for(run, 10)
            # gRPC itself refuses the message and cancels the call: to the room, a dropped stream
            assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("disconnect", 2)]
            assert (await other).status == "finished"


class Flooder(Bot):
    """Answers its first decision with ``n`` Decisions in a burst (duplicates)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def choose(self, request):
        for _ in range(self.n):
            self.send(pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq,
                                                         action_index=0)))
        return -1

    def make_decision(self, request, index):
        return None


async def test_a_flood_is_rate_limited_then_cut_and_others_play_on():
    """More than max_messages_per_s per match slot: messages dropped with an explicit
    error, then the stream closed with RESOURCE_EXHAUSTED; the flood changes nothing else."""
    flood = Flooder(5000)
    async with Harness({"tok-a": 1, "tok-b": 2, "tok-c": 3, "tok-d": 4}, max_messages_per_s=100,
                       rate_limit_kill_after=1000, reconnect_grace_ms=200) as h:
        assert h.core is not None
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(flood, "tok-b", reconnect=False)
        h.start_bot(RandomBot(seed=3), "tok-c")
        h.start_bot(RandomBot(seed=4), "tok-d")
        other = asyncio.create_task(h.run_match(811, "toy(players=2,turns=20)", [3, 4]))
        result = await h.run_match(810, "toy(players=2,turns=5)", [1, 2])
        assert (await other).status == "finished"
        assert h.core.counters.rate_limited >= 1000
        await wait_for(lambda: 2 not in h.core.registry.by_bot)
    assert result.status == "finished"
    # the first Decision was applied once; the rest were duplicates, then dropped; then the stream was cut
    assert [s.verdict for s in result.seats] in (["normal", "crash"], ["normal", "disconnect"])
    rate_errors = [e for e in flood.stats.errors if "rate limit" in e.message]
    assert rate_errors and rate_errors[0].code == pb.ERROR_CODE_PROTOCOL
    assert len(rate_errors) <= 3  # at most one warning per second, not one per dropped message
    assert any(r.code == pb.REJECTION_CODE_DUPLICATE for r in flood.stats.rejections)
    replay = replay_of(result)
    verify(replay)
    assert len([s for s in replay["steps"] if s["player"] == 1 and not s["fallback"]]) == 1


async def test_normal_play_is_never_rate_limited():
    """Every request sent gives its answer a credit: hundreds of decisions a second pass a
    limit of 5 messages/s (which still stops floods of unrequested messages)."""
    async with Harness({"tok-a": 1, "tok-b": 2}, max_messages_per_s=5) as h:
        assert h.core is not None
        h.start_bot(RandomBot(seed=1, max_concurrent_matches=4), "tok-a")
        h.start_bot(RandomBot(seed=2, max_concurrent_matches=4), "tok-b")
        results = await asyncio.gather(*(h.run_match(820 + k, "toy(players=2,turns=40)", [1, 2])
                                         for k in range(4)))
        assert h.core.counters.rate_limited == 0
    assert all(r.status == "finished" and [s.verdict for s in r.seats] == ["normal", "normal"] for r in results)


# -- security -------------------------------------------------------------------------------------


async def test_revoking_a_bot_drops_its_live_session_and_its_seat(database_url, redis_base_url):
    """`parterre bot revoke` (ladder + Redis): the referee drops the bot's live stream at its
    next token check (every 5 s by default), refuses it from then on, and the match it was
    playing ends for it by the disconnect policy."""
    import redis

    from ladder import bots as ladder_bots
    from ladder import db as ladder_db
    from referee.tokens import RedisTokenStore

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url)
    r = redis.Redis.from_url(redis_base_url)
    try:
        (a_id, a_tok), (b_id, b_tok) = (ladder_bots.register_bot(pool, n, redis=r) for n in ("rv-a", "rv-b"))
        store = RedisTokenStore(redis_base_url)
        victim = SilentBot()
        async with Harness(token_store=store, reconnect_grace_ms=300) as h:
            assert h.core is not None and h.core.settings.token_recheck_ms == 5000
            h.start_bot(RandomBot(seed=1), a_tok)
            task = h.start_bot(victim, b_tok)
            await h.wait_sessions(b_id)
            run = asyncio.create_task(h.run_match(830, "toy(players=2,turns=3)", [a_id, b_id], cap_ms=600_000))
            await wait_for(lambda: victim.stats.matches)
            env = {**os.environ, "PARTERRE_DATABASE_URL": database_url, "PARTERRE_REDIS_URL": redis_base_url}
            out = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "parterre.cli", "bot", "revoke",
                                                           "rv-b"], env=env, capture_output=True, text=True,
                                          timeout=120)
            assert out.returncode == 0, out.stderr
            t0 = time.monotonic()
            with pytest.raises(AuthenticationError):
                await asyncio.wait_for(task, 15)
            assert time.monotonic() - t0 < 5.0 + 5.0 + 2.0  # the next check: at most two sweeps away
            result = await asyncio.wait_for(run, 10)
            assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("disconnect", 2)]
            assert any(e.code == pb.ERROR_CODE_UNAUTHENTICATED for e in victim.stats.errors)
            with pytest.raises(AuthenticationError):
                await asyncio.wait_for(SilentBot().arun(h.address, b_tok), 5)
    finally:
        r.close()
        pool.close()


async def test_tokens_never_appear_in_logs(caplog, redis_base_url, redis_prefix):
    """Every code path that touches a token — good, wrong, revoked, relayed — logs no token."""
    import redis

    from referee.tokens import RedisTokenStore, token_hash

    caplog.set_level(logging.DEBUG)
    good, wrong = "good-SECRET-token-7f3a", "wrong-SECRET-token-99c1"
    key = redis_prefix + "tokens"
    sync = redis.Redis.from_url(redis_base_url)
    sync.hset(key, token_hash(good), 1)
    sync.hset(key, token_hash("tok-b-SECRET"), 2)
    sync.set(key + ":published", "1")  # the whole set, as ladder.bots.publish_tokens marks it
    try:
        store = RedisTokenStore(redis_base_url, key=key)
        async with Harness(token_store=store, token_recheck_ms=100, ping_interval_ms=50) as h:
            h.start_bot(RandomBot(seed=1), good)
            h.start_bot(RandomBot(seed=2), "tok-b-SECRET")
            await h.wait_sessions(1)
            await h.wait_sessions(2)
            result = await h.run_match(840, "toy(players=2,turns=3)", [1, 2])
            with pytest.raises(AuthenticationError):
                await asyncio.wait_for(RandomBot().arun(h.address, wrong), 5)
            sync.hdel(key, token_hash(good))  # revoked while connected
            await wait_for(lambda: 1 not in h.core.registry.by_bot, 5)
            assert all(s.token_digest and "SECRET" not in repr(s) for s in h.core.registry.sessions())
            assert not any(hasattr(s, "token") for s in h.core.registry.sessions())
    finally:
        sync.delete(key, key + ":published")
        sync.close()
    text = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "revoked" in text  # the paths above were logged...
    for secret in (good, wrong, "tok-b-SECRET"):
        assert secret not in text  # ...without any token
        assert secret not in result.replay_json


async def test_match_control_only_on_its_own_address_and_only_with_the_service_token():
    """`parterre referee --control-address`: MatchControl is not served on the bot endpoint;
    bots are refused on the control endpoint; the service token is still required there."""
    async with Harness({"tok-a": 1, "tok-b": 2}, control=True) as h:
        assert h.address != h.control_address
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        assert (await h.run_match(850, "toy(players=2,turns=2)", [1, 2])).status == "finished"
        req = control_pb.RunMatchRequest(match_id=851, attempt=1, game_string="toy(players=2)", seat_bot_ids=[1, 2],
                                 time_control=pb.TimeControl(cap_ms=1000))
        async with grpc.aio.insecure_channel(h.address) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in control_grpc.MatchControlStub(ch).RunMatch(
                        req, metadata=[(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)]):
                    pass
            assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
            health = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
        async with grpc.aio.insecure_channel(h.control_address) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in control_grpc.MatchControlStub(ch).RunMatch(req, metadata=[(SERVICE_TOKEN_HEADER, "no")]):
                    pass
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(hello("tok-a"))
            msg = await call.read()
            assert msg.error.code == pb.ERROR_CODE_UNAUTHENTICATED and "bot endpoint" in msg.error.message
            assert await call.code() == grpc.StatusCode.PERMISSION_DENIED
            health = await health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service="parterre.v1.MatchControl"))
            assert health.status == health_pb2.HealthCheckResponse.SERVING


def make_self_signed(tmp: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost / 127.0.0.1 (openssl; skip, or fail under CI, without it)."""
    if shutil.which("openssl") is None:
        missing("openssl is needed to make a test certificate")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


async def tls_bot(address: str, token: str, root: bytes, matches: int = 1) -> list[pb.RefereeMessage]:
    """A minimal bot over TLS: answers every request with action 0 and every Ping."""
    creds = grpc.ssl_channel_credentials(root_certificates=root)
    got: list[pb.RefereeMessage] = []
    async with grpc.aio.secure_channel(address, creds) as ch:
        call = pb_grpc.RefereeStub(ch).Connect()
        await call.write(hello(token))
        ended = 0
        while ended < matches:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                break
            got.append(msg)
            if msg.HasField("decision_request"):
                d = msg.decision_request
                await call.write(pb.BotMessage(decision=pb.Decision(match_id=d.match_id, seq=d.seq, action_index=0)))
            elif msg.HasField("ping"):
                await call.write(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
            elif msg.HasField("match_ended"):
                ended += 1
        call.cancel()
    return got


async def test_tls_on_the_bot_endpoint(tmp_path):
    cert, key = make_self_signed(tmp_path)
    tls = TlsConfig.from_files(str(cert), str(key))
    root = cert.read_bytes()
    async with Harness({"tok-a": 1, "tok-b": 2}, tls=tls, control=True) as h:
        # a plain-text client cannot talk to the TLS port
        async with grpc.aio.insecure_channel(h.address) as ch:
            with pytest.raises(grpc.aio.AioRpcError):
                await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=3)
        bots = [asyncio.create_task(tls_bot(h.address, t, root)) for t in ("tok-a", "tok-b")]
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        result = await h.run_match(860, "toy(players=2,turns=3)", [1, 2])
        got = await asyncio.wait_for(asyncio.gather(*bots), 10)
    assert result.status == "finished" and [s.verdict for s in result.seats] == ["normal", "normal"]
    for msgs in got:
        assert msgs[0].HasField("welcome") and any(m.HasField("match_ended") for m in msgs)
    with pytest.raises(ValueError, match="not a PEM"):
        (tmp_path / "bad.pem").write_text("hello")
        TlsConfig.from_files(str(tmp_path / "bad.pem"), str(key))


@pytest.mark.e2e
def test_parterre_referee_process_with_tls_and_a_control_address(tmp_path, redis_base_url, pg_admin_url):
    """The command line: PARTERRE_TLS_CERT/KEY and --control-address."""
    from parterre.demo import free_port

    cert, key = make_self_signed(tmp_path)
    bot_port, control_port = free_port(), free_port()
    env = {**os.environ, "PARTERRE_HOME": str(tmp_path), "PARTERRE_REDIS_URL": redis_base_url,
           "PARTERRE_DATABASE_URL": pg_admin_url, "PARTERRE_SERVICE_TOKEN": "svc-token",
           "PARTERRE_TLS_CERT": str(cert), "PARTERRE_TLS_KEY": str(key),
           "PARTERRE_CLUSTER_NAMESPACE": f"parterre-test-{os.getpid()}-{bot_port}"}
    with open(tmp_path / "referee.log", "wb") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "parterre.cli", "referee", "--address",
                                 f"127.0.0.1:{bot_port}", "--control-address", f"127.0.0.1:{control_port}"],
                                env=env, stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        from parterre.demo import wait_for_referee

        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)  # the control port is plain
        creds = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{bot_port}", creds) as ch:
            resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service="parterre.v1.Referee"),
                                                        timeout=10)
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        with grpc.insecure_channel(f"127.0.0.1:{bot_port}") as ch, pytest.raises(grpc.RpcError):
            health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=3)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert proc.returncode == 0, (tmp_path / "referee.log").read_text()[-3000:]
    log = (tmp_path / "referee.log").read_text()
    assert "svc-token" not in log


def _sample(name: str, **labels: str) -> float:
    """The current value of a Prometheus counter child (0 before its first increment)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_metrics_count_refusals():
    """F-06 "a counter goes up": each kind of refusal adds exactly one to its Prometheus
    counter, under its own label (read before and after, from the default registry)."""
    auth, proto = "parterre_referee_auth_failures_total", "parterre_referee_protocol_errors_total"
    expected = {(auth, r): 1 for r in ("missing", "invalid", "service_token", "relay", "control_endpoint")}
    expected |= {(proto, k): 1 for k in ("empty", "hello_again", "not_seated", "undecodable")}
    before = {key: _sample(key[0], **{"reason" if key[0] == auth else "kind": key[1]}) for key in expected}

    async def refused(ch: grpc.aio.Channel, first: pb.BotMessage | None, metadata: Any = None) -> grpc.StatusCode:
        call = pb_grpc.RefereeStub(ch).Connect(metadata=metadata)
        # A refusal on the call's metadata (relay, control endpoint) comes at once, without reading: a
        # Hello written meanwhile may fail inside gRPC and turn the read below into INTERNAL; send none.
        if first is not None:
            await call.write(first)
        answer = await asyncio.wait_for(call.read(), 5)  # the Error comes first, then the status
        assert answer.HasField("error"), answer
        return await asyncio.wait_for(call.code(), 10)

    async with Harness({"tok-a": 1}, control=True) as h:
        async with grpc.aio.insecure_channel(h.address) as ch:
            assert await refused(ch, hello("")) == grpc.StatusCode.UNAUTHENTICATED  # missing
            assert await refused(ch, hello("tok-nope")) == grpc.StatusCode.UNAUTHENTICATED  # invalid
            relay_md = [(RELAY_BOT_HEADER, "1"), (SERVICE_TOKEN_HEADER, "wrong")]
            assert await refused(ch, None, relay_md) == grpc.StatusCode.UNAUTHENTICATED  # relay
            call = pb_grpc.RefereeStub(ch).Connect()
            await call.write(hello("tok-a"))
            assert (await asyncio.wait_for(call.read(), 5)).HasField("welcome")
            for msg, code in ((pb.BotMessage(), pb.ERROR_CODE_PROTOCOL), (hello("tok-a"), pb.ERROR_CODE_PROTOCOL),
                              (pb.BotMessage(decision=pb.Decision(match_id=999_999, seq=1, action_index=0)),
                               pb.ERROR_CODE_NOT_SEATED)):
                await call.write(msg)
                answer = await asyncio.wait_for(call.read(), 5)
                assert answer.error.code == code, answer
            raw = ch.stream_stream("/parterre.v1.Referee/Connect", request_serializer=bytes,
                                   response_deserializer=pb.RefereeMessage.FromString)()
            await raw.write(hello("tok-a").SerializeToString())
            assert (await asyncio.wait_for(raw.read(), 5)).HasField("welcome")
            await raw.write(b"\xff\xff\xff\xff")  # undecodable
            answer = await asyncio.wait_for(raw.read(), 5)
            assert answer.error.code == pb.ERROR_CODE_PROTOCOL and "not a BotMessage" in answer.error.message, answer
            assert await asyncio.wait_for(raw.code(), 10) == grpc.StatusCode.INVALID_ARGUMENT
            call.cancel()
        async with grpc.aio.insecure_channel(h.control_address) as ch:
            assert await refused(ch, None) == grpc.StatusCode.PERMISSION_DENIED  # control_endpoint
            req = control_pb.RunMatchRequest(match_id=870, attempt=1, game_string="toy(players=2)", seat_bot_ids=[1, 1],
                                     time_control=pb.TimeControl(cap_ms=1000))
            with pytest.raises(grpc.aio.AioRpcError) as err:  # service_token
                async for _ in control_grpc.MatchControlStub(ch).RunMatch(req, metadata=[(SERVICE_TOKEN_HEADER, "no")]):
                    pass
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert h.core is not None
        assert h.core.counters.auth_failures == 5 and h.core.counters.undecodable == 1
    after = {key: _sample(key[0], **{"reason" if key[0] == auth else "kind": key[1]}) for key in expected}
    assert {key: after[key] - before[key] for key in expected} == expected


async def test_the_playing_gauge_counts_rooms_in_play_not_rooms_seating():
    """``parterre_referee_matches_playing`` counts the rooms whose bots are seated and whose match
    started; a room still waiting for a bot is open (``matches_running``) but not in play. An
    operator (and the compose run's referee kill) tells a referee holding live matches from one
    holding only rooms that would move elsewhere without an attempt (docs/faults.md F-22)."""
    from bots.misbehaving import SlowBot

    running, playing = "parterre_referee_matches_running", "parterre_referee_matches_playing"
    base = _sample(running), _sample(playing)
    async with Harness({"tok-a": 1, "tok-b": 2}, control=True) as h:
        h.start_bot(SlowBot(delay_ms=150), "tok-a")
        await h.wait_sessions(1)
        match = asyncio.create_task(h.run_match(880, "toy(players=2,turns=6)", [1, 2], cap_ms=2000,
                                                no_show_timeout_ms=5000))
        await wait_for(lambda: _sample(running) == base[0] + 1, what="the room open")
        assert _sample(playing) == base[1], "a room waiting for bot 2 is not in play"
        h.start_bot(SlowBot(delay_ms=150), "tok-b")
        await wait_for(lambda: _sample(playing) == base[1] + 1, what="the room in play")
        result = await match
        assert result.status == "finished"
    assert (_sample(running), _sample(playing)) == base
