"""The search bot (bots/search.py): legal answers from the observation alone, within its time.

Oracles: the rules engine's legal actions (the direct backend rejects any other), the clock,
and the house and spec registries.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from bots.cli import BOT_KINDS
from bots.search import SearchBot, determinizer_for, reward_of
from games.registry import load_game
from parterre.house import HOUSE_KINDS, house_games
from parterre.regress.direct import play_direct
from parterre.regress.spec import DIRECT_KINDS, parse_spec


class _Req:
    """A request as the direct backend builds it (no clock), optionally with one."""

    def __init__(self, game: str, seat: int, obs: dict[str, Any], legal: list[dict[str, Any]],
                 deadline_ms: int = 0) -> None:
        self.game, self.seat, self.observation, self.legal_actions = game, seat, obs, legal
        self.match = None
        self.deadline_ms = deadline_ms
        self._t = time.monotonic()

    @property
    def num_actions(self) -> int:
        return len(self.legal_actions)

    def remaining_ms(self) -> float:
        return self.deadline_ms - (time.monotonic() - self._t) * 1000


def test_kinds_and_specs() -> None:
    assert BOT_KINDS["search"] is SearchBot and "search" in DIRECT_KINDS
    spec = parse_spec("builtin:search:think_ms=50,iterations=20")
    bot = spec.make(seed="x")
    assert isinstance(bot, SearchBot) and bot.think_ms == 50 and bot.iterations == 20
    assert "search" in HOUSE_KINDS
    assert sorted(house_games("search")) == ["floriferous", "flowar", "lafleur"]  # every game has a determinizer
    assert all(determinizer_for(g) is not None for g in ("floriferous", "lafleur", "flowar"))
    assert determinizer_for("no_such_game") is None


def test_plays_whole_matches_legally_in_every_seat_count() -> None:
    for players in (2, 3, 4):
        bots = [SearchBot(seed=s, think_ms=1000, iterations=15) for s in range(players)]
        ranks = play_direct(f"floriferous(players={players})", f"t{players}", bots)
        assert sorted(ranks)[0] == 1 and len(ranks) == players
        assert all(b.last_iterations <= 15 for b in bots)


def test_one_bot_plays_matches_of_different_seat_counts() -> None:
    bot = SearchBot(seed=0, think_ms=1000, iterations=5)
    for players in (2, 3, 2):
        others = [SearchBot(seed=s, think_ms=1000, iterations=5) for s in range(1, players)]
        assert len(play_direct(f"floriferous(players={players})", f"mix{players}", [bot, *others])) == players


def test_answers_within_the_clock() -> None:
    game = load_game("floriferous", {"players": 4})
    state = game.new_initial_state()
    rng = random.Random(3)
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    seat = state.current_player()
    bot = SearchBot(seed=1, think_ms=10_000)
    req = _Req("floriferous", seat, state.observation(seat), [a.to_json() for a in state.legal_actions()],
               deadline_ms=200)
    t = time.monotonic()
    index = bot.choose(req)  # type: ignore[arg-type]  # duck-typed request
    elapsed = (time.monotonic() - t) * 1000
    assert 0 <= index < req.num_actions
    assert elapsed < 200 * 0.25 + 60  # fraction 0.25 of the remaining time; the loop stops at its deadline
    from bots.reference import GreedyBot

    # no time for one round of playouts: the greedy answer (the round is dropped at the deadline)
    # the type: ignore below: _Req is a duck-typed DecisionRequest
    assert bot.last_iterations >= 1 or index == GreedyBot(seed=1).choose(req)  # type: ignore[arg-type]


def test_reward_of_ranks_and_margins() -> None:
    r = reward_of([10.0, 5.0], [1, 2])
    assert r[0] > 0.75 > 0.25 > r[1]
    tie = reward_of([7.0, 7.0, 1.0], [1, 1, 3])
    assert tie[0] == tie[1] and tie[2] < tie[0]


def test_unsupported_position_plays_greedy() -> None:
    from bots.reference import GreedyBot

    game = load_game("flowar", {"players": 2})
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node():
        state.apply_action(state.sample_chance(rng))
    seat = state.current_player()
    obs, legal = state.observation(seat), [a.to_json() for a in state.legal_actions()]
    # the type: ignore below: _Req is a duck-typed DecisionRequest
    assert SearchBot(seed=0).choose(_Req("flowar", seat, obs, legal)) == GreedyBot(seed=0).choose(  # type: ignore[arg-type]
        _Req("flowar", seat, obs, legal))  # type: ignore[arg-type]  # _Req is a duck-typed DecisionRequest


def _first_supported(game_name: str, players: int, seed: int) -> tuple[Any, int, dict[str, Any], list[Any]]:
    """The first decision of a random game that the game's determinizer rebuilds."""
    game = load_game(game_name, {"players": players})
    module = determinizer_for(game_name)
    assert module is not None
    supported = module.supported
    state = game.new_initial_state()
    rng = random.Random(seed)
    while True:
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        seat = state.current_player()
        obs = state.observation(seat)
        if supported(obs) and len(state.legal_actions()) > 1:
            return state, seat, obs, [a.to_json() for a in state.legal_actions()]
        state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("game_name", ["lafleur", "flowar"])
