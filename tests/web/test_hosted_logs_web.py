"""The hosted bot's stderr of its rated matches on its owner's web pages (docs/hosted.md), tried as an attacker.

``/my/bots/{id}/hosted`` shows the newest rated-match logs of the bot and
``/my/bots/{id}/hosted/{n}`` those of version n: only to the owner's session
(another account gets 404, as from the API; a visitor the login redirect),
each log cut to its last ``PAGE_LOG_CHARS`` characters and HTML-escaped.
Oracle: the log texts the test stores itself (``save_match_log``, as the
worker does) and the HTML the pages answer.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.ladder_helpers import module_database
from test_hosted import PASSWORD, owner, python_bot, upload

from ladder import hosted_logs, make_pool
from ladder import submissions as sub
from ladder.match_plans import plan_match
from web import create_app
from web.auth import ParticipantConfig
from web.submissions import PAGE_LOG_CHARS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SCRIPT = "<script>alert('pwned')</script>"


@pytest.fixture(scope="module")
def pool(pg_admin_url: str) -> Iterator[Any]:
    for url in module_database(pg_admin_url):
        p = make_pool(url, max_size=4)
        yield p
        p.close()


@pytest.fixture(scope="module")
def app(pool: Any) -> Iterator[Any]:
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open")
    yield a
    mp.undo()


def login(client: TestClient, headers: dict[str, str]) -> None:
    name = client.get("/api/account", headers=headers).json()["username"]
    m = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert m
    r = client.post("/login", data={"csrf": m.group(1), "username": name, "password": PASSWORD},
                    follow_redirects=False)
    assert r.status_code == 303, r.text[-300:]


def rated_log(pool: Any, bot_id: int, other_bot: int, version: sub.HostedVersion, text: str, key: str) -> int:
    """A ladder match seating ``bot_id`` and the bot's stderr of it, stored as the worker stores it."""
    match_id = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[bot_id, other_bot],
                          plan_key=f"test:logs:{key}")
    hosted_logs.save_match_log(pool, match_id, 1, bot_id, version.id, text)
    return match_id


@pytest.fixture(scope="module")
def site(app: Any, pool: Any) -> dict[str, Any]:
    """Victim A (two versions, three logged matches) and attacker B (a hosted bot of its own, one log)."""
    a_client, b_client = TestClient(app, client=("203.0.113.10", 5)), TestClient(app, client=("203.0.113.11", 5))
    a_headers, a_bot = owner(a_client)
    b_headers, b_bot = owner(b_client)
    for client, headers, bot in ((a_client, a_headers, a_bot), (a_client, a_headers, a_bot),
                                 (b_client, b_headers, b_bot)):
        assert upload(client, headers, bot, python_bot()).status_code == 201
    a1, a2 = sub.version_by_number(pool, a_bot, 1), sub.version_by_number(pool, a_bot, 2)
    b1 = sub.version_by_number(pool, b_bot, 1)
    assert a1 is not None and a2 is not None and b1 is not None
    long_log = "HEAD-OF-THE-LONG-LOG\n" + "x" * (3 * PAGE_LOG_CHARS) + "\nTAIL-OF-THE-LONG-LOG"
    matches = {
        "script": rated_log(pool, a_bot, b_bot, a1, f"A-V1-SECRET before {SCRIPT} after\n", "script"),
        "long": rated_log(pool, a_bot, b_bot, a1, long_log, "long"),
        "v2": rated_log(pool, a_bot, b_bot, a2, "A-V2-SECRET only in version 2\n", "v2"),
        "b": rated_log(pool, b_bot, a_bot, b1, "B-OWN-LOG\n", "b"),
    }
    login(a_client, a_headers)
    login(b_client, b_headers)
    return {"a": a_client, "b": b_client, "a_bot": a_bot, "b_bot": b_bot, "matches": matches, "long": long_log,
            "anon": TestClient(app, client=("203.0.113.12", 5))}


def test_the_owner_sees_the_logs_escaped_and_capped(site: dict[str, Any]) -> None:
    page = site["a"].get(f"/my/bots/{site['a_bot']}/hosted")
    assert page.status_code == 200
    text = page.text
    assert "A-V1-SECRET" in text and "A-V2-SECRET" in text and "B-OWN-LOG" not in text
    for key in ("script", "long", "v2"):
        assert f'href="/matches/{site["matches"][key]}"' in text
    # escaped: the bot's <script> is text, not markup
    assert SCRIPT not in text and "<script>alert" not in text
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in text
    # capped: the long log's tail only, and how much was cut
    assert "TAIL-OF-THE-LONG-LOG" in text and "HEAD-OF-THE-LONG-LOG" not in text
    assert f"the first {len(site['long']) - PAGE_LOG_CHARS} characters are not shown" in text
    assert PAGE_LOG_CHARS - 100 < max(len(run) for run in re.findall("x+", text)) <= PAGE_LOG_CHARS


