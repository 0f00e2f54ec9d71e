"""Several referees against one Redis: presence, discovery, relayed seats, and
what happens when one referee dies (referee/README.md "Several referees").

Two in-process referees (real gRPC over loopback, a real Redis for presence and
relay requests, each test in its own key namespace); bots connected to either.
The process-level version (two `parterre referee` processes, one SIGKILLed) is
in tests/e2e/test_faults_e2e.py.
"""

from __future__ import annotations

import asyncio
import secrets
from contextlib import AsyncExitStack

import grpc
import grpc.aio
import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until as wait_for

import workers.directory as directory
from bots.misbehaving import SilentBot
from bots.reference import RandomBot
from proto.parterre.v1 import referee_pb2 as pb
from referee import cluster as cluster_mod
from referee import relay_wants
from referee.cluster import ClusterConfig
from referee.replay import verify
from referee.testing import Harness, replay_of

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3, "tok-d": 4}


@pytest.fixture
def namespace(redis_base_url):
    ns = f"parterre-test-{secrets.token_hex(4)}"
    yield ns
    import redis

    r = redis.Redis.from_url(redis_base_url)
    for key in r.scan_iter(f"{ns}:*"):
        r.delete(key)
    r.close()


def cfg(redis_url: str, ns: str, **kw) -> ClusterConfig:
    return ClusterConfig(redis_url, namespace=ns, presence_interval_ms=300, relay_request_interval_ms=200,
                         relay_idle_ms=1000, **kw)


async def two_referees(stack: AsyncExitStack, redis_url: str, ns: str, **settings):
    a = await stack.enter_async_context(Harness(TOKENS, cluster=cfg(redis_url, ns), referee_id="ref-a",
                                                control=True, **settings))
    b = await stack.enter_async_context(Harness(TOKENS, cluster=cfg(redis_url, ns), referee_id="ref-b",
                                                control=True, **settings))
    return a, b


def test_the_directory_keys_are_the_referees_keys():
    """workers/ may not import referee/: the Redis contract is duplicated and must agree."""
    assert directory.REFEREES_KEY == cluster_mod.REFEREES_KEY
    assert directory.REFEREE_KEY == cluster_mod.REFEREE_KEY
    assert directory.NAMESPACE == cluster_mod.NAMESPACE


async def test_presence_lists_each_referee_and_its_bots(redis_base_url, namespace):
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        a.start_bot(RandomBot(seed=1, max_concurrent_matches=3, games=("toy",)), "tok-a")
        b.start_bot(RandomBot(seed=2), "tok-b")
        b.start_bot(RandomBot(seed=3), "tok-b")
        await a.wait_sessions(1)
        await b.wait_sessions(2, 2)

        def seen():
            refs = {r.id: r for r in directory.read_referees(redis_base_url, ns=namespace)}
            return refs if set(refs) == {"ref-a", "ref-b"} and refs["ref-b"].bots.get(2, None) and \
                refs["ref-b"].bots[2].capacity == 2 and 1 in refs["ref-a"].bots else None

        await wait_for(seen)
        refs = seen()
        assert refs["ref-a"].control_address == a.control_address
        assert refs["ref-a"].address == a.address
        assert refs["ref-a"].bots[1] == directory.BotPresence(3, 3, ("toy",))
        assert refs["ref-b"].bots[2] == directory.BotPresence(2, 2, ())
        online = directory.online_bots(list(refs.values()), "toy")
        assert sorted(online) == [1, 2]
        assert directory.online_bots(list(refs.values()), "floriferous").keys() == {2}  # 1 plays only toy
        # the worker prefers the referee where the match's bots are
        order = directory.choose_referees(["127.0.0.1:1"], list(refs.values()), [2, 2])
        assert order == [b.control_address, a.control_address, "127.0.0.1:1"]
    # a referee that stops withdraws its presence
    assert directory.read_referees(redis_base_url, ns=namespace) == []


