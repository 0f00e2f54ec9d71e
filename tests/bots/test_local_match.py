"""``bots.local.play_local``, the one local match loop, against simple models written here.

The oracles: a hand-written random playout over the public ``State`` API (the same draws give the
same game), and the rule of docs/architecture.md, "Verdicts": "in a game of two the faulting bot
simply loses". That the loop deals and shows each seat what the referee does is checked against a
real referee in ``tests/parterre/test_regress_direct.py``.
"""

from __future__ import annotations

import random

import pytest

from bots.local import Decision, LocalRequest, Seat, play_local, sdk_seat
from games.registry import load_game


def _hand_playout(game_string: str, seed: int) -> tuple[int, tuple[int, ...]]:
    game = load_game(game_string)
    rng = random.Random(seed)
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
    return steps, tuple(state.outcome().ranks)


@pytest.mark.parametrize("game_string", ["floriferous(players=3)", "lafleur(players=2)", "flowar(players=4)"])
def test_random_seats_play_the_hand_written_playout(game_string: str) -> None:
    game = load_game(game_string)
    for seed in range(3):
        rng = random.Random(seed)

        def seat(d: Decision, rng: random.Random = rng) -> int:
            return rng.randrange(len(d.legal))

        result = play_local(game, [seat] * game.num_players, rng)
        assert (result.steps, result.ranks) == _hand_playout(game_string, seed)
        assert result.fault_seat is None and result.fault == ""


def _first(d: Decision) -> int:
    return 0


@pytest.mark.parametrize(("answer", "verdict"), [(99, "illegal_action"), (-1, "illegal_action"),
                                                 ("timeout", "timeout"), ("crash", "crash"),
                                                 ("resigned", "resigned"), ("nonsense", "illegal_action")])
def test_a_faulting_seat_of_two_loses_at_once(answer: int | str, verdict: str) -> None:
    game = load_game("floriferous(players=2)")
    asked: list[int] = []

    def faulting(d: Decision) -> int | str:
        asked.append(d.seq)
        return answer

    for fault_seat in (0, 1):
        asked.clear()
        seats: list[Seat] = [_first, _first]
        seats[fault_seat] = faulting
        result = play_local(game, seats, random.Random("s"))
        assert result.fault_seat == fault_seat and result.fault == verdict
        assert result.ranks[fault_seat] == 2 and result.ranks[1 - fault_seat] == 1
        assert asked == [result.decisions]  # asked once; the game ended on its answer
        assert ("not in 0.." in result.detail) == isinstance(answer, int)


def test_sdk_bots_read_the_observation_and_legal_json_of_their_seat() -> None:
    game = load_game("floriferous(players=2)")
    seen: list[tuple[int, int]] = []

    class Probe:
        def choose(self, request: LocalRequest) -> int:
            seat, obs, legal = request.seat, request.observation, request.legal_actions
            assert isinstance(obs, dict) and all(isinstance(a, dict) for a in legal)
            seen.append((seat, len(legal)))
            return 0

    result = play_local(game, [sdk_seat(Probe()), sdk_seat(Probe())], random.Random("x"))
    assert len(seen) == result.decisions and {s for s, _ in seen} == {0, 1}


def test_one_seat_per_player() -> None:
    with pytest.raises(ValueError, match="seats"):
        play_local(load_game("floriferous(players=3)"), [_first, _first], random.Random(0))
