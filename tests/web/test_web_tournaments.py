"""The tournament list, the per-format final tables on the tournament page, house bots and
challenge state on the web site and its JSON API (docs/web.md; docs/participants.md)."""

from __future__ import annotations

import html
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from fixtures.ladder_helpers import GAME, make_bots

from ladder.challenges import create_challenge, dispatch_challenges
from ladder.entries import close_due_entries, enter_tournament
from ladder.house import ensure_house_bot
from ladder.tournaments import create_tournament, plan_tournament
from web import create_app

pytestmark = pytest.mark.usefixtures("games")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


@pytest.fixture
def client(pool: Any) -> Iterator[TestClient]:
    with TestClient(create_app(pool=pool)) as c:
        yield c


def _play_all(pool: Any, tid: int, winner: int) -> None:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE m.tournament_id = %s GROUP BY m.id ORDER BY m.id", (tid,)).fetchall()
    for mid, seats in rows:
        h.play(pool, mid, [1 if b == winner else 2 for b in seats])


def test_tournament_list_and_format_tables(client: TestClient, pool: Any) -> None:
    cand, a, b = make_bots(pool, 3, prefix="<b>")
    house_id, _ = ensure_house_bot(pool, "random", [GAME])
    g = create_tournament(pool, name="gauntlet <cup>", game=GAME, format="gauntlet", candidate_bot_id=cand,
                          bot_ids=[a, b, house_id])
    d = create_tournament(pool, name="dup", game=GAME, format="duplicate", bot_ids=[cand, a, b])
    w = create_tournament(pool, name="window", game=GAME, entry_deadline=datetime.now(UTC) + timedelta(hours=1))
    enter_tournament(pool, w, a)
    for tid in (g, d):
        plan_tournament(pool, tid)
        _play_all(pool, tid, cand)
    page = client.get("/tournaments")
    assert page.status_code == 200
    text = page.text
    assert "gauntlet &lt;cup&gt;" in text and "<cup>" not in text  # escaped
    assert "open for entries" in text and "house-random" in text
    api = client.get("/api/tournaments").json()
    assert [(t["id"], t["state"], t["entrants"]) for t in api] == [(w, "open", 1), (d, "finished", 3),
                                                                   (g, "finished", 4)]
    assert client.get(f"/api/tournaments?game={GAME}&before={d}").json()[0]["id"] == g

    gp = client.get(f"/tournaments/{g}").text
    assert "against the pool" in gp and html.escape("<b>-0") in gp
    table = client.get(f"/api/tournaments/{g}/table").json()
    rows = {r["bot_id"]: r for r in table["gauntlet"]["rows"]}
    assert {k: (r["points"], r["pairings"], r["score"]) for k, r in rows.items()} == {
        a: (2.0, 2, 1.0), b: (2.0, 2, 1.0), house_id: (2.0, 2, 1.0)}  # the candidate won every match
    dp = client.get(f"/tournaments/{d}").text
    assert "points per deal" in dp and "round 1 · 2 players" in dp
    dt = client.get(f"/api/tournaments/{d}/table").json()["duplicate"]
    assert dt["deals"][0]["points"] == {str(cand): 4.0, str(a): 1.0, str(b): 1.0}
    wp = client.get(f"/tournaments/{w}").text
    assert "open until" in wp and "open for entries" in wp
    assert client.get("/api/tournaments/999999/table").status_code == 404
    assert "house bot (random)" in client.get(f"/bots/{house_id}").text
    assert "house bot" not in client.get(f"/bots/{a}").text
    assert client.get("/api/house-bots").json() == [
        {"bot_id": house_id, "name": "house-random", "kind": "random", "games": [GAME]}]


def test_cancelled_tournaments_and_challenges_show_why(client: TestClient, pool: Any) -> None:
    a, b = make_bots(pool, 2)
    deadline = datetime.now(UTC) + timedelta(seconds=600)
    t = create_tournament(pool, name="lonely", game=GAME, entry_deadline=deadline)
    close_due_entries(pool, now=deadline + timedelta(seconds=1))
    assert "too few entrants: 0 bots entered, at least 2 needed" in client.get(f"/tournaments/{t}").text
    m = create_challenge(pool, game_string=f"{GAME}(players=2)", bot_ids=[a, b], rated=False, expires_after_s=0.2)
    assert "waiting for every bot to connect" in client.get(f"/matches/{m}").text
    dispatch_challenges(pool, {GAME: {a}}, now=datetime.now(UTC) + timedelta(seconds=1))
    page = client.get(f"/matches/{m}").text
    assert "casual (never rated)" in page and "expired: bot bot-1" in page
