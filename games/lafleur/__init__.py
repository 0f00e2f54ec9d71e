"""La Fleur rules engine (Rulebook: La Fleur, Amy and Dusty Droz; solo mode by Joe Slack).

Modules: :mod:`.cards` (card data from ``cards.json``, written by
:mod:`.standins`, the stand-in design rules), :mod:`.abilities`
(the ability interpreter and card text), :mod:`.payment` (paying Garden
Features, pure), :mod:`.actions`, :mod:`.constants`, :mod:`.state` (data,
hooks, setup, start of round) with its mixins :mod:`.turns` (placements and
locations), :mod:`.party` (effects, Events, Garden Party, End of Round, game
end) and :mod:`.solo` (the opponent automaton), :mod:`.observation`,
:mod:`.scoring` (outcome), :mod:`.chance` (interned chance actions and
hidden-card resampling), :mod:`.game` (registry entry) and :mod:`.script`
(scripted positions, for tests and tools).
"""

from games.lafleur.game import LaFleurGame
from games.lafleur.state import LaFleurState

__all__ = ["LaFleurGame", "LaFleurState"]
