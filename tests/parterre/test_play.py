"""``parterre play`` (``parterre/commands/play.py``, ``parterre/local_play.py``): a local match with no server.

Oracles: ``parterre replay verify`` on every file written (it re-simulates the game from the replay and checks
the seat rows against the verdicts and the rules' outcome), the replays' own seats and seeds, and the
referee's verdicts of bots that misbehave in known ways.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parterre.cli import main

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE = {"PARTERRE_DATABASE_URL": "postgresql://127.0.0.1:1/x", "PARTERRE_REDIS_URL": "redis://127.0.0.1:1/0"}

SDK_BOT = """\
import os
import re
from bots.sdk import Bot

class Last(Bot):
    name = "last"

    def choose(self, request):
        return len(request.legal_actions) - 1

Last().run(os.environ["PARTERRE_REFEREE_ADDRESS"], os.environ["PARTERRE_BOT_TOKEN"])
"""

STDIO_BOT = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decision_request":
        print(0, flush=True)
"""


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _parterre(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **UNREACHABLE, "PYTHONPATH": str(ROOT), "PARTERRE_ENGINES": "pure",
           "PARTERRE_HOME": os.environ.get("PARTERRE_HOME", "/nonexistent-parterre-home")}
    return subprocess.run([sys.executable, "-m", "parterre.cli", *args], env=env, cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout)


