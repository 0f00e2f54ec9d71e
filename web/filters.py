"""Jinja2 filters and globals of the site's templates: numbers, times and labels.

Filters return plain text; Jinja2's autoescaping escapes it like any other value.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment

from games import registry
from games.api import GameError

VERDICT_TEXT: dict[str, str] = {
    "normal": "normal",
    "timeout": "timeout",
    "illegal_action": "illegal action",
    "disconnect": "disconnect",
    "crash": "crash",
    "resigned": "resigned",
    "no_show": "no show",
}
"""Display text of the referee's verdicts (docs/architecture.md "Verdicts")."""

STATUS_TEXT: dict[str, str] = {
    "planned": "planned",
    "running": "running",
    "finished": "finished",
    "aborted_no_show": "aborted (no show)",
    "failed": "failed",
    "not_started": "not started",
    "in_progress": "in progress",
    "cancelled": "cancelled",
    "open": "open for entries",
    "waiting": "waiting for its bots",
    "expired": "expired",
    "asked": "waiting for an answer",
    "declined": "declined",
}


def elo(value: float | None) -> str:
    """Elo rounded to a whole point; "—" when absent."""
    return "—" if value is None else f"{value:.0f}"


def pct(value: float | None) -> str:
    """A 0..1 fraction as a percentage with one decimal."""
    return "—" if value is None else f"{100 * value:.1f} %"


def num(value: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals, whole numbers without; "—" when absent."""
    if value is None:
        return "—"
    if float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def half(value: float) -> str:
    """Points in halves, chess style: 3.5 -> "3½"."""
    whole = int(value)
    return f"{whole}½" if value - whole >= 0.5 else str(whole)


def seconds(ms: float | None) -> str:
    """Milliseconds as seconds ("1.23 s"), or "—"."""
    if ms is None:
        return "—"
    return f"{ms / 1000:.2f} s"


def time_control(tc: Mapping[str, Any] | None) -> str:
    """A time control (the ``*_ms`` mapping of a match or tournament) in words, as the
    referee applies it (referee/clock.py ``allowance``).

    With no bank the per-decision limit is the smaller of the increment and the cap:
    ``"1.00 s per decision + 0.10 s margin"``. With a bank:
    ``"60.00 s bank + 1.00 s per decision, at most 5.00 s per decision + 0.10 s margin"``.
    "—" when absent.
    """
    if not tc:
        return "—"
    base, inc, cap, margin = (int(tc.get(k) or 0) for k in ("base_ms", "increment_ms", "cap_ms", "margin_ms"))
    tail = f" + {seconds(margin)} margin" if margin else ""
    if base == 0:
        limits = [v for v in (inc, cap) if v > 0]
        return f"{seconds(min(limits))} per decision{tail}" if limits else f"no limit per decision{tail}"
    text = f"{seconds(base)} bank"
    if inc:
        text += f" + {seconds(inc)} per decision"
    if cap:
        text += f", at most {seconds(cap)} per decision"
    return text + tail


def duration(ms: float | None) -> str:
    """Milliseconds as "850 ms" below a second, "1.23 s" from one second on; "—" when absent."""
    if ms is None:
        return "—"
    return millis(ms) if ms < 1000 else seconds(ms)


def millis(ms: float | None) -> str:
    """Milliseconds as "12 ms" (or "—")."""
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def when(value: datetime | str | None) -> str:
    """A timestamp as "YYYY-MM-DD HH:MM UTC", or "—"."""
    if value is None:
        return "—"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M UTC")


def iso(value: datetime | None) -> str:
    """ISO-8601 text for ``<time datetime=...>`` ("" when absent)."""
    return "" if value is None else value.isoformat()


def verdict(value: str | None) -> str:
    """Display text of a verdict."""
    return "—" if value is None else VERDICT_TEXT.get(value, value)


def status(value: str) -> str:
    """Display text of a match or tournament status."""
    return STATUS_TEXT.get(value, value)


def query(base: dict[str, Any], **changes: Any) -> str:
    """A query string from ``base`` with ``changes`` applied (None values dropped), with a leading "?"."""
    merged = {**base, **changes}
    pairs = [(k, v.value if hasattr(v, "value") else v) for k, v in merged.items() if v is not None]
    return "?" + urlencode(pairs) if pairs else "?"


def nav_games() -> list[tuple[str, str]]:
    """``(name, long_name)`` of every registered game, for the navigation bar."""
    out = []
    for name in registry.game_names():
        try:
            out.append((name, registry.game_class(name).INFO.long_name))
        except GameError:  # not registered; a registered game whose module fails to import raises
            out.append((name, name))
    return out


def install(env: Environment) -> None:
    """Register the filters and globals on a Jinja2 environment."""
    from web.markdown import render as markdown

    env.filters.update(
        markdown=markdown,
        elo=elo, pct=pct, num=num, half=half, seconds=seconds, millis=millis, time_control=time_control,
        duration=duration, when=when, iso=iso,
        verdict=verdict, status=status,
    )
    from web.boards import generic

    env.globals.update(
        query=query,
        nav_games=nav_games,
        json_ctx={
            "kind": generic.kind, "columns": generic.columns, "scalar_text": generic.scalar_text,
            "compact": generic.compact, "max_depth": generic.MAX_DEPTH,
        },
    )
