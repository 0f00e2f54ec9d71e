"""Rating-history plot geometry, drawn as inline SVG by a template (``templates/_plot.html``).

Pure arithmetic, no markup: :func:`rating_plot` maps a bot's Elo after each
rated match to SVG user-space coordinates with "nice" axis ticks. The template
draws the axes, a dashed line at the initial rating, the polyline, and (for
short histories) one marker per match with a tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ladder.elo import INITIAL_RATING
from ladder.read import RatingPoint

WIDTH, HEIGHT = 640, 220
"""SVG viewBox size, user units."""
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 48, 12, 10, 28
MARKERS_UP_TO = 60
"""Histories up to this many points get one marker (with a tooltip) per match."""


@dataclass(frozen=True, slots=True)
class Tick:
    """An axis tick: its position (user units) and label."""

    pos: float
    label: str


@dataclass(frozen=True, slots=True)
class Marker:
    """A point of the line with its tooltip text."""

    x: float
    y: float
    title: str


@dataclass(frozen=True, slots=True)
class Plot:
    """Everything ``_plot.html`` needs.

    Attributes:
        points: the polyline's ``points`` attribute ("x,y x,y ...").
        baseline_y: y of the initial rating (None when outside the range shown).
        x_ticks / y_ticks: axis ticks (x = rated match number, y = Elo).
        markers: per-match markers (short histories only).
        plot_left / plot_right / plot_top / plot_bottom: the plotting area.
        summary: one sentence for screen readers ("Elo from 1500 to 1562 over 40 matches").
    """

    width: int
    height: int
    points: str
    baseline_y: float | None
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    markers: list[Marker]
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    summary: str


def nice_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round tick values covering ``lo..hi`` (steps of 1, 2 or 5 times a power of ten)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    out = []
    v = first
    while v <= hi + 1e-9:
        out.append(round(v, 6))
        v += step
    return out


def rating_plot(history: Sequence[RatingPoint], total: int | None = None) -> Plot | None:
    """Plot geometry of a rating history (Elo after each rated match), or None when empty.

    Args:
        history: points in match order (possibly thinned; ``n`` is the match number).
        total: unthinned number of rated matches (for the x axis and summary).
    """
    if not history:
        return None
    total = total or history[-1].n
    elos = [p.elo for p in history] + [INITIAL_RATING]
    lo, hi = min(elos), max(elos)
    pad = max(10.0, (hi - lo) * 0.08)
    lo, hi = lo - pad, hi + pad
    x0, x1 = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    y0, y1 = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    n_lo, n_hi = 0, max(total, 1)

    def sx(n: float) -> float:
        return round(x0 + (n - n_lo) / (n_hi - n_lo) * (x1 - x0), 2)

    def sy(e: float) -> float:
        return round(y1 - (e - lo) / (hi - lo) * (y1 - y0), 2)

    coords = [(sx(0), sy(INITIAL_RATING))] + [(sx(p.n), sy(p.elo)) for p in history]
    points = " ".join(f"{x},{y}" for x, y in coords)
    y_ticks = [Tick(sy(v), f"{v:.0f}") for v in nice_ticks(lo, hi)]
    x_ticks = [Tick(sx(v), f"{v:.0f}") for v in nice_ticks(0, n_hi, 6) if v == int(v)]
    markers = []
    if len(history) <= MARKERS_UP_TO:
        markers = [
            Marker(sx(p.n), sy(p.elo), f"match {p.n} (#{p.match_id}): Elo {p.elo:.0f}") for p in history
        ]
    first, last = INITIAL_RATING, history[-1].elo
    summary = f"Elo from {first:.0f} to {last:.0f} over {total} rated match{'es' if total != 1 else ''}"
    return Plot(
        width=WIDTH, height=HEIGHT, points=points,
        baseline_y=sy(INITIAL_RATING) if lo <= INITIAL_RATING <= hi else None,
        x_ticks=x_ticks, y_ticks=y_ticks, markers=markers,
        plot_left=x0, plot_right=x1, plot_top=y0, plot_bottom=y1, summary=summary,
    )
