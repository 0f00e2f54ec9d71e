"""A participant's whole journey through HTTP alone, against a stack started with ``parterre up``.

See docs/participants.md.

Sign up, get an API token, create a bot, connect it with its token (the SDK, through
``parterre bot run``), challenge a house bot to a rated match, see it finished in the
owner's match list with verdicts and the seat view; rotate the token and see the old one
refused by the referee while the bot keeps its id and rating. Every step but the bot's own
gRPC stream is an HTTP call (``parterre.commands.remote.call``, the client of ``parterre remote``).
Run with ``PARTERRE_TEST_EMBEDDED=1`` on a shared machine (private embedded servers).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.request
from typing import Any

import grpc
from test_referee_auth import hello, raw_connect
from test_up import stack_env, up  # noqa: F401 - fixtures

from parterre.commands.remote import RemoteError, call

PASSWORD = "a long enough password"


def _wait(what: str, probe: Any, timeout_s: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = probe()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_participant_journey_over_http(up, stack_env) -> None:  # noqa: F811 - pytest fixtures
    proc, state, out = up
    base, referee = state["web"], state["referee"]
    assert base, state

    def api(method: str, path: str, body: Any = None, **kw: Any) -> Any:
        return call(method, path, body, base_url=base, **kw)

    assert api("POST", "/api/accounts", {"username": "zoe", "password": PASSWORD})["role"] == "participant"
    token = api("POST", "/api/tokens", {"scopes": ["bot:manage", "challenge"]}, basic=("zoe", PASSWORD))["token"]
    bot = api("POST", "/api/bots", {"name": "zoe-random", "games": ["floriferous"]}, token=token)
    house = _wait("a house bot", lambda: api("GET", "/api/house-bots?game=floriferous"))
    runner = subprocess.Popen(
        [sys.executable, "-m", "parterre.cli", "bot", "run", "random", f"--token={bot['token']}",
         "--address", referee, "--name", "zoe-random"],
        env=stack_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        match_id = api("POST", "/api/challenges", {"game": "floriferous", "bots": [bot["id"], house[0]["bot_id"]],
                                                    "rated": True}, token=token)["match_id"]

        def finished() -> Any:
            rows = api("GET", f"/api/bots/{bot['id']}/matches", token=token)
            row = next((r for r in rows if r["match_id"] == match_id), None)
            return row if row and row["status"] == "finished" else None

        row = _wait("the challenge to finish", finished)
        seats = {s["bot_id"]: s for s in row["seats"]}
        assert seats[bot["id"]]["mine"] and not seats[house[0]["bot_id"]]["mine"]
        assert all(s["verdict"] == "normal" and s["reason"] == "played to the end" for s in row["seats"])
        assert seats[bot["id"]]["version"]  # what the SDK announced in Hello
        view = api("GET", f"/api/matches/{match_id}/seat-view", token=token)
        assert view["bot_id"] == bot["id"] and len(view["steps"]) > 10
        assert any(s["mine"] for s in view["steps"])
        public = api("GET", f"/api/bots/{bot['id']}")
        rating = [r for r in public["ratings"] if r["game"] == "floriferous"][0]
        elo, games = rating["elo"], rating["games"]
        assert elo != 1500.0  # rated: the result moved it

        rotated = api("POST", f"/api/bots/{bot['id']}/token", token=token)
        assert rotated["id"] == bot["id"] and rotated["token"] != bot["token"]
        # The old token: a running bot with it is cut off within the referee's recheck, a new Hello refused.
        runner.wait(timeout=30)
        said = runner.stdout.read() if runner.stdout else ""
        assert runner.returncode != 0 and "refused the token" in said, said[-2000:]  # one line, no traceback

        async def connect(tok: str) -> Any:
            return await raw_connect(referee, hello(tok), read=2)

        _, code = asyncio.run(connect(bot["token"]))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        got, _ = asyncio.run(connect(rotated["token"]))
        assert got[0].welcome.bot_id == bot["id"]
        public = api("GET", f"/api/bots/{bot['id']}")
        after = [r for r in public["ratings"] if r["game"] == "floriferous"][0]
        # the rotation moved no rating: only a rated match does (the continuous ladder may have met the bot)
        assert after["elo"] == elo or after["games"] > games, (after, elo, games)
        try:
            api("POST", f"/api/bots/{bot['id']}/token", token="ptk_" + "x" * 43)
        except RemoteError as exc:
            assert exc.status == 401
        else:
            raise AssertionError("a made-up API token was accepted")
    finally:
        if runner.poll() is None:
            runner.kill()
        runner.wait()


def test_gauntlet_and_duplicate_created_and_entered_over_http(up, stack_env) -> None:  # noqa: F811 - pytest fixtures
    """Organiser and participants through the API only; ``parterre beat`` closes the windows, the workers play."""
    from datetime import UTC, datetime, timedelta

    proc, state, out = up
    base, referee = state["web"], state["referee"]

    def api(method: str, path: str, body: Any = None, **kw: Any) -> Any:
        return call(method, path, body, base_url=base, **kw)

    tokens = {}
    for name in ("olga", "yan", "zed"):
        api("POST", "/api/accounts", {"username": name, "password": PASSWORD})
    promoted = subprocess.run([sys.executable, "-m", "parterre.cli", "admin", "role", "olga", "organiser"],
                              env=stack_env, capture_output=True, text=True, timeout=120)
    assert promoted.returncode == 0, promoted.stderr
    for name in ("olga", "yan", "zed"):
        tokens[name] = api("POST", "/api/tokens", {"scopes": ["bot:manage", "tournament:create"]},
                           basic=(name, PASSWORD))["token"]
    bots = {}
    # one bot per account in a tournament (docs/faults.md S-21): the organiser's candidate, two others
    for owner, name in (("olga", "olga-a"), ("zed", "zed-1"), ("yan", "yan-1")):
        bots[name] = api("POST", "/api/bots", {"name": name, "games": ["floriferous"]}, token=tokens[owner])
    runners = [subprocess.Popen([sys.executable, "-m", "parterre.cli", "bot", "run", "random",
                                 f"--token={b['token']}", "--address", referee, "--name", n],
                                env=stack_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for n, b in bots.items()]
    try:
        refused = None
        try:
            api("POST", "/api/tournaments", {"name": "not mine", "game": "floriferous"}, token=tokens["yan"])
        except RemoteError as exc:
            refused = exc.status
        assert refused == 403  # participants do not organise
        deadline = (datetime.now(UTC) + timedelta(seconds=12)).isoformat()
        common = {"game": "floriferous", "player_counts": [2], "rounds": 1, "entry_deadline": deadline,
                  "time_control": {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 300}}
        gauntlet = api("POST", "/api/tournaments", {"name": "open gauntlet", "format": "gauntlet",
                                                     "candidate_bot_id": bots["olga-a"]["id"], **common},
                       token=tokens["olga"])["id"]
        duplicate = api("POST", "/api/tournaments", {"name": "open duplicate", "format": "duplicate", **common},
                        token=tokens["olga"])["id"]
        for tid, entrants in ((gauntlet, ("zed-1", "yan-1")), (duplicate, ("olga-a", "zed-1", "yan-1"))):
            for name in entrants:
                owner = name.partition("-")[0]
                api("POST", f"/api/tournaments/{tid}/entries", {"bot_id": bots[name]["id"]}, token=tokens[owner])
        try:  # another's bot cannot be entered
            api("POST", f"/api/tournaments/{gauntlet}/entries", {"bot_id": bots["olga-a"]["id"]}, token=tokens["yan"])
        except RemoteError as exc:
            assert exc.status == 404
        else:
            raise AssertionError("yan entered olga's bot")

        def complete(tid: int) -> Any:
            table = api("GET", f"/api/tournaments/{tid}/table")
            return table if table["complete"] else None

        g = _wait("the gauntlet's final table", lambda: complete(gauntlet), 300)
        assert g["format"] == "gauntlet" and g["gauntlet"]["candidate_id"] == bots["olga-a"]["id"]
        assert {r["bot_id"] for r in g["gauntlet"]["rows"]} == {bots["zed-1"]["id"], bots["yan-1"]["id"]}
        d = _wait("the duplicate's final table", lambda: complete(duplicate), 300)
        assert d["format"] == "duplicate" and d["duplicate"]["deals"]
        assert {r["bot_id"] for r in d["standings"]} == {b["id"] for b in bots.values()}
        for tid in (gauntlet, duplicate):
            page = urllib.request.urlopen(f"{base}/tournaments/{tid}", timeout=30).read().decode()
            assert "zed-1" in page and "yan-1" in page
    finally:
        for r in runners:
            r.kill()
            r.wait()
