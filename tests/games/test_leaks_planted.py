"""The resampling leak test can fail: planted leaks are caught (Floriferous, Flowar).

Each test wraps an engine's observation (monkeypatch, nothing in games/ is
changed) so that it shows one secret the rulebook hides — a face-down garden
card, a card the crow placed face-down, another seat's dealt Contracts — and
requires ``check_game`` to report a
leak. La Fleur has no planted leak here.
"""

from __future__ import annotations

from typing import Any

import pytest
from leakmodel import Counts, check_game
from leakmodel.floriferous import FloriferousModel
from leakmodel.flowar import FlowarModel

from games.floriferous.state import FloriferousState
from games.flowar.state import FlowarState


def test_a_shown_face_down_garden_card_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    view = FloriferousState._view

    def leaky(self: FloriferousState, seat: int | None) -> dict[str, Any]:
        obs: dict[str, Any] = view(self, seat)
        obs["planted"] = sorted(c for c, fd, _ in self.full_state()["cells"] if c and fd)
        return obs

    monkeypatch.setattr(FloriferousState, "_view", leaky)
    leaks = check_game(FloriferousModel, "floriferous(players=2)", 0, Counts(), 2)
    assert leaks and "planted" in leaks[0].what


def test_a_crow_placed_face_down_card_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Solo: only the cards the crow places face-down are shown (the setup's are not)."""
    view = FloriferousState._view

    def leaky(self: FloriferousState, seat: int | None) -> dict[str, Any]:
        obs: dict[str, Any] = view(self, seat)
        steps = [a for _, a in self.history]
        crow_deals = {a.to_json()["card"] for prev, a in zip(steps, steps[1:], strict=False) if a.KIND == "deal"
                      and prev.KIND == "reveal_crow"}
        cells = self.full_state()["cells"]
        obs["planted"] = sorted(c for c, fd, _ in cells if c and fd and c in crow_deals)
        return obs

    monkeypatch.setattr(FloriferousState, "_view", leaky)
    counts = Counts()
    leaks = [x for seed in range(3) for x in check_game(FloriferousModel, "floriferous(players=1)", seed, counts, 3)]
    assert leaks and all("planted" in x.what for x in leaks)


def test_another_seats_dealt_contracts_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    view = FlowarState._view

    def leaky(self: FlowarState, seat: int | None) -> dict[str, Any]:
        obs: dict[str, Any] = view(self, seat)
        obs["planted"] = [list(d) for d in self.full_state()["dealt"]]
        return obs

    monkeypatch.setattr(FlowarState, "_view", leaky)
    leaks = check_game(FlowarModel, "flowar(players=3)", 0, Counts(), 3)
    assert leaks and all("planted" in x.what for x in leaks)
