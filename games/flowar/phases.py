"""Phase numbers of a Flowar state and their observation names.

Chance phases come first (``current_player() == CHANCE``), then the
decisions of a seat. Shared by the state and its mixins.
"""

from __future__ import annotations

(C_FAVOR, C_EFF, C_FLOWER, C_CONTRACT, C_GUILD, C_WORKER, C_START, C_TAXUS,
 D_KEEP, D_GUILD, D_STRIKE, D_TURN, D_LINE, D_PICK, D_DISCARD, D_DELIVER, D_BASKET,
 D_SELL, D_EXCH, D_SPEND, D_SWAP, P_OVER) = range(22)

PHASE_NAMES: tuple[str, ...] = (
    "deal_favors", "draw_efficiency", "draw_flower", "draw_contract", "draw_guild", "draw_worker",
    "start_player", "reveal_taxus",
    "keep_contract", "choose_guild", "strike", "turn", "take_line", "take_card", "discard_contract",
    "deliver", "basket", "sell", "exchange_mp", "spend_mp", "swap_worker", "game_over",
)
"""Observation names of the phases, by phase number."""

LOOPS = (D_TURN, D_DELIVER, D_SELL, D_STRIKE)
"""Decisions a seat returns to after a Loan or a Favor (the menu-like phases)."""
