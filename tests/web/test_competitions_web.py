"""Competitions on the site: the JSON API and the pages (docs/competitions.md "On the site and the API").

Oracles: what the ladder's own functions (``ladder.competitions``, ``ladder.competition_final``)
return for the same data, read next to each response; the rules of docs/competitions.md (who
may do what, the per-account limit, shared places); and, for the page, the raw text the
organiser wrote (a ``<script>`` in it must come back escaped). The app's clock is a virtual
one (``app.state.clock``) moved by the tests.
"""

from __future__ import annotations

import os
import pathlib
import random
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fixtures.competition_helpers import HOUR, T0, account, bot, competition, hosted_version, organiser
from test_competition_final import _evaluate, _field, _season

from ladder import accounts as acc
from ladder import competitions as comp
from ladder.competition_final import evaluation, final_table, start_evaluation
from web import create_app
from web.app import start_background
from web.auth import ParticipantConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def app(pool: Any, clock: Clock, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> Any:
    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open")
    a.state.clock = clock
    a.state.dataset_dir = tmp_path / "datasets"
    return a


@pytest.fixture
def client(app: Any) -> TestClient:
    return TestClient(app, client=("203.0.113.9", 50000))


def token(pool: Any, account_id: int, scopes: tuple[str, ...] = acc.SCOPES) -> dict[str, str]:
    _, secret = acc.create_api_token(pool, account_id, list(scopes))
    return {"Authorization": f"Bearer {secret}"}


def body(**changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "spring cup", "game": "floriferous", "deadline_at": (T0 + 24 * HOUR).isoformat(),
                           "final_at": (T0 + 25 * HOUR).isoformat(), "entry_mode": "any",
                           "description": "# Spring\n\nplay **well**", "rules": "one account each"}
    out.update(changes)
    return out


def _count(pool: Any) -> int:
    with pool.connection() as conn:
        return int(conn.execute("SELECT count(*) FROM competitions").fetchone()[0])


# -- the API --------------------------------------------------------------------------------------


def test_create_list_and_detail_answer_what_the_ladder_holds(client: TestClient, pool: Any, clock: Clock) -> None:
    org = organiser(pool)
    r = client.post("/api/competitions", json=body(max_entrants_per_account=2, player_counts=[3, 2]),
                    headers=token(pool, org))
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    held = comp.get_competition(pool, cid)
    assert held.player_counts == (2, 3) and held.max_entrants_per_account == 2 and held.organiser_id == org
    clock.now = T0 + 2 * HOUR
    detail = client.get(f"/api/competitions/{cid}").json()
    expected = held.to_json(clock.now)
    for key in ("name", "game", "player_counts", "entry_mode", "max_entrants_per_account", "max_versions_per_day",
                "description", "rules", "organiser", "final_budget", "final_max_batches", "entrants", "status"):
        assert detail[key] == (list(expected[key]) if key == "player_counts" else expected[key]), key
    for key in ("opens_at", "deadline_at", "final_at"):
        assert datetime.fromisoformat(detail[key]) == getattr(held, key)
    assert detail["status"] == "open" and detail["deadline_in_s"] == 22 * 3600 and detail["entrant_list"] == []
    listed = client.get("/api/competitions").json()
    assert [c["id"] for c in listed] == [c.id for c in comp.list_competitions(pool)] == [cid]
    clock.now = T0 + 24 * HOUR  # the status follows the app's clock
    assert client.get(f"/api/competitions/{cid}").json()["status"] == "locked"
    assert client.get("/api/competitions/999").status_code == 404


@pytest.mark.parametrize(("changes", "status", "words"), [
    ({"deadline_at": "2031-03-02T12:00:00"}, 422, "timezone"),  # no zone
    ({"opens_at": (T0 - 2 * HOUR).isoformat(), "deadline_at": (T0 - HOUR).isoformat(), "final_at": None}, 400,
     "already passed"),
    ({"opens_at": (T0 + 30 * HOUR).isoformat()}, 400, "after the opening"),
    ({"final_at": (T0 + HOUR).isoformat()}, 400, "cannot start before the deadline"),
    ({"game": "chess"}, 400, "chess"),
    ({"game_options": {"colour": "red"}}, 400, "colour"),
    ({"player_counts": [1]}, 422, "player_counts"),
    ({"player_counts": [2, 2]}, 422, "distinct"),
    ({"player_counts": [9]}, 422, "player_counts"),
    ({"max_entrants_per_account": 21}, 422, "max_entrants_per_account"),
    ({"max_entrants_per_account": 0}, 422, "max_entrants_per_account"),
    ({"max_versions_per_day": 1001}, 422, "max_versions_per_day"),
    ({"final_budget": 0}, 422, "final_budget"),
    ({"entry_mode": "everyone"}, 422, "entry_mode"),
    ({"name": ""}, 422, "name"),
    ({"name": "x" * 201}, 422, "name"),
    ({"description": "x" * (comp.MAX_TEXT + 1)}, 422, "description"),
    ({"rules": "a\x00b"}, 400, "control characters"),
    ({"time_control": {"cap_ms": -5}}, 400, ""),
    ({"game_options": {"players": 3}}, 400, "players"),  # the seat counts are player_counts (was a 500)
    ({"deadline_at": "9999-12-31T23:59:59-14:00"}, 422, "year"),  # year 10000 in UTC (was a 500)
    ({"opens_at": "0001-01-01T00:00:00+14:00"}, 422, "year"),
])
def test_each_bad_competition_is_refused_with_its_reason_and_nothing_written(
        client: TestClient, pool: Any, changes: dict[str, Any], status: int, words: str) -> None:
    org = organiser(pool)
    r = client.post("/api/competitions", json=body(**changes), headers=token(pool, org))
    assert r.status_code == status, r.text
    assert words in r.text
    assert _count(pool) == 0


def test_only_organisers_create_and_only_this_ones_organiser_uses_the_tools(client: TestClient, pool: Any) -> None:
    player = account(pool, "player")
    assert client.post("/api/competitions", json=body()).status_code == 401
    r = client.post("/api/competitions", json=body(), headers=token(pool, player))
    assert r.status_code == 403 and "organisers" in r.json()["detail"]
    org = organiser(pool)
    r = client.post("/api/competitions", json=body(), headers=token(pool, org, ("bot:manage",)))
    assert r.status_code == 403 and "tournament:create" in r.json()["detail"]
    assert _count(pool) == 0
    c = competition(pool, org)
    b = bot(pool, player)
    comp.enter_competition(pool, c.id, b, account_id=player, now=T0)
    other_org = organiser(pool)
    for who in (player, other_org):
        r = client.post(f"/api/competitions/{c.id}/disqualify", json={"bot_id": b, "reason": "r"},
                        headers=token(pool, who))
        assert r.status_code == 403, r.text
        r = client.post(f"/api/competitions/{c.id}/extend", json={"deadline_at": (T0 + 48 * HOUR).isoformat()},
                        headers=token(pool, who))
        assert r.status_code == 403, r.text
    assert comp.entrants(pool, c.id)[0].disqualified_at is None
    assert comp.get_competition(pool, c.id).deadline_at == c.deadline_at


def test_entering_through_the_api_and_every_refusal(client: TestClient, pool: Any, clock: Clock) -> None:
    org = organiser(pool)
    c = competition(pool, org, max_entrants_per_account=2)
    hosted_only = competition(pool, org, entry_mode="hosted", name="hosted cup")
    later = competition(pool, org, opens_at=T0 + 2 * HOUR, name="later cup")
    me, them = account(pool, "me"), account(pool, "them")
    mine = [bot(pool, me, f"mine{i}", games=["floriferous"]) for i in range(3)]
    lafleur = bot(pool, me, "flower", games=["lafleur"])
    theirs = bot(pool, them, "secret-name")
    auth = token(pool, me)
    r = client.post(f"/api/competitions/{c.id}/entries", json={"bot_id": mine[0]}, headers=auth)
    assert r.status_code == 201, r.text
    held = comp.entrants(pool, c.id)
    assert [(e.bot_id, e.account_id) for e in held] == [(r.json()["bot_id"], r.json()["account_id"])] \
        == [(mine[0], me)]

    def enter(cid: int, bot_id: Any, headers: dict[str, str] = auth) -> httpx.Response:
        return client.post(f"/api/competitions/{cid}/entries", json={"bot_id": bot_id}, headers=headers)

    refused = enter(c.id, theirs)  # another account's bot: as if it did not exist, and nothing about it
    assert refused.status_code == 404 and "secret-name" not in refused.text
    assert enter(c.id, mine[0]).status_code == 400  # already entered
    assert "plays lafleur" in enter(c.id, lafleur).json()["detail"]
    assert enter(c.id, mine[1]).status_code == 201
    over = enter(c.id, mine[2])
    assert over.status_code == 409 and "at most 2" in over.json()["detail"]
    assert enter(999, mine[2]).status_code == 404
    assert enter(c.id, 0).status_code == 422 and enter(c.id, "x").status_code == 422
    assert "hosted" in enter(hosted_only.id, mine[2]).json()["detail"]
    assert enter(later.id, mine[2]).status_code == 409  # not open yet
    assert enter(c.id, mine[2], token(pool, me, ("challenge",))).status_code == 403  # the scope
    clock.now = c.deadline_at
    assert enter(later.id, mine[2]).status_code == 409  # closed
    hosted_version(pool, mine[2])
    clock.now = T0 + HOUR
    assert enter(hosted_only.id, mine[2]).status_code == 201
    assert [e.bot_id for e in comp.entrants(pool, c.id)] == mine[:2]
    detail = client.get(f"/api/competitions/{c.id}").json()
    assert detail["entrants"] == 2 and [e["bot_id"] for e in detail["entrant_list"]] == mine[:2]


def test_organiser_disqualifies_and_extends(client: TestClient, pool: Any, clock: Clock) -> None:
    org = organiser(pool)
    c = competition(pool, org)
    player = account(pool, "pq")
    b = bot(pool, player)
    comp.enter_competition(pool, c.id, b, account_id=player, now=T0)
    auth = token(pool, org)
    assert client.post(f"/api/competitions/{c.id}/disqualify", json={"reason": "r"}, headers=auth).status_code == 400
    assert client.post(f"/api/competitions/{c.id}/disqualify", json={"bot_id": b, "reason": ""},
                       headers=auth).status_code == 422
    r = client.post(f"/api/competitions/{c.id}/disqualify", json={"account_id": player, "reason": "shared code"},
                    headers=auth)
    assert r.status_code == 200 and r.json() == [b]
    assert comp.entrants(pool, c.id)[0].disqualified_reason == "shared code"
    assert client.post(f"/api/competitions/{c.id}/disqualify", json={"bot_id": b, "reason": "again"},
                       headers=auth).status_code == 400  # no entrant left
    earlier = client.post(f"/api/competitions/{c.id}/extend", json={"deadline_at": (T0 + HOUR).isoformat()},
                          headers=auth)
    assert earlier.status_code == 400 and "only moves later" in earlier.json()["detail"]
    r = client.post(f"/api/competitions/{c.id}/extend", json={"deadline_at": (T0 + 48 * HOUR).isoformat()},
                    headers=auth)
    assert r.status_code == 200, r.text
    held = comp.get_competition(pool, c.id)
    assert held.deadline_at == T0 + 48 * HOUR and held.final_at == T0 + 49 * HOUR  # moved by as much
    assert datetime.fromisoformat(r.json()["final_at"]) == held.final_at
    clock.now = held.final_at
    late = client.post(f"/api/competitions/{c.id}/extend", json={"deadline_at": (T0 + 72 * HOUR).isoformat()},
                       headers=auth)
    assert late.status_code == 409


def test_a_deadline_moved_far_out_cannot_push_the_final_past_the_calendar(client: TestClient, pool: Any) -> None:
    """A final evaluation set in the year 9000 and a deadline moved by thousands of years: moving the final
    by as much leaves the calendar (Python's datetime ends in the year 9999), so the extension is refused
    with its reason (400), not answered 500, and nothing moves."""
    org = organiser(pool)
    c = competition(pool, org, final_at=datetime(9000, 6, 1, tzinfo=UTC))
    r = client.post(f"/api/competitions/{c.id}/extend", json={"deadline_at": "8999-01-01T00:00:00+00:00"},
                    headers=token(pool, org))
    assert r.status_code == 400, r.text
    assert "final_at" in r.json()["detail"]
    held = comp.get_competition(pool, c.id)
    assert (held.deadline_at, held.final_at) == (c.deadline_at, c.final_at)
    assert comp.events(pool, c.id) == []


def test_a_burst_of_parallel_entries_lets_exactly_the_allowed_number_in(pool: Any) -> None:
    """Twelve bots of one account entered at once through the served app (real HTTP, threads): the
    competition allows three per account, so three answers are 201 and nine 409."""
    now = datetime.now(UTC)  # the served app's wall clock judges the schedule
    c = competition(pool, now=now - HOUR, max_entrants_per_account=3, opens_at=now - HOUR,
                    deadline_at=now + 24 * HOUR, final_at=now + 25 * HOUR)
    me = account(pool, "burst")
    bots = [bot(pool, me, f"burst{i}") for i in range(12)]
    auth = token(pool, me)
    server = start_background(pool=pool)
    try:
        def enter(bot_id: int) -> int:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                return http.post(f"/api/competitions/{c.id}/entries", json={"bot_id": bot_id},
                                 headers=auth).status_code

        with ThreadPoolExecutor(len(bots)) as pool_threads:
            codes = sorted(pool_threads.map(enter, bots))
    finally:
        server.stop()
    assert codes == [201] * 3 + [409] * 9
    assert len(comp.entrants(pool, c.id)) == 3


def test_the_table_shows_the_frozen_final_table_with_shared_places(app: Any, client: TestClient, pool: Any,
                                                                  clock: Clock) -> None:
    """A strong bot, two equal ones, a weak one (a model decides the results, as in
    tests/ladder/test_competition_final.py): the API's final table is the ladder's, 1, 2-3, 2-3, 4."""
    org = organiser(pool)
    c = competition(pool, org, final_budget=200, final_max_batches=8)
    _, bots = _field(pool, c, 4)
    strength = dict(zip(bots, [700.0, 0.0, 0.0, -700.0], strict=True))
    rng = random.Random(5)
    _season(pool, c, bots, strength, rng, 3)
    season = client.get(f"/api/competitions/{c.id}/table").json()
    assert season["kind"] == "season" and season["params"] is None and season["matches"] > 0
    early = client.get(f"/api/competitions/{c.id}/dataset")
    assert early.status_code == 409 and "once the final table is frozen" in early.json()["detail"]
    assert sorted(r["bot_id"] for r in season["rows"]) == sorted(bots)
    assert client.get(f"/api/competitions/{c.id}/evaluation").json() is None
    _evaluate(pool, c, strength, rng)
    clock.now = c.final_at + 2 * HOUR
    got = client.get(f"/api/competitions/{c.id}/table").json()
    held = final_table(pool, c.id)
    assert got["kind"] == "final"
    assert [(r["bot_id"], r["place"], r["place_low"], r["place_high"]) for r in got["rows"]] \
        == [(r.bot_id, r.place, r.place_low, r.place_high) for r in held]
    assert [r["place"] for r in got["rows"]] == ["1", "2-3", "2-3", "4"]
    assert all(r["low"] < r["rating"] < r["high"] for r in got["rows"])
    ev = evaluation(pool, c.id)
    assert ev is not None and got["params"] == ev.params and got["params"]["max_batches"] == 8
    assert 0 < got["matches"] == sum(r["matches"] for r in got["rows"]) // 2 <= ev.matches_played  # two seats a match
    shown = client.get(f"/api/competitions/{c.id}/evaluation").json()
    assert shown["seed"] == ev.seed is not None and shown["progress"] == ev.progress
    assert client.get(f"/api/competitions/{c.id}").json()["status"] == "final"
    page = client.get(f"/competitions/{c.id}").text
    assert page.count('<td class="place">2-3</td>') == 2 and "Final table" in page
    # the dataset: a tar of the manifest and one compressed record per finished match, checksums as listed
    import hashlib
    import io
    import json
    import tarfile

    got_tar = client.get(f"/api/competitions/{c.id}/dataset")
    assert got_tar.status_code == 200 and got_tar.headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(got_tar.content)) as tar:
        # the type: ignore below: Optional: extractfile gives a file for every regular member
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    manifest = json.loads(members.pop(f"competition-{c.id}/manifest.json"))
    with pool.connection() as conn:
        finished = conn.execute("SELECT count(*) FROM matches WHERE competition_id = %s AND status = 'finished'",
                                (c.id,)).fetchone()[0]
    assert len(manifest["files"]) == len(members) == finished > 0
    assert all(hashlib.sha256(members[f"competition-{c.id}/{f['path']}"]).hexdigest() == f["sha256"]
               for f in manifest["files"])
    assert [r["place"] for r in manifest["final_table"]] == ["1", "2-3", "2-3", "4"]
    # written once: a second download is the same file (same written_at), read from disk, not rebuilt
    clock.now += HOUR
    assert client.get(f"/api/competitions/{c.id}/dataset").content == got_tar.content
    # a disqualification after the freeze recomputes the final table: the next download is a new dataset
    comp.disqualify(pool, c.id, actor_id=org, reason="a late finding", now=clock.now, bot_id=bots[0])
    again = client.get(f"/api/competitions/{c.id}/dataset")
    with tarfile.open(fileobj=io.BytesIO(again.content)) as tar:
        member = tar.extractfile(f"competition-{c.id}/manifest.json")
        assert member is not None
        table_after = json.loads(member.read())["final_table"]
    assert bots[0] not in [r["bot_id"] for r in table_after if r["standing"] != "disqualified"]
    assert table_after != manifest["final_table"]
    # the superseded tar stays 10 minutes (a download may be about to open it), then a download removes
    # it, with a writing folder a killed process left over a day ago (a fresher one may be another's, at work)
    folder = app.state.dataset_dir
    assert len(list(folder.glob(f"competition-{c.id}-*.tar"))) == 2
    dead, busy = folder / ".writing-dead", folder / ".writing-busy"
    for f in (dead, busy):
        (f / "competition-1").mkdir(parents=True)
    os.utime(dead, (clock.now.timestamp() - 25 * 3600,) * 2)
    os.utime(busy, (clock.now.timestamp() - 2 * 3600,) * 2)
    clock.now += timedelta(minutes=9)
    assert client.get(f"/api/competitions/{c.id}/dataset").content == again.content
    assert len(list(folder.glob(f"competition-{c.id}-*.tar"))) == 2
    assert not dead.exists() and busy.exists()
    clock.now += timedelta(minutes=2)
    assert client.get(f"/api/competitions/{c.id}/dataset").content == again.content
    assert len(list(folder.glob(f"competition-{c.id}-*.tar"))) == 1


