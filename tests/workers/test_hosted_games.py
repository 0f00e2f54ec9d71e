"""Every rejection explains itself: a hosted version's validation and regression games are kept with the
version's seat and a replay, listed by the API, the version page and ``parterre bot upload --wait``.

Versions are decided by :func:`workers.hosting.validation.process_version` with the real sandbox, as a worker
does. The oracles are the uploaded bots' own behaviour, not this code: one always answers the first legal
action and, in seat 2 only (the seat the stdio protocol tells it), answers an index out of range at its third
decision; so the replay of the game where it sat in seat 2 must hold exactly two of its steps, each the first
legal action the engine offers there (re-simulated here at the replay's rules revision), and end with seat 2 to
act, while its chance outcomes are those of ``random.Random`` seeded with the deal's seed
(``sha256("validate:{sha256 of the archive}:0")``, docs/regression.md "Duplicate deals"). The other account gets
404 from every door.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import threading
import time
import urllib.request
from typing import Any

import pytest
import test_hosted
from test_hosted import PASSWORD, manifest, needs_sandbox, no_sandbox_left, owner, python_bot, targz, upload

from games.api import CHANCE
from games.registry import load_game
from games.replay import verify_replay
from workers.hosting import validation as hosted

pytestmark = needs_sandbox
app, cfg, client, pool = test_hosted.app, test_hosted.cfg, test_hosted.client, test_hosted.pool

GAME = load_game("floriferous(players=2)").game_string()
"""The game string validation plays (its options spelt out)."""
FIRST_THEN_ILLEGAL = b"""import json, sys
asked = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "decision_request":
        continue
    if msg["seat"] == 1:
        asked += 1
        if asked == 3:
            print("seat 2, third decision: answering 9999", file=sys.stderr, flush=True)
            print(9999, flush=True)
            continue
    print(0, flush=True)
"""


def first_then_illegal() -> bytes:
    return targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "bot.py"], ["floriferous"]),
                  "bot.py": FIRST_THEN_ILLEGAL})


def resimulate(replay: dict[str, Any], seat: int) -> tuple[Any, list[int]]:
    """Replay the steps here: the final state, and for each step of ``seat`` the index of its action among the
    engine's legal actions; chance steps must be what ``random.Random(seed)`` draws."""
    game = load_game(replay["game_string"]).at_revision(replay.get("rules_revision", 1))
    state, rng, indices = game.new_initial_state(), random.Random(replay["seed"]), []
    for rec in replay["steps"]:
        assert state.current_player() == rec["player"], rec
        if rec["player"] == CHANCE:
            assert state.sample_chance(rng).to_json() == rec["action"], rec
        elif rec["player"] == seat:
            indices.append([a.to_json() for a in state.legal_actions()].index(rec["action"]))
        state.apply_action(game.action_from_json(rec["action"]))
    return state, indices


def login(c: Any, headers: dict[str, str]) -> None:
    name = c.get("/api/account", headers=headers).json()["username"]
    m = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text)
    assert m
    r = c.post("/login", data={"csrf": m[1], "username": name, "password": PASSWORD}, follow_redirects=False)
    assert r.status_code == 303


