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
from pathlib import Path
from typing import Any

import pytest

from games.api import State
from games.lafleur import actions as A
from games.registry import load_game
from games.replay import iter_states, verify_replay
from ladder.replay_store import unpack
from referee import replay as referee_replay

_DIR = Path(__file__).parent / "fixtures" / "replays"
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
