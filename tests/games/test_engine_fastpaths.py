"""The engines' trusted fast paths (docs/architecture.md) never let an illegal action through.

``apply_action`` skips the game's legality check for the very object
``sample_chance`` drew for the current position and for the very objects of
the current legal list; everything else is checked as before. The attacks
below hand the engines what a buggy or hostile caller could: a stale sampled
outcome, an equal copy of an action that was legal one step earlier, an action
from another match's list, a chance outcome at a decision. Oracle: the
rulebook's own constraint that a dealt card leaves its deck (so dealing it
again is illegal), and the state hash and history length read before and after.
"""

from __future__ import annotations

import copy
import random

import pytest

from games.api import Action, GameOverError, IllegalActionError, State
from games.registry import load_game

GAMES = ["floriferous(players=4)", "floriferous(players=1)", "lafleur(players=4)", "flowar(players=4)"]


def _refused(state: State, action: Action) -> None:
    """``action`` is refused with the engine's error and the state is left exactly as it was."""
    before = (len(state.history), state.state_hash())
    with pytest.raises((IllegalActionError, GameOverError)):
        state.apply_action(action)
    assert (len(state.history), state.state_hash()) == before


@pytest.mark.parametrize("variant", GAMES)
def test_a_sampled_outcome_is_trusted_once_and_only_where_it_was_drawn(variant: str) -> None:
    game = load_game(variant)
    rng = random.Random(3)
    state = game.new_initial_state()
    checked = 0
    while not state.is_terminal() and checked < 40:
        if state.is_chance_node():
            drawn = state.sample_chance(rng)
            state.apply_action(drawn)
            # The same object again, now stale: re-checked. A draw without
            # replacement (a card, a tile) is illegal the second time.
            chance = state.is_chance_node()
            if (chance and drawn not in state.legal_actions()) or (not chance and not state.is_terminal()):
                _refused(state, drawn)
                checked += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert checked >= 5, f"only {checked} stale outcomes tried"


@pytest.mark.parametrize("variant", GAMES)
def test_copies_and_foreign_actions_are_checked(variant: str) -> None:
    game = load_game(variant)
    rng = random.Random(11)
    state = game.new_initial_state()
    tried = 0
    previous: list[Action] = []
    while not state.is_terminal() and tried < 30:
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        # an equal copy of an action legal one decision ago that is not legal now
        stale = [copy.copy(a) for a in previous if a not in legal]
        if stale:
            _refused(state, stale[0])
            tried += 1
        # an equal copy of a legal action is still accepted (checked, not trusted)
        choice = rng.choice(legal)
        twin = state.clone()
        twin.apply_action(copy.copy(choice))
        state.apply_action(choice)
        assert twin.state_hash() == state.state_hash()
        previous = list(legal)
    assert tried >= 3, f"only {tried} stale decisions tried"


@pytest.mark.parametrize("variant", GAMES)
def test_a_terminal_state_refuses_even_trusted_objects(variant: str) -> None:
    game = load_game(variant)
    rng = random.Random(5)
    state = game.new_initial_state()
    last = None
    while not state.is_terminal():
        last = state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        state.apply_action(last)
    assert last is not None
    _refused(state, last)
    assert state.legal_actions() == []


def test_below_draws_exactly_what_randrange_draws() -> None:
    """``games.trusted.below(rng, n)`` is ``rng.randrange(n)`` draw by draw (the chance nodes'
    sampling, so seeded games stay the same games). Oracle: ``random.Random.randrange`` itself,
    on a twin generator with the same seed; bounds from 1 to beyond 2**64, and the errors."""
    from games.trusted import below

    for seed in range(20):
        ours, theirs = random.Random(seed), random.Random(seed)
        for n in [1, 2, 3, 5, 7, 8, 9, 31, 32, 33, 100, 1000, 2**31 - 1, 2**64 + 7] * 25:
            assert below(ours, n) == theirs.randrange(n)
        assert ours.getstate() == theirs.getstate()  # the same bits consumed
    for bad in (0, -3):
        with pytest.raises(ValueError):
            below(random.Random(1), bad)

    class Skewed(random.Random):  # a subclass may redefine its draws: below() defers to it
        def randrange(self, *args: object, **kwargs: object) -> int:
            return 0

    assert {below(Skewed(5), 1000) for _ in range(10)} == {0}