@pytest.mark.parametrize("host", ["a", "b"])
async def test_a_match_seats_bots_connected_to_different_referees(redis_base_url, namespace, host):
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        bot1, bot2, bot3 = RandomBot(seed=1), RandomBot(seed=2), RandomBot(seed=3)
        a.start_bot(bot1, "tok-a")
        b.start_bot(bot2, "tok-b")
        b.start_bot(bot3, "tok-c")
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        await b.wait_sessions(3)
        h = a if host == "a" else b
        r2 = await h.run_match(900, "toy(players=2,turns=6)", [1, 2], no_show_timeout_ms=8000)
        r3 = await h.run_match(901, "toy(players=3,turns=5)", [3, 1, 2], no_show_timeout_ms=8000)
        for r in (r2, r3):
            assert r.status == "finished", r.reason
            assert all(s.verdict == "normal" for s in r.seats)
            replay = replay_of(r)
            verify(replay)
            assert sorted(s.decisions for s in r.seats) == sorted(
                sum(1 for st in replay["steps"] if st["player"] == s.seat) for s in r.seats)
        # every bot saw the start and the end of both of its matches, wherever it is connected
        await wait_for(lambda: len(bot1.stats.results) == 2 and len(bot2.stats.results) == 2)
        assert sorted(x.match_id for x in bot1.stats.results) == [900, 901]
        assert sorted(x.match_id for x in bot2.stats.results) == [900, 901]
        assert [x.match_id for x in bot3.stats.results] == [901]
        assert all(x.status == "finished" for bot in (bot1, bot2, bot3) for x in bot.stats.results)
        host_core, other = (a.core, b.core) if host == "a" else (b.core, a.core)
        assert other.cluster.requests_served >= 1 and host_core.cluster.requests_sent >= 1
        # relays give their capacity back once their match ended
        await wait_for(lambda: not other.cluster.links and not any(
            s.relay_from for s in host_core.registry.sessions()))
        assert all(s.free == s.capacity for s in other.registry.sessions())


class _Paced(RandomBot):
    """Answers after 20 ms."""

    # the type: ignore below: the async form of Bot.choose, which the SDK runs as a task
    async def choose(self, request):  # type: ignore[override]
        await asyncio.sleep(0.02)
        return 0


async def test_a_relay_that_carried_a_match_is_never_seated_in_the_next_one(redis_base_url, namespace, caplog):
    """A loan carries one match: its lender closes it (cleanly) once that match ended. A match
    waiting for the same bot when the first one ends must wait for a new loan, not take the old
    relay and lose its seat a moment later (seen in the compose fault tournament as a bot charged
    ``disconnect`` for the infrastructure: "no session at the deadline")."""
    import logging

    caplog.set_level(logging.INFO, logger="referee")
    bot1 = RandomBot(seed=1)
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace, reconnect_grace_ms=3000)
        a.start_bot(bot1, "tok-a")  # one match at a time: one loan at a time
        b.start_bot(_Paced(seed=2), "tok-b")  # the first match lasts while the second waits
        b.start_bot(RandomBot(seed=3), "tok-c")
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        await b.wait_sessions(3)
        # both matches need bot 1 (on A) and are hosted by B; the second waits for bot 1 while the first runs
        first = asyncio.create_task(b.run_match(940, "toy(players=2,turns=8)", [1, 2], no_show_timeout_ms=8000,
                                                cap_ms=150, margin_ms=50))
        await wait_for(lambda: b.core is not None and 940 in b.core.rooms and b.core.rooms[940][0].started)
        second = asyncio.create_task(b.run_match(941, "toy(players=2,turns=8)", [1, 3], no_show_timeout_ms=8000,
                                                 cap_ms=150, margin_ms=50))
        results = await asyncio.gather(first, second)
    for r in results:
        assert r.status == "finished", r.reason
        assert [s.verdict for s in r.seats] == ["normal", "normal"], (r.match_id, replay_of(r)["fault_reasons"])
    # no seat lost its stream (no bot dropped), and bot 1 was never told it holds no seat
    lost = [r.getMessage() for r in caplog.records if "stream lost" in r.getMessage()]
    assert lost == []
    assert [e.message for e in bot1.stats.errors] == []


