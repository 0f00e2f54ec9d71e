"""La Fleur solo mode: the opponent automaton, difficulties, exclusions, turn order, challenges.

Rulebook: La Fleur, "Solo Mode" and "Solo Difficulties & Challenges".
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.api import Outcome
from games.lafleur import actions as A
from games.lafleur.cards import CHARACTERS, EVENTS, FEATURES, INDEX, SOLO_OPPONENTS, VISITORS
from games.lafleur.script import (
    advance,
    new_match,
    play,
    put_visitors,
    set_allure,
    set_hand,
    set_market,
)
from games.lafleur.solo import most_frequent_type
from games.lafleur.state import LaFleurState
from games.registry import load_game

AUTO = 1


def _phase(s: LaFleurState) -> str:
    return str(s.observation(None)["phase"])


def _solo(level: str = "normal", **kw: Any) -> LaFleurState:
    queues = {"character": ["C03", "C01", "C08"], **kw.pop("queues", {})}
    return new_match(f"lafleur(players=1,difficulty={level})", queues=queues, **kw)


@pytest.mark.parametrize("level,start", [("easier", 0), ("normal", 0), ("harder", 1), ("hardest", 0)])
def test_setup_exclusions_and_starting_resources(level: str, start: int) -> None:
    """Solo setup: one of four opponents, 3 Coins and 3 face-down Flower cards; exclusions removed."""
    s = load_game(f"lafleur(players=1,difficulty={level})").new_initial_state()
    outs = [a.card for a, _ in s.chance_outcomes()]
    assert sorted(outs) == sorted(CHARACTERS[i].id for i in SOLO_OPPONENTS)  # drawn at random among the 4
    s = _solo(level)
    obs = s.observation(0)
    opp = obs["players"][AUTO]
    assert opp["automaton"] and opp["character"] == "C03" and opp["coins"] == 3
    assert opp["cards_in_hand"] == 3 and opp["hand"] == []  # face-down
    gain = 1 if level in ("normal", "harder") else 0  # round 1's gain from the Visitors' types
    assert sum(opp["allure"].values()) == 5 * start + gain and min(opp["allure"].values()) == start
    assert obs["players"][0]["character"] == "C01"
    in_play = set(s._deck[1]) | {x for x in s._display if x >= 0}
    assert not any(FEATURES[x].solo_excluded for x in in_play) and len(in_play) == 54
    assert not any(VISITORS[v].solo_excluded for v in s._deck[2] + s._visitors)
    assert len(s._deck[5]) == 25 and not any(EVENTS[e].solo_excluded for e in s._deck[5])
    assert len(s._visitors) == 2  # as a 2-player game
    assert obs["difficulty"] == level and obs["solo"]


def test_turn_order_player_places_all_then_opponent_then_alternate() -> None:
    """Solo Mode, TURNS: you play first in round 1, place all your Artisans; the First Player pawn rotates."""
    s = _solo("easier")
    assert s.current_player() == 0 and _phase(s) == "place"
    play(s, next(a for a in s.legal_actions() if a.location == "coin"))
    assert s.current_player() == 0 and _phase(s) == "place"  # again: all your Artisans in a row
    features_before = len(s._features[AUTO])
    advance(s, lambda st: st._round == 2 and _phase(st) == "place", queues={"event": ["E11"]})
    assert s.observation(0)["first_player"] == AUTO
    # Round 2: the opponent acted before the player's first placement.
    assert len(s._features[AUTO]) == features_before + 2


def test_opponent_turn_steps() -> None:
    """Solo Mode, steps 1-3: discard the rightmost Flower card, take the top Garden Feature,
    one Flower card per Visitor gives its Allure (a Wild: the most frequent Visitor type)."""
    s = _solo("easier")
    set_market(s, ["F21", "F22", "F23", "F24"])
    put_visitors(s, ["V13", "V07"])  # Adèle (Water), Lucien (Paths): tied, Water displayed first
    advance(s, lambda st: len(st._features[AUTO]) == 1,
            queues={"feature": ["G26"], "flower": ["F51", "F81"]})
    assert INDEX["F24"][1] in s._discards[0]  # the rightmost card
    assert [FEATURES[f].id for f in s._features[AUTO]] == ["G26"]
    assert s._prestige[AUTO] == 1  # Ha-ha, When Acquired: +1 Prestige scores for the opponent
    assert s._allure[AUTO] == [0, 0, 0, 0, 0]  # its Garden Features give it no Allure (our decision)
    advance(s, lambda st: INDEX["F81"][1] in st._discards[0], queues={"flower": ["F51", "F81"]})
    assert s._allure[AUTO] == [2, 0, 1, 0, 0]  # Common Ivy: Architecture x2; the Wild: Water
    assert s._discards[0][-2:] == [INDEX["F51"][1], INDEX["F81"][1]]  # discarded in the order drawn


def test_hardest_gains_the_first_three_visitor_types() -> None:
    """Solo Mode, step 4 / Hardest: +1 Allure of each of the first 3 Visitors' types (or 2)."""
    s = _solo("hardest")
    put_visitors(s, ["V13", "V07", "V31"])  # Water, Paths, no type
    advance(s, lambda st: len(st._features[AUTO]) == 1 and not st.is_chance_node(),
            queues={"flower": ["F11", "F12", "F13"]})  # three Path cards
    advance(s, lambda st: INDEX["F13"][1] in st._discards[0], queues={"flower": ["F11", "F12", "F13"]})
    assert s._allure[AUTO] == [0, 4, 1, 0, 0]  # 3 Paths from the cards, then Water and Paths


