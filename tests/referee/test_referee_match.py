"""The referee plays whole matches: results, replays, hidden information, health
(docs/architecture.md, "The clock", "Verdicts", "Replay JSON"; docs/faults.md F-20)."""

from __future__ import annotations

import asyncio
import hashlib
import json

import grpc
import pytest
from fixtures.toy_game import register_toy
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bots.misbehaving import SilentBot
from bots.reference import RandomBot
from bots.sdk import Bot
from games.api import CHANCE
from games.registry import load_game
from referee.replay import ReplayError, verify
from referee.testing import Harness, replay_of

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3, "tok-d": 4}


async def test_two_player_match_finishes_with_a_verifiable_replay():
    async with Harness(TOKENS) as h:
        a, b = RandomBot(seed=1, name="alpha", version="3"), RandomBot(seed=2, name="beta")
        h.start_bot(a, "tok-a")
        h.start_bot(b, "tok-b")
        events = await h.run_match_events(11, "toy(players=2,turns=13)", [1, 2], seed="s-11", attempt=2)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "result" and kinds.count("result") == 1
    assert "progress" in kinds
    started = events[0].started
    assert started.seed_commitment == hashlib.sha256(b"s-11").hexdigest()
    assert [(p.seat, p.bot_id, p.name, p.version) for p in started.players] == [
        (0, 1, "alpha", "3"), (1, 2, "beta", "1")]
    result = events[-1].result
    assert (result.status, result.match_id, result.attempt) == ("finished", 11, 2)
    assert [s.verdict for s in result.seats] == ["normal", "normal"]
    assert [s.decisions for s in result.seats] == [13, 13]
    replay = replay_of(result)
    verify(replay)  # every recorded hash re-verifies through the engine
    assert replay["format"] == "parterre-replay/1"
    assert replay["seed"] == "s-11" and replay["seed_commitment"] == started.seed_commitment
    assert replay["outcome"]["ranks"] == replay["result_ranks"] == [s.rank for s in result.seats]
    assert [s.score for s in result.seats] == replay["outcome"]["scores"]
    steps = replay["steps"]
    assert [s["i"] for s in steps] == list(range(len(steps)))
    assert all((s["time_ms"] is None) == (s["player"] == CHANCE) for s in steps)
    assert all(s["time_ms"] >= 0 for s in steps if s["player"] != CHANCE)
    hashed = [s["i"] for s in steps if "hash" in s]
    assert hashed == [i for i in range(len(steps)) if i % 10 == 9 or i == len(steps) - 1]
    assert steps[-1]["hash"] == replay["final_hash"]
    # both bots learnt the end, with the seed revealed only then
    for bot, seat in ((a, 0), (b, 1)):
        (ended,) = bot.stats.results
        assert (ended.match_id, ended.seat, ended.status, ended.seed) == (11, seat, "finished", "s-11")
        assert ended.rank == result.seats[seat].rank


async def test_tampered_replay_does_not_verify():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        replay = replay_of(await h.run_match(12, "toy(players=2,turns=6)", [1, 2]))
    bad = json.loads(json.dumps(replay))
    bad["steps"][9]["hash"] = "0" * 64
    with pytest.raises(ReplayError, match="step 9"):
        verify(bad)
    bad = json.loads(json.dumps(replay))
    bad["seed"] = "another seed"
    with pytest.raises(ReplayError, match="seed"):
        verify(bad)


