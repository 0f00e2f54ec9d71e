"""The La Fleur game declaration: options, variants, initial state.

Rulebook: La Fleur (Amy and Dusty Droz), with its solo mode (Joe Slack).
Registered as ``lafleur`` (``games.registry``)::

    >>> from games.registry import load_game
    >>> game = load_game("lafleur(players=3)")
    >>> game.num_players, game.game_string()
    (3, 'lafleur(difficulty=normal,players=3)')
    >>> game.new_initial_state().current_player()   # the First Player is drawn first
    -1
"""

from __future__ import annotations

from typing import ClassVar

from games.api import Game, GameInfo, InvalidOptionError, OptionSpec
from games.lafleur.actions import ALL_ACTIONS
from games.lafleur.constants import DIFFICULTIES, MAX_ROUNDS
from games.lafleur.state import LaFleurState


class LaFleurGame(Game):
    """La Fleur for 1 to 4 players (1 = solo against the opponent automaton).

    Options:
        players: 1..4 (default 4); 1 is the solo mode (Rulebook: "Solo Mode").
        difficulty: solo opponent level, ``easier``, ``normal`` (default, the
            level of the challenges), ``harder`` or ``hardest``
            (Rulebook: "Solo Difficulties & Challenges"); solo only.

    Trades and bribes between players (Rulebook: "Special Invitation",
    ALLIANCES, TRADES, & BRIBES) are table talk, not actions: out of scope.

    Raises:
        InvalidOptionError: unknown option, bad value, or a difficulty other
            than ``normal`` with more than one player.
    """

    INFO = GameInfo(
        name="lafleur",
        long_name="La Fleur",
        min_players=1,
        max_players=4,
        options=(
            OptionSpec("players", int, 4, (1, 2, 3, 4),
                       "seats; 1 = solo against the opponent automaton (Rulebook: \"Solo Mode\")"),
            OptionSpec("difficulty", str, "normal", DIFFICULTIES,
                       "solo opponent level (Rulebook: \"Solo Difficulties & Challenges\"); solo only"),
        ),
        # Per round and seat: <= 4 placements, each with <= ~12 follow-up steps (reveals, payments),
        # plus Garden Party and End of Round decisions; MAX_ROUNDS rounds.
        max_game_length=MAX_ROUNDS * 4 * 80,
    )
    ACTIONS = ALL_ACTIONS
    RULES_REVISIONS: ClassVar[tuple[str, ...]] = (
        "the rules as first implemented: at most one romancing pawn per player per round",
        "any number of romancing pawns (Rulebook, \"Special Invitation\": \"Each player may only have 1 "
        "Companion\", no limit on romancing); of two romanced Visitors that visit the same player the first "
        "in the Visitor area becomes the Companion (2026-12-06)",
        "a newly drawn Artisan arrives untilted (Rulebook: \"Purchasing a Garden Feature\": \"Each of a "
        "player's Artisans may contribute their Allure type ... once per round\"); a solo tie on Prestige goes "
        "to the most total Allure, then the win is shared (Rulebook: \"Solo Mode\": \"Any rules not referenced "
        "here remain the same as in the normal 2-player game\") (2026-12-07)",
    )
    PLAIN_FULL_STATE: ClassVar[bool] = True  # ints, strs, bools, lists, str-keyed dicts (Game docs)
    VARIANTS: ClassVar[tuple[str, ...]] = (
        "lafleur(players=1,difficulty=easier)",
        "lafleur(players=1,difficulty=normal)",
        "lafleur(players=1,difficulty=harder)",
        "lafleur(players=1,difficulty=hardest)",
        "lafleur(players=2)",
        "lafleur(players=3)",
        "lafleur(players=4)",
    )
    """Game strings of every variant the conformance tests and golden files cover."""

    def _validate_options(self) -> None:
        if self.options["players"] > 1 and self.options["difficulty"] != "normal":
            raise InvalidOptionError(
                f"lafleur: difficulty={self.options['difficulty']} sets the solo opponent; "
                f"it needs players=1, not players={self.options['players']}"
            )

    def new_initial_state(self) -> LaFleurState:
        """The state before the first chance action (First Player, or in solo the opponent's Character)."""
        return LaFleurState(self)
