"""A broken game module fails loudly (the registry names the module and the cause).

The site's helpers tell an unregistered game (a name only the database knows) from a registered one;
a registered game whose module cannot be imported is an installation fault, not an unknown game,
and must surface as the ImportError instead of being shown as "unregistered".
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from games import registry
from ladder.read.common import game_info
from web.filters import nav_games
from web.viewer import engine_available


@pytest.fixture
def broken_flowar(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def import_module(name: str, package: str | None = None) -> Any:
        if name == "games.flowar.game":
            raise ImportError("simulated: games.flowar.game is broken")
        return real(name, package)

    monkeypatch.delitem(registry._REGISTERED, "flowar", raising=False)
    monkeypatch.setattr(importlib, "import_module", import_module)  # the module games.registry calls


def test_an_unknown_game_is_unregistered_not_an_error() -> None:
    assert game_info("no-such-game") == ("no-such-game", 1, 8, False)
    assert engine_available("no-such-game") is False
    assert game_info("flowar")[3] is True  # the oracle: Flowar is one of the three built-in games


@pytest.mark.usefixtures("broken_flowar")
def test_a_registered_game_that_fails_to_import_raises() -> None:
    for call in (lambda: game_info("flowar"), lambda: engine_available("flowar"), nav_games):
        with pytest.raises(ImportError, match="simulated"):
            call()
