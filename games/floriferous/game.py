"""The Floriferous game declaration: options, variants, initial state.

Rulebook: Floriferous (Pencil First Games, 2021), with its solo mode "The Pesky
Guest". Registered as ``floriferous`` (``games.registry``)::

    >>> from games.registry import load_game
    >>> game = load_game("floriferous(players=2,extended=true)")
    >>> game.num_players, game.layout.rows, game.layout.columns
    (2, (1, 3, 5), 7)
    >>> state = game.new_initial_state()
    >>> state.current_player()          # three Bounty cards are revealed first
    -1
"""

from __future__ import annotations

from typing import ClassVar

from games.api import Game, GameInfo, InvalidOptionError, OptionSpec
from games.floriferous.actions import ALL_ACTIONS
from games.floriferous.layout import Layout, layout_for
from games.floriferous.state import FloriferousState


class FloriferousGame(Game):
    """Floriferous for 1 to 4 players (1 = the solo mode "The Pesky Guest").

    Options:
        players: 1..4 (default 4, the rulebook's main setup).
        extended: the 2-Player Extended Setup (7 columns per day); players 1 or 2 only.
        competitive_bounties: the "Competitive Alternative" for Bounty cards; 2+ players.

    Raises:
        InvalidOptionError: unknown option, bad value, or a forbidden combination.
    """

    INFO = GameInfo(
        name="floriferous",
        long_name="Floriferous",
        min_players=1,
        max_players=4,
        options=(
            OptionSpec("players", int, 4, (1, 2, 3, 4),
                       "seats; 1 = solo \"The Pesky Guest\" (Rulebook: \"Game Setup\")"),
            OptionSpec("extended", bool, False, None,
                       "7 columns per day (Rulebook: \"2-Player Extended Setup\"); 1-2 players"),
            OptionSpec("competitive_bounties", bool, False, None,
                       "tokens go on Bounties at once, one per column (Rulebook: \"Competitive Alternative\")"),
        ),
        # 4 players x 5 rounds x 3 days; solo extended: 21 turns + <= 18 tea decisions + 6 crow decisions.
        max_game_length=60,
    )
    ACTIONS = ALL_ACTIONS
    PLAIN_FULL_STATE: ClassVar[bool] = True  # ints, strs, bools, lists, str-keyed dicts (Game docs)
    VARIANTS: ClassVar[tuple[str, ...]] = (
        "floriferous(players=1)",
        "floriferous(players=1,extended=true)",
        "floriferous(players=2)",
        "floriferous(players=2,extended=true)",
        "floriferous(players=2,competitive_bounties=true)",
        "floriferous(players=3)",
        "floriferous(players=3,competitive_bounties=true)",
        "floriferous(players=4)",
        "floriferous(players=4,competitive_bounties=true)",
    )
    """Game strings of every variant the conformance tests and golden files cover."""

    layout: Layout

    def _validate_options(self) -> None:
        players = self.options["players"]
        if self.options["extended"] and players > 2:
            raise InvalidOptionError(
                f"floriferous: extended=true is the 2-player extended setup (also allowed solo); "
                f"not available with players={players}"
            )
        if self.options["competitive_bounties"] and players == 1:
            raise InvalidOptionError(
                "floriferous: competitive_bounties needs at least 2 players (it decides between rivals)"
            )
        self.layout = layout_for(players, self.options["extended"])

    def new_initial_state(self) -> FloriferousState:
        """The state before the first chance action (the first Bounty card)."""
        return FloriferousState(self)
