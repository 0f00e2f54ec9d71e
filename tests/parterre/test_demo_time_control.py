"""``parterre demo --increment-ms/--margin-ms`` (the demo's round-robin at 200 ms per decision).

Oracle: the time control handed to the tournament is what the command line said (run_demo is
replaced by a recorder, so nothing starts); out-of-range values are refused before anything starts.
"""

from __future__ import annotations

from typing import Any

import pytest

import parterre.demo
from parterre.cli import build_parser


def test_options_reach_run_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(parterre.demo, "run_demo", fake)
    args = build_parser().parse_args(["demo", "--rounds", "1", "--increment-ms", "200", "--margin-ms", "50"])
    assert args.func(args) == 0
    assert seen["increment_ms"] == 200 and seen["margin_ms"] == 50 and seen["rounds"] == 1
    args = build_parser().parse_args(["demo"])
    args.func(args)
    assert (seen["increment_ms"], seen["margin_ms"]) == (2000, 250)  # the demo's own time control


@pytest.mark.parametrize(("increment", "margin"), [(99, 50), (200, -1)])
def test_out_of_range_refused_before_anything_starts(increment: int, margin: int) -> None:
    with pytest.raises(ValueError, match="increment-ms"):
        parterre.demo.run_demo(rounds=1, increment_ms=increment, margin_ms=margin)
