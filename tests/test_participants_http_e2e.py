"""A participant's whole journey through HTTP alone, against a stack started with ``parterre up`` (issue 14).

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
        elo = [r for r in public["ratings"] if r["game"] == "floriferous"][0]["elo"]
        assert elo != 1500.0  # rated: the result moved it

        rotated = api("POST", f"/api/bots/{bot['id']}/token", token=token)
        assert rotated["id"] == bot["id"] and rotated["token"] != bot["token"]
        # The old token: a running bot with it is cut off within the referee's recheck, a new Hello refused.
        runner.wait(timeout=30)

        async def connect(tok: str) -> Any:
            return await raw_connect(referee, hello(tok), read=2)

        _, code = asyncio.run(connect(bot["token"]))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        got, _ = asyncio.run(connect(rotated["token"]))
        assert got[0].welcome.bot_id == bot["id"]
        public = api("GET", f"/api/bots/{bot['id']}")
        assert [r for r in public["ratings"] if r["game"] == "floriferous"][0]["elo"] == elo
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
