"""Measurements behind docs/regression.md: handicap calibration, planted regressions, false-positive rate.

Usage::

    .venv/bin/python bench/bench_regress.py calibrate --game floriferous --players 2 --p 0.05,0.1,0.2 --deals 300
    .venv/bin/python bench/bench_regress.py planted   --game floriferous --players 2 --p 0.1 --elo0 -25 --elo1 0 \
        --max-games 2000 --runs 3
    .venv/bin/python bench/bench_regress.py fpr       --game floriferous --players 2 --spec builtin:random \
        --elo0 -25 --elo1 0 --max-games 4000 --runs 200

All runs use the ``direct`` backend of :mod:`parterre.regress` (the rules
engine and the bots in this process, ``--jobs`` worker processes), which plays
exactly the games the in-process referee plays, without the wire.

* ``calibrate``: for each handicap ``p``, the duplicate Elo of
  ``builtin:handicap:p=P`` against ``builtin:greedy`` over a fixed number of
  deals (the same deals for every ``p``), with its 95 % interval: pick the
  ``p`` whose gap is about -50 Elo.
* ``planted``: ``parterre regress`` (same code path) on the planted
  regression (handicap against greedy) and on an identical copy (greedy
  against greedy, and two differently seeded handicap bots of the same ``p``),
  ``--runs`` times each with different deal seeds; prints verdicts and games.
* ``fpr``: ``--runs`` regress runs of ``--spec`` against an identical copy
  (equal strength, independent randomness), each with fresh deal seeds;
  prints the share flagged as regressions (exit 1) with a 95 % Wilson
  interval, the share undecided, and the mean number of games.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ladder.stats.paired import DuplicateTest
from ladder.stats.sprt import Sprt
from parterre.regress import DirectRunner, deal_seed, make_plan, run_regress


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def calibrate(args: argparse.Namespace) -> None:
    for p in [float(x) for x in args.p.split(",")]:
        plan = make_plan(args.game, f"builtin:handicap:p={p}", "builtin:greedy", players=args.players)
        test = DuplicateTest(Sprt(-1.0, 1.0), pentanomial=plan.head_to_head)
        t0 = time.monotonic()
        with DirectRunner(plan, "calibrate", jobs=args.jobs) as runner:
            futures = [runner.start_deal(i, deal_seed("calibrate", i)) for i in range(args.deals)]
            for fut in futures:
                test.add(plan.deal_result(fut.result()))
        est = test.estimate()
        print(f"{plan.game_string} p={p:<5} deals {test.deals:4d} games {test.games:5d}  {est}  "
              f"({time.monotonic() - t0:.0f} s)", flush=True)


def _runs(args: argparse.Namespace, candidate: str, baseline: str, label: str) -> list[tuple[int, int]]:
    plan = make_plan(args.game, candidate, baseline, players=args.players)
    sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
    out = []
    t0 = time.monotonic()
    for r in range(args.runs):
        seed = f"{args.seed}:{label}:{r}"
        with DirectRunner(plan, seed, jobs=args.jobs) as runner:
            rep = run_regress(plan, sprt, runner, max_games=args.max_games, run_seed=seed, concurrency=args.jobs)
        out.append((rep.exit_code, rep.games))
        if args.verbose:
            print(f"  {label} run {r}: exit {rep.exit_code} after {rep.games} games, {rep.estimate}", flush=True)
    codes = [c for c, _ in out]
    games = [g for _, g in out]
    print(f"{label}: {plan.game_string} {candidate} vs {baseline}, bounds [{args.elo0}, {args.elo1}], "
          f"{args.runs} runs: exit0 {codes.count(0)}, exit1 {codes.count(1)}, exit2 {codes.count(2)}; games "
          f"mean {statistics.mean(games):.0f}, max {max(games)} ({time.monotonic() - t0:.0f} s)", flush=True)
    return out


def planted(args: argparse.Namespace) -> None:
    _runs(args, f"builtin:handicap:p={args.p}", "builtin:greedy", "planted regression")
    _runs(args, "builtin:greedy", "builtin:greedy", "identical greedy copy")
    _runs(args, f"builtin:handicap:p={args.p}", f"builtin:handicap:p={args.p}", "identical handicap copy")


def fpr(args: argparse.Namespace) -> None:
    out = _runs(args, args.spec, args.spec, "identical copy")
    k = sum(1 for c, _ in out if c == 1)
    lo, hi = wilson(k, len(out))
    print(f"false-positive (regression flagged) rate {k}/{len(out)} = {k / len(out):.3f}, "
          f"95% Wilson [{lo:.3f}, {hi:.3f}]; design beta = {args.beta} (P(exit 1) at elo = elo1 = {args.elo1})")
    u = sum(1 for c, _ in out if c == 2)
    print(f"undecided {u}/{len(out)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn in (("calibrate", calibrate), ("planted", planted), ("fpr", fpr)):
        sp = sub.add_parser(name)
        sp.set_defaults(func=fn)
        sp.add_argument("--game", default="floriferous")
        sp.add_argument("--players", type=int, default=2)
        sp.add_argument("--jobs", type=int, default=2)
        sp.add_argument("--seed", default="bench")
        if name == "calibrate":
            sp.add_argument("--p", default="0.05,0.1,0.15,0.2")
            sp.add_argument("--deals", type=int, default=300)
        else:
            sp.add_argument("--elo0", type=float, default=-25.0)
            sp.add_argument("--elo1", type=float, default=0.0)
            sp.add_argument("--alpha", type=float, default=0.05)
            sp.add_argument("--beta", type=float, default=0.05)
            sp.add_argument("--max-games", type=int, default=4000)
            sp.add_argument("--runs", type=int, default=5)
            sp.add_argument("--verbose", action="store_true")
        if name == "planted":
            sp.add_argument("--p", type=float, default=0.1)
        if name == "fpr":
            sp.add_argument("--spec", default="builtin:random")
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
