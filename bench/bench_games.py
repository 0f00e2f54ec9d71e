"""Random playouts per second of each rules engine, on one core.

Usage::

    .venv/bin/python bench/bench_games.py [--seconds 3] [--game floriferous]

For each variant: complete random matches (chance sampled with
``State.sample_chance``, decisions uniform over ``legal_actions()``, the outcome
computed) per second, and the average number of actions per match. A baseline
is measured in the same run: a bare Python loop doing the same number of
``random.choice`` calls on a small list, so the ratio (engine time / baseline
time) is comparable between noisy machines. Target (DESIGN §9 machines):
>= 1,000 random 4-player Floriferous matches per second.
"""

from __future__ import annotations

import argparse
import random
import time

from games.registry import load_game

DEFAULT_VARIANTS: dict[str, tuple[str, ...]] = {
    "floriferous": (
        "floriferous(players=4)",
        "floriferous(players=3)",
        "floriferous(players=2)",
        "floriferous(players=2,extended=true)",
        "floriferous(players=1)",
        "floriferous(players=1,extended=true)",
    ),
}


def play_random(game_string: str, seconds: float, seed: int = 1) -> tuple[int, int, float]:
    """Play random matches for about ``seconds``.

    Returns:
        (matches, actions, elapsed seconds).
    """
    game = load_game(game_string)
    rng = random.Random(seed)
    matches = actions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions())
            state.apply_action(action)
            actions += 1
        state.outcome()
        matches += 1
        now = time.perf_counter()
        if now >= deadline:
            return matches, actions, now - start


def baseline(calls: int, seed: int = 1) -> float:
    """Seconds for ``calls`` bare ``random.choice`` calls plus a list append (the loop floor)."""
    rng = random.Random(seed)
    options = list(range(5))
    out: list[int] = []
    start = time.perf_counter()
    for _ in range(calls):
        out.append(rng.choice(options))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Print one line per variant; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per variant (s)")
    parser.add_argument("--game", default=None, help="only this game")
    ns = parser.parse_args(argv)
    print(f"{'variant':44s} {'matches/s':>10s} {'actions/match':>14s} {'us/action':>10s} "
          f"{'baseline us/call':>17s} {'ratio':>7s}")
    for name, variants in DEFAULT_VARIANTS.items():
        if ns.game and ns.game != name:
            continue
        for variant in variants:
            matches, actions, elapsed = play_random(variant, ns.seconds)
            base = baseline(actions)
            per_action_us = elapsed / actions * 1e6
            base_us = base / actions * 1e6
            print(f"{variant:44s} {matches / elapsed:10.0f} {actions / matches:14.1f} {per_action_us:10.2f} "
                  f"{base_us:17.3f} {elapsed / base:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
