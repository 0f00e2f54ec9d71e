"""Measurements behind docs/search.md: the tier round-robin and search's Elo per second of thinking.

Usage::

    nice -n 10 .venv/bin/python bench/bench_search.py tiers --game floriferous --cycles 3
    nice -n 10 .venv/bin/python bench/bench_search.py budget --game floriferous --think-ms 100,300,1000 --deals 50
    nice -n 10 .venv/bin/python bench/bench_search.py wire --game floriferous --deals 10 --increment-ms 200

``tiers`` and ``budget`` use the ``direct`` backend of :mod:`parterre.regress`
(engine and bots in this process, chance from the match seed, as the referee
plays it).

* ``tiers``: the demo's round-robin (two random, two greedy, one search bot;
  ``--bots`` for others), every combination for 2, 3 and 4 players, every
  seat rotation (70 matches per cycle), a Bradley-Terry fit with 95 % bootstrap intervals
  (:func:`ladder.stats.bradley_terry.fit_bradley_terry`), the tiers' mean
  ratings, and the longest search decision seen (against ``--think-ms``).
* ``budget``: for each thinking time, search against greedy at 2 players on
  ``--deals`` duplicate deals (both seat orders), as a logistic Elo with a
  95 % interval from the per-deal scores.
* ``wire``: search against greedy through the in-process referee (gRPC, the
  referee's clock) at ``--increment-ms`` per decision; prints every seat's
  verdict count (``normal``, ``timeout``, ...).
* ``standings``: the same fit and tiers from the finished matches of a real
  run (``parterre demo``: the whole stack and its clock), read from
  ``parterre matches --game G --limit 1000 --json`` on stdin or ``--file``,
  with every bot's verdict counts and mean time per decision.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.cli import make_bot
from ladder.stats.bradley_terry import MatchRecord, fit_bradley_terry
from parterre.regress.direct import play_direct


class _Timed:
    """Wraps a bot and records its longest decision (ms)."""

    def __init__(self, bot: Any) -> None:
        self.bot, self.longest_ms, self.decisions = bot, 0.0, 0

    def choose(self, request: Any) -> int:
        t = time.monotonic()
        index = int(self.bot.choose(request))
        self.longest_ms = max(self.longest_ms, (time.monotonic() - t) * 1000)
        self.decisions += 1
        return index


def _elo(score: float) -> float:
    score = min(max(score, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / score - 1)


DEMO_BOTS = "random-1,random-2,greedy-1,greedy-2,search-1"
"""The demo's round-robin (parterre.demo.DEMO_BOTS): 70 matches per cycle at 2, 3 and 4 players."""


def tiers(game: str, cycles: int, think_ms: float | None, players: tuple[int, ...], bot_names: str = DEMO_BOTS) -> None:
    names = bot_names.split(",")
    kinds = {n: n.split("-")[0] for n in names}
    think = {} if think_ms is None else {"think_ms": think_ms}
    bots = {n: _Timed(make_bot(kinds[n], seed=n, **(think if kinds[n] == "search" else {}))) for n in names}
    records: list[MatchRecord] = []
    t0 = time.time()
    count = 0
    for cycle in range(cycles):
        for n in players:
            for combo in itertools.combinations(names, n):
                for r in range(n):
                    seats = combo[r:] + combo[:r]
                    ranks = play_direct(f"{game}(players={n})", f"tiers:{cycle}:{'/'.join(combo)}:{r}",
                                        [bots[s] for s in seats])
                    records.append(MatchRecord(bots=seats, ranks=tuple(ranks)))
                    count += 1
                    if count % 10 == 0:
                        print(f"  {count} matches, {time.time() - t0:.0f} s", flush=True)
    fit = fit_bradley_terry(records)
    shown = "the default" if think_ms is None else f"{think_ms:.0f} ms"
    print(f"{game}: {count} matches (players {players}, {cycles} cycle(s)), search think {shown}, "
          f"{time.time() - t0:.0f} s")
    for rating in fit.ratings:
        print(f"  {rating.bot!s:10} {rating.elo:+7.1f}  [{rating.low:+7.1f}, {rating.high:+7.1f}]  "
              f"games {rating.games}")
    _print_tiers(fit)
    longest = max(bots[n].longest_ms for n in names if n.startswith("search"))
    print(f"  longest search decision: {longest:.0f} ms")


def _print_tiers(fit: Any) -> None:
    """Each tier's mean rating, and whether neighbouring tiers' 95 % intervals are apart.

    "Apart" as docs/search.md, "Measured strength", defines it.
    """
    by_tier = {t: [r for r in fit.ratings if str(r.bot).startswith(t)] for t in ("random", "greedy", "search")}
    for tier, rows in by_tier.items():
        if rows:
            print(f"  tier {tier}: mean {statistics.mean(r.elo for r in rows):+.1f}")
    for low, high in (("random", "greedy"), ("greedy", "search")):
        if by_tier[low] and by_tier[high]:
            gap = min(r.low for r in by_tier[high]) - max(r.high for r in by_tier[low])
            print(f"  {low} < {high}: intervals {'apart' if gap > 0 else 'OVERLAP'} by {abs(gap):.1f} Elo")


