"""La Fleur and Flowar boards in a real browser: a full replay stepped through, checked against the engine.

Given a La Fleur and a Flowar match played through the engines and recorded,
when chromium steps through the whole replay with the keyboard, then at
several steps the board shows the cards of the shared board by name (La
Fleur: the Flower Market and Garden Features display; Flowar: the Flower
Market and Contract grid) and each seat's public state (La Fleur: Prestige and
Coins; Flowar: Coins and Torches). The oracle is the engine's own spectator
observation at that step (``State.observation(None)``, rebuilt here from the
replay) and the game's card data, not the board adapter.

Also: the pages fit the width at 1400 px and 390 px (no horizontal scrolling
of the page), and with ``PARTERRE_SCREENSHOTS=1`` the screenshots of all three
boards at both widths are written to ``docs/screenshots/``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import test_web_browser as wb
from fixtures.browser import SCREENSHOTS, browser, chromium_present  # noqa: F401 - fixtures are found by name
from fixtures.web_helpers import play_match

from games.registry import load_game
from games.replay import iter_states
from ladder import make_pool
from ladder.tournaments import plan_match

page, served = wb.page, wb.served  # the browser tests' fixtures


def _match(served: Any, game_string: str, key: str) -> int:
    server, site = served
    pool = make_pool(site.database_url, max_size=2)
    try:
        n = load_game(game_string).num_players
        bots = [site.bots["greedy-alpha"], site.bots["random-gamma"], site.bots["first-delta"]][:n]
        mid = plan_match(pool, game_string=load_game(game_string).game_string(), bot_ids=bots,
                         plan_key=f"web:boards:{key}")
        play_match(pool, mid, {b: name for name, b in site.bots.items()}, {})
    finally:
        pool.close()
    return mid


def _replay(page: Any, server: Any, mid: int) -> dict[str, Any]:
    resp = page.request.get(server.url + f"/api/matches/{mid}/replay")
    assert resp.ok
    return resp.json()


def _step_through(page: Any, server: Any, mid: int, check: Any, checkpoints: int = 8) -> int:
    """Open the match at the start, press → through every step; call ``check(step, state)`` at checkpoints."""
    replay = _replay(page, server, mid)
    total = len(replay["steps"])
    marks = {round(k * (total - 1) / checkpoints) for k in range(checkpoints + 1)}
    page.goto(server.url + f"/matches/{mid}?step=-1")
    checked = 0
    for i, state in iter_states(replay):
        if i >= 0:
            page.keyboard.press("ArrowRight")
            page.wait_for_selector(f'#board .board-frame[data-step="{i}"]')
        if i in marks:
            check(i, state.observation(None))
            checked += 1
    return checked


def _board_text(page: Any, selector: str = "#board") -> str:
    return page.inner_text(selector)


def test_a_full_lafleur_replay_shows_named_cards_and_each_chateau(page: Any, served: Any) -> None:
    from games.lafleur.cards import card_name

    server, _site = served
    mid = _match(served, "lafleur(players=2)", "lafleur")

    def check(step: int, obs: dict[str, Any]) -> None:
        text = _board_text(page)
        for m in obs["market"] + obs["garden_features"]:
            if m["card"]:
                assert card_name(m["card"]) in text, (step, m)
                assert page.locator(f'#board [data-card="{m["card"]}"]').count() >= 1
        for v in obs["visitors"]:
            assert card_name(v["card"]) in text, (step, v)
        for p in obs["players"]:
            seat = page.inner_text(f'#board .lf-player[data-seat="{p["seat"]}"]')
            assert f"{p['prestige']}\nPrestige" in seat or f"{p['prestige']} Prestige" in seat, (step, seat)
            assert f"{p['coins']} Coins" in seat.replace("\n", " "), (step, seat)
            for g in p["garden_features"]:
                assert card_name(g) in seat
            for h in p["hand"]:  # public hand cards only: the spectator's own view
                assert card_name(h) in seat
            if p["character"]:
                assert card_name(p["character"]) in seat

    assert _step_through(page, server, mid, check) >= 8
    assert "game over" in _board_text(page) or "final" in _board_text(page)
    assert page.errors == []


def test_the_lafleur_solo_opponent_is_shown_as_a_player(page: Any, served: Any) -> None:
    from games.lafleur.cards import card_name

    server, _site = served
    mid = _match(served, "lafleur(players=1)", "lafleur-solo")
    replay = _replay(page, server, mid)
    step = min(150, len(replay["steps"]) - 1)
    obs = next(s for i, s in iter_states(replay) if i == step).observation(None)
    page.goto(server.url + f"/matches/{mid}?step={step}")
    opp = page.locator("#board .lf-player", has_text="Solo opponent")
    want = next(p for p in obs["players"] if p["automaton"])
    text = opp.inner_text().replace("\n", " ")
    assert opp.count() == 1 and "automaton" in text and f"{want['prestige']} Prestige" in text
    assert card_name(want["character"]) in text  # the opponent's Character is drawn face up
    assert page.errors == []


def test_a_full_flowar_replay_shows_named_cards_and_each_player_board(page: Any, served: Any) -> None:
    from games.flowar.cards import COLOURS, CONTRACT_INDEX, CONTRACTS, FLOWER_INDEX, FLOWERS

    server, _site = served
    mid = _match(served, "flowar(players=2)", "flowar")

    def check(step: int, obs: dict[str, Any]) -> None:
        for f in obs["market"]:
            if f:
                chip = page.locator(f'#board .fw-grids [data-card="{f}"]')
                assert chip.count() >= 1, (step, f)
                assert COLOURS[FLOWERS[FLOWER_INDEX[f]].colour] in chip.first.inner_text()
        for c in obs["contract_grid"]:
            if c:
                chip = page.locator(f'#board .fw-grids [data-card="{c}"]').first
                con = CONTRACTS[CONTRACT_INDEX[c]]
                assert f"{con.coins} Coins" in chip.inner_text(), (step, c)
        for k in obs["kingdoms"]:
            assert k["name"] in _board_text(page)
        for p in obs["players"]:
            seat = page.inner_text(f'#board .fw-player[data-seat="{p["seat"]}"]').replace("\n", " ")
            assert f"{p['coins']} Coins" in seat and f"{p['torches']} Torches" in seat, (step, seat)
            assert "MP hidden" in seat or step == -1 or obs["phase"] == "game_over"

    assert _step_through(page, server, mid, check) >= 8
    assert page.errors == []


def test_flowar_taxus_is_shown_as_a_player(page: Any, served: Any) -> None:
    server, _site = served
    mid = _match(served, "flowar(players=1)", "flowar-solo")
    page.goto(server.url + f"/matches/{mid}?step=150")
    taxus = page.locator("#board .fw-player.taxus")
    assert taxus.count() == 1 and "Taxus" in taxus.inner_text() and "MP" in taxus.inner_text()
    assert page.errors == []


@pytest.mark.parametrize("width", [1400, 390])
def test_match_pages_fit_the_width_and_screenshots(page: Any, served: Any, width: int) -> None:
    server, site = served
    mids = {
        "floriferous": site.four_player,
        "lafleur": _match(served, "lafleur(players=3)", f"lafleur-shot-{width}"),
        "flowar": _match(served, "flowar(players=3)", f"flowar-shot-{width}"),
    }
    page.set_viewport_size({"width": width, "height": 900})
    for game, mid in mids.items():
        page.goto(server.url + f"/matches/{mid}")
        decisions = (page.get_attribute("#viewer", "data-decisions") or "").split(",")
        page.goto(server.url + f"/matches/{mid}?step={decisions[min(40, len(decisions) - 1)]}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{game} at {width} px scrolls sideways by {overflow} px"
        if os.environ.get("PARTERRE_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            suffix = "" if width == 1400 else "-phone"
            page.screenshot(path=str(SCREENSHOTS / f"replay-{game}{suffix}.png"), full_page=True)
    assert page.errors == []