def test_the_version_page_shows_that_versions_logs_only(site: dict[str, Any]) -> None:
    v1 = site["a"].get(f"/my/bots/{site['a_bot']}/hosted/1").text
    v2 = site["a"].get(f"/my/bots/{site['a_bot']}/hosted/2").text
    assert "A-V1-SECRET" in v1 and "A-V2-SECRET" not in v1 and SCRIPT not in v1
    assert "A-V2-SECRET" in v2 and "A-V1-SECRET" not in v2 and "TAIL-OF-THE-LONG-LOG" not in v2


@pytest.mark.parametrize("path", ["/my/bots/{bot}/hosted", "/my/bots/{bot}/hosted/1", "/my/bots/{bot}/hosted/2"])
def test_another_account_gets_404_and_no_log(site: dict[str, Any], path: str) -> None:
    res = site["b"].get(path.format(bot=site["a_bot"]))
    assert res.status_code == 404
    assert "A-V1-SECRET" not in res.text and "A-V2-SECRET" not in res.text and "pwned" not in res.text
    # its own pages work, and show its own log only
    own = site["b"].get(f"/my/bots/{site['b_bot']}/hosted")
    assert own.status_code == 200 and "B-OWN-LOG" in own.text and "A-V1-SECRET" not in own.text
    assert site["b"].get(f"/my/bots/{site['b_bot']}/hosted/2").status_code == 404  # a version it does not have


def test_a_visitor_is_sent_to_the_login_page(site: dict[str, Any]) -> None:
    for path in (f"/my/bots/{site['a_bot']}/hosted", f"/my/bots/{site['a_bot']}/hosted/1"):
        res = site["anon"].get(path, follow_redirects=False)
        assert res.status_code == 303 and res.headers["location"] == "/login"
        assert "A-V1-SECRET" not in res.text


def test_an_unknown_bot_id_is_404(site: dict[str, Any]) -> None:
    missing = max(site["a_bot"], site["b_bot"]) + 1000
    assert site["a"].get(f"/my/bots/{missing}/hosted").status_code == 404
    assert site["a"].get(f"/my/bots/{missing}/hosted/1").status_code == 404


def test_only_the_newest_logs_of_a_bot_are_kept_and_never_another_bots(app: Any, pool: Any) -> None:
    """Retention (``save_match_log(kept=...)``): a bot keeps its newest ``kept`` rated-match logs; saving
    more deletes its oldest, never a log of another bot, even one stored in between."""
    client = TestClient(app, client=("203.0.113.20", 5))
    c_headers, c_bot = owner(client)
    d_headers, d_bot = owner(client)
    for headers, bot in ((c_headers, c_bot), (d_headers, d_bot)):
        assert upload(client, headers, bot, python_bot()).status_code == 201
    c1, d1 = sub.version_by_number(pool, c_bot, 1), sub.version_by_number(pool, d_bot, 1)
    assert c1 is not None and d1 is not None
    d_match = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[d_bot, c_bot], plan_key="test:keep:d")
    hosted_logs.save_match_log(pool, d_match, 1, d_bot, d1.id, "D-LOG", kept=1)
    c_matches = []
    for i in range(5):
        match_id = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[c_bot, d_bot],
                              plan_key=f"test:keep:c{i}")
        hosted_logs.save_match_log(pool, match_id, 1, c_bot, c1.id, f"C-LOG-{i}", kept=3)
        c_matches.append(match_id)
    c_logs = client.get(f"/api/bots/{c_bot}/hosted-logs", headers=c_headers).json()["logs"]
    d_logs = client.get(f"/api/bots/{d_bot}/hosted-logs", headers=d_headers).json()["logs"]
    assert [(x["match_id"], x["log"]) for x in c_logs] == [(c_matches[i], f"C-LOG-{i}") for i in (4, 3, 2)]
    assert [(x["match_id"], x["log"]) for x in d_logs] == [(d_match, "D-LOG")]
    with pytest.raises(ValueError, match="kept must be at least 1"):
        hosted_logs.save_match_log(pool, c_matches[0], 1, c_bot, c1.id, "never stored", kept=0)
    assert [x["log"] for x in client.get(f"/api/bots/{c_bot}/hosted-logs", headers=c_headers).json()["logs"]] == [
        "C-LOG-4", "C-LOG-3", "C-LOG-2"]