async def test_answers_for_relayed_matches_keep_every_rule(redis_base_url, namespace):
    """Duplicates, wrong seqs and matches not seated in are judged by the host, answered on the bot's stream."""
    from bots.misbehaving import GarbageBot

    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        garbage = GarbageBot(modes=("unknown_match", "future_seq", "duplicate", "empty"), at_decision=2)
        a.start_bot(RandomBot(seed=1), "tok-a")
        b.start_bot(garbage, "tok-b")
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        result = await a.run_match(910, "toy(players=2,turns=5)", [1, 2], no_show_timeout_ms=8000)
        await wait_for(lambda: len(garbage.stats.rejections) >= 2 and len(garbage.stats.errors) >= 2)
    assert result.status == "finished" and [s.verdict for s in result.seats] == ["normal", "normal"]
    verify(replay_of(result))
    assert sorted(r.code for r in garbage.stats.rejections) == sorted(
        [pb.REJECTION_CODE_UNKNOWN_SEQ, pb.REJECTION_CODE_DUPLICATE])
    assert sorted(e.code for e in garbage.stats.errors) == sorted([pb.ERROR_CODE_PROTOCOL, pb.ERROR_CODE_NOT_SEATED])


async def test_a_relayed_bot_that_drops_is_judged_like_a_local_one(redis_base_url, namespace):
    """The bot's own stream to the lender ends: the host's grace window, then `disconnect` (its fault)."""
    from bots.misbehaving import DropBot

    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace, reconnect_grace_ms=300)
        a.start_bot(RandomBot(seed=1), "tok-a")
        b.start_bot(DropBot(at_decision=2, reconnect_after_s=None), "tok-b")
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        result = await a.run_match(920, "toy(players=2,turns=5)", [1, 2], no_show_timeout_ms=8000, cap_ms=60_000)
    assert result.status == "finished"
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 1), ("disconnect", 2)]


async def test_a_relayed_bot_that_reconnects_within_grace_plays_on(redis_base_url, namespace):
    from bots.misbehaving import DropBot

    drop = DropBot(at_decision=2, reconnect_after_s=0.1)
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace, reconnect_grace_ms=5000)
        a.start_bot(RandomBot(seed=1), "tok-a")
        b.start_bot(drop, "tok-b", initial_backoff_s=0.01)
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        result = await a.run_match(925, "toy(players=2,turns=5)", [1, 2], no_show_timeout_ms=8000, cap_ms=10_000)
    assert result.status == "finished", result.reason
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert drop.dropped == 1 and drop.stats.welcomes == 2
    verify(replay_of(result))


async def test_the_lender_dying_is_infra_error_never_the_bots_fault(redis_base_url, namespace):
    """Referee B (where bot 2 is connected) dies mid-match hosted by A: A ends the match
    infra_error after the grace window; no bot gets a fault verdict."""
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(Harness(TOKENS, cluster=cfg(redis_base_url, namespace),
                                                    referee_id="ref-a", control=True, reconnect_grace_ms=400))
        b = Harness(TOKENS, cluster=cfg(redis_base_url, namespace), referee_id="ref-b", control=True)
        await b.__aenter__()
        silent = SilentBot()
        a.start_bot(RandomBot(seed=1), "tok-a")
        b.start_bot(silent, "tok-b", reconnect=False)
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        call = asyncio.create_task(a.run_match(930, "toy(players=2,turns=5)", [1, 2], no_show_timeout_ms=8000,
                                               cap_ms=60_000))
        await wait_for(lambda: silent.stats.matches)
        # B "dies": its relay streams end abruptly (no clean half-close) and its server goes away
        await b.core.cluster.stop()  # its relays end abruptly (no goodbye) and it serves no more requests
        await b.server.stop(0)
        result = await asyncio.wait_for(call, 10)
        for bot, task in b.bots:
            bot.stop()
            task.cancel()
        await asyncio.gather(*(t for _, t in b.bots), return_exceptions=True)
        await b.core.stop(0.1)
    assert result.status == "infra_error", (result.reason, replay_of(result)["fault_reasons"],
                                            [s.verdict for s in result.seats])
    assert "relaying" in result.reason
    assert [(s.verdict, s.rank) for s in result.seats] == [("normal", 0), ("normal", 0)]
    verify(replay_of(result))


