# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""Every HTML page of the site fits a 390 px phone and a 1400 px screen, in a real browser.

The routes are enumerated from the app itself (``fastapi.routing.iter_route_contexts``
over ``create_app().routes``), so a route added later is visited too: each GET route
outside :data:`SKIPPED` must have its path parameters filled in :func:`paths` from the
data this module creates, or its test fails naming it. The data is real: the seeded
site of ``fixtures.web_helpers`` (bots with matches and replays, a tournament), and,
through the public API, an account signed in in the browser for the owner's pages
(``/my/...``), its bot with a hosted version, a finished match of that bot and a
challenge.

For each route, in chromium (Debian's, as tests/e2e/test_web_browser.py) at a
viewport 390 px wide and then 1400 px: the answer is an HTML page (200), and
``document.documentElement.scrollWidth`` is at most the viewport's width (the
page does not scroll sideways; a wide table may scroll inside its own box), measured once any part
marked ``data-drawing`` (drawn by a script, as the API page's Swagger UI) has lost the mark.
``PARTERRE_SCREENSHOTS=1`` also writes a full-page screenshot of each route at
both widths to ``docs/screenshots/route-<path>-<width>.png`` (its top :data:`SHOT_MAX_HEIGHT` px).
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import iter_route_contexts
from fixtures.browser import SCREENSHOTS, browser, chromium_present  # noqa: F401 - fixtures are found by name
from fixtures.ladder_helpers import module_database
from fixtures.web_helpers import XSS_NAME, Site, play_match, seed_site
from test_hosted import PASSWORD, python_bot

from ladder import make_pool
from ladder.challenges import create_challenge
from ladder.competitions import enter_competition as comp_enter
from ladder.tournaments import plan_match
from web import create_app, start_background

WIDTHS = (390, 1400)
SHOT_MAX_HEIGHT = 4000
"""A screenshot shows at most the top 4000 px of a page (the rules pages and the bot guide run to tens of
thousands: megabytes of text that docs/ holds already)."""

SKIPPED = {
    "/api/": "the JSON API: no page to lay out",
    "/static/": "static files (style sheet, scripts, icon)",
    "/openapi.json": "the API's description (JSON)",
    "/matches/{match_id}/replay.json": "a replay download (JSON)",
    "/my/bots/{bot_id}/hosted/{number}/games/{kind}/{n}.json": "a hosted version's game's replay download (JSON)",
    "/matches/{match_id}/live": "a server-sent event stream the match page reads",
    "/matches/{match_id}/board": "the board fragment the match page swaps in; laid out inside the match page",
}
"""Path prefixes (ending in ``/``) and paths of GET routes that are not HTML pages, and why."""


def html_routes() -> list[str]:
    """The app's GET routes not in :data:`SKIPPED`, in the app's order."""
    app = create_app("postgresql:///unused")  # the pool opens only when the app starts
    out: list[str] = []
    for route in iter_route_contexts(app.routes):
        path = str(getattr(route, "path", ""))
        methods = getattr(route, "methods", None) or set()
        skipped = any(path.startswith(k) if k.endswith("/") else path == k for k in SKIPPED)
        if "GET" in methods and not skipped and path not in out:
            out.append(path)
    return out


class Owner:
    """What the owner's pages need: an account signed in, its bot, a hosted version, a match, a challenge."""

    def __init__(self, username: str, bot_id: int, version: int, match_id: int, challenge_id: int,
                 competition_id: int) -> None:
        self.username, self.bot_id, self.version = username, bot_id, version
        self.match_id, self.challenge_id, self.competition_id = match_id, challenge_id, competition_id


def paths(site: Site, owner: Owner) -> dict[str, list[str]]:
    """Each route with a path parameter, filled from the data: one or more concrete paths (the first is shot)."""
    b = site.bots
    return {
        "/leaderboard/{game}": ["/leaderboard/floriferous", "/leaderboard/toy"],
        "/bots/{bot_id}": [f"/bots/{b['greedy-alpha']}", f"/bots/{b[XSS_NAME]}", f"/bots/{site.revoked}",
                           f"/bots/{owner.bot_id}"],
        "/tournaments/{tournament_id}": [f"/tournaments/{site.tournament_id}"],
        "/matches/{match_id}": [f"/matches/{site.four_player}?step=100", f"/matches/{site.four_player}?all=1",
                                f"/matches/{site.toy}?step=6", f"/matches/{site.timeout_match}",
                                f"/matches/{site.unfinished}", f"/matches/{owner.challenge_id}"],
        "/my/bots/{bot_id}": [f"/my/bots/{owner.bot_id}"],
        "/my/matches/{match_id}": [f"/my/matches/{owner.match_id}?bot_id={owner.bot_id}"],
        "/my/bots/{bot_id}/hosted": [f"/my/bots/{owner.bot_id}/hosted"],
        "/my/bots/{bot_id}/hosted/{number}": [f"/my/bots/{owner.bot_id}/hosted/{owner.version}"],
        "/competitions/{competition_id}": [f"/competitions/{owner.competition_id}"],
        "/rules/{game}": ["/rules/floriferous", "/rules/la-fleur", "/rules/flowar"],
        "/docs/{name}": ["/docs/bots", "/docs/write-a-bot"],
    }


def leagues(pool: Any, site: Site) -> None:
    """House bots keeping Floriferous' gates and a promotion of greedy-alpha, so the bot page shows a
    league with a gate passed (its evidence) and the next gate, and the leaderboard its badges."""
    from datetime import UTC, datetime

    from ladder.house import ensure_house_bot

    rnd, _ = ensure_house_bot(pool, "random", ["floriferous"])
    ensure_house_bot(pool, "greedy", ["floriferous"])
    with pool.connection() as conn:
        conn.execute("INSERT INTO league_promotions (bot_id, game, league, boss_id, promoted_at, games, wins, draws, "
                     "score, lower_bound) VALUES (%s, 'floriferous', 'bronze', %s, %s, 41, 27, 2, 0.683, 0.55)",
                     (site.bots["greedy-alpha"], rnd, datetime(2026, 12, 7, tzinfo=UTC)))


@pytest.fixture(scope="module")
def served(pg_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Site]]:
    """The site over its own seeded database, with sign-up open (the owner's account comes through the API)."""
    databases = module_database(pg_admin_url)
    url = next(databases)
    pool = make_pool(url, max_size=4)
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_HOME", str(tmp_path_factory.mktemp("home")))  # the session secret is generated there
    mp.delenv("PARTERRE_SESSION_SECRET", raising=False)
    mp.delenv("PARTERRE_REDIS_URL", raising=False)
    site = seed_site(pool)
    leagues(pool, site)
    server = start_background(pool=pool, port=int(os.environ.get("PARTERRE_TEST_WEB_PORT", "0")))
    try:
        yield server.url, pool, site
    finally:
        server.stop()
        mp.undo()
        pool.close()
        next(databases, None)


