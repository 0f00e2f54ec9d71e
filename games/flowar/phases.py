"""Phase numbers of a Flowar state and their observation names.

Chance phases come first (``current_player() == CHANCE``), then the
decisions of a seat. Shared by the state and its mixins.
"""

from __future__ import annotations

from typing import Final

# Final literals: mypyc inlines them in the compiled engines (a plain global is a dict lookup per use)
C_FAVOR: Final = 0
C_EFF: Final = 1
C_FLOWER: Final = 2
C_CONTRACT: Final = 3
C_GUILD: Final = 4
C_WORKER: Final = 5
C_START: Final = 6
C_TAXUS: Final = 7
D_KEEP: Final = 8
D_GUILD: Final = 9
D_STRIKE: Final = 10
D_TURN: Final = 11
D_LINE: Final = 12
D_PICK: Final = 13
D_DISCARD: Final = 14
D_DELIVER: Final = 15
D_BASKET: Final = 16
D_SELL: Final = 17
D_EXCH: Final = 18
D_SPEND: Final = 19
D_SWAP: Final = 20
P_OVER: Final = 21

PHASE_NAMES: tuple[str, ...] = (
    "deal_favors", "draw_efficiency", "draw_flower", "draw_contract", "draw_guild", "draw_worker",
    "start_player", "reveal_taxus",
    "keep_contract", "choose_guild", "strike", "turn", "take_line", "take_card", "discard_contract",
    "deliver", "basket", "sell", "exchange_mp", "spend_mp", "swap_worker", "game_over",
)
"""Observation names of the phases, by phase number."""

LOOPS = (D_TURN, D_DELIVER, D_SELL, D_STRIKE)
"""Decisions a seat returns to after a Loan or a Favor (the menu-like phases)."""
