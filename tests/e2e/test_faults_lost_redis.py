"""Redis comes back empty: the bots stay connected and keep playing (docs/faults.md, "Lost
dependencies and half-open connections", D-01).

Redis is a cache that may be lost at any time; PostgreSQL is the source of truth
(docs/architecture.md, "Bot identity and tokens"). The fault is acted with a
``redis-server`` of this test's own (no persistence, a port below the ephemeral
range): ``FLUSHALL``, then SIGKILL and a restart on the same port, empty. The
referee checks tokens every 100 ms; a real ``parterre worker`` process runs
beside it. Oracle: the database's live bots (every one of them still plays a
match), and the one bot revoked in the database (refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from celery import Celery
from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from bots.sdk import AuthenticationError
from ladder import bots as ladder_bots
from ladder import db as ladder_db
from proto.parterre.v1 import referee_pb2 as pb
from referee.testing import Harness
from referee.tokens import RedisTokenStore

register_toy()

ROOT = Path(__file__).resolve().parents[2]


def _free_low_port() -> int:
    """A free TCP port below Linux's ephemeral range (so no outgoing connection takes it meanwhile)."""
    for _ in range(200):
        port = 20000 + secrets.randbelow(12000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below 32000")


class RedisServer:
    """A ``redis-server`` child without persistence: killing it loses everything."""

    def __init__(self, tmp: Path) -> None:
        self.port, self.tmp = _free_low_port(), tmp
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.tmp / "redis.log", "ab")  # noqa: SIM115  (open for the child's lifetime)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.tmp)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                assert time.monotonic() < deadline, (self.tmp / "redis.log").read_text()
                time.sleep(0.05)
        client.close()

    def kill(self) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if not Path("/usr/bin/redis-server").exists() and subprocess.run(["which", "redis-server"]).returncode:
        pytest.fail("redis-server is needed for this test")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


async def _until(predicate: Any, timeout_s: float, what: str) -> float:
    """Poll ``predicate`` every 50 ms; return the seconds it took (fail after ``timeout_s``)."""
    t0 = time.monotonic()
    while not predicate():
        assert time.monotonic() - t0 < timeout_s, f"not within {timeout_s} s: {what}"
        await asyncio.sleep(0.05)
    return time.monotonic() - t0


