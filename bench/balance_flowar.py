"""Balance simulation of Flowar's stand-in components (not part of the test suite).

Usage::

    .venv/bin/python bench/balance_flowar.py [--games 1000] [--players 1,2,3,4] [--seed 0] [--json FILE]

Every seat is played by the greedy reference strategy
(``bots.strategies.flowar.greedy_choice``); chance comes from
``random.Random(seed + game)``, so a run is reproducible. For each player count
it prints, as Markdown (the tables of ``docs/rules/flowar.md``):

* the win rate of the first player (first on the Turn Track in round 1) and of
  every other position; solo: how often the player defeats Taxus;
* scores: median of the winners, median of all seats; solo: Taxus's median;
* the share of deliveries per kingdom (target: none above 45 %);
* in winning games (the winner's own play) and over all seats: how often a
  Loan was taken, a Worker laid off (firing or passing with Workers left), and a
  Contract fulfilled with fresh flowers only;
* how often each Achievement was earned.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bots.strategies.flowar import greedy_choice  # noqa: E402 - after the sys.path setup above
from games.flowar.cards import KINGDOMS  # noqa: E402 - after the sys.path setup above
from games.flowar.scoring import ACHIEVEMENTS  # noqa: E402 - after the sys.path setup above
from games.registry import load_game  # noqa: E402 - after the sys.path setup above


def play(players: int, seed: int) -> dict[str, Any]:
    """One all-greedy game; returns the figures the report needs."""
    state = load_game(f"flowar(players={players})").new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        seat = state.current_player()
        legal = state.legal_actions()
        state.apply_action(legal[greedy_choice(state.observation(seat), [a.to_json() for a in legal], seat)])
    out = state.outcome()
    # the type: ignore below: load_game gives a State; this one is a FlowarState, which has stats()
    stats = state.stats()  # type: ignore[attr-defined]
    start = stats["start_player"]
    position = {s: (s - start) % players for s in range(players)}
    seats = []
    for s, b in enumerate(out.details["breakdown"]):
        seats.append({
            "position": position[s],
            "score": out.scores[s],
            "won": out.details["defeated_taxus"] if players == 1 else out.ranks[s] == 1,
            "loan": stats["loans"][s] > 0,
            "layoff": stats["fired"][s] > 0,
            "fresh": stats["fresh_deliveries"][s] > 0,
            "delivered": stats["delivered"][s],
            "achievements": [name for name, got in b["achievements"].items() if got],
        })
    taxus = out.details["taxus"]["total"] if players == 1 else None
    return {"seats": seats, "taxus": taxus}


def summarise(players: int, games: list[dict[str, Any]]) -> dict[str, Any]:
    seats = [s for g in games for s in g["seats"]]
    winners = [s for s in seats if s["won"]]
    by_pos = {p: [s["won"] for s in seats if s["position"] == p] for p in range(players)}
    kingdom = [sum(s["delivered"][k] for s in seats) for k in range(3)]
    total = sum(kingdom) or 1
    ach = Counter(a for s in seats for a in s["achievements"])

    def rate(rows: list[dict[str, Any]], key: str) -> float:
        return sum(r[key] for r in rows) / len(rows) if rows else 0.0

    out = {
        "players": players,
        "games": len(games),
        "win_rate_by_position": {p: sum(v) / len(v) for p, v in by_pos.items()},
        "median_winning_score": statistics.median(s["score"] for s in winners) if winners else None,
        "median_score": statistics.median(s["score"] for s in seats),
        "delivery_share": {KINGDOMS[k].id: kingdom[k] / total for k in range(3)},
        "deliveries_per_seat": total / len(seats),
        "winners": {k: rate(winners, k) for k in ("loan", "layoff", "fresh")},
        "all_seats": {k: rate(seats, k) for k in ("loan", "layoff", "fresh")},
        "achievements": {a: ach[a] / len(seats) for a in ACHIEVEMENTS},
    }
    if players == 1:
        out["median_taxus_score"] = statistics.median(g["taxus"] for g in games)
    return out


def markdown(results: list[dict[str, Any]]) -> str:
    pct = "{:.0%}".format
    lines = [
        "| players | games | first player wins | win rate by position | median winning score | median score "
        "| deliveries per seat | K1 / K2 / K3 share of deliveries |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        wr = r["win_rate_by_position"]
        first = pct(wr[0]) + (" (defeats Taxus)" if r["players"] == 1 else "")
        med_win = "—" if r["median_winning_score"] is None else f"{r['median_winning_score']:.0f}"
        if r["players"] == 1:
            med_win += f" (Taxus median {r['median_taxus_score']:.0f})"
        share = " / ".join(pct(v) for v in r["delivery_share"].values())
        lines.append(f"| {r['players']} | {r['games']} | {first} | {', '.join(pct(v) for v in wr.values())} | "
                     f"{med_win} | {r['median_score']:.0f} | {r['deliveries_per_seat']:.1f} | {share} |")
    lines += ["", "| players | winners with a Loan | with a layoff | with a fresh-only delivery "
              "| all seats: Loan / layoff / fresh-only |", "|---|---|---|---|---|"]
    for r in results:
        w, a = r["winners"], r["all_seats"]
        lines.append(f"| {r['players']} | {pct(w['loan'])} | {pct(w['layoff'])} | {pct(w['fresh'])} | "
                     f"{pct(a['loan'])} / {pct(a['layoff'])} / {pct(a['fresh'])} |")
    lines += ["", "| Achievement | " + " | ".join(f"{r['players']}p" for r in results) + " |",
              "|---|" + "---|" * len(results)]
    for a in ACHIEVEMENTS:
        lines.append(f"| {a} | " + " | ".join(pct(r["achievements"][a]) for r in results) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games per player count (default 1000)")
    parser.add_argument("--players", default="1,2,3,4", help="player counts, comma-separated")
    parser.add_argument("--seed", type=int, default=0, help="base seed; game i uses seed + i")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    ns = parser.parse_args(argv)
    results = []
    for players in (int(p) for p in ns.players.split(",")):
        t0 = time.perf_counter()
        games = [play(players, ns.seed + i) for i in range(ns.games)]
        results.append(summarise(players, games))
        print(f"# {players} player(s): {ns.games} games in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(markdown(results))
    if ns.json:
        ns.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
