"""Bot registration, tokens in Redis, revocation (ladder.bots). docs/faults.md F-06 (the ladder's half)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_lib

from ladder.bots import find_bot, issue_token, list_bots, publish_tokens, register_bot, revoke_bot, token_hash
from ladder.errors import BotExistsError, BotNotFoundError, BotRevokedError, InvalidBotNameError


@pytest.fixture
def rds(redis_base_url: str) -> Iterator[Any]:
    client = redis_lib.Redis.from_url(redis_base_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def key(rds: Any, redis_prefix: str) -> Iterator[str]:
    k = redis_prefix + "bot_tokens"
    yield k
    rds.delete(k)


def test_register_stores_only_the_hash_and_publishes(pool: Any, rds: Any, key: str) -> None:
    bot_id, token = register_bot(pool, "greedy-1", version="7", owner="ann", redis=rds, key=key)
    assert len(token) >= 40
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert token_hash(token) == digest
    with pool.connection() as conn:
        row = conn.execute("SELECT * FROM bots WHERE id = %s", (bot_id,)).fetchone()
    assert digest in row and token not in row
    assert rds.hgetall(key) == {digest: str(bot_id)}
    bot = find_bot(pool, "greedy-1")
    assert bot is not None and (bot.id, bot.version, bot.owner, bot.revoked) == (bot_id, "7", "ann", False)
    assert find_bot(pool, bot_id) == bot
    assert find_bot(pool, "nobody") is None
    assert find_bot(pool, 10**9) is None


def test_tokens_are_unique(pool: Any) -> None:
    tokens = {register_bot(pool, f"b{i}")[1] for i in range(5)}
    assert len(tokens) == 5


def test_duplicate_name_is_refused(pool: Any, rds: Any, key: str) -> None:
    register_bot(pool, "twin", redis=rds, key=key)
    with pytest.raises(BotExistsError, match="twin"):
        register_bot(pool, "twin", redis=rds, key=key)
    revoke_bot(pool, "twin")
    with pytest.raises(BotExistsError):  # revoked names stay taken
        register_bot(pool, "twin")
    assert len(rds.hgetall(key)) == 1
    assert len(list_bots(pool, include_revoked=True)) == 1


@pytest.mark.parametrize("name", ["", "x" * 65, "tab\there", "new\nline", " leading", "trailing ", 42])
def test_bad_names_are_refused(pool: Any, name: Any) -> None:
    with pytest.raises(InvalidBotNameError):
        register_bot(pool, name)
    assert list_bots(pool, include_revoked=True) == []


def test_names_may_be_unicode_and_64_long(pool: Any) -> None:
    register_bot(pool, "Ψ-bot fleur")
    register_bot(pool, "x" * 64)
    with pytest.raises(InvalidBotNameError):
        register_bot(pool, "ok", version="")


def test_revoke_removes_the_token(pool: Any, rds: Any, key: str) -> None:
    a, token_a = register_bot(pool, "a", redis=rds, key=key)
    b, token_b = register_bot(pool, "b", redis=rds, key=key)
    bot = revoke_bot(pool, a, redis=rds, key=key)
    assert bot.revoked and bot.id == a
    assert rds.hgetall(key) == {token_hash(token_b): str(b)}
    again = revoke_bot(pool, "a", redis=rds, key=key)  # by name, twice: keeps the first time
    assert again.revoked_at == bot.revoked_at
    assert [x.id for x in list_bots(pool)] == [b]
    with pytest.raises(BotNotFoundError):
        revoke_bot(pool, "ghost")
    with pytest.raises(BotNotFoundError):
        revoke_bot(pool, 10**9)


def test_publish_rewrites_the_hash_from_the_table(pool: Any, rds: Any, key: str) -> None:
    ids_tokens = [register_bot(pool, f"p{i}") for i in range(3)]  # not published yet
    revoke_bot(pool, ids_tokens[1][0])
    rds.hset(key, mapping={"f" * 64: "999", token_hash(ids_tokens[1][1]): str(ids_tokens[1][0])})
    assert publish_tokens(pool, rds, key) == 2
    assert rds.hgetall(key) == {token_hash(t): str(i) for i, t in (ids_tokens[0], ids_tokens[2])}
    for i, _ in ids_tokens:
        revoke_bot(pool, i)
    assert publish_tokens(pool, rds, key) == 0
    assert rds.exists(key) == 0


def test_issue_token_rotates(pool: Any, rds: Any, key: str) -> None:
    bot_id, old = register_bot(pool, "rotor", redis=rds, key=key)
    new = issue_token(pool, "rotor", redis=rds, key=key)
    assert new != old
    assert rds.hgetall(key) == {token_hash(new): str(bot_id)}
    with pool.connection() as conn:
        assert conn.execute("SELECT token_hash FROM bots").fetchone() == (token_hash(new),)
    revoke_bot(pool, bot_id, redis=rds, key=key)
    with pytest.raises(BotRevokedError):
        issue_token(pool, bot_id)
    with pytest.raises(BotNotFoundError):
        issue_token(pool, "ghost")


def test_references_from_a_command_line(pool: Any) -> None:
    a, _ = register_bot(pool, "alpha")
    b, _ = register_bot(pool, str(a))  # a bot named like alpha's id
    assert find_bot(pool, str(a)).id == b  # the name wins
    assert find_bot(pool, a).id == a  # an int is always an id
    assert find_bot(pool, str(b)).id == b  # no bot is named "2": the id
    assert find_bot(pool, "999") is None
    assert revoke_bot(pool, str(b)).name == str(a)


def test_new_tokens_never_begin_with_a_dash(monkeypatch):
    """A token ``-…`` would be read as an option by ``--token T`` (CI saw ``bot run`` exit 2)."""
    import secrets as _secrets

    from ladder import bots as ladder_bots

    drawn = iter(["-starts-with-dash", "--two", "ok-token"])
    monkeypatch.setattr(_secrets, "token_urlsafe", lambda n: next(drawn))
    assert ladder_bots.new_token() == "ok-token"