def _start_worker(tmp: Path, database_url: str, redis_url: str, *cli: str, **extra: str) -> subprocess.Popen[bytes]:
    """``parterre worker`` (or ``parterre CLI...``) logging to ``tmp/<role>.log``."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
           "PYTHONPATH": str(ROOT), "PARTERRE_HOME": str(tmp), "PARTERRE_DATABASE_URL": database_url,
           "PARTERRE_REDIS_URL": redis_url, "PARTERRE_QUEUE": f"lost-redis-{secrets.token_hex(4)}",
           "PARTERRE_SERVICE_TOKEN": "lost-redis-" + secrets.token_hex(8), "PARTERRE_LADDER_GAMES": "",
           "PARTERRE_ENGINES": "pure", **extra}
    cli = cli or ("worker", "--concurrency", "1", "--loglevel", "INFO")
    log = open(tmp / f"{cli[0]}.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "parterre.cli", *cli], env=env, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    return proc


async def test_d01_redis_emptied_or_restarted_keeps_every_bot_and_still_refuses_a_revoked_token(
        database_url: str, redis_server: RedisServer, tmp_path: Path) -> None:
    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=2)
    r = redis.Redis.from_url(redis_server.url, socket_timeout=2)
    (a, tok_a), (b, tok_b), (c, tok_c) = (ladder_bots.register_bot(pool, n, redis=r) for n in ("d1-a", "d1-b", "d1-c"))
    worker = _start_worker(tmp_path, database_url, redis_server.url)
    store = RedisTokenStore(redis_server.url, key=ladder_bots.TOKENS_KEY, socket_timeout_s=0.5)
    bots = {a: RandomBot(seed=1), b: RandomBot(seed=2), c: RandomBot(seed=3)}

    def hash_len() -> int:
        try:
            return int(r.hlen(ladder_bots.TOKENS_KEY))
        except redis.exceptions.ConnectionError:
            return -1

    try:
        async with Harness(token_store=store, token_recheck_ms=100, ping_interval_ms=50) as h:
            assert h.core is not None
            for bot_id, token in ((a, tok_a), (b, tok_b), (c, tok_c)):
                h.start_bot(bots[bot_id], token, initial_backoff_s=0.1, max_backoff_s=1.0)
                await h.wait_sessions(bot_id)
            match_id = 900

            async def everyone_plays() -> None:
                nonlocal match_id
                for pair in ((a, b), (b, c)):
                    match_id += 1
                    result = await asyncio.wait_for(h.run_match(match_id, "toy(players=2,turns=3)", list(pair)), 30)
                    assert result.status == "finished"
                    assert [s.verdict for s in result.seats] == ["normal", "normal"]

            await everyone_plays()
            log = tmp_path / "worker.log"
            await _until(lambda: " ready." in log.read_text(errors="replace"), 90, "the worker ready")
            for lose in ("flushall", "restart"):
                if lose == "flushall":
                    r.flushall()
                else:
                    redis_server.kill()
                    redis_server.start()
                # the referee rechecks every 100 ms: during the loss it must revoke no one ...
                took = await _until(lambda: hash_len() == 3, 30, f"tokens published again after {lose}")
                assert h.core.counters.auth_failures == 0, f"a bot was refused after {lose}"
                for bot_id in (a, b, c):
                    assert bot_id in h.core.registry.by_bot, f"bot {bot_id} was disconnected after {lose}"
                    assert not any(e.code == pb.ERROR_CODE_UNAUTHENTICATED for e in bots[bot_id].stats.errors)
                assert took < 30
                # ... and every bot plays within 30 s of the loss
                await everyone_plays()
            # a token truly revoked (in the database) is still refused, at once and on reconnection
            ladder_bots.revoke_bot(pool, c, redis=r)
            await _until(lambda: c not in h.core.registry.by_bot, 10, "revoked bot closed")
            # the closing Error reaches the bot after the referee dropped the session: wait for it
            await _until(lambda: any(e.code == pb.ERROR_CODE_UNAUTHENTICATED for e in bots[c].stats.errors), 10,
                         "the revoked bot told why")
            with pytest.raises(AuthenticationError):
                await asyncio.wait_for(RandomBot().arun(h.address, tok_c), 10)
            # and a revocation made while Redis was empty is not undone by the republish
            r.flushall()
            ladder_bots.revoke_bot(pool, b)  # in the database only: Redis has no hash to remove it from
            await _until(lambda: hash_len() == 1, 30, "tokens published again after the last flush")
            await _until(lambda: b not in h.core.registry.by_bot, 10, "bot revoked during the loss closed")
            assert a in h.core.registry.by_bot
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(10)
        await store.aclose()
        r.close()
        pool.close()


async def test_d01_a_new_connection_while_the_hash_is_lost_is_told_to_retry_not_refused(
        redis_server: RedisServer) -> None:
    """With no worker to publish it again, an unknown token meets UNAVAILABLE (retry), not
    UNAUTHENTICATED; a token the referee saw whole before the loss is still accepted."""
    from test_referee_auth import hello, raw_connect

    r = redis.Redis.from_url(redis_server.url, socket_timeout=2)
    key = "parterre:bot_tokens"
    r.hset(key, mapping={ladder_bots.token_hash("seen-before"): "5"})
    r.set("parterre:bot_tokens:published", "1")  # as the ladder writes it with the whole hash
    store = RedisTokenStore(redis_server.url, key=key, socket_timeout_s=0.5)
    try:
        async with Harness(token_store=store, token_recheck_ms=100, ping_interval_ms=50) as h:
            got, _ = await raw_connect(h.address, hello("seen-before"))
            assert got[0].welcome.bot_id == 5
            r.flushall()
            got, code = await raw_connect(h.address, hello("never-seen"), read=2)
            assert code == grpc.StatusCode.UNAVAILABLE and got[0].error.code == pb.ERROR_CODE_UNAVAILABLE
            got, _ = await raw_connect(h.address, hello("seen-before"))
            assert got[0].welcome.bot_id == 5
            # the referee asked for the hash again (the workers' token watch wakes on this list)
            assert r.llen("parterre:bot_tokens:wanted") == 1
            assert h.core is not None and h.core.counters.auth_failures == 0
    finally:
        await store.aclose()
        r.close()


def test_d01_the_beats_tokens_tick_publishes_the_lost_hash_from_the_database(
        database_url: str, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``parterre.tokens_tick`` (sent by ``parterre beat``): nothing when the hash is whole, the
    database's live tokens when Redis lost it."""
    from workers import token_cache

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=2)
    r = redis.Redis.from_url(redis_server.url, socket_timeout=2)
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_server.url)
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    try:
        ids = [ladder_bots.register_bot(pool, f"d1-tick-{i}", redis=r)[0] for i in range(3)]
        ladder_bots.revoke_bot(pool, ids[1], redis=r)
        assert token_cache.tokens_tick() is None
        r.flushall()
        assert token_cache.tokens_tick() == 2
        assert sorted(int(v) for v in r.hvals(ladder_bots.TOKENS_KEY)) == [ids[0], ids[2]]
        assert token_cache.tokens_tick() is None
    finally:
        if token_cache._tick_pool is not None:
            token_cache._tick_pool[1].close()
            token_cache._tick_pool = None
        r.close()
        pool.close()


