"""``parterre tournament create|enter|list|show``, ``bot list`` and ``challenge create|show|list``.

See docs/participants.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from parterre.cli import main
from parterre.commands.common import CliError
from parterre.commands.tournament import parse_deadline


@pytest.fixture
def cli_env(tmp_path, monkeypatch, database_url: str) -> str:
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    return database_url


def _run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_parse_deadline() -> None:
    now = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)
    assert parse_deadline("+90s", now) == now + timedelta(seconds=90)
    assert parse_deadline("+10m", now) == now + timedelta(minutes=10)
    assert parse_deadline("+2h", now) == now + timedelta(hours=2)
    assert parse_deadline("+30", now) == now + timedelta(seconds=30)
    assert parse_deadline("2026-12-01T21:00+00:00") == datetime(2026, 12, 1, 21, 0, tzinfo=UTC)
    for bad in ("tomorrow", "2026-12-01T21:00", "+5y"):
        with pytest.raises(CliError):
            parse_deadline(bad)


def test_tournament_commands(cli_env: str, capsys: Any) -> None:
    from ladder import bots, db
    from ladder.house import ensure_house_bot

    pool = db.make_pool(cli_env)
    db.migrate(cli_env)
    for name in ("cand", "a", "b"):
        bots.register_bot(pool, name)
    ensure_house_bot(pool, "random", ["floriferous", "flowar", "lafleur"])
    pool.close()

    code, out, err = _run(capsys, "tournament", "create", "--game", "floriferous", "--format", "gauntlet",
                          "--candidate", "cand", "--bots", "a,b")
    assert code == 0, err
    gauntlet = int(out.strip())
    code, out, err = _run(capsys, "tournament", "create", "--game", "floriferous", "--format", "duplicate",
                          "--entry-deadline", "+1h", "--name", "open dup")
    assert code == 0, err
    window = int(out.strip())
    assert _run(capsys, "tournament", "enter", str(window), "house-random")[0] == 0
    code, _, err = _run(capsys, "tournament", "enter", str(window), "house-random")
    assert code == 2 and "already entered" in err
    code, _, err = _run(capsys, "tournament", "enter", str(gauntlet), "a")
    assert code == 2 and "no entry window" in err
    code, _, err = _run(capsys, "tournament", "create", "--game", "floriferous", "--format", "gauntlet",
                        "--bots", "a,b")
    assert code == 2 and "--candidate" in err
    code, _, err = _run(capsys, "tournament", "create", "--game", "floriferous")
    assert code == 2 and "--bots" in err

    code, out, _ = _run(capsys, "tournament", "list")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].split("\t")[:5] == [str(window), "open dup", "floriferous", "duplicate", "open"]
    assert "entries until" in lines[0] and lines[1].split("\t")[3:5] == ["gauntlet", "not_started"]
    listed = json.loads(_run(capsys, "tournament", "list", "--json")[1])
    assert [t["entrants"] for t in listed] == [1, 3]

    code, out, _ = _run(capsys, "tournament", "show", str(gauntlet))
    assert code == 0 and "gauntlet: cand against each pool bot" in out and "\na\t0\t0" in out
    shown = json.loads(_run(capsys, "tournament", "show", str(window), "--json")[1])
    assert shown["status"] == "open" and shown["entrants"] == 1 and shown["duplicate"]["deals"] == []
    assert _run(capsys, "tournament", "show", "999999")[0] == 2

    code, out, _ = _run(capsys, "bot", "list")
    assert code == 0 and "house-random" in out and "house bot (floriferous, flowar, lafleur)" in out
    house = json.loads(_run(capsys, "bot", "list", "--house", "--json")[1])
    assert [b["name"] for b in house] == ["house-random"]


def test_challenge_commands(cli_env: str, capsys: Any) -> None:
    from ladder import bots, db

    db.migrate(cli_env)
    pool = db.make_pool(cli_env)
    for name in ("me", "you"):
        bots.register_bot(pool, name)
    pool.close()
    code, out, err = _run(capsys, "challenge", "create", "--game", "floriferous(players=2)", "--bots", "me,you",
                          "--casual", "--expires", "60")
    assert code == 0, err
    match_id = int(out.strip())
    code, out, _ = _run(capsys, "challenge", "show", str(match_id))
    assert code == 0 and out.split("\t")[2:5] == ["casual", "me, you", "waiting\n"]
    assert json.loads(_run(capsys, "challenge", "list", "--json")[1])[0]["match_id"] == match_id
    code, _, err = _run(capsys, "challenge", "create", "--game", "floriferous(players=3)", "--bots", "me,you")
    assert code == 2 and "3 player" in err


def test_challenge_wait_says_when_nothing_handles_challenges(cli_env: str, capsys: Any, monkeypatch: Any) -> None:
    """With no ``parterre beat``, nothing starts or expires a challenge: ``--wait`` waited silently (30 min by
    default). It says at once what it waits for, and gives up with the likely cause once the challenge is
    still waiting well past its expiry (here 1 s + 1 s; by default 30 s, or three challenge periods)."""
    from ladder import bots, db
    from parterre.commands import challenge

    db.migrate(cli_env)
    pool = db.make_pool(cli_env)
    for name in ("me", "you"):
        bots.register_bot(pool, name)
    pool.close()
    monkeypatch.setattr(challenge, "UNHANDLED_AFTER_S", 1.0)
    code, out, err = _run(capsys, "challenge", "create", "--game", "floriferous(players=2)", "--bots", "me,you",
                          "--casual", "--expires", "1", "--wait")
    assert code == 1, (out, err)
    assert "waiting up to 1 s for its bots" in err and "parterre beat" in err
    assert "neither started nor expired" in err and "are `parterre beat` and a `parterre worker` running" in err
    assert out.splitlines()[-1].split("\t")[4] == "waiting"


def test_replay_export_to_a_terminal_escapes_what_an_older_replay_holds(cli_env: str, capsys: Any,
                                                                       monkeypatch: Any) -> None:
    """A replay stored before Hello.bot_name was checked may name a player with bidi or C1 controls:
    printed to a terminal, every non-ASCII character is escaped; to a file or a pipe it is kept as is."""
    import sys

    from ladder import db, read

    db.migrate(cli_env)
    hostile = "evil\u202e\u009b2J"
    monkeypatch.setattr(read, "export_replay", lambda pool, match_id, hold_twins=True: {
        "match": {"id": match_id}, "replay": {"players": [{"name": hostile}]}})
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = _run(capsys, "replay", "export", "1")
    assert code == 0 and out.isascii() and json.loads(out)["replay"]["players"][0]["name"] == hostile
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    code, out, _ = _run(capsys, "replay", "export", "1")
    assert code == 0 and hostile in out
