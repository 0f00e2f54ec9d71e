# ruff: noqa: F811 - the fixtures imported from fixtures.browser are used as arguments by name
"""The owner's seat view in a real headless browser (Debian's chromium via Playwright), at 1400 and 390 px.

Two accounts sign up through the public API, each makes a La Fleur bot, and a 2-player match between
them is played through the engine and recorded with a debug text per decision that names its step
(``fixtures.web_helpers.play_match``). Signed in as the first owner, at both widths: each of its
moves' blocks lists the legal actions an independent replay of the public replay (``GET
/api/matches/{id}/replay``, the engine at the replay's rules revision) offers at that step, in order,
the played one marked; the debug text that names the step is in that step's block, beside the list
(to its right at 1400 px, under it at 390 px); opening "what seat 1 saw" draws the board of the state
the seat was asked in (the public board of that step, from that seat); and the page never scrolls
sideways. The other owner gets 404 for the page. Skipped, with the reason, when ``/usr/bin/chromium``
is absent (as tests/e2e/test_web_browser.py); ``PARTERRE_SCREENSHOTS=1`` writes
``docs/screenshots/seat-view-1400.png`` and ``seat-view-390.png``.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any

from fixtures.browser import (  # noqa: F401 - fixtures are found by name
    SCREENSHOTS,
    browser,
    chromium_present,
    expect,
    served,
)
from fixtures.web_helpers import play_match

from games.registry import load_game
from ladder.tournaments import plan_match

SHOT_MAX_HEIGHT = 3000
"""The screenshots show the top of the page (the first moves, one board open): a whole match runs to metres."""
WIDTHS = (1400, 390)
PASSWORD = "a long browser password"
GAME = "lafleur(players=2)"


def note(seat: int, step: int) -> str:
    """The debug text of a decision: it names its step, and holds a word too long for a phone and markup."""
    return f"seat {seat} at step {step}: <b>thinking</b>\nan_unbroken_word_far_too_long_for_a_phone_screen_{step}"


def _owner(browser: Any, base: str, name: str) -> tuple[Any, dict[str, str], int]:
    """A browser context signed in as a new account (made through the API) with a La Fleur bot."""
    context = browser.new_context()
    api = context.request
    assert api.post(base + "/api/accounts", data={"username": name, "password": PASSWORD}).status == 201
    basic = {"Authorization": "Basic " + base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()}
    r = api.post(base + "/api/tokens", data={"scopes": ["bot:manage"]}, headers=basic)
    assert r.status == 201, r.text()
    bearer = {"Authorization": f"Bearer {r.json()['token']}"}
    r = api.post(base + "/api/bots", data={"name": f"{name}-bot", "games": ["lafleur"]}, headers=bearer)
    assert r.status == 201, r.text()
    page = context.new_page()
    page.goto(base + "/login")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url(re.compile(r".*/my/bots$"))
    page.close()
    return context, bearer, int(r.json()["id"])


def _oracle(replay: dict[str, Any], seat: int) -> dict[int, tuple[list[str], int]]:
    """Step -> (labels of the legal actions the engine offers ``seat`` before it, index of the recorded action)."""
    game = load_game(replay["game_string"]).at_revision(replay.get("rules_revision", 1))
    state = game.new_initial_state()
    out: dict[int, tuple[list[str], int]] = {}
    for rec in replay["steps"]:
        if rec["player"] == seat:
            legal = state.legal_actions()
            out[rec["i"]] = ([a.label() for a in legal], [a.to_json() for a in legal].index(rec["action"]))
        state.apply_action(game.action_from_json(rec["action"]))
    return out


def _no_sideways_scroll(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll} px wide at a {width} px viewport"


def test_the_seat_view_lists_each_moves_legal_actions_and_debug_text_at_both_widths(
        served: tuple[str, Any], browser: Any) -> None:
    base, pool = served
    owner, _, mine = _owner(browser, base, "seat-owner")
    other, _, theirs = _owner(browser, base, "seat-rival")
    try:
        mid = plan_match(pool, game_string=GAME, bot_ids=[mine, theirs], plan_key="browser:seat-view")
        play_match(pool, mid, {mine: "seat-owner-bot", theirs: "seat-rival-bot"}, {}, debug_text=note)
        replay = owner.request.get(base + f"/api/matches/{mid}/replay").json()
        expected = _oracle(replay, 0)
        steps = sorted(expected)
        widest = max(steps, key=lambda i: len(expected[i][0]))
        checked = [steps[0], widest, steps[-1]]
        errors: list[str] = []
        page = owner.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            response = page.goto(base + f"/my/matches/{mid}")
            assert response is not None and response.status == 200
            assert page.locator("li.decision").count() == len(steps)
            _no_sideways_scroll(page, width)
            for i in checked:
                labels, chosen = expected[i]
                block = page.locator(f"li.decision#step-{i}")
                expect(block.locator("h3")).to_contain_text(f"step {i + 1} · my move")
                items = block.locator("ol.legal > li")
                assert items.count() == len(labels)
                assert [t.strip() for t in items.all_inner_texts()] == [
                    f"{x} chosen" if k == chosen else x for k, x in enumerate(labels)]
                assert block.locator("ol.legal > li.chosen").count() == 1
                expect(block.locator("ol.legal > li.chosen")).to_contain_text(labels[chosen])
                debug = block.locator(".debug-text pre")
                expect(debug).to_be_visible()
                assert debug.inner_text() == note(0, i)  # this step's own text, as text (the <b> is not markup)
                listed, beside = block.locator("ol.legal").bounding_box(), debug.bounding_box()
                assert listed is not None and beside is not None
                if width >= 1000:  # to the right of the list, level with it
                    assert beside["x"] >= listed["x"] + listed["width"] - 1 and beside["y"] < listed["y"] + 40
                else:  # under it
                    assert beside["y"] >= listed["y"] + listed["height"] - 1
            # the board the seat saw at its first move: the state after the step before, from its seat
            first = page.locator(f"li.decision#step-{steps[0]}")
            first.locator("details.seat-board > summary").click()
            frame = first.locator(".board-frame")
            expect(frame).to_be_visible()
            assert frame.get_attribute("data-step") == str(steps[0] - 1)
            expect(frame.locator(".badge.seat-view")).to_have_text("seat 1's view")
            expect(frame.locator(".lafleur-board")).to_be_visible()
            _no_sideways_scroll(page, width)
            if os.environ.get("PARTERRE_SCREENSHOTS") == "1":
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                height = min(int(page.evaluate("document.documentElement.scrollHeight")), SHOT_MAX_HEIGHT)
                page.screenshot(path=str(SCREENSHOTS / f"seat-view-{width}.png"), full_page=True,
                                clip={"x": 0, "y": 0, "width": width, "height": height})
        # the other owner: the page of the first seat's bot is not there for them
        rival = other.new_page()
        response = rival.goto(base + f"/my/matches/{mid}?bot_id={mine}")
        assert response is not None and response.status == 404
        assert "seat 0 at step" not in rival.content()
        assert errors == [], errors
    finally:
        owner.close()
        other.close()