@pytest.mark.parametrize("players", [3, 4])
async def test_f20_bots_only_ever_see_their_own_seat(players):
    seed = "SEED-7f3a9c1e5b"
    bots = [RandomBot(seed=i) for i in range(players)]
    for bot in bots:
        bot.received = []
    async with Harness(TOKENS) as h:
        for bot, token in zip(bots, TOKENS, strict=False):
            h.start_bot(bot, token)
        result = await h.run_match(20 + players, f"toy(players={players},turns=6)", list(range(1, players + 1)),
                                   seed=seed)
    replay = replay_of(result)
    verify(replay)
    commitment = hashlib.sha256(seed.encode()).hexdigest()
    # every message before MatchEnded: no seed, only the commitment
    for seat, bot in enumerate(bots):
        assert bot.received is not None
        kinds = [m.WhichOneof("kind") for m in bot.received]
        assert kinds[0] == "welcome" and kinds[1] == "match_started" and kinds[-1] == "match_ended"
        assert bot.received[1].match_started.seat == seat
        assert bot.received[1].match_started.seed_commitment == commitment
        # every seat's MatchStarted is the same message but for its seat (the referee builds it once)
        same = type(bot.received[1].match_started)()
        same.CopyFrom(bot.received[1].match_started)
        same.seat = 0
        assert same == bots[0].received[1].match_started
        assert [(p.seat, p.bot_id) for p in same.players] == [(i, i + 1) for i in range(players)]
        for m in bot.received[:-1]:
            assert seed.encode() not in m.SerializeToString()
        assert bot.received[-1].match_ended.seed == seed
    # re-simulate: each request carries exactly state.observation(seat) and the legal actions
    requests = {
        m.decision_request.seq: (seat, m.decision_request)
        for seat, bot in enumerate(bots) for m in bot.received or [] if m.HasField("decision_request")
    }
    game = load_game(replay["game_string"])
    state = game.new_initial_state()
    seq = 0
    for step in replay["steps"]:
        player = step["player"]
        if player != CHANCE:
            seq += 1
            seat, req = requests.pop(seq)
            assert seat == player == req.seat
            assert json.loads(req.observation.json) == state.observation(seat)
            assert [a.json for a in req.legal_actions] == [a.canonical() for a in state.legal_actions()]
            # no other seat's hidden cards and no deck content anywhere in the message
            full = state.full_state()
            secret = {c for s, hand in enumerate(full["hands"]) if s != seat for c in hand} | set(full["deck"])
            text = req.SerializeToString()
            assert not [c for c in secret if c.encode() in text]
        state.apply_action(game.action_from_json(step["action"]))
    assert not requests, "requests that do not match a replay step"


async def test_one_stream_plays_several_matches_at_once():
    a = RandomBot(seed=1, max_concurrent_matches=3)
    b = RandomBot(seed=2, max_concurrent_matches=3)
    async with Harness(TOKENS) as h:
        h.start_bot(a, "tok-a")
        h.start_bot(b, "tok-b")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        results = await asyncio.gather(*(h.run_match(30 + i, "toy(players=2,turns=8)", [1, 2]) for i in range(3)))
        assert h.core is not None and len(h.core.registry) == 2  # one session per bot
    assert [r.status for r in results] == ["finished"] * 3
    assert sorted(r.match_id for r in results) == [30, 31, 32]
    assert len(a.stats.results) == len(b.stats.results) == 3
    assert a.stats.welcomes == 1


async def test_a_match_waits_for_capacity_of_a_busy_bot():
    a = RandomBot(seed=1, max_concurrent_matches=1)

    class Slowish(RandomBot):
        async def choose(self, request):
            await asyncio.sleep(0.005)
            return 0

    b = Slowish(seed=2, max_concurrent_matches=2)
    c = RandomBot(seed=3)
    async with Harness(TOKENS) as h:
        for bot, tok in ((a, "tok-a"), (b, "tok-b"), (c, "tok-c")):
            h.start_bot(bot, tok)
        r1, r2 = await asyncio.gather(h.run_match(40, "toy(players=2,turns=6)", [1, 2]),
                                      h.run_match(41, "toy(players=2,turns=6)", [1, 3]))
    assert r1.status == r2.status == "finished"


