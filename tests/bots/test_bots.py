"""The Python bot SDK, the reference bots and ``bots.cli`` (docs/bots.md)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from fixtures.toy_game import register_toy

from bots import cli, reference
from bots.misbehaving import DropBot, GarbageBot, IllegalBot, SilentBot, SlowBot
from bots.reference import GreedyBot, RandomBot
from bots.sdk import Bot, DecisionRequest, MatchInfo, decode_action, decode_observation
from proto.parterre.v1 import referee_pb2 as pb
from referee.testing import Harness, replay_of

register_toy()

TOKENS = {"tok-a": 1, "tok-b": 2, "tok-c": 3}


def _request(n_actions: int, obs: str = '{"hand":["K01"]}') -> DecisionRequest:
    raw = pb.DecisionRequest(
        match_id=5, seq=9, seat=1, game="toy", time_left_ms=900, deadline_ms=800,
        observation=pb.Observation(json=obs),
        legal_actions=[pb.LegalAction(index=i, label=f"play K{i:02d}", json=f'{{"card":"K{i:02d}","kind":"play"}}')
                       for i in range(n_actions)],
    )
    return DecisionRequest(raw, None, 0.0)


def test_decision_request_view():
    req = _request(3)
    assert (req.match_id, req.seq, req.seat, req.game, req.time_left_ms, req.deadline_ms) == (5, 9, 1, "toy", 900, 800)
    assert req.observation == {"hand": ["K01"]}
    assert req.legal_actions[2] == {"card": "K02", "kind": "play"}
    assert req.labels == ["play K00", "play K01", "play K02"] and req.num_actions == 3
    assert req.typed_observation is None
    # without JSON text the typed message is used (empty here)
    assert decode_observation(pb.Observation()) == {}
    assert decode_action(pb.LegalAction(label="x")) == {}


def test_random_bot_is_uniform_and_seeded():
    picks = [RandomBot(seed=42).choose(_request(5)) for _ in range(3)]
    assert len(set(picks)) == 1
    bot = RandomBot(seed=1)
    counts = [0] * 4
    for _ in range(4000):
        counts[bot.choose(_request(4))] += 1
    assert all(900 < c < 1100 for c in counts)


def test_greedy_bot_uses_the_strategy_table_and_falls_back_to_random(monkeypatch):
    calls = []

    def strategy(observation, legal_actions, seat):
        calls.append((observation, len(legal_actions), seat))
        return len(legal_actions) - 1

    monkeypatch.setattr(reference, "strategy_for", lambda kind, game: strategy if game == "toy" else None)
    bot = GreedyBot(seed=3)
    assert bot.choose(_request(4)) == 3
    assert calls == [({"hand": ["K01"]}, 4, 1)]
    other = _request(4)
    other.raw.game = "other"
    assert 0 <= bot.choose(other) < 4  # no strategy: random


def test_greedy_bot_survives_a_bad_strategy(monkeypatch):
    monkeypatch.setattr(reference, "strategy_for", lambda kind, game: lambda obs, legal, seat: 99)
    assert 0 <= GreedyBot(seed=1).choose(_request(3)) < 3


def test_make_bot_checks_kind_and_options():
    assert isinstance(cli.make_bot("random", seed=1, name="r"), RandomBot)
    assert isinstance(cli.make_bot("slow", delay_ms=5, at_decision=None), SlowBot)
    assert isinstance(cli.make_bot("illegal", mode="negative"), IllegalBot)
    for kind, cls in (("drop", DropBot), ("garbage", GarbageBot), ("silent", SilentBot), ("greedy", GreedyBot)):
        assert isinstance(cli.make_bot(kind), cls)
    with pytest.raises(ValueError, match="unknown bot kind"):
        cli.make_bot("nope")
    with pytest.raises(ValueError, match="does not take"):
        cli.make_bot("random", delay_ms=3)
    with pytest.raises(ValueError, match="mode"):
        cli.make_bot("illegal", mode="weird")
    assert cli.make_bot("random", name="n", version="7", max_concurrent_matches=4).max_concurrent_matches == 4
    # what `parterre bot run` passes: None values are dropped
    assert isinstance(cli.make_bot("silent", name=None, seed=None, max_concurrent_matches=2), SilentBot)


def test_run_bot_accepts_the_command_line_max_matches(monkeypatch):
    ran = {}
    async def arun(self, address, token, **kw):
        ran.update(address=address, kw=kw)

    monkeypatch.setattr(Bot, "arun", arun)
    bot = cli.run_bot("greedy", "h:1", "t", name=None, max_matches=3, seed=None, stop_after_matches=2)
    assert bot.max_concurrent_matches == 3
    assert ran == {"address": "h:1", "kw": {"stop_after_matches": 2}}


async def test_run_bot_plays_matches_from_a_thread():
    async with Harness(TOKENS) as h:
        bots: list[Bot] = []

        def target():
            bots.append(cli.run_bot("random", h.address, "tok-a", seed=1, name="cli-bot", stop_after_matches=2))

        thread = threading.Thread(target=target)
        thread.start()
        h.start_bot(RandomBot(seed=2), "tok-b")
        await h.wait_sessions(1)
        r1 = await h.run_match(300, "toy(players=2,turns=3)", [1, 2])
        r2 = await h.run_match(301, "toy(players=2,turns=3)", [2, 1])
        await asyncio.to_thread(thread.join, 5)
        assert not thread.is_alive()
    assert r1.status == r2.status == "finished"
    assert replay_of(r1)["players"][0]["name"] == "cli-bot"
    (bot,) = bots
    assert [r.match_id for r in bot.stats.results] == [300, 301]


async def test_bot_reconnects_after_the_referee_drops_it():
    async with Harness(TOKENS) as h:
        bot = RandomBot(seed=1)
        h.start_bot(bot, "tok-a", initial_backoff_s=0.01)
        await h.wait_sessions(1)
        assert h.core is not None
        (session,) = h.core.registry.by_bot[1]
        import grpc

        session.kill(grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_SHUTTING_DOWN, "test")
        async with asyncio.timeout(5):
            while bot.stats.welcomes < 2 or len(h.core.registry.by_bot.get(1, ())) != 1:
                await asyncio.sleep(0.01)
        assert any(e.code == pb.ERROR_CODE_SHUTTING_DOWN for e in bot.stats.errors)
        h.start_bot(RandomBot(seed=2), "tok-b")
        assert (await h.run_match(310, "toy(players=2,turns=2)", [1, 2])).status == "finished"


async def test_async_and_threaded_choose_play_concurrent_matches():
    class Thinker(Bot):
        async def choose(self, request):
            await asyncio.sleep(0.002)
            return 0

    class Threaded(Bot):
        threaded = True

        def choose(self, request):
            return request.num_actions - 1

    async with Harness(TOKENS) as h:
        h.start_bot(Thinker(max_concurrent_matches=4), "tok-a")
        h.start_bot(Threaded(max_concurrent_matches=4), "tok-b")
        results = await asyncio.gather(*(h.run_match(320 + i, "toy(players=2,turns=4)", [1, 2]) for i in range(4)))
    assert [r.status for r in results] == ["finished"] * 4


async def test_match_info_and_hooks():
    seen: list[object] = []

    class Hooked(RandomBot):
        def on_match_started(self, match: MatchInfo) -> None:
            seen.append(match)

        def on_match_ended(self, result) -> None:
            seen.append(result)

    async with Harness(TOKENS) as h:
        h.start_bot(Hooked(seed=1, name="hooked", version="9"), "tok-a")
        h.start_bot(RandomBot(seed=2), "tok-b")
        await h.run_match(330, "toy(players=2,turns=2)", [1, 2], cap_ms=700, margin_ms=40, seed="zz")
    info, ended = seen
    assert isinstance(info, MatchInfo)
    assert (info.match_id, info.game, info.seat, info.num_players) == (330, "toy", 0, 2)
    assert info.game_string == "toy(hand=3,players=2,turns=2)"
    assert info.options == {"hand": "3", "players": "2", "turns": "2"}
    assert info.time_control == {"base_ms": 0, "increment_ms": 0, "cap_ms": 700, "margin_ms": 40}
    assert info.players[0] == {"seat": 0, "bot_id": 1, "name": "hooked", "version": "9"}
    assert ended.seed == "zz" and ended.verdict == "normal" and ended.rank in (1, 2)


async def _sdk_run_process(address: str, token: str) -> asyncio.subprocess.Process:
    """A program whose main is ``RandomBot().run(address, token)``, as in docs/bots.md §4."""
    import sys

    script = "import sys\nfrom bots.reference import RandomBot\nRandomBot(seed=1).run(sys.argv[1], sys.argv[2])\n"
    return await asyncio.create_subprocess_exec(sys.executable, "-W", "ignore", "-c", script, address, token,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_sdk_run_refused_token_is_one_line_and_exit_2():
    """``Bot.run`` with a bad token was an uncaught AuthenticationError traceback (exit 1)."""
    async with Harness(TOKENS) as h:
        proc = await _sdk_run_process(h.address, "bad-token")
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 2, err.decode()
    assert len(lines) == 1 and "refused the token" in lines[0] and "Traceback" not in lines[0], lines
    assert out == b""


async def test_sdk_run_says_connected_as_with_a_good_token():
    async with Harness(TOKENS) as h:
        proc = await _sdk_run_process(h.address, "tok-a")
        try:
            assert proc.stderr is not None
            line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
            assert line.startswith(f"connected as random (bot id 1) to {h.address}"), line
        finally:
            proc.terminate()
            await proc.wait()


async def test_sdk_arun_still_raises_on_a_refused_token():
    from bots.sdk import AuthenticationError

    async with Harness(TOKENS) as h:
        with pytest.raises(AuthenticationError):
            await asyncio.wait_for(RandomBot().arun(h.address, "bad-token", reconnect=False), 10)
