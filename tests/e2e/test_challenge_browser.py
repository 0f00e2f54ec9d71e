# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""Challenging a bot by its name, and answering a challenge, in a real headless browser at 1400 and 390 px.

Debian's chromium via Playwright (as tests/e2e/test_participants_browser.py). At each width a
challenger searches a bot by name (results as they type), picks it, picks the game's player count
and a variant (applied at once), and sends; the bot's owner, whose policy is "ask me each time",
declines the first challenge and accepts the second on their page; the challenger's page shows
each answer. The stored challenges are the oracle of what was sent and answered. A second run
does the same with JavaScript off: the search is a plain GET form and each result a button.
No page scrolls sideways. Skipped, with the reason, when ``/usr/bin/chromium`` is absent.
``PARTERRE_SCREENSHOTS=1`` writes ``docs/screenshots/challenge-{1400,390}.png`` (the picker
with an opponent picked) and ``incoming-challenges-{1400,390}.png`` (the owner's page).
``PARTERRE_TEST_WEB_PORT`` chooses the served app's port (default: any free one).
"""

from __future__ import annotations

import base64
import itertools
import os
import re
from typing import Any

import pytest
from fixtures.browser import (  # noqa: F401 - fixtures are found by name
    SCREENSHOTS,
    browser,
    chromium_present,
    expect,
    served,
)

from ladder import accounts as acc

PASSWORD = "a long browser password"
_addresses = itertools.count(1)


def _shot(page: Any, name: str) -> None:
    if os.environ.get("PARTERRE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def _no_sideways_scroll(page: Any) -> None:
    wide = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert wide[0] <= wide[1], f"{page.url} is {wide[0]} px wide in a {wide[1]} px viewport"


def _participant(browser: Any, served: tuple[str, Any], name: str, bot: str, width: int,
                 **bot_fields: Any) -> tuple[Any, int]:
    """A browser page logged in as a new account ``name`` that owns ``bot`` (made through the API); its bot id.
    The account is signed up as from an address of its own (sign-ups are limited per address)."""
    base, pool = served
    acc.sign_up(pool, name, PASSWORD, address=f"198.51.100.{next(_addresses)}", mode="open")
    context = browser.new_context(viewport={"width": width, "height": 900},
                                  java_script_enabled=bot_fields.pop("javascript", True))
    api = context.request
    basic = {"Authorization": "Basic " + base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()}
    r = api.post(base + "/api/tokens", data={"scopes": ["bot:manage"]}, headers=basic)
    assert r.status == 201, r.text()
    r = api.post(base + "/api/bots", data={"name": bot, "games": ["floriferous"], **bot_fields},
                 headers={"Authorization": f"Bearer {r.json()['token']}"})
    assert r.status == 201, r.text()
    page = context.new_page()
    page.goto(base + "/login")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url(base + "/my/bots")
    return page, int(r.json()["id"])


def _stored(pool: Any, match_id: int) -> tuple[str, str, list[int], list[Any]]:
    with pool.connection() as conn:
        row = conn.execute("SELECT c.status, m.game_string, array_agg(s.bot_id ORDER BY s.seat) FROM challenges c "
                           "JOIN matches m ON m.id = c.match_id JOIN seats s ON s.match_id = c.match_id "
                           "WHERE c.match_id = %s GROUP BY c.status, m.game_string", (match_id,)).fetchone()
        answers = [a for (a,) in conn.execute("SELECT answer FROM challenge_answers WHERE match_id = %s",
                                               (match_id,)).fetchall()]
    return row[0], row[1], list(row[2]), answers


def _send(page: Any, base: str, mine: int, opponent: str, javascript: bool, shot: str | None = None) -> int:
    """On the challenge page: 2 players, the variant "competitive bounties", ``opponent`` found by name and sent."""
    page.goto(base + "/my/challenge")
    _no_sideways_scroll(page)
    if javascript:  # a changed select or switch applies at once; the results come as one types
        with page.expect_navigation():
            page.select_option("#players", "3")
        expect(page.locator("legend", has_text="2 to pick")).to_be_visible()
        with page.expect_navigation():
            page.select_option("#players", "2")
        with page.expect_navigation():
            page.check("input[name=competitive_bounties]")
        page.locator("#q").press_sequentially(opponent)
        expect(page.locator("#results button.pick")).to_have_count(1)
        assert f"q={opponent}" not in page.url  # no page load: the results were fetched
    else:  # the same steps, each a plain form submission
        page.select_option("#players", "2")
        page.check("input[name=competitive_bounties]")
        page.click("#apply")
        page.fill("#q", opponent)
        page.click("#search")
        page.wait_for_url(re.compile(rf".*q={opponent}.*"))
    row = page.locator("#results tr", has_text=opponent)
    expect(row).to_contain_text("asks its owner")
    with page.expect_navigation():
        row.locator("button.pick").click()
    expect(page.locator("#picked")).to_contain_text(opponent)
    expect(page.locator("#summary")).to_contain_text(
        f"floriferous(competitive_bounties=true,players=2): your bot, {opponent}")
    page.select_option("#mine", str(mine))
    _no_sideways_scroll(page)
    if shot:
        _shot(page, shot)
    page.click("#send-challenge")
    page.wait_for_url(re.compile(r".*/my/challenges\?sent=\d+$"))
    match_id = int(page.url.rsplit("=", 1)[1])
    expect(page.locator(f"#sent-{match_id}")).to_have_attribute("data-status", "asked")
    return match_id


@pytest.mark.parametrize("width", [1400, 390])
def test_challenger_picks_by_name_and_the_owner_answers(served: tuple[str, Any], browser: Any, width: int) -> None:
    base, pool = served
    errors: list[str] = []
    owner, theirs = _participant(browser, served, f"owner-{width}", f"rosebud-{width}", width,
                                 challenge_policy="accept")
    challenger, mine = _participant(browser, served, f"challenger-{width}", f"thistle-{width}", width)
    for page in (owner, challenger):
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda d: (errors.append(d.message), d.dismiss()))
    # the owner chooses to be asked, on the bot's page
    owner.goto(f"{base}/my/bots/{theirs}")
    owner.check("input[name=challenge_policy][value=ask]")
    owner.click("form[action$='/settings'] button[type=submit]")
    expect(owner.locator("input[name=challenge_policy][value=ask]")).to_be_checked()
    declined = _send(challenger, base, mine, f"rosebud-{width}", True, f"challenge-{width}.png")
    assert _stored(pool, declined) == ("asked", "floriferous(competitive_bounties=true,extended=false,players=2)",
                                       [mine, theirs], [None])
    owner.goto(base + "/my/challenges")
    expect(owner.locator(f"#incoming-{declined}")).to_contain_text(f"challenger-{width}")
    owner.click(f"#decline-{declined}")
    owner.wait_for_url(f"{base}/my/challenges?declined={declined}")
    expect(owner.locator("p.notice")).to_contain_text(f"challenge {declined} declined")
    assert _stored(pool, declined)[0::3] == ("declined", ["declined"])
    challenger.goto(base + "/my/challenges")
    sent = challenger.locator(f"#sent-{declined}")
    expect(sent).to_have_attribute("data-status", "declined")
    expect(sent).to_contain_text(f"the owner of bot rosebud-{width} (id {theirs}) declined")
    accepted = _send(challenger, base, mine, f"rosebud-{width}", True)
    owner.goto(base + "/my/challenges")
    expect(owner.locator(f"#answered-{declined}")).to_have_attribute("data-status", "declined")
    _no_sideways_scroll(owner)
    _shot(owner, f"incoming-challenges-{width}.png")
    owner.click(f"#accept-{accepted}")
    owner.wait_for_url(f"{base}/my/challenges?accepted={accepted}")
    assert _stored(pool, accepted)[0::3] == ("waiting", ["accepted"])
    challenger.goto(base + "/my/challenges")
    sent = challenger.locator(f"#sent-{accepted}")
    expect(sent).to_have_attribute("data-status", "waiting")
    expect(sent).to_contain_text("accepted")
    expect(sent).to_contain_text("waiting for its bots")
    _no_sideways_scroll(challenger)
    for page in (owner, challenger):
        page.context.close()
    assert errors == []


def test_the_same_without_javascript(served: tuple[str, Any], browser: Any) -> None:
    base, pool = served
    owner, theirs = _participant(browser, served, "owner-nojs", "rosebud-nojs", 1400, challenge_policy="ask",
                                 javascript=False)
    challenger, mine = _participant(browser, served, "challenger-nojs", "thistle-nojs", 1400, javascript=False)
    match_id = _send(challenger, base, mine, "rosebud-nojs", False)
    assert _stored(pool, match_id)[:3] == ("asked", "floriferous(competitive_bounties=true,extended=false,players=2)",
                                           [mine, theirs])
    owner.goto(base + "/my/challenges")
    owner.click(f"#accept-{match_id}")
    owner.wait_for_url(f"{base}/my/challenges?accepted={match_id}")
    challenger.goto(base + "/my/challenges")
    expect(challenger.locator(f"#sent-{match_id}")).to_have_attribute("data-status", "waiting")
    for page in (owner, challenger):
        page.context.close()
