"""Numbers from the rulebook and the phase codes shared by the La Fleur modules.

Rulebook: La Fleur, "Player Setup", "Start of Round", "Flower Market",
"Garden Features", "Artisan Guild", "Special Invitation", "Prestige and Coin"
and "Ending the Game".
"""

from __future__ import annotations

START_COINS = 3
"""Coins per player at setup (Rulebook: "Player Setup", 3 COINS)."""
START_FLOWERS = 3
"""Flower cards dealt to each player (Rulebook: "Player Setup", 3 FLOWER CARDS)."""
DEALT_CHARACTERS = 2
DEALT_ARTISANS = 3
MARKET_SPACES = 4
FEATURE_SPACES = 5
VISITOR_SPACES = 6
"""Visitor spaces on the board; more Visitors go beside them (Rulebook: "Start of Round", 3)."""
THRESHOLDS = (4, 8, 12)
"""Prestige spaces that add a Visitor each round (Rulebook: "Start of Round", 3)."""
SOIREE = 12
"""Prestige that triggers the Grande Soirée (Rulebook: "Ending the Game")."""
MAX_ROUNDS = 30
"""Watchdog: the game ends after this round even without a Grande Soirée (not in the rulebook)."""
MAX_ARTISANS = 4
"""Artisans on a Château board at most (2 + 2 hired; Rulebook: "Artisans")."""
HIRE_COST = 8
REPLACE_COST = 4
"""Coins at the Artisan Guild (Rulebook: "Artisan Guild")."""
REVEAL_COST = 1
"""Coins per Garden Feature revealed into an empty space (Rulebook: "Garden Features")."""
DECK_PRICE = 1
"""Coins for a Flower card from the deck (Rulebook: "Flower Market")."""
COIN_GAIN = 2
"""Coins from the Coin location (Rulebook: "Prestige and Coin")."""
ROMANCE_ALLURE = 5
"""Matching Allure needed to romance a Companion (Rulebook: "Special Invitation")."""
COINS_PER_PRESTIGE = 8
FLOWERS_PER_PRESTIGE = 3
"""End-of-game conversions (Rulebook: "End-of-Game Scoring")."""

# Phases (decision kinds); P_CHANCE while a chance outcome is pending.
(P_CHANCE, P_CHARACTER, P_ARTISANS, P_PLACE, P_MARKET, P_FEATURE, P_PAY, P_PAIR, P_GUILD, P_SWAP,
 P_INVITE, P_TAKE, P_ACCEPT, P_CHOOSE, P_DISCARD, P_OVER) = range(16)
PHASE_NAMES: tuple[str, ...] = (
    "chance", "choose_character", "keep_artisans", "place", "flower_market", "garden_features", "pay",
    "pair", "artisan_guild", "swap_artisan", "special_invitation", "take_flower", "accept", "choose",
    "discard", "game_over",
)
"""Observation names of the phases, by phase number."""

DIFFICULTIES = ("easier", "normal", "harder", "hardest")
"""Solo difficulty levels (Rulebook: "Solo Difficulties & Challenges")."""
