# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""Challenge policies and owners' answers through the public API and the pages (docs/participants.md "Challenges").

Each policy as a challenger meets it: ``accept`` plays as before (started once both bots are
connected, played by the engine, recorded), ``none`` is refused before anything is written, ``ask``
waits for the owner: accepted it is dispatched and played, declined it ends ``declined`` and is never
started or claimed, unanswered it expires. Who is connected is what the workers pass to
``dispatch_challenges``; time moves by its ``now`` and the app's clock, never by sleeping. Another
account's ids are tried on every door (404, as for ids that do not exist), and bursts of parallel
accept and decline requests go to a served app over real HTTP: exactly one answer wins each time.
Same app, database and helpers as tests/web/test_participants.py.
"""

from __future__ import annotations

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from fixtures.web_helpers import play_replay
from test_participants import (  # noqa: F401 - fixtures are found by name
    account,
    app,
    bearer,
    client,
    csrf_of,
    finished_match,
    login,
    new_bot,
    pool,
    rds,
    remote_site,
)

from ladder.challenges import dispatch_challenges
from ladder.matches import claim_match, record_result
from web.app import start_background

FLORIFEROUS = "floriferous"


def challenge(client: Any, tok: str, bots: list[int], **kw: Any) -> Any:
    return client.post("/api/challenges", json={"game": FLORIFEROUS, "bots": bots, **kw}, headers=bearer(tok))


def status(client: Any, tok: str, match_id: int) -> dict[str, Any]:
    r = client.get(f"/api/challenges/{match_id}", headers=bearer(tok))
    assert r.status_code == 200, r.text
    return dict(r.json())


def online(*bots: int) -> dict[str, set[int]]:
    """Who the workers see connected: these bots, in Floriferous."""
    return {FLORIFEROUS: set(bots)}


def play(pool: Any, match_id: int) -> None:
    """Claim the match as a worker does and play it through the engine, recording the result."""
    spec = claim_match(pool, match_id, "policy-tests")
    assert spec is not None, f"match {match_id} is not claimable"
    result = play_replay(spec, [f"n{b}" for b in spec.seat_bot_ids], ["random"] * len(spec.seat_bot_ids))
    assert record_result(pool, match_id, spec.attempt, result)


def pair(client: Any, policy: str, **kw: Any) -> tuple[str, str, int, int]:
    """A challenger's token and bot, an owner's token and bot with ``policy``: (challenger, owner, mine, theirs)."""
    _, a = account(client)
    _, b = account(client)
    return a, b, new_bot(client, a)["id"], new_bot(client, b, challenge_policy=policy, **kw)["id"]


def match_status(pool: Any, match_id: int) -> str:
    with pool.connection() as conn:
        return str(conn.execute("SELECT status FROM matches WHERE id = %s", (match_id,)).fetchone()[0])


# -- the three policies -----------------------------------------------------------------------------


def test_accept_plays_as_before(client: Any, pool: Any) -> None:
    a, b, mine, theirs = pair(client, "accept")
    r = challenge(client, a, [mine, theirs])
    assert r.status_code == 201, r.text
    mid = r.json()["match_id"]
    assert r.json()["status"] == "waiting"
    seen = status(client, a, mid)
    assert (seen["status"], seen["answers"], seen["yours_to_answer"]) == ("waiting", [], [])
    assert client.get("/api/challenges/incoming", headers=bearer(b)).json() == []  # nobody is asked
    assert dispatch_challenges(pool, online(mine)) == ([], [])  # one bot connected: it waits
    assert dispatch_challenges(pool, online(mine, theirs)) == ([mid], [])
    play(pool, mid)
    done = status(client, a, mid)
    assert done["status"] == "finished" and sorted(done["ranks"]) in ([1, 2], [1, 1])
    assert status(client, b, mid)["status"] == "finished"  # the challenged owner sees it too


def test_none_is_refused_with_a_clear_4xx_and_writes_nothing(client: Any, pool: Any) -> None:
    a, _, mine, theirs = pair(client, "none")
    r = challenge(client, a, [mine, theirs])
    assert r.status_code == 403, r.text
    assert re.search(rf"bot bot\d+ \(id {theirs}\) does not accept challenges in floriferous: its challenge "
                     r"policy is none", r.json()["detail"]), r.text
    # the older form of the setting means the same, and so does a game left out of its challenge games
    _, c = account(client)
    old = new_bot(client, c, accepts_challenges=False)["id"]
    other_game = new_bot(client, c, challenge_policy="ask", games=["floriferous", "lafleur"])
    r = client.patch(f"/api/bots/{other_game['id']}/settings", json={"challenge_games": ["lafleur"]},
                     headers=bearer(c))
    assert r.status_code == 200, r.text
    assert challenge(client, a, [mine, old]).status_code == 403
    r = challenge(client, a, [mine, other_game["id"]])
    assert r.status_code == 403 and "floriferous is not one of its challenge games" in r.json()["detail"], r.text
    with pool.connection() as conn:  # nothing was written: no match seats the challenger's bot
        assert conn.execute("SELECT count(*) FROM seats WHERE bot_id = %s", (mine,)).fetchone()[0] == 0


def test_ask_waits_for_the_owner_and_accepted_it_is_dispatched_and_played(client: Any, pool: Any) -> None:
    a, b, mine, theirs = pair(client, "ask")
    r = challenge(client, a, [mine, theirs], rated=True)
    assert r.status_code == 201 and r.json()["status"] == "asked", r.text
    mid = r.json()["match_id"]
    # both bots connected: still not started, nor expired (it waits for the answer)
    assert dispatch_challenges(pool, online(mine, theirs)) == ([], [])
    assert claim_match(pool, mid, "w") is None
    incoming = client.get("/api/challenges/incoming?pending=true", headers=bearer(b)).json()
    assert [(c["match_id"], c["yours_to_answer"], c["challenger"]) for c in incoming] == [
        (mid, [theirs], client.get("/api/account", headers=bearer(a)).json()["username"])]
    seen = status(client, a, mid)
    assert seen["status"] == "asked" and seen["yours_to_answer"] == []
    assert [(x["bot_id"], x["answer"]) for x in seen["answers"]] == [(theirs, None)]
    r = client.post(f"/api/challenges/{mid}/accept", headers=bearer(b))
    assert r.status_code == 200 and r.json()["status"] == "waiting", r.text
    seen = status(client, a, mid)  # the challenger sees the answer
    assert seen["status"] == "waiting" and seen["answers"][0]["answer"] == "accepted"
    assert seen["answers"][0]["answered_at"] is not None
    assert client.get("/api/challenges/incoming?pending=true", headers=bearer(b)).json() == []
    assert dispatch_challenges(pool, online(mine, theirs)) == ([mid], [])
    play(pool, mid)
    assert status(client, a, mid)["status"] == "finished"
    r = client.post(f"/api/challenges/{mid}/decline", headers=bearer(b))  # too late to change one's mind
    assert r.status_code == 409 and r.json()["detail"] == f"you accepted challenge {mid} already", r.text


def test_ask_declined_ends_declined_and_is_never_played(client: Any, pool: Any) -> None:
    a, b, mine, theirs = pair(client, "ask")
    mid = challenge(client, a, [mine, theirs]).json()["match_id"]
    r = client.post(f"/api/challenges/{mid}/decline", headers=bearer(b))
    assert r.status_code == 200 and r.json()["status"] == "declined", r.text
    seen = status(client, a, mid)
    assert seen["status"] == "declined" and seen["answers"][0]["answer"] == "declined"
    assert re.fullmatch(rf"the owner of bot bot\d+ \(id {theirs}\) declined", seen["reason"]), seen
    # every bot connected, ticks go by: it never starts, no worker can claim it, and it frees its slot
    for _ in range(2):
        assert dispatch_challenges(pool, online(mine, theirs)) == ([], [])
    assert claim_match(pool, mid, "w") is None
    assert match_status(pool, mid) == "declined"
    assert client.get(f"/api/matches/{mid}").json()["status"] == "declined"  # the public match page's data
    assert "declined: the owner of bot" in client.get(f"/matches/{mid}").text
    for verb in ("accept", "decline"):
        r = client.post(f"/api/challenges/{mid}/{verb}", headers=bearer(b))
        assert r.status_code == 409 and "you declined" in r.json()["detail"], r.text
    assert [c["status"] for c in client.get("/api/challenges", headers=bearer(a)).json()] == ["declined"]


def test_an_unanswered_challenge_expires_as_before(client: Any, pool: Any, app: Any) -> None:
    a, b, mine, theirs = pair(client, "ask")
    r = challenge(client, a, [mine, theirs], expires_after_s=60)
    mid = r.json()["match_id"]
    created = datetime.fromisoformat(status(client, a, mid)["created_at"])
    assert dispatch_challenges(pool, online(mine, theirs), now=created + timedelta(seconds=59)) == ([], [])
    # past its expiry, before the workers' next tick: the owner's answer is refused all the same
    app.state.clock = lambda: created + timedelta(seconds=61)
    r = client.post(f"/api/challenges/{mid}/accept", headers=bearer(b))
    assert r.status_code == 409 and f"challenge {mid} expired at" in r.json()["detail"], r.text
    assert dispatch_challenges(pool, online(mine, theirs), now=created + timedelta(seconds=61)) == ([], [mid])
    seen = status(client, a, mid)
    assert seen["status"] == "expired" and seen["answers"][0]["answer"] is None
    assert re.fullmatch(rf"the owner of bot bot\d+ \(id {theirs}\) did not answer within 60 s", seen["reason"])
    app.state.clock = lambda: datetime.now(UTC)
    r = client.post(f"/api/challenges/{mid}/decline", headers=bearer(b))
    assert r.status_code == 409 and r.json()["detail"].startswith(f"challenge {mid} is expired: the owner of"), r.text
    assert match_status(pool, mid) == "expired"


def test_setting_the_policy_to_none_ends_the_challenges_still_asking(client: Any, pool: Any) -> None:
    a, b, mine, theirs = pair(client, "ask")
    mid = challenge(client, a, [mine, theirs]).json()["match_id"]
    r = client.patch(f"/api/bots/{theirs}/settings", json={"challenge_policy": "none"}, headers=bearer(b))
    assert r.status_code == 200 and r.json()["accepts_challenges"] is False, r.text
    assert dispatch_challenges(pool, online(mine, theirs)) == ([], [mid])
    assert "no longer accepts challenges" in status(client, a, mid)["reason"]


# -- who may see and answer -------------------------------------------------------------------------


def test_another_accounts_ids_answer_404_like_ids_that_do_not_exist(client: Any, pool: Any) -> None:
    a, b, mine, theirs = pair(client, "ask")
    mid = challenge(client, a, [mine, theirs]).json()["match_id"]
    _, mallory = account(client)
    unknown = mid + 10**6
    for tok, who in ((mallory, "a stranger"), (a, "the challenger")):
        for verb in ("accept", "decline"):
            r = client.post(f"/api/challenges/{mid}/{verb}", headers=bearer(tok))
            assert r.status_code == 404, (who, verb, r.text)
            assert r.json()["detail"] == f"no challenge {mid} asks a bot of yours"
            assert client.post(f"/api/challenges/{unknown}/{verb}", headers=bearer(tok)).json()["detail"] == (
                f"no challenge {unknown} asks a bot of yours")
    r = client.get(f"/api/challenges/{mid}", headers=bearer(mallory))
    assert r.status_code == 404 and r.json()["detail"] == f"no challenge {mid} of yours"
    assert client.get(f"/api/challenges/{unknown}", headers=bearer(mallory)).status_code == 404
    assert client.get("/api/challenges/incoming", headers=bearer(mallory)).json() == []
    assert client.get("/api/challenges", headers=bearer(mallory)).json() == []
    # nor through the pages, with mallory's session and CSRF token
    name = client.get("/api/account", headers=bearer(mallory)).json()["username"]
    login(client, name)
    csrf = csrf_of(client, "/my/challenges")
    assert client.post(f"/my/challenges/{mid}/decline", data={"csrf": csrf}).status_code == 404
    assert f"/my/challenges/{mid}/" not in client.get("/my/challenges").text
    # nothing of that changed the challenge; its owner still answers
    assert status(client, a, mid)["status"] == "asked"
    assert client.post(f"/api/challenges/{mid}/accept", headers=bearer(b)).status_code == 200


def test_answering_takes_the_scope_challenge(client: Any) -> None:
    a, _, mine, theirs = pair(client, "ask")
    mid = challenge(client, a, [mine, theirs]).json()["match_id"]
    _, owner_reader = account(client, scopes=("bot:manage",))
    r = client.post(f"/api/challenges/{mid}/accept", headers=bearer(owner_reader))
    assert r.status_code == 403 and "challenge" in r.json()["detail"]
    assert client.post(f"/api/challenges/{mid}/accept").status_code == 401


def test_a_burst_of_parallel_accepts_and_declines_has_exactly_one_winner(client: Any, pool: Any, app: Any) -> None:
    """Eight requests at once (four accept, four decline) per challenge, over real HTTP to a served app:
    one 200, seven 409 naming the answer that won, and the stored state is the winner's."""
    app.state.participants = replace(app.state.participants, max_open_challenges=50)
    a, b, mine, theirs = pair(client, "ask")
    challenges = [challenge(client, a, [mine, theirs]).json()["match_id"] for _ in range(6)]
    server = start_background(pool=pool, port=int(os.environ.get("PARTERRE_TEST_WEB_PORT", "0")))
    try:
        for mid in challenges:
            start = threading.Barrier(8)

            def send(verb: str, mid: int = mid, start: threading.Barrier = start) -> tuple[str, int, str]:
                with httpx.Client(base_url=server.url, timeout=30) as http:
                    start.wait()
                    r = http.post(f"/api/challenges/{mid}/{verb}", headers=bearer(b))
                    return verb, r.status_code, r.json().get("detail", "")

            with ThreadPoolExecutor(8) as threads:
                answers = list(threads.map(send, ["accept", "decline"] * 4))
            winners = [verb for verb, code, _ in answers if code == 200]
            assert len(winners) == 1, answers
            won = "accepted" if winners == ["accept"] else "declined"
            losers = [(code, detail) for _, code, detail in answers if code != 200]
            assert losers == [(409, f"you {won} challenge {mid} already")] * 7, answers
            with pool.connection() as conn:
                stored = conn.execute("SELECT c.status, x.answer FROM challenges c JOIN challenge_answers x "
                                      "ON x.match_id = c.match_id WHERE c.match_id = %s", (mid,)).fetchall()
            assert stored == [("waiting" if won == "accepted" else "declined", won)]
    finally:
        server.stop()


