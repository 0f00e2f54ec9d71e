"""Random playouts per CPU-second of each rules engine, with a baseline from the same run.

Usage::

    .venv/bin/python bench/bench_games.py [--seconds 2] [--repeats 3] [--game flowar]

A playout is a complete random game played by the local match loop
(:func:`bots.local.play_local`, the one that ``parterre regress --backend direct``
and the hosted validation use) with a uniform random choice in every seat:
``legal_actions()``, the choice, ``apply_action()``, and ``sample_chance()`` at
chance nodes (game i of a repeat uses ``random.Random(i)`` for both), then
``outcome()``. No observation is built.

Rates are per CPU-second of this process (``time.process_time``), which is what
one core gives the loop on a shared machine. The baseline, interleaved with
each game (B M B M ...), is a bare Python loop of ``random.choice`` calls over
a 5-element list per CPU-second: it shows how fast this machine runs Python at
the moment of the measurement. Goals (search bots live on this):
4-player Floriferous >= 5,000, La Fleur >= 500, Flowar >= 1,000 playouts per
CPU-second. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import Goal, Result, interleave, report
from bots.local import Decision, play_local
from games.registry import load_game

GOALS: dict[str, tuple[str, float]] = {
    "floriferous": ("floriferous(players=4)", 5_000.0),
    "lafleur": ("lafleur(players=4)", 500.0),
    "flowar": ("flowar(players=4)", 1_000.0),
}
"""Game -> (variant measured, random playouts per CPU-second required)."""


def engine_build(game_string: str) -> str:
    """``compiled`` when the game's state module is a mypyc extension (``make compiled``), else ``pure``."""
    module = sys.modules[type(load_game(game_string).new_initial_state()).__module__]
    return "compiled" if str(module.__file__).endswith(".so") else "pure"


def playouts_per_cpu_second(game_string: str, seconds: float) -> tuple[float, float]:
    """Play random games for at least ``seconds`` of CPU time.

    Returns:
        (playouts per CPU-second, steps per playout).
    """
    game = load_game(game_string)
    games = steps = 0
    start = time.process_time()
    while True:
        rng = random.Random(games)
        choose = rng.randrange  # the same draw as rng.choice(legal)

        def seat(decision: Decision, choose: Callable[[int], int] = choose) -> int:
            return choose(len(decision.legal))

        steps += play_local(game, [seat] * game.num_players, rng).steps
        games += 1
        used = time.process_time() - start
        if used >= seconds:
            return games / used, steps / games


def baseline_calls_per_cpu_second(seconds: float) -> float:
    """``random.choice`` calls over a 5-element list per CPU-second (the Python loop floor)."""
    rng = random.Random(1)
    options = list(range(5))
    calls = 0
    start = time.process_time()
    while True:
        for _ in range(10_000):
            rng.choice(options)
        calls += 10_000
        used = time.process_time() - start
        if used >= seconds:
            return calls / used


def main(argv: list[str] | None = None) -> int:
    """Measure each game, print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per repeat and game")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (median reported)")
    p.add_argument("--game", choices=sorted(GOALS), help="only this game")
    ns = p.parse_args(argv)
    results = []
    for name, (variant, target) in GOALS.items():
        if ns.game and ns.game != name:
            continue
        lengths: list[float] = []

        def measured(variant: str = variant, lengths: list[float] = lengths) -> float:
            rate, length = playouts_per_cpu_second(variant, ns.seconds)
            lengths.append(length)
            return rate

        got, base = interleave(measured, lambda: baseline_calls_per_cpu_second(ns.seconds / 4), ns.repeats)
        results.append(Result(
            Goal(f"{variant} random playouts", "playouts/CPU-s", target),
            got, base, "choice calls/CPU-s", note=f"{sum(lengths) / len(lengths):.0f} steps per playout; "
                 f"{engine_build(variant)} engine",
        ))
    return report(results, "engines: random playouts per CPU-second")


if __name__ == "__main__":
    sys.exit(main())
