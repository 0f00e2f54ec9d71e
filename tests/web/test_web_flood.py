"""The web under an anonymous flood, tried as the attacker did (docs/faults.md "The web under an anonymous flood").

The site runs in a real uvicorn (``start_background``, the options ``parterre web`` uses) or, for
the memory floods, as ``parterre web`` in a child process watched by bench/bench_web_flood.py's
memory watchdog (SIGKILL over 512 MiB of RSS, as a container's limit would). The attacker is a set
of threads released together by a barrier, or raw sockets.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench import bench_web_flood as flood  # the bench's attackers and memory watchdog
from ladder import accounts as acc
from ladder import make_pool, password_gate
from ladder.owned_bots import MAX_BOTS_PER_ACCOUNT
from web.app import start_background
from web.serving import HeadTimeoutH11Protocol

pytestmark = pytest.mark.real_argon2  # the attacker pays the site's own price per password checked

PASSWORD = "correct horse battery"
MIB = 1 << 20
ARGON2_MIB = 64


@pytest.fixture(scope="module")
def site(ladder_db: str) -> Iterator[tuple[str, Any]]:
    os.environ.setdefault("PARTERRE_SESSION_SECRET", "f" * 48)
    pool = make_pool(ladder_db, max_size=12)
    server = start_background(pool=pool)
    yield server.url, pool
    server.stop()
    pool.close()


@pytest.fixture(autouse=True)
def no_attempts_yet(site: tuple[str, Any]) -> None:
    """Every test starts with no login attempts counted (all of them come from 127.0.0.1)."""
    with site[1].connection() as conn:
        conn.execute("TRUNCATE auth_events")


_n = iter(range(10**6))


def _sign_up(pool: Any) -> str:
    """A fresh account (made directly: sign-up through the site is limited to 5 an hour per address)."""
    name = f"victim{next(_n)}"
    acc.create_account(pool, name, PASSWORD)
    return name


def _events(pool: Any, name: str) -> Counter[str]:
    with pool.connection() as conn:
        rows = conn.execute("SELECT kind, count(*) FROM auth_events WHERE username = %s GROUP BY kind",
                            (name,)).fetchall()
    return Counter({k: int(n) for k, n in rows})


# -- logins: the budget holds under a parallel burst ----------------------------------------------


def test_a_burst_of_60_parallel_logins_checks_at_most_the_budget(site: tuple[str, Any]) -> None:
    """60 concurrent Basic logins for one account checked 44 passwords (budget 5). Now at most 5 are
    checked (401), the rest are refused unchecked (429, or 503 when every argon2 slot stays busy),
    and after the burst even the right password waits."""
    url, pool = site
    name = _sign_up(pool)
    limit = acc.LOGIN_FAILURES_PER_ACCOUNT
    codes = flood.login_flood(url, name, [f"wrong-guess-{i:04d}" for i in range(60)])
    assert set(codes) <= {401, 429, 503}, codes
    assert 1 <= codes[401] <= limit, codes
    assert _events(pool, name)["login_failed"] == codes[401]
    # Under load some guesses are turned away unchecked (503: no argon2 slot), so the burst may not
    # spend the whole budget; spend the rest one at a time. Then even the right password waits.
    for i in range(limit - codes[401]):
        assert flood.login_flood(url, name, [f"wrong-after-{i}"]) == Counter({401: 1})
    assert flood.login_flood(url, name, [PASSWORD]) == Counter({429: 1})


def test_the_right_password_inside_a_burst_gets_no_token_beyond_the_budget(site: tuple[str, Any]) -> None:
    """The right password twice among 60 parallel guesses: failed checks stay within the budget."""
    url, pool = site
    name = _sign_up(pool)
    limit = acc.LOGIN_FAILURES_PER_ACCOUNT
    guesses = [f"wrong-guess-{i:04d}" for i in range(60)]
    guesses[20] = guesses[59] = PASSWORD
    codes = flood.login_flood(url, name, guesses)
    # The budget counts failed checks (docs/participants.md): a right password settles its reserved
    # attempt as login_ok, which frees that reservation, so a wrong guess may be checked after it.
    # Checked passwords are at most the budget of failures plus the two right ones.
    assert set(codes) <= {201, 401, 429, 503}, codes
    assert codes[401] <= limit, codes
    assert codes[201] <= 2, codes
    seen = _events(pool, name)
    assert seen["login_failed"] == codes[401] and seen["login_ok"] == codes[201], (seen, codes)
    if codes[401] == limit:  # the budget is spent: now even the right password waits
        assert flood.login_flood(url, name, [PASSWORD]) == Counter({429: 1})


def test_a_burst_on_the_password_change_form_checks_at_most_the_budget(site: tuple[str, Any]) -> None:
    """With a stolen session, 40 parallel wrong current passwords on /account/password."""
    url, pool = site
    name = _sign_up(pool)
    thief = httpx.Client(base_url=url, timeout=60)
    csrf = re.search(r'name="csrf" value="([^"]+)"', thief.get("/login").text)
    assert csrf
    r = thief.post("/login", data={"csrf": csrf.group(1), "username": name, "password": PASSWORD})
    assert r.status_code == 303, r.text
    m = re.search(r'name="csrf" value="([^"]+)"', thief.get("/account").text)
    assert m
    cookies = dict(thief.cookies)

    def change(i: int) -> int:
        with httpx.Client(base_url=url, timeout=60, cookies=cookies) as c:
            return c.post("/account/password", data={"csrf": m.group(1), "old": f"wrong-guess-{i:04d}",
                                                     "new": "another horse battery"}).status_code

    codes = Counter(flood.parallel(40, change))
    assert set(codes) <= {422, 429, 503}, codes
    assert 1 <= codes[422] <= acc.LOGIN_FAILURES_PER_ACCOUNT, codes
    assert _events(pool, name)["login_failed"] == codes[422]
    thief.close()


# -- memory: argon2 and bodies in a 512 MiB process ----------------------------------------------------


@pytest.fixture(scope="module")
def web_process(ladder_db: str) -> Iterator[flood.WebProcess]:
    web = flood.start_web(ladder_db, memory_bytes=512 * MIB)
    yield web
    web.stop()


def test_parallel_password_checks_stay_within_the_argon2_slots(web_process: flood.WebProcess,
                                                               site: tuple[str, Any]) -> None:
    """Each argon2 check takes 64 MiB; 40 ran at once (RSS 118 -> 2,368 MiB). 30 parallel logins now
    raise the RSS by at most the slots' worth, and the process lives."""
    web = web_process
    name = _sign_up(site[1])
    result = flood.run_flood(web, "logins", lambda: flood.login_flood(
        web.url, name, [f"wrong-guess-{i:04d}" for i in range(30)]))
    assert result.alive and not web.killed, result.line()
    slots = password_gate.slots()
    assert result.peak_rss - result.baseline_rss <= (slots * ARGON2_MIB + 48) * MIB, (slots, result.line())
    assert result.health_failed == 0, result.line()


