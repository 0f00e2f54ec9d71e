# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""The web site in a real headless browser (Debian's chromium driven by Playwright).

Given the site served by uvicorn (``web.start_background``) over a real
database seeded with real matches, when chromium loads each page type, then the
pages render without script errors, a bot named ``<script>alert(1)</script>``
shows as text and runs nothing, the rating plot is drawn, and the replay
viewer steps with the keyboard, changing the board panel.

Chromium comes from Debian (``apt-get install -y chromium``), never from
``playwright install``; these tests are skipped, with that reason, when
``/usr/bin/chromium`` is absent — and fail instead under ``CI=true``
(``fixtures.toolchains``). ``PARTERRE_SCREENSHOTS=1`` also writes the
screenshots of ``docs/screenshots/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.browser import (  # noqa: F401 - fixtures are found by name
    SCREENSHOTS,
    browser,
    chromium_present,
    expect,
)
from fixtures.web_helpers import XSS_NAME, Site, shared_site

from web import BackgroundServer, start_background


@pytest.fixture(scope="module")
def served(pg_admin_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[BackgroundServer, Site]]:
    """The site on a free port over the shared seeded database."""
    site = shared_site(pg_admin_url, request.config)
    server = start_background(site.database_url)
    try:
        yield server, site
    finally:
        server.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that records script errors and fails the test on any dialog (alert)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.on("console", lambda msg: pg.errors.append(msg.text) if msg.type == "error" else None)
    pg.on("dialog", lambda d: (pg.errors.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    context.close()


def _goto_decision(page: Any, url: str, n: int) -> None:
    """Open a match page at its ``n``-th decision (or its last one)."""
    page.goto(url)
    decisions = (page.get_attribute("#viewer", "data-decisions") or "").split(",")
    page.goto(f"{url}?step={decisions[min(n, len(decisions) - 1)]}")


def _shot(page: Any, name: str) -> None:
    if os.environ.get("PARTERRE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_each_page_type_loads_without_script_errors(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    for path, heading in [
        ("/", "Parterre bot ladder"),
        ("/leaderboard/floriferous", "Floriferous leaderboard"),
        (f"/bots/{site.bots['greedy-alpha']}", "greedy-alpha"),
        (f"/tournaments/{site.tournament_id}", "Spring <em>Cup</em>"),
        (f"/matches/{site.four_player}", f"Match #{site.four_player}"),
        (f"/matches/{site.toy}", f"Match #{site.toy}"),
    ]:
        page.goto(server.url + path)
        assert heading in page.inner_text("h1"), path
    assert page.errors == []
    response = page.goto(server.url + "/bots/999999")
    assert response.status == 404 and "Not found" in page.inner_text("h1")
    page.errors.clear()  # the browser logs the 404 it was just asked to load
    page.goto(server.url + "/leaderboard/floriferous")
    _shot(page, "leaderboard.png")
    assert page.errors == []


def test_a_hostile_bot_name_is_shown_as_text(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    for path in ("/leaderboard/floriferous", f"/bots/{site.bots[XSS_NAME]}", f"/matches/{site.four_player}?step=100"):
        page.goto(server.url + path)
        assert XSS_NAME in page.inner_text("body"), path
        assert page.locator("main script").count() == 0
        assert page.locator("img[src=x]").count() == 0
    assert page.errors == []  # no alert() dialog ran


def test_the_rating_plot_is_drawn(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    page.goto(server.url + f"/bots/{site.bots['greedy-alpha']}")
    plot = page.locator('svg.rating-plot[data-game="floriferous"]')
    box = plot.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    line = plot.locator("polyline.elo-line")
    points = line.get_attribute("points") or ""
    assert len(points.split()) > 5
    line_box = line.bounding_box()
    assert line_box is not None and line_box["width"] > 200  # drawn across the plot, not collapsed
    assert plot.locator("circle.marker").count() == len(points.split()) - 1
    _shot(page, "bot.png")
    assert page.errors == []


def FRAME(page: Any) -> Any:  # reads like the element it names
    """The board panel's root element (``data-step``, ``data-all``)."""
    return page.locator("#board .board-frame")


def _caption(page: Any) -> str:
    return str(page.inner_text("#board .step-no"))


def _board(page: Any) -> str:
    return str(page.inner_html("#board .board"))


def test_replay_viewer_steps_with_the_keyboard(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    page.goto(server.url + f"/matches/{site.four_player}")
    total = int(page.get_attribute("#viewer", "data-steps") or 0)
    assert _caption(page) == f"start / {total}"
    before = _board(page)
    page.keyboard.press("ArrowRight")
    expect(page.locator("#board .step-no")).to_have_text(f"step 1 / {total}")
    assert _board(page) != before  # the first Bounty card is revealed
    assert "reveal Bounty" in page.inner_text("#board .action-label")
    assert page.get_attribute("#steps li.current", "data-step") == "0"
    page.keyboard.press("Shift+ArrowRight")  # next decision: skips the chance steps of the deal
    expect(page.locator("#board .actor .chance")).to_have_count(0)
    decision = int(page.get_attribute("#board .board-frame", "data-step") or -1)
    assert decision > 10 and "take row" in page.inner_text("#board .action-label")
    assert re.search(r"\d+(\.\d)? ms", page.inner_text("#board .step-caption"))  # the time it took
    page.keyboard.press("ArrowLeft")
    expect(FRAME(page)).to_have_attribute("data-step", str(decision - 1))
    page.keyboard.press("End")
    expect(page.locator("#board .step-no")).to_have_text(f"step {total} / {total}")
    assert "final scores" in page.inner_text("#board") and "seed revealed" in page.inner_text("#board .seed-line")
    assert "step=" in page.url
    page.keyboard.press("Home")
    expect(page.locator("#board .step-no")).to_have_text(f"start / {total}")
    page.keyboard.press("ArrowLeft")  # stays at the start
    assert _caption(page) == f"start / {total}"
    page.click('#steps li[data-step="30"] a')
    expect(FRAME(page)).to_have_attribute("data-step", "30")
    page.fill("#jump", "61")  # the page counts steps from 1: step 61 is the wire's step 60
    page.press("#jump", "Enter")
    expect(FRAME(page)).to_have_attribute("data-step", "60")
    assert page.errors == []


def _heading_step(page: Any) -> int:
    """The step number of the board's heading, ``step N / total`` (0 at ``start / total``)."""
    m = re.fullmatch(r"(?:step (\d+)|start) / \d+", _caption(page))
    assert m, _caption(page)
    return int(m.group(1) or 0)


def test_the_step_box_counts_steps_as_the_heading_does(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    """docs/web.md "Numbering": steps from 1 on the page; the box and the heading agree, first to last."""
    server, site = served
    page.goto(server.url + f"/matches/{site.four_player}")
    total = int(page.get_attribute("#viewer", "data-steps") or 0)
    assert page.input_value("#jump") == "0" and _heading_step(page) == 0  # the start
    page.keyboard.press("ArrowRight")
    expect(page.locator("#board .step-no")).to_have_text(f"step 1 / {total}")
    assert page.input_value("#jump") == "1"
    page.keyboard.press("End")
    expect(page.locator("#board .step-no")).to_have_text(f"step {total} / {total}")
    assert page.input_value("#jump") == str(_heading_step(page)) == str(total)
    page.goto(server.url + f"/matches/{site.four_player}?step={total - 1}")  # the last step, loaded by the server
    assert page.input_value("#jump") == str(_heading_step(page)) == str(total)
    with page.context.new_page() as plain:  # the jump form without JavaScript
        plain.route("**/static/viewer.js", lambda route: route.abort())
        plain.goto(server.url + f"/matches/{site.four_player}")
        plain.fill("#jump", "1")
        plain.press("#jump", "Enter")
        plain.wait_for_url(re.compile(r".*at=1"))
        assert plain.inner_text("#board .step-no") == f"step 1 / {total}" and plain.input_value("#jump") == "1"
    assert page.errors == []


def test_replay_viewer_plays_and_pauses(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    page.goto(server.url + f"/matches/{site.four_player}")
    page.select_option("#speed", "150")
    page.keyboard.press(" ")
    expect(FRAME(page)).to_have_attribute("data-step", re.compile(r"^([3-9]|\d\d+)$"))
    page.click('[data-go="play"]')  # pause
    stopped = page.get_attribute("#board .board-frame", "data-step")
    page.wait_for_timeout(500)
    assert page.get_attribute("#board .board-frame", "data-step") == stopped
    assert page.errors == []


def test_show_all_hands_after_the_match(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    page.goto(server.url + f"/matches/{site.four_player}?step=40")
    assert page.locator("#board .chip-facedown").count() > 0
    assert page.locator("#board .chip.revealed").count() == 0
    page.check("#all-hands")
    expect(FRAME(page)).to_have_attribute("data-all", "1")
    assert page.locator("#board .chip.revealed").count() > 0
    assert page.locator("#board .chip-facedown").count() == 0
    page.keyboard.press("ArrowRight")  # stepping keeps the toggle
    expect(FRAME(page)).to_have_attribute("data-step", "41")
    assert page.get_attribute("#board .board-frame", "data-all") == "1"
    assert page.errors == []


def test_generic_board_panel_for_a_game_without_an_adapter(page: Any, served: tuple[BackgroundServer, Site]) -> None:
    server, site = served
    page.goto(server.url + f"/matches/{site.toy}?step=6")
    assert page.locator("#board .generic-board table.json-object").count() > 0
    before = _board(page)
    page.keyboard.press("ArrowRight")
    expect(FRAME(page)).to_have_attribute("data-step", "7")
    assert _board(page) != before
    assert page.errors == []
