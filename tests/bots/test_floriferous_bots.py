"""The greedy Floriferous strategy (bots/strategies/floriferous.py) against a uniform random bot."""

from __future__ import annotations

import random

from bots.strategies import STRATEGIES
from bots.strategies.floriferous import Evaluator, greedy_choice
from games.api import Outcome
from games.floriferous.script import deal_garden, new_match
from games.registry import load_game


def play(game_string: str, seed: int, greedy_seats: set[int]) -> Outcome:
    game = load_game(game_string)
    state = game.new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        seat = state.current_player()
        legal = state.legal_actions()
        if seat in greedy_seats:
            index = greedy_choice(state.observation(seat), [a.to_json() for a in legal], seat)
        else:
            index = rng.randrange(len(legal))
        state.apply_action(legal[index])
    return state.outcome()


def test_registered() -> None:
    assert STRATEGIES[("greedy", "floriferous")] is greedy_choice


def test_greedy_beats_random_heads_up() -> None:
    wins = 0
    for seed in range(100):
        seat = seed % 2
        wins += play("floriferous(players=2)", seed, {seat}).ranks[seat] == 1
    assert wins > 70, f"greedy won only {wins} of 100"


def test_two_greedy_outscore_two_random_in_four_player_games() -> None:
    greedy, rand = [], []
    for seed in range(20):
        seats = {0, 2} if seed % 2 == 0 else {1, 3}
        out = play("floriferous(players=4)", seed, seats)
        for s in range(4):
            (greedy if s in seats else rand).append(out.scores[s])
    assert sum(greedy) / len(greedy) > sum(rand) / len(rand) + 5


def test_greedy_is_deterministic_and_uses_only_the_observation() -> None:
    state = new_match("floriferous(players=2)", bounties=("B6", "B5", "B7"), start_seat=0)
    deal_garden(state, {(1, 1): "F01", (3, 1): "F28", (5, 1): "D03"})
    obs = state.observation(0)
    legal = [a.to_json() for a in state.legal_actions()]
    # Pink Mum (Bee) +1 stone: Mum/Pink/Bee count nothing yet, but the Stone wins the tea tie-break
    # and a half point; the Mum Desire scores 0 with no Mum. The greedy takes the Stone card.
    assert greedy_choice(obs, legal, 0) == 1
    assert greedy_choice(obs, legal, 0) == greedy_choice(dict(obs), list(legal), 0)


def test_face_down_cards_are_valued_by_expectation() -> None:
    state = new_match("floriferous(players=2)", start_seat=0)
    deal_garden(state)
    ev = Evaluator(state.observation(0), 0)
    pool = ev.unseen(desire=False)
    assert len(pool) == 60 - 8  # 10 Garden spaces, 2 of them face-down
    expected = sum(ev.value([x], 0, 1) for x in pool) / len(pool) - ev.base
    assert abs(ev.gain_of_card("", 1, 0) - expected) < 1e-9


def test_solo_greedy_keeps_the_tea_and_scores() -> None:
    scores = [play("floriferous(players=1)", seed, {0}).scores[0] for seed in range(10)]
    assert sum(scores) / len(scores) > 20


def test_greedy_accepts_typed_messages_without_default_fields() -> None:
    """Bots may decode the typed protobuf messages (MessageToDict omits zero values)."""
    from google.protobuf.json_format import MessageToDict, ParseDict

    from proto.parterre.v1.floriferous_pb2 import FloriferousAction, FloriferousObservation

    def strip(data: dict, cls: type) -> dict:
        return MessageToDict(ParseDict(data, cls()), preserving_proto_field_name=True)

    for text in ("floriferous(players=2)", "floriferous(players=1)",
                 "floriferous(players=3,competitive_bounties=true)"):
        game = load_game(text)
        rng = random.Random(4)
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
                continue
            seat = state.current_player()
            obs = state.observation(seat)
            legal = [a.to_json() for a in state.legal_actions()]
            index = greedy_choice(obs, legal, seat)
            if decisions % 3 == 0:
                typed = greedy_choice(strip(obs, FloriferousObservation), [strip(a, FloriferousAction) for a in legal],
                                      seat)
                assert typed == index
            decisions += 1
            state.apply_action(state.legal_actions()[index])