# -- the bot's settings: policy and the older accepts_challenges ---------------------------------------


def test_accepts_challenges_is_still_read_and_written(client: Any) -> None:
    _, b = account(client)
    bot = new_bot(client, b)
    assert (bot["challenge_policy"], bot["accepts_challenges"]) == ("none", False)  # created refusing
    legacy = new_bot(client, b, accepts_challenges=True)
    assert (legacy["challenge_policy"], legacy["accepts_challenges"]) == ("accept", True)

    def patch(body: dict[str, Any]) -> Any:
        return client.patch(f"/api/bots/{bot['id']}/settings", json=body, headers=bearer(b))

    steps = [({"accepts_challenges": True}, "accept", True), ({"challenge_policy": "ask"}, "ask", False),
             ({"accepts_challenges": False}, "none", False), ({"challenge_policy": "accept"}, "accept", True),
             ({"challenge_policy": "ask", "accepts_challenges": False}, "ask", False), ({}, "ask", False)]
    for body, policy, accepts in steps:
        r = patch(body)
        assert r.status_code == 200, (body, r.text)
        assert (r.json()["challenge_policy"], r.json()["accepts_challenges"]) == (policy, accepts), body
    for body in ({"challenge_policy": "ask", "accepts_challenges": True}, {"challenge_policy": "none",
                                                                           "accepts_challenges": True}):
        r = patch(body)
        assert r.status_code == 400 and "contradicts challenge_policy" in r.json()["detail"], r.text
    assert patch({"challenge_policy": "maybe"}).status_code == 422
    mine = {x["id"]: x for x in client.get("/api/account/bots", headers=bearer(b)).json()}
    assert mine[bot["id"]]["challenge_policy"] == "ask"


