"""The owner's seat view lists, at each of its seat's moves, the legal actions it was offered and the one played.

Matches are played through the engines (``fixtures.web_helpers.play_match``: genuine replays, the debug
text handed over as the referee does) between bots two accounts made through the public API, and one
old match is recorded as it was played by La Fleur's rules revision 1 (the fixture of
tests/games/test_rules_revisions.py, written by an older commit's engine). The oracle is an independent
replay of the public replay (``GET /api/matches/{id}/replay``) with the engine at the replay's rules
revision, step by step from its recorded actions: the legal actions' labels in the engine's order, and
the recorded step's label for the one played. Both the API (``/api/matches/{id}/seat-view``) and the page
(``/my/matches/{id}``) must list exactly those, mark the played one, and hold the seat's debug text in the
same move's block; another account, the other seat's owner or a stranger, gets 404. One match is played
on a real in-process referee, where the oracle is what each bot itself was offered on the wire.
"""

from __future__ import annotations

import html
import json
import re
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from fixtures.web_helpers import play_match

from bots.reference import RandomBot
from bots.sdk import DecisionRequest
from games.api import CHANCE
from games.registry import load_game
from ladder import accounts as acc
from ladder import make_pool
from ladder.matches import claim_match, record_result
from ladder.tournaments import plan_match
from referee.replay import seed_commitment
from referee.testing import Harness
from web import create_app
from web import owner as owner_module
from web.auth import ParticipantConfig
from web.owner import SeatStep, SeatView, seat_decisions
from workers.referee_client import _outcome

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PASSWORD = "correct horse battery"
DEBUG = "my <b>plan</b> & the hand I hold"
OLD_LAFLEUR = json.loads((Path(__file__).parents[1] / "fixtures" / "replays" / "lafleur-rules-revision-1.json")
                         .read_text(encoding="utf-8"))


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


_CLIENTS = iter(range(20, 250))


class Account:
    """An account signed up through the public API, with an API token and a logged-in session."""

    def __init__(self, app: Any, name: str) -> None:
        self.client = TestClient(app, client=(f"203.0.113.{next(_CLIENTS)}", 50000))
        c = self.client
        assert c.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
        r = c.post("/api/tokens", json={"scopes": list(acc.SCOPES)}, auth=(name, PASSWORD))
        assert r.status_code == 201, r.text
        self.auth = {"Authorization": f"Bearer {r.json()['token']}"}
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text)
        assert csrf is not None
        r = c.post("/login", data={"csrf": csrf[1], "username": name, "password": PASSWORD}, follow_redirects=False)
        assert r.status_code == 303, r.text

    def bot(self, name: str, game: str) -> int:
        r = self.client.post("/api/bots", json={"name": name, "games": [game]}, headers=self.auth)
        assert r.status_code == 201, r.text
        return int(r.json()["id"])

    def api_view(self, match_id: int, bot_id: int | None = None) -> Any:
        q = f"?bot_id={bot_id}" if bot_id is not None else ""
        return self.client.get(f"/api/matches/{match_id}/seat-view{q}", headers=self.auth)

    def page(self, match_id: int, bot_id: int | None = None) -> Any:
        q = f"?bot_id={bot_id}" if bot_id is not None else ""
        return self.client.get(f"/my/matches/{match_id}{q}")


def oracle(replay: dict[str, Any], seat: int) -> dict[int, tuple[list[str], int]]:
    """For each step ``seat`` took: (labels of the engine's legal actions in the state before it, the index of
    the recorded action among them), the game rebuilt here from the replay's own game string and revision."""
    game = load_game(replay["game_string"]).at_revision(replay.get("rules_revision", 1))
    state = game.new_initial_state()
    out: dict[int, tuple[list[str], int]] = {}
    for rec in replay["steps"]:
        assert state.current_player() == rec["player"]
        if rec["player"] == seat:
            legal = state.legal_actions()
            played = [k for k, a in enumerate(legal) if a.to_json() == rec["action"]]
            assert len(played) == 1, rec
            assert legal[played[0]].label() == rec["label"]  # the referee's own record of what was played
            out[rec["i"]] = ([a.label() for a in legal], played[0])
        state.apply_action(game.action_from_json(rec["action"]))
    assert state.is_terminal()
    return out


_LI = re.compile(r'<li value="(\d+)"( class="chosen" aria-current="true")?>(.*?)</li>', re.S)


