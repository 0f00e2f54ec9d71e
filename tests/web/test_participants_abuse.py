# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""Abuse a participant can do alone, tried as the attacker did (docs/faults.md S-21, S-22).

S-21 also covers tournaments with an entry window: one bot per account (their matches are rated).

S-21 Elo farming: mallory seats her own sacrificial bot against her main bot in *rated* challenges (it
resigns at once, the main bot gains Elo); refused, casual stays allowed.
S-22 slot hoarding: mallory opens challenge after challenge at the longest clock a challenge allows,
each holding a worker slot for minutes; at most ``max_open_challenges`` pending or running per account.
Same app, database and helpers as tests/web/test_participants.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_participants import (  # noqa: F401 - fixtures are found by name
    account,
    app,
    bearer,
    client,
    csrf_of,
    login,
    new_bot,
    pool,
    rds,
)

from web.auth import ParticipantConfig, config_from_env

SLOW = {"base_ms": 0, "increment_ms": 60000, "cap_ms": 60000, "margin_ms": 10000}


def _house(pool: Any) -> int:
    from ladder.house import ensure_house_bot

    return int(ensure_house_bot(pool, "random", ["floriferous"])[0])


def _challenge(client: Any, tok: str, bots: list[int], rated: bool, tc: dict[str, int] | None = None) -> Any:
    body: dict[str, Any] = {"game": "floriferous", "bots": bots, "rated": rated}
    if tc:
        body["time_control"] = tc
    return client.post("/api/challenges", json=body, headers=bearer(tok))


def test_s21_rated_challenge_between_two_bots_of_one_account_is_refused(client: Any, pool: Any) -> None:
    _, mallory = account(client)
    main, sacrifice = new_bot(client, mallory), new_bot(client, mallory)
    r = _challenge(client, mallory, [main["id"], sacrifice["id"]], rated=True)
    assert r.status_code == 400, r.text
    assert "two bots of one account" in r.json()["detail"] and "casual" in r.json()["detail"]
    r = _challenge(client, mallory, [sacrifice["id"], main["id"]], rated=True)  # the other seat order too
    assert r.status_code == 400, r.text
    with pool.connection() as conn:  # nothing was written
        (n,) = conn.execute("SELECT count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                            "WHERE s.bot_id = %s AND m.rated", (sacrifice["id"],)).fetchone()
    assert n == 0
    # casual between one's own bots stays allowed, and rated against someone else's bot too
    assert _challenge(client, mallory, [main["id"], sacrifice["id"]], rated=False).status_code == 201
    _, victor = account(client)
    theirs = new_bot(client, victor, accepts_challenges=True)
    assert _challenge(client, mallory, [main["id"], theirs["id"]], rated=True).status_code == 201


def test_s21_the_web_form_refuses_it_too(client: Any, pool: Any) -> None:
    name, mallory = account(client)
    main, sacrifice = new_bot(client, mallory), new_bot(client, mallory)
    login(client, name)
    csrf = csrf_of(client, "/my/challenge")
    r = client.post("/my/challenge", data={"csrf": csrf, "mine": str(main["id"]), "opponents": str(sacrifice["id"]),
                                           "game": "floriferous", "rated": "1"}, follow_redirects=False)
    assert r.status_code == 422 and "two bots of one account" in r.text


def test_s22_open_challenges_per_account_are_capped(client: Any, app: Any, pool: Any) -> None:
    house = _house(pool)
    _, mallory = account(client)
    mine = new_bot(client, mallory)
    cap = app.state.participants.max_open_challenges
    assert cap == 2  # the default
    made = [_challenge(client, mallory, [mine["id"], house], rated=False, tc=SLOW) for _ in range(cap)]
    assert [r.status_code for r in made] == [201] * cap, [r.text for r in made]
    r = _challenge(client, mallory, [mine["id"], house], rated=False, tc=SLOW)
    assert r.status_code == 429, r.text
    assert f"at most {cap}" in r.json()["detail"]
    # a second bot of the same account does not open a second budget
    other = new_bot(client, mallory)
    assert _challenge(client, mallory, [other["id"], house], rated=False).status_code == 429
    # running counts as much as waiting; once one is over, one more may be made
    ids = [r.json()["match_id"] for r in made]
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET status = 'running' WHERE id = %s", (ids[0],))
    assert _challenge(client, mallory, [mine["id"], house], rated=False).status_code == 429
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET status = 'failed' WHERE id = %s", (ids[0],))
    assert _challenge(client, mallory, [mine["id"], house], rated=False).status_code == 201
    # another account has its own budget
    _, bob = account(client)
    assert _challenge(client, bob, [new_bot(client, bob)["id"], house], rated=False).status_code == 201


def test_s22_the_cap_is_a_setting(app: Any, client: Any, pool: Any) -> None:
    assert config_from_env({}).max_open_challenges == 2
    assert config_from_env({"PARTERRE_MAX_OPEN_CHALLENGES": "5"}).max_open_challenges == 5
    for bad in ("0", "-1", "lots"):
        with pytest.raises(ValueError, match="PARTERRE_MAX_OPEN_CHALLENGES"):
            config_from_env({"PARTERRE_MAX_OPEN_CHALLENGES": bad})
    old = app.state.participants
    app.state.participants = ParticipantConfig(signup="open", redis=old.redis, tokens_key=old.tokens_key,
                                               max_open_challenges=1)
    house = _house(pool)
    _, tok = account(client)
    mine = new_bot(client, tok)
    assert _challenge(client, tok, [mine["id"], house], rated=False).status_code == 201
    assert _challenge(client, tok, [mine["id"], house], rated=False).status_code == 429


def test_s21_one_account_cannot_enter_two_bots_into_a_rated_tournament(client: Any, pool: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from ladder.tournaments import create_tournament

    tid = create_tournament(pool, name=f"open-{id(client)}", game="floriferous",
                            entry_deadline=datetime.now(UTC) + timedelta(hours=1))
    _, mallory = account(client)
    main, sacrifice = new_bot(client, mallory), new_bot(client, mallory)
    r = client.post(f"/api/tournaments/{tid}/entries", json={"bot_id": main["id"]}, headers=bearer(mallory))
    assert r.status_code == 201, r.text
    r = client.post(f"/api/tournaments/{tid}/entries", json={"bot_id": sacrifice["id"]}, headers=bearer(mallory))
    assert r.status_code == 409 and "one bot per account" in r.json()["detail"], r.text
    with pool.connection() as conn:
        entered = [b for (b,) in conn.execute("SELECT bot_id FROM tournament_bots WHERE tournament_id = %s", (tid,))]
    assert entered == [main["id"]]
    # someone else's bot enters as before
    _, bob = account(client)
    r = client.post(f"/api/tournaments/{tid}/entries", json={"bot_id": new_bot(client, bob)["id"]},
                    headers=bearer(bob))
    assert r.status_code == 201, r.text