def test_the_migration_keeps_the_meaning_of_existing_rows(database_url: str) -> None:
    from alembic import command

    from ladder.db import alembic_config, migrate

    migrate(database_url, "0018")
    with psycopg.connect(database_url) as conn:
        conn.execute("INSERT INTO bots (name, version, token_hash, accepts_challenges) VALUES "
                     "('keen', '1', repeat('a', 64), true), ('shy', '1', repeat('b', 64), false)")
    migrate(database_url)
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT name, challenge_policy FROM bots ORDER BY name").fetchall()
        assert rows == [("keen", "accept"), ("shy", "none")]
        conn.execute("INSERT INTO bots (name, version, token_hash, challenge_policy) VALUES "
                     "('asker', '1', repeat('c', 64), 'ask')")
    command.downgrade(alembic_config(database_url), "0018")
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT name, accepts_challenges FROM bots ORDER BY name").fetchall()
    assert rows == [("asker", False), ("keen", True), ("shy", False)]


# -- finding a bot --------------------------------------------------------------------------------------


def test_search_finds_bots_by_name_with_owner_ratings_and_policy(client: Any, pool: Any) -> None:
    owner_name, b = account(client)
    moon = new_bot(client, b, "moonlit", challenge_policy="ask")
    new_bot(client, b, "moonlit-lafleur", games=["lafleur"], challenge_policy="accept")
    gone = new_bot(client, b, "moonlit-old", challenge_policy="accept")
    assert client.post(f"/api/bots/{gone['id']}/retire", headers=bearer(b)).status_code == 200
    _, a = account(client)
    mine = new_bot(client, a, "sunrise")
    finished_match(pool, [moon["id"], mine["id"]])  # played by the engine and rated
    with pool.connection() as conn:
        elo = conn.execute("SELECT elo FROM ratings WHERE bot_id = %s AND game = 'floriferous'",
                           (moon["id"],)).fetchone()[0]
    r = client.get("/api/bots/search?q=MOON&game=floriferous", headers=bearer(a))
    assert r.status_code == 200, r.text
    assert [x["name"] for x in r.json()] == ["moonlit"]  # lafleur only, and retired: not listed
    (found,) = r.json()
    assert (found["id"], found["owner"], found["challenge_policy"], found["challengeable"], found["yours"]) == (
        moon["id"], owner_name, "ask", True, False)
    assert found["ratings"] == {"floriferous": {"elo": elo, "games": 1}}
    everywhere = client.get("/api/bots/search?q=moon", headers=bearer(a)).json()
    assert [x["name"] for x in everywhere] == ["moonlit", "moonlit-lafleur"]
    assert all(x["challengeable"] is None for x in everywhere)
    assert client.get("/api/bots/search?q=sun", headers=bearer(a)).json()[0]["yours"] is True
    for wildcard in ("%", "_", "moon%lit", "\\"):  # matched as themselves: no bot name holds them
        assert client.get("/api/bots/search", params={"q": wildcard}, headers=bearer(a)).json() == []
    from ladder.house import ensure_house_bot

    house_id, _ = ensure_house_bot(pool, "greedy", ["floriferous"])  # the house plays it in Floriferous only
    (house,) = client.get("/api/bots/search?q=house-greedy&game=floriferous", headers=bearer(a)).json()
    assert (house["id"], house["owner"], house["house"], house["challenge_policy"], house["challengeable"]) == (
        house_id, None, True, "accept", True)
    assert client.get("/api/bots/search?q=house-greedy&game=lafleur", headers=bearer(a)).json() == []
    assert client.get("/api/bots/search?q=moon").status_code == 401  # owners' names are for participants
    assert client.get("/api/bots/search?game=chess", headers=bearer(a)).status_code == 404
    assert client.get("/api/bots/search?q=" + "x" * 65, headers=bearer(a)).status_code == 422


