"""Named bits of the Flowar state's two flag fields (Rulebook: Flowar, "Player Board", "Kingdom Favors").

Plain ``Final[int]`` literals rather than an :class:`enum.IntFlag`: the compiled rules
(setup.py ``COMPILED``) inline them as machine integers, where IntFlag arithmetic would go
through Python objects at every test.

* ``_board_used[seat]`` (serialized ``board``): the Action Spaces of the seat's Player
  Board used this round, one bit each (observation: ``board_used``).
* ``_turn_favors`` (serialized ``t_mods``): the *modifier* Kingdom Favors in force this
  turn, bit ``1 << n`` for Favor ``n`` (observation: ``active_favors``).
"""

from __future__ import annotations

from typing import Final

# -- Player Board Action Spaces (``_board_used``) -----------------------------------------------------
MAINTENANCE_SPACE: Final = 1
"""The Maintenance space."""
SELL_SPACE: Final = 2
"""The Sell space."""
PAYOFF_SPACE: Final = 4
"""The Loan payoff space."""
GUILD_SPACE: Final = 8
"""The Action Space of the seat's Guild Tile."""

# -- modifier Kingdom Favors (``_turn_favors``): bit 1 << n for Favor n ---------------------------------
FAVOR_FREE_PLACEMENT: Final = 2
"""Favor 1: "When placing a Worker on the Main Board, do not pay for its placement cost." """
FAVOR_LAYOFF_TABLE: Final = 4
"""Favor 2: "When firing Workers, follow this new reward table"."""
FAVOR_FREE_TRANSPORT: Final = 16
"""Favor 4: "When fulfilling Contracts, do not pay for transportation costs." """
FAVOR_FREE_HIRE: Final = 32
"""Favor 5: "You can hire a Worker at 0 costs instead of paying 5 Coins." """
FAVOR_MP_PER_CONTRACT: Final = 64
"""Favor 6: "When fulfilling Contracts, obtain 2 additional MP for each fulfilled Contract." """
FAVOR_CHEAP_PAYOFF: Final = 128
"""Favor 7: "Pay 6 Coins instead of 8 when paying back a Loan." """
FAVOR_ANY_WORKER: Final = 512
"""Favor 9: "choose any Action Space as if your Worker were the required type of Workers"."""
FAVOR_NO_TORCHES: Final = 2048
"""Favor 11: "When firing Workers, do not take any Torches of Discontent." """
FAVOR_DOUBLE_SALE: Final = 4096
"""Favor 12: "When selling your flowers, gain 2 Coins for each Basket instead of 1 Coin." """
