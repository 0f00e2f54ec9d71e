"""No import cycle between modules of the referee, the bots, the protos and the game API (issue 13 §3).

The scan and the cycle finder are ``tests/test_import_cycles.py``'s (every
import read with :mod:`ast`, function-local and ``TYPE_CHECKING`` imports
included); that file checks ``ladder``, ``parterre`` and ``workers``. This one
checks :data:`CHECKED`: ``referee``, ``bots``, ``proto``, the game API
(``games.api``, ``games.registry``, ``games.replay``) and ``games.floriferous``.
``games.lafleur`` / ``games.flowar`` (state <-> mixin modules) are not covered yet.
"""

from __future__ import annotations

from test_import_cycles import GRAPH, MODULES, _cycles

CHECKED = ("referee", "bots", "proto", "games.api", "games.registry", "games.replay", "games.floriferous")
"""Module name prefixes whose modules must form no cycle."""


def _checked(name: str) -> bool:
    return any(name == c or name.startswith(c + ".") for c in CHECKED)


def test_the_scan_sees_the_referee_modules_and_their_imports() -> None:
    assert {"referee.server", "referee.core", "referee.cluster", "bots.sdk", "games.floriferous.state"} <= set(MODULES)
    assert "referee.core" in GRAPH["referee.server"]
    assert "referee.headers" in GRAPH["referee.cluster"]
    assert "games.floriferous.phases" in GRAPH["games.floriferous.observation"]


def test_no_import_cycle_between_modules() -> None:
    assert _cycles({m for m in MODULES if _checked(m)}) == []
