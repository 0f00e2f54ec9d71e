"""Resampling leak test for the three games (OpenSpiel-style), every player count.

For seeded random games, every observer (each seat and the spectator) and a few
horizons per observer (the end, and steps just before a face-down card becomes
known to the observer), the history is replayed with every card the observer has
not legitimately seen swapped for another unseen card (and so a different deck
order); the observation and every DecisionRequest the referee would send the
observer must be byte-identical. "Legitimately seen" comes from the rulebook
models in ``tests/leakmodel/`` (which zones are face-up, owner-only, face-down;
reshuffles make cards anonymous again), never from the engines' bookkeeping.
The method, and how a relabelled action that became illegal is handled, are in
``tests/leakmodel/__init__.py``.

Play is steered (weights on the actions that cycle a deck) so that reshuffles
and face-down draws after a reshuffle happen often; each test asserts that the
rare paths occurred and prints the counts (``-s`` not needed). Default: about a
minute of CPU for all three; ``PARTERRE_SLOW=1``: ten times as many games.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from leakmodel import Counts, Driver, GameModel, Leak, check_game, uniform, weighted
from leakmodel.floriferous import FloriferousModel
from leakmodel.flowar import FlowarModel
from leakmodel.lafleur import LaFleurModel

from bots.strategies import floriferous as floriferous_bot
from bots.strategies import flowar as flowar_bot
from bots.strategies import lafleur as lafleur_bot
from games.api import Action, State

SLOW = os.environ.get("PARTERRE_SLOW") == "1"
SCALE = 10 if SLOW else 1
HORIZONS = 3  # per observer: the end + 2 just before a face-down card is revealed
pytestmark = pytest.mark.timeout(7200 if SLOW else 600)  # CPU: ~20 s per test by default, ~10x slow


def lafleur_policy(a: Action) -> float:
    """Cycle the Flower deck: face-down purchases, Flower payments, the Flower Market."""
    j: dict[str, Any] = a.to_json()
    k = j["kind"]
    if k in ("buy_flower", "take_flower") and j["space"] == 0:
        return 30.0
    if k in ("pay_flower", "pay_pair", "discard_flower"):
        return 10.0
    if k == "buy_feature":
        return 5.0
    if k == "place" and j["location"] == "flower_market":
        return 10.0
    return 1.0


def flowar_policy(a: Action) -> float:
    """Cycle both decks: take grid lines and cards, deliver, sell, discard Contracts."""
    k = a.to_json()["kind"]
    return 5.0 if k in ("take_line", "take_card", "deliver", "sell", "discard_contract", "keep_contract") else 1.0


def greedy(choice: Any) -> Driver:
    """Every seat plays the game's greedy bot (as bench/balance_*.py do: the issue's seeds)."""
    def drive(state: State, legal: list[Action], rng: random.Random) -> Action:
        if len(legal) == 1:
            return legal[0]
        seat = state.current_player()
        return legal[choice(state.observation(seat), [a.to_json() for a in legal], seat)]
    drive.__name__ = "greedy"
    return drive


lafleur_greedy = greedy(lafleur_bot.greedy_choice)


CYCLE_FLOWERS = weighted(lafleur_policy)
CYCLE_DECKS = weighted(flowar_policy)
# (game string, driver, seeds of the default run; PARTERRE_SLOW=1 runs SCALE times as many)
Config = tuple[str, Driver, list[int]]
FLORIFEROUS: list[Config] = [
    ("floriferous(players=1)", uniform, list(range(8))),
    ("floriferous(players=1,extended=true)", uniform, list(range(6))),
    ("floriferous(players=2)", uniform, list(range(6))),
    ("floriferous(players=2,extended=true)", uniform, list(range(4))),
    ("floriferous(players=3)", uniform, list(range(4))),
    ("floriferous(players=4)", uniform, list(range(3))),
    ("floriferous(players=1)", greedy(floriferous_bot.greedy_choice), list(range(2))),
    ("floriferous(players=3)", greedy(floriferous_bot.greedy_choice), list(range(1)))]
LAFLEUR: list[Config] = [
    # Greedy 3-player seed 512 and greedy solo games (1, 4) show a reshuffled
    # Flower card drawn face-down in another seat's hand.
    ("lafleur(players=3)", lafleur_greedy, [512]), ("lafleur(players=1)", lafleur_greedy, [1, 4]),
    ("lafleur(players=1)", CYCLE_FLOWERS, list(range(8))), ("lafleur(players=2)", CYCLE_FLOWERS, list(range(3))),
    ("lafleur(players=3)", CYCLE_FLOWERS, list(range(2))), ("lafleur(players=4)", CYCLE_FLOWERS, list(range(2)))]
FLOWAR: list[Config] = [
    ("flowar(players=1)", CYCLE_DECKS, list(range(6))), ("flowar(players=2)", CYCLE_DECKS, list(range(4))),
    ("flowar(players=3)", CYCLE_DECKS, list(range(3))), ("flowar(players=4)", CYCLE_DECKS, list(range(2))),
    ("flowar(players=1)", greedy(flowar_bot.greedy_choice), list(range(2))),
    ("flowar(players=2)", greedy(flowar_bot.greedy_choice), list(range(1)))]


def _seeds(seeds: list[int]) -> list[int]:
    """The default seeds, then (slow run) further ones after the largest."""
    return seeds + list(range(max(seeds) + 1, max(seeds) + 1 + len(seeds) * (SCALE - 1)))


def _run(model: type[GameModel], configs: list[Config], capsys: pytest.CaptureFixture[str],
         name: str) -> tuple[Counts, list[Leak]]:
    total = Counts()
    leaks: list[Leak] = []
    lines = []
    for game_string, driver, seeds in configs:
        counts = Counts()
        for seed in _seeds(seeds):
            leaks += check_game(model, game_string, seed, counts, HORIZONS, driver)
        label = {uniform: "uniform", CYCLE_FLOWERS: "weighted", CYCLE_DECKS: "weighted"}.get(driver, "greedy")
        lines.append(f"  {game_string} [{label}]: " + counts.line("")[2:])
        for f in ("games", "steps", "decisions_checked", "observations_checked", "replays", "relabelled_draws",
                  "reshuffles", "hidden_redraws", "automaton_turns", "stopped_public", "stopped_illegal"):
            setattr(total, f, getattr(total, f) + getattr(counts, f))
        total.extra.update(counts.extra)
    with capsys.disabled():
        print(f"\nresampling leak test, {name}:\n" + "\n".join(lines) + "\n  " + total.line("total"))
    return total, leaks


def _no_leaks(leaks: list[Leak]) -> None:
    assert not leaks, f"{len(leaks)} leak(s); first: " + "\n".join(str(x) for x in leaks[:5])


def test_floriferous_resampling(capsys: pytest.CaptureFixture[str]) -> None:
    counts, leaks = _run(FloriferousModel, FLORIFEROUS, capsys, "Floriferous")
    _no_leaks(leaks)
    assert counts.relabelled_draws >= 100  # face-down garden cards and crow-placed cards
    assert counts.automaton_turns >= 50  # crow turns (solo)
    assert counts.extra["reshuffle:crow_deck"] >= 1  # "If the Crow Actions Deck is exhausted, shuffle"
    assert counts.decisions_checked >= 1000


def test_lafleur_resampling(capsys: pytest.CaptureFixture[str]) -> None:
    counts, leaks = _run(LaFleurModel, LAFLEUR, capsys, "La Fleur")
    _no_leaks(leaks)
    assert counts.extra["reshuffle:deck.0"] >= 3  # the Flower discard shuffled into the deck
    assert counts.hidden_redraws >= 10  # face-down draws of reshuffled Flower cards
    assert counts.automaton_turns >= 100  # the solo opponent's face-down rewards
    assert counts.decisions_checked >= 1000


def test_flowar_resampling(capsys: pytest.CaptureFixture[str]) -> None:
    counts, leaks = _run(FlowarModel, FLOWAR, capsys, "Flowar")
    _no_leaks(leaks)
    assert counts.relabelled_draws >= 20  # the Contracts dealt at setup, hidden until all have chosen
    assert counts.extra["reshuffle:fdeck"] >= 1
    assert counts.automaton_turns >= 50  # Taxus cards
    assert counts.decisions_checked >= 1000