@pytest.fixture(scope="module")
def owner(served: tuple[str, Any, Site], browser: Any) -> Iterator[tuple[Any, Owner]]:
    """A browser context signed in as an account with a bot, built through the public API."""
    base, pool, site = served
    context = browser.new_context()
    api = context.request
    name = "phone-owner"
    assert api.post(base + "/api/accounts", data={"username": name, "password": PASSWORD}).status == 201
    basic = {"Authorization": "Basic " + base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()}
    r = api.post(base + "/api/tokens", data={"scopes": ["bot:manage"]}, headers=basic)
    assert r.status == 201, r.text()
    bearer = {"Authorization": f"Bearer {r.json()['token']}"}
    r = api.post(base + "/api/bots", data={"name": "phone-bot-with-a-rather-long-name-for-a-phone",
                                            "games": ["floriferous"]}, headers=bearer)
    assert r.status == 201, r.text()
    bot_id = int(r.json()["id"])
    r = api.post(base + f"/api/bots/{bot_id}/versions", data=python_bot(),
                 headers={**bearer, "Content-Type": "application/octet-stream"})
    assert r.status == 201, r.text()
    version = int(r.json().get("number", 1))
    names = {bid: n for n, bid in site.bots.items()} | {bot_id: "phone-bot-with-a-rather-long-name-for-a-phone"}
    match_id = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[bot_id, site.bots["greedy-beta"]],
                          plan_key="web:phone:owner")
    play_match(pool, match_id, names, {}, debug_text="my_debug_text_with_an_unbroken_word_far_too_long_for_a_phone_x"
                                                      " and\na second line")
    account_id = int(api.get(base + "/api/account", headers=bearer).json()["id"])
    challenge_id = create_challenge(pool, game_string="floriferous(players=2)",  # the seeded bots have no owner
                                    bot_ids=[bot_id, site.bots["greedy-alpha"]], rated=False, challenger_id=account_id)
    from datetime import UTC, datetime

    from fixtures.competition_helpers import competition

    cup = competition(pool, now=datetime.now(UTC), name="phone cup with a long name for a narrow screen",
                      description="# Rules\n\nAn_unbroken_word_that_is_far_too_long_for_a_phone_screen_to_hold_x "
                                  "and a table:\n\n| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | 4 |")
    comp_enter(pool, cup.id, bot_id, account_id=account_id, now=datetime.now(UTC))
    page = context.new_page()
    page.goto(base + "/login")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url(re.compile(r".*/my/bots$"))
    page.close()
    try:
        yield context, Owner(name, bot_id, version, match_id, challenge_id, cup.id)
    finally:
        context.close()


