"""Numbers from the rulebook and the phase codes shared by the La Fleur modules.

Rulebook: La Fleur, "Player Setup", "Start of Round", "Flower Market",
"Garden Features", "Artisan Guild", "Special Invitation", "Prestige and Coin"
and "Ending the Game".
"""

from __future__ import annotations

from typing import Final

START_COINS: Final = 3
"""Coins per player at setup (Rulebook: "Player Setup", 3 COINS)."""
START_FLOWERS: Final = 3
"""Flower cards dealt to each player (Rulebook: "Player Setup", 3 FLOWER CARDS)."""
DEALT_CHARACTERS: Final = 2
DEALT_ARTISANS: Final = 3
MARKET_SPACES: Final = 4
FEATURE_SPACES: Final = 5
VISITOR_SPACES: Final = 6
"""Visitor spaces on the board; more Visitors go beside them (Rulebook: "Start of Round", 3)."""
THRESHOLDS = (4, 8, 12)
"""Prestige spaces that add a Visitor each round (Rulebook: "Start of Round", 3)."""
SOIREE: Final = 12
"""Prestige that triggers the Grande Soirée (Rulebook: "Ending the Game")."""
MAX_ROUNDS: Final = 30
"""Watchdog: the game ends after this round even without a Grande Soirée (not in the rulebook)."""
MAX_ARTISANS: Final = 4
"""Artisans on a Château board at most (2 + 2 hired; Rulebook: "Artisans")."""
HIRE_COST: Final = 8
REPLACE_COST: Final = 4
"""Coins at the Artisan Guild (Rulebook: "Artisan Guild")."""
REVEAL_COST: Final = 1
"""Coins per Garden Feature revealed into an empty space (Rulebook: "Garden Features")."""
DECK_PRICE: Final = 1
"""Coins for a Flower card from the deck (Rulebook: "Flower Market")."""
COIN_GAIN: Final = 2
"""Coins from the Coin location (Rulebook: "Prestige and Coin")."""
ROMANCE_ALLURE: Final = 5
"""Matching Allure needed to romance a Companion (Rulebook: "Special Invitation")."""
COINS_PER_PRESTIGE: Final = 8
FLOWERS_PER_PRESTIGE: Final = 3
"""End-of-game conversions (Rulebook: "End-of-Game Scoring")."""

# Phases (decision kinds); P_CHANCE while a chance outcome is pending.
P_CHANCE: Final = 0
P_CHARACTER: Final = 1
P_ARTISANS: Final = 2
P_PLACE: Final = 3
P_MARKET: Final = 4
P_FEATURE: Final = 5
P_PAY: Final = 6
P_PAIR: Final = 7
P_GUILD: Final = 8
P_SWAP: Final = 9
P_INVITE: Final = 10
P_TAKE: Final = 11
P_ACCEPT: Final = 12
P_CHOOSE: Final = 13
P_DISCARD: Final = 14
P_OVER: Final = 15
PHASE_NAMES: tuple[str, ...] = (
    "chance", "choose_character", "keep_artisans", "place", "flower_market", "garden_features", "pay",
    "pair", "artisan_guild", "swap_artisan", "special_invitation", "take_flower", "accept", "choose",
    "discard", "game_over",
)
"""Observation names of the phases, by phase number."""

DIFFICULTIES = ("easier", "normal", "harder", "hardest")
"""Solo difficulty levels (Rulebook: "Solo Difficulties & Challenges")."""