def test_the_seed_is_never_shown_while_the_evaluation_runs(client: TestClient, pool: Any, clock: Clock) -> None:
    c = competition(pool, final_budget=50, final_max_batches=3)
    _, bots = _field(pool, c, 3)
    _season(pool, c, bots, {b: 0.0 for b in bots}, random.Random(1), 2)
    ev, _ = start_evaluation(pool, c.id, now=c.final_at)
    clock.now = c.final_at
    shown = client.get(f"/api/competitions/{c.id}/evaluation").json()
    with pool.connection() as conn:
        seed = conn.execute("SELECT seed FROM competition_evaluations WHERE competition_id = %s",
                            (c.id,)).fetchone()[0]
    assert shown["status"] == "running" and shown["seed"] is None and seed not in client.get(
        f"/api/competitions/{c.id}/evaluation").text
    assert shown["seed_commitment"] == ev.seed_commitment and shown["estimate"] == ev.estimate
    assert seed not in client.get(f"/competitions/{c.id}").text


# -- the pages ------------------------------------------------------------------------------------


def _signed_in(client: TestClient, pool: Any, name: str, role: str = "participant") -> int:
    assert client.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
    with pool.connection() as conn:
        aid = int(conn.execute("UPDATE accounts SET role = %s WHERE username = %s RETURNING id",
                               (role, name)).fetchone()[0])
    r = client.post("/login", data={"username": name, "password": PASSWORD, "csrf": _csrf(client, "/login")},
                    follow_redirects=False)
    assert r.status_code == 303, r.text
    return aid


