"""The first hour of a bot author, tried as a new user would.

- ``parterre bot run`` with a wrong token: one line on stderr, no traceback,
  a non-zero exit; with a good token: "connected as X, waiting for matches";
  with the referee unreachable: each reconnect attempt is printed.
- ``parterre tournament run`` of an unknown tournament: says so, non-zero exit;
  of a finished one: says so and queues nothing.
- ``--wait`` with a bot offline: the progress output names the missing bot
  and what happens to its matches, in numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parterre.cli import main
from referee.testing import Harness

ROOT = Path(__file__).resolve().parents[2]


def _bot_run(address: str, token: str) -> list[str]:
    return [sys.executable, "-m", "parterre.cli", "bot", "run", "random", f"--token={token}", "--address", address]


async def _lines_until(proc: asyncio.subprocess.Process, needle: str, timeout_s: float) -> list[str]:
    """stderr lines of ``proc`` up to the first containing ``needle`` (or EOF / timeout)."""
    assert proc.stderr is not None
    lines: list[str] = []

    async def read() -> None:
        while True:
            raw = await proc.stderr.readline()  # type: ignore[union-attr]  # the assert above does not narrow in read()
            if not raw:
                return
            lines.append(raw.decode(errors="replace").rstrip("\n"))
            if needle in lines[-1]:
                return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), timeout_s)
    return lines


async def _start(argv: list[str], home: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        cwd=ROOT, env={**os.environ, "PARTERRE_HOME": str(home), "PARTERRE_BOT_TOKEN": ""})


async def test_bot_run_with_a_wrong_token_prints_one_line_and_exits_non_zero(tmp_path: Path) -> None:
    async with Harness({"tok-good": 7}) as h:
        proc = await _start(_bot_run(h.address, "not-a-token"), tmp_path)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert proc.returncode not in (0, None)
    assert len(lines) == 1, lines
    assert "refused the token" in lines[0] and "Traceback" not in err.decode()


async def test_bot_run_says_connected_as_and_waiting(tmp_path: Path) -> None:
    async with Harness({"tok-good": 7}) as h:
        proc = await _start(_bot_run(h.address, "tok-good"), tmp_path)
        try:
            lines = await _lines_until(proc, "waiting for matches", 60)
        finally:
            proc.kill()
            await proc.wait()
    assert lines and "connected as" in lines[-1] and "bot id 7" in lines[-1] and "waiting for matches" in lines[-1], \
        lines


async def test_bot_run_prints_each_reconnect_attempt_when_the_referee_is_unreachable(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await _start(_bot_run(f"127.0.0.1:{port}", "tok-any"), tmp_path)
    try:
        lines = await _lines_until(proc, "reconnect attempt 2", 60)
    finally:
        proc.kill()
        await proc.wait()
    attempts = [line for line in lines if "reconnect attempt" in line]
    assert len(attempts) >= 2, lines
    assert f"cannot connect to 127.0.0.1:{port}" in attempts[0] and "UNAVAILABLE" in attempts[0]


# -- tournaments ------------------------------------------------------------------------

@pytest.fixture
def cli_env(tmp_path, monkeypatch, database_url: str, redis_base_url: str) -> str:
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_base_url)
    from ladder import db

    db.migrate(database_url)
    return database_url


def _run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_tournament_run_of_an_unknown_tournament_exits_non_zero(cli_env: str, capsys: Any) -> None:
    code, out, err = _run(capsys, "tournament", "run", "9999")
    assert code != 0
    assert "9999" in err and "no tournament" in err
    assert "queued" not in out


def test_tournament_run_of_a_finished_tournament_says_so(cli_env: str, capsys: Any) -> None:
    from ladder import bots, db, tournaments

    pool = db.make_pool(cli_env)
    a, _ = bots.register_bot(pool, "fin-a")
    b, _ = bots.register_bot(pool, "fin-b")
    tid = tournaments.create_tournament(pool, name="done", game="floriferous", bot_ids=[a, b])
    match_ids = tournaments.plan_tournament(pool, tid)
    with db.connection(pool) as conn:  # the matches ended (how is not the point here)
        conn.execute("UPDATE matches SET status = 'aborted_no_show' WHERE id = ANY(%s)", (match_ids,))
    pool.close()
    code, out, _ = _run(capsys, "tournament", "run", str(tid))
    assert code == 0 and "already finished" in out and "queued" not in out


def test_wait_names_the_offline_bots_and_what_happens_next(cli_env: str, capsys: Any, monkeypatch) -> None:
    from ladder import bots, db, tournaments
    from parterre import demo
    from workers import directory

    pool = db.make_pool(cli_env)
    online, _ = bots.register_bot(pool, "here-bot")
    offline, _ = bots.register_bot(pool, "away-bot")
    tid = tournaments.create_tournament(pool, name="wait", game="floriferous", bot_ids=[online, offline])
    tournaments.plan_tournament(pool, tid)
    # one live referee on which only "here-bot" has a stream
    referee = directory.RefereeInfo("r1", "127.0.0.1:1", "127.0.0.1:1", 0,
                                    {online: directory.BotPresence(1, 1, ())})
    monkeypatch.setattr(directory, "read_referees", lambda *a, **k: [referee])
    monkeypatch.setenv("PARTERRE_NO_SHOW_TIMEOUT_MS", "30000")
    monkeypatch.setenv("PARTERRE_MATCH_ATTEMPTS", "3")
    monkeypatch.setenv("PARTERRE_RETRY_DELAY_S", "5")
    with pytest.raises(TimeoutError) as raised:
        demo.wait_for_tournament(pool, tid, timeout_s=0.5)
    pool.close()
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines at the terminal width
    assert f"away-bot (bot {offline})" in out and "here-bot" not in out
    assert "waits 30 s" in out and "aborted_no_show" in out and "at most 3 attempts" in out
    assert "away-bot" in str(raised.value)


def test_unreachable_referee_exit_is_clean_under_ctrl_c(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) during reconnect attempts ends the command without a traceback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(_bot_run(f"127.0.0.1:{port}", "tok-any"), cwd=ROOT, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, env={**os.environ, "PARTERRE_HOME": str(tmp_path)})
    assert proc.stderr is not None
    first = proc.stderr.readline().decode()
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=30)
    assert "reconnect attempt" in first
    assert "Traceback" not in rest.decode(), rest.decode()


def test_matches_text_output_has_a_header(cli_env: str, capsys: Any) -> None:
    """The header names the columns, and each match's line has as many tab-separated fields.
    (Every command's options and defaults in --help: tests/parterre/test_cli_help.py.)"""
    from ladder import bots, db
    from ladder.tournaments import plan_match

    pool = db.make_pool(cli_env)
    a, _ = bots.register_bot(pool, "head-a")
    b, _ = bots.register_bot(pool, "head-b")
    mid = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[a, b], plan_key="cli:matches:header")
    pool.close()
    code, out, _ = _run(capsys, "matches")
    header, *rows = out.splitlines()
    assert code == 0 and header.split("\t") == ["id", "game", "status", "seats (bot#rank(score))"]
    (row,) = [r.split("\t") for r in rows if r.split("\t")[0] == str(mid)]
    assert len(row) == 4 and row[1].startswith("floriferous(") and row[2] == "planned"
    assert "head-a#" in row[3] and "head-b#" in row[3]


def test_matches_json_writes_times_as_the_web_api_does(cli_env: str, capsys: Any) -> None:
    """``parterre matches --json`` and ``GET /api/matches`` of the same match: every time field the
    same text (RFC 3339, ``T`` between date and time), so a script can read either."""
    import json
    import warnings

    from fixtures.ladder_helpers import play

    from ladder import bots, db
    from ladder.tournaments import plan_match
    from web import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    pool = db.make_pool(cli_env)
    a, _ = bots.register_bot(pool, "times-a")
    b, _ = bots.register_bot(pool, "times-b")
    mid = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[a, b], plan_key="cli:matches:times")
    play(pool, mid, [1, 2])
    code, out, _ = _run(capsys, "matches", "--json")
    (cli,) = [m for m in json.loads(out) if m["id"] == mid]
    api = TestClient(create_app(pool=pool)).get(f"/api/matches/{mid}").json()
    pool.close()
    times = [k for k, v in cli.items() if isinstance(v, str) and v[:4].isdigit() and v[4:5] == "-"]
    assert code == 0 and "finished_at" in times
    for key in times:
        assert "T" in cli[key] and cli[key] == api[key], key