OUTAGES = 3
"""Redis outages acted in the D-06 test, each followed by a match."""


def test_d06_a_worker_rides_out_a_redis_outage_of_seconds_and_plays_a_match_queued_after_it(
        database_url: str, redis_server: RedisServer, tmp_path: Path) -> None:
    """Redis SIGKILLed, down 3 s, started again empty: the real ``parterre worker`` process is
    still running, and a match queued after the restart is played to its end (docs/faults.md D-06).

    Oracle: the process table (the worker's pid has not exited), the match row in PostgreSQL
    (status ``finished``, with a replay), written by the worker after a real referee ran it, and
    the worker's own log (no Celery bootstep failed while it reconnected).
    """
    from ladder import tournaments
    from parterre.embedded import celery_url
    from referee.testing import ThreadedReferee

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=2)
    (a, tok_a), (b, tok_b) = (ladder_bots.register_bot(pool, n) for n in ("d6-a", "d6-b"))
    service_token = "d6-" + secrets.token_hex(8)
    queue = f"d6-{secrets.token_hex(4)}"
    ref = ThreadedReferee({tok_a: a, tok_b: b}, bots={tok_a: RandomBot(seed=1), tok_b: RandomBot(seed=2)},
                          service_token=service_token, bot_options={"initial_backoff_s": 0.1})
    ref.start()
    worker = _start_worker(tmp_path, database_url, redis_server.url, PARTERRE_QUEUE=queue,
                           PARTERRE_SERVICE_TOKEN=service_token, PARTERRE_REFEREE_ADDRESS=ref.control_address)
    # beat, as under `parterre up`: ticks keep the worker consuming when Redis goes
    beat = _start_worker(tmp_path, database_url, redis_server.url, "beat", "--reap-period", "0.5",
                         "--loglevel", "WARNING", PARTERRE_QUEUE=queue, PARTERRE_SERVICE_TOKEN=service_token,
                         PARTERRE_REFEREE_ADDRESS=ref.control_address)
    log = tmp_path / "worker.log"

    def one(sql: str, match_id: int) -> Any:
        with pool.connection() as conn:
            row = conn.execute(sql, (match_id,)).fetchone()
        assert row is not None
        return row[0]

    def status(match_id: int) -> str:
        return str(one("SELECT status FROM matches WHERE id = %s", match_id))

    def until(predicate: Any, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert worker.poll() is None, f"the worker exited with status {worker.returncode}:\n" + \
                log.read_text(errors="replace")[-6000:]
            assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}\n" + \
                log.read_text(errors="replace")[-6000:]
            time.sleep(0.1)

    try:
        until(lambda: log.read_text(errors="replace").count(" ready.") >= 2, 90, "the worker and its tick slot ready")
        tid = tournaments.create_tournament(pool, name="d6", game="floriferous", bot_ids=[a, b], player_counts=(2,),
                                            rounds=2, time_control={"base_ms": 0, "increment_ms": 0,
                                                                    "cap_ms": 5000, "margin_ms": 500})
        match_ids = tournaments.plan_round_robin(pool, tid)  # 2 rounds x 2 seatings of the pair
        assert len(match_ids) >= OUTAGES
        # the loss is caught at whatever step the worker is in (waiting, consuming a tick): act it more than once
        for outage, match_id in enumerate(match_ids[:OUTAGES], 1):
            redis_server.kill()
            time.sleep(3.0)  # the fault: Redis is away for 3 s
            redis_server.start()  # empty: no persistence
            sender = Celery("d6", broker=celery_url(redis_server.url))  # the project's app keeps its broker
            with sender.connection_for_write() as conn:
                sender.send_task("parterre.run_match", args=(match_id,), queue=queue, connection=conn)
            until(lambda m=match_id: status(m) == "finished", 120, f"match {match_id} played after outage {outage}")
            assert one("SELECT count(*) FROM replays WHERE match_id = %s", match_id) == 1
            assert worker.poll() is None
            # the reconnect went cleanly: no bootstep of the worker failed on the closed connection (Celery's
            # gossip did, and the same AttributeError in a restarting step is the worker's "Unrecoverable error")
            failed = [line for line in log.read_text(errors="replace").splitlines()
                      if '"logger": "celery.bootsteps"' in line or "Unrecoverable error" in line]
            assert not failed, f"after outage {outage}:\n" + "\n".join(failed)[:4000]
    finally:
        for proc in (worker, beat):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        ref.stop()
        pool.close()
