# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""Hostile input a participant can send, tried as an attacker would (docs/faults.md S-25 to S-27).

S-25 a challenge form naming 100,000 bots (one query each, on the event loop: the whole site froze
for 20 s); S-26 NUL bytes and unknown games gave 500s instead of a clear refusal; S-27 a retired
bot got a new hosted version through the web form (the API refused it); W-8 the tournament form took
any number of rounds and player counts (the API capped them). Same app, database and
helpers as tests/web/test_participants.py.
"""

from __future__ import annotations

import io
import tarfile
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

from ladder import accounts as acc
from ladder import owned_bots as ob


def test_s25_a_challenge_naming_thousands_of_bots_is_refused_before_any_query(client: Any, monkeypatch: Any) -> None:
    name, tok = account(client)
    mine = new_bot(client, tok)["id"]
    login(client, name)
    csrf = csrf_of(client, "/my/challenge")
    looked_up: list[int] = []
    real = ob.get_bot
    monkeypatch.setattr(ob, "get_bot", lambda pool, bid: looked_up.append(bid) or real(pool, bid))
    many = ",".join([str(mine)] * 100_000)  # about 700 KB: over the 64 KiB body limit, refused unread
    r = client.post("/my/challenge", data={"csrf": csrf, "mine": str(mine), "opponents": many, "game": "floriferous"},
                    follow_redirects=False)
    assert r.status_code == 413 and "request body over" in r.text
    many = ",".join([str(mine)] * 5_000)  # within the body limit: refused on the count alone
    r = client.post("/my/challenge", data={"csrf": csrf, "mine": str(mine), "opponents": many, "game": "floriferous"},
                    follow_redirects=False)
    assert r.status_code == 422 and "1 to 8 bots" in r.text
    assert looked_up == []
    r = client.post("/api/challenges", json={"game": "floriferous", "bots": [mine] * 9}, headers=bearer(tok))
    assert r.status_code == 422  # the API's schema: at most 8
    r = client.post("/my/challenge", data={"csrf": csrf, "mine": str(mine), "opponents": "", "game": "floriferous"},
                    follow_redirects=False)
    assert r.status_code != 500
    # a refusal before the challenge is made (an unknown bot) is a page with the reason: it was a 500
    # (the route's except clause named an exception class imported only after that point)
    r = client.post("/my/challenge", data={"csrf": csrf, "mine": str(mine), "opponents": "999999",
                                           "game": "floriferous"}, follow_redirects=False)
    assert r.status_code == 404 and "no bot 999999" in r.text


@pytest.mark.parametrize("text", ["a\x00b", "bell\x07", "esc\x1b[31m", "c1\x85"])
def test_s26_control_characters_in_a_description_are_refused_not_a_500(client: Any, text: str) -> None:
    name, tok = account(client)
    r = client.post("/api/bots", json={"name": "ctl-bot", "games": ["floriferous"], "description": text},
                    headers=bearer(tok))
    assert r.status_code in (400, 422) and "control characters" in r.text, r.text
    bot = new_bot(client, tok)["id"]
    r = client.patch(f"/api/bots/{bot}/settings", json={"description": text}, headers=bearer(tok))
    assert r.status_code in (400, 422) and "control characters" in r.text, r.text
    login(client, name)
    r = client.post("/my/bots", data={"csrf": csrf_of(client, "/my/bots"), "name": "ctl-form-bot",
                                      "games": "floriferous", "description": text}, follow_redirects=False)
    assert r.status_code in (400, 422) and "control characters" in r.text, r.status_code
    ok = "line one\nline two\twith a tab, and ünïcödé"
    assert client.patch(f"/api/bots/{bot}/settings", json={"description": ok}, headers=bearer(tok)).status_code == 200


def _organiser(client: Any, pool: Any) -> tuple[str, str, int]:
    name, tok = account(client)
    acc.set_role(pool, acc.get_account(pool, name).id, "organiser")  # type: ignore[union-attr]  # it was just made
    return name, tok, new_bot(client, tok)["id"]


@pytest.mark.parametrize(("field", "value"), [("name", "cup\x00"), ("name", "cup\x1b[2J"), ("game", "nosuchgame"),
                                              ("game", "floriferous\x00")])
def test_s26_a_bad_tournament_name_or_game_is_a_clear_refusal(client: Any, pool: Any, field: str, value: str) -> None:
    name, tok, bot = _organiser(client, pool)
    body: dict[str, Any] = {"name": "cup", "game": "floriferous", "player_counts": [2], "rounds": 1, "bot_ids": [bot],
                            "entry_deadline": "2099-01-01T00:00:00Z", field: value}
    r = client.post("/api/tournaments", json=body, headers=bearer(tok))
    assert r.status_code in (400, 422), (r.status_code, r.text[:200])
    login(client, name)
    form = {"csrf": csrf_of(client, "/my/tournaments"), "name": "cup", "game": "floriferous", "players": "2",
            "rounds": "1", "entry_deadline": "2099-01-01T00:00:00Z", field: value}
    r = client.post("/my/tournaments", data=form, follow_redirects=False)
    assert r.status_code in (400, 422), (r.status_code, r.text[-300:])


def _tournaments(pool: Any) -> int:
    with pool.connection() as conn:
        (n,) = conn.execute("SELECT count(*) FROM tournaments").fetchone()
    return int(n)


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("rounds", "1000000000", "rounds: Input should be less than or equal to 100"),
    ("rounds", "100000", "rounds: Input should be less than or equal to 100"),  # 200,000 matches at the deadline
    ("rounds", "0", "rounds: Input should be greater than or equal to 1"),
    ("players", ",".join(str(1 + i % 4) for i in range(5000)), "players: List should have at most 4 items"),
    ("players", "2,2", "players: Value error, player counts must be distinct"),
    ("players", "5", "players: Input should be less than or equal to 4"),
    ("players", "0", "players: Input should be greater than or equal to 1"),
    ("candidate_bot_id", str(2**70), "candidate_bot_id: Input should be less than or equal to"),
])
def test_w8_the_tournament_form_refuses_what_the_api_refuses(client: Any, pool: Any, field: str, value: str,
                                                             reason: str) -> None:
    """An organiser's form took rounds=1000000000 (303) and 5,000 player counts while the API capped
    rounds at 100; with an entry window and two entries, rounds=100000 planned 200,000 matches at the
    deadline. The form now validates with the API's own model: 422 naming the field, nothing created."""
    name, tok, bot = _organiser(client, pool)
    login(client, name)
    form = {"csrf": csrf_of(client, "/my/tournaments"), "name": "cup", "game": "floriferous", "players": "2",
            "rounds": "1", "entry_deadline": "2099-01-01T00:00:00Z", field: value}
    before = _tournaments(pool)
    r = client.post("/my/tournaments", data=form, follow_redirects=False)
    assert r.status_code == 422 and reason in r.text, (r.status_code, r.text[-400:])
    assert _tournaments(pool) == before
    api_field = {"players": "player_counts"}.get(field, field)
    api_value: Any = [int(x) for x in value.split(",")] if field == "players" else int(value)
    body: dict[str, Any] = {"name": "cup", "game": "floriferous", "player_counts": [2], "rounds": 1,
                            "bot_ids": [bot], "entry_deadline": "2099-01-01T00:00:00Z", api_field: api_value}
    assert client.post("/api/tournaments", json=body, headers=bearer(tok)).status_code == 422
    assert _tournaments(pool) == before