def test_normal_round_gain_and_extra_visitors_to_the_bottom() -> None:
    """Starting Level: +1 Allure of the most frequent Visitor type each round, drawing extra
    Visitors while none has a type; they go to the bottom of the deck."""
    s = _solo("normal", queues={"visitor": ["V31", "V34", "V13"]})  # 2 type-less, then Adèle (Water)
    assert s._allure[AUTO] == [0, 0, 1, 0, 0]
    assert s.observation(0)["visitor_deck_bottom"] == ["V13"]
    assert [VISITORS[v].id for v in s._visitors] == ["V31", "V34"]
    assert most_frequent_type([INDEX[v][1] for v in ("V07", "V13", "V14")]) == 2  # Water 2, Paths 1
    assert most_frequent_type([INDEX[v][1] for v in ("V07", "V13")]) == 1  # tie: the first displayed


def test_notre_dame_opponent_takes_prestige() -> None:
    """Solo Mode, NOTE FOR EVENTS AND VISITORS: for Notre Dame de Paris the opponent takes 1 Prestige."""
    s = _solo("easier")
    put_visitors(s, [])
    p = s._prestige[AUTO]
    advance(s, lambda st: _phase(st) == "choose", queues={"event": ["E01"]})
    assert s._prestige[AUTO] >= p + 1
    assert s.observation(0)["prompt"]["kind"] == "choice"


def test_character_prompt_and_challenge_ten() -> None:
    """Challenge 10 needs a way not to activate the Character: in solo the player is asked."""
    s = _solo("easier", queues={"character": ["C03", "C01", "C08"]}, characters=["C01"])
    set_allure(s, 0, {"flowers": 3})  # Aurore: +1 Flower card per 3 Flower Allure
    put_visitors(s, [])
    advance(s, lambda st: _phase(st) == "accept", queues={"event": ["E11"]})
    assert s.observation(0)["prompt"]["kind"] == "character"
    hand = len(s._hand[0])
    play(s, A.NO, queues={"event": ["E11"]})
    assert len(s._hand[0]) == hand and not s._character_used


def test_solo_outcome_reports_result_and_challenges() -> None:
    s = _solo("easier")
    put_visitors(s, [])
    s._prestige[0], s._prestige[AUTO] = 31, 0
    s._coins[0] = 8
    set_hand(s, 0, [f"F0{i}" for i in range(1, 8)])
    s._final = True
    s._trigger = [0]
    advance(s, lambda st: _phase(st) == "accept")
    if not s.is_terminal():
        play(s, A.NO)
    advance(s, lambda st: False)
    out = s.outcome()
    assert out.scores[0] >= 31 + 2 + 1 and out.ranks == (1,)
    solo = out.details["solo"]
    assert solo["result"] == "win" and solo["difficulty"] == "easier" and solo["opponent_character"] == "C03"
    assert [c["number"] for c in solo["challenges"]] == list(range(1, 11))
    assert solo["challenges"][0]["text"] == "Win with 20+ Prestige."
    assert {1, 2, 3, 6, 7, 8, 9, 10} <= set(solo["achievements"])
    assert 4 not in solo["achievements"] and 5 not in solo["achievements"]


def test_solo_games_finish_at_every_level() -> None:
    for level in ("easier", "normal", "harder", "hardest"):
        s = load_game(f"lafleur(players=1,difficulty={level})").new_initial_state()
        rng = random.Random(5)
        while not s.is_terminal():
            s.apply_action(s.sample_chance(rng) if s.is_chance_node() else rng.choice(s.legal_actions()))
        out = s.outcome()
        assert out.details["solo"]["result"] in ("win", "loss", "shared")
        assert len(out.scores) == 1 and out.details["breakdown"][1]["automaton"]


def _greedy_actions(level: str, seed: int) -> list[Any]:
    """Every action (chance included) of a greedy solo game: the player's decisions by
    ``bots.strategies.lafleur.greedy_choice``, chance by ``random.Random(seed)``."""
    from bots.strategies.lafleur import greedy_choice

    s = load_game(f"lafleur(players=1,difficulty={level})").new_initial_state()
    rng = random.Random(seed)
    actions = []
    while not s.is_terminal():
        if s.is_chance_node():
            a = s.sample_chance(rng)
        else:
            legal = s.legal_actions()
            a = legal[greedy_choice(s.observation(0), [x.to_json() for x in legal], 0)]
        actions.append(a)
        s.apply_action(a)
    return actions


