"""The web site and JSON API over a real database with real matches (in-process HTTP client).

Given a database seeded by :func:`fixtures.web_helpers.seed_site` (real Floriferous
matches played through the engine and recorded with ``record_result``), when
each page and API route is requested, then it shows what the database holds,
escapes what bot authors control, answers 404 for unknown ids, and offers no
way to write.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import zstandard
from fixtures.web_helpers import XSS_NAME, XSS_VERSION, Site, shared_site

from games.replay import iter_states, verify_replay
from ladder import leaderboard, make_pool, replay_json
from ladder.stats.store import bt_leaderboard, refresh_bradley_terry
from web import create_app

with warnings.catch_warnings():  # Starlette's TestClient recommends httpx2 over httpx; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ESCAPED_XSS = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture(scope="module")
def web_db(pg_admin_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[str, Any, Site]]:
    """The shared database seeded with real matches, with an open pool."""
    site = shared_site(pg_admin_url, request.config)
    pool = make_pool(site.database_url, max_size=8)
    try:
        yield site.database_url, pool, site
    finally:
        pool.close()


@pytest.fixture(scope="module")
def client(web_db: tuple[str, Any, Site]) -> Iterator[TestClient]:
    url, _, _ = web_db
    with TestClient(create_app(url)) as c:
        yield c


@pytest.fixture
def site(web_db: tuple[str, Any, Site]) -> Site:
    return web_db[2]


@pytest.fixture
def pool(web_db: tuple[str, Any, Site]) -> Any:
    return web_db[1]


def _pages(site: Site) -> list[str]:
    b = site.bots
    return [
        "/",
        "/leaderboard/floriferous",
        "/leaderboard/floriferous?players=2",
        "/leaderboard/floriferous?players=1",
        "/leaderboard/floriferous?sort=games&order=asc&per_page=2&page=2",
        f"/bots/{b['greedy-alpha']}",
        f"/bots/{b[XSS_NAME]}",
        f"/bots/{site.revoked}",
        f"/tournaments/{site.tournament_id}",
        f"/matches/{site.four_player}",
        f"/matches/{site.four_player}?step=40&all=1",
        f"/matches/{site.timeout_match}",
        f"/matches/{site.unfinished}",
        f"/matches/{site.four_player}/board?step=5",
        f"/matches/{site.toy}?step=3&all=1",
    ]


def test_every_page_type_renders(client: TestClient, site: Site) -> None:
    for path in _pages(site):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"].startswith("text/html"), path
    home = client.get("/").text
    assert "Floriferous" in home and "Spring &lt;em&gt;Cup&lt;/em&gt;" in home
    assert "in progress" in home  # two of the tournament's matches are unfinished


def test_bot_names_versions_and_tournament_names_are_escaped(client: TestClient, site: Site) -> None:
    for path in _pages(site):
        text = client.get(path).text
        assert XSS_NAME not in text, path
        assert XSS_VERSION not in text, path
        assert "<em>Cup</em>" not in text, path
    for path in ("/leaderboard/floriferous", f"/bots/{site.bots[XSS_NAME]}", f"/matches/{site.four_player}",
                 f"/matches/{site.four_player}/board?step=80"):
        assert ESCAPED_XSS in client.get(path).text, path
    api = client.get(f"/api/bots/{site.bots[XSS_NAME]}").json()
    assert api["name"] == XSS_NAME and api["version"] == XSS_VERSION  # JSON carries the text as it is


def test_security_headers_forbid_inline_script(client: TestClient) -> None:
    r = client.get("/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert re.fullmatch(r"app;dur=\d+\.\d\d", r.headers["server-timing"])
    assert "<script>" not in r.text.replace('<script src="/static/viewer.js" defer>', "")


@pytest.mark.parametrize(
    "path",
    ["/bots/999999", "/tournaments/999999", "/matches/999999", "/leaderboard/nosuchgame", "/bots/abc",
     "/bots/-1", "/bots/0", "/bots/99999999999999999999999", "/matches/1.5", "/tournaments/%00",
     "/matches/999999/board?step=1", "/matches/999999/replay.json", "/no/such/page"],
)
def test_unknown_or_malformed_ids_give_404_pages(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, (path, r.status_code)
    assert r.headers["content-type"].startswith("text/html")
    assert "Not found" in r.text


@pytest.mark.parametrize(
    ("path", "status"),
    [("/api/bots/999999", 404), ("/api/tournaments/999999", 404), ("/api/matches/999999", 404),
     ("/api/leaderboard/nosuchgame", 404), ("/api/bots/abc", 422), ("/api/bots/-5", 422),
     ("/api/matches/999999/replay", 404), ("/api/matches/999999/steps/0", 404),
     ("/api/leaderboard/floriferous?page=0", 422), ("/api/leaderboard/floriferous?sort=nope", 422),
     ("/api/leaderboard/Bad-Name", 422)],
)
def test_api_errors_are_4xx_json(client: TestClient, path: str, status: int) -> None:
    r = client.get(path)
    assert r.status_code == status, (path, r.text)
    assert "detail" in r.json()


def test_bad_query_values_on_pages_are_422_pages(client: TestClient, site: Site) -> None:
    for path in ("/leaderboard/floriferous?page=0", "/leaderboard/floriferous?sort=nope",
                 "/leaderboard/floriferous?players=x", f"/bots/{site.bots['greedy-alpha']}?before=-3"):
        r = client.get(path)
        assert r.status_code == 422, path
        assert "Bad request" in r.text
    assert client.get(f"/matches/{site.four_player}/board?step=100000").status_code == 404
    assert client.get(f"/matches/{site.four_player}?step=100000").status_code == 200  # clamped to the last step


def test_the_public_site_is_read_only_and_every_write_needs_a_caller(client: TestClient, site: Site) -> None:
    """The public pages and API answer GET only (no route declares more than GET/HEAD); no route that
    writes (participants, tournaments, competitions) answers 2xx to an anonymous request without a body
    (sign-up, the one anonymous write, wants its form; the others a caller first). The routes are read from
    the app, those of included routers too (FastAPI nests them: ``app.routes`` alone lists two)."""
    from fastapi.routing import iter_route_contexts

    # the type: ignore below: TestClient.app is typed as an ASGI app; here a FastAPI one
    contexts = list(iter_route_contexts(client.app.routes))  # type: ignore[attr-defined]
    writes = [(m, ctx.path) for ctx in contexts for m in sorted(getattr(ctx.route, "methods", None) or ())
              if m not in ("GET", "HEAD")]
    assert len(contexts) > 20 and len(writes) > 10
    for method, path in writes:
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        got = client.request(method, concrete, follow_redirects=False)
        assert got.status_code in (303, 400, 401, 403, 404, 405, 422), (method, path, got.status_code)
    for path in ["/", "/leaderboard/floriferous", f"/bots/{site.bots['greedy-alpha']}", "/api/leaderboard/floriferous",
                 f"/api/matches/{site.four_player}", f"/api/matches/{site.four_player}/replay"]:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert client.request(method, path).status_code == 405, (method, path)


def test_leaderboard_numbers_are_the_ladders(client: TestClient, pool: Any) -> None:
    got = client.get("/api/leaderboard/floriferous").json()
    want = leaderboard(pool, "floriferous")
    assert [(r["bot_id"], r["rank"], round(r["elo"], 6), r["games"], r["wins"]) for r in got["rows"]] == [
        (w.bot_id, w.rank, round(w.elo, 6), w.games, w.wins) for w in want
    ]
    assert got["total"] == len(want)
    assert all(r["bt_low"] is None and r["bt_high"] is None for r in got["rows"])


def test_leaderboard_sorts_and_pages(client: TestClient) -> None:
    full = client.get("/api/leaderboard/floriferous").json()["rows"]
    by_games = client.get("/api/leaderboard/floriferous?sort=games&order=asc").json()["rows"]
    assert [r["games"] for r in by_games] == sorted(r["games"] for r in full)
    by_name = client.get("/api/leaderboard/floriferous?sort=name").json()["rows"]
    assert [r["name"].lower() for r in by_name] == sorted(r["name"].lower() for r in full)
    pages = [client.get(f"/api/leaderboard/floriferous?per_page=2&page={p}").json() for p in (1, 2, 3, 4)]
    assert pages[0]["pages"] == -(-len(full) // 2)
    assert [r["bot_id"] for p in pages for r in p["rows"]] == [r["bot_id"] for r in full]
    html = client.get("/leaderboard/floriferous?per_page=2&page=2").text
    assert "page 2 of" in html and 'rel="next"' in html and 'rel="prev"' in html
    assert 'aria-sort="descending"' in client.get("/leaderboard/floriferous?sort=elo").text


def test_leaderboard_player_count_filter_counts_only_those_matches(client: TestClient, pool: Any) -> None:
    with psycopg.connect(pool.conninfo) as conn:
        want = dict(
            conn.execute(
                "SELECT s.bot_id, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                "JOIN bots b ON b.id = s.bot_id "
                "WHERE m.status = 'finished' AND m.game = 'floriferous' AND b.revoked_at IS NULL "
                "AND (SELECT count(*) FROM seats x WHERE x.match_id = m.id) = 3 GROUP BY s.bot_id"
            ).fetchall()
        )
    rows = client.get("/api/leaderboard/floriferous?players=3").json()["rows"]
    assert {r["bot_id"]: r["games"] for r in rows} == want
    solo = client.get("/api/leaderboard/floriferous?players=1").json()
    assert [r["games"] for r in solo["rows"]] == [1] and solo["rows"][0]["rank"] == 1
    assert client.get("/api/leaderboard/floriferous?players=9").json()["rows"] == []


def test_revoked_bots_leave_the_leaderboard_but_keep_their_page(client: TestClient, site: Site) -> None:
    rows = client.get("/api/leaderboard/floriferous").json()["rows"]
    assert site.revoked not in {r["bot_id"] for r in rows}
    page = client.get(f"/bots/{site.revoked}").text
    assert "retired" in page


def test_bt_interval_column_shows_a_dash_until_a_fit_exists(client: TestClient, pool: Any, site: Site) -> None:
    html = client.get("/leaderboard/floriferous").text
    assert "Bradley-Terry [95 % interval]" in html and "Elo (online)" in html
    assert html.count('title="no Bradley-Terry fit yet">—</span>') == len(leaderboard(pool, "floriferous"))
    before = client.get("/api/leaderboard/floriferous").json()
    assert before["bt_available"] is False and all(r["bt_low"] is None for r in before["rows"])
    refresh_bradley_terry(pool, "floriferous", bootstrap=40)
    fit = bt_leaderboard(pool, "floriferous")
    assert fit is not None
    want = {b: (r.elo, r.low, r.high) for b, r in fit.by_bot().items()}
    try:
        data = client.get("/api/leaderboard/floriferous").json()
        assert data["bt_available"] is True
        for row in data["rows"]:
            assert (row["bt_elo"], row["bt_low"], row["bt_high"]) == pytest.approx(want[row["bot_id"]])
            assert row["bt_low"] <= row["bt_elo"] <= row["bt_high"]
        alpha = site.bots["greedy-alpha"]
        est, low, high = want[alpha]
        bot_api = next(r for r in client.get(f"/api/bots/{alpha}").json()["ratings"] if r["game"] == "floriferous")
        assert (bot_api["bt_elo"], bot_api["bt_low"], bot_api["bt_high"]) == pytest.approx((est, low, high))
        # each rating next to its own interval: the BT estimate, then its own interval in brackets
        cell = f'<span class="bt-estimate">{est:.0f}</span> <span class="interval"'
        for url in ("/leaderboard/floriferous", f"/bots/{alpha}"):
            html = client.get(url).text
            assert cell in html and f"[{low:.0f}–{high:.0f}]" in html
            assert html.index(cell) < html.index(f"[{low:.0f}–{high:.0f}]")
        # the reader orders by the Bradley-Terry estimate
        by_bt = client.get("/api/leaderboard/floriferous?sort=bt").json()["rows"]
        ests = [r["bt_elo"] for r in by_bt if r["bt_elo"] is not None]
        assert ests == sorted(ests, reverse=True) and len(ests) == len(want.keys() & {r["bot_id"] for r in by_bt})
        asc = client.get("/api/leaderboard/floriferous?sort=bt&order=asc").json()["rows"]
        assert [r["bt_elo"] for r in asc if r["bt_elo"] is not None] == sorted(ests)
    finally:
        with psycopg.connect(pool.conninfo, autocommit=True) as conn:
            conn.execute("DELETE FROM ratings_bt_fits WHERE game = 'floriferous'")


def test_bot_page_shows_ratings_plot_verdicts_and_head_to_head(client: TestClient, pool: Any, site: Site) -> None:
    alpha = site.bots["greedy-alpha"]
    data = client.get(f"/api/bots/{alpha}").json()
    flori = next(r for r in data["ratings"] if r["game"] == "floriferous")
    assert flori["history_total"] == flori["games"] == len(flori["history"])
    assert flori["history"][-1]["elo"] == pytest.approx(flori["elo"])
    html = client.get(f"/bots/{alpha}").text
    line = re.search(r'<polyline class="elo-line" points="([^"]+)"', html)
    assert line is not None and len(line.group(1).split()) == flori["games"] + 1
    with psycopg.connect(pool.conninfo) as conn:
        pairs = conn.execute(
            "SELECT o.bot_id, count(*), count(*) FILTER (WHERE me.rank < o.rank) FROM seats me "
            "JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id JOIN matches m ON m.id = me.match_id "
            "WHERE me.bot_id = %s AND m.game = 'floriferous' AND m.status = 'finished' GROUP BY o.bot_id",
            (alpha,),
        ).fetchall()
    got = {(h["opponent_id"], h["matches"], h["wins"]) for h in data["head_to_head"] if h["game"] == "floriferous"}
    assert got == {(o, n, w) for o, n, w in pairs}
    xss = client.get(f"/api/bots/{site.bots[XSS_NAME]}").json()
    assert xss["verdicts"]["timeout"] == 1 and xss["verdicts"]["normal"] == 1
    assert 'data-verdict="timeout">1<' in client.get(f"/bots/{site.bots[XSS_NAME]}").text


def test_bot_recent_matches_page_backwards(client: TestClient, site: Site) -> None:
    alpha = site.bots["greedy-alpha"]
    first = client.get(f"/api/bots/{alpha}?recent=5").json()
    assert len(first["recent"]) == 5 and first["older_before"] == first["recent"][-1]["id"]
    older = client.get(f"/api/bots/{alpha}?recent=5&before={first['older_before']}").json()
    assert len(older["recent"]) == 5
    ids = [m["id"] for m in first["recent"]] + [m["id"] for m in older["recent"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    assert "older matches" in client.get(f"/bots/{alpha}?recent=5").text


def test_tournament_page_standings_crosstable_and_matches(client: TestClient, site: Site) -> None:
    data = client.get(f"/api/tournaments/{site.tournament_id}").json()
    assert data["state"] == "in_progress" and data["counts"]["finished"] == len(site.finished)
    assert data["counts"]["planned"] == 1 and data["counts"]["running"] == 1
    cross = data["crosstable"]
    n = len(data["standings"])
    for i in range(n):
        assert cross[i][i] is None
        for j in range(n):
            if i != j:
                assert cross[i][j]["points"] + cross[j][i]["points"] == pytest.approx(cross[i][j]["games"])
    for i, s in enumerate(data["standings"]):
        assert sum(c["points"] for c in cross[i] if c) == pytest.approx(s["points"])
    assert len(data["matches"]) == data["counts"]["planned"] + data["counts"]["running"] + data["counts"]["finished"]
    paged = client.get(f"/api/tournaments/{site.tournament_id}?per_page=5&page=2").json()
    assert [m["id"] for m in paged["matches"]] == [m["id"] for m in data["matches"]][5:10]
    html = client.get(f"/tournaments/{site.tournament_id}").text
    assert "Crosstable" in html and "round robin" in html and "1.00 s per decision" in html


def test_tournament_standings_follow_the_stored_seats(client: TestClient, pool: Any, site: Site) -> None:
    """Oracle: the seats table counted by hand (1 point per opponent ranked below, 1/2 per tie; a win is a sole
    first place; order by points, then wins, then bot id), not the read model's own code."""
    got = client.get(f"/api/tournaments/{site.tournament_id}").json()["standings"]
    with psycopg.connect(pool.conninfo) as conn:
        rows = conn.execute(
            "SELECT s.match_id, s.bot_id, s.rank, s.score FROM seats s JOIN matches m ON m.id = s.match_id "
            "WHERE m.tournament_id = %s AND m.status = 'finished' ORDER BY s.match_id, s.seat",
            (site.tournament_id,),
        ).fetchall()
    by_match: dict[int, list[tuple[int, int, float]]] = {}
    for mid, bid, rank, score in rows:
        by_match.setdefault(mid, []).append((bid, rank, score))
    points: dict[int, float] = {}
    played: dict[int, int] = {}
    wins: dict[int, int] = {}
    scores: dict[int, float] = {}
    for seats in by_match.values():
        firsts = [r for _, r, _ in seats].count(1)
        for i, (bid, rank, score) in enumerate(seats):
            mine = sum(1.0 if rank < r else 0.5 if rank == r else 0.0
                       for j, (_, r, _) in enumerate(seats) if j != i)
            points[bid] = points.get(bid, 0.0) + mine
            played[bid] = played.get(bid, 0) + 1
            wins[bid] = wins.get(bid, 0) + (rank == 1 and firsts == 1)
            scores[bid] = scores.get(bid, 0.0) + score
    assert len(by_match) > 0
    played_rows = [g for g in got if g["matches"]]
    assert {g["bot_id"]: g["points"] for g in played_rows} == pytest.approx(points)
    assert {g["bot_id"]: (g["matches"], g["wins"]) for g in played_rows} == {b: (played[b], wins[b]) for b in played}
    assert {g["bot_id"]: g["avg_score"] for g in played_rows} == pytest.approx(
        {b: scores[b] / played[b] for b in played})
    order = sorted(got, key=lambda g: (-g["points"], -g["wins"], g["bot_id"]))
    assert [g["position"] for g in order] == list(range(1, len(got) + 1))