def test_w8_the_bounds_themselves_are_accepted_by_the_form(client: Any, pool: Any) -> None:
    name, _, _ = _organiser(client, pool)
    login(client, name)
    form = {"csrf": csrf_of(client, "/my/tournaments"), "name": "cup", "game": "floriferous", "players": "2, 3,4",
            "rounds": "100", "entry_deadline": "2099-01-01T00:00:00Z"}
    r = client.post("/my/tournaments", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text[-400:]
    with pool.connection() as conn:
        row = conn.execute("SELECT rounds, player_counts FROM tournaments WHERE id = %s",
                           (int(r.headers["location"].rsplit("/", 1)[1]),)).fetchone()
    assert row[0] == 100 and list(row[1]) == [2, 3, 4]


def _archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("parterre-bot.toml", b'runtime = "python3.11"\ncommand = ["python3", "bot.py"]\n'),
                           ("bot.py", b"print('hi')\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_s27_a_retired_bot_gets_no_new_hosted_version_from_the_web_form(client: Any, pool: Any) -> None:
    name, tok = account(client)
    bot = new_bot(client, tok)["id"]
    assert client.post(f"/api/bots/{bot}/retire", headers=bearer(tok)).json()["retired"]
    assert client.post(f"/api/bots/{bot}/versions", content=_archive(), headers=bearer(tok)).status_code == 409
    login(client, name)
    page = f"/my/bots/{bot}/hosted"
    r = client.post(page, data={"csrf": csrf_of(client, page)}, files={"archive": ("bot.tar.gz", _archive())})
    assert r.status_code == 409 and "retired" in r.text
    with pool.connection() as conn:
        (n,) = conn.execute("SELECT count(*) FROM hosted_versions WHERE bot_id = %s", (bot,)).fetchone()
    assert n == 0
