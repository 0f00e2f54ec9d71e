"""House-bot names and look-alike bot names, tried as an attacker (docs/faults.md "House names and rating farming").

The site runs in-process over a real, migrated PostgreSQL database; every request is what a
participant can send. Each attacker signs up from its own address (sign-ups are limited per address).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from ladder import make_pool
from ladder.bots import register_bot, revoke_bot
from ladder.errors import BotExistsError, InvalidBotNameError
from ladder.house import ensure_house_bot, house_bot_ids, list_house_bots
from web import create_app
from web.auth import ParticipantConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def pool(ladder_db: str) -> Iterator[Any]:
    p = make_pool(ladder_db, max_size=10)
    yield p
    p.close()


@pytest.fixture
def app(pool: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    with pool.connection() as conn:
        conn.execute("TRUNCATE auth_events, api_tokens, house_bots RESTART IDENTITY")
        conn.execute("DELETE FROM bots")
        conn.execute("DELETE FROM accounts")
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open")
    return a


_n = iter(range(1, 10**6))


def participant(app: Any) -> tuple[TestClient, str]:
    """A new participant signed up from an address of its own; returns its client and API token."""
    n = next(_n)
    client = TestClient(app, client=(f"198.51.100.{n % 250 + 1}", 40000 + n))
    name = f"player{n}"
    assert client.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
    r = client.post("/api/tokens", json={"scopes": ["bot:manage", "challenge"]}, auth=(name, PASSWORD))
    assert r.status_code == 201, r.text
    return client, r.json()["token"]


def create(client: TestClient, token: str, name: str) -> Any:
    return client.post("/api/bots", json={"name": name, "games": ["floriferous"], "accepts_challenges": True},
                       headers={"Authorization": f"Bearer {token}"})


@pytest.mark.parametrize("name", ["house-expert", "House-Expert", "house_expert", "HOUSE.expert", "house expert",
                                  "house--expert.", "house+random"])
def test_a_participant_cannot_take_a_house_name(app: Any, pool: Any, name: str) -> None:
    """A participant registers ``house-expert`` (or a look-alike) before the operator enables that kind:
    refused, and ``ensure_house_bot`` then makes its own bot, owned by no account."""
    client, token = participant(app)
    r = create(client, token, name)
    assert r.status_code == 400 and "house" in r.json()["detail"], r.text
    house_id, _ = ensure_house_bot(pool, "expert", ["floriferous"])
    (expert,) = [h for h in list_house_bots(pool) if h.kind == "expert"]
    assert expert.bot_id == house_id and expert.name == "house-expert"
    with pool.connection() as conn:
        assert conn.execute("SELECT account_id, house FROM bots WHERE id = %s", (house_id,)).fetchone() == (None, True)
    # the participant's other bots are never listed as house bots
    mine = create(client, token, "expert-fan")
    assert mine.status_code == 201 and mine.json()["id"] not in house_bot_ids(pool)


def test_a_squatted_house_name_is_never_adopted(pool: Any) -> None:
    """A bot that holds a house name without the operator's flag (registered before names were
    reserved) is refused by ``ensure_house_bot`` rather than made a house bot."""
    with pool.connection() as conn:  # a row from before the reservation, as migration 0010 marks it
        squatter = conn.execute("INSERT INTO bots (name, version, token_hash, name_legacy) "
                                "VALUES ('House_Search', '1', repeat('5', 64), true) RETURNING id").fetchone()[0]
    with pytest.raises(BotExistsError, match="not a house bot"):
        ensure_house_bot(pool, "search", ["floriferous"])
    assert [h for h in list_house_bots(pool) if h.kind == "search"] == [] and squatter not in house_bot_ids(pool)
    assert revoke_bot(pool, squatter).revoked  # a legacy name does not pin its bot: the operator can retire it
    # an operator registering a bot by hand cannot take the namespace either
    with pytest.raises(InvalidBotNameError, match="house"):
        register_bot(pool, "house-greedy2")


def test_look_alike_names_are_one_name(app: Any) -> None:
    client, token = participant(app)
    assert create(client, token, "Rose_Bud").status_code == 201
    other, tok2 = participant(app)
    for look_alike in ("rose-bud", "ROSE BUD", "rose.bud.", "Rose--Bud", "rose+bud"):
        r = create(other, tok2, look_alike)
        assert r.status_code == 409, (look_alike, r.text)


def test_a_burst_of_look_alike_registrations_has_one_winner(app: Any) -> None:
    """Eight participants register eight spellings of one name at the same instant: exactly one wins."""
    spellings = ["night-owl", "Night_Owl", "NIGHT OWL", "night.owl", "night-owl.", "Night--Owl", "night+owl",
                 "nIgHt_oWl"]
    players = [participant(app) for _ in spellings]
    barrier = threading.Barrier(len(spellings))
    codes: list[int] = []

    def go(i: int) -> None:
        client, token = players[i]
        barrier.wait()
        codes.append(create(client, token, spellings[i]).status_code)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(spellings))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(codes) == [201] + [409] * (len(spellings) - 1)
