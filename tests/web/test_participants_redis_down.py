# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""A lost Redis while an owner creates, rotates or retires a bot: a clear 503 and nothing changed.

The referee trusts the Redis token hash (docs/architecture.md "Bot identity and tokens"), so a
token change that reached PostgreSQL but not Redis would either lose a token that was never shown
(a bot stored with no usable token) or keep a retired bot's token working. Oracle: the rows of
``bots`` read with SQL and the fields of the real Redis hash, before and after each refused call,
with Redis lost as a real client sees it (a connection refused on a port where nothing listens).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest
import redis as redis_lib
from test_participants import (  # noqa: F401 - fixtures are found by name
    account,
    app,
    bearer,
    client,
    new_bot,
    pool,
    rds,
)

from ladder.bots import PUBLISHED_SUFFIX, ensure_published, token_hash


def _dead_redis() -> Any:
    """A client of a Redis that is gone: a port on 127.0.0.1 nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return redis_lib.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5, socket_timeout=0.5)


def _bot_rows(pool: Any, account_name: str) -> list[tuple[Any, ...]]:
    with pool.connection() as conn:
        return conn.execute("SELECT b.id, b.name, b.token_hash, b.revoked_at FROM bots b JOIN accounts a "
                            "ON a.id = b.account_id WHERE a.username = %s ORDER BY b.id", (account_name,)).fetchall()


def test_token_changes_with_redis_lost_answer_503_and_change_nothing(app: Any, client: Any, pool: Any,
                                                                      rds: tuple[Any, str]) -> None:
    live, key = rds
    name, tok = account(client)
    first = new_bot(client, tok, name="keeper")
    digest = token_hash(first["token"])
    assert live.hget(key, digest) == str(first["id"]).encode()
    before = _bot_rows(pool, name)

    app.state.participants.redis = _dead_redis()
    made = client.post("/api/bots", json={"name": "never-stored"}, headers=bearer(tok))
    assert made.status_code == 503, made.text
    assert "Redis" in made.json()["detail"]
    rotated = client.post(f"/api/bots/{first['id']}/token", headers=bearer(tok))
    assert rotated.status_code == 503, rotated.text
    retired = client.post(f"/api/bots/{first['id']}/retire", headers=bearer(tok))
    assert retired.status_code == 503, retired.text

    assert _bot_rows(pool, name) == before  # no bot without a shown token, no rotation, no retirement
    assert live.hget(key, digest) == str(first["id"]).encode()  # the token still works, as the site says

    app.state.participants.redis = live  # Redis is back: the same calls go through
    again = new_bot(client, tok, name="never-stored")
    assert live.hget(key, token_hash(again["token"])) == str(again["id"]).encode()
    assert client.post(f"/api/bots/{first['id']}/retire", headers=bearer(tok)).status_code == 200
    assert live.hget(key, digest) is None
    assert _bot_rows(pool, name)[0][3] is not None


class _PausedPublisher:
    """A client of the live Redis whose full publication (``pipeline()``, called once PostgreSQL has been read)
    waits until ``other`` has ended or is seen waiting on a PostgreSQL lock: the slowest interleaving a burst of
    requests meets when Redis comes back empty, made certain."""

    def __init__(self, live: Any, pool: Any, read: threading.Event, other: threading.Event) -> None:
        self.live, self.pool, self.read, self.other = live, pool, read, other

    def __getattr__(self, name: str) -> Any:
        return getattr(self.live, name)

    def pipeline(self, *args: Any, **kwargs: Any) -> Any:
        self.read.set()
        deadline = time.monotonic() + 30
        while not self.other.wait(0.01) and time.monotonic() < deadline:
            with self.pool.connection() as conn:
                if conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                "AND wait_event_type = 'Lock'").fetchone()[0]:
                    break
        return self.live.pipeline(*args, **kwargs)


@pytest.mark.parametrize("change", ["create", "rotate", "retire"])
def test_a_full_publication_racing_a_token_change_does_not_undo_it(app: Any, client: Any, pool: Any,
                                                                   rds: tuple[Any, str], change: str) -> None:
    """Redis came back empty: one process republishes the hash from PostgreSQL (a worker's token watch, or
    the first of a burst of requests) while an owner creates, rotates or retires a bot. The token the site
    showed must work at the referee, and a retired or replaced one must not: the fields of the real hash."""
    live, key = rds
    name, tok = account(client)
    first = new_bot(client, tok)
    live.delete(key, key + PUBLISHED_SUFFIX)  # Redis restarted without its data
    read, other = threading.Event(), threading.Event()
    publisher = threading.Thread(target=ensure_published, args=(pool, _PausedPublisher(live, pool, read, other), key))
    publisher.start()
    assert read.wait(30)  # the publisher has read PostgreSQL: the first bot is live there
    answer: list[Any] = []

    def owner() -> None:
        try:
            if change == "create":
                answer.append(client.post("/api/bots", json={"name": f"second-{change}"}, headers=bearer(tok)))
            else:
                answer.append(client.post(f"/api/bots/{first['id']}/{'token' if change == 'rotate' else change}",
                                          headers=bearer(tok)))
        finally:
            other.set()

    changer = threading.Thread(target=owner)
    changer.start()
    changer.join(60)
    publisher.join(60)
    assert not changer.is_alive() and not publisher.is_alive()
    assert answer[0].status_code in (200, 201), answer[0].text
    body = answer[0].json()
    assert live.exists(key + PUBLISHED_SUFFIX)
    if change == "retire":
        assert _bot_rows(pool, name)[0][3] is not None
        assert live.hget(key, token_hash(first["token"])) is None, "the retired bot's token still works"
    else:
        assert live.hget(key, token_hash(body["token"])) == str(body["id"]).encode(), "the new token is not usable"
        if change == "rotate":
            assert live.hget(key, token_hash(first["token"])) is None, "the replaced token still works"
        else:
            assert live.hget(key, token_hash(first["token"])) == str(first["id"]).encode()