@pytest.mark.parametrize("path, answer", [("/nope/hosted", 404), ("/api/bots/1/versions", 401)])
def test_chunked_anonymous_bodies_are_not_buffered(web_process: flood.WebProcess, path: str, answer: int) -> None:
    """200 anonymous chunked bodies to a path that merely contained /hosted: 105 -> 1,733 MiB, and
    1,649 MiB after they closed. 40 such bodies of 9 MiB now leave the RSS where it was."""
    web = web_process
    result = flood.run_flood(web, path, lambda: flood.body_flood(web.url, path, 40))
    assert result.alive and not web.killed, result.line()
    assert result.codes == Counter({answer: 40}), result.line()
    assert result.peak_rss - result.baseline_rss <= 48 * MIB, result.line()
    assert result.health_failed == 0, result.line()


@pytest.mark.parametrize("prefix", [b"", b"\x1f\x8b"], ids=["junk", "gzip-magic-junk"])
def test_parallel_authenticated_uploads_stay_within_the_upload_slots(ladder_db: str, site: tuple[str, Any],
                                                                     prefix: bytes) -> None:
    """150 parallel 7 MiB junk uploads to the attacker's own bot, each refused 400, took the web from
    103 to 1,148 MiB (1,187 after): every thread of the pool kept its freed archive in its own malloc
    arena. 40 of them (40 MiB over 96 before) now raise the RSS by at most a few archives' worth, and
    it stays so after; junk that starts as gzip is read whole and inspected, like an archive."""
    web = flood.start_web(ladder_db, memory_bytes=512 * MIB)
    try:
        name = _sign_up(site[1])
        token, bot_id = flood.upload_token(web.url, name)
        result = flood.run_flood(web, "uploads", lambda: flood.upload_flood(web.url, token, bot_id, 40,
                                                                                     prefix=prefix))
        assert result.alive and not web.killed, result.line()
        assert result.codes == Counter({400: 40}), result.line()
        assert result.peak_rss - result.baseline_rss <= 96 * MIB, result.line()
        assert result.after_rss - result.baseline_rss <= 64 * MIB, result.line()
        assert result.health_failed == 0, result.line()
    finally:
        web.stop()