def _one(pattern: str, text: str) -> str:
    """The first group of ``pattern``'s match in ``text`` (which must match)."""
    m = re.search(pattern, text, re.S)
    assert m is not None, pattern
    return m[1]


def page_moves(text: str) -> dict[int, dict[str, Any]]:
    """Each move block of a seat-view page: its step, the listed legal actions (index -> label), the
    chosen index, the count line, and its debug text, read from the page's markup."""
    moves: dict[int, dict[str, Any]] = {}
    for block in text.split('<li class="decision')[1:]:
        block = block.split("</li>\n</ol>")[0] if "</li>\n</ol>" in block else block
        step = int(_one(r'id="step-(-?\d+)"', block))
        legal_html = _one(r'<ol class="legal" start="0">(.*?)</ol>', block)
        listed: dict[int, str] = {}
        chosen = []
        for m in _LI.finditer(legal_html):
            label = re.sub(r'<span class="badge chosen-tag">.*?</span>', "", m[3])
            listed[int(m[1])] = html.unescape(re.sub(r"<[^>]+>", "", label)).strip()
            if m[2]:
                chosen.append(int(m[1]))
        debug = re.search(r'<div class="debug-text"><span class="debug-tag">my debug text</span><pre>(.*?)</pre>',
                          block, re.S)
        count = re.search(r'<p class="legal-count">(.*?)</p>', block, re.S)
        played = re.search(r'<span class="played">(.*?)</span>', block, re.S)
        moves[step] = {"listed": listed, "chosen": chosen, "debug": html.unescape(debug[1]) if debug else None,
                       "count": html.unescape(count[1]) if count else "", "block": block,
                       "played": html.unescape(played[1]) if played else None}
    return moves


def check_view(view: dict[str, Any], page: str, expected: dict[int, tuple[list[str], int]], shown: int) -> None:
    """The API answer and the page of one seat against the oracle (``shown``: the page's cap)."""
    mine = {s["step"]: s for s in view["steps"] if s["mine"]}
    assert sorted(mine) == sorted(expected)
    for s in view["steps"]:
        if s["mine"]:
            labels, chosen = expected[s["step"]]
            assert (s["legal"], s["chosen"]) == (labels, chosen), s["step"]
        else:
            assert s["legal"] is None and s["chosen"] is None
    moves = page_moves(page)
    assert sorted(moves) == sorted(expected)
    for step, (labels, chosen) in expected.items():
        m = moves[step]
        want = dict(enumerate(labels[:shown]))
        if chosen >= shown:
            want[chosen] = labels[chosen]
        assert m["listed"] == want, step
        assert m["chosen"] == [chosen], step
        if len(labels) > shown:
            tail = f", and the one played (number {chosen})" if chosen >= shown else ""
            assert m["count"] == f"first {shown} of {len(labels)} legal actions{tail}", step
        else:
            assert m["count"] == f"{len(labels)} legal action{'s' if len(labels) != 1 else ''}", step
        assert m["played"] == labels[chosen], step  # the move's heading names it too


