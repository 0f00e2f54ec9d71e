# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""The API page and the rules pages in a real browser (chromium, as tests/e2e/test_web_browser.py).

The API page (/docs/api) draws Swagger UI from the site's own files under the site's Content-Security-Policy:
the oracle is the browser's network log (every request goes to the site itself) and console (no
policy violation, no script error), and the operations drawn are those of the site's ``/openapi.json``.
"Try it out" on ``GET /api/games`` gets the same answer as a direct request. At 390 px, once Swagger UI has
drawn, the page still does not scroll sideways. On the owner's page of a new bot, the referee's address
is the one the environment gives the site (``PARTERRE_PUBLIC_REFEREE``), the connect command holds the
token just shown, and its Copy button puts exactly that command on the clipboard.
"""

from __future__ import annotations

import json
import secrets
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.browser import browser, chromium_present  # noqa: F401 - fixtures are found by name
from fixtures.web_helpers import Site, shared_site
from test_hosted import PASSWORD

from web import BackgroundServer, start_background

REFEREE = "play.parterre.test:50443"


@pytest.fixture(scope="module")
def served(pg_admin_url: str, request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BackgroundServer, Site]]:
    """The site over the shared seeded database, told its referee's public address by the environment."""
    site = shared_site(pg_admin_url, request.config)
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_HOME", str(tmp_path_factory.mktemp("home")))
    mp.delenv("PARTERRE_SESSION_SECRET", raising=False)
    mp.delenv("PARTERRE_REDIS_URL", raising=False)
    mp.setenv("PARTERRE_PUBLIC_REFEREE", REFEREE)
    server = start_background(site.database_url)
    try:
        yield server, site
    finally:
        server.stop()
        mp.undo()


def _past(page: Any, width: int) -> list[str]:
    """The elements that reach past ``width`` (what a failed width check names)."""
    return list(page.evaluate(
        "w => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w)"
        ".map(e => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)", width))


@pytest.mark.parametrize("width", [1400, 390])
def test_the_api_page_draws_every_operation_from_the_site_alone(browser: Any, served: tuple[BackgroundServer, Site],
                                                                 width: int) -> None:
    server, _site = served
    with urllib.request.urlopen(server.url + "/openapi.json", timeout=10) as r:
        spec = json.load(r)
    operations = {(m.upper(), p) for p, item in spec["paths"].items() for m in item if m in ("get", "post", "patch",
                                                                                               "delete", "put")}
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    console: list[str] = []
    errors: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.url + "/")
        page.click("#nav-api")
        page.wait_for_url(server.url + "/docs/api")
        page.wait_for_selector(".opblock", timeout=20_000)
        drawn = set()
        for block in page.locator(".opblock-summary").all():
            method = block.locator(".opblock-summary-method").inner_text().strip()
            path = block.locator(".opblock-summary-path").get_attribute("data-path")
            drawn.add((method, path))
        assert drawn == operations
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"/docs/api is {scroll} px wide at {width} px once drawn: {_past(page, width)}"
        if width == 1400:
            # Try it out: GET /api/games from the page
            block = page.locator("#operations-default-games_api_games_get, .opblock-get:has([data-path='/api/games'])")
            block.first.locator(".opblock-summary").click()
            page.click("button.try-out__btn")
            page.click("button.execute")
            body = page.locator(".live-responses-table .response-col_description pre").first
            body.wait_for(timeout=10_000)
            with urllib.request.urlopen(server.url + "/api/games", timeout=10) as r:
                assert json.loads(body.inner_text()) == json.load(r)
    finally:
        context.close()
    assert requests and all(u.startswith(server.url + "/") for u in requests), [
        u for u in requests if not u.startswith(server.url + "/")]
    assert not [c for c in console if "Content Security Policy" in c or c.startswith("error")], console
    assert errors == []


def test_a_rules_page_in_the_browser_follows_its_table_of_contents(browser: Any,
                                                                   served: tuple[BackgroundServer, Site]) -> None:
    server, _site = served
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    try:
        page.goto(server.url + "/rules")
        page.click("a[href='/rules/flowar']")
        page.wait_for_url(server.url + "/rules/flowar")
        first = page.locator(".doc-toc a").nth(1)
        ident = (first.get_attribute("href") or "")[1:]
        first.click()
        assert page.evaluate(f"document.getElementById({ident!r}).getBoundingClientRect().top") < 100
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, _past(page, 390)
    finally:
        context.close()


def test_a_new_bot_shows_the_referee_and_its_connect_command_copies(browser: Any,
                                                                     served: tuple[BackgroundServer, Site]) -> None:
    server, _site = served
    context = browser.new_context(viewport={"width": 390, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    name = f"door{secrets.token_hex(4)}"
    try:
        assert context.request.post(server.url + "/api/accounts",
                                    data={"username": name, "password": PASSWORD}).status == 201
        page.goto(server.url + "/login")
        page.fill("#username", name)
        page.fill("#password", PASSWORD)
        page.click("#submit")
        page.wait_for_url(server.url + "/my/bots")
        page.fill("#bot-name", f"{name}-bot")
        page.click("#create-bot")
        token = page.locator("#bot-token").inner_text().strip()
        assert page.locator("#referee-address").inner_text() == REFEREE
        command = page.locator("#connect-command").inner_text().strip()
        assert command == f'parterre connect --address {REFEREE} --token {token} --exec "python3 my_bot.py"'
        page.click("button[data-copy='connect-command']")
        page.wait_for_function("document.querySelector(\"button[data-copy='connect-command']\").textContent"
                               " === 'Copied'")
        assert page.evaluate("navigator.clipboard.readText()") == command
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, _past(page, 390)
    finally:
        context.close()
    assert errors == []
