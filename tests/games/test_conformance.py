"""Random-playout conformance over every registered game (OpenSpiel's API tests).

For each registered game and each of its variants (the game class's ``VARIANTS``
tuple of game strings, or its bare name), random playouts check the contract of
``games.api``:

* legal actions are deterministic; chance outcomes are a distribution over them;
* ``clone()`` is equal and independent; ``to_json``/``from_json`` round-trips to
  the same ``state_hash``; the same seed gives the same history;
* observations are JSON-serialisable; an illegal action changes nothing;
  a terminal state refuses actions; ranks agree with scores;
* observation invariance (docs/faults.md F-20): ``State.resample_hidden(rng)`` returns a
  twin that differs only in hidden information (face-down cards, deck contents,
  other seats' hands); every observation and the acting seat's legal actions must
  be identical, while the state hash differs for at least some twins.

A new game plugs in by listing ``VARIANTS`` on its Game class and implementing
``resample_hidden`` on its State. Only games shipped in the ``games`` package
are covered (fixture games registered by other test modules are not).
"""

from __future__ import annotations

import inspect
import json
import random
from typing import Any

import pytest

from games.api import (
    CHANCE,
    GameOverError,
    IllegalActionError,
    InvalidActionError,
    State,
    Termination,
    canonical_json,
)
from games.registry import game_class, game_names, load_game


def _variants() -> list[str]:
    """Variants of every registered game whose engine ships in the ``games`` package.

    Fixture games that other test modules register at import time are left out,
    so that the parametrisation does not depend on the order of collection.
    """
    out: list[str] = []
    for name in game_names():
        cls = game_class(name)
        if cls.__module__.startswith("games."):
            out.extend(getattr(cls, "VARIANTS", None) or (name,))
    return out


VARIANTS = _variants()
SEEDS = (0, 1)


def _step(state: State, rng: random.Random) -> Any:
    action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions())
    state.apply_action(action)
    return action


def _views(state: State) -> list[dict[str, Any]]:
    return [state.observation(seat) for seat in (None, *range(state.game.num_players))]


def _history_text(state: State) -> list[str]:
    return [f"{p}:{a.canonical()}" for p, a in state.history]


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_playouts_respect_the_api(variant: str) -> None:
    game = load_game(variant)
    n = game.num_players
    for seed in SEEDS:
        rng = random.Random(seed)
        state = game.new_initial_state()
        seen: dict[str, Any] = {}
        decisions = 0
        step = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            assert legal, "a live state must have a legal action"
            assert [a.canonical() for a in legal] == [a.canonical() for a in state.legal_actions()]
            assert len({a.canonical() for a in legal}) == len(legal), "duplicate legal actions"
            player = state.current_player()
            assert player == CHANCE or 0 <= player < n
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                assert [a for a, _ in outcomes] == legal
                assert sum(p for _, p in outcomes) == 1 and all(p > 0 for _, p in outcomes)
            else:
                assert state.chance_outcomes() == []
                decisions += 1
            for a in legal:
                assert game.action_from_json(a.to_json()) == a
                assert isinstance(a.label(), str) and a.label()
            for view in _views(state):
                assert json.loads(json.dumps(view)) == view
            if step % 9 == 0:
                h = state.state_hash()
                twin = state.clone()
                assert twin.state_hash() == h and _views(twin) == _views(state)
                assert _history_text(twin) == _history_text(state)
                _step(twin, random.Random(step))
                assert state.state_hash() == h, "clone shares mutable state with the original"
                text = json.dumps(state.to_json())
                rebuilt = game.state_from_json(text)
                assert rebuilt.state_hash() == h and _history_text(rebuilt) == _history_text(state)
                # An action that is not legal now raises and changes nothing.
                legal_text = {a.canonical() for a in legal}
                stale = [a for key, a in seen.items() if key not in legal_text]
                if stale:
                    with pytest.raises((IllegalActionError, InvalidActionError)):
                        state.apply_action(stale[step % len(stale)])
                    assert state.state_hash() == h
                    assert len(state.history) == len(rebuilt.history)
            for a in legal[:5]:
                seen.setdefault(a.canonical(), a)
            _step(state, rng)
            step += 1
        assert decisions <= game.INFO.max_game_length
        assert state.legal_actions() == [] and state.chance_outcomes() == []
        with pytest.raises(GameOverError):
            state.apply_action(next(iter(seen.values())))
        out = state.outcome()
        assert len(out.scores) == len(out.ranks) == n
        assert state.returns() == out.scores
        for i in range(n):
            # A solo seat may rank 2: second behind the game's automaton (a lost solo game).
            assert 1 <= out.ranks[i] <= (2 if n == 1 else n)
            if n > 1:
                assert out.ranks[i] == 1 + sum(1 for j in range(n) if out.ranks[j] < out.ranks[i])
            for j in range(n):
                if out.scores[i] > out.scores[j]:
                    assert out.ranks[i] < out.ranks[j]
        assert json.loads(json.dumps(out.to_json())) == out.to_json()
        # why the game ended is a member of a Termination enum (data), and its value is what replays show
        assert isinstance(out.reason, Termination) and type(out.reason) is not Termination, out.reason
        assert out.to_json()["reason"] == out.reason.value