def _shot_name(path: str, width: int) -> str:
    """``/bots/{bot_id}`` at 390 px -> ``route-bots-id-390.png`` (``/`` is ``route-home``)."""
    words = [re.sub(r"^\{(\w+_)?(\w+)\}$", r"\2", w) for w in path.strip("/").split("/") if w]
    return "route-" + ("-".join(words) or "home").replace(".", "-").replace("_", "-") + f"-{width}.png"


@pytest.mark.parametrize("route", html_routes())
def test_every_html_route_fits_a_phone_and_a_wide_screen(
    route: str, served: tuple[str, Any, Site], owner: tuple[Any, Owner]
) -> None:
    base, _pool, site = served
    context, who = owner
    filled = paths(site, who)
    if "{" in route and route not in filled:
        pytest.fail(f"no data for the route {route}: add its paths to paths() in {__name__} "
                    f"(or, if it is no HTML page, to SKIPPED with the reason)")
    targets = filled.get(route, [route])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            for n, target in enumerate(targets):
                response = page.goto(base + target)
                assert response is not None and response.status == 200, (target, response and response.status)
                # a part a script draws after loading (the API page's Swagger UI) is measured once drawn
                page.wait_for_selector("[data-drawing]", state="detached", timeout=20_000)
                assert "text/html" in (response.headers.get("content-type") or ""), (
                    f"{target} is not an HTML page: add {route} to SKIPPED with the reason")
                scroll = page.evaluate("document.documentElement.scrollWidth")
                assert scroll <= width, f"{target} is {scroll} px wide at a {width} px viewport"
                if n == 0 and os.environ.get("PARTERRE_SCREENSHOTS") == "1":
                    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    height = min(int(page.evaluate("document.documentElement.scrollHeight")), SHOT_MAX_HEIGHT)
                    page.set_viewport_size({"width": width, "height": max(height, 900)})
                    page.screenshot(path=str(SCREENSHOTS / _shot_name(route, width)))
                    page.set_viewport_size({"width": width, "height": 900})
    finally:
        page.close()
    assert errors == [], errors