async def test_health_service_reports_serving_and_not_serving_on_stop():
    async with Harness(TOKENS) as h, grpc.aio.insecure_channel(h.address) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        for service in ("", "parterre.v1.Referee", "parterre.v1.MatchControl"):
            resp = await stub.Check(health_pb2.HealthCheckRequest(service=service))
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        assert h.core is not None
        assert h.core.health is not None
        await h.core.health.enter_graceful_shutdown()
        resp = await stub.Check(health_pb2.HealthCheckRequest(service=""))
        assert resp.status == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_run_match_needs_the_service_token_and_a_valid_request():
    async with Harness(TOKENS) as h:
        for md in ([], [("x-parterre-service-token", "wrong")]):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await h.run_match_events(50, "toy(players=2)", [1, 2], metadata=md)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert h.core is not None and h.core.counters.auth_failures == 2
        bad = [
            ({"game_string": "nosuchgame"}, "game_string"),
            ({"game_string": "toy(players=9)"}, "players"),
            ({"bot_ids": [1, 2, 3]}, "seat_bot_ids"),
            ({"cap_ms": 0}, "time control"),
            ({"base_ms": 2**63 - 1}, "24.8 days"),  # would overflow the clock's int64 fields on the wire
            ({"margin_ms": 2**31}, "24.8 days"),
        ]
        for change, words in bad:
            args = {"game_string": "toy(players=2)", "bot_ids": [1, 2], **change}
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await h.run_match_events(51, args.pop("game_string"), args.pop("bot_ids"), **args)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert words in err.value.details()


async def test_an_empty_seed_is_drawn_by_the_referee_and_revealed():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        replay = replay_of(await h.run_match(60, "toy(players=2,turns=2)", [1, 2], seed=""))
    assert len(replay["seed"]) == 32
    assert hashlib.sha256(replay["seed"].encode()).hexdigest() == replay["seed_commitment"]


class _Recorder(Bot):
    def choose(self, request):
        return request.num_actions - 1


async def test_same_seed_same_chance_outcomes():
    async with Harness(TOKENS) as h:
        h.start_bot(_Recorder(max_concurrent_matches=2), "tok-a")
        h.start_bot(_Recorder(max_concurrent_matches=2), "tok-b")
        r1, r2 = await asyncio.gather(h.run_match(70, "toy(players=2,turns=5)", [1, 2], seed="x"),
                                      h.run_match(71, "toy(players=2,turns=5)", [1, 2], seed="x"))
    s1 = [(s["player"], s["action"]) for s in replay_of(r1)["steps"]]
    s2 = [(s["player"], s["action"]) for s in replay_of(r2)["steps"]]
    assert s1 == s2


async def test_self_play_needs_one_stream_per_seat():
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-a")
        await h.wait_sessions(1, 2)
        result = await h.run_match(80, "toy(players=2,turns=3)", [1, 1])
    assert result.status == "finished" and [s.bot_id for s in result.seats] == [1, 1]


async def test_graceful_stop_ends_running_matches_as_infra_error():
    silent = SilentBot()
    h = Harness(TOKENS)
    await h.__aenter__()
    try:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(silent, "tok-b")
        call = asyncio.create_task(h.run_match_events(81, "toy(players=2)", [1, 2], cap_ms=60_000))
        assert h.core is not None
        async with asyncio.timeout(5):
            while not (81 in h.core.rooms and h.core.rooms[81][0].started):
                await asyncio.sleep(0.01)
        await asyncio.wait_for(h.core.stop(grace_s=0.2), 5)
        events = await asyncio.wait_for(call, 5)
        result = events[-1].result
        assert result.status == "infra_error"  # never charged to a bot
        assert [s.verdict for s in result.seats] == ["normal", "normal"]
        assert [r.status for r in silent.stats.results] == ["infra_error"]
    finally:
        for bot, task in h.bots:
            bot.stop()
            task.cancel()
        await asyncio.gather(*(t for _, t in h.bots), return_exceptions=True)
        if h._channel is not None:
            await h._channel.close()