@pytest.mark.parametrize("variant", VARIANTS)
def test_same_seed_same_history(variant: str) -> None:
    game = load_game(variant)
    runs = []
    for _ in range(2):
        rng = random.Random(1234)
        state = game.new_initial_state()
        while not state.is_terminal():
            _step(state, rng)
        runs.append(state)
    a, b = runs
    assert _history_text(a) == _history_text(b)
    assert a.state_hash() == b.state_hash()
    assert canonical_json(a.outcome().to_json()) == canonical_json(b.outcome().to_json())
    replay = game.state_from_json(a.to_json())
    assert replay.state_hash() == a.state_hash()
    assert canonical_json(replay.outcome().to_json()) == canonical_json(a.outcome().to_json())


@pytest.mark.parametrize("variant", VARIANTS)
def test_observations_ignore_hidden_information(variant: str) -> None:
    """docs/faults.md F-20: resampling what a seat may not see changes nothing that seat is shown.

    A game's ``resample_hidden(rng)`` resamples what nobody sees (face-down
    cards, deck contents) and every view must stay equal. Games with private
    hands also accept ``resample_hidden(rng, seat)``: it resamples what ``seat``
    may not see (other seats' hands too), and that seat's view, its legal
    actions, and the spectator's view (for ``seat=None``) must stay equal.
    """
    game = load_game(variant)
    probe = game.new_initial_state()
    if not hasattr(probe, "resample_hidden"):
        pytest.fail(f"{game.name}: the State must implement resample_hidden(rng) (docs/faults.md F-20)")
    per_seat = "seat" in inspect.signature(probe.resample_hidden).parameters
    seats: list[int | None] = [None, *range(game.num_players)] if per_seat else [None]
    differing = 0
    checked = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        state = game.new_initial_state()
        step = 0
        while not state.is_terminal():
            if step < 60 or step % 4 == 0:  # every step early on: setup often hides the most
                for seat in seats:
                    twin_rng = random.Random(seed * 1000 + step)
                    if per_seat:
                        # the type: ignore below: State has no resample_hidden: hasattr checked probe
                        twin = state.resample_hidden(twin_rng, seat=seat)  # type: ignore[attr-defined]
                        assert twin.observation(seat) == state.observation(seat), f"seat {seat}, step {step}"
                        if seat is not None and state.current_player() == seat:
                            assert [a.to_json() for a in twin.legal_actions()] == [
                                a.to_json() for a in state.legal_actions()
                            ]
                    else:
                        # the type: ignore below: State has no resample_hidden: hasattr checked probe
                        twin = state.resample_hidden(twin_rng)  # type: ignore[attr-defined]
                        assert _views(twin) == _views(state)
                        if not state.is_chance_node():
                            assert [a.to_json() for a in twin.legal_actions()] == [
                                a.to_json() for a in state.legal_actions()
                            ]
                    assert twin.current_player() == state.current_player()
                    differing += twin.state_hash() != state.state_hash()
                    checked += 1
            _step(state, rng)
            step += 1
    assert checked
    assert differing, "resample_hidden never changed anything: the invariance check proved nothing"
