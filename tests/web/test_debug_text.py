"""A bot's own debug text (docs/bots.md, "Debug text") reaches its owner's seat view and nobody else, tried
as an attacker would.

Two accounts, each with a bot, play a Floriferous match on a real in-process referee; each bot writes,
with every answer, a secret naming its account and the decision (with HTML in it). The result is
recorded as the worker records it (``workers.referee_client`` turns the referee's ``MatchResult``
into the dict ``record_result`` takes). Then: the owner of seat A sees A's texts in the seat view
(API and page), each at the step of the public replay whose action is the one the bot itself chose
(the bot's own record is the oracle), escaped in the page; B's owner, an anonymous client and every
public door (match page from every point of view, board, replay download, ``GET
/api/matches/{id}/replay``, bot pages) never show a byte of it. The live feed is tried in
tests/referee/test_referee_debug.py and the competition dataset in tests/ladder/test_competition_final.py.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_lib

from bots.reference import RandomBot
from bots.sdk import DecisionRequest
from ladder import accounts as acc
from ladder import make_pool
from ladder.matches import claim_match, record_result
from ladder.tournaments import plan_match
from referee.testing import Harness
from web import create_app
from web.auth import ParticipantConfig
from workers.referee_client import _outcome

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def pool(ladder_db: str) -> Iterator[Any]:
    p = make_pool(ladder_db, max_size=6)
    yield p
    p.close()


@pytest.fixture
def app(pool: Any, redis_base_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    rds = redis_lib.Redis.from_url(redis_base_url)
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open", redis=rds, tokens_key=redis_prefix + "bot_tokens")
    yield a
    rds.delete(redis_prefix + "bot_tokens")
    rds.close()


def _client(app: Any, last: int) -> TestClient:
    return TestClient(app, client=(f"203.0.113.{last}", 50000))


def _account(client: TestClient, name: str) -> str:
    """Sign up, make an API token (returned) and log the client's session in."""
    assert client.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
    r = client.post("/api/tokens", json={"scopes": list(acc.SCOPES)}, auth=(name, PASSWORD))
    assert r.status_code == 201, r.text
    token = str(r.json()["token"])
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert csrf is not None
    r = client.post("/login", data={"csrf": csrf[1], "username": name, "password": PASSWORD}, follow_redirects=False)
    assert r.status_code == 303, r.text
    return token