def test_searches_la_fleur_and_flowar_and_plays_legally(game_name: str) -> None:
    for players in (2, 3, 4):
        bots = [SearchBot(seed=s, think_ms=1000, iterations=3) for s in range(players)]
        ranks = play_direct(f"{game_name}(players={players})", f"s{players}", bots)
        assert sorted(ranks)[0] == 1 and len(ranks) == players
    _, seat, obs, legal = _first_supported(game_name, 2, 1)
    bot = SearchBot(seed=0, think_ms=60_000, iterations=4, method="ismcts")
    index = bot.choose(_Req(game_name, seat, obs, legal))  # type: ignore[arg-type]  # duck-typed request
    assert 0 <= index < len(legal)
    assert bot.last_iterations == 4  # it searched (greedy would leave the counter at 0)
    bot = SearchBot(seed=0, think_ms=60_000, iterations=12, candidates=3)  # the default method: paired rounds
    index = bot.choose(_Req(game_name, seat, obs, legal))  # type: ignore[arg-type]  # duck-typed request
    assert 0 <= index < len(legal)
    assert bot.last_iterations == 12  # 4 rounds of the 3 candidates


@pytest.mark.parametrize("game_name", ["lafleur", "flowar"])
def test_answers_within_a_200_ms_clock(game_name: str) -> None:
    _, seat, obs, legal = _first_supported(game_name, 4, 2)
    bot = SearchBot(seed=1, think_ms=10_000)
    req = _Req(game_name, seat, obs, legal, deadline_ms=200)
    t = time.monotonic()
    index = bot.choose(req)  # type: ignore[arg-type]  # duck-typed request
    elapsed = (time.monotonic() - t) * 1000
    assert 0 <= index < len(legal)
    from bots.reference import GreedyBot

    # the type: ignore below: _Req is a duck-typed DecisionRequest
    assert bot.last_iterations >= 1 or index == GreedyBot(seed=1).choose(req)  # type: ignore[arg-type]
    # fraction 0.25 of the remaining time less the 50 ms margin: no time left but for one iteration,
    # dropped at the deadline (the greedy answer) when it is a greedy playout
    assert elapsed < 200 * 0.25 + 60


@pytest.mark.parametrize("game_name", ["lafleur", "flowar"])
def test_an_observation_no_state_fits_plays_greedy(game_name: str) -> None:
    from bots.reference import GreedyBot

    _, seat, obs, legal = _first_supported(game_name, 2, 4)
    hostile = dict(obs, flower_deck=10_000)  # no state has that many Flower cards in its deck
    bot = SearchBot(seed=0, think_ms=50)
    # the type: ignore below: _Req is a duck-typed DecisionRequest
    assert bot.choose(_Req(game_name, seat, hostile, legal)) == GreedyBot(seed=0).choose(  # type: ignore[arg-type]
        _Req(game_name, seat, hostile, legal))  # type: ignore[arg-type]  # _Req is a duck-typed DecisionRequest
    assert bot.last_iterations == 0
