"""The stdio adapter (bots/stdio.py, ``parterre connect``; docs/bots.md).

Given an in-process referee and child programs that speak the line protocol,
when they play, then good children finish ``normal``, and each fault of a
child becomes the documented verdict without the adapter answering for it:
exit -> ``resigned``, garbage or an out-of-range index -> ``illegal_action``,
silence -> ``timeout``; the adapter carries on with the next match, keeps the
child's stderr in a log file, runs one child per concurrent match, and
refuses a command that cannot run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until

from bots.reference import RandomBot
from bots.sdk import DecisionRequest, MatchInfo, MatchResult
from bots.stdio import StdioBot, StdioError
from bots.stdio_lines import (
    PROTOCOL,
    Answer,
    decision_request_line,
    match_ended_line,
    match_started_line,
    parse_answer,
    parse_answer_debug,
)
from games.registry import game_class, game_names
from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import referee_pb2 as pb
from referee.testing import Harness

register_toy()

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bots" / "examples"
TOKENS = {"tok-stdio": 1, "tok-rand": 2, "tok-other": 3}
REAL_GAMES = [g for g in game_names() if game_class(g).__module__.startswith("games.")]

# A child that plays index 0 and misbehaves at its 2nd decision of a match, once
# per marker file (so the next match shows the adapter carrying on).
FAULTY = r"""
import json, os, sys, time
mode, arg, marker = sys.argv[1], sys.argv[2], sys.argv[3]
print("faulty child up", file=sys.stderr, flush=True)
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "match_started":
        n = 0
        if mode == "exit_at_start" and not os.path.exists(marker):
            open(marker, "w").close()
            sys.exit(int(arg))
    if msg["type"] != "decision_request":
        continue
    n += 1
    if n == 2 and not os.path.exists(marker):
        open(marker, "w").close()
        if mode == "exit":
            sys.exit(int(arg))
        if mode == "silent":
            time.sleep(60)
        if mode == "say":
            print(arg, flush=True)
            continue
    print(0, flush=True)
