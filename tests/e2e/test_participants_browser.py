# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""Sign up, create a bot and read its token in a real headless browser (Debian's chromium via Playwright).

The token shown once on the page is checked against the database (its sha256 is the bot's
``token_hash``); it is not on the page any more after a reload. Skipped, with the reason,
when ``/usr/bin/chromium`` is absent (as tests/e2e/test_web_browser.py).
"""

from __future__ import annotations

import hashlib
from typing import Any

from fixtures.browser import (  # noqa: F401 - fixtures are found by name
    CHROMIUM,
    CHROMIUM_ARGS,
    chromium_present,
    expect,
    served,
)


def test_browser_signs_up_creates_a_bot_and_reads_its_token(served: tuple[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    base, pool = served
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context().new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("dialog", lambda d: (errors.append(d.message), d.dismiss()))
            page.goto(base + "/signup")
            page.fill("#username", "browser-user")
            page.fill("#password", "a long browser password")
            page.click("#submit")
            page.wait_for_url(base + "/my/bots")
            page.fill("#bot-name", "browser-bot")
            page.check("input[name=games][value=floriferous]")
            page.click("#create-bot")
            token = page.locator("#bot-token").inner_text().strip()
            assert len(token) == 43
            with pool.connection() as conn:
                row = conn.execute("SELECT b.token_hash, a.username, b.games FROM bots b JOIN accounts a "
                                   "ON a.id = b.account_id WHERE b.name = 'browser-bot'").fetchone()
            assert row == (hashlib.sha256(token.encode()).hexdigest(), "browser-user", ["floriferous"])
            page.goto(base + "/my/bots")  # shown once: not there any more
            assert token not in page.content()
            expect(page.locator("text=browser-bot")).to_be_visible()
            cookie = [c for c in page.context.cookies() if c["name"] == "parterre_session"][0]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
        finally:
            browser.close()
    assert errors == []