async def test_the_host_dying_ends_the_match_for_a_relayed_bot(redis_base_url, namespace):
    """Referee A (the host) dies: the bot on B gets MatchEnded(infra_error) from B; the
    worker's call fails (an infra error on its side)."""
    async with AsyncExitStack() as stack:
        b = await stack.enter_async_context(Harness(TOKENS, cluster=cfg(redis_base_url, namespace),
                                                    referee_id="ref-b", control=True))
        a = Harness(TOKENS, cluster=cfg(redis_base_url, namespace), referee_id="ref-a", control=True)
        await a.__aenter__()
        silent = SilentBot()
        a.start_bot(RandomBot(seed=1), "tok-a")
        b.start_bot(silent, "tok-b")
        await a.wait_sessions(1)
        await b.wait_sessions(2)
        call = asyncio.create_task(a.run_match_events(940, "toy(players=2,turns=5)", [1, 2],
                                                      no_show_timeout_ms=8000, cap_ms=60_000))
        await wait_for(lambda: silent.stats.matches)
        await a.server.stop(0)
        if a.core.control_server is not None:
            await a.core.control_server.stop(0)
        await wait_for(lambda: silent.stats.results)
        assert [(r.match_id, r.status) for r in silent.stats.results] == [(940, "infra_error")]
        assert not b.core.cluster.links
        assert all(s.free == s.capacity for s in b.core.registry.sessions())
        with pytest.raises(grpc.aio.AioRpcError) as err:  # a hang would be a TimeoutError, not this
            await asyncio.wait_for(call, 10)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE  # the host's server went away mid-call
        for bot, task in a.bots:
            bot.stop()
            task.cancel()
        await asyncio.gather(*(t for _, t in a.bots), return_exceptions=True)
        await a.core.stop(0.1)


@pytest.mark.parametrize("pinned", [True, False])
async def test_a_stream_pinned_to_a_match_is_lent_only_for_that_match(redis_base_url, namespace, pinned):
    """Two one-match streams of bot 1 on referee A, pinned to matches 951 and 952 (``Hello.only_match_id``,
    as hosted seats are); referee B hosts 952 first. A lends the stream pinned to 952 (the relay carries
    the pin), never the one pinned to 951, which then plays 951. Control: unpinned, A lends its first
    stream, the one meant for 951."""
    p951, p952 = RandomBot(seed=1), RandomBot(seed=2)
    for bot in (p951, p952):
        bot.received = []
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        a.start_bot(p951, "tok-a", stop_after_matches=1, only_match_id=951 if pinned else 0)
        await a.wait_sessions(1)
        a.start_bot(p952, "tok-a", stop_after_matches=1, only_match_id=952 if pinned else 0)
        await a.wait_sessions(1, count=2)
        b.start_bot(_Paced(seed=3, max_concurrent_matches=4), "tok-b")  # the match lasts while it is watched
        await b.wait_sessions(2)
        task = asyncio.create_task(b.run_match(952, "toy(players=2,turns=12)", [1, 2], no_show_timeout_ms=8000))
        relays = []  # the relay stream on B carries the pin of the stream it was lent from
        await wait_for(lambda: relays.extend(s.only_match_id for s in b.core.registry.sessions() if s.relay_from)
                       or bool(relays) or task.done())
        r952 = await task
        assert relays[:1] == ([952] if pinned else [0]), r952
        r951 = await b.run_match(951, "toy(players=2,turns=6)", [1, 2], no_show_timeout_ms=8000)
    for r in (r951, r952):
        assert r.status == "finished", r.reason
        assert [s.verdict for s in r.seats] == ["normal", "normal"]
    seen = [[m.match_started.match_id for m in bot.received if m.HasField("match_started")] for bot in (p951, p952)]
    assert seen == ([[951], [952]] if pinned else [[952], [951]])


