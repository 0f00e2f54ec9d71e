"""A competition's whole life over HTTP, against a stack started with ``parterre up`` (docs/competitions.md).

An organiser creates a competition through the API; four accounts enter a bot
each (one hosted: uploaded with ``parterre bot upload --wait`` and validated on
the workers; three connected with ``parterre bot run``); the beat's competition
tick plays the season; the deadline locks the versions; a fifth account's late
entry is refused; the hosted bot's owner uploads a second version after the
deadline, which the ladder may use but the competition must not; the final
evaluation runs on the workers and publishes a frozen table with intervals; a
disqualification recomputes it; the dataset downloads and ``parterre replay
verify`` accepts every file.

Oracles outside the code under test: the schedule set by the test and the wall
clock (the deadline passes for real: the stack runs in other processes, whose
clock the test cannot move), the recorded matches read back from the public
dataset (every final-evaluation seat of the hosted bot recorded the version
locked at the deadline, not the one active by then), the re-simulation of
``parterre replay verify``, and the HTTP status codes a client sees.

Marked ``long_e2e``: about three minutes, run by ``make test-long`` (a CI stage of
its own), not by ``make test``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import zstandard
from fixtures.up_stack import running_up, up_env
from test_hosted import BOTS, manifest
from test_participants_http_e2e import _wait

from parterre.commands.remote import RemoteError, call

psutil = pytest.importorskip("psutil")

pytestmark = [pytest.mark.e2e, pytest.mark.long_e2e]

PASSWORD = "a long enough password"
SEASON_S = 75  # entries open this long: validation of the hosted bot, then season rounds every 2 s
LOCKED_S = 60  # from the deadline to the final evaluation: time to validate a second version
TICK_S = "2"


@pytest.fixture
def stack(database_url: str, redis_base_url: str, tmp_path: Path) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """``parterre up`` with the beat's competition and hosted ticks every 2 s; its state file and environment."""
    env = up_env(database_url, redis_base_url, tmp_path / "home", "parterre-competition-test",
                 PARTERRE_COMPETITION_PERIOD_S=TICK_S, PARTERRE_HOSTED_PERIOD_S=TICK_S)
    with running_up(env, tmp_path / "up.out", "--no-house") as (_, state):
        yield state, env


def _status(call_it: Any) -> int:
    try:
        call_it()
    except RemoteError as exc:
        return exc.status
    raise AssertionError("the request was accepted")


