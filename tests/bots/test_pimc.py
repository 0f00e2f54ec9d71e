"""The paired flat Monte Carlo search (bots/pimc.py) and the search bot's default method.

Oracles: hand-computed rewards; a toy game whose best move is known by its rules; the
Floriferous engine's final outcome of each legal action at a game's last decision (the rules
decide the winner there, whatever the hidden cards); the clock.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from bots.pimc import pimc, pimc_reward
from bots.search import SearchBot
from games.registry import load_game
from parterre.regress.direct import play_direct


def test_pimc_reward_by_hand() -> None:
    assert pimc_reward([10.0, 5.0], [1, 2], 0) == pytest.approx(1 + 0.05 * 5)
    assert pimc_reward([10.0, 5.0], [1, 2], 1) == pytest.approx(0 - 0.05 * 5)
    assert pimc_reward([7.0, 7.0, 1.0], [1, 1, 3], 0) == pytest.approx(0.75)  # a tie shares: (0.5 + 1) / 2
    assert pimc_reward([3.0, 9.0, 4.0], [3, 1, 2], 0, margin_weight=0.0) == 0.0


class _Outcome:
    def __init__(self, scores: list[float]) -> None:
        self.scores = scores
        self.ranks = [1 + sum(o > s for o in scores) for s in scores]


class _Race:
    """Toy game: seat 0 picks a number of points 0..4 (4 is worth most), then a coin adds 0..9 to seat 1
    (chance); seat 0 wins when its points plus 5 beat seat 1's. The best move by the rules: 4."""

    def __init__(self) -> None:
        self.mine: int | None = None
        self.theirs: int | None = None

    def clone(self) -> _Race:
        c = type(self)()
        c.mine, c.theirs = self.mine, self.theirs
        return c

    def is_terminal(self) -> bool:
        return self.theirs is not None

    def is_chance_node(self) -> bool:
        return self.mine is not None and self.theirs is None

    def sample_chance(self, rng: random.Random) -> int:
        return rng.randrange(10)

    def legal_actions(self) -> list[int]:
        return [0, 1, 2, 3, 4]

    def apply_action(self, a: int) -> None:
        if self.mine is None:
            self.mine = a
        else:
            self.theirs = a

    def outcome(self) -> _Outcome:
        assert self.mine is not None and self.theirs is not None
        return _Outcome([self.mine + 5.0, float(self.theirs)])


def _toy_determinize(game: Any, observation: Any, rng: random.Random) -> _Race:
    return _Race()


def test_toy_game_best_move_and_candidate_order() -> None:
    index, playouts, means = pimc(None, {}, _toy_determinize, random.Random(0), time.monotonic() + 5, 0,
                                  lambda s: 0, None, max_playouts=200)
    assert index == 4 and playouts == 200
    assert means == sorted(means)  # paired deals: more points never does worse on the same coin
    # restricted to candidates, the index is the best of them
    index, _, _ = pimc(None, {}, _toy_determinize, random.Random(0), time.monotonic() + 5, 0,
                       lambda s: 0, [2, 0], max_playouts=40)
    assert index == 2
    index, playouts, _ = pimc(None, {}, _toy_determinize, random.Random(0), time.monotonic() + 5, 0,
                              lambda s: 0, [3], max_playouts=40)
    assert (index, playouts) == (3, 0)  # nothing to compare


def test_sequential_halving_keeps_the_best_move() -> None:
    # 5 candidates for 2 rounds (10 playouts), the best 3 for 4 rounds (12), then the best 2 to the cap
    index, playouts, means = pimc(None, {}, _toy_determinize, random.Random(1), time.monotonic() + 5, 0,
                                  lambda s: 0, None, max_playouts=40, halving=2)
    assert index == 4 and playouts == 10 + 12 + 18


def test_a_short_clock_caps_the_candidates() -> None:
    class _Slow(_Race):
        def is_chance_node(self) -> bool:
            if self.mine is not None and self.theirs is None:
                time.sleep(0.05)  # one playout costs 50 ms: 3 rounds of 3 candidates fit in 0.5 s, not of 5
            return super().is_chance_node()

    def det(game: Any, observation: Any, rng: random.Random) -> _Race:
        return _Slow()

    index, playouts, means = pimc(None, {}, det, random.Random(0), time.monotonic() + 0.5, 0, lambda s: 0,
                                  [4, 3, 2, 1, 0], min_rounds=3)
    assert index == 4 and playouts >= 3
    assert means[0] != 0.0 and means[3:] == [0.0, 0.0]  # the last two candidates were never played


def test_deadline_passed_answers_the_first_candidate() -> None:
    class _Slow(_Race):
        def is_chance_node(self) -> bool:
            time.sleep(0.002)
            return super().is_chance_node()

    def det(game: Any, observation: Any, rng: random.Random) -> _Race:
        return _Slow()

    t = time.monotonic()
    index, playouts, _ = pimc(None, {}, det, random.Random(0), t + 0.0, 0, lambda s: 0, [1, 4, 2])
    assert (index, playouts) == (1, 0) and time.monotonic() - t < 0.5


def _last_decisions_with_one_winning_move(players: int, games: int) -> list[tuple[int, dict[str, Any], list[Any], int]]:
    """(seat, observation, legal action dicts, winning index) at Floriferous last decisions where exactly one
    legal action ends the game with the mover alone first (the engine's final outcome from the real state)."""
    from bots.search import greedy_policy

    out = []
    game = load_game("floriferous", {"players": players})
    policy = greedy_policy("floriferous")
    for g in range(games):
        rng = random.Random(g)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
                continue
            seat = state.current_player()
            legal = state.legal_actions()
            wins = []
            last = True
            for i, a in enumerate(legal):
                c = state.clone()
                c.apply_action(a)
                while c.is_chance_node():
                    c.apply_action(c.sample_chance(rng))
                if not c.is_terminal():
                    last = False
                    break
                ranks = c.outcome().ranks
                if ranks[seat] == 1 and sorted(ranks).count(1) == 1:
                    wins.append(i)
            if last and len(legal) > 1 and len(wins) == 1:
                out.append((seat, state.observation(seat), [a.to_json() for a in legal], wins[0]))
            state.apply_action(policy(state) if rng.random() < 0.7 else rng.choice(legal))
    return out


class _Req:
    def __init__(self, game: str, seat: int, obs: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        self.game, self.seat, self.observation, self.legal_actions = game, seat, obs, legal
        self.match = None
        self.deadline_ms = 0

    @property
    def num_actions(self) -> int:
        return len(self.legal_actions)


def test_finds_the_only_winning_last_move_in_floriferous() -> None:
    found = _last_decisions_with_one_winning_move(2, 40)
    assert len(found) >= 3  # the scan finds such positions (else the test proves nothing)
    for seat, obs, legal, win in found:
        bot = SearchBot(seed=0, think_ms=60_000, iterations=3 * len(legal))
        # the type: ignore below: _Req is a duck-typed DecisionRequest
        assert bot.choose(_Req("floriferous", seat, obs, legal)) == win  # type: ignore[arg-type]
        assert bot.last_iterations >= len(legal)


@pytest.mark.parametrize("game_name", ["floriferous", "lafleur", "flowar"])
def test_pimc_bot_plays_whole_matches_legally(game_name: str) -> None:
    for players in (2, 3):
        bots = [SearchBot(seed=s, think_ms=1000, iterations=4) for s in range(players)]
        ranks = play_direct(f"{game_name}(players={players})", f"p{players}", bots)
        assert sorted(ranks)[0] == 1 and len(ranks) == players