async def test_malformed_match_ids_in_a_relay_request_lend_no_pinned_stream(redis_base_url, namespace):
    """A relay request's ``match_ids`` (JSON from Redis) that is not a list of positive ints is ignored: no
    stream pinned to a match is lent for it, nothing raises, and a well-formed request still works. (A
    string was read character by character: ``"51"`` lent the stream pinned to match 5.)"""
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        lender = a.core.cluster
        a.start_bot(RandomBot(seed=1), "tok-a", stop_after_matches=1, only_match_id=5)
        await a.wait_sessions(1)
        base = {"bot_id": 1, "host": "ref-b", "address": b.control_address, "count": 1}
        for bad in (5, None, "51", [[5]], ["5"], [5.0], [True], [-5], {"5": 5}, [float("inf")], [float("nan")]):
            assert lender.serve_request({**base, "match_ids": bad}) == 0, bad
        assert lender.serve_request({**base, "match_ids": list(range(6, 2000)) + [5]}) == 0  # past the cap
        assert lender.serve_request({**base, "match_ids": [7, 5]}) == 1
        assert [link.session.only_match_id for link in lender.links] == [5]


async def test_only_referees_that_can_lend_for_the_match_are_asked(redis_base_url, namespace):
    """Presence says, per bot, the free capacity any match may use (``open``) and the matches that streams
    pinned to one can take (``pinned``); a host asks a referee with a stream pinned to the match if any,
    else one with open capacity, and never one whose streams are all pinned to other matches (it was
    picked at random among every referee with free capacity: a relayed seat could wait past its grace)."""
    async with AsyncExitStack() as stack:
        a, b = await two_referees(stack, redis_base_url, namespace)
        a.start_bot(RandomBot(seed=1), "tok-a", only_match_id=5)
        a.start_bot(RandomBot(seed=2, max_concurrent_matches=2), "tok-b")
        await a.wait_sessions(1)
        await a.wait_sessions(2)
        bots = a.core.cluster.snapshot()["bots"]
        assert (bots["1"]["free"], bots["1"]["open"], bots["1"]["pinned"]) == (1, 0, [5])
        assert (bots["2"]["free"], bots["2"]["open"], bots["2"]["pinned"]) == (2, 2, [])
        host = b.core.cluster
        host.directory = {
            "decoy": {"bots": {"1": {"free": 1, "open": 0, "pinned": [9]}}},
            "pinned": {"bots": {"1": {"free": 1, "open": 0, "pinned": [5]}}},
            "open": {"bots": {"1": {"free": 2, "open": 2, "pinned": []}}},
            "older": {"bots": {"1": {"free": 1}}},  # a referee from before "open": its "free"
            "garbled": {"bots": {"1": {"free": "x", "open": None, "pinned": "5"}}},
            "not-a-record": {"bots": {"1": 7}},
            "ref-b": {"bots": {"1": {"free": 1, "open": 1, "pinned": [5]}}},  # itself
        }
        host.directory["not-a-dict"] = 7
        host.directory["bots-not-a-dict"] = {"bots": [1]}
        assert relay_wants.lenders(host.directory, host.id, 1, [5]) == ["pinned"]
        assert sorted(relay_wants.lenders(host.directory, host.id, 1, [6])) == ["older", "open"]
        assert relay_wants.lenders(host.directory, host.id, 2, [5]) == []