def test_match_page_shows_seats_verdicts_time_and_the_seed(client: TestClient, site: Site) -> None:
    m = client.get(f"/api/matches/{site.timeout_match}").json()
    assert [s["verdict"] for s in m["seats"]] == ["normal", "timeout"]
    assert [s["rank"] for s in m["seats"]] == [1, 2]
    assert m["seed"] and m["seed_verified"] is True and m["has_replay"]
    html = client.get(f"/matches/{site.timeout_match}").text
    assert "timeout" in html and m["seed"] in html and m["seed_commitment"] in html and "fallback" in html
    assert "Download the replay" in html


def test_unfinished_match_hides_its_seed_and_has_no_viewer(client: TestClient, pool: Any, site: Site) -> None:
    with psycopg.connect(pool.conninfo) as conn:
        seed, commitment = conn.execute(
            "SELECT seed, seed_commitment FROM matches WHERE id = %s", (site.unfinished,)
        ).fetchone()
    for path in (f"/matches/{site.unfinished}", f"/api/matches/{site.unfinished}"):
        text = client.get(path).text
        assert seed not in text and commitment in text
    assert "published when the match has finished" in client.get(f"/matches/{site.unfinished}").text
    assert client.get(f"/api/matches/{site.unfinished}/replay").status_code == 404
    assert client.get(f"/api/matches/{site.unfinished}/steps/-1").status_code == 404