def test_the_cli_names_each_validation_games_seat_and_links_its_replay(
        app: Any, pool: Any, cfg: dict[str, Any], tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``parterre bot upload --wait`` over real HTTP while a worker decides the version: each game with the
    version's seat, and a replay address that answers with the game's replay."""
    import uvicorn
    from fastapi.testclient import TestClient

    from parterre.commands import upload as cli_upload

    tc = TestClient(app, client=("192.0.2.201", 50000))
    headers, bot_id = owner(tc)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    archive = tmp_path / "bot.tar.gz"
    archive.write_bytes(first_then_illegal())
    base = f"http://127.0.0.1:{port}"

    def worker() -> None:  # as parterre.hosted_tick: take the version once it is there, and decide it
        for _ in range(200):
            got = test_hosted.sub.version_by_number(pool, bot_id, 1)
            if got is not None:
                hosted.process_version(pool, got.id, cfg)
                return
            time.sleep(0.05)

    decider = threading.Thread(target=worker, daemon=True)
    try:
        decider.start()
        ns = type("NS", (), {"token": headers["Authorization"].split()[1], "url": base, "bot_id": bot_id,
                             "path": str(archive), "wait": True, "timeout": 300.0, "poll": 0.3})()
        assert cli_upload.cmd_bot_upload(ns) == 2  # rejected
        decider.join(timeout=60)
        out = capsys.readouterr().out
        # the address printed for the game where it sat second answers, with the token, with that game's replay
        printed = re.search(r"seat 2 of 2.* — replay (\S+)$", out, re.M)
        assert printed is not None, out
        with urllib.request.urlopen(urllib.request.Request(printed[1], headers=headers), timeout=30) as resp:
            got = json.loads(resp.read())
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert no_sandbox_left()
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    seed = hashlib.sha256(f"validate:{sha}:0".encode()).hexdigest()
    lines = [line for line in out.splitlines() if line.startswith("validation: ")]
    replays = f"{base}/api/bots/{bot_id}/versions/1/games/validation"
    assert lines == [
        f"validation: {GAME} (seed {seed[:12]}): your version in seat 1 of 2, rank "
        f"{lines[0].split('rank ')[1][0]} — replay {replays}/0/replay",
        f"validation: {GAME} (seed {seed[:12]}): your version in seat 2 of 2, rank 2; your version: "
        f"illegal_action — replay {replays}/1/replay"], out
    assert "rejected: illegal_action" in out and "seat 2, third decision: answering 9999" in out
    # that replay ends at its fault
    assert got["seed"] == seed and got["verdicts"] == ["normal", "illegal_action"]
    state, mine = resimulate(got, 1)
    assert mine == [0, 0] and state.current_player() == 1 and not state.is_terminal()


def test_validation_games_are_kept_with_the_seat_and_a_replay_owner_only(client: Any, pool: Any,
                                                                         cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    r = upload(client, headers, bot_id, first_then_illegal())
    assert r.status_code == 201, r.text
    assert hosted.process_version(pool, r.json()["id"], cfg) == "rejected"
    assert no_sandbox_left()
    sha = r.json()["sha256"]
    seed = hashlib.sha256(f"validate:{sha}:0".encode()).hexdigest()
    listed = client.get(f"/api/bots/{bot_id}/versions/1/games", headers=headers)
    assert listed.status_code == 200, listed.text
    games = listed.json()["games"]
    assert [(g["kind"], g["n"], g["seat"], g["seed"]) for g in games] == [
        ("validation", 0, 0, seed), ("validation", 1, 1, seed)]
    assert games[1]["fault"] == {"side": "a", "verdict": "illegal_action"} and games[1]["ranks"] == [1, 2]
    assert games[0]["fault"] is None
    replays = [client.get(g["replay"], headers=headers) for g in games]
    assert all(x.status_code == 200 and x.headers["cache-control"] == "no-store" for x in replays)
    first, second = (x.json() for x in replays)
    # game 0: the version in seat 1 (from 0: 0) played to the end, every answer the first legal action
    state, mine = resimulate(first, 0)
    assert state.is_terminal() and set(mine) == {0} and verify_replay(first).ok
    assert first["outcome"]["ranks"] == games[0]["ranks"]
    # game 1: in seat 2 it answered twice, then out of range at its third decision: the replay stops there
    state, mine = resimulate(second, 1)
    assert mine == [0, 0] and state.current_player() == 1 and not state.is_terminal()
    assert verify_replay(second).ok and "outcome" not in second
    names = [p["name"] for p in second["players"]]
    assert names[0] == "house greedy (validation opponent)" and names[1].endswith("(version 1)"), names
    # the page: each game with the version's seat, and its replay behind the session
    login(client, headers)
    page = client.get(f"/my/bots/{bot_id}/hosted/1").text
    assert "this version in seat 1 of 2" in page and "this version in seat 2 of 2, rank 2 — this version: " \
        "illegal_action" in page
    link = f"/my/bots/{bot_id}/hosted/1/games/validation/1.json"
    assert f'href="{link}"' in page
    assert client.get(link).json() == second
    # nobody else: another account's token and session, and no token at all
    from fastapi.testclient import TestClient

    other = TestClient(client.app, client=("192.0.2.202", 50000))
    oh, _ = owner(other)
    login(other, oh)
    assert other.get(f"/api/bots/{bot_id}/versions/1/games", headers=oh).status_code == 404
    assert other.get(games[1]["replay"], headers=oh).status_code == 404
    assert other.get(link).status_code == 404
    assert TestClient(client.app).get(games[1]["replay"]).status_code == 401


def test_regression_games_are_kept_with_the_seat_and_a_replay(client: Any, pool: Any, cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    for data in (python_bot(), python_bot(0.0, "again")):
        r = upload(client, headers, bot_id, data)
        assert hosted.process_version(pool, r.json()["id"], {**cfg, "max_games": 4}) == "active"
    assert no_sandbox_left()
    games = client.get(f"/api/bots/{bot_id}/versions/2/games", headers=headers).json()["games"]
    reg = [g for g in games if g["kind"] == "regression"]
    assert [(g["n"], g["seat"]) for g in reg] == [(0, 0), (1, 1), (2, 0), (3, 1)]
    for g in reg:
        replay = client.get(g["replay"], headers=headers).json()
        assert verify_replay(replay).ok and replay["outcome"]["ranks"] == g["ranks"]
        assert replay["seed"] == g["seed"]
        names = [p["name"] for p in replay["players"]]
        assert names[g["seat"]].endswith("(version 2)") and names[1 - g["seat"]].endswith("(version 1)"), names
    login(client, headers)
    page = client.get(f"/my/bots/{bot_id}/hosted/2").text
    assert "The regression test&#39;s games (4)" in page or "The regression test's games (4)" in page
    assert page.count(f'/my/bots/{bot_id}/hosted/2/games/regression/') == 4
    assert "this version in seat 2 of 2" in page