def _bot(client: TestClient, token: str, name: str) -> dict[str, Any]:
    r = client.post("/api/bots", json={"name": name, "games": ["floriferous"]},
                    headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201, r.text
    return dict(r.json())


class NotingBot(RandomBot):
    """A random bot whose every answer carries ``<who> decision <seq> <i>x</i> & more`` as its debug text;
    it keeps (text, the action it chose) of every answer."""

    def __init__(self, who: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.who = who
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def choose(self, request: DecisionRequest) -> int:
        index = super().choose(request)
        text = f"{self.who} decision {request.seq} <i>x</i> & more"
        request.debug(text)
        self.sent.append((text, request.legal_actions[index]))
        return index


async def _played(pool: Any, bots: list[tuple[dict[str, Any], Any]]) -> int:
    """Plan, claim, play on a real referee and record (as the worker does) a match of ``bots``."""
    ids = [b["id"] for b, _ in bots]
    mid = plan_match(pool, game_string="floriferous(players=2)", bot_ids=ids, plan_key=f"debug:{ids}")
    spec = claim_match(pool, mid, "debug-tests")
    assert spec is not None
    async with Harness({b["token"]: b["id"] for b, _ in bots}) as h:
        for b, player in bots:
            h.start_bot(player, b["token"])
        result = await h.run_match(spec.match_id, spec.game_string, spec.seat_bot_ids, seed=spec.seed,
                                   attempt=spec.attempt, cap_ms=10_000)
    assert record_result(pool, mid, spec.attempt, _outcome(result).as_result())
    return mid


def _seat_of(view: dict[str, Any]) -> int:
    return int(view["seat"])


async def test_debug_text_reaches_only_its_owners_seat_view_at_the_right_step(app: Any, pool: Any) -> None:
    alice, bob, anon = _client(app, 11), _client(app, 12), _client(app, 13)
    a_tok, b_tok = _account(alice, "alice-debug"), _account(bob, "bob-debug")
    a_bot, b_bot = _bot(alice, a_tok, "alice-noter"), _bot(bob, b_tok, "bob-noter")
    a_player, b_player = NotingBot("SECRET-ALICE", seed=1), NotingBot("SECRET-BOB", seed=2)
    mid = await _played(pool, [(a_bot, a_player), (b_bot, b_player)])
    public = anon.get(f"/api/matches/{mid}/replay")
    assert public.status_code == 200
    steps = public.json()["steps"]

    for client, token, player, other in ((alice, a_tok, a_player, "SECRET-BOB"),
                                         (bob, b_tok, b_player, "SECRET-ALICE")):
        view = client.get(f"/api/matches/{mid}/seat-view", headers={"Authorization": f"Bearer {token}"})
        assert view.status_code == 200 and view.headers["cache-control"] == "no-store"
        assert other not in view.text
        data = view.json()
        seat = _seat_of(data)
        noted = [(s["step"], s["debug"]) for s in data["steps"] if s["debug"] is not None]
        assert [text for _, text in noted] == [text for text, _ in player.sent]  # every decision's, in order
        assert [i for i, _ in noted] == [s["i"] for s in steps if s["player"] == seat]
        for (i, _), (_, action) in zip(noted, player.sent, strict=True):
            assert steps[i]["action"] == action  # the step this bot's own choice made
        page = client.get(f"/my/matches/{mid}")
        assert page.status_code == 200 and other not in page.text
        assert "<i>x</i>" not in page.text  # escaped
        items = page.text.split('<li class="decision')  # one block per move of the seat
        for i, text in noted:
            escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            (item,) = [x for x in items if escaped + "</pre>" in x]
            assert f'id="step-{i}"' in item and f"step {i + 1} · my move" in item  # the page counts steps from 1
        # the other seat's view by its bot id, through the API and the page: refused like a missing id
        theirs = b_bot["id"] if client is alice else a_bot["id"]
        assert client.get(f"/api/matches/{mid}/seat-view?bot_id={theirs}",
                          headers={"Authorization": f"Bearer {token}"}).status_code == 404
        assert client.get(f"/my/matches/{mid}?bot_id={theirs}").status_code == 404

    # every public door, for anyone: nothing of either text
    board_step = len(steps) - 1
    for client in (anon, alice, bob):
        for path in (f"/matches/{mid}", f"/matches/{mid}?all=1", f"/matches/{mid}?seat=0", f"/matches/{mid}?seat=1",
                     f"/matches/{mid}/board?step={board_step}&seat=0", f"/matches/{mid}/board?step=3&all=1",
                     f"/matches/{mid}/replay.json", f"/api/matches/{mid}", f"/api/matches/{mid}/replay",
                     f"/bots/{a_bot['id']}", f"/api/bots/{a_bot['id']}", f"/bots/{b_bot['id']}"):
            r = client.get(path)
            assert r.status_code == 200, (path, r.status_code)
            assert "SECRET" not in r.text, path
    # an anonymous client gets no seat view at all
    for path in (f"/api/matches/{mid}/seat-view", f"/api/matches/{mid}/seat-view?bot_id={a_bot['id']}",
                 f"/my/matches/{mid}", f"/my/matches/{mid}?bot_id={a_bot['id']}"):
        r = anon.get(path, follow_redirects=False)
        assert r.status_code in (303, 401, 404), (path, r.status_code)
        assert "SECRET" not in r.text


async def test_a_bot_without_debug_text_has_a_seat_view_as_before(app: Any, pool: Any) -> None:
    carol = _client(app, 14)
    tok = _account(carol, "carol-debug")
    mine, theirs = _bot(carol, tok, "carol-quiet"), _bot(carol, tok, "carol-noter")
    mid = await _played(pool, [(mine, RandomBot(seed=3)), (theirs, NotingBot("SECRET-CAROL", seed=4))])
    auth = {"Authorization": f"Bearer {tok}"}
    quiet = carol.get(f"/api/matches/{mid}/seat-view?bot_id={mine['id']}", headers=auth).json()
    assert all(s["debug"] is None for s in quiet["steps"]) and any(s["mine"] for s in quiet["steps"])
    assert "SECRET" not in carol.get(f"/my/matches/{mid}?bot_id={mine['id']}").text
    with pool.connection() as conn:  # no row for the quiet seat; one for the other
        rows = conn.execute("SELECT seat FROM seat_debug WHERE match_id = %s", (mid,)).fetchall()
    noter_seat = carol.get(f"/api/matches/{mid}/seat-view?bot_id={theirs['id']}", headers=auth).json()["seat"]
    assert rows == [(noter_seat,)]