def test_replay_download_is_the_stored_replay(client: TestClient, pool: Any, site: Site) -> None:
    for path in (f"/api/matches/{site.four_player}/replay", f"/matches/{site.four_player}/replay.json"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        assert "attachment" in r.headers["content-disposition"]
        assert r.text == replay_json(pool, site.four_player)
        assert verify_replay(r.json()).ok


def test_step_api_rebuilds_states_with_the_engine(client: TestClient, site: Site) -> None:
    replay = client.get(f"/api/matches/{site.four_player}/replay").json()
    states = {i: s.observation(None) for i, s in iter_states(replay) if i in (-1, 0, 57)}
    steps = len(replay["steps"])
    for i in (-1, 0, 57):
        frame = client.get(f"/api/matches/{site.four_player}/steps/{i}").json()
        assert frame["observation"] == states[i] and frame["seat_views"] is None and frame["full_state"] is None
        assert frame["steps"] == steps
    last = client.get(f"/api/matches/{site.four_player}/steps/{steps - 1}?all=true").json()
    assert last["terminal"] is True and len(last["seat_views"]) == 4 and "cells" in last["full_state"]
    assert last["label"] == replay["steps"][-1]["label"]
    assert client.get(f"/api/matches/{site.four_player}/steps/{steps}").status_code == 404


def _face_down_step(replay: dict[str, Any]) -> int:
    for i, state in iter_states(replay):
        if any(c["face_down"] for row in state.observation(None)["garden"] for c in row["cells"]):
            return i
    raise AssertionError("no face-down card in this replay")


def test_show_all_hands_reveals_face_down_cards(client: TestClient, site: Site) -> None:
    replay = client.get(f"/api/matches/{site.four_player}/replay").json()
    step = _face_down_step(replay)
    spectator = client.get(f"/matches/{site.four_player}/board?step={step}").text
    everything = client.get(f"/matches/{site.four_player}/board?step={step}&all=1").text
    revealed = re.compile(r'class="chip [^"]* revealed"')
    assert "chip-facedown" in spectator and not revealed.search(spectator)
    assert "chip-facedown" not in everything and revealed.search(everything) and "all hands shown" in everything
    assert "the decks&#39; remaining cards" in everything or "remaining cards" in everything


def test_board_panel_shows_the_floriferous_garden(client: TestClient, site: Site) -> None:
    replay = client.get(f"/api/matches/{site.four_player}/replay").json()
    last = len(replay["steps"]) - 1
    html = client.get(f"/matches/{site.four_player}/board?step={last}").text
    assert 'class="garden"' in html and "Desire row" in html and "final scores" in html
    totals = [int(x) for x in re.findall(r'<span class="total">(\d+)</span>', html)]
    assert totals == [int(s) for s in replay["outcome"]["scores"]]
    assert "seed revealed" in html and replay["seed"] in html
    start = client.get(f"/matches/{site.four_player}/board?step=-1").text
    assert "the seed is revealed at the end" in start and replay["seed"] not in start


def test_generic_panel_for_a_game_without_an_adapter(client: TestClient, site: Site) -> None:
    html = client.get(f"/matches/{site.toy}/board?step=8").text
    assert "generic-board" in html and "Spectator view" in html and "json-object" in html
    assert "what this seat saw" not in html
    everything = client.get(f"/matches/{site.toy}/board?step=8&all=1").text
    assert everything.count("what this seat saw") == 2
    assert re.search(r"K\d\d", everything)  # each seat's own hand


def test_viewer_degrades_when_the_engine_is_not_installed(client: TestClient, pool: Any, site: Site) -> None:
    text = json.dumps({"format": "parterre-replay/1", "game": "nosuchgame", "game_string": "nosuchgame(players=2)",
                       "steps": [{"i": 0, "player": -1, "action": {"kind": "x"}, "label": "deal", "time_ms": None}]})
    with psycopg.connect(pool.conninfo, autocommit=True) as conn:
        mid = conn.execute(
            "INSERT INTO matches (plan_key, game, game_string, seed, seed_commitment, time_control, status, attempt, "
            "finished_at, result_seq) VALUES ('web:nosuchgame', 'nosuchgame', 'nosuchgame(players=2)', 'ab', 'cd', "
            "'{}', 'finished', 1, now(), nextval('match_result_seq')) RETURNING id"
        ).fetchone()[0]
        conn.execute("INSERT INTO seats (match_id, seat, bot_id, rank, score, verdict) VALUES "
                     "(%s, 0, %s, 1, 3, 'normal'), (%s, 1, %s, 2, 1, 'normal')",
                     (mid, site.bots["greedy-alpha"], mid, site.bots["greedy-beta"]))
        conn.execute("INSERT INTO replays (match_id, format, data, raw_bytes) VALUES (%s, 'parterre-replay/1', %s, %s)",
                     (mid, zstandard.ZstdCompressor().compress(text.encode()), len(text)))
    try:
        page = client.get(f"/matches/{mid}")
        assert page.status_code == 200 and "not installed on this server" in page.text
        assert client.get(f"/matches/{mid}/replay.json").text == text
        assert client.get(f"/api/matches/{mid}/steps/0").status_code == 409
        assert "Replay viewer unavailable" in client.get(f"/matches/{mid}/board?step=0").text
    finally:
        with psycopg.connect(pool.conninfo, autocommit=True) as conn:
            conn.execute("DELETE FROM matches WHERE id = %s", (mid,))


def test_openapi_describes_the_api(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for path in ("/api/", "/api/leaderboard/{game}", "/api/bots/{bot_id}", "/api/tournaments/{tournament_id}",
                 "/api/matches/{match_id}", "/api/matches/{match_id}/replay", "/api/matches/{match_id}/steps/{step}"):
        assert set(spec["paths"][path]) == {"get"}, path
    assert not any(p.startswith("/bots") or p == "/" for p in spec["paths"])  # pages stay out of the API description


def test_player_count_statistics_follow_record_result(pool: Any, client: TestClient, site: Site) -> None:
    """The trigger-maintained table equals a recomputation from the seats (migration 0002's REBUILD)."""
    import importlib

    migration = importlib.import_module("ladder.migrations.versions.0002_web")
    query = "SELECT game, players, bot_id, games, wins, draws, losses, score_sum, last_played FROM bot_player_stats " \
            "ORDER BY 1, 2, 3"
    with psycopg.connect(pool.conninfo) as conn:
        online = conn.execute(query).fetchall()
        conn.execute(migration.REBUILD)
        rebuilt = conn.execute(query).fetchall()
        conn.rollback()
    assert online == rebuilt and len(online) > 10
    head_to_head = importlib.import_module("ladder.migrations.versions.0017_head_to_head")
    h2h = "SELECT bot_id, game, opponent_id, matches, wins, draws, losses FROM bot_head_to_head ORDER BY 1, 2, 3"
    with psycopg.connect(pool.conninfo) as conn:
        kept = conn.execute(h2h).fetchall()
        conn.execute(head_to_head.REBUILD)
        recounted = conn.execute(h2h).fetchall()
        conn.rollback()
    assert kept == recounted and len(kept) > 10  # the trigger's counts are the seats' counts
    assert {(g, n) for g, n, *_ in online} >= {("floriferous", 1), ("floriferous", 2), ("floriferous", 3),
                                               ("floriferous", 4), ("toy", 2)}
    home = {g["name"]: g for g in client.get("/api/").json()["games"]}
    with psycopg.connect(pool.conninfo) as conn:
        finished = conn.execute(
            "SELECT count(*) FROM matches WHERE game = 'floriferous' AND status = 'finished'"
        ).fetchone()[0]
    assert home["floriferous"]["finished_matches"] == finished
    alpha_id = site.bots["greedy-alpha"]
    alpha = client.get(f"/api/bots/{alpha_id}").json()
    with psycopg.connect(pool.conninfo) as conn:  # the oracle: the bot's finished, rated seats, counted by hand
        played = {(g, int(n)) for g, n in conn.execute(
            "SELECT m.game, (SELECT count(*) FROM seats t WHERE t.match_id = m.id) FROM seats s "
            "JOIN matches m ON m.id = s.match_id WHERE s.bot_id = %s AND m.status = 'finished' AND m.rated",
            (alpha_id,)).fetchall()}
    assert {(p["game"], p["players"]) for p in alpha["by_players"]} == played
    assert {("floriferous", 1), ("floriferous", 2), ("floriferous", 3), ("floriferous", 4), ("toy", 2)} <= played


def test_a_lost_database_gives_503_not_500(web_db: tuple[str, Any, Site]) -> None:
    url, _, _ = web_db
    own = make_pool(url, max_size=1)
    with TestClient(create_app(pool=own)) as c:
        assert c.get("/api/health").status_code == 200
        own.close()
        page = c.get("/leaderboard/floriferous")
        assert page.status_code == 503 and "unavailable" in page.text
        assert c.get("/api/leaderboard/floriferous").status_code == 503


def test_time_control_in_words() -> None:
    """The match page said "0.00 s bank + 0.00 s per decision, at most 1.00 s per decision" for 1000+100."""
    from web.filters import time_control

    usual = {"base_ms": 0, "increment_ms": 0, "cap_ms": 1000, "margin_ms": 100}
    assert time_control(usual) == "1.00 s per decision + 0.10 s margin"
    assert time_control({"increment_ms": 200, "cap_ms": 1000, "margin_ms": 50}) == "0.20 s per decision + 0.05 s margin"
    assert time_control({"base_ms": 60000, "increment_ms": 1000, "cap_ms": 5000, "margin_ms": 100}) == (
        "60.00 s bank + 1.00 s per decision, at most 5.00 s per decision + 0.10 s margin")
    assert time_control({"base_ms": 30000, "margin_ms": 0}) == "30.00 s bank"
    assert time_control({}) == "—"


def test_match_page_time_control_has_no_empty_bank(client: TestClient, site: Site) -> None:
    m = client.get(f"/api/matches/{site.timeout_match}").json()
    tc = m["time_control"]
    assert not tc.get("base_ms") and not tc.get("increment_ms"), tc  # the site's matches use the usual control
    html = client.get(f"/matches/{site.timeout_match}").text
    cap, margin = tc["cap_ms"] / 1000, tc["margin_ms"] / 1000
    assert f"<td>{cap:.2f} s per decision + {margin:.2f} s margin</td>" in html
    assert "0.00 s bank" not in html
