"""``parterre competition create|list|show|enter|lock|evaluate|disqualify|extend`` (docs/competitions.md).

The commands run against a migrated database on the wall clock (the CLI's ``now``); the schedule is
set relative to it. Oracles: the ids printed, the rows written, and the refusals' words.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fixtures.competition_helpers import account, bot

from parterre.cli import main


@pytest.fixture
def cli_env(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, database_url: str, redis_base_url: str) -> str:
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_base_url)
    return database_url


def _run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_competition_commands(cli_env: str, capsys: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import workers.tasks as tasks
    from ladder import db

    db.migrate(cli_env)
    pool = db.make_pool(cli_env)
    account(pool, "org", role="organiser")
    alice, bob = account(pool, "alice"), account(pool, "bob")
    carol = account(pool, "carol")
    bot(pool, alice, "ana")
    bot(pool, bob, "bea")
    bot(pool, carol, "cid")
    pool.close()
    description = tmp_path / "about.md"
    description.write_text("# Spring cup\n\nBest of the season.\n", encoding="utf-8")

    code, _, err = _run(capsys, "competition", "create", "--name", "cup", "--game", "floriferous",
                        "--organiser", "alice", "--deadline", "+1h", "--entry-mode", "any")
    assert code == 2 and "organiser" in err
    code, _, err = _run(capsys, "competition", "create", "--name", "cup", "--game", "floriferous",
                        "--organiser", "org", "--deadline", "+1h", "--final", "+30m")
    assert code == 2 and "cannot start before the deadline" in err
    code, out, err = _run(capsys, "competition", "create", "--name", "cup", "--game", "floriferous",
                          "--organiser", "org", "--deadline", "+1h", "--final", "+2h", "--entry-mode", "any",
                          "--description-file", str(description), "--budget", "30", "--max-batches", "4")
    assert code == 0, err
    cid = int(out.strip())
    assert _run(capsys, "competition", "enter", str(cid), "ana")[0] == 0
    assert _run(capsys, "competition", "enter", str(cid), "bea")[0] == 0
    assert _run(capsys, "competition", "enter", str(cid), "cid")[0] == 0
    code, _, err = _run(capsys, "competition", "enter", str(cid), "ana")
    assert code == 2 and "already entered" in err
    code, _, err = _run(capsys, "competition", "lock", str(cid))
    assert code == 2 and "lock at its deadline" in err
    code, _, err = _run(capsys, "competition", "evaluate", str(cid))
    assert code == 2 and "starts at" in err

    code, out, _ = _run(capsys, "competition", "list")
    assert code == 0 and out.split("\t")[:5] == [str(cid), "cup", "floriferous", "open", "3 bots"]
    code, out, _ = _run(capsys, "competition", "show", str(cid))
    assert code == 0 and "competition" in out and "ana\talice\t-" in out and "season table (0 matches" in out
    shown = json.loads(_run(capsys, "competition", "show", str(cid), "--json")[1])
    assert shown["competition"]["description"] == "# Spring cup\n\nBest of the season.\n"
    assert [e["name"] for e in shown["entrants"]] == ["ana", "bea", "cid"] and shown["evaluation"] is None

    later = (datetime.now(UTC) + timedelta(hours=3)).isoformat()
    code, out, err = _run(capsys, "competition", "extend", str(cid), "--deadline", "+2h")
    assert code == 0 and "deadline" in out, err
    code, _, err = _run(capsys, "competition", "extend", str(cid), "--deadline", "+90m")
    assert code == 2 and "only moves later" in err
    code, _, err = _run(capsys, "competition", "extend", str(cid), "--deadline", later, "--final", "+1h")
    assert code == 2 and "cannot start before" in err

    code, out, err = _run(capsys, "competition", "disqualify", str(cid), "--bot", "bea", "--reason", "shared code")
    assert code == 0 and "disqualified" in out, err
    code, out, _ = _run(capsys, "competition", "show", str(cid))
    assert "bea\tbob\t-\tdisqualified: shared code" in out and "\nDQ\tbea" in out
    kinds = [e["kind"] for e in json.loads(_run(capsys, "competition", "show", str(cid), "--json")[1])["events"]]
    assert kinds == ["deadline_extended", "disqualified"]

    # the schedule has passed (moved in the database: the CLI reads the wall clock): lock, evaluate
    pool = db.make_pool(cli_env)
    with pool.connection() as conn:
        conn.execute("UPDATE competitions SET opens_at = now() - interval '3 hours', "
                     "deadline_at = now() - interval '2 hours', final_at = now() - interval '1 hour'")
    pool.close()
    assert _run(capsys, "competition", "lock", str(cid))[0] == 0
    queued: list[int] = []
    monkeypatch.setattr(tasks.run_match, "delay", queued.append)
    code, out, err = _run(capsys, "competition", "evaluate", str(cid))
    assert code == 0, err
    assert "final evaluation run 1: running" in out and "seed hidden until it ends" in out
    assert "ana > cid: 0.0 Elo apart in the season, no season gap: expected to share a place" in out
    assert "batch 1: 2 match(es) queued" in out and len(queued) == 2  # one table, both seat orders
    code, out, _ = _run(capsys, "competition", "show", str(cid))
    assert "progress: 1 batch(es), 0/2 matches played" in out and "final table" not in out
    code, out, err = _run(capsys, "competition", "evaluate", str(cid), "--rerun", "--json")
    assert code == 0 and json.loads(out)["evaluation"]["run"] == 2, err
    code, _, err = _run(capsys, "competition", "evaluate", str(cid))
    assert code == 2 and "re-run it" in err
    assert _run(capsys, "competition", "show", "999999")[0] == 2
