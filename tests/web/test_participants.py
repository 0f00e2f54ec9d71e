"""Participants (docs/participants.md): accounts, API tokens, owned bots, rotation, owner's view — tried as an attacker.

Each ``test_s*`` is one item of the participants' security list (docs/faults.md S-1...S-8).
The app runs in-process (Starlette's TestClient) over a real, migrated PostgreSQL database;
bot tokens are published to a per-test Redis hash, and the referee's refusal of a rotated
token is checked against a real referee (``referee.testing.Harness``) reading that hash.
Finished matches are played through the engines and recorded with ``record_result``
(tests/fixtures/web_helpers.py), exactly as a worker records a referee's result.
"""

from __future__ import annotations

import json
import logging
import os
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_lib
from fixtures.web_helpers import play_replay

from ladder import accounts as acc
from ladder import make_pool
from ladder.matches import claim_match, record_result
from ladder.tournaments import plan_match
from web import create_app
from web.auth import ParticipantConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def pool(ladder_db: str) -> Iterator[Any]:
    p = make_pool(ladder_db, max_size=6)
    yield p
    p.close()


@pytest.fixture
def rds(redis_base_url: str, redis_prefix: str) -> Iterator[tuple[Any, str]]:
    client = redis_lib.Redis.from_url(redis_base_url)
    key = redis_prefix + "bot_tokens"
    yield client, key
    client.delete(key)
    client.close()


