"""docs/faults.md F-21: a referee SIGKILLed while a bot is still thinking is never
charged to the bot, through the stdio adapter and through the Python SDK.

Processes: a real referee process (``referee.server.serve`` in a subprocess, its
tokens in a static store), SIGKILLed while the bot thinks about a request of
attempt 1, then started again on the same port; the test plays the worker's part
(``MatchControl.RunMatch``): attempt 1 ends with the referee gone (the worker
records ``infra_error``, unrated), attempt 2 of the same match id is run on the new
referee. The bots are real: ``parterre connect``'s :class:`bots.stdio.StdioBot`
with a child process, or an SDK bot with an async ``choose``.

Oracle: the child's rule is ``seq % num_actions`` for the request it answers, so
every decision of attempt 2 is checked against that rule applied to the legal
actions the engine itself lists at that point of the replay (``games.replay``):
an answer given for another request (the late answer to attempt 1's request,
off by one as in the issue) is either illegal or the wrong action.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from fixtures.waiting import async_wait_until

from bots.reference import RandomBot
from bots.sdk import Bot, DecisionRequest, MatchInfo, MatchResult
from bots.stdio import StdioBot
from games.registry import load_game
from parterre.demo import free_port, wait_for_referee
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import control_pb2_grpc as control_grpc
from proto.parterre.v1 import referee_pb2 as pb
from referee.headers import SERVICE_TOKEN_HEADER
from referee.testing import SERVICE_TOKEN

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {"tok-a": 1, "tok-b": 2}
MATCH_ID = 4242
GAME = "floriferous(players=2)"

REFEREE = textwrap.dedent("""
    import asyncio, logging, sys
    from referee.server import serve
    from referee.tokens import StaticTokenStore
    logging.basicConfig(level=logging.INFO)
    asyncio.run(serve(sys.argv[1], service_token=sys.argv[2], cluster=False, grace_s=0.5,
                      token_store=StaticTokenStore({"tok-a": 1, "tok-b": 2})))
""")

# The stdio child: answers seq % num_actions; the first time it meets a request with
# seq >= 3 (the marker file does not exist yet) it writes the marker and thinks for 4 s.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    marker = sys.argv[1]
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] != "decision_request":
            continue
        if msg["seq"] >= 3 and not os.path.exists(marker):
            open(marker, "w").write(f"{msg.get('attempt')} {msg['seq']}")
            time.sleep(4.0)
        print(msg["seq"] % msg["num_actions"], flush=True)
""")


class Referee:
    """One referee process on a fixed port (started again on the same port after a kill)."""

    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log_dir = log_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.log_dir / f"referee-{self.starts}.log", "wb")  # noqa: SIM115 - closed with the process
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen([sys.executable, "-c", REFEREE, self.address, SERVICE_TOKEN], cwd=ROOT,
                                     env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        wait_for_referee(self.address, timeout_s=60)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    ref = Referee(tmp_path)
    ref.start()
    yield ref
    ref.stop()


def run_request(attempt: int, seed: str) -> control_pb.RunMatchRequest:
    return control_pb.RunMatchRequest(
        match_id=MATCH_ID, attempt=attempt, game_string=GAME, seed=seed, seat_bot_ids=[1, 2],
        time_control=pb.TimeControl(base_ms=0, increment_ms=0, cap_ms=10_000, margin_ms=200),
        no_show_timeout_ms=30_000, max_duration_ms=120_000,
    )


async def run_match(address: str, attempt: int, seed: str) -> control_pb.MatchResult:
    """What a worker does: RunMatch; a referee that dies mid-match raises AioRpcError (the
    worker records that attempt as ``infra_error``)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = control_grpc.MatchControlStub(channel)
        results = [ev.result async for ev in stub.RunMatch(run_request(attempt, seed),
                                                           metadata=[(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)])
                   if ev.HasField("result")]
    assert len(results) == 1
    return results[0]


def decisions_follow_the_rule(result: control_pb.MatchResult, seat: int) -> list[tuple[int, int, int]]:
    """(seq, expected index, applied index) of every decision of ``seat`` that broke the
    child's rule ``seq % num_actions``, judged by the engine replaying the match."""
    import json

    replay = json.loads(result.replay_json)
    game = load_game(replay["game_string"])
    state = game.new_initial_state()
    wrong = []
    seq = 0
    for step in replay["steps"]:
        action = game.action_from_json(step["action"])
        if step["player"] >= 0 and not step["fallback"]:
            seq += 1  # every request was answered and applied (all verdicts normal): seq = decision number
            if step["player"] == seat:
                legal = state.legal_actions()
                expected = seq % len(legal)
                applied = legal.index(action)
                if applied != expected:
                    wrong.append((seq, expected, applied))
        state.apply_action(action)
    return wrong


async def kill_while_thinking(referee: Referee, thinking: Any, timeout_s: float = 60.0) -> None:
    """Run attempt 1 until ``thinking()`` says the bot is on its slow request, SIGKILL the
    referee, check the attempt failed as the infrastructure's fault, start the referee again."""
    attempt1 = asyncio.create_task(run_match(referee.address, 1, "seed-1"))
    async with asyncio.timeout(timeout_s):
        while not thinking():
            assert not attempt1.done(), attempt1
            await asyncio.sleep(0.02)
    referee.kill()
    with pytest.raises(grpc.aio.AioRpcError) as lost:
        await attempt1
    assert lost.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN,
                                 grpc.StatusCode.INTERNAL)
    await asyncio.to_thread(referee.start)