def _greedy_solo(level: str, seed: int, revision: int = 3) -> tuple[float, int, Outcome]:
    s = load_game(f"lafleur(players=1,difficulty={level})").at_revision(revision).new_initial_state()
    for a in _greedy_actions(level, seed):
        s.apply_action(a)
    out = s.outcome()
    return out.scores[0], out.details["solo"]["opponent_score"], out


# Greedy solo games (easier) whose final Prestige is equal, lower and higher than the opponent's.
SOLO_SEEDS = {"equal": [12, 160], "lower": [0], "higher": [4]}


def _allure(out: Outcome, p: int) -> int:
    return int(out.details["breakdown"][p]["total_allure"])


@pytest.mark.parametrize(("kind", "seed"), [(k, s) for k, seeds in SOLO_SEEDS.items() for s in seeds])
def test_solo_result_follows_prestige_then_total_allure(kind: str, seed: int) -> None:
    """Rulebook: "Solo Mode", GAME END: "If your Prestige score is higher, you win!"; "Any rules
    not referenced here remain the same as in the normal 2-player game", so a tie on Prestige goes
    to "the tied player with the most total Allure on their Château board" ("End-of-Game Scoring").

    The oracle is the two final Prestige totals and total Allures read off the breakdown: more
    Prestige wins (rank 1); less loses (rank 2, second behind the opponent, never rank 1); equal
    Prestige with less total Allure loses, named as the tie-break used (decision 26, rules revision
    3). Revision 2 (replays recorded before it) counted every tie as a loss, with no tie-break.
    """
    me, opp, out = _greedy_solo("easier", seed)
    assert {"equal": me == opp, "lower": me < opp, "higher": me > opp}[kind], (me, opp)
    assert out.details["breakdown"][1]["total"] == opp
    key, other = (me, _allure(out, 0)), (opp, _allure(out, 1))
    assert key != other  # none of these ends tied on Allure too
    won = key > other
    assert out.details["solo"]["result"] == ("win" if won else "loss")
    assert out.ranks == ((1,) if won else (2,))
    assert out.tie_breaks == (("most total Allure",) if me == opp else ())
    assert (1 in out.details["solo"]["achievements"]) == (won and me >= 20)
    _, _, old = _greedy_solo("easier", seed, revision=2)
    assert old.details["solo"]["result"] == ("win" if me > opp else "loss") and old.tie_breaks == ()


@pytest.mark.parametrize(("lead", "result", "ranks"), [(1, "win", (1,)), (0, "shared", (1,)), (-1, "loss", (2,))])
def test_a_solo_tie_on_prestige_goes_to_the_most_total_allure(lead: int, result: str, ranks: tuple[int]) -> None:
    """Rulebook: "End-of-Game Scoring", THE HOST OF THE GRANDE SOIRÉE: "If there is a tie, the
    tied player with the most total Allure on their Château board wins the game. If there is still
    a tie, the win is shared", kept in solo by "Solo Mode" ("Any rules not referenced here remain
    the same as in the normal 2-player game"). Greedy solo game 160 ends 20 to 20; before its last
    decision (an End of Round Character ability, +1 Coin, after which nothing reads Allure) the
    player's Allure tracker is set to ``lead`` more than the opponent's total. The oracle is the
    final breakdown: equal Prestige, and the Allure totals decide. Rules revision 2 counted every
    tie as a loss (decision 26)."""
    actions = _greedy_actions("easier", 160)
    for revision in (3, 2):
        s = load_game("lafleur(players=1,difficulty=easier)").at_revision(revision).new_initial_state()
        for a in actions[:-1]:
            s.apply_action(a)
        assert isinstance(s, LaFleurState)
        opponent_allure = sum(s.observation(None)["players"][AUTO]["allure"].values())
        mine = s.observation(None)["players"][0]["allure"]
        mine["architecture"] += opponent_allure + lead - sum(mine.values())
        set_allure(s, 0, mine, on_features=False)
        s.apply_action(actions[-1])
        out = s.outcome()
        me, opp = out.details["breakdown"][0]["total"], out.details["breakdown"][1]["total"]
        assert me == opp == out.scores[0] and _allure(out, 0) - _allure(out, 1) == lead
        if revision == 3:
            assert (out.details["solo"]["result"], out.ranks) == (result, ranks)
            assert out.tie_breaks == (("most total Allure",) + (("shared win",) if lead == 0 else ()))
            assert (1 in out.details["solo"]["achievements"]) == (result != "loss" and me >= 20)
        else:
            assert (out.details["solo"]["result"], out.ranks, out.tie_breaks) == ("loss", (2,), ())