# -- the pages, without JavaScript ------------------------------------------------------------------------


def test_the_pages_pick_by_name_choose_the_options_send_and_show_the_answer(client: Any, pool: Any) -> None:
    owner_name, b = account(client)
    theirs = new_bot(client, b, "rosebud", challenge_policy="ask")
    challenger, a = account(client)
    mine = new_bot(client, a, "thistle")
    login(client, challenger)
    # a plain GET search lists the bot with a Pick button of the draft's form
    page = client.get("/my/challenge", params={"game": "floriferous", "players": "2", "q": "rose"}).text
    assert re.search(rf'<button type="submit" name="opponent" value="{theirs["id"]}" class="pick">Pick</button>', page)
    assert owner_name in page and "asks its owner" in page
    # pick it, with a variant: the send form carries the draft, and its summary says what is sent
    page = client.get("/my/challenge", params={"game": "floriferous", "players": "2", "extended": "true",
                                               "opponent": str(theirs["id"])}).text
    assert f'<input type="hidden" name="opponent" value="{theirs["id"]}">' in page
    assert "<code>floriferous(extended=true,players=2)</code>: your bot, rosebud" in page
    # the player counts offered are the game's own; a variant the count does not allow is said before sending
    assert re.findall(r'<option value="(\d)"', page.split('name="players"')[1].split("</select>")[0]) == [
        "1", "2", "3", "4"]
    page = client.get("/my/challenge", params={"game": "floriferous", "players": "3", "extended": "true"}).text
    assert "extended=true is the 2-player extended setup" in page
    csrf = csrf_of(client, "/my/challenge")
    form = {"csrf": csrf, "game": "floriferous", "players": "2", "extended": "true", "opponent": str(theirs["id"]),
            "mine": str(mine["id"]), "wait": "3600"}
    r = client.post("/my/challenge", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    mid = int(r.headers["location"].rsplit("=", 1)[1])
    seen = status(client, a, mid)
    assert seen["game_string"] == "floriferous(competitive_bounties=false,extended=true,players=2)"
    assert seen["bot_ids"] == [mine["id"], theirs["id"]] and seen["status"] == "asked"
    waited = datetime.fromisoformat(seen["expires_at"]) - datetime.fromisoformat(seen["created_at"])
    assert waited == timedelta(hours=1)
    assert f'id="sent-{mid}" data-status="asked"' in client.get("/my/challenges").text
    # the owner declines on their page; the challenger's page shows the answer
    login(client, owner_name)
    incoming = client.get("/my/challenges").text
    assert f'id="incoming-{mid}"' in incoming and f'action="/my/challenges/{mid}/accept"' in incoming
    r = client.post(f"/my/challenges/{mid}/decline", data={"csrf": csrf_of(client, "/my/challenges")},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/my/challenges?declined={mid}"
    r = client.post(f"/my/challenges/{mid}/accept", data={"csrf": csrf_of(client, "/my/challenges")})
    assert r.status_code == 409 and f"you declined challenge {mid} already" in r.text
    login(client, challenger)
    sent = client.get("/my/challenges").text
    assert f'id="sent-{mid}" data-status="declined"' in sent and "the owner of bot rosebud" in sent
    # a solo game with a variant of a list of values: La Fleur against its automaton, no opponent
    solo = new_bot(client, a, "thistle-solo", games=["lafleur"])
    page = client.get("/my/challenge", params={"game": "lafleur", "players": "1", "difficulty": "harder"}).text
    assert "none in a solo game" in page and "<code>lafleur(difficulty=harder,players=1)</code>" in page
    r = client.post("/my/challenge", data={"csrf": csrf_of(client, "/my/challenge"), "game": "lafleur",
                                           "players": "1", "difficulty": "harder", "mine": str(solo["id"])},
                    follow_redirects=False)
    assert r.status_code == 303, r.text
    assert status(client, a, int(r.headers["location"].rsplit("=", 1)[1]))["game_string"] == (
        "lafleur(difficulty=harder,players=1)")
    # a refused opponent cannot be picked, and sending one anyway is refused with the reason
    shy = new_bot(client, b, "bashful")
    page = client.get("/my/challenge", params={"q": "bashful"}).text
    assert re.search(rf'value="{shy["id"]}" class="pick" disabled', page) and "refuses" in page
    form |= {"opponent": str(shy["id"]), "csrf": csrf_of(client, "/my/challenge")}
    r = client.post("/my/challenge", data=form)
    assert r.status_code == 403 and "its challenge policy is none" in r.text


# -- parterre remote -------------------------------------------------------------------------------------


def test_parterre_remote_sets_the_policy_finds_challenges_and_answers(
        remote_site: None, monkeypatch: Any, capsys: Any) -> None:
    """The same over ``parterre remote`` (nothing but HTTP): bot-create/bot-set --challenge-policy, bot-search,
    challenge --expires, challenges --incoming --pending, challenge-decline, challenge-show."""
    from parterre.cli import main

    errors: list[str] = []

    def run(token: str, *argv: str) -> tuple[int, Any]:
        monkeypatch.setenv("PARTERRE_API_TOKEN", token)
        code = main(["remote", *argv])
        out = capsys.readouterr()
        errors.append(out.err)
        return code, json.loads(out.out) if out.out.strip() else None

    tokens = {}
    for name in ("lena", "omar"):
        assert main(["remote", "signup", name]) == 0
        capsys.readouterr()
        tokens[name] = run("", "token", name, "--scopes", "bot:manage,challenge")[1]["token"]
    lena, omar = tokens["lena"], tokens["omar"]
    hers = run(lena, "bot-create", "lena-bot", "--games", "floriferous")[1]
    his = run(omar, "bot-create", "omar-bot", "--games", "floriferous", "--challenge-policy", "accept")[1]
    assert (hers["challenge_policy"], his["challenge_policy"]) == ("none", "accept")
    assert run(omar, "bot-set", str(his["id"]), "--challenge-policy", "ask")[1]["challenge_policy"] == "ask"
    found = run(lena, "bot-search", "omar", "--game", "floriferous")[1]
    assert [(b["name"], b["owner"], b["challenge_policy"], b["challengeable"]) for b in found] == [
        ("omar-bot", "omar", "ask", True)]
    code, made = run(lena, "challenge", "--game", "floriferous", "--bots", f"lena-bot,{his['id']}", "--expires", "600")
    assert code == 0 and made["status"] == "asked", made
    mid = made["match_id"]
    assert [c["match_id"] for c in run(omar, "challenges", "--incoming", "--pending")[1]] == [mid]
    assert run(omar, "challenge-decline", str(mid))[1]["status"] == "declined"
    assert run(omar, "challenges", "--incoming", "--pending")[1] == []
    shown = run(lena, "challenge-show", str(mid))[1]
    assert shown["status"] == "declined" and shown["reason"].startswith("the owner of bot omar-bot")
    assert [c["match_id"] for c in run(lena, "challenges")[1]] == [mid]
    assert run(lena, "challenge-accept", str(mid))[0] == 1  # not hers to answer: the server's 404
    assert errors[-1].startswith(f"parterre remote: HTTP 404: no challenge {mid} asks a bot of yours")