@pytest.mark.parametrize("path, answer, headers", [
    ("/nope/hosted", 404, ""),
    ("/nope/versions", 404, ""),
    ("/api/bots/1/versions", 401, ""),  # an upload route, anonymous
    ("/api/bots/1/versions", 401, "Authorization: Bearer ptk_made-up\r\n"),  # credentials that do not hold
    ("/my/bots/1/hosted", 303, ""),  # the upload form without a session: the login redirect
])
def test_a_body_is_answered_before_it_is_read_when_no_route_or_no_caller_takes_it(
        site: tuple[str, Any], path: str, answer: int, headers: str) -> None:
    """The attacker sends 256 KiB of a chunked body and then waits: the answer comes without the rest."""
    url, _ = site
    status, sent = flood.chunked_body(url, path, 9 * MIB, timeout_s=10.0, headers=headers)
    assert status == answer
    assert sent < 9 * MIB


def test_the_default_body_limit_is_small_and_exact_routes_get_more(site: tuple[str, Any]) -> None:
    url, pool = site
    big = b'{"username": "' + b"a" * (200 << 10) + b'", "password": "x"}'
    r = httpx.post(url + "/api/accounts", content=big, headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 413 and "request body over 65536 bytes" in r.json()["detail"]
    status, _ = flood.chunked_body(url, "/api/accounts", 200 << 10)
    assert status == 413
    name = _sign_up(pool)
    token = httpx.post(url + "/api/tokens", json={"scopes": ["bot:manage"]}, auth=(name, PASSWORD), timeout=60)
    bot = httpx.post(url + "/api/bots", json={"name": f"b{next(_n)}", "games": ["floriferous"]},
                     headers={"authorization": "Bearer " + token.json()["token"]}, timeout=30).json()
    # The owner's upload route takes 1 MiB (not an archive: refused by its reason, not by the limit).
    r = httpx.post(f"{url}/api/bots/{bot['id']}/versions", content=b"\0" * MIB, timeout=60,
                   headers={"authorization": "Bearer " + token.json()["token"]})
    assert r.status_code == 400 and "archive refused" in r.json()["detail"], r.text


# -- metrics: labels stay bounded ---------------------------------------------------------------


def test_made_up_methods_and_paths_add_no_series(site: tuple[str, Any]) -> None:
    """20,000 made-up methods took /metrics from 3 to 40 MB: one series per method."""
    from prometheus_client import REGISTRY, generate_latest

    url, _ = site
    with httpx.Client(base_url=url, timeout=30) as c:
        for i in range(20):  # every label combination the flood below can make, made once
            c.request(f"M{i}X", f"/nope-{i}")
            c.get(f"/nope-{i}")
        before = len(generate_latest(REGISTRY))
        for i in range(2000):
            c.request(f"MADEUP{i}", f"/x/{i}/hosted")
            c.get(f"/y/{i}")
    after = len(generate_latest(REGISTRY))
    assert after - before < 2000, (before, after)
    text = generate_latest(REGISTRY).decode()
    assert "MADEUP" not in text and "/x/1/hosted" not in text
    assert 'method="other"' in text and 'route="<unmatched>"' in text


# -- slow clients --------------------------------------------------------------------------------------


def test_slow_request_heads_are_cut_off(site: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Slowloris: 20 connections each send a header byte every 0.2 s and never finish the head. They
    held their connections for ever; now each is closed at the head timeout (1 s here, 10 s by
    default) while a normal client is answered."""
    url, _ = site
    monkeypatch.setattr(HeadTimeoutH11Protocol, "head_timeout_s", 1.0)
    port = int(url.rsplit(":", 1)[1])
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
    opened = time.monotonic()
    for s in socks:
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n")
        s.setblocking(False)
    closed_after: dict[int, float] = {}
    deadline = opened + 8.0
    while len(closed_after) < len(socks) and time.monotonic() < deadline:
        for i, s in enumerate(socks):
            if i in closed_after:
                continue
            try:
                s.sendall(b"X")
                if s.recv(1024) == b"":
                    closed_after[i] = time.monotonic() - opened
            except BlockingIOError:
                pass
            except OSError:
                closed_after[i] = time.monotonic() - opened
        assert httpx.get(url + "/api/health", timeout=5).status_code == 200
        threading.Event().wait(0.2)
    for s in socks:
        s.close()
    assert len(closed_after) == len(socks), f"{len(socks) - len(closed_after)} slow heads still open after 8 s"
    assert max(closed_after.values()) < 4.0, closed_after


# -- bots per account -----------------------------------------------------------------------------------


def test_a_parallel_burst_of_bot_creations_meets_the_cap(site: tuple[str, Any]) -> None:
    url, pool = site
    name = _sign_up(pool)
    token = httpx.post(url + "/api/tokens", json={"scopes": ["bot:manage"]}, auth=(name, PASSWORD),
                       timeout=60).json()["token"]
    cap = MAX_BOTS_PER_ACCOUNT
    assert cap == 20

    def create(i: int) -> httpx.Response:
        return httpx.post(url + "/api/bots", json={"name": f"{name}-bot-{i}", "games": ["floriferous"]},
                          headers={"authorization": "Bearer " + token}, timeout=60)

    answers = flood.parallel(cap + 15, create)
    codes = Counter(r.status_code for r in answers)
    assert codes == Counter({201: cap, 409: 15}), codes
    refusal = next(r for r in answers if r.status_code == 409).json()["detail"]
    assert f"at most {cap} bots" in refusal
    with pool.connection() as conn:
        (n,) = conn.execute("SELECT count(*) FROM bots b JOIN accounts a ON a.id = b.account_id "
                            "WHERE a.username = %s", (name,)).fetchone()
    assert n == cap
    # Retiring one does not free a place (a retired bot keeps its name and history).
    first = next(r for r in answers if r.status_code == 201).json()
    assert httpx.post(f"{url}/api/bots/{first['id']}/retire", headers={"authorization": "Bearer " + token},
                      timeout=30).status_code == 200
    assert create(999).status_code == 409


def test_connections_beyond_the_cap_are_answered_503_at_once(site: tuple[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle connections held open by one client: past PARTERRE_WEB_MAX_CONNECTIONS a request is 503 at
    once (the head timeout then frees them); before, every connection was served without bound."""
    _, pool = site
    monkeypatch.setenv("PARTERRE_WEB_MAX_CONNECTIONS", "10")
    server = start_background(pool=pool)
    try:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(10)]
        deadline = time.monotonic() + 5
        while True:  # the server accepts them asynchronously: wait until it counts them
            r = httpx.get(server.url + "/api/health", timeout=5, headers={"connection": "close"})
            if r.status_code == 503 or time.monotonic() > deadline:
                break
        assert r.status_code == 503
        for s in idle:
            s.close()
        deadline = time.monotonic() + 5
        while r.status_code == 503 and time.monotonic() < deadline:
            r = httpx.get(server.url + "/api/health", timeout=5, headers={"connection": "close"})
        assert r.status_code == 200
    finally:
        server.stop()


def test_checks_waiting_for_an_argon2_slot_are_bounded() -> None:
    """While every slot is busy, at most MAX_WAITING checks wait (each holds one of the web's worker
    threads); the next ones are refused at once, and the waiters get their slot once one is free."""
    slots, extra = password_gate.slots(), 5
    taken, release = threading.Barrier(slots + 1), threading.Event()
    outcomes: list[str] = []

    def hold() -> None:
        with password_gate.slot():
            taken.wait()
            release.wait(60)

    def check() -> None:
        try:
            with password_gate.slot(wait_s=60):
                outcomes.append("checked")
        except password_gate.PasswordCheckBusyError:
            outcomes.append("busy")

    holders = [threading.Thread(target=hold) for _ in range(slots)]
    for t in holders:
        t.start()
    taken.wait(30)
    checkers = [threading.Thread(target=check) for _ in range(password_gate.MAX_WAITING + extra)]
    for t in checkers:
        t.start()
    deadline = time.monotonic() + 10
    while outcomes.count("busy") < extra and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    assert outcomes == ["busy"] * extra  # refused at once; the others wait
    release.set()
    for t in holders + checkers:
        t.join(60)
    assert Counter(outcomes) == Counter(busy=extra, checked=password_gate.MAX_WAITING)