@pytest.mark.parametrize("game_string", ["lafleur(players=4)", "flowar(players=2)", "floriferous(players=3)"])
def test_each_move_lists_the_engines_legal_actions_and_marks_the_played_one(
        app: Any, pool: Any, game_string: str) -> None:
    game = game_string.split("(")[0]
    tag = game_string.replace("(", "-").replace("=", "").replace(")", "")
    alice, bob, carol = (Account(app, f"{n}-{tag}") for n in ("alice", "bob", "carol"))
    players = load_game(game_string).num_players
    mine = alice.bot(f"alice-{tag}", game)
    theirs = [bob.bot(f"bob-{tag}-{k}", game) for k in range(players - 1)]
    ids = [mine, *theirs]
    mid = plan_match(pool, game_string=game_string, bot_ids=ids, plan_key=f"seat-view:{tag}")
    play_match(pool, mid, {b: f"bot{b}" for b in ids}, {}, debug_text=DEBUG)

    anon = TestClient(app, client=("203.0.113.250", 50000))
    replay = anon.get(f"/api/matches/{mid}/replay").json()  # the public record: the oracle's only input
    seat = next(p["seat"] for p in replay["players"] if p["bot_id"] == mine)
    expected = oracle(replay, seat)
    assert expected and max(len(v[0]) for v in expected.values()) > 1

    r = alice.api_view(mid)
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    view = r.json()
    assert view["seat"] == seat
    t0 = time.perf_counter()
    page = alice.page(mid)
    took = time.perf_counter() - t0
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    check_view(view, page.text, expected, owner_module.LEGAL_SHOWN)
    for step, m in page_moves(page.text).items():  # the debug text of each move, in its own block
        assert m["debug"] == DEBUG, step
        assert f'data-board="/matches/{mid}/board?step={step - 1}&amp;seat={seat}"' in m["block"]
    # what seat saw, as the public board draws it: that fragment answers for the first move's state
    first = min(expected)
    board = anon.get(f"/matches/{mid}/board?step={first - 1}&seat={seat}")
    assert board.status_code == 200 and "board-frame" in board.text
    # a long match stays a light page: no board and no observation is in it (boards come when opened)
    assert len(page.text) < 400_000, len(page.text)
    assert took < 5, took  # generous on a shared machine; docs/participants.md gives the measured time

    # nobody else: the opponents' owner with the seat's bot id, and a stranger, get 404 from both doors
    for who in (bob, carol):
        assert who.api_view(mid, mine).status_code == 404
        assert who.page(mid, mine).status_code == 404
    assert carol.api_view(mid).status_code == 404 and carol.page(mid).status_code == 404
    assert anon.get(f"/api/matches/{mid}/seat-view").status_code in (401, 404)