@pytest.fixture
def app(pool: Any, rds: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    with pool.connection() as conn:  # every test starts with no accounts and no attempts
        conn.execute("TRUNCATE auth_events, api_tokens RESTART IDENTITY")
        conn.execute("UPDATE bots SET account_id = NULL")
        conn.execute("DELETE FROM accounts")
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open", redis=rds[0], tokens_key=rds[1])
    return a


@pytest.fixture
def client(app: Any) -> TestClient:
    return TestClient(app, client=("203.0.113.7", 50000))


_n = iter(range(10**6))


def account(client: TestClient, name: str | None = None, scopes: tuple[str, ...] = acc.SCOPES) -> tuple[str, str]:
    """Sign up through the API and make a token; returns (username, token)."""
    name = name or f"user{next(_n)}"
    assert client.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
    r = client.post("/api/tokens", json={"scopes": list(scopes)}, auth=(name, PASSWORD))
    assert r.status_code == 201, r.text
    return name, r.json()["token"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_bot(client: TestClient, token: str, name: str | None = None, **kw: Any) -> dict[str, Any]:
    r = client.post("/api/bots", json={"name": name or f"bot{next(_n)}", "games": ["floriferous"], **kw},
                    headers=bearer(token))
    assert r.status_code == 201, r.text
    return dict(r.json())


def finished_match(pool: Any, bot_ids: list[int], *, timeout_seat: int | None = None,
                   fault_reason: str = "", rejections: list[Any] | None = None) -> int:
    """A floriferous match between ``bot_ids`` played by the engine and recorded like a worker does."""
    mid = plan_match(pool, game_string="floriferous(players=2)", bot_ids=bot_ids, plan_key=f"acc:{next(_n)}")
    spec = claim_match(pool, mid, "acc-tests")
    assert spec is not None
    result = play_replay(spec, [f"n{b}" for b in spec.seat_bot_ids], ["random"] * 2, timeout_seat=timeout_seat)
    replay = json.loads(result["replay_json"])
    replay["players"][0]["version"] = "7.1"
    replay["fault_reasons"] = ["", fault_reason] if timeout_seat == 1 else ["", ""]
    replay["rejections"] = rejections or [[], []]
    result["replay_json"] = json.dumps(replay, sort_keys=True, separators=(",", ":"))
    assert record_result(pool, mid, spec.attempt, result)
    return mid


# -- the happy path --------------------------------------------------------------------


def test_sign_up_token_bot_rotate_and_owner_view(client: TestClient, pool: Any, rds: tuple[Any, str]) -> None:
    redis, key = rds
    _, tok = account(client, "alice")
    me = client.get("/api/account", headers=bearer(tok)).json()
    assert me["username"] == "alice" and me["role"] == "participant"
    bot = new_bot(client, tok, "alice-bot", description="greedy <b>v1</b>", accepts_challenges=True)
    assert len(bot["token"]) == 43
    assert redis.hget(key, acc.api_token_hash(bot["token"])) == str(bot["id"]).encode()
    _, other = account(client, "bob")
    foe = new_bot(client, other, "bob-bot")
    mid = finished_match(pool, [bot["id"], foe["id"]], timeout_seat=1, fault_reason="decision 3: 812.4 ms > 550 ms",
                         rejections=[[{"seq": 5, "code": "DUPLICATE", "reason": "decision 5 was answered", "step": 9}],
                                     []])
    rows = client.get(f"/api/bots/{bot['id']}/matches", headers=bearer(tok)).json()
    assert [m["match_id"] for m in rows] == [mid] and rows[0]["status"] == "finished"
    seats = {s["seat"]: s for s in rows[0]["seats"]}
    assert seats[0]["mine"] and seats[0]["version"] == "7.1" and seats[0]["verdict"] == "normal"
    assert seats[1]["verdict"] == "timeout"
    assert seats[1]["reason"] == ("timeout on decision 3: it took 812.4 ms; the limit was 550 ms "
                                  "(time allowed plus the margin)")
    view = client.get(f"/api/matches/{mid}/seat-view", headers=bearer(tok)).json()
    assert view["seat"] == 0 and view["rejections"][0]["code"] == "DUPLICATE"
    # The oracle: the engine's own observation(0) after every step of the stored replay.
    from games.replay import iter_states
    from ladder import replay_json

    expected = [state.observation(0) for _, state in iter_states(json.loads(replay_json(pool, mid)))]
    assert [s["observation"] for s in view["steps"]] == json.loads(json.dumps(expected))
    # Rotation keeps the id and the rating; the old hash leaves Redis, the new one enters.
    with pool.connection() as conn:
        elo_before = conn.execute("SELECT elo FROM ratings WHERE bot_id = %s", (bot["id"],)).fetchone()[0]
    r = client.post(f"/api/bots/{bot['id']}/token", headers=bearer(tok))
    assert r.status_code == 200 and r.json()["id"] == bot["id"]
    new = r.json()["token"]
    assert redis.hget(key, acc.api_token_hash(bot["token"])) is None
    assert redis.hget(key, acc.api_token_hash(new)) == str(bot["id"]).encode()
    with pool.connection() as conn:
        assert conn.execute("SELECT elo FROM ratings WHERE bot_id = %s", (bot["id"],)).fetchone()[0] == elo_before
    versions = client.get(f"/api/bots/{bot['id']}/versions").json()  # public
    assert [(v["version"], v["game"], v["matches"]) for v in versions] == [("7.1", "floriferous", 1)]
    page = client.get(f"/bots/{bot['id']}").text  # the public bot page shows each version too
    assert "<h2>Versions</h2>" in page and "<td>7.1</td><td>floriferous</td><td>1</td>" in page


def test_reason_in_words_for_each_fault() -> None:
    from web.owner import reason_in_words

    assert reason_in_words("illegal_action", "decision 4: index 9 not in 0..3") == (
        "illegal action on decision 4: it sent index 9, but there were 4 legal actions (0..3)")
    assert reason_in_words("disconnect", "stream lost, not back within 3000 ms (lost after step 12, 3004 ms "
                           "before this verdict)") == (
        "disconnect: the stream ended after step 12, 3.0 s before the verdict and the bot was not back within 3000 ms")
    assert reason_in_words("timeout", "decision 2: no answer within 500 ms + 50 ms margin") == (
        "timeout on decision 2: no answer within 500 ms + 50 ms margin")
    # a reason stored before the referee named the margin apart: its number already includes it
    assert reason_in_words("timeout", "decision 2: no answer within 550 ms") == (
        "timeout on decision 2: no answer within 550 ms (time allowed plus the margin)")


# -- S1: another account's bot, token, seat view, match data (every id, every owner-only route) ----------


def test_s1_other_accounts_things_are_unreachable(client: TestClient, pool: Any) -> None:
    _, mallory = account(client, "mallory")
    _, victim = account(client, "victim")
    vbot = new_bot(client, victim, "victim-bot")
    mbot = new_bot(client, mallory, "mallory-bot")
    mid = finished_match(pool, [vbot["id"], new_bot(client, victim)["id"]])
    victim_tokens = client.get("/api/tokens", headers=bearer(victim)).json()
    h = bearer(mallory)
    b = vbot["id"]
    attempts = [
        ("POST", f"/api/bots/{b}/token", None), ("POST", f"/api/bots/{b}/retire", None),
        ("PATCH", f"/api/bots/{b}/settings", {"accepts_challenges": True}), ("GET", f"/api/bots/{b}/matches", None),
        ("GET", f"/api/matches/{mid}/seat-view", None), ("GET", f"/api/matches/{mid}/seat-view?bot_id={b}", None),
        ("DELETE", f"/api/tokens/{victim_tokens[0]['id']}", None),
        ("POST", "/api/tournaments/1/entries", {"bot_id": b}),
    ]
    for method, path, body in attempts:
        r = client.request(method, path, json=body, headers=h)
        assert r.status_code == 404, (method, path, r.status_code, r.text)
        assert "victim" not in r.text
    # and the ids that do not exist answer the same (no probing)
    assert client.get(f"/api/bots/{10**12}/matches", headers=h).status_code == 404
    # The victim's bot and token still work; Mallory's lists hold only her own things.
    assert client.get(f"/api/bots/{b}/matches", headers=bearer(victim)).status_code == 200
    assert [x["id"] for x in client.get("/api/account/bots", headers=h).json()] == [mbot["id"]]
    assert len(client.get("/api/tokens", headers=h).json()) == 1
    # Pages: same refusals with Mallory's session.
    login(client, "mallory")
    for path in (f"/my/bots/{b}", f"/my/matches/{mid}", f"/my/matches/{mid}?bot_id={b}"):
        assert client.get(path).status_code == 404, path
    csrf = csrf_of(client, "/my/bots")
    for path in (f"/my/bots/{b}/token", f"/my/bots/{b}/retire", f"/my/bots/{b}/settings",
                 f"/account/tokens/{victim_tokens[0]['id']}/revoke"):
        assert client.post(path, data={"csrf": csrf}).status_code == 404, path
    assert client.get(f"/api/bots/{b}/matches", headers=bearer(victim)).status_code == 200  # not retired


def test_s1_challenges_need_own_bot_and_consent(client: TestClient) -> None:
    _, a = account(client)
    _, c = account(client)
    mine = new_bot(client, a)
    shy = new_bot(client, c, accepts_challenges=False)
    other = new_bot(client, c)
    # two bots of someone else: never (even if they accept)
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [shy["id"], other["id"]]},
                    headers=bearer(a))
    assert r.status_code == 403
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine["id"], shy["id"]]}, headers=bearer(a))
    assert r.status_code == 403 and "does not accept challenges" in r.json()["detail"]


# -- S2: revoked or rotated tokens refused by the referee and the API ------------------------


