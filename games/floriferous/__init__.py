"""Floriferous rules engine (Rulebook: Floriferous, Pencil First Games 2021).

Modules: :mod:`.cards` (card data from ``cards.json``), :mod:`.layout` (garden
per player count), :mod:`.actions`, :mod:`.state` (rules), :mod:`.observation`,
:mod:`.scoring` (pure scoring, shared with bots), :mod:`.game` (registry entry),
:mod:`.script` (building positions from explicit deals, for tests and tools).
"""

from games.floriferous.game import FloriferousGame
from games.floriferous.state import FloriferousState

__all__ = ["FloriferousGame", "FloriferousState"]