async def test_f21_stdio_bot_thinking_when_the_referee_dies_is_not_charged(referee: Referee, tmp_path: Path):
    marker = tmp_path / "thinking"
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    stdio = StdioBot([sys.executable, str(child), str(marker)], log_dir=tmp_path / "logs", name="stdio-child")
    opponent = RandomBot(seed=1)
    tasks = [asyncio.create_task(opponent.arun(referee.address, "tok-a", max_backoff_s=0.5)),
             asyncio.create_task(stdio.arun(referee.address, "tok-b", max_backoff_s=0.5))]
    try:
        await kill_while_thinking(referee, marker.exists)
        result = await asyncio.wait_for(run_match(referee.address, 2, "seed-2"), 90)
    finally:
        for bot in (opponent, stdio):
            bot.stop()
        await asyncio.wait(tasks, timeout=10)
    assert result.status == "finished", result.reason
    assert [s.verdict for s in result.seats] == ["normal", "normal"], result.reason
    assert decisions_follow_the_rule(result, seat=1) == []
    assert [s.decisions for s in result.seats][1] > 3
    assert marker.read_text().split()[0] == "1"  # it was thinking about a request of attempt 1
    # the child of attempt 1 was told, and the late answer was dropped, not forwarded
    logs = "".join(p.read_text(errors="replace") for p in stdio.log_paths if p.exists())
    assert "ended: gone" in logs
    assert "dropped the answer" in logs or "still thinking when the match ended" in logs


class Thinker(Bot):
    """An SDK bot with an async choose, the same rule as the stdio child, thinking 4 s once.

    Keeps per-match state the way bots do (the requests seen, by match id), reset when
    the SDK says the match ended; records what the SDK told it, in order.
    """

    name = "thinker"

    def __init__(self) -> None:
        super().__init__()
        self.thinking = False
        self.thought = False
        self.events: list[tuple[str, int, int]] = []
        self.seen: dict[int, list[int]] = {}

    def on_match_started(self, match: MatchInfo) -> None:
        self.events.append(("started", match.match_id, getattr(match, "attempt", 0)))
        self.seen.setdefault(match.match_id, [])

    def on_match_ended(self, result: MatchResult) -> None:
        self.events.append((result.status, result.match_id, getattr(result, "attempt", 0)))
        self.seen.pop(result.match_id, None)

    async def choose(self, request: DecisionRequest) -> int:
        seen = self.seen.setdefault(request.match_id, [])
        assert not seen or seen[-1] < request.seq, f"seq {request.seq} after {seen[-1]}: state of another attempt"
        seen.append(request.seq)
        if request.seq >= 3 and not self.thought:
            self.thought = self.thinking = True
            await asyncio.sleep(4.0)
        return request.seq % request.num_actions


async def test_f21_sdk_bot_thinking_when_the_referee_dies_is_not_charged(referee: Referee):
    thinker, opponent = Thinker(), RandomBot(seed=1)
    tasks = [asyncio.create_task(opponent.arun(referee.address, "tok-a", max_backoff_s=0.5)),
             asyncio.create_task(thinker.arun(referee.address, "tok-b", max_backoff_s=0.5))]
    try:
        await kill_while_thinking(referee, lambda: thinker.thinking)
        result = await asyncio.wait_for(run_match(referee.address, 2, "seed-2"), 90)
        # the MatchEnded reaches the bot
        await async_wait_until(lambda: ("finished", MATCH_ID, 2) in thinker.events, 10, what="MatchEnded at the bot")
    finally:
        for bot in (opponent, thinker):
            bot.stop()
        await asyncio.wait(tasks, timeout=10)
    assert result.status == "finished", result.reason
    assert [s.verdict for s in result.seats] == ["normal", "normal"], result.reason
    assert decisions_follow_the_rule(result, seat=1) == []
    import json

    assert json.loads(result.replay_json)["rejections"] == [[], []]  # nothing of attempt 1 reached attempt 2
    # the bot was told attempt 1 was gone before attempt 2 started, then attempt 2 ended normally
    assert thinker.events == [("started", MATCH_ID, 1), ("gone", MATCH_ID, 1), ("started", MATCH_ID, 2),
                              ("finished", MATCH_ID, 2)]
    assert [g.attempt for g in thinker.stats.gone] == [1]
