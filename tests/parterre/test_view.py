"""``parterre view`` (``parterre/commands/view.py``, ``web/local_view.py``): the site's viewer over a replay file.

Oracles: the rules engine's own observation at each step, rebuilt in the test from the replay's game string
and actions (``games.registry.load_game``, ``state.observation(seat)``); the file's own steps and labels; and
two listening sockets standing for PostgreSQL and Redis, which must receive no connection.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.waiting import wait_until

from games.registry import load_game

ROOT = Path(__file__).resolve().parents[2]
GAME = "flowar(players=2)"
CARD = re.compile(r"[A-Z]\d{2}")
"""A Flowar card id (``F37``)."""


def _env(database: int, redis: int) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PARTERRE_ENGINES": "pure",
            "PARTERRE_HOME": "/nonexistent-parterre-home",
            "PARTERRE_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{database}/ladder",
            "PARTERRE_REDIS_URL": f"redis://127.0.0.1:{redis}/7"}


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("view")
    proc = subprocess.run(
        [sys.executable, "-m", "parterre.cli", "play", "--game", GAME, "--bot", "house:random", "--bot",
         "house:greedy", "--games", "1", "--seed", "view", "--replays", str(folder)],
        env=_env(1, 1), cwd=ROOT, text=True, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return folder / "game-001.json"


@pytest.fixture()
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    """Two listening sockets where the environment says PostgreSQL and Redis are."""
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
        socks.append(s)
    yield socks[0], socks[1]
    for s in socks:
        s.close()


def _connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        text: str = response.read().decode()
        return text


def _cards(value: Any) -> set[str]:
    """Every card id in an observation (the engine's own JSON)."""
    if isinstance(value, dict):
        return set().union(*(_cards(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) and CARD.fullmatch(value) else set()


def _observations(replay: dict[str, Any], seats: int) -> list[list[set[str]]]:
    """Per step (from the start, -1) the card ids of the spectator's and each seat's observation."""
    game = load_game(replay["game_string"]).at_revision(replay.get("rules_revision", 1))
    state = game.new_initial_state()
    views: list[int | None] = [None, *range(seats)]
    out = [[_cards(state.observation(v)) for v in views]]
    for step in replay["steps"]:
        state.apply_action(game.action_from_json(step["action"]))
        out.append([_cards(state.observation(v)) for v in views])
    return out


def test_the_viewer_serves_every_step_and_each_view_shows_the_engines_observation(
        replay_file: Path, listeners: tuple[socket.socket, socket.socket]) -> None:
    replay = json.loads(replay_file.read_text())["replay"]
    steps = replay["steps"]
    database, redis = (s.getsockname()[1] for s in listeners)
    proc = subprocess.Popen([sys.executable, "-m", "parterre.cli", "view", str(replay_file), "--no-browser",
                             "--port", "0"], env=_env(database, redis), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/matches/1\b", line)
        assert found, line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        url = found.group(0)

        page = _get(url + "?all=1")
        # every link on the page leads somewhere this viewer serves (it serves one file, not the site)
        for href in sorted(set(re.findall(r'href="([^"#]*)', page)) - {""}):
            target = urllib.parse.urljoin(url, html.unescape(href))
            assert target.startswith(url.rsplit("/matches/", 1)[0]), target
            try:
                _get(target)
            except urllib.error.HTTPError as exc:
                raise AssertionError(f"{href} on the viewer's page answers {exc.code}") from None
        listed = dict(re.findall(r'<li data-step="(-?\d+)"[^>]*>(.*?)</li>', page, re.S))
        assert sorted(int(i) for i in listed) == list(range(-1, len(steps)))
        for i, step in enumerate(steps):  # all hands: every step under its recorded label
            assert step["label"] in html.unescape(listed[str(i)]), (i, step["label"])

        seats = len(replay["players"])
        expected = _observations(replay, seats)
        assert len(expected[-1][0]) > 10  # the oracle sees the cards on the table
        for k in range(-1, len(steps)):
            for v, query in enumerate(["", *(f"&seat={s}" for s in range(seats))]):
                board = _get(f"{url}/board?step={k}{query}")
                assert f'data-step="{k}"' in board
                shown = set(re.findall(r'data-card="([^"]+)"', board))
                assert shown == expected[k + 1][v], (k, query, expected[k + 1][v] ^ shown)
        assert '<span class="badge seat-view">seat 2' in _get(f"{url}/board?step={len(steps) - 1}&seat=1")
        # another name for this address (a page whose own name was rebound to 127.0.0.1) is refused
        foreign = urllib.request.Request(url, headers={"Host": "attacker.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(foreign, timeout=30)
        assert refused.value.code == 400
    finally:
        proc.terminate()
        proc.wait(30)
    assert not _connected(listeners[0]), "parterre view connected to PostgreSQL"
    assert not _connected(listeners[1]), "parterre view connected to Redis"


@pytest.mark.parametrize("tamper", ["action", "hash", "not json"])
def test_a_file_that_fails_replay_verify_is_refused_before_serving(replay_file: Path, tmp_path: Path,
                                                                    tamper: str) -> None:
    data = json.loads(replay_file.read_text())
    bad = tmp_path / "bad.json"
    if tamper == "action":
        data["replay"]["steps"][-1]["player"] = 1 - data["replay"]["steps"][-1]["player"]
    elif tamper == "hash":
        data["replay"]["final_hash"] = "0" * 64
    bad.write_text("{" if tamper == "not json" else json.dumps(data))
    proc = subprocess.run([sys.executable, "-m", "parterre.cli", "view", str(bad), "--no-browser", "--port", "0"],
                          env=_env(1, 1), cwd=ROOT, text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and str(bad) in proc.stderr, proc.stderr


def test_a_bare_replay_opens_in_the_browser_at_the_printed_address(replay_file: Path, tmp_path: Path) -> None:
    """A replay as the site's download holds it (no export wrapper); ``$BROWSER`` is what ``webbrowser`` runs."""
    bare = tmp_path / "match.json"
    bare.write_text(json.dumps(json.loads(replay_file.read_text())["replay"]))
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "parterre.cli", "view", str(bare)],
                            env={**_env(1, 1), "BROWSER": str(browser)}, cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+/matches/\d+", proc.stdout.readline())
        assert found
        assert wait_until(lambda: opened.is_file() and opened.read_text().strip(), 30) == found.group(0)
        assert "seat 1:" in _get(found.group(0))
    finally:
        proc.terminate()
        proc.wait(30)


STDIO_DEBUG_BOT = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decision_request":
        print(json.dumps({"index": 0, "debug": f"seq {message['seq']}: first of {message['num_actions']} <i>"}),
              flush=True)
"""


def test_the_bots_debug_text_from_parterre_play_is_shown_at_its_step(tmp_path: Path) -> None:
    """``parterre play`` writes a stdio bot's debug text beside the replay (``game-001.debug.jsonl``);
    ``parterre view`` shows each note, escaped, in the board panel of the step it belongs to (the file's
    own notes are the oracle) and nothing at the other seat's steps; a debug file that does not belong to
    the replay is refused before serving."""
    bot = tmp_path / "noting.py"
    bot.write_text(STDIO_DEBUG_BOT)
    folder = tmp_path / "replays"
    proc = subprocess.run(
        [sys.executable, "-m", "parterre.cli", "play", "--game", GAME, "--bot", str(bot), "--bot", "house:random",
         "--games", "1", "--seed", "view-debug", "--replays", str(folder)],
        env=_env(1, 1), cwd=ROOT, text=True, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    replay_path, notes_path = folder / "game-001.json", folder / "game-001.debug.jsonl"
    notes = {n["step"]: n for n in map(json.loads, notes_path.read_text().splitlines())}
    steps = json.loads(replay_path.read_text())["replay"]["steps"]
    others = [s["i"] for s in steps if s["player"] >= 0 and s["i"] not in notes]
    assert notes and others
    view = subprocess.Popen([sys.executable, "-m", "parterre.cli", "view", str(replay_path), "--no-browser",
                             "--port", "0"], env=_env(1, 1), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert view.stdout is not None
        line = view.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/matches/1\b", line)
        assert found and f"debug text of {len(notes)} decisions" in line, line
        url = found.group(0)
        for step, note in list(notes.items())[:5]:
            board = _get(f"{url}/board?step={step}")
            assert html.escape(note["text"], quote=False) + "</pre>" in board and "<i>" not in board, step
            assert "debug text of noting" in board
        for step in others[:5]:
            assert "debug-text" not in _get(f"{url}/board?step={step}")
    finally:
        view.terminate()
        view.wait(30)
    # the debug file of another game (its steps are not this bot's decisions here) is refused
    wrong = {**next(iter(notes.values())), "step": others[0]}
    notes_path.write_text(json.dumps(wrong) + "\n")
    proc = subprocess.run([sys.executable, "-m", "parterre.cli", "view", str(replay_path), "--no-browser", "--port",
                           "0"], env=_env(1, 1), cwd=ROOT, text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2 and "is not a decision of seat" in proc.stderr, proc.stderr
