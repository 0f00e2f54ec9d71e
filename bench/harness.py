"""What every benchmark in ``bench/`` shares: goals, interleaved repeats, the report, the exit code.

A benchmark measures one or more quantities against a **goal** (docs/benchmarks.md,
"Method"):

* where the goal is per core, it measures CPU time (``time.process_time`` of
  the process doing the work, or ``/proc/<pid>/stat`` for a child), never wall
  time, which other processes on a shared machine inflate;
* it runs its **baseline in the same run, interleaved** with the measured work
  (B M B M ...), because these machines are noisy (±30 % run to run;
  compare ratios measured in the same run);
* it **repeats** and reports the median and the spread (min-max) of the repeats;
* it prints the goal and the ratio median / goal;
* it **exits non-zero** when a goal is missed.

Each script calls :func:`report` at the end and returns its exit status. When
``PARTERRE_BENCH_RESULTS`` names a file, :func:`report` also appends one JSON
line per result there, which ``bench/run_all.py`` (``make bench``) collects
into one summary table.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

RESULTS_ENV = "PARTERRE_BENCH_RESULTS"
"""Environment variable: a file to which :func:`report` appends JSON lines."""

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Goal:
    """A target for one measured quantity.

    Attributes:
        name: what is measured, e.g. ``"Floriferous 4p random playouts"``.
        unit: the unit of the measured value, e.g. ``"playouts/CPU-s"``.
        target: the goal, in ``unit``.
        higher_is_better: True when the value must be >= target, False when <=.
        source: where the goal comes from (the docs page that sets it).
    """

    name: str
    unit: str
    target: float
    higher_is_better: bool = True
    source: str = "docs/benchmarks.md"


@dataclass
class Result:
    """The repeats of one measured quantity, with its baseline's repeats (same run).

    Attributes:
        goal: the goal this result is judged against.
        samples: the measured value of each repeat, in ``goal.unit``.
        baseline: the baseline's value in each repeat (informative; its unit is
            ``baseline_unit``), empty when the quantity is itself a ratio to a
            baseline measured in the same repeat.
        baseline_unit: unit of ``baseline``.
        note: one line of context (load, counts) printed under the table.
    """

    goal: Goal
    samples: list[float]
    baseline: list[float] = field(default_factory=list)
    baseline_unit: str = ""
    note: str = ""

    @property
    def median(self) -> float:
        """Median of the repeats."""
        return statistics.median(self.samples)

    @property
    def spread(self) -> tuple[float, float]:
        """(min, max) of the repeats."""
        return min(self.samples), max(self.samples)

    @property
    def ratio(self) -> float:
        """median / target when higher is better, target / median otherwise (>= 1 means met)."""
        if self.goal.higher_is_better:
            return self.median / self.goal.target if self.goal.target else float("inf")
        return self.goal.target / self.median if self.median else float("inf")

    @property
    def met(self) -> bool:
        """Whether the median meets the goal."""
        return self.ratio >= 1.0


def cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user + system, all threads) used so far by this process or process ``pid``.

    Raises:
        FileNotFoundError: no such process (Linux ``/proc``).
    """
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def machine_busy() -> tuple[float, float]:
    """(busy, total) clock ticks of all the machine's cores so far (``/proc/stat``; busy is all but idle and
    iowait). Between two readings, busy / total is how busy the cores were, every process on them counted."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    return float(total - fields[3] - fields[4]), float(total)


def busy_share(before: tuple[float, float], after: tuple[float, float]) -> float:
    """How busy the machine's cores were between two :func:`machine_busy` readings (0..1)."""
    return (after[0] - before[0]) / max(1.0, after[1] - before[1])


def interleave(measured: Callable[[], float], baseline: Callable[[], float] | None,
               repeats: int) -> tuple[list[float], list[float]]:
    """Run ``baseline`` and ``measured`` alternately (B M B M ...) ``repeats`` times.

    Returns:
        (measured values, baseline values), one per repeat each (the baseline
        list is empty when there is no baseline).
    """
    got: list[float] = []
    base: list[float] = []
    for _ in range(repeats):
        if baseline is not None:
            base.append(baseline())
        got.append(measured())
    return got, base


def _fmt(x: float) -> str:
    if x != x:  # NaN
        return "nan"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def table(results: Sequence[Result]) -> str:
    """The results as a fixed-width table: goal, median, spread, target, ratio, verdict."""
    head = f"{'measure':46s} {'median':>10s} {'spread (min-max)':>21s} {'goal':>12s} {'ratio':>6s}  ok"
    lines = [head, "-" * len(head)]
    for r in results:
        lo, hi = r.spread
        sign = ">=" if r.goal.higher_is_better else "<="
        lines.append(
            f"{r.goal.name:46.46s} {_fmt(r.median):>10s} {_fmt(lo) + '-' + _fmt(hi):>21s} "
            f"{sign + ' ' + _fmt(r.goal.target):>12s} {r.ratio:6.2f}  {'yes' if r.met else 'NO'}"
        )
    return "\n".join(lines)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, for the record."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def report(results: Sequence[Result], title: str) -> int:
    """Print the results with units, baselines and notes; append JSON lines; return the exit status.

    Returns:
        0 when every goal is met, 1 otherwise.
    """
    print(f"\n== {title} ({load_average()})")
    print(table(results))
    for r in results:
        extra = []
        if r.baseline:
            extra.append(f"baseline median {_fmt(statistics.median(r.baseline))} {r.baseline_unit} "
                         f"[{', '.join(_fmt(b) for b in r.baseline)}]")
        extra.append(f"repeats [{', '.join(_fmt(s) for s in r.samples)}] {r.goal.unit}")
        if r.note:
            extra.append(r.note)
        print(f"  {r.goal.name}: " + "; ".join(extra))
    out = os.environ.get(RESULTS_ENV)
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps({
                    "bench": title, "name": r.goal.name, "unit": r.goal.unit, "target": r.goal.target,
                    "higher_is_better": r.goal.higher_is_better, "median": r.median,
                    "min": r.spread[0], "max": r.spread[1], "ratio": r.ratio, "met": r.met,
                    "samples": r.samples, "baseline": r.baseline, "baseline_unit": r.baseline_unit,
                    "source": r.goal.source, "load": os.getloadavg()[0],
                }) + "\n")
    return 0 if all(r.met for r in results) else 1


NOT_RUN = 3
"""Exit status of a benchmark that could not measure (a prerequisite is missing): see :func:`not_run`."""


def not_run(reason: str) -> int:
    """Say why a benchmark cannot measure on this machine (e.g. a missing ``bwrap``); return :data:`NOT_RUN`.

    Prints ``reason`` and records it for ``bench/run_all.py``, which lists it under the summary
    as "NOT RUN" (a missed goal, not a crash).
    """
    print(reason)
    out = os.environ.get(RESULTS_ENV)
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"not_run": reason}) + "\n")
    return NOT_RUN
