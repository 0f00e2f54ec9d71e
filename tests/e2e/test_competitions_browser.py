# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""Competition pages in a real headless browser (Debian's chromium via Playwright), at 1400 and 390 px.

An organiser signs up, is given the role, fills the "create competition" form and lands on the
new competition's page; a second competition has run its final evaluation (results from a
model, as tests/ladder/test_competition_final.py plays them) and shows shared places. At both
widths no page scrolls sideways (the document is no wider than the viewport), the description's
``<script>`` shows as text and runs nothing. Skipped, with the reason, when ``/usr/bin/chromium``
is absent (as tests/e2e/test_web_browser.py); ``PARTERRE_SCREENSHOTS=1`` writes
``docs/screenshots/competition-*.png``.
"""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from fixtures.browser import (  # noqa: F401 - fixtures are found by name
    CHROMIUM,
    CHROMIUM_ARGS,
    SCREENSHOTS,
    chromium_present,
    served,
)
from fixtures.competition_helpers import competition, organiser
from test_competition_final import _evaluate, _field, _season

WIDTHS = (1400, 390)
DESCRIPTION = ("## The spring cup\n\nBots play **Floriferous** at two seats; the season ranks them until the "
               "deadline, then the locked versions play the final.\n\n* one account, one bot\n* hosted or "
               "connected\n\n`a-very-long-identifier-without-any-break-that-would-widen-a-narrow-phone-screen`\n\n"
               "<script>alert('description')</script> "
               "https://example.org/a/long/address/that/keeps/going/and/going/without/a/single/space/in/it")


def _shot(page: Any, name: str) -> None:
    if os.environ.get("PARTERRE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def _no_sideways_scroll(page: Any) -> None:
    wide = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert wide[0] <= wide[1], f"{page.url} is {wide[0]} px wide in a {wide[1]} px viewport"


def test_competition_pages_and_the_organisers_form_fit_1400_and_390_px(served: tuple[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    base, pool = served
    c = competition(pool, organiser(pool), name="autumn final", final_budget=200, final_max_batches=8,
                    description=DESCRIPTION, rules="*No* collusion.")
    _, bots = _field(pool, c, 4)
    strength = dict(zip(bots, [700.0, 0.0, 0.0, -700.0], strict=True))
    rng = random.Random(5)
    _season(pool, c, bots, strength, rng, 3)
    _evaluate(pool, c, strength, rng)
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("dialog", lambda d: (errors.append(d.message), d.dismiss()))
            page.goto(base + "/signup")
            page.fill("#username", "organiser-one")
            page.fill("#password", "a long organiser password")
            page.click("#submit")
            page.wait_for_url(base + "/my/bots")
            with pool.connection() as conn:
                conn.execute("UPDATE accounts SET role = 'organiser' WHERE username = 'organiser-one'")
            deadline = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0).isoformat()
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(base + "/competitions/new")
                _no_sideways_scroll(page)
                if width == WIDTHS[-1]:
                    page.fill("input[name=name]", "phone cup")
                    page.fill("input[name=deadline_at]", deadline)
                    page.fill("textarea[name=description]", DESCRIPTION)
                    page.select_option("select[name=entry_mode]", "any")
                    _shot(page, "competition-create-phone.png")
                    page.click("#competition-form button[type=submit]")
                    page.wait_for_url(f"{base}/competitions/*")
                else:
                    _shot(page, "competition-create.png")
            made = page.url
            assert "phone cup" in page.inner_text("h1") and page.inner_text("#competition-status") == "open"
            assert "left" in page.inner_text("#deadline-left")
            for width, suffix in ((1400, ""), (390, "-phone")):
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(f"{base}/competitions/{c.id}")
                places = [t.strip() for t in page.locator("#competition-table td.place").all_inner_texts()]
                assert places == ["1", "2-3", "2-3", "4"]
                assert "<script>alert('description')</script>" in page.inner_text("#description")
                assert page.locator("main script").count() == 0
                _no_sideways_scroll(page)
                _shot(page, f"competition-final{suffix}.png")
                page.goto(made)
                assert page.locator("#extend-form").count() == 1 and page.locator("#disqualify-form").count() == 1
                _no_sideways_scroll(page)
                _shot(page, f"competition{suffix}.png")
                page.goto(base + "/competitions")
                _no_sideways_scroll(page)
        finally:
            browser.close()
    assert errors == []
