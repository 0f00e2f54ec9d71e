"""``make bench``: run every benchmark and print one summary table (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/run_all.py [--quick] [--only games,referee]

Each benchmark script runs in its own process with ``PARTERRE_BENCH_RESULTS``
set to a temporary file, to which it appends one JSON line per measured
quantity (:func:`bench.harness.report`). The summary lists every quantity with
its median, spread, goal and ratio; a script that crashes or reports nothing
counts as missed, and so does one that cannot measure here (a missing
prerequisite such as ``bwrap``: listed as "NOT RUN" with what to install).
``--quick`` passes shorter durations (for a smoke run: the figures are then
noisier). Exits 1 when any goal is missed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402 - after the sys.path setup above
    NOT_RUN,
    RESULTS_ENV,
    Goal,
    Result,
    load_average,
    table,
)

BENCHES: dict[str, tuple[list[str], list[str]]] = {
    "games": (["bench/bench_games.py"], ["--seconds", "1", "--repeats", "2"]),
    "referee": (["bench/bench_referee.py"], ["--seconds", "2", "--repeats", "2"]),
    "replay": (["bench/bench_replay.py"], ["--matches", "2", "--repeats", "2"]),
    "concurrency": (["bench/bench_concurrency.py"], ["--seconds", "4", "--repeats", "2"]),
    "workers": (["bench/bench_workers.py"], ["--matches", "10", "--repeats", "2"]),
    "web": (["bench/bench_web.py"], ["--requests", "300", "--repeats", "2", "--info-requests", "50"]),
    # 10^7 matches: about an hour and 50 GB of disk at its peak (the database and its dump); --quick: 2 x 10^5
    "ten_million": (["bench/bench_ten_million.py"], ["--matches", "200000", "--seconds", "20", "--repeats", "1"]),
    "sandbox": (["bench/bench_sandbox.py"], ["--decisions", "500", "--repeats", "3"]),
    "live_feed": (["bench/bench_live_feed.py"], ["--seconds", "2", "--repeats", "2"]),
    "web_flood": (["bench/bench_web_flood.py"], ["--logins", "40", "--bodies", "100", "--uploads", "60"]),
    "clock": (["bench/bench_clock.py"], ["--seconds", "3", "--repeats", "2"]),
    "capacity": (["bench/bench_clock.py", "--concurrency", "100,200,400,800", "--think-ms", "100", "--judge-up-to",
                  "200"], ["--seconds", "3", "--repeats", "2"]),
    "whole_path": (["bench/bench_whole_path.py"], ["--matches", "6", "--repeats", "2"]),
    "competition_final": (["bench/bench_competition_final.py"], ["--entrants", "16", "--tiers", "4", "--budget", "400",
                                                                 "--season-s", "30"]),
    "scale_out": (["bench/bench_scale_out.py"], ["--rounds", "6", "--repeats", "2"]),
}
"""Name -> (script and arguments, extra arguments for ``--quick``)."""


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; print each one's output and the summary; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="shorter runs (noisier figures)")
    p.add_argument("--only", help=f"comma-separated subset of {', '.join(BENCHES)}")
    ns = p.parse_args(argv)
    names = [n.strip() for n in ns.only.split(",")] if ns.only else list(BENCHES)
    unknown = set(names) - set(BENCHES)
    if unknown:
        p.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    results: list[Result] = []
    crashed: list[str] = []
    not_run: list[str] = []  # a prerequisite missing on this machine (bench.harness.not_run)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="parterre-bench-") as tmp:
        for name in names:
            cmd, quick = BENCHES[name]
            out = Path(tmp) / f"{name}.jsonl"
            env = {**os.environ, RESULTS_ENV: str(out)}
            args = [sys.executable, *cmd, *(quick if ns.quick else [])]
            print(f"\n### {name}: {' '.join(args[1:])}", flush=True)
            proc = subprocess.run(args, cwd=ROOT, env=env, check=False)
            rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
            skipped = [row["not_run"] for row in rows if "not_run" in row]
            rows = [row for row in rows if "not_run" not in row]
            if proc.returncode == NOT_RUN and skipped:
                not_run.extend(f"{name}: {why}" for why in skipped)
            elif not rows or proc.returncode not in (0, 1):
                crashed.append(f"{name} (exit {proc.returncode}, {len(rows)} results)")
            for row in rows:
                goal = Goal(row["name"], row["unit"], row["target"], row["higher_is_better"], row["source"])
                results.append(Result(goal, row["samples"], row["baseline"], row["baseline_unit"]))
    print(f"\n== make bench summary ({load_average()}; {time.monotonic() - started:.0f} s)")
    print(table(results))
    missed = [r.goal.name for r in results if not r.met]
    for c in crashed:
        print(f"CRASHED: {c}")
    for n in not_run:
        print(f"NOT RUN: {n}")
    tail = (f"; {len(crashed)} crashed" if crashed else "") + (f"; {len(not_run)} not run" if not_run else "")
    print(f"{len(results) - len(missed)} of {len(results)} goals met{tail}")
    return 1 if missed or crashed or not_run else 0


if __name__ == "__main__":
    sys.exit(main())
