"""Retiring a bot and rotating its token need a confirmation in the form, checked by the server.

docs/web.md ("Confirmations"): the owner's page asks for the bot's name before
retiring it (permanent) and for a ticked box before rotating its token (the old
token is refused at once, a bot connected with it is cut off). A POST without the
confirmation is answered 422 with the reason and changes nothing: the bot stays
live, its token still authenticates at the referee's token hash. The oracle is
the database row and the Redis token hash, not the page.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from test_participants import account, app, client, csrf_of, login, new_bot, pool, rds  # noqa: F401

from ladder import accounts as acc


def _retired(pool: Any, bot_id: int) -> bool:  # noqa: F811
    with pool.connection() as conn:
        return bool(conn.execute("SELECT revoked_at IS NOT NULL FROM bots WHERE id = %s", (bot_id,)).fetchone()[0])


def test_rotate_and_retire_are_refused_without_confirmation(client: TestClient, pool: Any,  # noqa: F811
                                                            rds: tuple[Any, str]) -> None:  # noqa: F811
    redis, key = rds
    _, tok = account(client, "erin")
    bot = new_bot(client, tok, "erin-bot")
    login(client, "erin")
    page = f"/my/bots/{bot['id']}"
    csrf = csrf_of(client, page)
    old = acc.api_token_hash(bot["token"])

    for data in ({"csrf": csrf}, {"csrf": csrf, "confirm": ""}, {"csrf": csrf, "confirm": "yes"}):
        r = client.post(f"{page}/token", data=data)
        assert r.status_code == 422 and "token not rotated" in r.text, data
        assert redis.hget(key, old) == str(bot["id"]).encode()
    for data in ({"csrf": csrf}, {"csrf": csrf, "confirm": ""}, {"csrf": csrf, "confirm": "erin-bo"}):
        r = client.post(f"{page}/retire", data=data)
        assert r.status_code == 422 and "bot not retired" in r.text and "erin-bot" in r.text, data
        assert not _retired(pool, bot["id"])

    r = client.post(f"{page}/token", data={"csrf": csrf, "confirm": "rotate"})
    assert r.status_code == 200 and "token rotated" in r.text
    assert redis.hget(key, old) is None
    r = client.post(f"{page}/retire", data={"csrf": csrf, "confirm": "erin-bot"}, follow_redirects=False)
    assert r.status_code == 303
    assert _retired(pool, bot["id"])