def standings(path: str) -> None:
    """Fit and tiers of a real run's finished matches (the ``standings`` command; docstring above)."""
    import json
    from collections import Counter

    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    every = json.loads(text)
    games = sorted({m["game"] for m in every})
    if len(games) > 1:
        raise SystemExit(f"standings: matches of {', '.join(games)}: give one game (parterre matches --game G)")
    matches = [m for m in every if m["status"] == "finished" and all(s["rank"] is not None for s in m["seats"])]
    skipped = Counter(m["status"] for m in every if m not in matches)
    if skipped:
        print(f"  not counted (not finished or unranked): {dict(sorted(skipped.items()))}")
    records = [MatchRecord(bots=tuple(s["name"] for s in m["seats"]), ranks=tuple(s["rank"] for s in m["seats"]))
               for m in matches]
    verdicts: dict[str, Counter[str]] = {}
    spent: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    for m in matches:
        for s in m["seats"]:
            verdicts.setdefault(s["name"], Counter())[s["verdict"]] += 1
            spent[s["name"]] += s["time_used_ms"] or 0
            decisions[s["name"]] += s["decisions"] or 0
    fit = fit_bradley_terry(records)
    print(f"{', '.join(games)}: {len(matches)} finished matches, players {sorted({m['players'] for m in matches})}")
    for r in fit.ratings:
        name = str(r.bot)
        per = spent[name] / decisions[name] if decisions[name] else 0.0
        print(f"  {name:10} {r.elo:+7.1f}  [{r.low:+7.1f}, {r.high:+7.1f}]  games {r.games}  "
              f"verdicts {dict(sorted(verdicts[name].items()))}  mean {per:.0f} ms/decision")
    _print_tiers(fit)


def _opts(text: str) -> dict[str, Any]:
    """``"horizon=-1,rollout=random"`` -> keyword arguments of the search bot (numbers parsed)."""
    out: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        k, v = item.split("=", 1)
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def budget(game: str, think: list[float], deals: int, opts: dict[str, Any] | None = None) -> None:
    for ms in think:
        scores = []
        t0 = time.time()
        longest = 0.0
        for d in range(deals):
            score = 0.0
            for order in (0, 1):
                search = _Timed(make_bot("search", seed=f"b:{d}:{order}", think_ms=ms, **(opts or {})))
                greedy = make_bot("greedy", seed=f"b:{d}:{order}")
                seats = [search, greedy] if order == 0 else [greedy, search]
                ranks = play_direct(f"{game}(players=2)", f"budget:{d}", seats)
                me, other = ranks[order], ranks[1 - order]
                score += 1.0 if me < other else 0.5 if me == other else 0.0
                longest = max(longest, search.longest_ms)
            scores.append(score / 2)
        mean = statistics.mean(scores)
        half = 1.96 * statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 else 0.5
        print(f"{game} {opts or ''}: think {ms:.0f} ms: score {mean:.3f} over {2 * deals} games -> "
              f"Elo {_elo(mean):+.0f} "
              f"[{_elo(mean - half):+.0f}, {_elo(mean + half):+.0f}]; longest decision {longest:.0f} ms; "
              f"{time.time() - t0:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tiers")
    t.add_argument("--game", default="floriferous")
    t.add_argument("--cycles", type=int, default=1)
    t.add_argument("--think-ms", type=float, default=None, help="default: the bot's (bots.search.THINK_MS)")
    t.add_argument("--players", default="2,3,4")
    t.add_argument("--bots", default=DEMO_BOTS, help="names kind-k (default: the demo's five bots)")
    b = sub.add_parser("budget")
    b.add_argument("--game", default="floriferous")
    b.add_argument("--think-ms", default="100,300,1000")
    b.add_argument("--deals", type=int, default=50)
    b.add_argument("--opts", default="", help="search bot options, e.g. horizon=-1,rollout=random")
    w = sub.add_parser("wire")
    w.add_argument("--game", default="floriferous")
    w.add_argument("--deals", type=int, default=10)
    w.add_argument("--increment-ms", type=int, default=200)
    w.add_argument("--margin-ms", type=int, default=50)
    w.add_argument("--think-ms", type=float, default=None, help="default: the bot's (bots.search.THINK_MS)")
    st = sub.add_parser("standings")
    st.add_argument("--file", default="-", help="the JSON of `parterre matches --json` (default: stdin)")
    args = ap.parse_args()
    if args.cmd == "standings":
        standings(args.file)
    elif args.cmd == "wire":
        wire(args.game, args.deals, args.increment_ms, args.margin_ms, args.think_ms)
    elif args.cmd == "tiers":
        tiers(args.game, args.cycles, args.think_ms, tuple(int(x) for x in args.players.split(",")), args.bots)
    else:
        budget(args.game, [float(x) for x in args.think_ms.split(",")], args.deals, _opts(args.opts))



def wire(game: str, deals: int, increment_ms: int, margin_ms: int, think_ms: float | None) -> None:
    """Search against greedy through the in-process referee (the wire, the clock): counts the verdicts."""
    from collections import Counter

    from parterre.regress.plan import deal_seed, make_plan
    from parterre.regress.runners import RefereeRunner

    verdicts: Counter[str] = Counter()

    def count(seats: Any, result: Any) -> None:
        for s in result.seats:
            verdicts[f"{seats[s.seat]}:{s.verdict}"] += 1

    search = "builtin:search" if think_ms is None else f"builtin:search:think_ms={think_ms:g}"
    plan = make_plan(game, search, "builtin:greedy", players=2)
    tc = {"base_ms": 0, "increment_ms": increment_ms, "cap_ms": increment_ms, "margin_ms": margin_ms}
    runner = RefereeRunner(plan, "wire", time_control=tc, on_result=count)
    t0 = time.time()
    try:
        for i in range(deals):
            runner.start_deal(i, deal_seed("wire", i)).result()
    finally:
        runner.close()
    print(f"{game}: {2 * deals} matches through the referee at {increment_ms} ms/decision (margin {margin_ms} ms), "
          f"{search}: verdicts {dict(sorted(verdicts.items()))}; {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
