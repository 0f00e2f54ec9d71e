"""Balance of the La Fleur stand-in cards, measured by simulation with the greedy bot.

Usage::

    .venv/bin/python bench/balance_lafleur.py [--games 1000] [--players 2,3,4] [--solo 200] [--seed 0]

Plays ``--games`` seeded games per player count, every seat played by the
greedy strategy (``bots.strategies.lafleur.greedy_choice``), each game from
seed ``seed + i`` (the referee's way: chance outcomes drawn with
``random.Random(seed)``). Prints a Markdown report:

* win rate of seat 0 and of the round-1 First Player (a shared win counts
  1/k to each of the k winners), with the 1/n a fair game gives;
* median and quartiles of the game length in rounds;
* win rate by dominant Allure type: a player's dominant type is its highest
  Allure at the end (a player with two or more types tied for the highest
  counts as ``mixed``);
* with ``--solo N``: the greedy player's result against the automaton at
  each difficulty (win rate, median rounds, challenges met).

Not part of the test suite (it takes minutes); docs/rules/la-fleur.md quotes
its output.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.strategies.lafleur import greedy_choice
from games.lafleur.cards import ALLURE
from games.lafleur.state import LaFleurState
from games.registry import load_game


def play_greedy(game_string: str, seed: int) -> LaFleurState:
    """One game with every seat greedy; chance from ``random.Random(seed)``."""
    game = load_game(game_string)
    rng = random.Random(seed)
    state = game.new_initial_state()
    assert isinstance(state, LaFleurState)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        seat = state.current_player()
        i = greedy_choice(state.observation(seat), [a.to_json() for a in legal], seat) if len(legal) > 1 else 0
        state.apply_action(legal[i])
    return state


def dominant(allure: dict[str, int]) -> str:
    """The player's highest Allure type, ``mixed`` on a tie."""
    best = max(allure.values())
    top = [t for t in ALLURE if allure[t] == best]
    return top[0] if len(top) == 1 else "mixed"


def multiplayer(n: int, games: int, seed: int) -> dict[str, Any]:
    seat0 = first = 0.0
    rounds: list[int] = []
    by_type: Counter[str] = Counter()
    wins_by_type: Counter[str] = Counter()
    round_limit = 0
    for i in range(games):
        s = play_greedy(f"lafleur(players={n})", seed + i)
        o = s.outcome()
        winners = [p for p in range(n) if o.ranks[p] == 1]
        share = 1.0 / len(winners)
        first_player = o.details["first_player_round_1"]
        seat0 += share if 0 in winners else 0.0
        first += share if first_player in winners else 0.0
        rounds.append(o.details["rounds"])
        round_limit += o.reason.startswith("round limit")
        for b in o.details["breakdown"]:
            t = dominant(b["allure"])
            by_type[t] += 1
            if b["player"] in winners:
                wins_by_type[t] += share
    q = statistics.quantiles(rounds, n=4)
    return {
        "players": n, "games": games, "seat0": seat0 / games, "first": first / games,
        "median_rounds": statistics.median(rounds), "q1": q[0], "q3": q[2], "round_limit": round_limit,
        "by_type": {t: (wins_by_type[t] / by_type[t] if by_type[t] else 0.0, by_type[t])
                    for t in (*ALLURE, "mixed")},
    }


def solo(games: int, seed: int) -> list[dict[str, Any]]:
    out = []
    for level in ("easier", "normal", "harder", "hardest"):
        wins = 0.0
        rounds = []
        met: Counter[int] = Counter()
        for i in range(games):
            s = play_greedy(f"lafleur(players=1,difficulty={level})", seed + i)
            info = s.outcome().details["solo"]
            wins += {"win": 1.0, "shared": 0.5}.get(info["result"], 0.0)
            rounds.append(s.outcome().details["rounds"])
            met.update(info["achievements"])
        out.append({"difficulty": level, "games": games, "win": wins / games,
                    "median_rounds": statistics.median(rounds), "challenges": dict(sorted(met.items()))})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--solo", type=int, default=0, help="games per solo difficulty (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = [multiplayer(int(n), ns.games, ns.seed) for n in ns.players.split(",") if n]
    print(f"La Fleur balance, greedy vs greedy, {ns.games} games per player count, seeds {ns.seed}..")
    print()
    print("| players | seat 0 wins | First Player wins | fair | median rounds (q1-q3) | round limit |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['players']} | {r['seat0']:.1%} | {r['first']:.1%} | {1 / r['players']:.1%} | "
              f"{r['median_rounds']:g} ({r['q1']:g}-{r['q3']:g}) | {r['round_limit']} |")
    print()
    print("Win rate by dominant Allure type (players with that type at the end):")
    print()
    print("| players | " + " | ".join((*ALLURE, "mixed")) + " |")
    print("|---|" + "---|" * 6)
    for r in rows:
        cells = [f"{w:.1%} (n={k})" for w, k in r["by_type"].values()]
        print(f"| {r['players']} | " + " | ".join(cells) + " |")
    if ns.solo:
        print()
        print(f"Solo, greedy vs the automaton, {ns.solo} games per difficulty:")
        print()
        print("| difficulty | player wins | median rounds | challenges met (number: games) |")
        print("|---|---|---|---|")
        for r in solo(ns.solo, ns.seed):
            print(f"| {r['difficulty']} | {r['win']:.1%} | {r['median_rounds']:g} | {r['challenges']} |")
    print()
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
