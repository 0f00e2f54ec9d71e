"""Flowar rules engine (Rulebook: Flowar; solo mode against Taxus).

Modules: :mod:`.cards` (component data from ``cards.json``), :mod:`.actions`,
:mod:`.standins` (how the stand-in data was designed), :mod:`.phases`,
:mod:`.state` (fields, agenda, State hooks) and its mixins :mod:`.setup`,
:mod:`.rounds` (turn order, strikes, passing, end of round), :mod:`.chance`,
:mod:`.turn` (the turn menu and board actions), :mod:`.delivery` (Travel
Petal), :mod:`.taxus` (solo automaton); :mod:`.favors` (Kingdom Favor
interpreter), :mod:`.scoring`, :mod:`.observation`, :mod:`.game` (registry
entry), :mod:`.script` (building positions for tests and tools). The balance
simulation is ``bench/balance_flowar.py``.
"""

from games.flowar.game import FlowarGame
from games.flowar.state import FlowarState

__all__ = ["FlowarGame", "FlowarState"]