def test_a_cut_list_says_so_and_still_shows_the_played_action(app: Any, pool: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Flowar offers up to about 40 actions; with the page's cap at 3, most moves' lists are cut."""
    dora = Account(app, "dora-cut")
    mine, other = dora.bot("dora-cut-a", "flowar"), dora.bot("dora-cut-b", "flowar")
    mid = plan_match(pool, game_string="flowar(players=2)", bot_ids=[mine, other], plan_key="seat-view:cut")
    play_match(pool, mid, {mine: "a", other: "b"}, {})
    replay = dora.client.get(f"/api/matches/{mid}/replay").json()
    monkeypatch.setattr(owner_module, "LEGAL_SHOWN", 3)
    view = dora.api_view(mid, mine).json()
    expected = oracle(replay, view["seat"])
    assert any(c >= 3 for _, c in expected.values()), "no move played an action beyond the first three"
    assert all(len(s["legal"]) == len(expected[s["step"]][0]) for s in view["steps"] if s["mine"])  # API: all
    page = dora.page(mid, mine).text
    check_view(view, page, expected, 3)
    assert "first 3 of " in page


def test_first_60_of_212() -> None:
    """The page's cap, by itself: 212 offered, the 130th played."""
    legal = [f"action {k}" for k in range(212)]
    steps = [SeatStep(step=-1, player=None, mine=False, label="", time_ms=None, fallback=False, observation={}),
             SeatStep(step=0, player=CHANCE, mine=False, label="deal", time_ms=None, fallback=False, observation={}),
             SeatStep(step=1, player=0, mine=True, label="action 130", time_ms=4, fallback=False, observation={},
                      legal=legal, chosen=130),
             SeatStep(step=2, player=1, mine=False, label="x", time_ms=3, fallback=False, observation={})]
    view = SeatView(match_id=1, game="toy", seat=0, bot_id=1, bot_name="b", version=None, verdict="normal",
                    reason="", rejections=[], steps=steps)
    (d,), after = seat_decisions(view)
    assert (d.total, d.listed, d.chosen, d.asked_at) == (212, 60, 130, 0)
    assert [o.index for o in d.offers] == [*range(60), 130] and [o.index for o in d.offers if o.chosen] == [130]
    assert [s.label for s in d.before] == ["deal"] and [s.step for s in after] == [2]


def test_an_old_match_lists_what_its_own_rules_revision_offered(app: Any, pool: Any) -> None:
    """La Fleur's revision 2 lifted the one-romancing-pawn limit, so at the fixture's invitation the newest
    engine offers a longer list than the one the seat had: the seat view must list the older one."""
    erin, frank = Account(app, "erin-rev1"), Account(app, "frank-rev1")
    a, b = erin.bot("erin-rev1-bot", "lafleur"), frank.bot("frank-rev1-bot", "lafleur")
    old = json.loads(OLD_LAFLEUR["text"])
    assert "rules_revision" not in old  # recorded before revisions existed: revision 1
    mid = plan_match(pool, game_string=old["game_string"], bot_ids=[a, b], plan_key="seat-view:rev1")
    spec = claim_match(pool, mid, "seat-view-tests")
    assert spec is not None
    names = ["erin-rev1-bot", "frank-rev1-bot"]
    replay = {**old, "match_id": mid, "attempt": spec.attempt, "seed": spec.seed,
              "seed_commitment": seed_commitment(spec.seed),
              "players": [{**p, "bot_id": bid, "name": n} for p, bid, n in zip(old["players"], [a, b], names,
                                                                                 strict=True)]}
    outcome = old["outcome"]
    seats = [{"seat": s, "bot_id": bid, "rank": outcome["ranks"][s], "score": float(outcome["scores"][s]),
              "verdict": "normal", "time_used_ms": 0, "decisions": sum(1 for x in old["steps"] if x["player"] == s)}
             for s, bid in enumerate([a, b])]
    assert record_result(pool, mid, spec.attempt, {"status": "finished", "seats": seats,
                                                   "replay_json": json.dumps(replay)})
    public = erin.client.get(f"/api/matches/{mid}/replay").json()
    # the first step where the newest engine offers otherwise than revision 1, both stepped side by side
    newest, first = load_game(public["game_string"]), load_game(public["game_string"]).at_revision(1)
    assert newest.rules_revision > 1
    now, then, differs = newest.new_initial_state(), first.new_initial_state(), []
    for rec in public["steps"]:
        if rec["player"] != CHANCE and [x.label() for x in now.legal_actions()] != \
                [x.label() for x in then.legal_actions()]:
            differs.append((rec["player"], rec["i"]))
            break
        now.apply_action(newest.action_from_json(rec["action"]))
        then.apply_action(first.action_from_json(rec["action"]))
    assert differs, "the fixture has no step where revisions offer different lists"
    for who, bot, seat in ((erin, a, 0), (frank, b, 1)):
        view = who.api_view(mid, bot).json()
        assert view["seat"] == seat
        check_view(view, who.page(mid, bot).text, oracle(public, seat), owner_module.LEGAL_SHOWN)
    seat, step = differs[0]
    view = (erin if seat == 0 else frank).api_view(mid).json()
    assert view["steps"][step + 1]["legal"] == oracle(public, seat)[step][0]  # steps[0] is the start



class RecordingBot(RandomBot):
    """A random bot that keeps, for every decision, the labels of the legal actions the referee sent it and
    the index it answered."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.offered: list[tuple[list[str], int]] = []

    def choose(self, request: DecisionRequest) -> int:
        index = super().choose(request)
        self.offered.append((list(request.labels), index))
        return index


async def test_the_listed_actions_are_the_ones_the_referee_sent_the_bot(app: Any, pool: Any) -> None:
    gina, hugo = Account(app, "gina-wire"), Account(app, "hugo-wire")
    a, b = gina.bot("gina-wire-bot", "flowar"), hugo.bot("hugo-wire-bot", "flowar")
    players = {a: RecordingBot(seed=5), b: RecordingBot(seed=6)}
    mid = plan_match(pool, game_string="flowar(players=2)", bot_ids=[a, b], plan_key="seat-view:wire")
    spec = claim_match(pool, mid, "seat-view-tests")
    assert spec is not None
    tokens = {"tok-gina": a, "tok-hugo": b}
    async with Harness(tokens) as h:
        for token, bot in tokens.items():
            h.start_bot(players[bot], token)
        result = await h.run_match(spec.match_id, spec.game_string, spec.seat_bot_ids, seed=spec.seed,
                                   attempt=spec.attempt, cap_ms=10_000)
    assert record_result(pool, mid, spec.attempt, _outcome(result).as_result())
    for who, bot in ((gina, a), (hugo, b)):
        view = who.api_view(mid).json()
        got = [(s["legal"], s["chosen"]) for s in view["steps"] if s["mine"]]
        assert got == players[bot].offered  # every decision, in order: the wire's labels and the bot's answer
        moves = page_moves(who.page(mid).text)
        assert [(list(m["listed"].values()), m["chosen"]) for _, m in sorted(moves.items())] == [
            (labels[:owner_module.LEGAL_SHOWN], [index]) for labels, index in players[bot].offered]