async def test_s2_rotated_bot_token_refused_by_the_referee(client: TestClient, rds: tuple[Any, str],
                                                          redis_base_url: str) -> None:
    import asyncio

    import grpc
    from test_referee_auth import hello, raw_connect

    from bots.reference import RandomBot
    from bots.sdk import AuthenticationError
    from referee.testing import Harness
    from referee.tokens import RedisTokenStore

    _, tok = account(client)
    bot = new_bot(client, tok)
    store = RedisTokenStore(redis_base_url, key=rds[1])
    async with Harness(token_store=store, token_recheck_ms=200, ping_interval_ms=100) as h:
        got, _ = await raw_connect(h.address, hello(bot["token"]))
        assert got[0].welcome.bot_id == bot["id"]
        live = RandomBot()
        task = h.start_bot(live, bot["token"])
        await h.wait_sessions(bot["id"])
        new = client.post(f"/api/bots/{bot['id']}/token", headers=bearer(tok)).json()["token"]
        with pytest.raises(AuthenticationError):  # the live stream with the old token is closed
            await asyncio.wait_for(task, 5)
        _, code = await raw_connect(h.address, hello(bot["token"]), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        got, _ = await raw_connect(h.address, hello(new))
        assert got[0].welcome.bot_id == bot["id"]  # same identity
        # Retiring refuses the new token too.
        assert client.post(f"/api/bots/{bot['id']}/retire", headers=bearer(tok)).json()["retired"]
        _, code = await raw_connect(h.address, hello(new), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert client.post(f"/api/bots/{bot['id']}/token", headers=bearer(tok)).status_code == 409


async def test_s11_a_disabled_accounts_bots_stop_playing_until_it_is_enabled(
        client: TestClient, pool: Any, rds: tuple[Any, str], redis_base_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack (/tmp/attack/disabled_account.py): after ``parterre admin disable eve`` her API token was
    401 but her bots' referee tokens still connected. Now the command (run here in-process on this test's
    database and Redis hash) withdraws every token of her bots — an outside bot's live stream is closed
    within the referee's recheck, a new Hello is UNAUTHENTICATED, her hosted bot's platform credential
    leaves the hash and it plays no rated match, and the hosted tick's sync does not bring them back;
    ``parterre admin approve`` gives the same tokens back. Oracle: the referee's answers and HGET of
    sha256 computed here."""
    import argparse
    import asyncio
    import hashlib
    import io
    import tarfile

    import grpc
    from test_referee_auth import hello, raw_connect

    from bots.reference import RandomBot
    from bots.sdk import AuthenticationError
    from ladder import bots as ladder_bots
    from ladder import submissions as sub
    from parterre.commands import admin, common
    from referee.testing import Harness
    from referee.tokens import RedisTokenStore

    r, key = rds
    name, tok = account(client, "eve")
    outside, hosted = new_bot(client, tok), new_bot(client, tok)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in (("parterre-bot.toml", b'runtime = "python3.11"\ncommand = ["python3.11", "b.py"]\n'),
                           ("b.py", b"print(0)\n")):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    version = sub.create_version(pool, hosted["id"], buf.getvalue())
    sub.set_verdict(pool, version.id, "active")
    secret = "h" * 40
    assert sub.activate_credential(pool, version.id, secret, r, key)
    cred = hashlib.sha256(sub.hosted_token(secret, version.id, version.sha256).encode()).hexdigest()
    assert r.hget(key, cred) == str(hosted["id"]).encode()

    monkeypatch.setattr(common, "services", lambda need_redis=False: None)
    monkeypatch.setattr(common, "pool", lambda services, migrate=False: pool)
    monkeypatch.setattr(common, "redis_client", lambda services: r)
    monkeypatch.setattr(ladder_bots, "TOKENS_KEY", key)
    store = RedisTokenStore(redis_base_url, key=rds[1])
    async with Harness(token_store=store, token_recheck_ms=200, ping_interval_ms=100) as h:
        live = RandomBot()
        task = h.start_bot(live, outside["token"])
        await h.wait_sessions(outside["id"])
        assert admin._status(argparse.Namespace(username=name), "disabled") == 0
        with pytest.raises(AuthenticationError):  # the live stream is closed
            await asyncio.wait_for(task, 5)
        _, code = await raw_connect(h.address, hello(outside["token"]), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        _, code = await raw_connect(h.address, hello(hosted["token"]), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert r.hget(key, cred) is None and sub.playing_versions(pool, [hosted["id"]]) == {}
        assert client.get("/api/account", headers=bearer(tok)).status_code == 401
        # The hosted tick's sync and a full rewrite of the hash keep them out.
        sub.sync_credentials(pool, r, key)
        ladder_bots.publish_tokens(pool, r, key)
        assert r.hget(key, cred) is None
        assert r.hget(key, hashlib.sha256(outside["token"].encode()).hexdigest()) is None
        _, code = await raw_connect(h.address, hello(outside["token"]), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        # Enabled again: the same tokens work (the hosted bot's ordinary token stays hidden behind its credential).
        assert admin._status(argparse.Namespace(username=name), "active") == 0
        got, _ = await raw_connect(h.address, hello(outside["token"]))
        assert got[0].welcome.bot_id == outside["id"]
        assert r.hget(key, cred) == str(hosted["id"]).encode()
        assert sub.playing_versions(pool, [hosted["id"]]).keys() == {hosted["id"]}
        _, code = await raw_connect(h.address, hello(hosted["token"]), read=2)
        assert code == grpc.StatusCode.UNAUTHENTICATED


def test_s2_revoked_api_token_refused(client: TestClient) -> None:
    _, tok = account(client)
    tokens = client.get("/api/tokens", headers=bearer(tok)).json()
    assert client.delete(f"/api/tokens/{tokens[0]['id']}", headers=bearer(tok)).status_code == 204
    r = client.post("/api/bots", json={"name": "late-bot"}, headers=bearer(tok))
    assert r.status_code == 401
    assert client.get("/api/account", headers=bearer(tok)).status_code == 401
    assert client.get("/api/account", headers=bearer("ptk_" + "A" * 43)).status_code == 401
    assert client.get("/api/account").status_code == 401


def test_s2_scopes_are_enforced(client: TestClient) -> None:
    _, tok = account(client, scopes=("challenge",))
    assert client.post("/api/bots", json={"name": "nope"}, headers=bearer(tok)).status_code == 403
    r = client.post("/api/tournaments", json={"name": "x", "game": "floriferous"}, headers=bearer(tok))
    assert r.status_code == 403
    _, org = account(client, scopes=("tournament:create",))
    r = client.post("/api/tournaments", json={"name": "x", "game": "floriferous"}, headers=bearer(org))
    assert r.status_code == 403 and "organisers" in r.json()["detail"]


# -- S3: CSRF -------------------------------------------------------------------------------


def login(client: TestClient, username: str) -> None:
    csrf = csrf_of(client, "/login")
    r = client.post("/login", data={"csrf": csrf, "username": username, "password": PASSWORD}, follow_redirects=False)
    assert r.status_code == 303, r.text


def csrf_of(client: TestClient, path: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert m, path
    return m.group(1)


def test_s3_forms_without_the_csrf_token_are_refused(client: TestClient, pool: Any) -> None:
    account(client, "carol")
    assert client.post("/login", data={"username": "carol", "password": PASSWORD}).status_code == 403
    login(client, "carol")
    good = csrf_of(client, "/my/bots")
    for data in ({}, {"csrf": ""}, {"csrf": good[:-1] + ("A" if good[-1] != "A" else "B")}):
        r = client.post("/my/bots", data={**data, "name": "csrf-bot"})
        assert r.status_code == 403, data
        assert client.post("/account/tokens", data={**data, "scopes": "bot:manage"}).status_code == 403
        assert client.post("/logout", data=data).status_code == 403
    with pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM bots WHERE name = 'csrf-bot'").fetchone()[0] == 0
    r = client.post("/my/bots", data={"csrf": good, "name": "csrf-bot"})
    assert r.status_code == 201
    # A cookie never authenticates the API (so the API needs no CSRF token).
    assert client.post("/api/bots", json={"name": "cookie-bot"}).status_code == 401
    # The session cookie is signed, HttpOnly and SameSite.
    fresh = TestClient(client.app, client=("203.0.113.9", 1))
    cookie = fresh.get("/login").headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    fresh.cookies.set("parterre_session", "eyJhaWQiOiAxfQ==.forged.sig")
    assert fresh.get("/my/bots", follow_redirects=False).status_code == 303


# -- S4: password guessing slowed and logged ----------------------------------------------------


def test_s4_password_guessing_is_limited_and_logged(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    account(client, "dave")
    caplog.set_level(logging.WARNING, logger="ladder.accounts")
    codes = [client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("dave", f"guess-{i}-xxxx")).status_code
             for i in range(acc.LOGIN_FAILURES_PER_ACCOUNT + 2)]
    assert codes[: acc.LOGIN_FAILURES_PER_ACCOUNT] == [401] * acc.LOGIN_FAILURES_PER_ACCOUNT
    assert codes[acc.LOGIN_FAILURES_PER_ACCOUNT:] == [429, 429]
    # From the guessing address even the right password waits for the window ...
    r = client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("dave", PASSWORD))
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    # ... but the stranger has not locked the owner out: from another address dave logs in.
    r = TestClient(client.app, client=("198.51.100.1", 1)).post(
        "/api/tokens", json={"scopes": ["challenge"]}, auth=("dave", PASSWORD))
    assert r.status_code == 201
    failed = [rec for rec in caplog.records if "failed login" in rec.getMessage()]
    assert len(failed) == acc.LOGIN_FAILURES_PER_ACCOUNT and "dave" in failed[0].getMessage()
    assert not any("guess-" in rec.getMessage() for rec in caplog.records)
    # Per address: many usernames from one address.
    for i in range(acc.LOGIN_FAILURES_PER_ADDRESS):
        client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=(f"nobody{i}", "wrong-password"))
    account_free = TestClient(client.app, client=("203.0.113.7", 2))
    r = account_free.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("someone-else", "x" * 12))
    assert r.status_code == 429


def test_s4_guessing_from_many_addresses_meets_the_account_wide_cap(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    account(client, "erin")
    monkeypatch.setattr(acc, "LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS", 6)
    codes = [TestClient(client.app, client=(f"192.0.2.{i}", 1)).post(
        "/api/tokens", json={"scopes": ["challenge"]}, auth=("erin", f"guess-{i}-xxxx")).status_code
        for i in range(8)]
    # Each address guessed once (under the per-address caps); the sum meets the account-wide cap.
    assert codes == [401] * 6 + [429, 429]
    r = TestClient(client.app, client=("192.0.2.200", 1)).post(
        "/api/tokens", json={"scopes": ["challenge"]}, auth=("ERIN", PASSWORD))
    assert r.status_code == 429, "the account-wide cap ignores the case of the username"


@pytest.mark.parametrize("name", ["a\x00b", "\x00", "x" * 5000, "dave\x00"])
def test_s4_a_malformed_username_is_a_plain_failed_login(client: TestClient, name: str) -> None:
    account(client, "dave")
    r = client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=(name, PASSWORD))
    assert r.status_code in (400, 401), (r.status_code, r.text)
    assert client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("dave", PASSWORD)).status_code == 201


def test_s4_sign_up_is_rate_limited_per_address(client: TestClient) -> None:
    codes = [client.post("/api/accounts", json={"username": f"spam{i}", "password": PASSWORD}).status_code
             for i in range(acc.SIGNUPS_PER_ADDRESS + 1)]
    assert codes == [201] * acc.SIGNUPS_PER_ADDRESS + [429]


def test_s4_ipv6_sign_ups_count_per_64_network(client: TestClient) -> None:
    """Addresses of one IPv6 /64 share one budget (a subscriber has the whole /64, RFC 6177); another
    /64 and the IPv4-mapped form of an IPv4 address count as themselves."""
    def from_(host: str, name: str) -> int:
        return TestClient(client.app, client=(host, 1)).post(
            "/api/accounts", json={"username": name, "password": PASSWORD}).status_code
    codes = [from_(f"2001:db8:1:2::{i + 1:x}", f"six{i}") for i in range(acc.SIGNUPS_PER_ADDRESS)]
    assert codes == [201] * acc.SIGNUPS_PER_ADDRESS
    assert from_("2001:db8:1:2:ffff:ffff:ffff:ffff", "six-more") == 429  # the same /64, another address
    assert from_("2001:db8:1:3::1", "six-next-net") == 201  # the neighbouring /64
    # ::ffff:192.0.2.1 is 192.0.2.1: its budget is the IPv4 address's.
    codes = [from_("192.0.2.1", f"four{i}") for i in range(acc.SIGNUPS_PER_ADDRESS)]
    assert codes == [201] * acc.SIGNUPS_PER_ADDRESS
    assert from_("::ffff:192.0.2.1", "mapped") == 429


# -- S5: names validated and escaped ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["<script>x</script>", "a", "admin\u200b", " lead", "x" * 33, "é-accent", "a b"])
def test_s5_usernames_are_validated(client: TestClient, name: str) -> None:
    r = client.post("/api/accounts", json={"username": name, "password": PASSWORD})
    assert r.status_code == 422, name


def test_s5_bot_names_validated_and_text_escaped(client: TestClient) -> None:
    _, tok = account(client, "erin")
    for bad in ("<img src=x onerror=alert(1)>", "bot\u202ename", " padded", "tab\tbot", "x" * 65):
        assert client.post("/api/bots", json={"name": bad}, headers=bearer(tok)).status_code == 422, bad
    bot = new_bot(client, tok, "erin-bot", description='</textarea><script>alert("d")</script>')
    login(client, "erin")
    page = client.get(f"/my/bots/{bot['id']}").text
    assert "<script>alert" not in page and "&lt;/textarea&gt;&lt;script&gt;" in page
    # A failed sign-up page never echoes an invalid username back raw.
    csrf = csrf_of(client, "/signup")
    r = client.post("/signup", data={"csrf": csrf, "username": "<b>x</b>", "password": PASSWORD})
    assert r.status_code == 422 and "<b>x</b>" not in r.text


# -- S6: sign-up can never create an admin ---------------------------------------------------------


def test_s6_sign_up_cannot_create_an_admin(client: TestClient, pool: Any) -> None:
    r = client.post("/api/accounts", json={"username": "root", "password": PASSWORD, "role": "admin",
                                           "status": "active"})
    assert r.status_code == 201 and r.json()["role"] == "participant"
    csrf = csrf_of(client, "/signup")
    client.post("/signup", data={"csrf": csrf, "username": "root2", "password": PASSWORD, "role": "admin"})
    assert {a.username: a.role for a in acc.list_accounts(pool)} == {"root": "participant", "root2": "participant"}


def test_s6_signup_modes(app: Any, pool: Any) -> None:
    app.state.participants.signup = "closed"
    c = TestClient(app, client=("192.0.2.1", 1))
    assert c.post("/api/accounts", json={"username": "late", "password": PASSWORD}).status_code == 403
    app.state.participants.signup = "approval"
    assert c.post("/api/accounts", json={"username": "wait", "password": PASSWORD}).json()["status"] == "pending"
    assert c.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("wait", PASSWORD)).status_code == 401
    # the type: ignore below: Optional: the account was created above
    acc.set_status(pool, acc.get_account(pool, "wait").id, "active")  # type: ignore[union-attr]
    assert c.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("wait", PASSWORD)).status_code == 201


# -- S7: tokens and passwords never in logs, pages or API responses (but the one-time display) ----------


def test_s7_secrets_never_leak(client: TestClient, pool: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _, tok = account(client, "frank")
    bot = new_bot(client, tok, "frank-bot")
    rotated = client.post(f"/api/bots/{bot['id']}/token", headers=bearer(tok)).json()["token"]
    client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("frank", "wrong password!"))
    secrets_ = [tok, bot["token"], rotated, PASSWORD, "wrong password!"]
    login(client, "frank")
    seen = [client.get(p).text for p in ("/account", "/my/bots", f"/my/bots/{bot['id']}", f"/bots/{bot['id']}",
                                         "/api/account/bots", "/api/tokens", f"/api/bots/{bot['id']}",
                                         f"/api/bots/{bot['id']}/matches", "/openapi.json")]
    seen.append(client.get("/api/tokens", headers=bearer(tok)).text)
    seen.append(client.get("/api/account/bots", headers=bearer(tok)).text)
    seen += [rec.getMessage() + json.dumps(rec.__dict__, default=str) for rec in caplog.records]
    for s in secrets_:
        assert not any(s in text for text in seen), s[:6]
    with pool.connection() as conn:
        dump = json.dumps(conn.execute("SELECT * FROM accounts").fetchall(), default=str)
        dump += json.dumps(conn.execute("SELECT * FROM api_tokens").fetchall(), default=str)
        dump += json.dumps(conn.execute("SELECT * FROM bots").fetchall(), default=str)
        dump += json.dumps(conn.execute("SELECT * FROM auth_events").fetchall(), default=str)
    assert not any(s in dump for s in secrets_)
    # A session cookie carries no secret either (it is signed, not encrypted: ids only).
    import base64

    raw = client.cookies.get("parterre_session") or ""
    payload = base64.b64decode(raw.split(".")[0] + "==").decode()
    assert set(json.loads(payload)) == {"aid", "ep", "csrf"}


def test_password_change_logs_other_sessions_out(app: Any, client: TestClient) -> None:
    account(client, "gina")
    login(client, "gina")
    other = TestClient(app, client=("192.0.2.5", 1))
    login(other, "gina")
    csrf = csrf_of(client, "/account")
    r = client.post("/account/password", data={"csrf": csrf, "old": PASSWORD, "new": "another long one"})
    assert r.status_code == 200 and "password changed" in r.text
    assert client.get("/my/bots", follow_redirects=False).status_code == 200
    assert other.get("/my/bots", follow_redirects=False).status_code == 303


def test_s10_password_change_is_no_password_guessing_oracle(app: Any, client: TestClient, pool: Any,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """Attack (/tmp/attack/password_oracle.py): with a stolen session, 40 wrong current passwords on
    /account/password all answered 422 and the right one 200, with no auth_events row. Now they count
    as failed logins: the same budget as /login (5 per account and address), 429 with Retry-After
    after it, even for the right password; logged without the guess; /login is locked by them too."""
    account(client, "hank")
    login(client, "hank")
    caplog.set_level(logging.WARNING, logger="ladder.accounts")
    csrf = csrf_of(client, "/account")
    codes = [client.post("/account/password", data={"csrf": csrf, "old": f"wrong-guess-{i:04d}",
                                                    "new": "another horse battery"}).status_code for i in range(40)]
    limit = acc.LOGIN_FAILURES_PER_ACCOUNT
    assert codes == [422] * limit + [429] * (40 - limit)
    r = client.post("/account/password", data={"csrf": csrf, "old": PASSWORD, "new": "another horse battery"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    with pool.connection() as conn:
        rows = conn.execute("SELECT kind, count(*) FROM auth_events WHERE username = 'hank' GROUP BY kind").fetchall()
    assert dict(rows).get("login_failed") == limit
    failed = [rec.getMessage() for rec in caplog.records if "wrong current password" in rec.getMessage()]
    assert len(failed) == limit and "hank" in failed[0]
    assert not any("wrong-guess" in rec.getMessage() for rec in caplog.records)
    # The password did not change, and /login from the guessing address shares the exhausted budget.
    assert client.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("hank", PASSWORD)).status_code == 429
    other = TestClient(app, client=("198.51.100.9", 1))
    assert other.post("/api/tokens", json={"scopes": ["challenge"]}, auth=("hank", PASSWORD)).status_code == 201


def test_challenge_a_house_bot_and_see_it_waiting(client: TestClient, pool: Any) -> None:
    from ladder.house import ensure_house_bot

    house_id, _ = ensure_house_bot(pool, "random", ["floriferous"])
    _, tok = account(client)
    mine = new_bot(client, tok)
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine["id"], house_id], "rated": True},
                    headers=bearer(tok))
    assert r.status_code == 201, r.text
    mid = r.json()["match_id"]
    rows = client.get(f"/api/bots/{mine['id']}/matches", headers=bearer(tok)).json()
    assert rows[0]["match_id"] == mid and rows[0]["status"] == "waiting"
    assert {s["bot_id"] for s in rows[0]["seats"]} == {mine["id"], house_id}
    # A bad game string is the challenge module's refusal, in words.
    r = client.post("/api/challenges", json={"game": "floriferous(players=3)", "bots": [mine["id"], house_id]},
                    headers=bearer(tok))
    assert r.status_code == 400 and "player" in r.json()["detail"]


@pytest.fixture
def remote_site(pool: Any, rds: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The site served on a free port for ``parterre remote``: $PARTERRE_URL points at it, the
    password is $PARTERRE_PASSWORD, and no database or Redis setting is left (nothing but HTTP)."""
    from web.app import start_background

    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "r" * 48)
    server = start_background(pool=pool, port=int(os.environ.get("PARTERRE_TEST_WEB_PORT", "0")))
    try:
        for var in ("PARTERRE_DATABASE_URL", "PARTERRE_REDIS_URL"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("PARTERRE_URL", server.url)
        monkeypatch.setenv("PARTERRE_PASSWORD", PASSWORD)
        yield
    finally:
        server.stop()


def test_parterre_remote_commands_over_http(remote_site: None, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``parterre remote`` against a served site: nothing but HTTP (no database settings at all)."""
    from parterre.cli import main

    def run(*argv: str) -> tuple[int, Any]:
        code = main(["remote", *argv])
        text = capsys.readouterr().out
        return code, json.loads(text) if text.strip() else None

    assert run("signup", "rita")[1]["role"] == "participant"
    code, made = run("token", "rita", "--scopes", "bot:manage,challenge")
    assert code == 0 and made["token"].startswith("ptk_")
    monkeypatch.setenv("PARTERRE_API_TOKEN", made["token"])
    code, bot = run("bot-create", "rita-bot", "--games", "floriferous")
    assert code == 0 and len(bot["token"]) == 43
    assert [b["name"] for b in run("bots")[1]] == ["rita-bot"]
    code, rotated = run("bot-rotate", str(bot["id"]))
    assert code == 0 and rotated["token"] != bot["token"]
    assert run("bot-set", str(bot["id"]), "--accept-challenges")[1]["accepts_challenges"] is True
    assert run("matches", str(bot["id"])) == (0, [])
    assert main(["remote", "bot-rotate", "999999"]) == 1  # not hers: the server's 404, exit 1
    assert "HTTP 404" in capsys.readouterr().err


def test_parterre_remote_challenge_takes_bot_names_and_refuses_unknown_ones_in_one_line(
        pool: Any, remote_site: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``remote challenge --bots NAME,...`` was a ValueError traceback. A name is one of the
    caller's bots or a bot on the game's leaderboard; an unknown name is one line on stderr, exit 2."""
    from ladder.house import ensure_house_bot
    from parterre.cli import main

    house_id, _ = ensure_house_bot(pool, "random", ["floriferous"])

    def run(*argv: str) -> tuple[int, Any, str]:
        code = main(["remote", *argv])
        out = capsys.readouterr()
        return code, json.loads(out.out) if out.out.strip() else None, out.err

    assert run("signup", "nora")[0] == 0
    monkeypatch.setenv("PARTERRE_API_TOKEN", run("token", "nora", "--scopes", "bot:manage,challenge")[1]["token"])
    mine = run("bot-create", "nora-bot", "--games", "floriferous")[1]
    finished_match(pool, [mine["id"], house_id])  # now both stand on the floriferous leaderboard

    code, made, err = run("challenge", "--game", "floriferous", "--bots", "nora-bot,house-random")
    assert (code, err) == (0, ""), err
    rows = run("matches", str(mine["id"]))[1]
    (row,) = [r for r in rows if r["match_id"] == made["match_id"]]
    assert row["status"] == "waiting" and {s["bot_id"] for s in row["seats"]} == {mine["id"], house_id}

    code, by_id, _ = run("challenge", "--game", "floriferous", "--bots", f"{mine['id']},house-random")
    assert code == 0 and by_id["match_id"] != made["match_id"]  # ids and names mix

    for bots, needle in (("nora-bot,nobody-here", "'nobody-here'"), (" , ", "one bot name or id")):
        code, out, err = run("challenge", "--game", "floriferous", "--bots", bots)
        assert code == 2 and out is None
        assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err, err
    code, _, err = run("tournament-create", "--name", "t", "--game", "floriferous", "--bots", "nora-bot")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--bots 'nora-bot'" in err, err


def test_parterre_remote_challenge_finds_house_bots_before_they_have_played(
        pool: Any, remote_site: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On a new deployment no house bot stands on a leaderboard yet (no rated match): the
    docs/participants.md example ``--bots zoe-bot,house-random`` must still find it (via /api/house-bots)."""
    from ladder.house import ensure_house_bot
    from parterre.cli import main

    house_id, _ = ensure_house_bot(pool, "random", ["floriferous"])
    ensure_house_bot(pool, "greedy", ["flowar"])

    def run(*argv: str) -> tuple[int, Any, str]:
        code = main(["remote", *argv])
        out = capsys.readouterr()
        return code, json.loads(out.out) if out.out.strip() else None, out.err

    assert run("signup", "zoe")[0] == 0
    monkeypatch.setenv("PARTERRE_API_TOKEN", run("token", "zoe", "--scopes", "bot:manage,challenge")[1]["token"])
    mine = run("bot-create", "zoe-bot", "--games", "floriferous")[1]
    code, made, err = run("challenge", "--game", "floriferous", "--bots", "zoe-bot,house-random")
    assert (code, err) == (0, ""), err
    rows = run("matches", str(mine["id"]))[1]
    (row,) = [r for r in rows if r["match_id"] == made["match_id"]]
    assert {s["bot_id"] for s in row["seats"]} == {mine["id"], house_id}
    # a house bot that does not play the game is not found by name
    code, _, err = run("challenge", "--game", "floriferous", "--bots", "zoe-bot,house-greedy")
    assert code == 2 and "'house-greedy'" in err, err


def test_pages_challenge_tournament_and_seat_view(client: TestClient, pool: Any) -> None:
    """The forms for challenges and tournaments, and the seat view page, as a participant and an organiser."""
    from ladder.bots import register_bot
    from ladder.house import ensure_house_bot

    house_id, _ = ensure_house_bot(pool, "greedy", ["floriferous"])
    _, tok = account(client, "hana")
    mine = new_bot(client, tok, "hana-bot")
    xss_id, _ = register_bot(pool, "<img src=x onerror=alert(9)>")  # an operator-registered name
    mid = finished_match(pool, [mine["id"], xss_id], rejections=[
        [{"seq": 2, "code": "STALE", "reason": "decision 2 is no longer pending", "step": 3}], []])
    login(client, "hana")
    page = client.get(f"/my/bots/{mine['id']}").text
    assert "&lt;img src=x onerror=alert(9)&gt;" in page and "<img src=x" not in page
    view = client.get(f"/my/matches/{mid}").text
    assert "decision 2 (after step 3): STALE" in view and "my move" in view
    csrf = csrf_of(client, "/my/challenge")
    r = client.post("/my/challenge", data={"csrf": csrf, "game": "floriferous", "mine": str(mine["id"]),
                                           "opponent": str(house_id), "rated": "1"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    # Participants see no creation form and are refused; organisers create, anyone enters their own bot.
    assert "needs the organiser role" in client.get("/my/tournaments").text
    form = {"csrf": csrf, "name": "Hana's cup", "game": "floriferous", "format": "duplicate", "players": "2",
            "rounds": "1", "entry_deadline": "2099-01-01T00:00:00"}
    assert client.post("/my/tournaments", data=form).status_code == 403
    # the type: ignore below: Optional: the account was created above
    acc.set_role(pool, acc.get_account(pool, "hana").id, "organiser")  # type: ignore[union-attr]
    r = client.post("/my/tournaments", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    tid = int(r.headers["location"].rsplit("/", 1)[1])
    r = client.post("/my/tournaments/enter", data={"csrf": csrf, "tournament_id": str(tid), "bot_id": str(mine["id"])},
                    follow_redirects=False)
    assert r.status_code == 303
    r = client.post("/my/tournaments/enter", data={"csrf": csrf, "tournament_id": str(tid), "bot_id": str(xss_id)})
    assert r.status_code == 404  # not hers
    with pool.connection() as conn:
        assert conn.execute("SELECT bot_id FROM tournament_bots WHERE tournament_id = %s", (tid,)).fetchall() == [
            (mine["id"],)]


# -- what the referee records for the owner's view (a real referee, real misbehaving bots) -------------


@pytest.mark.parametrize("kind", ["drop", "illegal", "duplicate"])
async def test_referee_records_reasons_and_rejections_for_the_owner(kind: str) -> None:
    from fixtures.toy_game import register_toy

    from bots.misbehaving import DropBot, GarbageBot, IllegalBot
    from bots.reference import RandomBot
    from referee.testing import Harness, replay_of
    from web.owner import reason_in_words

    register_toy()
    faulty = {"drop": lambda: DropBot(at_decision=2, reconnect_after_s=None),
              "illegal": lambda: IllegalBot("out_of_range", at_decision=2),
              "duplicate": lambda: GarbageBot(modes=("duplicate",), at_decision=2)}[kind]()
    async with Harness({"tok-a": 1, "tok-b": 2}, reconnect_grace_ms=200) as h:
        h.start_bot(RandomBot(seed=1), "tok-a")
        h.start_bot(faulty, "tok-b")
        result = await h.run_match(900 + len(kind), "toy(players=2,turns=4)", [1, 2], cap_ms=10_000)
    replay = replay_of(result)
    verdict, reason = replay["verdicts"][1], replay["fault_reasons"][1]
    words = reason_in_words(verdict, reason)
    if kind == "drop":
        assert verdict == "disconnect"
        assert re.fullmatch(r"disconnect: the stream ended after step \d+, 0\.\d s before the verdict and the bot "
                            r"was not back within 200 ms", words), (reason, words)
    elif kind == "illegal":
        assert verdict == "illegal_action"
        assert re.fullmatch(r"illegal action on decision \d+: it sent index (\d+), but there were \1 legal actions "
                            r"\(0\.\.\d+\)", words), (reason, words)  # out_of_range sends index = number of actions
    else:
        assert verdict == "normal" and words == "played to the end"
        assert [r["code"] for r in replay["rejections"][1]] == ["DUPLICATE"] and replay["rejections"][0] == []


def test_s1_organisers_cannot_seat_other_peoples_bots(client: TestClient, pool: Any) -> None:
    _, org = account(client, "oscar", scopes=("tournament:create", "bot:manage"))
    # the type: ignore below: Optional: the account was created above
    acc.set_role(pool, acc.get_account(pool, "oscar").id, "organiser")  # type: ignore[union-attr]
    _, other = account(client)
    theirs = new_bot(client, other)
    mine = new_bot(client, org)
    for body in ({"bot_ids": [mine["id"], theirs["id"]]}, {"format": "gauntlet", "candidate_bot_id": theirs["id"]}):
        r = client.post("/api/tournaments", json={"name": "t", "game": "floriferous", **body}, headers=bearer(org))
        assert r.status_code == 403 and "not yours" in r.json()["detail"], r.text


# -- S9: what a hostile tester found after the first round (each a request that used to work) --------


def test_s9_a_challenger_cannot_set_a_clock_no_bot_can_meet(client: TestClient) -> None:
    """A 1 ms limit made every challenged bot time out (and its -1 ms broke the result)."""
    _, a = account(client)
    _, c = account(client)
    mine, theirs = new_bot(client, a), new_bot(client, c, accepts_challenges=True)
    bots = [mine["id"], theirs["id"]]
    for tc in ({"base_ms": 1, "increment_ms": 0, "cap_ms": 1, "margin_ms": 0},
               {"base_ms": 0, "increment_ms": 0, "cap_ms": 99},
               {"base_ms": 9007199254740991},
               {"cap_ms": 600_000},
               {"cap_ms": 1000, "margin_ms": 3_600_000}):
        r = client.post("/api/challenges", json={"game": "floriferous", "bots": bots, "time_control": tc},
                        headers=bearer(a))
        assert r.status_code in (400, 422), (tc, r.status_code, r.text)
    ok = client.post("/api/challenges", json={"game": "floriferous", "bots": bots,
                                              "time_control": {"cap_ms": 100}}, headers=bearer(a))
    assert ok.status_code == 201, ok.text


def test_s9_withdrawn_consent_ends_the_waiting_challenges(client: TestClient, pool: Any) -> None:
    """Turning challenges off used to leave waiting ones to be played (and rated) later."""
    from ladder.challenges import challenge_status, dispatch_challenges

    _, a = account(client)
    _, c = account(client)
    mine, theirs = new_bot(client, a), new_bot(client, c, accepts_challenges=True)
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine["id"], theirs["id"]]},
                    headers=bearer(a))
    assert r.status_code == 201, r.text
    match_id = r.json()["match_id"]
    r = client.patch(f"/api/bots/{theirs['id']}/settings", json={"accepts_challenges": False}, headers=bearer(c))
    assert r.status_code == 200, r.text
    everyone = {"floriferous": {mine["id"], theirs["id"]}}  # both connected: it would start now
    started, expired = dispatch_challenges(pool, everyone)
    assert match_id not in started and match_id in expired
    info = challenge_status(pool, match_id)
    assert info.status == "expired" and "no longer accepts challenges" in (info.reason or "")


def test_s9_oversized_bodies_are_refused_before_they_are_read(client: TestClient) -> None:
    """A 150 MB JSON body was parsed in full (1.5 GB for five of them)."""
    big = b'{"username": "' + b"a" * (2 << 20) + b'", "password": "x"}'
    r = client.post("/api/accounts", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "request body over" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b"a" * 65536

    r = client.post("/api/accounts", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert client.post("/api/accounts", json={"username": "small-one", "password": PASSWORD}).status_code == 201


def test_s9_logging_out_voids_a_kept_copy_of_the_cookie(client: TestClient) -> None:
    """The signed cookie kept from before "log out" used to work for its whole lifetime."""
    account(client, "erin")
    login(client, "erin")
    kept = client.cookies.get("parterre_session")
    assert kept
    assert client.post("/logout", data={"csrf": csrf_of(client, "/my/bots")}, follow_redirects=False).status_code == 303
    thief = TestClient(client.app, client=("203.0.113.8", 1))
    thief.cookies.set("parterre_session", kept)
    assert thief.get("/account", follow_redirects=False).status_code == 303  # to /login


def test_every_page_nav_shows_the_login_and_a_log_out_button(client: TestClient) -> None:
    """The nav said "Log in" on /my/bots and /account after logging in, Log out was only on /account,
    and the footer said "read-only" on pages with forms."""
    nav_form = re.compile(r'<form method="post" action="/logout" class="inline nav-logout">'
                          r'<input type="hidden" name="csrf" value="([^"]+)"><button type="submit" id="nav-logout">')
    anonymous = client.get("/").text
    assert 'id="nav-login"' in anonymous and not nav_form.search(anonymous) and "ivy-nav" not in anonymous
    account(client, "ivy-nav")
    login(client, "ivy-nav")
    seen = set()
    for path in ("/", "/my/bots", "/account", "/tournaments", "/leaderboard/floriferous", "/my/challenge"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert '<a href="/account" id="nav-account">ivy-nav</a>' in r.text, path
        assert 'href="/login"' not in r.text and "read-only" not in r.text, path
        m = nav_form.search(r.text)
        assert m, path
        seen.add(m.group(1))
    (csrf,) = seen  # one session, one CSRF token
    assert client.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code in (302, 303)
    after = client.get("/my/bots", follow_redirects=False)
    assert after.status_code == 303
    home = client.get("/").text
    assert 'id="nav-login"' in home and "ivy-nav" not in home and not nav_form.search(home)