def _play(*args: str) -> dict[str, Any]:
    proc = _parterre("play", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _verify(path: str) -> None:
    proc = _parterre("replay", "verify", path)
    assert proc.returncode == 0 and proc.stdout.startswith("OK:"), proc.stdout + proc.stderr


@pytest.mark.parametrize("game", ["floriferous(players=3)", "lafleur(players=3)", "flowar(players=3)"])
def test_play_each_game_with_sdk_stdio_and_house_bots_and_no_server(tmp_path: Path, game: str) -> None:
    sdk = _script(tmp_path, "sdk_bot.py", SDK_BOT)
    stdio = _script(tmp_path, "stdio_bot.py", STDIO_BOT)
    out = _play("--game", game, "--bot", f"grpc:{sys.executable} {sdk}", "--bot", str(stdio),
                "--bot", "house:greedy", "--games", "1", "--replays", str(tmp_path / "replays"))
    assert [g["status"] for g in out["games"]] == ["finished"]
    assert {row["bot"]: row["games"] for row in out["bots"]} == {"sdk_bot": 1, "stdio_bot": 1, "greedy": 1}
    assert all(row["verdicts"] == {} for row in out["bots"])
    assert [p.name for p in sorted((tmp_path / "replays").glob("game-*.json"))] == ["game-001.json"]
    _verify(out["games"][0]["replay"])
    logs = {row["bot"]: row["logs"] for row in out["bots"]}
    assert "connected as last" in Path(logs["sdk_bot"][0]).read_text()  # the gRPC bot's stderr
    assert logs["stdio_bot"] and all(Path(p).is_file() for p in logs["stdio_bot"])


def test_games_rotate_seats_and_the_seed_replays_the_deals(tmp_path: Path) -> None:
    stdio = _script(tmp_path, "first.py", STDIO_BOT)
    runs = []
    for n in (1, 2):
        runs.append(_play("--game", "lafleur(players=3)", "--bot", str(stdio), "--bot", "house:random",
                          "--bot", "house:random", "--games", "3", "--seed", "fixed",
                          "--replays", str(tmp_path / f"run{n}")))
    replays = [[json.loads(Path(g["replay"]).read_text())["replay"] for g in run["games"]] for run in runs]
    for files in replays:
        seats_of: dict[int, list[int]] = {}
        for replay in files:
            for player in replay["players"]:
                seats_of.setdefault(player["bot_id"], []).append(player["seat"])
        assert {bot: sorted(seats) for bot, seats in seats_of.items()} == {1: [0, 1, 2], 2: [0, 1, 2], 3: [0, 1, 2]}
        assert len({replay["seed"] for replay in files}) == 1  # three seat rotations of one deal
    first, second = replays
    assert [r["seed"] for r in first] == [r["seed"] for r in second]
    assert [r["outcome"] for r in first] == [r["outcome"] for r in second]
    assert [r["final_hash"] for r in first] == [r["final_hash"] for r in second]
    for game in runs[0]["games"]:
        _verify(game["replay"])


def test_a_crash_and_a_timeout_are_results_not_errors(tmp_path: Path) -> None:
    crash = _script(tmp_path, "crasher.py", """\
        import json, sys
        for line in sys.stdin:
            if json.loads(line)["type"] == "decision_request":
                sys.exit(3)
        """)
    sleeper = _script(tmp_path, "sleeper.py", """\
        import json, sys, time
        for line in sys.stdin:
            if json.loads(line)["type"] == "decision_request":
                time.sleep(5)
        """)
    out = _play("--game", "lafleur(players=3)", "--bot", str(crash), "--bot", str(sleeper), "--bot", "house:random",
                "--games", "1", "--time-control", "150+20", "--replays", str(tmp_path / "r"))
    verdicts = {row["bot"]: row["verdicts"] for row in out["bots"]}
    assert verdicts == {"crasher": {"resigned": 1}, "sleeper": {"timeout": 1}, "random": {}}
    ranks = {s["bot"]: s["rank"] for s in out["games"][0]["seats"]}
    assert ranks["random"] == 1 and ranks["crasher"] == ranks["sleeper"] == 2  # the faulting seats share the last rank
    _verify(out["games"][0]["replay"])
    # each verdict says why: the crash is the program's exit (with its log), the timeout names its decision
    # and the allowance the time control gives (150 ms + 20 ms margin), as the referee recorded it
    reasons = {s["bot"]: s["reason"] for s in out["games"][0]["seats"]}
    assert "exited with status 3" in reasons["crasher"] and ".log" in reasons["crasher"], reasons
    assert re.search(r"decision \d+", reasons["sleeper"]) and "150 ms + 20 ms margin" in reasons["sleeper"], reasons
    assert reasons["random"] == ""
    replay = json.loads(Path(out["games"][0]["replay"]).read_text())["replay"]
    sleeper_seat = next(s["seat"] for s in out["games"][0]["seats"] if s["bot"] == "sleeper")
    assert replay["fault_reasons"][sleeper_seat] == reasons["sleeper"]
    assert {row["bot"]: len(row["reasons"]) for row in out["bots"]} == {"crasher": 1, "sleeper": 1, "random": 0}


def test_the_table_is_printed(tmp_path: Path) -> None:
    proc = _parterre("play", "--game", "lafleur(players=2)", "--bot", "house:random", "--bot", "house:random",
                     "--replays", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("game ") for line in lines) == 2  # one game per seat by default
    assert any("random#2" in line and "│" in line for line in lines)
    assert f"replays: {tmp_path}" in proc.stdout


@pytest.mark.parametrize("spec", ["house:nope", "house:search:bogus=1", "./no/such/bot.py", "grpc:"])
def test_a_bad_spec_is_one_error_line_and_status_2(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--game", "lafleur(players=2)", "--bot", "house:random", "--bot", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("parterre: error: --bot"), err


def test_the_bots_must_fill_the_seats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--game", "lafleur(players=3)", "--bot", "house:random", "--bot", "house:greedy"]) == 2
    assert "seats 3 players" in capsys.readouterr().err


def test_a_grpc_bot_that_dies_is_judged_and_started_again_for_the_next_game(tmp_path: Path) -> None:
    dies = _script(tmp_path, "dies.py", """\
        import os
        from bots.sdk import Bot

        class Dies(Bot):
            def choose(self, request):
                os._exit(1)

        Dies().run(os.environ["PARTERRE_REFEREE_ADDRESS"], os.environ["PARTERRE_BOT_TOKEN"])
        """)
    out = _play("--game", "lafleur(players=2)", "--bot", f"grpc:{sys.executable} {dies}", "--bot", "house:random",
                "--replays", str(tmp_path / "r"))
    # started again before game 2: a stream that broke mid-game each time, not a no-show in the second
    assert {row["bot"]: row["verdicts"] for row in out["bots"]} == {"dies": {"disconnect": 2}, "random": {}}
    for game in out["games"]:
        _verify(game["replay"])


def test_a_game_without_a_player_count_seats_one_player_per_bot_and_a_used_folder_is_refused(tmp_path: Path) -> None:
    """``--game floriferous`` with two bots is a 2-player game (the default count is the game's, 4, which two
    bots could not fill); a replays folder that holds an earlier run's games is refused, not mixed."""
    out = _play("--game", "floriferous", "--bot", "house:random", "--bot", "house:greedy", "--games", "1",
                "--replays", str(tmp_path / "r"))
    (game,) = out["games"]
    assert out["game"].startswith("floriferous(") and "players=2" in out["game"] and len(game["seats"]) == 2, out
    _verify(game["replay"])
    again = _parterre("play", "--game", "floriferous", "--bot", "house:random", "--bot", "house:greedy",
                      "--replays", str(tmp_path / "r"))
    assert again.returncode == 2 and "holds the games of an earlier run" in again.stderr, again.stderr


def test_a_grpc_program_that_exits_before_connecting_is_named_and_its_no_show_writes_no_replay(
        tmp_path: Path) -> None:
    """A ``grpc:`` program that fails at once (here: exits 3) is reported with its status and its log; the
    game it did not show up to is aborted, writes no replay and counts in no average."""
    proc = _parterre("play", "--json", "--game", "floriferous(players=2)", "--bot", "grpc:sh -c 'exit 3'", "--bot",
                     "house:random", "--games", "1", "--replays", str(tmp_path / "r"))
    assert proc.returncode == 0 and "its program exited with status 3 before connecting" in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    (game,) = out["games"]
    assert game["status"] == "aborted_no_show" and not Path(game["replay"]).exists(), game
    assert all(b["avg_rank"] is None for b in out["bots"]), out["bots"]


SDK_DEBUG_BOT = """\
import os
from bots.sdk import Bot

class Noting(Bot):
    name = "noting"

    def choose(self, request):
        request.debug(f"sdk seq {request.seq}: {len(request.legal_actions)} actions, took the last <b>")
        return len(request.legal_actions) - 1

Noting().run(os.environ["PARTERRE_REFEREE_ADDRESS"], os.environ["PARTERRE_BOT_TOKEN"])
"""

STDIO_DEBUG_BOT = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decision_request":
        print(json.dumps({"index": 0, "debug": f"stdio seq {message['seq']} " + "é" * 2000}), flush=True)
"""


def test_the_bots_debug_text_is_written_beside_the_replay_never_in_it(tmp_path: Path) -> None:
    """docs/bots.md, "Debug text": an SDK bot's ``request.debug`` and a stdio bot's ``{"index", "debug"}``
    land in ``game-NNN.debug.jsonl``, each at a step that is that bot's own decision in the replay (the
    replay file is the oracle: its seats and players), the stdio bot's 4,000-byte text cut to 1,000 bytes;
    a house bot that sends none has no line; the replay file holds none of it and still verifies."""
    sdk = _script(tmp_path, "sdk_noting.py", SDK_DEBUG_BOT)
    stdio = _script(tmp_path, "stdio_noting.py", STDIO_DEBUG_BOT)
    out = _play("--game", "floriferous(players=3)", "--bot", f"grpc:{sys.executable} {sdk}", "--bot", str(stdio),
                "--bot", "house:greedy", "--games", "1", "--replays", str(tmp_path / "replays"))
    (game,) = out["games"]
    assert game["status"] == "finished" and game["debug"] == str(tmp_path / "replays" / "game-001.debug.jsonl")
    text = Path(game["replay"]).read_text(encoding="utf-8")
    assert "sdk seq" not in text and "stdio seq" not in text and "debug" not in text
    replay = json.loads(text)["replay"]
    seat_of = {s["name"]: s["seat"] for s in json.loads(text)["seats"]}
    notes = [json.loads(line) for line in Path(game["debug"]).read_text(encoding="utf-8").splitlines()]
    by_bot: dict[str, list[dict[str, Any]]] = {}
    for note in notes:
        by_bot.setdefault(note["bot"], []).append(note)
        assert note["seat"] == seat_of[note["bot"]] and replay["steps"][note["step"]]["player"] == note["seat"]
    assert set(by_bot) == {"sdk_noting", "stdio_noting"}
    for bot, prefix in (("sdk_noting", "sdk seq "), ("stdio_noting", "stdio seq ")):
        own = [s["i"] for s in replay["steps"] if s["player"] == seat_of[bot]]
        assert [n["step"] for n in by_bot[bot]] == own  # every decision of the bot, in order
        assert all(n["text"].startswith(prefix) for n in by_bot[bot])
    assert all(len(n["text"].encode()) <= 1000 and n["text"].endswith("…[cut]") for n in by_bot["stdio_noting"])
    assert all(n["text"].endswith("took the last <b>") for n in by_bot["sdk_noting"])
    _verify(game["replay"])