def _csrf(client: TestClient, path: str) -> str:
    return client.get(path).text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def test_the_page_renders_markdown_and_shows_html_as_text(client: TestClient, pool: Any) -> None:
    c = competition(pool, description="# Rules\n\nplay **well** <script>alert(1)</script> "
                                      "[x](javascript:alert(2)) <img src=x onerror=alert(3)>",
                    rules="*no* collusion")
    page = client.get(f"/competitions/{c.id}")
    assert page.status_code == 200
    html = page.text
    assert "<strong>well</strong>" in html and "<em>no</em> collusion" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "&lt;img src=x onerror=alert(3)&gt;" in html and 'href="javascript:' not in html
    listing = client.get("/competitions").text
    assert f'href="/competitions/{c.id}"' in listing and "Open for entries" in listing
    assert 'href="/competitions"' in client.get("/").text  # in the navigation
    assert client.get("/competitions/999").status_code == 404


def test_pages_enter_create_and_disqualify_with_a_confirmation(client: TestClient, pool: Any, clock: Clock) -> None:
    org_id = _signed_in(client, pool, "orga", role="organiser")
    form = {"name": "page cup", "game": "floriferous", "players": "2", "deadline_at": (T0 + 24 * HOUR).isoformat(),
            "entry_mode": "any", "max_entrants_per_account": "1", "max_versions_per_day": "5",
            "final_budget": "100", "final_max_batches": "5", "description": "hello *there*", "rules": ""}
    bad = client.post("/competitions/new", data={**form, "max_entrants_per_account": "50",
                                                 "csrf": _csrf(client, "/competitions/new")})
    assert bad.status_code == 422 and "max_entrants_per_account" in bad.text and _count(pool) == 0
    r = client.post("/competitions/new", data={**form, "csrf": _csrf(client, "/competitions/new")},
                    follow_redirects=False)
    assert r.status_code == 303, r.text
    cid = int(r.headers["location"].rsplit("/", 1)[1])
    assert comp.get_competition(pool, cid).organiser_id == org_id
    player = account(pool, "pl")
    b = bot(pool, player, "victim")
    comp.enter_competition(pool, cid, b, account_id=player, now=T0)
    csrf = _csrf(client, f"/competitions/{cid}")
    ask = client.post(f"/competitions/{cid}/disqualify", data={"bot_id": str(b), "reason": "bad", "csrf": csrf})
    assert ask.status_code == 200 and "Yes, disqualify" in ask.text and "victim" in ask.text
    assert comp.entrants(pool, cid)[0].disqualified_at is None  # only asked
    done = client.post(f"/competitions/{cid}/disqualify",
                       data={"bot_id": str(b), "reason": "bad", "confirm": "yes", "csrf": csrf},
                       follow_redirects=False)
    assert done.status_code == 303 and comp.entrants(pool, cid)[0].disqualified_reason == "bad"
    assert client.post(f"/competitions/{cid}/extend", data={"deadline_at": "soon", "csrf": csrf}).status_code == 422
    for digits in ("\u00b2", "\u0661\u0662"):  # a superscript two (int() refuses it: was a 500), Arabic-Indic 12
        odd = client.post(f"/competitions/{cid}/disqualify", data={"bot_id": digits, "reason": "x", "csrf": csrf})
        assert odd.status_code == 422, (digits, odd.status_code)
    client.post(f"/competitions/{cid}/extend", data={"deadline_at": (T0 + 30 * HOUR).isoformat(), "csrf": csrf})
    assert comp.get_competition(pool, cid).deadline_at == T0 + 30 * HOUR
    assert client.post(f"/competitions/{cid}/extend", data={"deadline_at": (T0 + 40 * HOUR).isoformat()}
                       ).status_code == 403  # no CSRF token

    client.cookies.clear()
    me = _signed_in(client, pool, "entrant")
    mine = bot(pool, me, "mybot", games=["floriferous"])
    page = client.get(f"/competitions/{cid}").text
    assert "Enter a bot" in page and "mybot" in page and "Organiser" not in page
    csrf = _csrf(client, f"/competitions/{cid}")
    assert client.post(f"/competitions/{cid}/enter", data={"bot_id": str(b), "csrf": csrf}).status_code == 404
    r = client.post(f"/competitions/{cid}/enter", data={"bot_id": str(mine), "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and mine in [e.bot_id for e in comp.entrants(pool, cid)]
    refused = client.post(f"/competitions/{cid}/disqualify", data={"bot_id": str(mine), "reason": "x", "csrf": csrf})
    assert refused.status_code == 403
    assert client.post("/competitions/new", data={**form, "csrf": csrf}).status_code == 403
    assert _count(pool) == 1
