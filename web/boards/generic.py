"""The generic board panel: any game's observation JSON as nested tables.

Used for every game without its own adapter. The template
(``templates/boards/generic.html``) renders the value recursively: an object
becomes a two-column table (key, value); a list of objects sharing the same
keys becomes a table with one row per item; a list of scalars becomes a
comma-separated line; deeper than :data:`MAX_DEPTH`, the value is shown as
compact JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from web.viewer import Frame

MAX_DEPTH = 6
"""Nesting depth rendered as tables; deeper values are shown as JSON text."""


def kind(value: Any) -> str:
    """How the generic template renders ``value``: ``scalar``, ``scalars``, ``records``, ``object`` or ``list``."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return "scalars"
        if value and all(isinstance(v, dict) for v in value):
            return "records"
        return "list"
    return "scalar"


def columns(records: list[dict[str, Any]]) -> list[str]:
    """Union of the keys of ``records``, in first-seen order."""
    out: dict[str, None] = {}
    for r in records:
        for k in r:
            out.setdefault(k, None)
    return list(out)


def scalar_text(value: Any) -> str:
    """Display text of a scalar (``true``/``false``/``null`` as in JSON)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def compact(value: Any) -> str:
    """Compact JSON text of ``value``."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def board_context(frame: Frame, seat_names: Sequence[str], all_hands: bool) -> dict[str, Any]:
    """Context of the generic panel: the spectator observation, and each seat's view with ``all_hands``."""
    views = []
    if all_hands and frame.seat_views is not None:
        views = [
            {"seat": s, "name": seat_names[s] if s < len(seat_names) else f"seat {s}", "view": v}
            for s, v in enumerate(frame.seat_views)
        ]
    return {
        "observation": frame.observation,
        "seat_views": views,
        "kind": kind,
        "columns": columns,
        "scalar_text": scalar_text,
        "compact": compact,
        "max_depth": MAX_DEPTH,
    }
