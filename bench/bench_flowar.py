"""Random 4-player Flowar games per second on one core, against a baseline measured in the same run.

Usage::

    .venv/bin/python bench/bench_flowar.py [--seconds 10] [--rounds 3] [--baseline floriferous(players=4)]

A *random game* is a full match from the initial state: chance outcomes drawn
with ``State.sample_chance`` and decisions chosen uniformly from
``legal_actions()``, through the public :class:`games.api.State` interface
(legality checked on every action), in this single process.

The machines are noisy (DESIGN §9: ±30 % run to run) and shared, so:

* rates are per second of this process's CPU time (``time.process_time``), i.e.
  "on one core" even when other processes compete for it; wall-clock rates are
  printed too;
* the same loop runs on a baseline game (default: ``floriferous(players=4)``,
  the other engine written to the same conventions) in alternating slices, and
  the ratio of the two rates is printed with the absolute figures.

Target: >= 100 random 4-player Flowar games per CPU second.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games.registry import load_game  # noqa: E402

TARGET_GAMES_PER_S = 100.0


def run_slice(game_string: str, seconds: float, seed: int) -> tuple[int, int, float, float]:
    """Play random games of ``game_string`` for about ``seconds`` of CPU time.

    Returns:
        (games finished, actions applied, CPU seconds, wall-clock seconds).
    """
    game = load_game(game_string)
    rng = random.Random(seed)
    games = steps = 0
    wall = time.perf_counter()
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
        games += 1
    return games, steps, time.process_time() - start, time.perf_counter() - wall


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; exit status 0 when the target is met, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="flowar(players=4)")
    parser.add_argument("--baseline", default="floriferous(players=4)")
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per game (split over the rounds)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating measurement rounds")
    ns = parser.parse_args(argv)
    totals = {ns.game: [0.0, 0.0, 0.0, 0.0], ns.baseline: [0.0, 0.0, 0.0, 0.0]}
    for r in range(ns.rounds):
        for name in (ns.game, ns.baseline):
            for i, x in enumerate(run_slice(name, ns.seconds / ns.rounds, seed=r)):
                totals[name][i] += x
    rates = {}
    for name, (g, s, cpu, wall) in totals.items():
        rates[name] = (g / cpu, s / cpu)
        print(f"{name:28s} {g / cpu:8.1f} games/CPU-s {s / cpu:10.0f} actions/CPU-s  "
              f"(wall clock {g / wall:.1f} games/s; {int(g)} games, {s / max(g, 1):.0f} actions/game)")
    fg, fs = rates[ns.game]
    bg, bs = rates[ns.baseline]
    print(f"ratio {ns.game} / {ns.baseline}: games/s {fg / bg:.2f}, actions/s {fs / bs:.2f}")
    ok = fg >= TARGET_GAMES_PER_S
    print(f"target >= {TARGET_GAMES_PER_S:.0f} games per CPU second: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
