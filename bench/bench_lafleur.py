"""Random 4-player La Fleur games per second on one core, against a baseline from the same run.

Usage::

    .venv/bin/python bench/bench_lafleur.py [--seconds 3] [--repeats 3] [--players 4]

A game is a full random playout through the public API, exactly as a search
bot or the referee drives it: ``legal_actions()``, a uniform choice,
``apply_action()``, and ``sample_chance()`` at chance nodes (seeded, game i
uses ``random.Random(i)``). No observation is built.

Baseline: the same loop over random 4-player Floriferous games (the other
engine behind the same API), measured in the same process, interleaved with
La Fleur (A B A B ...), so the ratio is comparable across noisy machines
(DESIGN §9: compare ratios measured in the same run). Prints the median
rates, steps per second, the ratio La Fleur / baseline and whether the
target (>= 100 La Fleur games/s) is met. Rates are per CPU second of this
process (``time.process_time``), i.e. per second of one core, which other
processes on a busy machine do not inflate; the wall-clock rate of the whole
run is printed too.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.registry import load_game  # noqa: E402

TARGET = 100.0
"""Random 4-player La Fleur games per second required (issue 3)."""


def playouts(game_string: str, seconds: float, first_seed: int) -> tuple[int, int, float]:
    """Play random games for about ``seconds`` of this process's CPU time.

    Returns:
        (games, steps, CPU seconds used). CPU time (``time.process_time``), not
        wall time: on a shared machine it is what "one core" gives this loop.
    """
    game = load_game(game_string)
    games = steps = 0
    seed = first_seed
    start = time.process_time()
    stop = start + seconds
    while time.process_time() < stop:
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
        games += 1
        seed += 1
    return games, steps, time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved measurements of each")
    ap.add_argument("--players", type=int, default=4)
    ns = ap.parse_args(argv)
    lafleur = f"lafleur(players={ns.players})"
    baseline = f"floriferous(players={ns.players})"
    playouts(lafleur, 0.5, 10_000)  # warm-up (imports, caches)
    playouts(baseline, 0.5, 10_000)
    rates: dict[str, list[float]] = {lafleur: [], baseline: []}
    step_rates: dict[str, list[float]] = {lafleur: [], baseline: []}
    seed = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(ns.repeats):
        for name in (lafleur, baseline):
            games, steps, elapsed = playouts(name, ns.seconds, seed)
            seed += games
            rates[name].append(games / elapsed)
            step_rates[name].append(steps / elapsed)
    lf, base = statistics.median(rates[lafleur]), statistics.median(rates[baseline])
    print(f"{lafleur:28s} {lf:8.1f} games/s  {statistics.median(step_rates[lafleur]):9.0f} steps/s  "
          f"(runs: {', '.join(f'{r:.1f}' for r in rates[lafleur])})")
    print(f"{baseline:28s} {base:8.1f} games/s  {statistics.median(step_rates[baseline]):9.0f} steps/s  "
          f"(baseline; runs: {', '.join(f'{r:.1f}' for r in rates[baseline])})")
    print(f"ratio lafleur / baseline = {lf / base:.2f}")
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"(CPU {cpu:.1f} s over {wall:.1f} s wall: this process had {cpu / wall:.0%} of a core)")
    ok = lf >= TARGET
    print(f"target >= {TARGET:.0f} La Fleur games/s: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
