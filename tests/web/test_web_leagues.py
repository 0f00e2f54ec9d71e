"""Leagues on the web site and the JSON API (docs/ladder.md "Leagues"): the bot page shows each
game's league, the gates passed with date and evidence and the next gate with the evidence so
far; the leaderboard shows a league badge. The JSON is checked against the recorded matches and a
bound computed here; the pages against the JSON."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from statistics import NormalDist
from typing import Any

import pytest
from fixtures.ladder_helpers import GAME, make_bots, record_duel

from ladder.house import ensure_house_bot
from ladder.leagues import promote
from web import create_app

pytestmark = pytest.mark.usefixtures("games")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

DUO = f"{GAME}(players=2)"
WHEN = datetime(2031, 3, 4, 5, 6, tzinfo=UTC)


def lower_bound(points: float, n: int) -> float:
    """One-sided 95 % score-test bound by bisection on (s - p)² = z² p (1 - p) / n."""
    z, s = NormalDist().inv_cdf(0.95), points / n
    lo, hi = 0.0, s
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (s - mid) ** 2 > z * z * mid * (1 - mid) / n else (lo, mid)
    return lo


class Elements(HTMLParser):
    """Text and attributes of every element with a ``data-league`` attribute, and each table row's
    bot links and league badges."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, dict[str, str], list[str]]] = []
        self.found: list[tuple[str, dict[str, str], str]] = []
        self.rows: list[tuple[list[int], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self.rows.append(([], []))
        link = re.fullmatch(r"/bots/(\d+)", a.get("href", ""))
        if self.rows and tag == "a" and link:
            self.rows[-1][0].append(int(link[1]))
        if self.rows and "data-league" in a and "badge" in a.get("class", ""):
            self.rows[-1][1].append(a["data-league"])
        if "data-league" in a:
            self.open.append((tag, a, []))

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1][0] == tag:
            t, a, text = self.open.pop()
            self.found.append((t, a, " ".join("".join(text).split())))

    def handle_data(self, data: str) -> None:
        for _, _, text in self.open:
            text.append(data)


def parse(text: str) -> Elements:
    p = Elements()
    p.feed(text)
    return p


@pytest.fixture
def client(pool: Any) -> Iterator[TestClient]:
    with TestClient(create_app(pool=pool)) as c:
        yield c


def test_the_bot_page_and_its_json_show_leagues_with_their_evidence(client: TestClient, pool: Any) -> None:
    bot, newcomer = make_bots(pool, 2)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    greedy, _ = ensure_house_bot(pool, "greedy", [GAME])
    record_duel(pool, DUO, bot, rnd, wins=23, losses=2)
    record_duel(pool, DUO, bot, greedy, wins=9, losses=6, draws=2)
    record_duel(pool, DUO, newcomer, bot, wins=1)
    assert len(promote(pool, now=WHEN)) == 1

    (league,) = client.get(f"/api/bots/{bot}").json()["leagues"]
    assert (league["game"], league["league"], league["leagues"]) == (GAME, "bronze", ["wood", "bronze", "silver"])
    assert "Gold" in league["note"]  # no search bot plays the fixture game
    (p,) = league["promotions"]
    assert (p["league"], p["boss_id"], p["boss_name"]) == ("bronze", rnd, "house-random")
    assert datetime.fromisoformat(p["promoted_at"]) == WHEN
    ev = p["evidence"]
    assert (ev["games"], ev["wins"], ev["draws"]) == (25, 23, 0)
    assert ev["score"] == pytest.approx(23 / 25) and ev["lower_bound"] == pytest.approx(lower_bound(23, 25), abs=1e-6)
    nxt = league["next_gate"]
    assert (nxt["league"], nxt["boss_name"], nxt["min_games"]) == ("silver", "house-greedy", 20)
    ev2 = nxt["evidence"]
    assert (ev2["games"], ev2["wins"], ev2["draws"], ev2["passes"]) == (17, 9, 2, False)
    assert ev2["lower_bound"] == pytest.approx(lower_bound(10, 17), abs=1e-6)

    found = parse(client.get(f"/bots/{bot}").text).found
    promotion = next(text for tag, a, text in found if tag == "li" and "promotion" in a.get("class", ""))
    assert promotion == (f"promoted to Bronze on 2031-03-04 05:06 UTC: 25 games against house-random, "
                         f"{round(100 * ev['score'])} % won, 95 % lower bound {round(100 * ev['lower_bound'])} %")
    gate = next(text for tag, a, text in found if tag == "li" and "next-gate" in a.get("class", ""))
    assert f"17 games against house-greedy, {round(100 * ev2['score'])} % won" in gate
    assert f"95 % lower bound {round(100 * ev2['lower_bound'])} %" in gate and "at least 20 games" in gate
    assert any(tag == "div" and a["data-league"] == "bronze" for tag, a, _ in found)

    (fresh,) = client.get(f"/api/bots/{newcomer}").json()["leagues"]
    assert (fresh["league"], fresh["promotions"], fresh["next_gate"]["boss_name"]) == ("wood", [], "house-random")
    assert fresh["next_gate"]["evidence"]["games"] == 0
    assert client.get(f"/api/bots/{rnd}").json()["leagues"] == []  # a house bot has no league
    house_page = client.get(f"/bots/{rnd}")
    assert house_page.status_code == 200 and not any(t == "div" for t, _, _ in parse(house_page.text).found)


def test_the_leaderboard_shows_each_bots_league(client: TestClient, pool: Any) -> None:
    bot, other = make_bots(pool, 2)
    rnd, _ = ensure_house_bot(pool, "random", [GAME])
    record_duel(pool, DUO, bot, rnd, wins=21)
    record_duel(pool, DUO, other, bot, wins=1, losses=1)
    promote(pool, now=WHEN)
    rows = client.get(f"/api/leaderboard/{GAME}").json()["rows"]
    assert {r["bot_id"]: r["league"] for r in rows} == {bot: "bronze", other: "wood", rnd: None}
    page = parse(client.get(f"/leaderboard/{GAME}").text)
    shown = {ids[0]: badges for ids, badges in page.rows if ids}
    assert shown == {bot: ["bronze"], other: ["wood"], rnd: ["house"]}