"""


@pytest.fixture
def faulty(tmp_path: Path):
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY)

    def command(mode: str, arg: str = "-") -> list[str]:
        return [sys.executable, str(script), mode, arg, str(tmp_path / f"marker-{mode}")]

    return command


def _request(n: int) -> DecisionRequest:
    raw = pb.DecisionRequest(
        match_id=7, seq=3, seat=1, game="toy", time_left_ms=900, deadline_ms=800,
        observation=pb.Observation(json='{"hand":["K01"]}'),
        legal_actions=[pb.LegalAction(index=i, label=f"play K{i:02d}", json=f'{{"kind":"play","card":"K{i:02d}"}}')
                       for i in range(n)],
    )
    return DecisionRequest(raw, None, 0.0)


# -- the line protocol -----------------------------------------------------------------


@pytest.mark.parametrize(("line", "answer"), [
    ("3", 3), (" 3 \r", 3), ("+2", 2), ("0", 0), ("-1", -1), ("99", 99), ("RESIGN", Answer.RESIGN),
    ("3.0", Answer.GARBAGE), ("three", Answer.GARBAGE), ('{"index": 1}', 1), ("1_000", Answer.GARBAGE),
    ("2147483648", Answer.GARBAGE), ("0x1", Answer.GARBAGE), ("٣", Answer.GARBAGE),
    ('{"index": 1, "debug": "why"}', 1), ('{"index": true}', Answer.GARBAGE), ('{"index": "1"}', Answer.GARBAGE),
    ('{"index": 1.0}', Answer.GARBAGE), ('{"debug": "no index"}', Answer.GARBAGE), ("[1]", Answer.GARBAGE),
    ('{"index": 1, "debug": 5}', Answer.GARBAGE), ('{"index": 2147483648}', Answer.GARBAGE),
    ('{"index": 1', Answer.GARBAGE),
])
def test_parse_answer(line, answer):
    assert parse_answer(line) == answer


def test_a_json_answer_carries_its_debug_text_cut_to_the_contract_cap():
    assert parse_answer_debug('{"index": 0, "debug": "Stones: 2\\nrow 3"}') == (0, "Stones: 2\nrow 3")
    assert parse_answer_debug("5") == (5, "")
    index, text = parse_answer_debug(json.dumps({"index": 3, "debug": "é" * 5000}))
    assert index == 3 and len(text.encode()) <= 1000 and text.endswith("…[cut]")
    assert text.removesuffix("…[cut]") == "é" * ((1000 - len("…[cut]".encode())) // 2)


def test_lines_are_one_ascii_json_object_with_the_documented_keys():
    req = _request(2)
    line = decision_request_line(req)
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    assert line.startswith(b'{"type":"decision_request","match_id":7,"seq":3,"num_actions":2,')
    msg = json.loads(line)
    assert msg["observation"] == {"hand": ["K01"]} and (msg["deadline_ms"], msg["time_left_ms"]) == (800, 900)
    assert msg["legal_actions"][1] == {"index": 1, "label": "play K01", "action": {"kind": "play", "card": "K01"}}
    info = MatchInfo(7, "toy", "toy(players=2)", {"players": "2"}, 1, 2, [{"seat": 0, "bot_id": 4, "name": "é",
                     "version": "1"}], {"base_ms": 0, "increment_ms": 0, "cap_ms": 500, "margin_ms": 50}, "ab")
    started = match_started_line(info)
    assert started.isascii() and json.loads(started)["players"][0]["name"] == "é"
    assert json.loads(started)["protocol"] == PROTOCOL
    ended = json.loads(match_ended_line(MatchResult(7, 1, [2, 1], [3.0, 5.0], ["normal", "normal"], "game over", "s",
                                                    "finished")))
    assert (ended["type"], ended["rank"], ended["verdict"], ended["status"]) == ("match_ended", 1, "normal", "finished")


# -- playing through a referee ---------------------------------------------------------


async def _play(bot: StdioBot, game_string: str, *, matches: int = 1, **kwargs):
    """The stdio bot (bot 1) against a random bot (bot 2), seats alternating."""
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-stdio")
        h.start_bot(RandomBot(seed=5), "tok-rand")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        results = []
        for i in range(matches):
            seats = [1, 2] if i % 2 == 0 else [2, 1]
            results.append(await h.run_match(100 + i, game_string, seats, **kwargs))
        return results


def _verdict(result: control_pb.MatchResult, bot_id: int) -> str:
    return next(s.verdict for s in result.seats if s.bot_id == bot_id)


@pytest.mark.parametrize("example", ["random_bot.py", "random_bot.sh"])
async def test_example_bots_play_every_game(tmp_path, example):
    program = [sys.executable] if example.endswith(".py") else ["bash"]
    bot = StdioBot([*program, str(EXAMPLES / example)], log_dir=tmp_path, name=example, stop_grace_s=0.3)
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-stdio")
        h.start_bot(RandomBot(seed=1), "tok-rand")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        for i, game in enumerate(REAL_GAMES):
            result = await h.run_match(200 + i, f"{game}(players=2)", [1, 2] if i % 2 else [2, 1])
            assert result.status == "finished", (game, result.reason)
            assert [s.verdict for s in result.seats] == ["normal", "normal"], game
    log_text = "".join(p.read_text() for p in bot.log_paths)
    if example.endswith(".py"):
        assert "ended: rank" in log_text  # the child's own stderr
    assert "# parterre" in log_text and "exited with status 0" in log_text


async def test_a_child_that_exits_resigns_and_the_next_match_gets_a_fresh_child(tmp_path, faulty):
    bot = StdioBot(faulty("exit", "3"), log_dir=tmp_path, stop_grace_s=0.3)
    first, second = await _play(bot, "toy(players=2,turns=4)", matches=2, cap_ms=30_000)
    assert _verdict(first, 1) == "resigned" and _verdict(first, 2) == "normal"
    assert next(s.rank for s in first.seats if s.bot_id == 2) == 1
    assert _verdict(second, 1) == "normal"
    assert bot.match_pids[100] != bot.match_pids[101]
    log_text = bot.log_paths[0].read_text()
    assert "faulty child up" in log_text and "exited with status 3" in log_text


async def test_a_child_that_exits_between_decisions_resigns_at_once(tmp_path, faulty):
    bot = StdioBot(faulty("exit_at_start", "0"), log_dir=tmp_path, stop_grace_s=0.3)
    # A cap far above a child's start-up under load: a bot that missed the exit would time out instead
    first, second = await _play(bot, "toy(players=2,turns=4)", matches=2, cap_ms=30_000)
    assert _verdict(first, 1) == "resigned" and _verdict(second, 1) == "normal"
    assert next(s.decisions for s in first.seats if s.bot_id == 1) == 0


@pytest.mark.parametrize("garbage", ["banana", "1.0", "99", "-1", "99999999999", '{"index": "0"}',
                                     '{"index": 0, "debug": 1}'])
async def test_garbage_or_an_index_out_of_range_is_an_illegal_action(tmp_path, faulty, garbage):
    bot = StdioBot(faulty("say", garbage), log_dir=tmp_path, stop_grace_s=0.3)
    first, second = await _play(bot, "toy(players=2,turns=4)", matches=2)
    assert _verdict(first, 1) == "illegal_action" and _verdict(first, 2) == "normal"
    assert _verdict(second, 1) == "normal"
    assert bot.match_pids[100] == bot.match_pids[101]  # the same child plays on


async def test_a_resign_line_resigns(tmp_path, faulty):
    bot = StdioBot(faulty("say", "resign"), log_dir=tmp_path, stop_grace_s=0.3)
    (result,) = await _play(bot, "toy(players=2,turns=4)")
    assert _verdict(result, 1) == "resigned"


async def test_a_silent_child_times_out_and_is_replaced(tmp_path, faulty):
    bot = StdioBot(faulty("silent"), log_dir=tmp_path, stop_grace_s=0.3)
    first, second = await _play(bot, "toy(players=2,turns=4)", matches=2, cap_ms=300, margin_ms=50)
    assert _verdict(first, 1) == "timeout" and _verdict(first, 2) == "normal"
    seat = next(s for s in first.seats if s.bot_id == 1)
    assert seat.decisions == 1  # only its own first answer: nothing was sent on its behalf
    assert _verdict(second, 1) == "normal"
    stuck = bot.match_pids[100]
    assert stuck != bot.match_pids[101]
    with pytest.raises(ProcessLookupError):
        os.kill(stuck, 0)
    assert "still thinking when the match ended" in bot.log_paths[0].read_text()


async def test_several_matches_at_once_run_as_several_children(tmp_path):
    bot = StdioBot([sys.executable, str(EXAMPLES / "random_bot.py")], log_dir=tmp_path, max_concurrent_matches=3,
                   stop_grace_s=0.3)
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-stdio")
        h.start_bot(RandomBot(seed=2, max_concurrent_matches=3), "tok-rand")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        results = await asyncio.gather(*(h.run_match(300 + i, "floriferous(players=2)", [1, 2]) for i in range(3)))
    assert all(_verdict(r, 1) == "normal" for r in results)
    assert len({bot.match_pids[300 + i] for i in range(3)}) == 3
    assert len(bot.log_paths) == 3


async def test_a_command_that_cannot_run_is_refused(tmp_path):
    with pytest.raises(StdioError, match="cannot start"):
        await StdioBot([str(tmp_path / "no-such-bot")], log_dir=tmp_path).arun("127.0.0.1:1", "t")
    crashing = StdioBot([sys.executable, "-c", "import sys; sys.exit(5)"], log_dir=tmp_path / "loop")
    with pytest.raises(StdioError, match="exited with status 5 3 times in a row"):
        await asyncio.wait_for(crashing.arun("127.0.0.1:1", "t", initial_backoff_s=0.05), 20)


def test_parterre_connect_reports_a_broken_command(tmp_path):
    env = {**os.environ, "PARTERRE_HOME": str(tmp_path)}
    cli = [sys.executable, "-m", "parterre.cli", "connect", "--address", "127.0.0.1:1"]
    run = subprocess.run([*cli, "--exec", str(tmp_path / "missing"), "--token", "t"], capture_output=True, text=True,
                         env=env, timeout=60, cwd=ROOT)
    assert run.returncode == 1 and "cannot start the bot command" in run.stderr
    env.pop("PARTERRE_BOT_TOKEN", None)
    run = subprocess.run([*cli, "--exec", "true"], capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
    assert run.returncode == 2 and "token is required" in run.stderr


async def test_parterre_connect_stops_its_children_on_sigterm(tmp_path):
    stubborn = tmp_path / "stubborn.py"  # ignores stdin's end and SIGTERM: only SIGKILL stops it
    stubborn.write_text("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)\n")
    async with Harness(TOKENS) as h:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "parterre.cli", "connect", "--exec", f"{sys.executable} {stubborn}", "--token",
            "tok-stdio", "--address", h.address, "--max-matches", "2", "--log-dir", str(tmp_path / "logs"), cwd=ROOT,
            env={**os.environ, "PARTERRE_HOME": str(tmp_path)}, stderr=asyncio.subprocess.PIPE)
        await h.wait_sessions(1, timeout_s=30)
        logs = sorted((tmp_path / "logs").glob("*.log"))
        pids = [int(line.rsplit(" ", 1)[1]) for p in logs for line in p.read_text().splitlines()
                if "started, pid" in line]
        assert len(pids) == 2
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 20) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_parterre_connect_says_when_it_is_connected(tmp_path):
    idle = tmp_path / "idle.py"
    idle.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    async with Harness(TOKENS) as h:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "parterre.cli", "connect", "--exec", f"{sys.executable} {idle}", "--token",
            "tok-stdio", "--address", h.address, "--log-dir", str(tmp_path / "logs"), cwd=ROOT,
            env={**os.environ, "PARTERRE_HOME": str(tmp_path)}, stderr=asyncio.subprocess.PIPE)
        lines: list[str] = []
        try:
            async with asyncio.timeout(60):
                while not any("connected as" in line for line in lines):
                    raw = await proc.stderr.readline()
                    if not raw:
                        break
                    lines.append(raw.decode())
        finally:
            proc.terminate()
            await proc.wait()
    said = [line for line in lines if "connected as" in line]
    assert said and "waiting for matches" in said[0], lines


# A child that floods stdout with lines no decision asked for, after each match (an attacker filling the disk).
FLOODER = r"""
import json, sys
count = int(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "decision_request":
        print(0, flush=True)
    elif msg["type"] == "match_ended":
        out = sys.stdout
        for i in range(count):
            out.write("spam %06d %s\n" % (i, "x" * 80))
        out.flush()
"""


async def test_a_child_flooding_stray_lines_cannot_fill_the_disk(tmp_path, monkeypatch):
    """Oracle: the child's own count of lines printed (8000, ~0.7 MB, after its match: a flood during a match
    would race the next request) against the notes in its log: the cap (the setting, 50) logged, the rest
    counted in one note; the log stays small."""
    monkeypatch.setenv("PARTERRE_STDIO_NOTES_MAX", "50")
    script = tmp_path / "flooder.py"
    script.write_text(FLOODER)
    bot = StdioBot([sys.executable, str(script), "8000"], log_dir=tmp_path / "logs", stop_grace_s=5.0)
    (result,) = await _play(bot, "toy(players=2,turns=4)")
    assert _verdict(result, 1) == "normal"
    assert len(bot.log_paths) == 1
    # the child exits once the adapter closed its stdin; the exit is noted
    await async_wait_until(lambda: "exited with status" in bot.log_paths[0].read_text(), 10, 0.05)
    text = bot.log_paths[0].read_text()
    logged = text.count("ignored a line sent while no decision was pending")
    assert logged == 50, logged
    assert f"{8000 - 50} more lines ignored" in text
    assert text.count("more lines ignored") == 1
    assert bot.log_paths[0].stat().st_size < 64 * 1024


async def test_the_note_cap_counts_bytes_too(tmp_path):
    script = tmp_path / "flooder.py"
    script.write_text(FLOODER)
    bot = StdioBot([sys.executable, str(script), "3000"], log_dir=tmp_path / "logs", stop_grace_s=5.0,
                   max_notes=10_000, max_note_kb=16)
    (result,) = await _play(bot, "toy(players=2,turns=4)")
    assert _verdict(result, 1) == "normal"
    await async_wait_until(lambda: "exited with status" in bot.log_paths[0].read_text(), 10, 0.05)
    text = bot.log_paths[0].read_text()
    logged = text.count("ignored a line sent while no decision was pending")
    assert 0 < logged < 3000 and f"{3000 - logged} more lines ignored" in text
    assert bot.log_paths[0].stat().st_size < 16 * 1024 + 4096
