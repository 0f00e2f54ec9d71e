"""Each game's state trait (``games/<game>/state_protocol.py``) is fully provided by the state class.

The traits replaced ``typing.Protocol`` classes (mypyc reads a trait's fields from
their slots). Inheriting a trait, the state class satisfies mypy even when it lacks a step (the
trait's stub, which raises NotImplementedError, stands in) or never sets a declared field, so
this checks what mypy checked before, on the live classes, compiled or pure:

* every step declared in the trait resolves, on the state class, to a function defined
  elsewhere (earlier in the method resolution order), never to the trait's stub;
* every field the trait declares is set on a fresh state of every variant, and again after a
  few random steps (reached through the public API).

Oracle: the trait's own declarations (its ``__dict__`` and annotations), not the engine.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest

from games.floriferous.state import FloriferousState
from games.floriferous.state_protocol import FloriferousStateProtocol
from games.flowar.state import FlowarState
from games.flowar.state_protocol import FlowarStateProtocol
from games.framework import StateHotPath
from games.lafleur.state import LaFleurState
from games.lafleur.state_protocol import LaFleurStateProtocol
from games.registry import load_game

TRAITS = [
    (FloriferousState, FloriferousStateProtocol, ["floriferous(players=1)", "floriferous(players=4)"]),
    (LaFleurState, LaFleurStateProtocol, ["lafleur(players=1)", "lafleur(players=4)"]),
    (FlowarState, FlowarStateProtocol, ["flowar(players=1)", "flowar(players=4)"]),
]
IDS = ["floriferous", "lafleur", "flowar"]


def _stubs(trait: type) -> dict[str, object]:
    """The steps the trait declares: name -> the trait's own function (or static method)."""
    return {name: value for name, value in vars(trait).items()
            if (callable(value) or isinstance(value, staticmethod)) and not name.startswith("__")}


def _unprovided(mro: tuple[type, ...], trait: type) -> list[str]:
    """The trait's steps that resolve, along ``mro``, to the trait's own stub."""
    return [name for name in _stubs(trait) if next(k for k in mro if name in vars(k)) is trait]


@pytest.mark.parametrize(("state_cls", "trait", "variants"), TRAITS, ids=IDS)
def test_every_step_of_the_trait_is_provided_before_it(state_cls: type, trait: type, variants: list[str]) -> None:
    stubs = _stubs(trait)
    assert stubs, "the trait declares no step: the check would be empty"
    assert trait in state_cls.__mro__
    missing = _unprovided(state_cls.__mro__, trait)
    assert missing == [], f"{state_cls.__name__} provides no {missing} (the trait's stub would run)"


@pytest.mark.parametrize(("state_cls", "trait", "variants"), TRAITS, ids=IDS)
def test_the_framework_hooks_are_provided_and_its_calls_come_before_games_api(
        state_cls: type, trait: type, variants: list[str]) -> None:
    """games.framework.StateHotPath comes first among the bases: its public calls (current_player,
    apply_action, ...) resolve to it, not to games.api.State, and each hook it calls is defined by the
    state class itself (a hook left to a mixin would resolve to StateHotPath's stub)."""
    for name in ("current_player", "is_terminal", "is_chance_node", "legal_actions", "sample_chance", "apply_action"):
        owner = next(k for k in state_cls.__mro__ if name in vars(k))
        assert owner is StateHotPath, f"{state_cls.__name__}.{name} comes from {owner.__name__}"
    for hook in ("_apply", "_legal_actions", "_sample_chance"):
        assert hook in vars(StateHotPath)
        assert hook in vars(state_cls), f"{state_cls.__name__} does not define {hook}"


def _fields(trait: type) -> list[str]:
    """The fields the trait's class body declares, read from its source (a compiled trait keeps no
    ``__annotations__``)."""
    source = Path(sys.modules[trait.__module__].__file__ or "").with_name(trait.__module__.rsplit(".", 1)[1] + ".py")
    tree = ast.parse(source.read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == trait.__name__).body
    return sorted(n.target.id for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))


@pytest.mark.parametrize(("state_cls", "trait", "variants"), TRAITS, ids=IDS)
def test_every_field_of_the_trait_is_set(state_cls: type, trait: type, variants: list[str]) -> None:
    fields = _fields(trait)
    assert len(fields) > 10, fields
    for variant in variants:
        state = load_game(variant).new_initial_state()
        assert isinstance(state, state_cls)
        rng = random.Random(7)
        for step in range(60):
            unset = [f for f in fields if not hasattr(state, f)]
            assert unset == [], f"{variant} after {step} steps: {unset} not set"
            if state.is_terminal():
                break
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))


def test_a_missing_step_is_caught() -> None:
    """The check itself fails when a class before the trait lacks a step: here the trait alone,
    and the state class's order with the step's real owner left out."""
    trait = FloriferousStateProtocol
    assert set(_unprovided((trait, object), trait)) == set(_stubs(trait))
    owner = next(k for k in FloriferousState.__mro__ if "_after_day" in vars(k) and k is not trait)
    without = tuple(k for k in FloriferousState.__mro__ if k is not owner)
    assert "_after_day" in _unprovided(without, trait)