def test_a_competition_from_creation_to_a_frozen_final_table_over_http(stack: Any, tmp_path: Path) -> None:
    state, env = stack
    base, referee = state["web"], state["referee"]

    def api(method: str, path: str, body: Any = None, **kw: Any) -> Any:
        return call(method, path, body, base_url=base, **kw)

    def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "parterre.cli", *args], env=env, capture_output=True,
                              text=True, timeout=timeout)

    people = ("orla", "ann", "bob", "cat", "dan", "eve")
    for name in people[1:]:  # five sign-ups: what one address may make in an hour (ladder/accounts.py)
        api("POST", "/api/accounts", {"username": name, "password": PASSWORD})
    made = subprocess.run([sys.executable, "-m", "parterre.cli", "admin", "create", "orla"], capture_output=True,
                          text=True, timeout=120, env={**env, "PARTERRE_ADMIN_PASSWORD": PASSWORD})
    assert made.returncode == 0, made.stderr
    assert cli("admin", "role", "orla", "organiser").returncode == 0  # the operator makes her an organiser
    tokens = {name: api("POST", "/api/tokens", {"scopes": ["bot:manage", "tournament:create"]},
                        basic=(name, PASSWORD))["token"] for name in people}

    now = datetime.now(UTC)
    body: dict[str, Any] = {"name": "Winter cup", "game": "floriferous", "player_counts": [2], "entry_mode": "any",
            "deadline_at": (now + timedelta(seconds=SEASON_S)).isoformat(),
            "final_at": (now + timedelta(seconds=SEASON_S + LOCKED_S)).isoformat(),
            "time_control": {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 300},
            "final_budget": 36, "final_max_batches": 2,
            "description": "# Winter cup\nBeat the **greedy** bots.", "rules": "One bot per account."}
    assert _status(lambda: api("POST", "/api/competitions", body, token=tokens["ann"])) == 403  # not an organiser
    bad = {**body, "final_at": (now - timedelta(days=1)).isoformat()}
    assert _status(lambda: api("POST", "/api/competitions", bad, token=tokens["orla"])) in (400, 422)
    cid = api("POST", "/api/competitions", body, token=tokens["orla"])["id"]
    assert api("GET", f"/api/competitions/{cid}")["status"] == "open"

    # ann's bot is hosted: created, then a version uploaded and validated on the workers
    bots = {owner: api("POST", "/api/bots", {"name": f"{owner}-bot", "games": ["floriferous"]},
                       token=tokens[owner]) for owner in ("ann", "bob", "cat", "dan", "eve")}

    def upload(p: str) -> None:
        folder = tmp_path / f"ann-bot-{p}"
        folder.mkdir()
        (folder / "parterre-bot.toml").write_bytes(manifest("python3.11", ["python3.11", "greedy.py", p],
                                                            ["floriferous"]))
        (folder / "greedy.py").write_bytes((BOTS / "greedy.py").read_bytes())
        done = cli("bot", "upload", str(bots["ann"]["id"]), str(folder), "--url", base, "--token", tokens["ann"],
                   "--wait", "--poll", "1", "--timeout", "200")
        assert done.returncode == 0, done.stdout + done.stderr

    upload("0.2")
    runners = [subprocess.Popen([sys.executable, "-m", "parterre.cli", "bot", "run", kind,
                                 f"--token={bots[owner]['token']}", "--address", referee, "--name", f"{owner}-bot"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for owner, kind in (("bob", "greedy"), ("cat", "random"), ("dan", "random"), ("eve", "random"))]
    try:
        assert _status(lambda: api("POST", f"/api/competitions/{cid}/entries", {"bot_id": bots["bob"]["id"]},
                                   token=tokens["cat"])) == 404  # another account's bot: as if it did not exist
        for owner in ("ann", "bob", "cat", "dan"):
            api("POST", f"/api/competitions/{cid}/entries", {"bot_id": bots[owner]["id"]}, token=tokens[owner])

        season = _wait("season matches", lambda: (t := api("GET", f"/api/competitions/{cid}/table"))["matches"] >= 6
                       and t, SEASON_S)
        assert season["kind"] == "season" and {r["bot_id"] for r in season["rows"]} == {
            bots[o]["id"] for o in ("ann", "bob", "cat", "dan")}

        # the deadline passes: the late entry is refused, the versions are locked
        deadline_at = datetime.fromisoformat(body["deadline_at"])
        time.sleep(max(0.0, (deadline_at - datetime.now(UTC)).total_seconds()) + 0.5)
        assert _status(lambda: api("POST", f"/api/competitions/{cid}/entries", {"bot_id": bots["eve"]["id"]},
                                   token=tokens["eve"])) == 409

        def locked() -> Any:
            c = api("GET", f"/api/competitions/{cid}")
            return c if c["locked_at"] and all(e["locked_version"] for e in c["entrant_list"]) else None

        detail = _wait("the versions locked", locked, 60)
        hosted_entry = next(e for e in detail["entrant_list"] if e["bot_id"] == bots["ann"]["id"])
        assert hosted_entry["locked_version_id"] is not None
        upload("0.0")  # a second version after the deadline (stronger, so it passes the SPRT): not the final's
        final_at = datetime.fromisoformat(body["final_at"])
        assert datetime.now(UTC) < final_at, "the second version was validated too late for this test's schedule"

        final = _wait("the final table", lambda: (t := api("GET", f"/api/competitions/{cid}/table"))["kind"] == "final"
                      and t, 240)
        assert api("GET", f"/api/competitions/{cid}")["status"] == "final"
        assert final["params"] and final["stop_reason"] and final["matches"] > 0
        placed = [r for r in final["rows"] if r["standing"] == "placed"]
        assert len(placed) == 4 and all(r["low"] is not None and r["low"] <= r["rating"] <= r["high"] for r in placed)
        evaluation = api("GET", f"/api/competitions/{cid}/evaluation")
        assert evaluation["status"] == "finished" and evaluation["seed"] and evaluation["matches_played"] > 0
        assert evaluation["matches_played"] <= body["final_budget"]

        # a disqualification recomputes the frozen table; only the organiser may
        assert _status(lambda: api("POST", f"/api/competitions/{cid}/disqualify",
                                   {"bot_id": bots["cat"]["id"], "reason": "x"}, token=tokens["bob"])) == 403
        api("POST", f"/api/competitions/{cid}/disqualify", {"bot_id": bots["bob"]["id"], "reason": "shared code"},
            token=tokens["orla"])
        again = api("GET", f"/api/competitions/{cid}/table")
        assert again["kind"] == "final" and again["recomputed_reason"]
        rows = {r["bot_id"]: r for r in again["rows"]}
        assert rows[bots["bob"]["id"]]["standing"] == "disqualified" and rows[bots["bob"]["id"]]["place"] == "-"
        assert sorted(r["place_low"] for r in again["rows"] if r["standing"] == "placed")[0] == 1
        assert max(r["place_high"] for r in again["rows"] if r["standing"] == "placed") == 3

        # the dataset: every file verifies
        with urllib.request.urlopen(base + f"/api/competitions/{cid}/dataset", timeout=120) as resp:
            assert resp.status == 200
            tar_bytes = resp.read()
        out = tmp_path / "dataset"
        with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
            tar.extractall(out, filter="data")
        folder = next(out.rglob("manifest.json")).parent  # the tar holds one folder
        verified = cli("replay", "verify", str(folder))
        assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
        # the hosted bot played the final evaluation with its locked version, though another was active by then
        versions = set()
        for path in (folder / "matches").glob("*.json.zst"):
            record = json.loads(zstandard.ZstdDecompressor().decompress(path.read_bytes()))
            if f"competition:{cid}:e" in record["match"]["plan_key"]:
                versions |= {p["version"] for p in record["replay"]["players"] if p["bot_id"] == bots["ann"]["id"]}
        assert versions == {hosted_entry["locked_version"]}, versions
        assert hosted_entry["locked_version"] == "1"
    finally:
        for r in runners:
            r.kill()
            r.wait()

