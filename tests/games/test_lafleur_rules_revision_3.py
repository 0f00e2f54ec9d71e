"""La Fleur rules revision 3: matches recorded by revision 2 still re-simulate as they were played.

``tests/fixtures/replays/lafleur-rules-revision-2.json`` and ``lafleur-solo-rules-revision-2.json``
were made at commit ``f107d2a`` (rules revision 2; ``make_lafleur_rules_revision_2.py`` beside
them): a 2-player match in which a newly drawn Artisan that replaced a tilted one stayed tilted
at its own seat's later payments that round, with its Allure type owed (revision 3 lets it pay:
docs/rules/la-fleur.md, decision 10), and a solo match that ends tied on Prestige with the player
behind on total Allure (revision 3 names the tie-break: decision 26). Each holds the replay text
as that referee wrote it (``rules_revision: 2``) and the compact row that commit's ladder stored.
The oracle is that older code's output, not this engine.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from games.api import State
from games.lafleur import actions as A
from games.registry import load_game
from games.replay import iter_states, verify_replay
from ladder.replay_store import unpack
from referee import replay as referee_replay

_DIR = Path(__file__).parents[1] / "fixtures" / "replays"
FIXTURES = {name: json.loads((_DIR / f"{name}.json").read_text(encoding="utf-8"))
            for name in ("lafleur-rules-revision-2", "lafleur-solo-rules-revision-2")}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_revision_2_row_still_expands_and_verifies_by_revision_2(name: str) -> None:
    fixture = FIXTURES[name]
    assert hashlib.sha256(fixture["text"].encode()).hexdigest() == fixture["text_sha256"]
    text = unpack(fixture["format"], base64.b64decode(fixture["compact_zstd_b64"]))
    assert text == fixture["text"]
    replay = json.loads(text)
    assert replay["game"] == "lafleur" and replay["rules_revision"] == 2
    assert verify_replay(replay).ok
    referee_replay.verify(text)  # raises on any mismatch
    *_, (i, last) = iter_states(replay)
    assert i == len(replay["steps"]) - 1 and last.is_terminal() and last.state_hash() == replay["final_hash"]


def _legal_differs(replay: dict[str, Any]) -> list[int]:
    """Steps whose decision offers other actions by revision 3 than by revision 2 (same history)."""
    game = load_game(replay["game_string"])
    old: State = game.at_revision(2).new_initial_state()
    new: State = game.at_revision(3).new_initial_state()
    out = []
    for i, step in enumerate(replay["steps"]):
        if not old.is_chance_node() and set(old.legal_actions()) != set(new.legal_actions()):
            out.append(i)
        action = game.action_from_json(step["action"])
        old.apply_action(action)
        if action not in new.legal_actions():
            break
        new.apply_action(action)
    return out


def test_the_revision_2_match_held_a_tilted_newcomer_back() -> None:
    """What revision 3 changes shows in this match: at some of its decisions revision 3 offers a
    payment with the newly drawn Artisan (untilted) that revision 2 did not."""
    replay = json.loads(FIXTURES["lafleur-rules-revision-2"]["text"])
    differs = _legal_differs(replay)
    assert differs
    game = load_game(replay["game_string"])
    new = game.at_revision(3).new_initial_state()
    old = game.at_revision(2).new_initial_state()
    for step in replay["steps"][:differs[0]]:
        new.apply_action(game.action_from_json(step["action"]))
        old.apply_action(game.action_from_json(step["action"]))
    extra = set(new.legal_actions()) - set(old.legal_actions())
    assert any(isinstance(a, (A.PayArtisan, A.BuyFeature)) for a in extra), extra


def test_the_revision_2_solo_tie_reads_by_its_own_revision() -> None:
    """By revision 2 the recorded outcome (a loss, no tie-break) is what the moves give; by
    revision 3 the same moves give the same loss (the player trails on total Allure, so the
    tie-break agrees) and name it: "most total Allure"."""
    replay = json.loads(FIXTURES["lafleur-solo-rules-revision-2"]["text"])
    breakdown = replay["outcome"]["details"]["breakdown"]
    assert breakdown[0]["total"] == breakdown[1]["total"]
    assert breakdown[0]["total_allure"] < breakdown[1]["total_allure"]
    assert replay["outcome"]["tie_breaks"] == [] and replay["result_ranks"] == [2]
    *_, (_, old) = iter_states(replay)
    assert old.outcome().to_json() == replay["outcome"]
    *_, (_, new) = iter_states({**replay, "rules_revision": 3})
    assert new.outcome().ranks == (2,) and new.outcome().tie_breaks == ("most total Allure",)


def _alike_artisans_offered(revision: int, games: int) -> tuple[int, int]:
    """Random 3-player games at ``revision``; at every payment, checks the Artisans offered against the
    seat's observation. Returns (payments with two untilted Artisans of one owed type, most Artisans of
    one type offered at once)."""
    cards = json.loads((Path(__file__).parents[2] / "games" / "lafleur" / "cards.json").read_text())["cards"]
    allure = {c["id"]: c["allure"] for c in cards if c.get("type") == "artisan"}
    alike = most = 0
    for seed in range(games):
        rng = random.Random(seed)
        state = load_game("lafleur(players=3)").at_revision(revision).new_initial_state()
        while not state.is_terminal():
            actions = state.legal_actions()
            if not state.is_chance_node():
                offered = [a.to_json() for a in actions if a.to_json().get("kind") == "pay_artisan"]
                if offered:
                    seat = state.current_player()
                    observed = state.observation(seat)
                    owed = {t for t, n in observed["purchase"]["remaining"].items() if n > 0}
                    free = [a["card"] for a in observed["players"][seat]["artisans"] if not a["tilted"]]
                    for t in owed:
                        mine = sorted(c for c in free if allure[c] == t)
                        got = sorted(o["artisan"] for o in offered if o["allure"] == t)
                        alike += len(mine) > 1
                        most = max(most, len(got))
                        # A payment with type t is possible with any of them or none (the rest of the bill
                        # does not depend on which one tilts): all are offered or none.
                        if revision >= 3:
                            assert got in ([], mine), (seed, t, mine, got)
            state.apply_action(rng.choice(actions))
    return alike, most


def test_each_of_two_alike_artisans_may_pay_from_revision_3() -> None:
    """Rulebook, "Purchasing a Garden Feature": "The player may simply declare that they are
    contributing the Artisan's Allure type". Since revision 3 a replaced Artisan's newcomer arrives
    untilted (decision 10), so which of two alike Artisans tilts matters (the one about to be replaced
    at the Artisan Guild can pay and its newcomer pay again): each untilted Artisan of an owed type is
    offered, where revisions 1 and 2 offered one per type."""
    alike, most = _alike_artisans_offered(3, 40)
    assert alike > 0 and most >= 2
    assert _alike_artisans_offered(2, 40)[1] == 1
