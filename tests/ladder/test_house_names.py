"""House-bot names and look-alike bot names, tried as an attacker (docs/faults.md "House names and rating farming").

The site runs in-process over a real, migrated PostgreSQL database; every request is what a
participant can send. Each attacker signs up from its own address (sign-ups are limited per address).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any

import psycopg
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


HOUSE_LOOK_ALIKES = ["housegreedy", "house_greedy", "h0use-greedy", "HOUSE-greedy", "HOUSEGREEDY", "Hous3_Greedy",
                     "h0use greedy", "hou-se-greedy", "housefly"]
"""Names that read as starting with ``house`` once case, spaces, punctuation and look-alike characters are put
aside (docs/participants.md, "Bot names"); ``housefly`` too: the whole prefix is the house bots'."""


@pytest.mark.parametrize("name", HOUSE_LOOK_ALIKES)
def test_a_look_alike_of_a_house_name_is_refused_with_the_rule(app: Any, pool: Any, name: str) -> None:
    """Before: ``housegreedy``, ``h0use-greedy``, ``Hous3_Greedy`` and ``housefly`` were 201 (their ``bot_name_key``
    does not start with ``house-``). The house bot of that kind is made afterwards all the same."""
    client, token = participant(app)
    r = create(client, token, name)
    assert r.status_code == 400, (name, r.text)
    detail = r.json()["detail"]
    assert "'house-'" in detail and "house bots'" in detail and "0 as o" in detail, detail
    house_id, _ = ensure_house_bot(pool, "greedy", ["floriferous"])
    assert house_id in house_bot_ids(pool)


def test_a_cyrillic_or_greek_house_name_is_refused(app: Any, pool: Any) -> None:
    """``hоuse-greedy`` with a Cyrillic ``о``: participants' names are ASCII (the API's pattern: 422); an operator
    may register any script, and there the skeleton reads the Cyrillic and Greek look-alikes as Latin letters."""
    client, token = participant(app)
    r = create(client, token, "h\u043euse-greedy")
    assert r.status_code == 422 and "pattern" in r.text, r.text
    for name in ("h\u043euse-greedy", "\u041dOUSE-GREEDY", "\u0397\u039fUSE-search", "h\u03bfuse random"):
        with pytest.raises(InvalidBotNameError, match="house bots'"):
            register_bot(pool, name)


def test_look_alikes_of_another_accounts_bot_are_refused_naming_it(app: Any, pool: Any) -> None:
    """Before: every one of these was 201 (their ``bot_name_key`` differ from ``moonlit``)."""
    client, token = participant(app)
    assert create(client, token, "moonlit").status_code == 201
    other, tok2 = participant(app)
    for look_alike in ("rnoonlit", "m00nlit", "MOONL1T", "moon_lit", "rnoonIit", "m o o n l i t"):
        r = create(other, tok2, look_alike)
        assert r.status_code == 409, (look_alike, r.text)
        assert "reads as 'moonlit'" in r.json()["detail"] and "rn as m" in r.json()["detail"], r.text
    # the operator's registration in any script is held to the same rule
    for look_alike in ("m\u043e\u043enlit", "\u039c\u039f\u039fNLIT", "Moonl|t"):
        with pytest.raises(BotExistsError, match="reads as 'moonlit'"):
            register_bot(pool, look_alike)


def test_an_accounts_own_look_alike_is_refused_too(app: Any) -> None:
    """Two bots of one owner whose names read alike could not be told apart by anyone else either."""
    client, token = participant(app)
    assert create(client, token, "Tide-Pool").status_code == 201
    r = create(client, token, "tidep00l")
    assert r.status_code == 409 and "reads as 'Tide-Pool'" in r.json()["detail"], r.text


def test_a_burst_of_look_alikes_under_the_skeleton_has_one_winner(app: Any) -> None:
    """Eight participants, eight spellings that differ under ``bot_name_key`` but read alike, at one instant:
    exactly one wins (before: each of the eight keys was new, so all eight were 201)."""
    spellings = ["night-owl", "nightowl", "n1ght-owl", "NIGHT0WL", "night_0wl", "nlght owl", "N1GHTOWL", "nightovvl"]
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


def test_distinct_names_still_pass_and_the_house_bots_register(app: Any, pool: Any) -> None:
    """Names that do not read alike are still distinct, the house bots of every kind register (and register
    again: a new token), and names merely containing ``house`` later on are fine."""
    client, token = participant(app)
    for name in ("moonlit", "moonlight", "sunrise", "sunrise-2", "sunrise-7", "comet", "the-house", "my_housebot",
                 "housing", "Rose_Bud", "rose-bud-2", "bot-4", "bot-6", "greedy"):
        assert create(client, token, name).status_code == 201, name
    kinds = ("random", "greedy", "search", "expert")
    first = {kind: ensure_house_bot(pool, kind, ["floriferous"])[0] for kind in kinds}
    again = {kind: ensure_house_bot(pool, kind, ["floriferous"])[0] for kind in kinds}
    assert first == again and set(first.values()) <= house_bot_ids(pool)
    assert sorted(h.name for h in list_house_bots(pool)) == [f"house-{k}" for k in sorted(kinds)]


def test_existing_look_alikes_are_kept_as_legacy_names(database_url: str) -> None:
    """Rows registered before the skeleton rule that clash under it keep working (migration 0012): the first of a
    group keeps the name in the index; later ones, and non-house names reading as ``house…``, become
    ``name_legacy``; a new look-alike of either is refused, and the house bot of the squatted kind registers."""
    from ladder.db import migrate

    migrate(database_url, "0011")
    with psycopg.connect(database_url, autocommit=True) as conn:
        for name in ("Rose_Bud", "r0se-bud", "ROSEBUD.", "housegreedy", "h0use-random", "comet"):
            conn.execute("INSERT INTO bots (name, version, token_hash) VALUES (%s, '1', md5(%s) || md5(%s))",
                         (name, name, name))
    migrate(database_url)
    with psycopg.connect(database_url) as conn:
        legacy = dict(conn.execute("SELECT name, name_legacy FROM bots").fetchall())
    assert legacy == {"Rose_Bud": False, "r0se-bud": True, "ROSEBUD.": True, "housegreedy": True,
                      "h0use-random": True, "comet": False}
    p = make_pool(database_url, max_size=2)
    try:
        with pytest.raises(BotExistsError, match="reads as 'Rose_Bud'"):
            register_bot(p, "ro5ebud")
        with pytest.raises(InvalidBotNameError, match="house bots'"):
            register_bot(p, "house_greedy")
        house_id, _ = ensure_house_bot(p, "greedy", ["floriferous"])
        assert house_id in house_bot_ids(p)
    finally:
        p.close()
